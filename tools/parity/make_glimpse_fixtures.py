#!/usr/bin/python3
"""Parity fixtures for the glimpse workbench: the spatial transformer's glimpse against torch's
affine_grid + grid_sample, and DRAW's Gaussian attention against the formulas of its paper.

Regenerate (from the repository root; the fixtures are committed, so only after changing this script):

    /usr/bin/python3 -m tools.parity.make_glimpse_fixtures

Use /usr/bin/python3 explicitly: that is the interpreter Debian's python3-torch is installed for.
The conventions are make_fixtures.py's (this script uses its writer): one JSON file per case, here
tests/data/parity/glimpse_*.json; every input from a fixed seed; inputs drawn in float64, rounded to
float32 and stored as float32; references computed in float64 from those float32 inputs and rounded to
float32 once, when written; every number checked to come back bit-exact through strtod + a cast to float.
tests/parity/test_glimpse_parity.cpp reads the files and compares the engine within 1e-4 absolute (the
issue's tolerance for glimpses, kGlimpseTolerance in tests/parity/fixture.h).

Layouts
- An image is a [C, H, W] tensor (planar, as attn::Image and torch); a 2 x 3 theta is row-major,
  xs = t00 x + t01 y + t02, ys = t10 x + t11 y + t12 (engine/include/attn/glimpse/stn.h).
- A sampling grid is stored as (out_h * out_w) x 2, row i * out_w + j = (xs, ys): attn::glimpse::affine_grid's
  layout, torch's [1, out_h, out_w, 2] reshaped.
- Filterbanks are n x size (Fx: Nx x W, Fy: Ny x H); read is [C, Ny, Nx]; write is [C, H, W].
- Scalars that define a case (family parameters, DRAW's parameters, sizes) are in "params" as JSON
  doubles (they round-trip exactly); the C++ side builds the engine's structs from them.

Two references per quantity, checked against each other here so that a wrong reference cannot be written:
- STN: torch (affine_grid, grid_sample in float64) against a numpy sampler written from stn.h's comment.
  The constrained families' theta is written from stn.h independently of the engine (the similarity
  family's aspect correction: xs = s cos(r) x - s sin(r) (H/W) y + tx, ys = s sin(r) (W/H) x + s cos(r) y + ty).
- DRAW: the paper's form is computed with its own 1-based filter index i and pixel index a (eq. 19-24),
  against the 0-based pixel form mu_i = u + i d; read and write as matrix products against einsum.
Nearest sampling is guarded: a sample coordinate is either an exact .5 (on purpose, to check torch's
round-half-to-even, verified exact with fractions) or at least 1e-3 from one, so float32 against float64
arithmetic cannot flip a pixel.
"""

import json
import math
import os
import sys
from fractions import Fraction

import numpy as np
import torch
import torch.nn.functional as F

from tools.parity import make_fixtures as mf  # the writer and the input helpers; sets torch deterministic

GENERATOR = "tools/parity/make_glimpse_fixtures.py"
OUT_DIR = mf.OUT_DIR
PREFIX = "glimpse_"
F64 = torch.float64
EPS = 1e-8  # DRAW's normalisation epsilon (gaussian.h kFilterEps)
BUDGET = 2_000_000  # bytes for all glimpse fixtures together


def write_case(name, kind, description, params, inputs, expected):
    """make_fixtures.write_case with this script named as the generator."""
    assert name.startswith(PREFIX), name
    parts = [
        "{",
        f'  "format": {mf.FORMAT_VERSION},',
        f'  "case": {json.dumps(name)},',
        f'  "kind": {json.dumps(kind)},',
        f'  "description": {json.dumps(description)},',
        f'  "generator": {json.dumps(GENERATOR)},',
        f'  "params": {json.dumps(params, sort_keys=True)},',
    ]
    for section, tensors in (("inputs", inputs), ("expected", expected)):
        items = [f'    {json.dumps(key)}: ' + mf.emit_tensor(t, 4) for key, t in tensors.items()]
        body = ",\n".join(items)
        parts.append(f'  "{section}": {{' + ("\n" + body + "\n  }" if items else "}") +
                     ("," if section == "inputs" else ""))
    parts.append("}")
    text = "\n".join(parts) + "\n"
    back = json.loads(text)  # must be valid JSON, and the params must survive
    assert back["params"] == params, name
    path = os.path.join(OUT_DIR, name + ".json")
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    return path, len(text)


CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def image(seed, C, H, W):
    """Pixel values in [0, 1] (float32-representable), [C, H, W] float64."""
    return mf.uniform(seed, (C, H, W), 0.0, 1.0)


# ---------------------------------------------------------------------------------------------------
# Spatial transformer


def theta_no_shear(sx, sy, tx, ty):
    return [[sx, 0.0, tx], [0.0, sy, ty]]


def theta_translation_scale(s, tx, ty):
    return [[s, 0.0, tx], [0.0, s, ty]]


def theta_similarity(s, r, tx, ty, W, H):
    # A rotation by r in pixels: normalised x spans W / 2 pixels per unit, y spans H / 2, so the off-diagonal
    # terms carry the aspect ratio (stn.h: "theta is corrected for the image's aspect ratio").
    c, sn = math.cos(r), math.sin(r)
    return [[s * c, -s * sn * H / W, tx], [s * sn * W / H, s * c, ty]]


def grid_manual(theta, Wo, Ho):
    """stn.h: output pixel (i, j) at x = (2j + 1) / Wo - 1, y = (2i + 1) / Ho - 1; source = theta (x, y, 1)."""
    t = np.asarray(theta, dtype=np.float64)
    x = (2.0 * np.arange(Wo) + 1.0) / Wo - 1.0
    y = (2.0 * np.arange(Ho) + 1.0) / Ho - 1.0
    X, Y = np.meshgrid(x, y)  # [Ho, Wo]
    return np.stack([t[0, 0] * X + t[0, 1] * Y + t[0, 2], t[1, 0] * X + t[1, 1] * Y + t[1, 2]], axis=-1)


def sample_manual(img, grid, mode, padding):
    """stn.h's sampler in numpy: img [C, H, W], grid [Ho, Wo, 2] -> [C, Ho, Wo]."""
    C, H, W = img.shape
    ix = ((grid[..., 0] + 1.0) * W - 1.0) / 2.0
    iy = ((grid[..., 1] + 1.0) * H - 1.0) / 2.0
    if padding == "border":
        ix = np.clip(ix, 0.0, W - 1.0)
        iy = np.clip(iy, 0.0, H - 1.0)
    out = np.zeros((C,) + ix.shape)

    def tap(xi, yi, w):
        inside = (xi >= 0) & (xi < W) & (yi >= 0) & (yi < H)
        xc = np.clip(xi, 0, W - 1).astype(np.int64)
        yc = np.clip(yi, 0, H - 1).astype(np.int64)
        return img[:, yc, xc] * np.where(inside, w, 0.0)

    if mode == "nearest":
        out += tap(np.rint(ix), np.rint(iy), 1.0)  # np.rint rounds half to even, like torch's nearbyint
    else:
        x0, y0 = np.floor(ix), np.floor(iy)
        fx, fy = ix - x0, iy - y0
        out += tap(x0, y0, (1 - fx) * (1 - fy))
        out += tap(x0 + 1, y0, fx * (1 - fy))
        out += tap(x0, y0 + 1, (1 - fx) * fy)
        out += tap(x0 + 1, y0 + 1, fx * fy)
    return out


def check_nearest_coordinates(grid, W, H, exact_grid, name):
    """For nearest sampling: every pixel coordinate is an exact half (checked with fractions against the
    exact grid, so torch computed it exactly) or at least 1e-3 away from one. Returns the half count."""
    halves = 0
    for axis, size in ((0, W), (1, H)):
        coord = ((grid[..., axis] + 1.0) * size - 1.0) / 2.0
        for idx in np.ndindex(coord.shape):
            v = float(coord[idx])
            dist = abs(v - math.floor(v) - 0.5)
            if dist == 0.0:
                assert exact_grid is not None, f"{name}: accidental exact .5 at {idx}"
                exact = (exact_grid[idx][axis] + 1) * size / 2 - Fraction(1, 2)
                assert Fraction(v) == exact, f"{name}: torch's coordinate {v} is not the exact {exact}"
                halves += 1
            else:
                assert dist > 1e-3, f"{name}: coordinate {v} within {dist} of a .5: float32 could round otherwise"
    return halves


