#!/usr/bin/env python3
"""Fuzzes `nasa`'s argument parsing (docs/cli.md "Errors and exit codes").

Random argument vectors of real, misspelt and made-up subcommands and options, with values that
are valid, negative, fractional, huge, hexadecimal or not numbers at all. Each vector ends in
--help, so a vector that parses prints help and does no work: the parse (and every range check)
happens before help is answered. Every run must:

- exit 0 or 1 (no crash, no signal, no other code);
- on exit 1, print exactly one error line first: `nasa: error: ...`;
- on exit 0, have given every numeric option a value inside the range its --help states
  (so "-3" never wraps into a huge count, "1e3" is never read as 1).

usage: cli_fuzz.py NASA_BINARY [--cases N] [--seed S]
"""
import argparse
import concurrent.futures
import random
import re
import subprocess
import sys

VALUES = ["-3", "-1", "0", "-0", "1", "2", "7", "64", "1000", "1e3", "2.5", "0.1", "0x10", "+5",
          "010", "08",
          "18446744073709551615", "18446744073709551617", "99999999999999999999999", "",
          "abc", "nan", "inf", " 3", "3 "]
OPTION_LINE = re.compile(r"^\s+(?:-\w,)?(--[\w-]+)(?:\s+(UINT|INT|FLOAT|TEXT)(?::(\[[^\]]*\]|[^\s=]+))?)?")


def run(binary, args):
    p = subprocess.run([binary] + args, capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def options_of(binary, sub):
    code, out, err = run(binary, [sub, "--help"])
    if code != 0:
        sys.exit(f"cli_fuzz: `nasa {sub} --help` exited {code}: {err}")
    opts = {}
    for line in out.splitlines():
        m = OPTION_LINE.match(line)
        if m and m.group(1) != "--help":
            opts[m.group(1)] = (m.group(2), m.group(3))
    return opts


def subcommands(binary):
    code, out, _ = run(binary, ["--help"])
    subs, in_list = [], False
    for line in out.splitlines():
        if line.startswith("Subcommands:"):
            in_list = True
        elif in_list and line.strip():
            subs.append(line.split()[0])
    return subs


def in_range(value, kind, rng):
    """Is `value` a number of `kind` inside the range `rng` ('1..1000' or '[0, 1]')?"""
    if kind in ("UINT", "INT"):
        if not re.fullmatch(r"-?(0|[1-9][0-9]*)", value):  # "010" would be read as octal
            return False
        v = int(value)
    else:
        try:
            v = float(value)
        except ValueError:
            return False
        if v != v or v in (float("inf"), float("-inf")):
            return False
    if rng is None:
        sys.exit(f"cli_fuzz: a {kind} option states no range in its --help")
    lo, hi = bounds(kind, rng)
    return lo <= v <= hi


def bounds(kind, rng):
    m = re.fullmatch(r"(-?[0-9.e+-]+)\.\.(-?[0-9.e+-]+)", rng) or \
        re.fullmatch(r"\[(-?[0-9.e+-]+),(-?[0-9.e+-]+)\]", rng.replace(" ", ""))
    if not m:
        sys.exit(f"cli_fuzz: cannot read the range '{rng}'")
    if kind == "FLOAT":
        return float(m.group(1)), float(m.group(2))
    return int(m.group(1)), int(m.group(2))


def valid_value(kind, rng, r):
    """A value inside the range, often at its ends."""
    lo, hi = bounds(kind, rng)
    if kind == "FLOAT":
        return repr(r.choice([lo, hi, lo + (hi - lo) * r.random()]))
    return str(r.choice([lo, hi, r.randint(lo, min(hi, lo + 100)), r.randint(lo, hi)]))


def misspell(word, r):
    i = r.randrange(2, len(word)) if len(word) > 2 else 0
    return word[:i] + r.choice("abcdefghijklmnopqrstuvwxyz") + word[i + 1:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--cases", type=int, default=150)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    r = random.Random(a.seed)
    subs = subcommands(a.binary)
    if len(subs) < 5:
        sys.exit(f"cli_fuzz: found only these subcommands in `nasa --help`: {subs}")
    opts = {s: options_of(a.binary, s) for s in subs}
    cases = []
    for case in range(a.cases):
        sub = r.choice(subs)
        argv = [misspell(sub, r) if r.random() < 0.08 else sub]
        numeric = []
        for _ in range(r.randint(0, 5)):
            name = r.choice(sorted(opts[sub]))
            kind, rng = opts[sub][name]
            roll = r.random()
            if roll < 0.08:
                name, kind = misspell(name, r), None
            elif roll < 0.12:
                name, kind = "--" + r.choice(["bogus", "x", "prob", "generation"]), None
            argv.append(name)
            if kind in ("UINT", "INT", "FLOAT"):
                value = r.choice(VALUES) if r.random() < 0.5 else valid_value(kind, rng, r)
                argv.append(value)
                numeric.append((name, value, kind, rng))
            elif kind == "TEXT":
                argv.append(r.choice(["x", "out", "3-4-2", "sim", "-1", "--json"]))
        argv.append("--help")
        cases.append((argv, numeric))
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda c: run(a.binary, c[0]), cases))
    counts = {"parsed": 0, "error": 0, "numeric values checked": 0, "values rejected": 0}
    for case, ((argv, numeric), (code, out, err)) in enumerate(zip(cases, results)):
        where = f"case {case}: nasa {' '.join(repr(x) for x in argv)}"
        if code not in (0, 1):
            sys.exit(f"cli_fuzz: {where}: exit code {code}\n{err}")
        if code == 1:
            first = err.splitlines()[0] if err else ""
            if not first.startswith("nasa: error: ") or len(err.splitlines()) != 1:
                sys.exit(f"cli_fuzz: {where}: not one line 'nasa: error: ...' on stderr:\n{err}")
            counts["error"] += 1
            counts["values rejected"] += ": expected " in first
            continue
        counts["parsed"] += 1
        for name, value, kind, rng in numeric:
            counts["numeric values checked"] += 1
            if not in_range(value, kind, rng):
                sys.exit(f"cli_fuzz: {where}: parsed although {name} '{value}' is not a {kind} in {rng}")
    # (a run that checked no numeric value, or never saw a range check fire, proves nothing)
    if min(counts.values()) == 0:
        sys.exit(f"cli_fuzz: degenerate run: {counts}")
    print(f"cli_fuzz: {a.cases} argument vectors: " +
          ", ".join(f"{v} {k}" for k, v in counts.items()) + "; no crash, no wrap")


if __name__ == "__main__":
    main()
