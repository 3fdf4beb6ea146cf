#!/usr/bin/env python3
"""Keeps the figures the docs quote equal to what the commands that measure them print.

A measured figure in README.md or docs/*.md carries a marker right after it, invisible when
the Markdown is rendered:

    PE utilization **0.857**<!--fig:sim_pe_util--> on `sim`

In the strict files (docs/figures.json "strict") every number with a unit of measurement must
carry one; a value that is chosen rather than measured (a clock target) carries <!--given-->.

docs/figures.json names, for every key, the source that produces it (a JSON file a command
writes, or a command run here with --json) and where in that JSON the value is. The figure in
the text is compared at the precision the text shows (0.857 against 0.85712 passes, 0.858
fails); a `scale` turns fractions into percents and counts into millions.

usage:
  docs_figures.py check  --root R --bin B --build D   every marker equals its source; in the
                                                       strict files every measured figure has one
  docs_figures.py update --root R --bin B --build D   rewrites every marked figure from its source
  docs_figures.py detects-edits --root R ...          each marked figure, edited by hand, fails
                                                       the check (the check's own test)
  docs_figures.py test ...                             check, then detects-edits (ctest docs_figures)
  docs_figures.py bench --root R --bin B --build D    runs nasa-bench, requires its deterministic
                                                       results to equal bench/results.json and
                                                       BENCHMARKS.md to be the rendering of it
"""
import argparse
import atexit
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

MARKER = re.compile(r"<!--fig:([\w.-]+)-->")
# The figure a marker follows: digits with optional thousands commas and decimals, then optional
# closing emphasis/code and a unit sign glued to the number.
FIGURE = re.compile(r"(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?([%x]?)(\*\*|`)?$")
# In the strict files every number with one of these units must carry a marker.
MEASURED = re.compile(
    r"(?<![\w.-])(\d[\d,]*(?:\.\d+)?)(?:\*\*)? ?(%|x\b|MHz|M MAC/s|cycles per image|candidates/s|"
    r"logic cells|M cycles|cycles\b|MB\b|GB\b|mJ\b)")
# Keys of nasa-bench's results that are wall-clock times, describe the machine or count the timed
# repeats (checksum: a sink that keeps the timed loops from being optimized away): everything else
# it writes is exact (cycle model, RTL counters, MAC counts) and must reproduce.
TIMING_KEYS = {"date", "machine", "seconds", "repeats", "threads", "checksum",
               "sim_cycles_per_s", "sim_seconds",
               "fused_ref_cands_per_s", "fused_ref_images_per_s", "fused_ref_seconds",
               "fused_ref_vs_libtorch_ratio", "libtorch_fp32_cands_per_s",
               "libtorch_fp32_images_per_s", "libtorch_fp32_seconds",
               "accel_model_vs_libtorch_ratio",
               # the search on 1 and 2 ranks (section 9) and the scaling model fitted to it
               "search_seconds", "search_seconds_1_rank", "search_seconds_2_ranks",
               "speedup_2_ranks", "serial_seconds", "parallel_seconds", "speedup", "timed_runs"}


class Fail(Exception):
    pass


def doc_files(root):
    files = [os.path.join(root, "README.md")]
    docs = os.path.join(root, "docs")
    for dirpath, _, names in os.walk(docs):
        files += [os.path.join(dirpath, n) for n in sorted(names) if n.endswith(".md")]
    return files


def pointer(doc, path, where):
    """/a/b/0/c, and /list/[field=value,other=value]/... to pick a list element by its fields."""
    node = doc
    for part in [p for p in path.split("/") if p]:
        if isinstance(node, list):
            m = re.fullmatch(r"\[(\w+=[^,\]]*(?:,\w+=[^,\]]*)*)\]", part)
            if m:
                want = dict(kv.split("=", 1) for kv in m.group(1).split(","))
                hits = [e for e in node if isinstance(e, dict) and
                        all(str(e.get(k)) == v for k, v in want.items())]
                if len(hits) != 1:
                    raise Fail(f"{where}: {path}: {len(hits)} elements with {part}")
                node = hits[0]
            elif part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise Fail(f"{where}: {path}: no element {part}")
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            raise Fail(f"{where}: {path}: no field '{part}'")
    return node


