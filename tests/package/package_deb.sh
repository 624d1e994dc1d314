#!/usr/bin/env bash
# The Debian package of this build tree, as a user who does not build gets it: cpack packs what the tree built
# (no second build: packaging/CMakeLists.txt has cpack install, not build), dpkg -x unpacks it into a temporary
# root, and both programs run from there, with nothing of the source or build tree beside them (the models, the
# sample photos and the icon are compiled in). Also checks the control fields, the desktop entry
# (desktop-file-validate when installed, Debian's desktop-file-utils) and the MIME types (the XML parses, and
# update-mime-database, when installed, maps *.attn.safetensors to the dump type, a sub-class of safetensors).
#
#   tests/package/package_deb.sh BUILD_DIR [CPACK]     (CPACK: the cpack of the CMake that configured the tree)
set -uo pipefail

build=$(cd "$1" && pwd)
cpack=${2:-cpack}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
passed=0
ok() { echo "ok:   $1"; passed=$((passed + 1)); }
fail() { echo "FAIL: $1"; failed=$((failed + 1)); }
finish() { echo "$passed passed, $failed failed"; ((failed == 0)); exit $?; }

seconds_since() { local ms=$((($(date +%s%N) - $1) / 1000000)); printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100)); }
started=$(date +%s%N)
if ! (cd "$build" && "$cpack" -G DEB -B "$work/out") >"$work/cpack.log" 2>&1; then
  sed 's/^/      | /' "$work/cpack.log" | tail -20
  fail "cpack -G DEB failed in $build"
  finish
fi
packing=$(seconds_since "$started")
deb=$(find "$work/out" -maxdepth 1 -name 'attnscope_*.deb' | head -1)
[ -n "$deb" ] || { fail "no attnscope_*.deb in $work/out"; finish; }
ok "packed $(basename "$deb") ($(du -m "$deb" | cut -f1) MB) in $packing s"

# The control fields: the libraries from dpkg-shlibdeps, with versions, and the font the labels need.
control=$(dpkg-deb -f "$deb" Package Depends Recommends)
for needed in "Package: attnscope" "libqt6widgets6 (>=" "libqt6svg6 (>=" "libopencv-core" "libopencv-imgcodecs406" "fonts-dejavu-core"; do
  if grep -qF -- "$needed" <<<"$control"; then ok "control names $needed"; else fail "control lacks $needed: $control"; fi
done

root="$work/root"
dpkg -x "$deb" "$root" || { fail "dpkg -x failed"; finish; }
for file in usr/bin/attnscope usr/bin/attnscope-cli usr/share/applications/attnscope.desktop \
  usr/share/mime/packages/attnscope.xml usr/share/icons/hicolor/scalable/apps/attnscope.svg \
  usr/share/icons/hicolor/256x256/apps/attnscope.png; do
  if [ -s "$root/$file" ]; then ok "/$file"; else fail "/$file missing or empty"; fi
done

# The programs from the unpacked root, in a folder of their own, with a home of their own (no autosave, no
# settings), no display and nothing of the build tree on any path.
run_dir="$work/run"
mkdir -p "$run_dir/home"
in_root() {
  (cd "$run_dir" && env -u DISPLAY -u WAYLAND_DISPLAY HOME="$run_dir/home" XDG_CONFIG_HOME="$run_dir/home/.config" \
    XDG_DATA_HOME="$run_dir/home/.local/share" XDG_CACHE_HOME="$run_dir/home/.cache" QT_QPA_PLATFORM=offscreen \
    timeout 120 "$@")
}
if version=$(in_root "$root/usr/bin/attnscope" --version 2>"$work/version.err") && grep -q '^attnscope' <<<"$version"; then
  ok "attnscope --version: $(head -1 <<<"$version")"
else
  fail "attnscope --version: $(cat "$work/version.err")"
fi
png="$run_dir/alignment.png"
if in_root "$root/usr/bin/attnscope-cli" align --model date-bahdanau --text "Saturday, 21 November 2026" \
  --out "$png" >"$work/cli.log" 2>&1; then
  ok "attnscope-cli align --model date-bahdanau ... --out alignment.png"
else
  sed 's/^/      | /' "$work/cli.log" | tail -10
  fail "attnscope-cli align failed"
fi
# A PNG (its signature), of a real size (width and height from IHDR), not a blank: many distinct bytes.
if [ -s "$png" ] && [ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; then
  width=$((16#$(od -An -tx1 -j16 -N4 "$png" | tr -d ' \n')))
  height=$((16#$(od -An -tx1 -j20 -N4 "$png" | tr -d ' \n')))
  size=$(stat -c %s "$png")
  if ((width >= 200 && height >= 100 && size >= 5000)); then
    ok "the render is a ${width} x ${height} PNG of $size bytes"
  else
    fail "the render is a ${width} x ${height} PNG of $size bytes: too small to be the figure"
  fi
else
  fail "no PNG at $png"
fi

desktop="$root/usr/share/applications/attnscope.desktop"
grep -qx 'Exec=attnscope %f' "$desktop" && ok "Exec=attnscope %f" || fail "the desktop entry's Exec is not 'attnscope %f'"
for type in inode/directory application/x-safetensors application/x-gguf application/x-attnscope-attention-dump; do
  grep -q "^MimeType=.*$type;" "$desktop" && ok "MimeType lists $type" || fail "MimeType lacks $type"
done
if command -v desktop-file-validate >/dev/null; then
  if desktop-file-validate "$desktop" >"$work/validate.log" 2>&1 && [ ! -s "$work/validate.log" ]; then
    ok "desktop-file-validate: no error, no hint"
  else
    fail "desktop-file-validate: $(cat "$work/validate.log")"
  fi
else
  echo "skip: desktop-file-validate is not installed (Debian's desktop-file-utils)"
fi

mime="$root/usr/share/mime/packages/attnscope.xml"
if python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$mime" 2>"$work/xml.err"; then
  ok "the MIME XML parses"
else
  fail "the MIME XML does not parse: $(cat "$work/xml.err")"
fi
if command -v update-mime-database >/dev/null; then
  mkdir -p "$work/mime/packages"
  cp "$mime" "$work/mime/packages/"
  if update-mime-database "$work/mime" >"$work/umd.log" 2>&1; then
    ok "update-mime-database reads it"
    for glob in 'application/x-safetensors:\*\.safetensors' 'application/x-gguf:\*\.gguf' \
      'application/x-attnscope-attention-dump:\*\.attn\.safetensors' 'application/x-attnscope-session:\*\.attnscope\.json'; do
      grep -q ":$glob$" "$work/mime/globs2" && ok "glob ${glob//\\/}" || fail "globs2 lacks ${glob//\\/}"
    done
    grep -qx 'application/x-attnscope-attention-dump application/x-safetensors' "$work/mime/subclasses" &&
      ok "the dump type is a sub-class of application/x-safetensors" || fail "no dump sub-class in subclasses"
  else
    fail "update-mime-database: $(cat "$work/umd.log")"
  fi
else
  echo "skip: update-mime-database is not installed (Debian's shared-mime-info)"
fi

echo "== the package test took $(seconds_since "$started") s"
finish
