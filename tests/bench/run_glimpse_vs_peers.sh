#!/bin/bash
# The glimpse workbench's reads against their peers, in the same run, on the same machine, with the same
# thread count: the STN glimpse against torch (affine_grid + grid_sample) and cv::warpAffine, and DRAW's
# Gaussian read (banded) against dense reads (the engine's read_dense and torch matmuls).
#
#   tests/bench/run_glimpse_vs_peers.sh <build-dir> [threads] [rounds]
#
# Builds nothing: <build-dir> must already hold tests/bench/bench_glimpse (cmake --build <build-dir> --target
# bench_glimpse). threads defaults to 2, rounds to 2. Runs torch, engine, torch, engine, ... so that drift of
# the machine hits both sides alike, pools every sample of each side and compares medians.
# Targets (the issue): STN faster than torch and within 1.5x of cv::warpAffine; the Gaussian read at least
# 10x faster than torch's dense matmuls for windows of a quarter of the image or less, and never slower
# than dense.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 3 ]]; then
  echo "usage: $0 <build-dir> [threads] [rounds]" >&2
  exit 2
fi
BUILD_DIR=$1
THREADS=${2:-2}
ROUNDS=${3:-2}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH="$BUILD_DIR/tests/bench/bench_glimpse"
PEER="$HERE/torch_glimpse_peer.py"
PY=/usr/bin/python3  # Debian's python3-torch lives here, not in a pyenv interpreter
REPETITIONS=${ATTN_BENCH_REPETITIONS:-5}
MIN_TIME=${ATTN_BENCH_MIN_TIME:-0.3}
# Only what is compared with the peers: the STN glimpse (engine, OpenCV) and the Gaussian read (banded, dense);
# not bench_glimpse's planar STN nor its window forms, which no peer runs.
FILTER='^BM_(StnEngine|StnOpenCV|GaussianRead|GaussianReadDense)/'

if [[ ! -x "$BENCH" ]]; then
  echo "error: $BENCH not found; build it first: cmake --build $BUILD_DIR --target bench_glimpse" >&2
  exit 2
fi
for v in "$THREADS" "$ROUNDS"; do
  if ! [[ "$v" =~ ^[1-9][0-9]*$ ]]; then
    echo "error: threads and rounds must be positive integers, got '$v'" >&2
    exit 2
  fi
done

# Same threads on every side, said out loud. OPENBLAS_CORETYPE would pin OpenBLAS to a kernel other than
# the one it detects for this CPU.
unset OPENBLAS_CORETYPE
export OMP_NUM_THREADS=$THREADS
export OPENBLAS_NUM_THREADS=$THREADS
unset ATTN_THREADS

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

echo "== glimpse reads vs torch and OpenCV ($(date -u '+%Y-%m-%d %H:%M:%SZ'))"
echo "cpu:      $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores online"
echo "threads:  $THREADS on every side (OMP_NUM_THREADS=$OMP_NUM_THREADS, OPENBLAS_NUM_THREADS=$OPENBLAS_NUM_THREADS," \
     "bench_glimpse --threads=$THREADS: engine OpenMP + cv::setNumThreads, torch.set_num_threads($THREADS));" \
     "OPENBLAS_CORETYPE unset"
echo "blas:     libblas.so.3 -> $(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3)"
echo "engine:   $BENCH"
echo "method:   $ROUNDS rounds of (torch, engine + OpenCV); each side $REPETITIONS samples of >= ${MIN_TIME}s per" \
     "case per round; medians over all samples"
load_before=$(cut -d' ' -f1 /proc/loadavg)
echo "load:     $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min) before the first run"
if awk -v b="$load_before" 'BEGIN { exit !(b > 1) }'; then
  echo "warning:  the machine is already loaded ($load_before): other work will share the CPU"
fi

for ((r = 1; r <= ROUNDS; r++)); do
  echo "-- round $r/$ROUNDS: torch (load $(cut -d' ' -f1 /proc/loadavg))"
  "$PY" "$PEER" --threads "$THREADS" --repetitions "$REPETITIONS" --min-time "$MIN_TIME" >"$WORK/torch_$r.json"
  echo "-- round $r/$ROUNDS: engine + OpenCV (load $(cut -d' ' -f1 /proc/loadavg))"
  "$BENCH" --threads="$THREADS" --benchmark_filter="$FILTER" --benchmark_format=json \
    --benchmark_repetitions="$REPETITIONS" --benchmark_min_time="$MIN_TIME" >"$WORK/engine_$r.json" \
    2>"$WORK/engine_$r.err"
  sed 's/^/   /' "$WORK/engine_$r.err"
