#!/usr/bin/env bash
# Every command README.md and docs/*.md show must run as written. This test reads them (each line of a ```sh block,
# with its backslash continuations, and every inline example: spans that begin with attnscope-cli or
# build/*/app/attnscope-cli and give an option a value ("`attnscope-cli run --dump`" names an option and is
# not a command), tools/setup.sh, tests/fuzz/run.sh, tests/bench/run_,
# build/*/tests/bench/, cmake --preset, ctest --preset or /usr/bin/python3) and runs each for real:
#   attnscope-cli, build/dev/app/attnscope-cli   exit status 0
#   attnscope, build/dev/app/attnscope           the GUI, offscreen with --screenshot; exit status 0
#   tools/setup.sh run                           without a display, on this test's own tree (ATTN_PRESET): the
#                                                "no display" line first, then the real configure and build
#                                                (nothing to do in a built tree) and the demo PNG files
# except the kinds LISTED below, which cannot run inside the suite; each says why, and how it is checked instead.
# A command that fits no rule fails the test, so a new kind of command in the docs needs a rule here.
#
#   tests/cli/readme_commands.sh SOURCE_DIR BUILD_DIR BENCH_BUILT(ON|OFF)
# build/dev (or build/ci) in a command stands for BUILD_DIR; commands run in order (README.md, then docs/*.md by
# name) in a scratch folder where resources/, tests/ and tools/ point into SOURCE_DIR (so a later command can read
# what an earlier one wrote).
#
# LISTED (not run here):
#   tools/setup.sh test|sanitize   over 10 minutes (it builds whole trees) and installs packages. Checked: it parses,
#                                  and .ci/run calls it, so every CI run runs it as written.
#   tools/setup.sh package         builds a tree of its own (build/package: over 10 minutes) and installs packages.
#                                  Checked: it parses, the package preset exists, and the suite's package_deb test
#                                  (tests/package) packs this tree with the same cpack and runs what it unpacked.
#   cmake --preset P, cmake --build --preset P, ctest --preset P
#                                  a whole build tree: over 10 minutes. Checked: P is a preset of CMakePresets.json
#                                  and tools/setup.sh (CI) uses the same preset for ci, asan and tsan; a -R NAME
#                                  names a test of the suite (in tests/'s CMake files or sources).
#   tests/fuzz/run.sh SECONDS [TARGET...]
#                                  installs clang-16 and fuzzes for minutes. Checked: it parses and every TARGET it
#                                  names is a tests/fuzz/fuzz_TARGET.cpp.
#   tests/bench/run_*.sh TREE ...  minutes to hours, needs python3-torch, and its figures need an idle machine.
#                                  Checked: it parses, and every benchmark program it runs is built in this tree.
#   build/*/tests/bench/NAME [...] minutes, and a timing on a machine running the suite is no figure. Checked: built
#                                  in this tree (a tree without benchmarks fails: ATTN_BUILD_BENCH=ON) and it lists
#                                  its cases (--benchmark_list_tests).
#   tools/slurm/corpus.sbatch ... needs a Slurm cluster. Checked: it parses, and the suite's slurm_corpus test
#                                  submits it to a real single-node Slurm it starts (tests/slurm/slurm_corpus.sh).
#   (GNU parallel's one-liner runs for real, with this tree's attnscope-cli first on PATH.)
#   /usr/bin/python3 -m tools.X, /usr/bin/python3 tools/X.py
#                                  needs python3-torch (not a build dependency) and trains or measures for minutes.
#                                  Checked: the module exists and compiles (py_compile).
set -uo pipefail