class Sources:
    def __init__(self, spec, args):
        self.spec, self.args, self.cache = spec, args, {}
        self.tmp = tempfile.mkdtemp(prefix="docs_figures_")
        atexit.register(shutil.rmtree, self.tmp, True)

    def subst(self, s):
        return (s.replace("@BIN@", self.args.bin).replace("@BUILD@", self.args.build)
                .replace("@ROOT@", self.args.root).replace("@TMP@", self.tmp))

    def get(self, name):
        if name in self.cache:
            return self.cache[name]
        src = self.spec["sources"].get(name)
        if src is None:
            raise Fail(f"docs/figures.json: unknown source '{name}'")
        for dep in src.get("after", []):
            self.get(dep)
        if "file" in src:
            path = self.subst(src["file"])
            if not os.path.isabs(path):
                path = os.path.join(self.args.root, path)
            if not os.path.exists(path):
                raise Fail(f"source '{name}': {path} does not exist (made by: {src['made_by']})")
            with open(path) as f:
                value = json.load(f)
        else:
            cmd = [self.subst(c) for c in src["cmd"]]
            print(f"docs_figures: running {' '.join(cmd)}", file=sys.stderr, flush=True)
            p = subprocess.run(cmd, cwd=self.args.root, capture_output=True, text=True)
            if p.returncode != 0:
                raise Fail(f"source '{name}': {' '.join(cmd)} exited {p.returncode}: "
                           f"{p.stderr.strip()[-400:]}")
            value = json.loads(p.stdout) if p.stdout.strip() else {}
        self.cache[name] = value
        return value

    def value(self, key):
        fig = self.spec["figures"].get(key)
        if fig is None:
            raise Fail(f"no figure '{key}' in docs/figures.json")
        where = f"figure '{key}'"
        doc = self.get(fig["source"])
        if "args" in fig:
            env = {k: pointer(doc, p, where) for k, p in fig["args"].items()}
            v = eval(fig["value"], {"__builtins__": {}, "min": min, "max": max}, env)
        else:
            v = pointer(doc, fig["value"], where)
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            raise Fail(f"{where}: {fig['value']} is {v!r}, not a number")
        return v * fig.get("scale", 1)


def render(v, decimals, commas):
    s = f"{v:,.{decimals}f}" if commas else f"{v:.{decimals}f}"
    return s


def parse_figure(text):
    """(number text, decimals, commas, span start) of the figure ending `text`, or None."""
    m = FIGURE.search(text)
    if not m:
        return None
    whole, frac = m.group(1), m.group(2) or ""
    return whole + frac, len(frac) - 1 if frac else 0, "," in whole, m.start(), m.start() + len(whole + frac)


def markers(files):
    for path in files:
        with open(path) as f:
            lines = f.read().split("\n")
        for i, line in enumerate(lines):
            for m in MARKER.finditer(line):
                if line[:m.start()].count("`") % 2 == 0:  # not inside a code span
                    yield path, i, m


