#!/usr/bin/env python3
"""One index convention in every label (issue 41, finding 5): an index counts from 0 and shows its range as
"step 5 (0–10)", never "step 5 of 0–10" nor "layer 3 of 12" (which reads as counting from 1). Counts stay counts:
"3 of 12 heads", "2 of 5 layers done".

    tools/check_index_labels.py [ROOT]   # prints every label that breaks it; exit 1 if any

It reads the string literals of the C++ under ui/, cli/ and app/, and the text of README.md and docs/*.md (the
labels they quote)."""
import pathlib
import re
import sys

# "i of 0–n": an index with its range, said as a count.
RANGE_AS_COUNT = re.compile(r"\bof 0(?:–|\\u2013|-)")
# "layer %1 of %2": an index noun, then "i of n" with no noun after it (a count names its noun after: "%1 of %2 heads").
INDEX_OF = re.compile(
    r"\b(?:layer|head|step|token|position|group|hop|iteration|segment|word|round|capsule|hypothesis|row|column|"
    r"query|key|image|frame|utterance|sentence|filter|map|tile)s? %(?:L)?\d+ of %(?:L)?\d+(?!\s*[A-Za-z])",
    re.IGNORECASE)
LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def strings(path):
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".md":
        for number, line in enumerate(text.splitlines(), 1):
            yield number, line
        return
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("//"):
            continue
        for match in LITERAL.finditer(line):
            yield number, match.group(1)


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    files = [p for folder in ("ui", "cli", "app") for p in sorted((root / folder).rglob("*"))
             if p.suffix in (".cpp", ".h") and p.name != "qcustomplot.cpp" and p.name != "qcustomplot.h"]
    files += [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    bad = 0
    for path in files:
        if not path.exists():
            continue
        for number, text in strings(path):
            for pattern in (RANGE_AS_COUNT, INDEX_OF):
                found = pattern.search(text)
                if found:
                    print(f"{path.relative_to(root)}:{number}: \"{found.group(0)}\": an index says its range as "
                          f"\"i (0–n)\"")
                    bad += 1
    if bad:
        print(f"{bad} label(s) break the index convention (docs/USING.md: labels give the range)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