src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
bench_built=${3:-ON}
docs=("$src/README.md" "$src"/docs/*.md)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ln -s "$src/resources" "$work/resources"
ln -s "$src/tests" "$work/tests"
ln -s "$src/tools" "$work/tools"
# The GUI reads and autosaves its session under XDG folders: keep the user's own out of this.
export XDG_DATA_HOME="$work/.xdg-data" XDG_CONFIG_HOME="$work/.xdg-config" XDG_CACHE_HOME="$work/.xdg-cache"
export QT_QPA_PLATFORM=offscreen

# The commands, one per line: ```sh blocks (continuations joined, trailing "  # comment" dropped), then the
# inline examples.
mapfile -t commands < <(awk '
  /^```sh[[:space:]]*$/ { inblock = 1; next }
  /^```/ { inblock = 0; next }
  inblock {
    line = $0
    sub(/[[:space:]][[:space:]]+#.*$/, "", line)
    if (line ~ /\\$/) { sub(/\\$/, "", line); pending = pending line; next }
    line = pending line; pending = ""
    gsub(/^[[:space:]]+|[[:space:]]+$/, "", line); gsub(/[[:space:]]+/, " ", line)
    if (line != "") print line
    next
  }
  {
    rest = $0
    while (match(rest, /`((build\/[a-z]+\/app\/)?attnscope-cli [a-z][^`]* --[a-z-]+ |tools\/setup\.sh |tests\/fuzz\/run\.sh|tests\/bench\/run_|build\/[a-z]+\/tests\/bench\/|cmake --preset|ctest --preset|\/usr\/bin\/python3 )[^`]*`/)) {
      print substr(rest, RSTART + 1, RLENGTH - 2)
      rest = substr(rest, RSTART + RLENGTH)
    }
  }' "${docs[@]}")

((${#commands[@]} > 0)) || { echo "no commands found in ${docs[*]}"; exit 1; }
# "a && b" is two commands, checked in turn.
split=()
for cmd in "${commands[@]}"; do
  while [[ "$cmd" == *" && "* ]]; do
    split+=("${cmd%% && *}")
    cmd=${cmd#* && }
  done
  split+=("$cmd")
done
commands=("${split[@]}")

passed=0
failed=0
fail() { echo "FAIL: $cmd"; echo "      $1"; failed=$((failed + 1)); }
pass() { echo "ok:   $cmd${1:+  ($1)}"; passed=$((passed + 1)); }

run_logged() {  # runs "$@" in the scratch folder; prints its output on failure
  local log="$work/.log" status
  (cd "$work" && timeout 300 "$@") >"$log" 2>&1
  status=$?
  if ((status != 0)); then sed 's/^/      | /' "$log" | tail -20; fi
  return $status
}

check_setup_run() {
  local out="$work/.demo-out" log="$work/.setup-run.log" preset
  preset=$(basename "$build")
  grep -q "\"name\": \"$preset\"" "$src/CMakePresets.json" ||
    { fail "this test's tree $build is not a preset's tree (build/PRESET), so setup.sh cannot run on it"; return; }
  # For real: packages (all present), configure and build of attnscope and attnscope-cli in this tree (nothing to
  # do after the suite's build), then the demo rendered without a display.
  if ! (env -u DISPLAY -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM ATTN_PRESET="$preset" ATTN_DEMO_OUT="$out" \
          timeout 500 bash "$src/tools/setup.sh" run) >"$log" 2>&1; then
    sed 's/^/      | /' "$log" | tail -20
    fail "tools/setup.sh run failed without a display"
    return
  fi
  if ! head -1 "$log" | grep -q '^== no display'; then
    fail "its first line is not the no-display notice: $(head -1 "$log")"
    return
  fi
  grep -q "^== building attnscope and attnscope-cli in build/$preset" "$log" ||
    { fail "it did not build in build/$preset"; return; }
  local pngs
  pngs=$(find "$out" -name '*.png' | wc -l)
  ((pngs >= 2)) || { fail "it wrote $pngs PNG files to $out"; return; }
  pass "run for real: no display said first; built in build/$preset; $pngs PNG files"
}

listed() { pass "listed: $1"; }

check_preset() {  # the word after --preset is a preset; ctest's -R NAME is a test of this tree
  local preset name
  preset=$(printf '%s\n' "$@" | sed -n '/^--preset$/{n;p;q}')
  if [ -z "$preset" ] || ! grep -q "\"name\": \"$preset\"" "$src/CMakePresets.json"; then
    fail "no such preset '${preset}' in CMakePresets.json"; return
  fi
  name=$(printf '%s\n' "$@" | sed -n '/^-R$/{n;p;q}')
  # A test of another tree (tsan_canary is registered in the TSan tree alone): its name in the suite's sources.
  if [ -n "$name" ] && ! grep -rqw -- "$name" "$src/tests" --include=CMakeLists.txt --include='*.cpp'; then
    fail "no test named like -R $name in tests/"; return
  fi
  listed "a whole build tree (over 10 minutes); preset $preset exists${name:+, test $name exists}"
}

check_fuzz() {  # tests/fuzz/run.sh [SECONDS [TARGET...]] (the script named alone, in prose, is checked too)
  shift
  (($# > 0)) && shift
  local t
  bash -n "$src/tests/fuzz/run.sh" || { fail "does not parse"; return; }
  for t in "$@"; do
    [ -f "$src/tests/fuzz/fuzz_$t.cpp" ] || { fail "no fuzz target $t"; return; }
  done
  listed "installs clang and fuzzes for minutes; parses, targets exist"
}

check_bench_script() {  # tests/bench/run_X.sh TREE ...: every bench_* program it names is built here
  local script="$src/$1" b missing=()
  [ -x "$script" ] && bash -n "$script" || { fail "missing, not executable or does not parse"; return; }
  for b in $(grep -o 'bench_[a-z_0-9]*' "$script" | sort -u); do
    [ -f "$src/tests/bench/$b.cpp" ] || continue  # a name in a comment or a peer's script, not a program
    [ -x "$build/tests/bench/$b" ] || missing+=("$b")
  done
  ((${#missing[@]} == 0)) || { fail "not built in this tree: ${missing[*]}"; return; }
  # It runs what it compares, nothing more: every run of its program ("$BENCH" --...) names the benchmarks it runs
  # (--benchmark_filter) or is one of the programs' own modes (--prepare, --memory). A run without a filter ran every
  # case: run_decoder_vs_torch.sh ran bench_decoder's 32,768-token cases (hours) to compare three.
  local unfiltered
  unfiltered=$(grep -n '"$BENCH" --' "$script" | grep -v -e '--benchmark_filter=' -e '--prepare' -e '--memory')
  [ -z "$unfiltered" ] || { fail "runs its benchmark program without --benchmark_filter: $unfiltered"; return; }
  # Its FILTER (with the LENGTHS it may be made of) lists cases of its program.
  local filter program cases=""
  filter=$(bash -c "$(grep -E '^(LENGTHS|FILTER)=' "$script")"$'\n''printf %s "${FILTER:-}"')
  program=$(sed -n 's|^BENCH=.*tests/bench/\(bench_[a-z_0-9]*\)"$|\1|p' "$script")
  if [ -n "$filter" ] && [ -n "$program" ]; then
    cases=$("$build/tests/bench/$program" --benchmark_list_tests --benchmark_filter="$filter" 2>/dev/null | wc -l)
    ((cases > 0)) || { fail "its FILTER $filter lists no case of $program"; return; }
    cases=", its filter runs $cases cases of $program"
  fi
  listed "minutes to hours, needs python3-torch and an idle machine; parses, its benchmarks are built$cases"
}

check_bench() {  # build/TREE/tests/bench/NAME ...
  local bench="$build/tests/bench/${1##*/}"
  if [ ! -x "$bench" ]; then
    fail "$bench is not built (bench_built=$bench_built: configure with ATTN_BUILD_BENCH=ON)"; return
  fi
  "$bench" --benchmark_list_tests >"$work/.bench-list" 2>&1 && [ -s "$work/.bench-list" ] ||
    { fail "$bench does not list its cases"; return; }
  listed "a benchmark: minutes, no figure on a busy machine; built, lists $(wc -l <"$work/.bench-list") cases"
}