def exact_grid_fractions(theta, Wo, Ho):
    t = [[Fraction(v) for v in row] for row in theta]
    g = np.empty((Ho, Wo), dtype=object)
    for i in range(Ho):
        for j in range(Wo):
            x = Fraction(2 * j + 1, Wo) - 1
            y = Fraction(2 * i + 1, Ho) - 1
            g[i, j] = (t[0][0] * x + t[0][1] * y + t[0][2], t[1][0] * x + t[1][1] * y + t[1][2])
    return g


def stn_case(name, description, *, seed, C, H, W, Ho, Wo, family, fparams, mode="bilinear", padding="zeros",
             store_grid=False, exact_halves=False, img=None):
    img = image(seed, C, H, W) if img is None else img
    params = {"family": family, "sampling": mode, "padding": padding, "out_w": Wo, "out_h": Ho,
              "width": W, "height": H, "channels": C}
    inputs = {"image": img}
    expected = {}
    if family == "affine":
        theta_t = mf.as_f32(torch.tensor(fparams, dtype=F64))  # stored as float32: the exact values used
        inputs["theta"] = theta_t
    else:
        params.update(fparams)
        if family == "no_shear":
            theta = theta_no_shear(fparams["scale_x"], fparams["scale_y"], fparams["shift_x"], fparams["shift_y"])
        elif family == "translation_scale":
            theta = theta_translation_scale(fparams["scale"], fparams["shift_x"], fparams["shift_y"])
        elif family == "similarity":
            theta = theta_similarity(fparams["scale"], fparams["rotation"], fparams["shift_x"], fparams["shift_y"],
                                     W, H)
        else:
            raise ValueError(family)
        theta_t = torch.tensor(theta, dtype=F64)  # the engine builds theta in double from the params
        expected["theta"] = theta_t

    grid = F.affine_grid(theta_t.unsqueeze(0), [1, C, Ho, Wo], align_corners=False)  # [1, Ho, Wo, 2]
    mf.close(grid[0], torch.from_numpy(grid_manual(theta_t.numpy(), Wo, Ho)), 1e-14, f"{name}: affine_grid")
    out = F.grid_sample(img.unsqueeze(0), grid, mode=mode, padding_mode=padding, align_corners=False)[0]
    manual = sample_manual(img.numpy(), grid[0].numpy(), mode, padding)
    mf.close(out, torch.from_numpy(manual), 1e-12, f"{name}: grid_sample vs the stn.h sampler")
    if mode == "nearest":
        exact = exact_grid_fractions(theta_t.tolist(), Wo, Ho) if exact_halves else None
        halves = check_nearest_coordinates(grid[0].numpy(), W, H, exact, name)
        assert (halves > 0) == exact_halves, f"{name}: {halves} exact halves"
        params["exact_halves"] = halves
    if store_grid:
        expected["grid"] = grid[0].reshape(Ho * Wo, 2)
    expected["output"] = out
    return write_case(name, "stn", description, params, inputs, expected)


def grid_sample_case(name, description, *, img, grid, Ho, Wo, mode, padding, exact_halves=False):
    C, H, W = img.shape
    grid = mf.as_f32(grid)
    out = F.grid_sample(img.unsqueeze(0), grid.reshape(1, Ho, Wo, 2), mode=mode, padding_mode=padding,
                        align_corners=False)[0]
    manual = sample_manual(img.numpy(), grid.reshape(Ho, Wo, 2).numpy(), mode, padding)
    mf.close(out, torch.from_numpy(manual), 1e-12, f"{name}: grid_sample vs the stn.h sampler")
    params = {"sampling": mode, "padding": padding, "out_w": Wo, "out_h": Ho, "width": W, "height": H,
              "channels": C}
    if mode == "nearest":
        exact = None
        if exact_halves:
            g = grid.reshape(Ho, Wo, 2).numpy()
            exact = np.empty((Ho, Wo), dtype=object)
            for idx in np.ndindex(Ho, Wo):
                exact[idx] = (Fraction(float(g[idx][0])), Fraction(float(g[idx][1])))
        halves = check_nearest_coordinates(grid.reshape(Ho, Wo, 2).numpy(), W, H, exact, name)
        assert (halves > 0) == exact_halves
        params["exact_halves"] = halves
    return write_case(name, "grid_sample", description, params, {"image": img, "grid": grid}, {"output": out})