done
load_after=$(cut -d' ' -f1 /proc/loadavg)
echo "load:     $(cut -d' ' -f1-3 /proc/loadavg) after the last run"

"$PY" - "$WORK" "$ROUNDS" "$THREADS" <<'EOF'
import json, re, statistics, sys

work, rounds, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
WINDOWS = ["whole", "quarter", "sixteenth", "wide"]
PATHS = {0: "banded", 1: "windowed", 2: "dense"}

torch_stn, torch_read, sums_torch = {}, {}, {}
eng = {}        # (bench, key) -> [ms]
counters = {}   # (bench, key) -> counters of the first sample
for r in range(1, rounds + 1):
    t = json.load(open(f"{work}/torch_{r}.json"))
    if t["torch_threads"] != threads:
        sys.exit(f"torch ran with {t['torch_threads']} threads, not {threads}")
    if r == 1:
        for path, info in t["blas_info"].items():
            print(f"torch:    {t['torch_version']}, BLAS {path}: {info['config'] if info else 'not OpenBLAS'}")
    for row in t["results"]:
        if row["bench"] == "stn":
            key = ("stn", row["out"])
            torch_stn.setdefault(row["out"], []).extend(row["samples_ms"])
        else:
            key = ("read", row["N"], row["window"])
            torch_read.setdefault((row["N"], row["window"]), []).extend(row["samples_ms"])
        sums_torch[key] = row["sum"]
    e = json.load(open(f"{work}/engine_{r}.json"))
    ctx = e["context"]
    if int(ctx.get("attn_threads", -1)) != threads or int(ctx.get("opencv_threads", -1)) != threads:
        sys.exit(f"bench_glimpse ran with {ctx.get('attn_threads')} engine / {ctx.get('opencv_threads')} OpenCV "
                 f"threads, not {threads}")
    if r == 1:
        print(f"engine:   bench_glimpse threads={ctx['attn_threads']} ({ctx['attn_threads_source']}),"
              f" google-benchmark library_build_type={ctx.get('library_build_type', '?')}")
        print(f"opencv:   {ctx['opencv_version']}, cv::getNumThreads()={ctx['opencv_threads']},"
              f" parallel framework {ctx['opencv_framework']}")
    for b in e["benchmarks"]:
        if b.get("error_occurred"):
            sys.exit(f"bench_glimpse reported an error for {b['name']}: {b.get('error_message')}")
        if b.get("run_type") != "iteration":
            continue
        scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b["time_unit"]]
        m = re.match(r"BM_(\w+?)/(?:out:(\d+)|N:(\d+)/window:(\d+))/", b["name"])
        kind = m.group(1)
        key = (kind, int(m.group(2))) if m.group(2) else (kind, int(m.group(3)), int(m.group(4)))
        eng.setdefault(key, []).append(b["real_time"] * scale)
        counters.setdefault(key, b)

def med(v):
    return statistics.median(v)

def same(a, b):
    return abs(a - b) <= 1e-4 * max(abs(a), abs(b), 1.0)

verdicts = []
print()
print("STN bilinear glimpse from 3 x 2048 x 2048 (similarity window: scale 0.5, rotation 0.2 rad), ms per glimpse")
hdr = (f"{'out':>7} | {'engine':>9} | {'OpenCV':>9} | {'torch':>9} | {'torch/engine':>12} | {'engine/OpenCV':>13} |"
       f" {'vs torch (> 1x)':>15} | {'vs OpenCV (<= 1.5x)':>19} | {'|engine-OpenCV|':>15}")
print(hdr)
print("-" * len(hdr))
for out in sorted(torch_stn):
    e, c, t = med(eng[("StnEngine", out)]), med(eng[("StnOpenCV", out)]), med(torch_stn[out])
    ok_t, ok_c = t / e > 1.0, e / c <= 1.5
    verdicts += [(f"STN {out}x{out} faster than torch", ok_t), (f"STN {out}x{out} within 1.5x of OpenCV", ok_c)]
    ce = counters[("StnEngine", out)]
    print(f"{out:>3}x{out:<3} | {e:>9.3f} | {c:>9.3f} | {t:>9.3f} | {t / e:>12.2f} | {e / c:>13.2f} |"
          f" {'PASS' if ok_t else 'MISS':>15} | {'PASS' if ok_c else 'MISS':>19} | {ce['max_diff_vs_opencv']:>15.2e}")
    for side, s in (("torch", sums_torch[("stn", out)]), ("OpenCV", counters[("StnOpenCV", out)]["sum"])):
        if not same(ce["sum"], s):
            print(f"  note: output sums differ: engine {ce['sum']:.6g}, {side} {s:.6g}")

