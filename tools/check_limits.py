#!/usr/bin/env python3
"""The size limits of the code (issues 17 and 41): no .cpp file under ui/ or cli/ (but the main) over 700 lines,
and no function in engine/, ui/, app/ or cli/ over 100 lines (signature to closing brace, lambdas inside counted
with their function), without exceptions.

    tools/check_limits.py [ROOT]     # prints every file and function over its limit; exit 1 if any

Functions are found by a small brace scanner that skips comments, strings and character literals: a block
whose header (the text since the previous ';', '{' or '}') names a namespace, class, struct, union or
enum is a scope, a block opened in a scope whose header has a ')' is a function, anything else inside a
function belongs to it. It reads the tree's own style (clang-format, one definition per header)."""
import pathlib
import re
import sys

MAX_FILE_LINES = 700
MAX_FUNCTION_LINES = 100


def strip(text):
    """The text with comments, strings and character literals blanked, newlines kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == 'R' and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isdigit() and i + 1 < n and text[i + 1].isalnum():  # 2'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(n, j + 1)
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def without_directives(code):
    """The code with preprocessor lines blanked (with their continuations): `#if defined(X)` is no function."""
    out, continued = [], False
    for line in code.split("\n"):
        directive = continued or line.lstrip().startswith("#")
        continued = directive and line.rstrip().endswith("\\")
        out.append(" " * len(line) if directive else line)
    return "\n".join(out)


def functions(text):
    """(name, first line, line count) of every function of a C++ source."""
    code = without_directives(strip(text))
    found = []
    stack = []  # (kind, header start line)
    header_start = None
    header = []
    line = 1
    for c in code:
        if c == "\n":
            line += 1
        if c in ";{}":
            if c == "{":
                head = "".join(header)
                parent = stack[-1][0] if stack else "scope"
                if parent in ("function", "block"):
                    kind = "block"
                elif re.search(r"\b(namespace|class|struct|union|enum)\b", head) and "(" not in head:
                    kind = "scope"
                elif ")" in head:
                    kind = "function"
                else:
                    kind = "block"
                stack.append((kind, header_start if header_start is not None else line, head))
            elif c == "}" and stack:
                kind, start, head = stack.pop()
                if kind == "function":
                    name = re.sub(r"\s+", " ", head.split("(")[0]).strip().split(" ")[-1]
                    found.append((name, start, line - start + 1))
            header = []
            header_start = None
            continue
        if header_start is None and not c.isspace():
            header_start = line
        header.append(c)
    return found


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    problems = []
    # The UI and the CLI's commands (which came from ui/app); the two mains (app/main.cpp, cli/cli_main.cpp) are
    # argument tables and have only the function limit, as when both lived in app/.
    for path in sorted([*(root / "ui").rglob("*.cpp"), *(root / "cli").rglob("*.cpp")]):
        if path.name == "cli_main.cpp":
            continue
        count = path.read_text(encoding="utf-8").count("\n")
        if count > MAX_FILE_LINES:
            problems.append(f"{path.relative_to(root)}: {count} lines (at most {MAX_FILE_LINES})")
    for folder in ("engine", "ui", "app", "cli"):
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in (".cpp", ".h"):
                continue
            relative = path.relative_to(root).as_posix()
            for name, start, count in functions(path.read_text(encoding="utf-8")):
                if count > MAX_FUNCTION_LINES:
                    problems.append(f"{relative}:{start}: {name} is {count} lines (at most {MAX_FUNCTION_LINES})")
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} over the limits")
        return 1
    print("every ui/ and cli/ .cpp is at most 700 lines and every function of engine/, ui/, app/ and cli/ at most 100")
    return 0


if __name__ == "__main__":
    sys.exit(main())