SHEAR = [[0.7, 0.25, 0.1], [-0.15, 0.6, -0.05]]
OUTSIDE = [[0.9, -0.3, 0.55], [0.2, 1.1, -0.4]]


@case
def glimpse_stn_affine_shear():
    return stn_case("glimpse_stn_affine_shear", "full affine theta with shear, 37x53 -> 17x23, bilinear, zeros; "
                    "the affine_grid is stored too", seed=1001, C=3, H=37, W=53, Ho=17, Wo=23, family="affine",
                    fparams=SHEAR, store_grid=True)


def outside_pair(padding):
    img = image(1011, 3, 41, 29)
    return stn_case(f"glimpse_stn_affine_outside_{padding}",
                    f"affine theta whose window leaves the image (right and top), 41x29 -> 31x45 (upsampling), "
                    f"bilinear, {padding} padding", seed=1011, C=3, H=41, W=29, Ho=31, Wo=45, family="affine",
                    fparams=OUTSIDE, padding=padding, img=img)


@case
def glimpse_stn_affine_outside_zeros():
    return outside_pair("zeros")


@case
def glimpse_stn_affine_outside_border():
    r = outside_pair("border")
    # The pair must actually differ, or it tests padding nowhere.
    z = json.load(open(os.path.join(OUT_DIR, "glimpse_stn_affine_outside_zeros.json")))["expected"]["output"]["data"]
    b = json.load(open(r[0]))["expected"]["output"]["data"]
    assert np.abs(np.array(z) - np.array(b)).max() > 0.1
    return r


@case
def glimpse_stn_no_shear_down():
    return stn_case("glimpse_stn_no_shear_down", "no-shear family (sx 0.8, sy 0.6, tx -0.1, ty 0.2), 37x53 -> 8x8 "
                    "(downsampling), bilinear, zeros", seed=1021, C=3, H=37, W=53, Ho=8, Wo=8, family="no_shear",
                    fparams={"scale_x": 0.8, "scale_y": 0.6, "shift_x": -0.1, "shift_y": 0.2})


@case
def glimpse_stn_no_shear_up_border():
    return stn_case("glimpse_stn_no_shear_up_border", "no-shear family, a small window past the right and top edges "
                    "(sx 0.3, sy 0.25, tx 0.85, ty -0.9), 41x29 -> 31x45 (upsampling), bilinear, border",
                    seed=1031, C=3, H=41, W=29, Ho=31, Wo=45, family="no_shear",
                    fparams={"scale_x": 0.3, "scale_y": 0.25, "shift_x": 0.85, "shift_y": -0.9}, padding="border")


@case
def glimpse_stn_similarity_rotated():
    return stn_case("glimpse_stn_similarity_rotated", "similarity family (scale 0.6, rotation 0.5 rad, shift 0.15, "
                    "-0.1), aspect-corrected theta, 37x53 -> 17x23, bilinear, zeros", seed=1041, C=3, H=37, W=53,
                    Ho=17, Wo=23, family="similarity",
                    fparams={"scale": 0.6, "rotation": 0.5, "shift_x": 0.15, "shift_y": -0.1})


@case
def glimpse_stn_similarity_outside_border():
    return stn_case("glimpse_stn_similarity_outside_border", "similarity family (scale 0.9, rotation -1.1 rad, "
                    "shift -0.4, 0.5) on a tall image, window partly outside, 41x29 -> 31x45, bilinear, border",
                    seed=1051, C=3, H=41, W=29, Ho=31, Wo=45, family="similarity",
                    fparams={"scale": 0.9, "rotation": -1.1, "shift_x": -0.4, "shift_y": 0.5}, padding="border")


@case
def glimpse_stn_translation_scale():
    return stn_case("glimpse_stn_translation_scale", "translation + scale family (scale 0.35, shift 0.3, -0.45), "
                    "37x53 -> 8x8, bilinear, zeros", seed=1061, C=3, H=37, W=53, Ho=8, Wo=8,
                    family="translation_scale", fparams={"scale": 0.35, "shift_x": 0.3, "shift_y": -0.45})