check_python() {  # /usr/bin/python3 -m tools.X ... or /usr/bin/python3 tools/X.py ...
  local file
  if [ "${2:-}" = -m ]; then file="$src/$(tr . / <<<"${3:-}").py"; else file="$src/${2:-}"; fi
  [ -f "$file" ] || { fail "no such script $file"; return; }
  python3 -m py_compile "$file" 2>"$work/.py.log" || { fail "does not compile: $(cat "$work/.py.log")"; return; }
  listed "needs python3-torch and minutes; ${file#"$src"/} exists and compiles"
}

for cmd in "${commands[@]}"; do
  # Word-split with the shell's own quoting rules (the docs' quotes are shell quotes).
  eval "set -- $cmd" 2>/dev/null || { fail "cannot be split into words"; continue; }
  first=$1
  case "$first" in
    attnscope-cli | build/*/app/attnscope-cli)
      shift
      if run_logged "$build/app/attnscope-cli" "$@"; then pass; else fail "exited non-zero"; fi
      ;;
    attnscope | build/*/app/attnscope)
      shift
      if run_logged "$build/app/attnscope" "$@" --screenshot "$work/.gui.png"; then pass "screenshot saved"; else fail "exited non-zero"; fi
      ;;
    tools/setup.sh)
      case "${2:-}" in
        run) check_setup_run ;;
        test | sanitize)
          if bash -n "$src/tools/setup.sh" && grep -q "tools/setup.sh $2" "$src/.ci/run"; then
            listed "over 10 minutes, installs packages; parses, and .ci/run runs it"
          else
            fail "does not parse, or .ci/run does not run it"
          fi ;;
        package)
          if bash -n "$src/tools/setup.sh" && grep -q '"name": "package"' "$src/CMakePresets.json" &&
             grep -q -- 'cpack -G DEB' "$src/tools/setup.sh" && grep -q -- '"$cpack" -G DEB' "$src/tests/package/package_deb.sh"
          then
            listed "a tree of its own, over 10 minutes; parses, its preset exists, and package_deb packs this tree"
          else
            fail "does not parse, or the package preset or the cpack call is gone"
          fi ;;
        *) fail "unknown mode '${2:-}'" ;;
      esac
      ;;
    parallel)  # GNU parallel's one-liner: run for real, attnscope-cli on PATH being this tree's
      if ! command -v parallel >/dev/null; then
        fail "GNU parallel is not installed (tools/setup.sh test installs it)"
      else
        mkdir -p "$work/.bin" && ln -sf "$build/app/attnscope-cli" "$work/.bin/attnscope-cli"
        if PATH="$work/.bin:$PATH" run_logged "$@"; then pass; else fail "exited non-zero"; fi
      fi
      ;;
    tools/slurm/corpus.sbatch)
      if bash -n "$src/$first" && grep -q 'tools/slurm/corpus.sbatch' "$src/tests/slurm/slurm_corpus.sh"; then
        listed "needs a Slurm cluster; parses, and the slurm_corpus test submits it to a single-node Slurm"
      else
        fail "does not parse, or tests/slurm/slurm_corpus.sh no longer runs it"
      fi
      ;;
    tests/fuzz/run.sh) check_fuzz "$@" ;;
    tests/bench/run_*.sh) check_bench_script "$@" ;;
    build/*/tests/bench/*) check_bench "$@" ;;
    cmake | ctest) check_preset "$@" ;;
    /usr/bin/python3) check_python "$@" ;;
    *)
      fail "tests/cli/readme_commands.sh has no rule for commands beginning with '$first'"
      ;;
  esac
done

echo "$passed passed, $failed failed"
((failed == 0))
