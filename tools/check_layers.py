#!/usr/bin/env python3
"""The UI's layers hold by the build: for each layer target, a file that includes a header of a layer above it (or
Qt Widgets, for the widget-free layers) must fail with that header "not found", and one that includes a header of its
own layer must preprocess; and attnscope-cli must not load Qt Widgets (readelf -d). Uses the build tree's
compile commands, so it checks the include paths CMake really gives each target (attn_include_root and
attn_include_files in the top-level CMakeLists.txt).

    cmake --preset ci && cmake --build build/ci && python3 tools/check_layers.py build/ci

The `layer_walls` test runs it. Each probe goes through the preprocessor (-E) with the target's own flags and
include paths (not its precompiled header): the target's own header must be found with everything it includes, each
header of a layer above must not be.
"""
import json
import pathlib
import shlex
import subprocess
import sys

# (target, its folder under the build tree, a header of its own that must compile, headers that must not be found)
WALLS = [
    ("attn_session", "ui/session", "session/session.h",
     ["render/colormap.h", "views/heatmap_view.h", "workbenches/common/workbench.h", "<QString>"]),
    ("attn_render", "ui/render", "render/heatmap_render.h",
     ["views/heatmap_view.h", "models/head_stats_model.h", "workbenches/common/workbench.h", "<QWidget>"]),
    ("attn_views", "ui/views", "views/heatmap_view.h",
     ["workbenches/common/workbench.h", "workbenches/alignment/speech/speech_input.h", "window/main_window.h", "cli/headless.h"]),
    # The tabs' widget-free half shares their folders; its include directory links its own headers only.
    ("attn_runs", "ui/workbenches", "workbenches/lab/lab_worker.h",
     ["workbenches/lab/lab_workbench.h", "workbenches/common/workbench.h", "views/heatmap_view.h",
      "window/main_window.h", "cli/headless.h", "<QWidget>"]),
    ("attn_workbenches", "ui/workbenches", "workbenches/common/workbench.h",
     ["window/main_window.h", "cli/headless.h", "app/versions.h"]),
    ("attn_window", "ui/window", "window/main_window.h", ["cli/headless.h"]),
    # attnscope-cli: the engine, the drawing layer and the workers; no view, no tab, no widget.
    ("attn_cli", "cli", "cli/headless.h",
     ["views/heatmap_view.h", "workbenches/lab/lab_workbench.h", "window/main_window.h", "<QWidget>",
      "<QApplication>"]),
]
# Programs that must not load Qt Widgets (their ELF's NEEDED entries), under the build tree.
WIDGET_FREE_PROGRAMS = ["app/attnscope-cli"]


def include_line(header):
    return f"#include {header}\n" if header.startswith("<") else f'#include "{header}"\n'


def preprocess_probe(entry, probe):
    """The target's own compile command on the probe, preprocessor only (-E), without its precompiled header: the
    include paths are what decides "found" or "not found", and preprocessing decides it in a tenth of a second where
    compiling took 5 to 13 s a probe (the whole test: 48 s of the ci suite before)."""
    args = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    out = args.index("-o")
    del args[out:out + 2]
    args[args.index("-c") + 1] = str(probe)
    while "-include" in args:  # the precompiled header, which -E would read as text
        at = args.index("-include")
        del args[at:at + 2]
    args[1:1] = ["-E", "-o", "/dev/null"]
    return subprocess.run(args, cwd=entry["directory"], capture_output=True, text=True)


def main() -> int:
    tree = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build/ci").resolve()
    commands = json.loads((tree / "compile_commands.json").read_text())
    probes = tree / "layer_walls"
    probes.mkdir(exist_ok=True)
    failed = 0
    for target, folder, own, above in WALLS:
        marker = f"/{folder}/CMakeFiles/{target}.dir/"
        entry = next((c for c in commands if marker in c.get("output", "") or marker in c.get("command", "")), None)
        if entry is None:
            print(f"{target}: no compile command in {tree} (configure and build first)", file=sys.stderr)
            return 2
        for header, must_be_found in [(own, True)] + [(h, False) for h in above]:
            probe = probes / f"{target}_{len(list(probes.iterdir()))}.cpp"
            probe.write_text(include_line(header))
            result = preprocess_probe(entry, probe)
            name = header.strip("<>")
            if must_be_found:
                ok = result.returncode == 0
                what = "found" if ok else "not found or broken:\n" + result.stderr[-2000:]
            else:
                missing = any(name in line and ("No such file" in line or "not found" in line)
                              for line in result.stderr.splitlines())
                ok = result.returncode != 0 and missing
                what = "not found, as it should be" if ok else (
                    "FOUND: the wall has a hole" if result.returncode == 0 else
                    "fails for another reason:\n" + result.stderr[-2000:])
            print(f"{target}: #include {header}: {what}")
            failed += not ok
            probe.unlink()
    for program in WIDGET_FREE_PROGRAMS:
        result = subprocess.run(["readelf", "-d", str(tree / program)], capture_output=True, text=True)
        needed = [line.split("[")[-1].rstrip("]") for line in result.stdout.splitlines() if "(NEEDED)" in line]
        ok = result.returncode == 0 and needed and not any("Qt6Widgets" in n for n in needed)
        print(f"{program}: loads {', '.join(n for n in needed if 'Qt6' in n) or '(unreadable)'}: "
              + ("no Qt Widgets" if ok else "NOT widget-free" if result.returncode == 0 else result.stderr.strip()))
        failed += not ok
    print(f"{failed} wall(s) broken" if failed else "every layer sees only itself and the layers below")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