@case
def glimpse_stn_translation_scale_zoom_out():
    return stn_case("glimpse_stn_translation_scale_zoom_out", "translation + scale family zoomed out (scale 1.4, "
                    "shift 0.2, 0.1): the window holds the whole image and a zero margin, 41x29 -> 17x23",
                    seed=1071, C=3, H=41, W=29, Ho=17, Wo=23, family="translation_scale",
                    fparams={"scale": 1.4, "shift_x": 0.2, "shift_y": 0.1})


@case
def glimpse_stn_nearest_affine():
    return stn_case("glimpse_stn_nearest_affine", "nearest sampling, sheared theta partly outside, 37x53 -> 17x23, "
                    "zeros (no coordinate within 1e-3 of a .5)", seed=1081, C=3, H=37, W=53, Ho=17, Wo=23,
                    family="affine", fparams=[[0.77, 0.31, 0.33], [-0.23, 0.87, -0.29]], mode="nearest")


# An even 16 x 24 image and a 4 x 4 output: torch's affine_grid is exact there (checked), and with this
# dyadic theta many coordinates are exact halves, so round-half-to-even decides the pixel.
HALF_THETA = [[1.0, 0.5, 0.125], [0.25, 1.0, 0.0625]]


@case
def glimpse_stn_nearest_half_even_zeros():
    return stn_case("glimpse_stn_nearest_half_even_zeros", "nearest sampling with exact .5 coordinates (round half "
                    "to even), 16x24 -> 4x4, zeros; some points past the edges", seed=1091, C=3, H=16, W=24, Ho=4,
                    Wo=4, family="affine", fparams=HALF_THETA, mode="nearest", exact_halves=True)


@case
def glimpse_stn_nearest_half_even_border():
    return stn_case("glimpse_stn_nearest_half_even_border", "nearest sampling with exact .5 coordinates, 16x24 -> "
                    "4x4, border padding (clamped before rounding)", seed=1091, C=3, H=16, W=24, Ho=4, Wo=4,
                    family="affine", fparams=HALF_THETA, mode="nearest", padding="border", exact_halves=True)


@case
def glimpse_grid_nearest_half():
    # Grid points on multiples of 1/8 in [-1.25, 1.25]: on a 16 x 24 image every x of the form k/4 and
    # every y of the form k/8 is an exact .5 in pixels, including -1 (pixel -0.5) and 1 (W - 0.5).
    r = mf.rng(1101)
    Ho, Wo = 5, 7
    g = torch.from_numpy(r.integers(-10, 11, (Ho * Wo, 2)).astype(np.float64) / 8.0)
    g[0] = torch.tensor([-1.0, -1.0], dtype=F64)
    g[1] = torch.tensor([1.0, 1.0], dtype=F64)
    return grid_sample_case("glimpse_grid_nearest_half", "grid_sample on an explicit grid of multiples of 1/8 "
                            "(exact .5 pixel coordinates, edges -1 and 1), 16x24, nearest, zeros",
                            img=image(1102, 3, 16, 24), grid=g, Ho=Ho, Wo=Wo, mode="nearest", padding="zeros",
                            exact_halves=True)


@case
def glimpse_grid_bilinear_random():
    g = mf.uniform(1111, (6 * 9, 2), -1.2, 1.2)
    return grid_sample_case("glimpse_grid_bilinear_random", "grid_sample on an arbitrary grid (uniform in "
                            "[-1.2, 1.2], not affine), 37x53 -> 6x9, bilinear, border", img=image(1112, 3, 37, 53),
                            grid=g, Ho=6, Wo=9, mode="bilinear", padding="border")


# ---------------------------------------------------------------------------------------------------
# DRAW's Gaussian attention


def filterbank_pixel(u, d, s, n, size):
    """gaussian.h's pixel form: mu_i = u + i d (i = 0..n-1), pixel a = 0..size-1."""
    i = np.arange(n, dtype=np.float64)[:, None]
    a = np.arange(size, dtype=np.float64)[None, :]
    e = np.exp(-((a - (u + i * d)) ** 2) / (2.0 * s * s))
    return e / (e.sum(axis=1, keepdims=True) + EPS)


