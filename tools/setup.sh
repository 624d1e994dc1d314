#!/usr/bin/env bash
# AttnScope set-up on Debian 12: installs what is missing, configures, builds, then either starts the app
# on the bundled demo (`run`) or runs the whole test suite (`test`). Idempotent; rebuilds incrementally.
#
#   tools/setup.sh run    # GUI on the demo; without a display, renders the demo views to PNG instead
#   tools/setup.sh test   # every test, with ctest (what .ci/run calls)
#
# Run it as root or as a user with sudo: only the package installation needs root.
set -euo pipefail

mode=${1:-}
case "$mode" in
  run|test) ;;
  *) echo "usage: tools/setup.sh run|test" >&2; exit 2 ;;
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

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "== installing ${#missing[@]} Debian packages: ${missing[*]}"
  as_root=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    as_root=(sudo)
  fi
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "== all ${#packages[@]} Debian packages present"
fi

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
