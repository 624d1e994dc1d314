#!/usr/bin/python3
"""torch peer of bench_glimpse: the same STN glimpse and dense Gaussian reads in torch, timed, as JSON.

    /usr/bin/python3 tests/bench/torch_glimpse_peer.py [--threads 2] [--repetitions 5] [--min-time 0.3]

Workloads (bench_glimpse.cpp has the same constants; change both together):
- image: 3 x 2048 x 2048 float32, c, y, x -> 0.5 + 0.2 sin(2 pi x / 1300 + c) cos(2 pi y / 1100 + 0.7 c)
  + 0.1 sin(2 pi (x + y) / 1700 + 2 c), computed in float64 and rounded once;
- STN: F.affine_grid(theta, [1, 3, out, out], align_corners=False) + F.grid_sample(bilinear, zeros,
  align_corners=False) for out = 64, 256, theta the similarity window of scale 0.5, rotation 0.2 rad,
  shift (0.1, -0.05) on a square image: [[s cos r, -s sin r, tx], [s sin r, s cos r, ty]]. Timed: both calls.
- Gaussian read, dense: Fx, Fy built from the window (mu_i = u + i d, exp(-(a - mu_i)^2 / (2 s^2)), rows
  normalised with + 1e-8) and gamma Fy I Fx^T with torch.matmul over the three channels, for N = 64, 256 and
  the windows whole / quarter / sixteenth / wide (centred; extent 2048, 1024, 512, 2048 px; stride
  extent / N; sigma stride / 2, or 400 px for wide). Timed: the filterbanks and the two products, as the
  engine's read builds its filterbanks every call too. The products are associated as (I Fx^T) first, one
  GEMM over the rows of all channels, then Fy: torch's fastest form here (checked against
  torch.matmul(torch.matmul(Fy, I), Fx^T) once per case).

Method as torch_mha_peer.py: torch.no_grad(); warm-up for min-time; `repetitions` samples, each the mean over
enough back-to-back calls to last min-time. "sum" is the sum of one call's output, which the runner compares
with bench_glimpse's to show both sides computed the same thing. Refuses (exit 3) when torch has loaded
the reference BLAS or one it cannot identify (see torch_mha_peer.py).
"""

import argparse
import json
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_mha_peer import check_torch_blas, openblas_info, time_calls  # noqa: E402

SIDE = 2048
CHANNELS = 3
STN_OUT = (64, 256)
STN_WINDOW = {"scale": 0.5, "rotation": 0.2, "shift_x": 0.1, "shift_y": -0.05}
READ_N = (64, 256)
# name, extent (px), sigma (px; 0 = stride / 2): bench_glimpse.cpp's kWindows, in the same order.
WINDOWS = (("whole", 2048.0, 0.0), ("quarter", 1024.0, 0.0), ("sixteenth", 512.0, 0.0), ("wide", 2048.0, 400.0))
EPS = 1e-8
GAMMA = 1.0  # centred_glimpse's default, as bench_glimpse uses


def bench_image(torch):
    x = torch.arange(SIDE, dtype=torch.float64)
    y = x.unsqueeze(1)
    tau = 2.0 * math.pi
    planes = []
    for c in range(CHANNELS):
        p = 0.5 + 0.2 * torch.sin(tau * x / 1300.0 + c) * torch.cos(tau * y / 1100.0 + 0.7 * c) + \
            0.1 * torch.sin(tau * (x + y) / 1700.0 + 2.0 * c)
        planes.append(p)
    return torch.stack(planes).to(torch.float32)


def window_axis(n, window):
    _, extent, sigma = WINDOWS[window]
    stride = extent / n
    sigma = sigma if sigma > 0 else stride / 2.0
    centre = (SIDE - 1) / 2.0
    return centre - 0.5 * (n - 1) * stride, stride, sigma


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--min-time", type=float, default=0.3, help="seconds per sample (and of warm-up)")
    args = ap.parse_args()

    import torch  # after argument parsing: --help works without torch
    import torch.nn.functional as F

    blas, status = check_torch_blas(torch, args.threads, "torch_glimpse_peer")
    if status:
        return status

    def measure(call):
        end = time.perf_counter() + args.min_time  # warm-up
        while time.perf_counter() < end:
            call()
        samples, calls = [], []
        for _ in range(args.repetitions):
            t, c = time_calls(call, args.min_time)
            samples.append(t)
            calls.append(c)
        return samples, calls

    img = bench_image(torch)
    results = []
    with torch.no_grad():
        s, r = STN_WINDOW["scale"], STN_WINDOW["rotation"]
        theta = torch.tensor([[[s * math.cos(r), -s * math.sin(r), STN_WINDOW["shift_x"]],
                               [s * math.sin(r), s * math.cos(r), STN_WINDOW["shift_y"]]]], dtype=torch.float32)
        batch = img.unsqueeze(0)
        for out in STN_OUT:
            def stn():
                grid = F.affine_grid(theta, [1, CHANNELS, out, out], align_corners=False)
                return F.grid_sample(batch, grid, mode="bilinear", padding_mode="zeros", align_corners=False)

            y = stn()
            assert y.shape == (1, CHANNELS, out, out) and torch.isfinite(y).all()
            samples, calls = measure(stn)
            results.append({"bench": "stn", "out": out, "samples_ms": [round(t * 1e3, 5) for t in samples],
                            "calls_per_sample": calls, "median_ms": statistics.median(samples) * 1e3,
                            "sum": float(y.double().sum())})

        pix = torch.arange(SIDE, dtype=torch.float32)
        img_rows = img.reshape(CHANNELS * SIDE, SIDE)  # a view: the rows of all channels
        for n in READ_N:
            for w, (name, _, _) in enumerate(WINDOWS):
                u, d, sigma = window_axis(n, w)

                def bank():
                    mu = u + d * torch.arange(n, dtype=torch.float32)
                    e = torch.exp(-(pix.unsqueeze(0) - mu.unsqueeze(1)) ** 2 / (2.0 * sigma * sigma))
                    return e / (e.sum(dim=1, keepdim=True) + EPS)

                def dense_read():
                    fx = bank()  # square image and the same axis both ways: Fy = Fx
                    fy = fx
                    # I Fx^T first, as one GEMM over the rows of all three channels, then Fy per channel:
                    # the fastest association torch offers here (torch.matmul(torch.matmul(Fy, I), Fx^T)
                    # broadcasts Fy into a batched GEMM and was 2-5x slower on the 2-core test machine).
                    t = torch.matmul(img_rows, fx.T).reshape(CHANNELS, SIDE, n)
                    return GAMMA * torch.matmul(fy, t)

                y = dense_read()
                assert y.shape == (CHANNELS, n, n) and torch.isfinite(y).all()
                fx = bank()
                plain = GAMMA * torch.matmul(torch.matmul(fx, img), fx.T)
                assert (y - plain).abs().max() <= 1e-5 * plain.abs().max(), "the two associations disagree"
                samples, calls = measure(dense_read)
                results.append({"bench": "gaussian_read", "N": n, "window": w, "window_name": name,
                                "first": u, "stride": d, "sigma": sigma,
                                "samples_ms": [round(t * 1e3, 5) for t in samples], "calls_per_sample": calls,
                                "median_ms": statistics.median(samples) * 1e3, "sum": float(y.double().sum())})

    report = {
        "peer": "torch (F.affine_grid + F.grid_sample; torch.matmul)",
        "torch_version": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
        "blas_loaded": blas,
        "blas_info": {p: openblas_info(p) for p in blas},
        "repetitions": args.repetitions,
        "min_time_s": args.min_time,
        "results": results,
    }
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