def filterbank_loop(centres, s, size, base):
    """The same with explicit loops and a given index base for pixels (1 for the paper's form)."""
    out = np.zeros((len(centres), size))
    for r, mu in enumerate(centres):
        row = [math.exp(-((a - mu) ** 2) / (2.0 * s * s)) for a in range(base, base + size)]
        z = sum(row)
        out[r] = [v / (z + EPS) for v in row]
    return out


def draw_paper_axis(g_tilde, log_sigma2, log_delta_tilde, n, size, W, H):
    """The paper (eq. 21-24) with its 1-based i = 1..N and pixels a = 1..size; returns the filterbank and the
    0-based (first, stride, sigma) of the engine's pixel form, plus the centres for the cross-check."""
    g = (size + 1) / 2.0 * (g_tilde + 1.0)
    sigma = math.sqrt(math.exp(log_sigma2))
    centres = []
    if n == 1:
        centres = [g]  # (i - N/2 - 0.5) = 0: the stride does not enter
        delta = None
    else:
        delta = (max(W, H) - 1) / (n - 1) * math.exp(log_delta_tilde)
        centres = [g + (i - n / 2.0 - 0.5) * delta for i in range(1, n + 1)]
    bank = filterbank_loop(centres, sigma, size, base=1)
    first0 = centres[0] - 1.0  # 1-based pixel p is the engine's pixel p - 1
    return bank, (first0, delta, sigma)


def read_ref(img, fx, fy, gamma):
    r = gamma * np.einsum("ia,cab,jb->cij", fy, img, fx)
    m = np.stack([gamma * fy @ img[c] @ fx.T for c in range(img.shape[0])])
    assert np.abs(r - m).max() <= 1e-12
    return r


def write_ref(patch, fx, fy, gamma):
    r = np.einsum("ia,cij,jb->cab", fy, patch, fx) / gamma
    m = np.stack([fy.T @ patch[c] @ fx / gamma for c in range(patch.shape[0])])
    assert np.abs(r - m).max() <= 1e-12
    return r


def draw_case(name, description, *, seed, C, H, W, form, p):
    img = image(seed, C, H, W)
    params = {"form": form, "width": W, "height": H, "channels": C, "nx": p["nx"], "ny": p["ny"]}
    nx, ny = p["nx"], p["ny"]
    expected = {}
    if form == "pixel":
        for k in ("ux", "dx", "sx", "uy", "dy", "sy", "gamma"):
            params[k] = p[k]
        gamma = p["gamma"]
        fx = filterbank_pixel(p["ux"], p["dx"], p["sx"], nx, W)
        fy = filterbank_pixel(p["uy"], p["dy"], p["sy"], ny, H)
        mf.close(torch.from_numpy(fx), torch.from_numpy(
            filterbank_loop([p["ux"] + i * p["dx"] for i in range(nx)], p["sx"], W, 0)), 1e-15, f"{name}: Fx")
        mf.close(torch.from_numpy(fy), torch.from_numpy(
            filterbank_loop([p["uy"] + i * p["dy"] for i in range(ny)], p["sy"], H, 0)), 1e-15, f"{name}: Fy")
    else:
        for k in ("gx_tilde", "gy_tilde", "log_sigma2", "log_delta_tilde", "log_gamma"):
            params[k] = p[k]
        gamma = math.exp(p["log_gamma"])
        fx, ax = draw_paper_axis(p["gx_tilde"], p["log_sigma2"], p["log_delta_tilde"], nx, W, W, H)
        fy, ay = draw_paper_axis(p["gy_tilde"], p["log_sigma2"], p["log_delta_tilde"], ny, H, W, H)
        # Cross-check: the 0-based pixel form with first = mu_1 - 1 gives the same filters.
        mf.close(torch.from_numpy(fx), torch.from_numpy(filterbank_pixel(ax[0], ax[1] or 0.0, ax[2], nx, W)),
                 1e-12, f"{name}: paper Fx vs pixel form")
        mf.close(torch.from_numpy(fy), torch.from_numpy(filterbank_pixel(ay[0], ay[1] or 0.0, ay[2], ny, H)),
                 1e-12, f"{name}: paper Fy vs pixel form")
        # from_draw's pixel glimpse: [x.first, x.stride, x.sigma, y.first, y.stride, y.sigma, gamma]; a stride
        # is undefined for a one-filter axis (stored as 0, not compared: params nx / ny say which).
        expected["glimpse"] = torch.tensor([[ax[0], ax[1] or 0.0, ax[2], ay[0], ay[1] or 0.0, ay[2], gamma]],
                                           dtype=F64)
    patch = mf.normal(seed + 1, (C, ny, nx), 0.5, 0.5)
    npimg = img.numpy()
    expected["Fx"] = torch.from_numpy(fx)
    expected["Fy"] = torch.from_numpy(fy)
    expected["read"] = torch.from_numpy(read_ref(npimg, fx, fy, gamma))
    expected["write"] = torch.from_numpy(write_ref(patch.numpy(), fx, fy, gamma))
    # Torch as a third opinion on the products (float64 matmul).
    mf.close(expected["read"], gamma * torch.from_numpy(fy) @ img @ torch.from_numpy(fx).T, 1e-12, f"{name}: read")
    return write_case(name, "draw", description, params, {"image": img, "patch": patch}, expected)


