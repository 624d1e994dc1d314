#!/usr/bin/env bash
# AttnScope set-up on Debian 12: installs what is missing, configures, builds, then either starts the app
# on the bundled demo (`run`), runs the whole test suite (`test`), runs it again under the sanitizers
# (`sanitize`) or makes the Debian package (`package`). Idempotent; rebuilds incrementally.
#
#   tools/setup.sh run       # GUI on the demo; without a display, renders the demo views to PNG instead
#   tools/setup.sh test      # every test, with ctest (what .ci/run calls first)
#   tools/setup.sh sanitize  # the tests under ASan + UBSan, then the threaded UI tests under TSan (.ci/run's
#                            # second step; each in its own build tree, build/asan and build/tsan)
#   tools/setup.sh package   # dist/attnscope_<version>_amd64.deb, for people who do not build: a Release tree for
#                            # any x86-64 CPU (build/package, ATTN_NATIVE off), packed by cpack (packaging/)
#
# Run it as root or as a user with sudo: only the package installation needs root.
set -euo pipefail

mode=${1:-}
case "$mode" in
  run|test|sanitize|package) ;;
  *) echo "usage: tools/setup.sh run|test|sanitize|package" >&2; exit 2 ;;
esac

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"

# "== stage: NAME: N s" after each step (.ci/run gathers these lines into its table).
stage_started=$(date +%s)
stage() {
  local now
  now=$(date +%s)
  echo "== stage: $1: $((now - stage_started)) s"
  stage_started=$now
}

# `run` says first, before installing or building anything, whether it can start the app.
display=yes
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  display=no
  [ "$mode" = run ] && echo "== no display (DISPLAY and WAYLAND_DISPLAY are unset): the demo views will be rendered to PNG with attnscope-cli"
fi

packages=(
  g++ cmake ninja-build pkg-config
  qt6-base-dev qt6-svg-dev libgl-dev fonts-dejavu-core fonts-wqy-microhei fonts-noto-color-emoji
  libqcustomplot-dev libqcustomplot2.1-qt6
  libeigen3-dev libsqlite3-dev libboost-graph-dev libopencv-dev nlohmann-json3-dev libutf8proc-dev libpcre2-dev libsentencepiece-dev zlib1g-dev
  libsndfile1-dev libsamplerate0-dev libespeak-ng-dev espeak-ng-data
  qt6-multimedia-dev
  libopenblas0-openmp libopenblas-openmp-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang-format-16 python3 lld ccache
  # The package (tools/setup.sh package) and its test: dpkg-shlibdeps for its dependencies, desktop-file-validate.
  dpkg-dev desktop-file-utils
)

# The suite's corpus tests: a real single-node Slurm (tests/slurm/slurm_corpus.sh) and GNU parallel (the README's
# one-liner, run by readme_commands).
[ "$mode" = test ] && packages+=(slurm-wlm munge parallel)

# The ThreadSanitizer build models Qt's event queue with Qt's private headers (ui/workbenches/common/worker_thread.cpp).
[ "$mode" = sanitize ] && packages+=(qt6-base-private-dev)

. "$top/tools/install_missing.sh"
install_missing "${packages[@]}"
stage "packages"

# The commit-message rule (tools/check_commit_message.sh) as this clone's commit-msg hook.
if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
   [ "$(git -C "$top" config core.hooksPath || true)" != tools/git-hooks ]; then
  git -C "$top" config core.hooksPath tools/git-hooks && echo "== commit-msg hook: tools/git-hooks (the subject rule)"
fi

# Two cores everywhere: more compile jobs only thrash memory and cache.
jobs=$(nproc 2>/dev/null || echo 2)

if [ "$mode" = test ]; then
  preset=ci
  cmake --preset "$preset"
  cmake --build --preset "$preset" -j "$jobs"
  stage "build (ci preset: Release, warnings as errors)"
  export QT_QPA_PLATFORM=offscreen
  ctest --preset "$preset" -j "$jobs"
  stage "the whole suite (ci)"
  exit 0
fi