print()
print("Gaussian read (DRAW) of 3 x 2048 x 2048, N x N filters, ms per read; torch = dense Fy I Fx^T with matmuls")
hdr = (f"{'N':>4} | {'window':>9} | {'path':>8} | {'banded':>9} | {'eng dense':>9} | {'torch':>9} |"
       f" {'torch/banded':>12} | {'dense/banded':>12} | {'MAC ratio':>9} | {'error bound':>11} | {'>= 10x torch':>12} | {'<= dense':>8}")
print(hdr)
print("-" * len(hdr))
for (n, w) in sorted(torch_read):
    b, d, t = med(eng[("GaussianRead", n, w)]), med(eng[("GaussianReadDense", n, w)]), med(torch_read[(n, w)])
    cb = counters[("GaussianRead", n, w)]
    small = WINDOWS[w] in ("quarter", "sixteenth")
    ok10 = t / b >= 10.0
    # "Never slower than dense": against the faster of the two dense reads, with 5% for timing noise.
    okd = b <= 1.05 * min(d, t)
    if small:
        verdicts.append((f"read N={n} {WINDOWS[w]} >= 10x torch", ok10))
    verdicts.append((f"read N={n} {WINDOWS[w]} not slower than dense", okd))
    print(f"{n:>4} | {WINDOWS[w]:>9} | {PATHS.get(int(cb['path']), '?'):>8} | {b:>9.3f} | {d:>9.3f} | {t:>9.3f} |"
          f" {t / b:>12.1f} | {d / b:>12.1f} | {cb['dense_macs'] / max(cb['macs'], 1):>9.1f} |"
          f" {cb['error_bound']:>11.2e} | {('PASS' if ok10 else 'MISS') if small else '-':>12} |"
          f" {'PASS' if okd else 'MISS':>8}")
    if not same(cb["sum"], sums_torch[("read", n, w)]):
        print(f"  note: output sums differ: engine {cb['sum']:.6g}, torch {sums_torch[('read', n, w)]:.6g}")

print()
print("samples:  min..max ms per side and case")
for key in sorted(eng, key=str):
    v = eng[key]
    print(f"          engine {key}: {min(v):.3f}..{max(v):.3f}")
for out, v in sorted(torch_stn.items()):
    print(f"          torch ('stn', {out}): {min(v):.3f}..{max(v):.3f}")
for key, v in sorted(torch_read.items()):
    print(f"          torch ('read', {key[0]}, {key[1]}): {min(v):.3f}..{max(v):.3f}")
# The fastest sample of each side is the least disturbed by other work on a shared machine; shown for
# diagnosis only, the verdicts use the medians.
print("best:     ratios of the fastest samples: STN " + ", ".join(
    f"{out}: torch/engine {min(torch_stn[out]) / min(eng[('StnEngine', out)]):.2f},"
    f" engine/OpenCV {min(eng[('StnEngine', out)]) / min(eng[('StnOpenCV', out)]):.2f}" for out in sorted(torch_stn)))
print("          read torch/banded, engine dense/banded: " + ", ".join(
    f"N{n} {WINDOWS[w]} {min(torch_read[(n, w)]) / min(eng[('GaussianRead', n, w)]):.1f}"
    f" / {min(eng[('GaussianReadDense', n, w)]) / min(eng[('GaussianRead', n, w)]):.1f}"
    for (n, w) in sorted(torch_read)))
print()
missed = [name for name, ok in verdicts if not ok]
for name, ok in verdicts:
    print(f"{'PASS' if ok else 'MISS'}  {name}")
print(f"target:   {'MET' if not missed else 'NOT MET (' + str(len(missed)) + ' missed)'}")
EOF

# Alone, this run puts about THREADS runnable threads on the machine; more means others shared the CPU.
if awk -v b="$load_before" -v a="$load_after" -v t="$THREADS" 'BEGIN { exit !(b > 1 || a > t + 1) }'; then
  echo "warning:  load $load_before before / $load_after after on $(nproc) cores: other work shared the CPU;" \
       "treat these figures as unreliable and rerun on a quiet machine"
fi