def check(args, spec, src, files, quiet=False, docs_root=None):
    docs_root = docs_root or args.root
    errors, used = [], set()
    for path, i, m in markers(files):
        key = m.group(1)
        used.add(key)
        rel = os.path.relpath(path, docs_root)
        fig = parse_figure(m.string[:m.start()])
        if fig is None:
            errors.append(f"{rel}:{i + 1}: marker fig:{key} follows no number")
            continue
        text, dec, commas, _, _ = fig
        try:
            v = src.value(key)
        except Fail as e:
            errors.append(f"{rel}:{i + 1}: {e}")
            continue
        want = render(v, dec, commas)
        if want != text:
            made = spec["sources"][spec["figures"][key]["source"]].get("made_by", "")
            errors.append(f"{rel}:{i + 1}: '{key}' reads {text}, its source gives {want}"
                          f" ({v!r}{'; made by ' + made if made else ''})")
    for rel in spec.get("strict", []):
        with open(os.path.join(docs_root, rel)) as f:
            in_code = False
            for i, line in enumerate(f.read().split("\n")):
                if line.startswith("```"):
                    in_code = not in_code
                for m in MEASURED.finditer(line):
                    marked = r"[%x]?(\*\*|`)?<!--(fig:|given-->)"
                    if not (re.match(marked, line[m.end(1):]) or re.match(marked, line[m.end():])):
                        errors.append(f"{rel}:{i + 1}: measured figure '{m.group(0)}' has no"
                                      " <!--fig:...--> marker (docs/figures.json), nor"
                                      " <!--given--> for a value that is chosen, not measured")
    unused = sorted(set(spec["figures"]) - used)
    if unused:
        errors.append(f"docs/figures.json: figures quoted nowhere: {', '.join(unused)}")
    if not quiet:
        for e in errors:
            print(e, file=sys.stderr)
    return errors


def update(args, spec, src, files):
    for path in files:
        with open(path) as f:
            lines = f.read().split("\n")
        changed = 0
        for i, line in enumerate(lines):
            out, pos = "", 0
            for m in MARKER.finditer(line):
                if line[:m.start()].count("`") % 2:
                    continue
                fig = parse_figure(line[:m.start()])
                if fig is None or fig[3] < pos:
                    raise Fail(f"{path}:{i + 1}: marker fig:{m.group(1)} follows no number")
                text, dec, commas, start, end = fig
                new = render(src.value(m.group(1)), dec, commas)
                changed += new != text
                out += line[pos:start] + new
                pos = end
            lines[i] = out + line[pos:]
        if changed:
            with open(path, "w") as f:
                f.write("\n".join(lines))
            print(f"docs_figures: {changed} figure(s) updated in {os.path.relpath(path, args.root)}",
                  file=sys.stderr)


def detects_edits(args, spec, src):
    """Every marked figure, changed in its last digit, must make the check fail, naming it.
    Works on a copy of README.md and docs/, so a concurrent check never sees an edited file."""
    tmp = tempfile.mkdtemp(prefix="docs_figures_edit_")
    shutil.copy(os.path.join(args.root, "README.md"), tmp)
    shutil.copytree(os.path.join(args.root, "docs"), os.path.join(tmp, "docs"))
    files = doc_files(tmp)
    if check(args, spec, src, files, quiet=True, docs_root=tmp):
        raise Fail("the check fails before any edit: run the check first")
    n = 0
    for path, i, m in list(markers(files)):
        with open(path) as f:
            original = f.read()
        lines = original.split("\n")
        text, _, _, start, end = parse_figure(lines[i][:m.start()])
        edited = text[:-1] + ("1" if text[-1] != "1" else "2")
        lines[i] = lines[i][:start] + edited + lines[i][end:]
        with open(path, "w") as f:
            f.write("\n".join(lines))
        errors = check(args, spec, src, files, quiet=True, docs_root=tmp)
        with open(path, "w") as f:
            f.write(original)
        rel = f"{os.path.relpath(path, tmp)}:{i + 1}: '{m.group(1)}'"
        if not any(e.startswith(rel) for e in errors):
            raise Fail(f"{rel}: edited by hand from {text} to {edited}, the check did not fail")
        n += 1
    shutil.rmtree(tmp)
    if n == 0:
        raise Fail("no marked figure found")
    print(f"docs_figures: each of {n} marked figures, edited by hand, fails the check")


# The nasa-bench studies a fresh run reproduces in CI (all but "search").
CI_STUDIES = ["fusion", "efficiency", "peers", "imagenet", "board", "mpi"]


