#!/usr/bin/env python3
"""Every source of each multi-file target compiled as ONE unity file (syntax only, -O0), so that a name two .cpp
files of a target both define is found now, not when adding a file reshuffles the ci preset's batches of 8.

    cmake --preset ci && python3 tools/check_unity.py build/ci

Needs a configured unity tree (the ci or a sanitizer preset) whose Qt moc step has run once (a build).
"""
import glob
import json
import pathlib
import re
import shlex
import subprocess
import sys

TARGETS = ["engine/CMakeFiles/attn_engine.dir", "ui/render/CMakeFiles/attn_render.dir",
           "ui/views/CMakeFiles/attn_views.dir", "ui/workbenches/CMakeFiles/attn_workbenches.dir",
           "ui/window/CMakeFiles/attn_window.dir", "cli/CMakeFiles/attn_cli.dir",
           "tests/unit/CMakeFiles/engine_unit_tests.dir", "tests/unit/CMakeFiles/session_tests.dir",
           "tests/parity/CMakeFiles/engine_parity_tests.dir", "tests/ui/CMakeFiles/attn_ui_tests.dir",
           "tests/cli/CMakeFiles/attn_cli_tests.dir"]


def main() -> int:
    tree = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build/ci").resolve()
    commands = json.loads((tree / "compile_commands.json").read_text())
    failed = 0
    for target in TARGETS:
        batches = sorted(glob.glob(str(tree / target / "Unity" / "unity_*_cxx.cxx")),
                         key=lambda f: int(re.search(r"unity_(\d+)_cxx", f).group(1)))
        if not batches:
            print(f"{target}: no unity files (configure with the ci preset)", file=sys.stderr)
            return 2
        sources = [s for f in batches for s in re.findall(r'#include "([^"]+)"', pathlib.Path(f).read_text())]
        whole = tree / target / "Unity" / "all_in_one.cxx"
        whole.write_text("".join(f'#include "{s}"\n' for s in sources))
        entry = next(c for c in commands if c["file"] == batches[0])
        args = shlex.split(entry["command"])
        out = args.index("-o")
        del args[out:out + 2]
        args = [a for a in args if a not in ("-Winvalid-pch", "-O3", "-O1", "-O2")]
        args[-1] = str(whole)
        args[1:1] = ["-O0", "-fsyntax-only"]
        result = subprocess.run(args, cwd=entry["directory"], capture_output=True, text=True)
        errors = [line for line in result.stderr.splitlines() if "error" in line]
        print(f"{target}: {len(sources)} sources as one file: {'ok' if result.returncode == 0 else 'FAILED'}")
        for line in errors[:20]:
            print("   ", line)
        failed += result.returncode != 0
        whole.unlink()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
