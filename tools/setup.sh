#!/usr/bin/env bash
# AttnScope set-up on Debian 12: installs what is missing, configures, builds, then either starts the app
# on the bundled demo (`run`), runs the whole test suite (`test`) or runs it again under the sanitizers
# (`sanitize`). Idempotent; rebuilds incrementally.
#
#   tools/setup.sh run       # GUI on the demo; without a display, renders the demo views to PNG instead
#   tools/setup.sh test      # every test, with ctest (what .ci/run calls first)
#   tools/setup.sh sanitize  # every test built with ASan + UBSan, then the UI tests with TSan (.ci/run's
#                            # second step; each in its own build tree, build/asan and build/tsan)
#
# Run it as root or as a user with sudo: only the package installation needs root.
set -euo pipefail

mode=${1:-}
case "$mode" in
  run|test|sanitize) ;;
  *) echo "usage: tools/setup.sh run|test|sanitize" >&2; exit 2 ;;
esac

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"

packages=(
  g++ cmake ninja-build pkg-config
  qt6-base-dev qt6-svg-dev libgl-dev fonts-dejavu-core fonts-wqy-microhei fonts-noto-color-emoji
  libqcustomplot-dev libqcustomplot2.1-qt6
  libeigen3-dev libopencv-dev nlohmann-json3-dev libutf8proc-dev
  libopenblas0-openmp libopenblas-openmp-dev
  libgtest-dev libgmock-dev libbenchmark-dev
)

# The ThreadSanitizer build models Qt's event queue with Qt's private headers (ui/workbenches/worker_thread.cpp).
[ "$mode" = sanitize ] && packages+=(qt6-base-private-dev)

. "$top/tools/install_missing.sh"
install_missing "${packages[@]}"

# Two cores everywhere: more compile jobs only thrash memory and cache.
jobs=$(nproc 2>/dev/null || echo 2)

if [ "$mode" = test ]; then
  preset=ci
  cmake --preset "$preset"
  cmake --build --preset "$preset" -j "$jobs"
  export QT_QPA_PLATFORM=offscreen
  ctest --preset "$preset" -j "$jobs"
  exit 0
fi

if [ "$mode" = sanitize ]; then
  export QT_QPA_PLATFORM=offscreen
  # The engine's OpenMP loops run on one thread here: GCC's libgomp is not built with TSan, so its barriers
  # look like races to it. The threads under test are ours (the tabs' QThread workers), which this keeps.
  export OMP_NUM_THREADS=1
  stage() { echo "== $1: $(( $(date +%s) - started )) s"; }
  started=$(date +%s)
  cmake --preset asan
  cmake --build --preset asan -j "$jobs"
  stage "AddressSanitizer + UndefinedBehaviorSanitizer build"
  ctest --preset asan -j "$jobs"
  stage "AddressSanitizer + UndefinedBehaviorSanitizer: the whole suite passed"
  cmake --preset tsan
  # Only the UI tests (ctest's "ui" label without the command-line ones, "cli") and what they link.
  mapfile -t ui_tests < <(ctest --test-dir build/tsan -N -L ui -LE cli | sed -n 's/^ *Test *#[0-9]*: *//p')
  ((${#ui_tests[@]})) || { echo "no UI tests found in build/tsan" >&2; exit 1; }
  cmake --build --preset tsan -j "$jobs" --target "${ui_tests[@]}"
  stage "ThreadSanitizer build of ${#ui_tests[@]} UI tests"
  ctest --preset tsan -L ui -LE cli -j "$jobs"
  stage "ThreadSanitizer: the UI tests passed"
  exit 0
fi

preset=dev
cmake --preset "$preset"
cmake --build --preset "$preset" -j "$jobs" --target attnscope attnscope-cli
bin="$top/build/$preset/app"
if [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then
  echo "== starting AttnScope on the bundled demo: the date model's alignment of \"Saturday, 21 November 2026\""
  exec "$bin/attnscope" --tab alignment --model date-bahdanau --text "Saturday, 21 November 2026"
fi
out="$top/demo-out"
echo "== no display (DISPLAY and WAYLAND_DISPLAY are unset): rendering the demo views to PNG with attnscope-cli"
QT_QPA_PLATFORM=offscreen "$bin/attnscope-cli" demo --out-dir "$out"
QT_QPA_PLATFORM=offscreen "$bin/attnscope-cli" align --model date-bahdanau --text "Saturday, 21 November 2026" \
  --out "$out/alignment-date-bahdanau.png"
echo "== open the PNG files in $out, or run tools/setup.sh run again from a desktop session"