if [ "$mode" = sanitize ]; then
  export QT_QPA_PLATFORM=offscreen
  # The engine's OpenMP loops run on one thread here: GCC's libgomp is not built with TSan, so its barriers
  # look like races to it. The threads under test are ours (the tabs' QThread workers), which this keeps.
  export OMP_NUM_THREADS=1
  cmake --preset asan
  cmake --build --preset asan -j "$jobs"
  stage "ASan + UBSan build (every target but the benchmarks and the threaded UI tests)"
  # Formatting, the README's commands and the package are checked by the suite (a package of an instrumented tree
  # is no package).
  ctest --preset asan -j "$jobs" -LE 'format|docs|package'
  stage "ASan + UBSan: the whole suite"
  cmake --preset tsan
  # Only the UI tests (tests/ui: ctest's "ui" label without the command-line ones, "cli") and what they link.
  # Left out too: the ones that start no thread of ours ("one_thread": pure renderers and widgets).
  mapfile -t ui_tests < <(ctest --test-dir build/tsan -N -L ui -LE 'cli|one_thread' | sed -n 's/^ *Test *#[0-9]*: *//p')
  ((${#ui_tests[@]})) || { echo "no UI tests found in build/tsan" >&2; exit 1; }
  cmake --build --preset tsan -j "$jobs" --target ui_tests
  stage "TSan build of the UI tests (${#ui_tests[@]} ctest tests)"
  ctest --preset tsan -L ui -LE 'cli|one_thread' -j "$jobs"
  stage "TSan: the UI tests"
  exit 0
fi

if [ "$mode" = package ]; then
  # Its own tree: a package runs on other machines, so no -march=native (ATTN_NATIVE off); no tests, no benchmarks.
  cmake --preset package
  cmake --build --preset package -j "$jobs" --target attnscope attnscope-cli
  stage "build (package preset: Release for any x86-64 CPU)"
  # ATTN_PACKAGE_OUT: where the .deb goes (dist/ by default).
  out="${ATTN_PACKAGE_OUT:-$top/dist}"
  mkdir -p "$out"
  rm -f "$out"/attnscope_*.deb
  (cd build/package && cpack -G DEB -B "$out")
  rm -rf "$out/_CPack_Packages"
  stage "cpack -G DEB"
  deb=$(find "$out" -maxdepth 1 -name 'attnscope_*.deb' | head -1)
  [ -n "$deb" ] || { echo "no attnscope_*.deb in $out" >&2; exit 1; }
  echo "== the package: $deb"
  echo "== install it with: sudo apt install $deb"
  exit 0
fi

# `run`: reuse a tree that is already configured (build/dev, or build/ci after `tools/setup.sh test`) and build
# only the two programs in it; build/dev when there is none. ATTN_PRESET names the tree (the README-commands test
# runs this on its own tree). Every tree compiles the same unity batches (CMakeLists.txt), so this builds what CI
# builds.
preset=${ATTN_PRESET:-dev}
if [ -z "${ATTN_PRESET:-}" ] && [ ! -f build/dev/build.ninja ] && [ -f build/ci/build.ninja ]; then preset=ci; fi
echo "== building attnscope and attnscope-cli in build/$preset"
cmake --preset "$preset"
cmake --build --preset "$preset" -j "$jobs" --target attnscope attnscope-cli
bin="$top/build/$preset/app"
if [ "$display" = yes ]; then
  echo "== starting AttnScope on the bundled demo: the date model's alignment of \"Saturday, 21 November 2026\""
  exec "$bin/attnscope" --tab alignment --model date-bahdanau --text "Saturday, 21 November 2026"
fi
# ATTN_DEMO_OUT: where the PNG files go (demo-out/ by default; the test of this script writes elsewhere).
out="${ATTN_DEMO_OUT:-$top/demo-out}"
QT_QPA_PLATFORM=offscreen "$bin/attnscope-cli" demo --out-dir "$out"
QT_QPA_PLATFORM=offscreen "$bin/attnscope-cli" align --model date-bahdanau --text "Saturday, 21 November 2026" \
  --out "$out/alignment-date-bahdanau.png"
echo "== open the PNG files in $out, or run tools/setup.sh run again from a desktop session"