@case
def glimpse_draw_pixel_basic():
    return draw_case("glimpse_draw_pixel_basic", "pixel form, Nx 5 != Ny 4, stride > sigma, 23x31",
                     seed=2001, C=3, H=23, W=31, form="pixel",
                     p=dict(ux=4.5, dx=5.5, sx=2.0, uy=3.0, dy=4.75, sy=1.5, nx=5, ny=4, gamma=1.0))


@case
def glimpse_draw_pixel_overlap():
    return draw_case("glimpse_draw_pixel_overlap", "pixel form, stride < sigma (filters overlap), Nx 6, Ny 7, "
                     "gamma 2.5, 19x40", seed=2011, C=3, H=19, W=40, form="pixel",
                     p=dict(ux=10.0, dx=1.5, sx=3.0, uy=5.0, dy=1.25, sy=2.5, nx=6, ny=7, gamma=2.5))


@case
def glimpse_draw_pixel_tiny_sigma():
    return draw_case("glimpse_draw_pixel_tiny_sigma", "pixel form, sigma 0.1 (near-delta filters; y centres halfway "
                     "between pixels), 23x31", seed=2021, C=3, H=23, W=31, form="pixel",
                     p=dict(ux=2.3, dx=3.7, sx=0.1, uy=1.5, dy=4.0, sy=0.1, nx=7, ny=5, gamma=0.7))


@case
def glimpse_draw_pixel_large_sigma():
    return draw_case("glimpse_draw_pixel_large_sigma", "pixel form, sigma 25 (x) and 40 (y), wider than the image: "
                     "nearly flat filters, 23x31", seed=2031, C=3, H=23, W=31, form="pixel",
                     p=dict(ux=5.0, dx=10.0, sx=25.0, uy=2.0, dy=6.0, sy=40.0, nx=3, ny=4, gamma=1.3))


@case
def glimpse_draw_pixel_partly_outside():
    return draw_case("glimpse_draw_pixel_partly_outside", "pixel form, window past the left and bottom edges "
                     "(x centres -8..13, y centres 15..27.5 on 23 rows), 23x31", seed=2041, C=3, H=23, W=31,
                     form="pixel", p=dict(ux=-8.0, dx=3.0, sx=1.5, uy=15.0, dy=2.5, sy=1.5, nx=8, ny=6, gamma=1.0))


@case
def glimpse_draw_pixel_outside_faint():
    # x centres 36..42 on 31 columns with sigma 1: the edge pixel's weight is about 1e-8, the size of the
    # normalisation's epsilon, so the filters read the edge columns at a fraction of full strength.
    return draw_case("glimpse_draw_pixel_outside_faint", "pixel form, x window entirely right of the image, edge "
                     "weights near epsilon (Z ~ 1e-8), 23x31", seed=2051, C=3, H=23, W=31, form="pixel",
                     p=dict(ux=36.0, dx=2.0, sx=1.0, uy=4.0, dy=3.0, sy=2.0, nx=4, ny=5, gamma=1.0))


