#!/usr/bin/env python3
"""Every translation unit of a tree compiled on its own, syntax only, with the tree's own flags: what a plain
`cmake -S . -B build && cmake --build build` (no unity batches) compiles. The ci and sanitizer trees build unity
batches, where a .cpp that forgets an include still compiles when a neighbour in its batch has it; this finds it.

    cmake --preset ci && python3 tools/check_standalone.py build/ci [-j N]

The tree must have been built (its moc output and precompiled headers are used as the build uses them).
Exit status 0 when every unit compiles, 1 otherwise, with each failing unit's first errors.
"""
import argparse
import concurrent.futures
import json
import os
import pathlib
import shlex
import subprocess
import sys
import time


def standalone_command(entry: dict, source_root: pathlib.Path) -> list[str] | None:
    """The entry's compile command turned into a syntax-only check of its own source, or None for a unity batch,
    generated code (moc, rcc) or a source outside engine/, ui/, app/ and tests/."""
    source = pathlib.Path(entry["file"])
    if source.suffix not in (".cpp", ".cc") or "_autogen" in source.parts or ".rcc" in source.parts:
        return None
    try:
        relative = source.resolve().relative_to(source_root)
    except ValueError:
        return None
    if relative.parts[0] not in ("engine", "ui", "app", "cli", "tests"):
        return None
    words = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    out, skip = [], False
    for word in words:
        if skip:
            skip = False
            continue
        if word in ("-o", "-MF", "-MT"):
            skip = True  # and its argument
            continue
        if word in ("-c", "-MD", "-MMD"):
            continue
        out.append(word)
    # The source is the last word of a CMake compile command; make it the only input, checked for syntax.
    if out and pathlib.Path(out[-1]).name == source.name:
        out.pop()
    # The optimisation level stays: a precompiled header is used only under the flags it was built with.
    return out + ["-fsyntax-only", str(source)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", nargs="?", default="build/ci")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    source_root = pathlib.Path(__file__).resolve().parent.parent
    tree = pathlib.Path(args.tree).resolve()
    entries = json.loads((tree / "compile_commands.json").read_text())
    seen, commands = set(), []
    for entry in entries:
        command = standalone_command(entry, source_root)
        if command and entry["file"] not in seen:
            seen.add(entry["file"])
            commands.append((entry["file"], entry.get("directory", str(tree)), command))
    if not commands:
        print(f"{tree}: no translation units in compile_commands.json", file=sys.stderr)
        return 1

    def check(item):
        file, directory, command = item
        started = time.monotonic()
        done = subprocess.run(command, cwd=directory, capture_output=True, text=True)
        return file, done.returncode, done.stderr, time.monotonic() - started

    failed = []
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for file, status, errors, _ in pool.map(check, commands):
            if status != 0:
                failed.append(file)
                print(f"FAILED on its own: {os.path.relpath(file, source_root)}")
                print("\n".join(errors.splitlines()[:20]))
    print(f"{len(commands) - len(failed)} passed, {len(failed)} failed "
          f"(translation units compiled on their own, syntax only, {time.monotonic() - started:.0f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
