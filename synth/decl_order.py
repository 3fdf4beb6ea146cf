#!/usr/bin/env python3
"""Every signal of an RTL module is declared before it is used.

Verilator and Yosys both accept a net used above its declaration, so this is checked here (by
`synth/lint.sh`, hence `make lint` and `make test`). For each module of each file given: the
names declared in its body (logic/wire/struct- or enum-typed signals, localparams, typedefs,
functions) and the line of their first declaration; a use of such a name on an earlier line is
reported. Field selects (`x.name`) and named port connections (`.name(`) are not uses of `name`.
Exit status 1 when anything is reported.
"""
import re
import sys

KEYWORDS = {
    "logic", "wire", "reg", "bit", "int", "integer", "genvar", "localparam", "parameter",
    "typedef", "input", "output", "inout", "signed", "unsigned", "automatic", "function",
}
# a declaration statement: optional qualifiers, a type, then the declared names
DECL = re.compile(
    r"^\s*(?:(?:localparam|parameter)\s+)?"
    r"(?P<type>logic|wire|reg|bit|int\s+unsigned|int|integer|genvar|"
    r"[A-Za-z_]\w*::[A-Za-z_]\w*|[A-Za-z_]\w*_[te])\b"
    r"(?:\s+(?:signed|unsigned))?\s*(?P<dims>(?:\[[^\]]*\]\s*)*)(?P<rest>[^;]*);"
)
TYPEDEF = re.compile(r"\btypedef\b[^;]*?\}\s*(\w+)\s*;|\btypedef\b[^{;]*\s(\w+)\s*;", re.S)
FUNC = re.compile(r"\bfunction\s+(?:automatic\s+)?[^;(]*?\b(\w+)\s*\(")
IDENT = re.compile(r"(?<![\w.$'`])([A-Za-z_]\w*)\b(?!\s*::)")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', text)


def declared_names(rest):
    """Names in the part of a declaration after the type: `a, b = 3, c [4]`."""
    depth, cur, parts = 0, "", []
    for ch in rest:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    names = []
    for p in parts:
        m = re.match(r"\s*([A-Za-z_]\w*)", p)
        if m and m.group(1) not in KEYWORDS:
            names.append(m.group(1))
    return names


def check_module(path, lines, first, last):
    """lines[first:last] is one module (its header included); returns the problems found."""
    body_start = first
    for i in range(first, last):
        if re.search(r"\)\s*;", lines[i]):  # end of the port list
            body_start = i + 1
            break
    decl_line = {}
    joined = "\n".join(lines[body_start:last])
    for i in range(body_start, last):
        m = DECL.match(lines[i])
        if m and not lines[i].lstrip().startswith(("assign", "return")):
            for n in declared_names(m.group("rest")):
                decl_line.setdefault(n, i)
        f = FUNC.search(lines[i])
        if f:
            decl_line.setdefault(f.group(1), i)
    for m in TYPEDEF.finditer(joined):
        name = m.group(1) or m.group(2)
        line = body_start + joined.count("\n", 0, m.end())
        decl_line.setdefault(name, line)
    problems = []
    reported = set()
    in_function = False
    for i in range(body_start, last):
        # a function's arguments and locals are its own scope (and it is declared before use)
        if re.match(r"\s*function\b", lines[i]):
            in_function = True
        if in_function:
            in_function = not re.match(r"\s*endfunction\b", lines[i])
            continue
        for m in IDENT.finditer(lines[i]):
            n = m.group(1)
            if n in decl_line and decl_line[n] > i and n not in reported:
                reported.add(n)
                problems.append(f"{path}:{i + 1}: '{n}' used before its declaration at line "
                                f"{decl_line[n] + 1}")
    return problems


def check_file(path):
    with open(path, encoding="utf-8") as f:
        lines = strip_comments(f.read()).split("\n")
    problems, start = [], None
    for i, line in enumerate(lines):
        if re.match(r"\s*module\b", line):
            start = i
        elif re.match(r"\s*endmodule\b", line) and start is not None:
            problems += check_module(path, lines, start, i)
            start = None
    return problems


def main(paths):
    problems = [p for path in paths for p in check_file(path)]
    for p in problems:
        print(p)
    if problems:
        print(f"decl_order: {len(problems)} signal(s) used before their declaration",
              file=sys.stderr)
        return 1
    print(f"decl_order: {len(paths)} files, every signal declared before use")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