@case
def glimpse_draw_pixel_outside_normalised():
    # x centres 40..46 with sigma 3: the edge weights (~1e-3) dwarf epsilon, so normalisation brings each
    # filter back to the edge columns at full strength.
    return draw_case("glimpse_draw_pixel_outside_normalised", "pixel form, x window entirely right of the image "
                     "with sigma 3: normalisation reads the edge columns; y entirely above with sigma 0.5: "
                     "filters vanish (Z underflows)", seed=2061, C=3, H=23, W=31, form="pixel",
                     p=dict(ux=40.0, dx=2.0, sx=3.0, uy=-30.0, dy=1.0, sy=0.5, nx=4, ny=3, gamma=1.0))


@case
def glimpse_draw_pixel_n1():
    return draw_case("glimpse_draw_pixel_n1", "pixel form, a single filter per axis (N = 1), 23x31", seed=2071, C=3,
                     H=23, W=31, form="pixel",
                     p=dict(ux=12.3, dx=1.0, sx=3.0, uy=8.8, dy=1.0, sy=2.0, nx=1, ny=1, gamma=1.0))


@case
def glimpse_draw_paper_basic():
    return draw_case("glimpse_draw_paper_basic", "paper form (eq. 21-24), Nx 6 != Ny 4, 23x31, 1-based reference",
                     seed=2101, C=3, H=23, W=31, form="paper",
                     p=dict(gx_tilde=0.1, gy_tilde=-0.2, log_sigma2=0.4, log_delta_tilde=-0.5, log_gamma=0.3,
                            nx=6, ny=4))


@case
def glimpse_draw_paper_wide():
    return draw_case("glimpse_draw_paper_wide", "paper form, Nx = Ny = 5 on a wide 19x40 image (stride per axis "
                     "from max(W, H)), sigma^2 = e^1.5, gamma = e^-0.4", seed=2111, C=3, H=19, W=40, form="paper",
                     p=dict(gx_tilde=-0.6, gy_tilde=0.3, log_sigma2=1.5, log_delta_tilde=-1.2, log_gamma=-0.4,
                            nx=5, ny=5))


@case
def glimpse_draw_paper_tiny_sigma():
    return draw_case("glimpse_draw_paper_tiny_sigma", "paper form, sigma 0.1 (log sigma^2 = 2 ln 0.1), Nx 8, Ny 3, "
                     "23x31", seed=2121, C=3, H=23, W=31, form="paper",
                     p=dict(gx_tilde=0.05, gy_tilde=0.4, log_sigma2=2.0 * math.log(0.1), log_delta_tilde=-0.9,
                            log_gamma=0.0, nx=8, ny=3))


@case
def glimpse_draw_paper_outside():
    return draw_case("glimpse_draw_paper_outside", "paper form, centre beyond the right and top edges "
                     "(g~x 1.4, g~y -1.3), 23x31", seed=2131, C=3, H=23, W=31, form="paper",
                     p=dict(gx_tilde=1.4, gy_tilde=-1.3, log_sigma2=0.0, log_delta_tilde=-2.0, log_gamma=0.1,
                            nx=4, ny=3))


@case
def glimpse_draw_paper_n1():
    return draw_case("glimpse_draw_paper_n1", "paper form with Nx = 1 (the centre is g_x, whatever delta) and "
                     "Ny = 5, 23x31", seed=2141, C=3, H=23, W=31, form="paper",
                     p=dict(gx_tilde=-0.3, gy_tilde=0.2, log_sigma2=1.0, log_delta_tilde=-1.0, log_gamma=0.0,
                            nx=1, ny=5))


# ---------------------------------------------------------------------------------------------------


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    written = []
    total = 0
    for fn in CASES:
        path, size = fn()
        assert os.path.basename(path) == fn.__name__ + ".json", (path, fn.__name__)
        written.append(os.path.basename(path))
        total += size
    stale = sorted(f for f in os.listdir(OUT_DIR) if f.startswith(PREFIX) and f.endswith(".json")
                   and f not in written)
    for f in stale:
        print(f"warning: {f} is not written by this script (remove it if the case was dropped)", file=sys.stderr)
    print(f"wrote {len(written)} fixtures, {total} bytes, to {os.path.relpath(OUT_DIR, mf.ROOT)}")
    assert total < BUDGET, f"glimpse fixtures exceed the {BUDGET} byte budget"


if __name__ == "__main__":
    main()