def strip_timing(x):
    if isinstance(x, dict):
        return {k: strip_timing(v) for k, v in x.items() if k not in TIMING_KEYS}
    if isinstance(x, list):
        return [strip_timing(v) for v in x]
    return x


def diff(a, b, path=""):
    if type(a) != type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
        return [f"{path or '/'}: {a!r} != {b!r}"]
    if isinstance(a, dict):
        out = [f"{path}/{k}: only in one" for k in sorted(set(a) ^ set(b))]
        for k in sorted(set(a) & set(b)):
            out += diff(a[k], b[k], f"{path}/{k}")
        return out
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} != {len(b)} elements"]
        return [d for j, (x, y) in enumerate(zip(a, b)) for d in diff(x, y, f"{path}/{j}")]
    if isinstance(a, float) or isinstance(b, float):
        return [] if math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) else [f"{path}: {a!r} != {b!r}"]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def bench(args):
    committed = os.path.join(args.root, "bench", "results.json")
    out = os.path.join(args.build, "docs_figures_bench")
    os.makedirs(out, exist_ok=True)
    exe = os.path.join(args.bin, "nasa-bench")
    # The rendering of the committed results is the committed BENCHMARKS.md, byte for byte.
    md = os.path.join(out, "committed.md")
    subprocess.run([exe, "--render", committed, "--md", md], check=True)
    with open(md) as f, open(os.path.join(args.root, "BENCHMARKS.md")) as g:
        if f.read() != g.read():
            raise Fail("BENCHMARKS.md is not the rendering of bench/results.json (edited by hand?):"
                       " rerun `make bench`")
    # A fresh run reproduces every exact figure of the committed results: every study but the
    # search-quality one (section 10), which trains a supernet and 12 networks (about 17
    # minutes): `make bench` measures it, CI runs its quick version (ctest bench_quick).
    fresh = os.path.join(out, "results.json")
    if os.path.exists(fresh):
        os.remove(fresh)  # (with --only, nasa-bench would update an earlier file)
    p = subprocess.run([exe, "--repeats", "1", "--out", fresh,
                        "--md", os.path.join(out, "BENCHMARKS.md"), "--only"] + CI_STUDIES)
    if p.returncode != 0:
        raise Fail(f"nasa-bench exited {p.returncode}")
    with open(committed) as f, open(fresh) as g:
        old, new = json.load(f), json.load(g)
    for k in ("search_quality", "updates"):
        old.pop(k, None)
    d = diff(strip_timing(old), strip_timing(new))
    if d:
        raise Fail("bench/results.json is stale (rerun `make bench`); it differs from a fresh run"
                   f" in {len(d)} place(s): " + "; ".join(d[:10]))
    print("docs_figures: BENCHMARKS.md renders bench/results.json, and a fresh nasa-bench run"
          " reproduces its exact figures")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["check", "test", "update", "detects-edits", "bench"])
    ap.add_argument("--root", default=".")
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("--build", default="build")
    args = ap.parse_args()
    args.root, args.bin, args.build = (os.path.abspath(p) for p in (args.root, args.bin, args.build))
    try:
        if args.mode == "bench":
            bench(args)
            return 0
        with open(os.path.join(args.root, "docs", "figures.json")) as f:
            spec = json.load(f)
        src, files = Sources(spec, args), doc_files(args.root)
        if args.mode in ("check", "test"):
            errors = check(args, spec, src, files)
            if errors:
                print(f"docs_figures: {len(errors)} stale or unchecked figure(s); `make docs-figures`"
                      " rewrites marked figures from their sources", file=sys.stderr)
                return 1
            n = sum(1 for _ in markers(files))
            print(f"docs_figures: {n} marked figures equal their sources")
        if args.mode in ("detects-edits", "test"):
            detects_edits(args, spec, src)
        if args.mode == "update":
            update(args, spec, src, files)
        return 0
    except Fail as e:
        print(f"docs_figures: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
