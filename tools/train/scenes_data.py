#!/usr/bin/python3
"""Synthetic scenes for the Show, Attend and Tell captioners (tools/train/MODELS.md section 4).

    /usr/bin/python3 tools/train/scenes_data.py [--show N] [--seed S] [--out DIR]   N scenes as PNG + captions
    /usr/bin/python3 tools/train/scenes_data.py --check [N]                         self-test

generate_scene(seed) -> Scene; everything is integer arithmetic, so a port (engine/src/vision/scenes.cpp)
reproduces every pixel exactly. This docstring is the port's specification; keep both in step.

Split: training seeds 0 .. 9_999_999 (TRAIN_SEEDS), held-out seeds 10_000_000 and up (HELDOUT_START;
the report uses 10_000_000 .. 10_000_999, training-time validation 10_500_000 .. ).

== PRNG: splitmix64 =========================================================================
All arithmetic on unsigned 64-bit integers, modulo 2^64.

    state = seed                                  (0 <= seed < 2^64)
    next():  state = state + 0x9E3779B97F4A7C15
             z = state
             z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
             z = (z ^ (z >> 27)) * 0x94D049BB133111EB
             return z ^ (z >> 31)
    randint(n) = next() % n                       (0 <= value < n; n > 0; plain modulo, bias accepted)

Every random choice below is one randint call, made in exactly the order written (nothing else draws).

== Image ====================================================================================
S = 128. pixels[y][x][c] is a uint8 (y = row from the top, x = column, c = R, G, B); the float image is
pixels / 255 (float32). Pixel (x, y) has its centre at (x + 0.5, y + 0.5); formulas use DOUBLED
coordinates so everything stays integer:  px = 2x + 1,  py = 2y + 1.
"//" is floor division and "mod" the non-negative remainder (in C++: ((a % m) + m) % m); all the
divisions below have non-negative operands.

== 1. Background (a sum of n gratings blending two greys, plus a fixed colour ramp) ===============
Draws, in order:
    n      = 2 + randint(2)                              number of gratings (2 or 3)
    g0     = 90 + randint(76)                            grey level 0 (90..165)
    d      = 20 + randint(26)                            contrast (20..45)
    g1     = g0 + d if g0 < 128 else g0 - d              grey level 1 (83..172)
then for each grating k = 0 .. n-1, in order:
    kind   = randint(3)                                  0 wave, 1 stripes, 2 checks
    (dx, dy) = DIRS[randint(8)],  DIRS = [(1,0), (0,1), (1,1), (1,-1), (2,1), (1,2), (2,-1), (1,-2)]
    P      = (8 + randint(25)) * (|dx| + |dy|)           period in doubled-projection units
    phase  = randint(P)
    phase2 = randint(P)                                  ONLY when kind == 2 (checks)
Grating value v_k(x, y) in {0 .. 256}:
    u  = dx * px + dy * py;         t  = (u + phase) mod P
    u2 = -dy * px + dx * py;        t2 = (u2 + phase2) mod P           (checks only: the perpendicular)
    wave:    v = (|2t - P| * 256) // P
    stripes: v = 256 if 2t >= P else 0
    checks:  v = 256 if (2t >= P) != (2t2 >= P) else 0
    W = v_0 + ... + v_{n-1}                                            (0 .. 256 n)
    grey = (g0 * (256n - W) + g1 * W + 128n) // (256n)
    ramp_x = (px * 5) // 16 - 40,   ramp_y = (py * 5) // 16 - 40       (-40 .. 39)
    background = (grey + ramp_x, grey, grey + ramp_y)                  (R, G, B; always within 43 .. 211)
The ramp (red grows to the right, blue downwards, the same in every scene) is the scenes' only absolute
position cue: the captioner's encoder (MODELS.md section 4) has no position term, and its cells' receptive
fields (46 px) are too small for zero padding to tell the middle of the image apart, so without the ramp
"left of", "above" and the left-to-right order could not be learned.

== 2. Objects: attributes ===================================================================
    count = 1 + randint(4)                                (1..4 objects)
for each object k = 0 .. count-1, in order:
    shape  = randint(4)     SHAPES  = ["circle", "square", "triangle", "cross"]
    colour = randint(5)     COLOURS = ["red", "green", "blue", "yellow", "purple"]
    size   = randint(2)     SIZES   = ["small", "large"]
    r      = 6 + randint(4)  if small  (6..9)
             12 + randint(5) if large  (12..16)
    jitter: rgb[c] = clamp(BASE[colour][c] + randint(31) - 15, 0, 255), c = R, G, B (three calls)
            BASE = red (210, 45, 40), green (50, 170, 60), blue (45, 85, 215), yellow (230, 205, 45),
                   purple (145, 60, 190)
    E (half extent) = r + r // 4 for a triangle, r otherwise
(all objects' attributes are drawn before any placement)

== 3. Objects: placement (rejection sampling) ===================================================
    restart:
    for each object k = 0 .. count-1, in order:
        up to 200 attempts:
            cx = E_k + 2 + randint(125 - 2 E_k)           (then)
            cy = E_k + 2 + randint(125 - 2 E_k)           -> cx, cy in [E_k + 2, 126 - E_k]
            accept iff for EVERY already placed object j < k:
                (a) |cx - cx_j| >= E_k + E_j + 3  or  |cy - cy_j| >= E_k + E_j + 3     (boxes 3 px apart)
                (b) if count >= 3:  |cx - cx_j| >= 6                                   (clear left-to-right order)
                (c) if count == 2 (so j = 0):  | |cx - cx_j| - |cy - cy_j| | >= 16      (clear dominant axis)
        if none of the 200 attempts is accepted: forget ALL placements and go to restart (the attributes
        are kept; the PRNG simply continues). (Never needed more than a few restarts; see --check.)
The object's pixel box is x in [cx - E, cx + E - 1], y in [cy - E, cy + E - 1] (inside [2, 125]).

== 4. Rasterisation =========================================================================
With  ax = px - 2cx,  ay = py - 2cy  (both odd, so no test below can be an equality), pixel (x, y) is
inside the object iff
    circle:   ax^2 + ay^2 < 4 r^2
    square:   |ax| < 2r  and  |ay| < 2r                                     (side 2r)
    triangle: R = r + r // 4:  |ay| < 2R  and  2|ax| < ay + 2R              (upright isosceles: apex at the
                                                                             top, base 2R wide at the bottom,
                                                                             height 2R)
    cross:    w = (r + 2) // 3:  (|ax| < 2r and |ay| < 2w)  or  (|ax| < 2w and |ay| < 2r)   (a plus sign)
Objects are painted in order k = 0 .. count-1 over the background, each pixel inside object k set to
its rgb (flat colour). The object's mask = its inside pixels not inside any LATER object (occlusion;
placement rule (a) makes objects disjoint, so the mask is the full shape). bbox = the mask's
[x0, y0, x1, y1) (exclusive ends).

== 5. Caption ===============================================================================
Words are lower-case, joined by single spaces. Phrase(k) = "a <size> <colour> <shape>".
    count 1:   Phrase(0)
    count 2:   order (f, s): f = the object with the smaller key (size index, colour index, shape index)
               in the lists SIZES, COLOURS, SHAPES (so a small object comes first, then red before green
               before blue ...); if the keys are equal, with dx = cx_1 - cx_0, dy = cy_1 - cy_0: if
               |dx| > |dy|, f = the object with the smaller cx, else f = the object with the smaller cy;
               s = the other one.
               Then with dx = cx_s - cx_f, dy = cy_s - cy_f:
               rel = ("left of" if dx > 0 else "right of")  if |dx| > |dy|
                     ("above"   if dy > 0 else "below")     otherwise          (y grows downwards)
               caption = Phrase(f) + " " + rel + " " + Phrase(s)
               e.g. "a small red circle above a large blue square"
    count 3-4: the objects sorted by cx (ascending; distinct by rule (b)), phrases joined by " and "
               e.g. "a large green cross and a small red circle and a small yellow triangle"
Vocabulary (VOCAB, the models' ids): <pad> <start> <end> <unk> a small large red green blue yellow purple
circle square triangle cross above below left right of and. Longest caption: 19 words.
Scene.word_objects gives, per caption word, the object it describes (-1 for "above", "of", "and", ...).
"""

import argparse
import os
import struct
import sys
import zlib

import numpy as np

S = 128
MASK64 = (1 << 64) - 1
TRAIN_SEEDS = 10_000_000
HELDOUT_START = 10_000_000
REPORT_SEEDS = range(10_000_000, 10_001_000)
VALIDATION_START = 10_500_000

SHAPES = ["circle", "square", "triangle", "cross"]
COLOURS = ["red", "green", "blue", "yellow", "purple"]
SIZES = ["small", "large"]
BASE = {"red": (210, 45, 40), "green": (50, 170, 60), "blue": (45, 85, 215), "yellow": (230, 205, 45),
        "purple": (145, 60, 190)}
DIRS = [(1, 0), (0, 1), (1, 1), (1, -1), (2, 1), (1, 2), (2, -1), (1, -2)]
SPECIAL = ["<pad>", "<start>", "<end>", "<unk>"]
WORDS = ["a"] + SIZES + COLOURS + SHAPES + ["above", "below", "left", "right", "of", "and"]
VOCAB = SPECIAL + WORDS
MAX_WORDS = 19
ATTEMPTS = 200


class SplitMix64:
    def __init__(self, seed):
        self.state = int(seed) & MASK64
        self.calls = 0

    def next(self):
        self.calls += 1
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def randint(self, n):
        return self.next() % n


class SceneObject:
    __slots__ = ("shape", "colour", "size", "r", "E", "rgb", "cx", "cy", "mask", "bbox")

    def phrase(self):
        return f"a {self.size} {self.colour} {self.shape}"

    def __repr__(self):
        return f"<{self.phrase()} r={self.r} at ({self.cx},{self.cy}) rgb={self.rgb}>"


class Scene:
    """pixels uint8 [S, S, 3]; image float32 [S, S, 3] in [0, 1]; objects (generation order); caption;
    words; word_objects (per word the object index it describes, or -1); restarts (placement restarts)."""
    __slots__ = ("seed", "pixels", "objects", "caption", "words", "word_objects", "restarts")

    @property
    def image(self):
        return self.pixels.astype(np.float32) / np.float32(255.0)


def _background(rng, px, py):
    n = 2 + rng.randint(2)
    g0 = 90 + rng.randint(76)
    d = 20 + rng.randint(26)
    g1 = g0 + d if g0 < 128 else g0 - d
    W = np.zeros((S, S), dtype=np.int32)
    for _ in range(n):
        kind = rng.randint(3)
        dx, dy = DIRS[rng.randint(8)]
        P = (8 + rng.randint(25)) * (abs(dx) + abs(dy))
        phase = rng.randint(P)
        t = np.mod(dx * px + dy * py + phase, P)          # numpy mod: non-negative for P > 0
        if kind == 0:
            v = (np.abs(2 * t - P) * 256) // P
        elif kind == 1:
            v = np.where(2 * t >= P, 256, 0)
        else:
            phase2 = rng.randint(P)
            t2 = np.mod(-dy * px + dx * py + phase2, P)
            v = np.where((2 * t >= P) != (2 * t2 >= P), 256, 0)
        W += v
    grey = (g0 * (256 * n - W) + g1 * W + 128 * n) // (256 * n)
    img = np.empty((S, S, 3), dtype=np.int32)
    img[:, :, 0] = grey + (px * 5) // 16 - 40
    img[:, :, 1] = grey
    img[:, :, 2] = grey + (py * 5) // 16 - 40
    return img


def _inside(o, px, py):
    ax = px - 2 * o.cx
    ay = py - 2 * o.cy
    r = o.r
    if o.shape == "circle":
        return ax * ax + ay * ay < 4 * r * r
    if o.shape == "square":
        return (np.abs(ax) < 2 * r) & (np.abs(ay) < 2 * r)
    if o.shape == "triangle":
        R = r + r // 4
        return (np.abs(ay) < 2 * R) & (2 * np.abs(ax) < ay + 2 * R)
    w = (r + 2) // 3
    return ((np.abs(ax) < 2 * r) & (np.abs(ay) < 2 * w)) | ((np.abs(ax) < 2 * w) & (np.abs(ay) < 2 * r))


def _acceptable(k, cx, cy, objs, count):
    E = objs[k].E
    for j in range(k):
        o = objs[j]
        adx, ady = abs(cx - o.cx), abs(cy - o.cy)
        if not (adx >= E + o.E + 3 or ady >= E + o.E + 3):
            return False
        if count >= 3 and adx < 6:
            return False
        if count == 2 and abs(adx - ady) < 16:
            return False
    return True


def _key(o):
    return (SIZES.index(o.size), COLOURS.index(o.colour), SHAPES.index(o.shape))


def _caption(objs):
    n = len(objs)
    if n == 1:
        order, rel = [0], None
    elif n == 2:
        a, b = objs
        ka, kb = _key(a), _key(b)
        if ka != kb:
            f = 0 if ka < kb else 1
        else:
            dx, dy = b.cx - a.cx, b.cy - a.cy
            if abs(dx) > abs(dy):
                f = 0 if a.cx < b.cx else 1
            else:
                f = 0 if a.cy < b.cy else 1
        s = 1 - f
        dx, dy = objs[s].cx - objs[f].cx, objs[s].cy - objs[f].cy
        if abs(dx) > abs(dy):
            rel = "left of" if dx > 0 else "right of"
        else:
            rel = "above" if dy > 0 else "below"
        order = [f, s]
    else:
        order, rel = sorted(range(n), key=lambda k: objs[k].cx), None
    words, owners = [], []
    for m, k in enumerate(order):
        if m > 0:
            joint = rel if n == 2 else "and"
            for w in joint.split(" "):
                words.append(w)
                owners.append(-1)
        for w in objs[k].phrase().split(" "):
            words.append(w)
            owners.append(k if w != "a" else -1)
    return words, owners


_PX = (2 * np.arange(S, dtype=np.int32) + 1)[None, :].repeat(S, 0)   # px for [y, x]
_PY = _PX.T.copy()


def generate_scene(seed):
    rng = SplitMix64(seed)
    img = _background(rng, _PX, _PY)
    count = 1 + rng.randint(4)
    objs = []
    for _ in range(count):
        o = SceneObject()
        o.shape = SHAPES[rng.randint(4)]
        o.colour = COLOURS[rng.randint(5)]
        o.size = SIZES[rng.randint(2)]
        o.r = 6 + rng.randint(4) if o.size == "small" else 12 + rng.randint(5)
        o.rgb = tuple(min(255, max(0, BASE[o.colour][c] + rng.randint(31) - 15)) for c in range(3))
        o.E = o.r + o.r // 4 if o.shape == "triangle" else o.r
        objs.append(o)
    restarts = 0
    while True:
        ok = True
        for k, o in enumerate(objs):
            for _ in range(ATTEMPTS):
                cx = o.E + 2 + rng.randint(125 - 2 * o.E)
                cy = o.E + 2 + rng.randint(125 - 2 * o.E)
                if _acceptable(k, cx, cy, objs, count):
                    o.cx, o.cy = cx, cy
                    break
            else:
                ok = False
                break
        if ok:
            break
        restarts += 1
    insides = [_inside(o, _PX, _PY) for o in objs]
    covered = np.zeros((S, S), dtype=bool)
    for k in range(count - 1, -1, -1):
        o = objs[k]
        o.mask = insides[k] & ~covered
        covered |= insides[k]
        ys, xs = np.nonzero(o.mask)
        o.bbox = (int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1)
    for k, o in enumerate(objs):
        img[insides[k]] = o.rgb
    sc = Scene()
    sc.seed = seed
    sc.pixels = img.astype(np.uint8)
    sc.objects = objs
    sc.words, sc.word_objects = _caption(objs)
    sc.caption = " ".join(sc.words)
    sc.restarts = restarts
    return sc


def reference_pixels(seed):
    """The docstring's specification, pixel by pixel in plain Python integers (slow; --check compares it with
    generate_scene). Returns (pixels as nested lists [y][x][c], caption)."""
    rng = SplitMix64(seed)
    n = 2 + rng.randint(2)
    g0 = 90 + rng.randint(76)
    d = 20 + rng.randint(26)
    g1 = g0 + d if g0 < 128 else g0 - d
    gratings = []
    for _ in range(n):
        kind = rng.randint(3)
        dx, dy = DIRS[rng.randint(8)]
        P = (8 + rng.randint(25)) * (abs(dx) + abs(dy))
        phase = rng.randint(P)
        phase2 = rng.randint(P) if kind == 2 else 0
        gratings.append((kind, dx, dy, P, phase, phase2))
    count = 1 + rng.randint(4)
    objs = []
    for _ in range(count):
        shape = rng.randint(4)
        colour = rng.randint(5)
        size = rng.randint(2)
        r = 6 + rng.randint(4) if size == 0 else 12 + rng.randint(5)
        rgb = [min(255, max(0, BASE[COLOURS[colour]][c] + rng.randint(31) - 15)) for c in range(3)]
        E = r + r // 4 if shape == 2 else r
        objs.append({"shape": shape, "colour": colour, "size": size, "r": r, "rgb": rgb, "E": E})
    while True:
        placed = []
        for o in objs:
            for _ in range(ATTEMPTS):
                cx = o["E"] + 2 + rng.randint(125 - 2 * o["E"])
                cy = o["E"] + 2 + rng.randint(125 - 2 * o["E"])
                good = True
                for p in placed:
                    adx, ady = abs(cx - p["cx"]), abs(cy - p["cy"])
                    if not (adx >= o["E"] + p["E"] + 3 or ady >= o["E"] + p["E"] + 3):
                        good = False
                    if count >= 3 and adx < 6:
                        good = False
                    if count == 2 and abs(adx - ady) < 16:
                        good = False
                if good:
                    o["cx"], o["cy"] = cx, cy
                    placed.append(o)
                    break
            else:
                break
        if len(placed) == count:
            break

    def inside(o, px, py):
        ax, ay, r = px - 2 * o["cx"], py - 2 * o["cy"], o["r"]
        if o["shape"] == 0:
            return ax * ax + ay * ay < 4 * r * r
        if o["shape"] == 1:
            return abs(ax) < 2 * r and abs(ay) < 2 * r
        if o["shape"] == 2:
            R = r + r // 4
            return abs(ay) < 2 * R and 2 * abs(ax) < ay + 2 * R
        w = (r + 2) // 3
        return (abs(ax) < 2 * r and abs(ay) < 2 * w) or (abs(ax) < 2 * w and abs(ay) < 2 * r)

    out = []
    for y in range(S):
        row = []
        for x in range(S):
            px, py = 2 * x + 1, 2 * y + 1
            W = 0
            for kind, dx, dy, P, phase, phase2 in gratings:
                t = (dx * px + dy * py + phase) % P
                if kind == 0:
                    W += abs(2 * t - P) * 256 // P
                elif kind == 1:
                    W += 256 if 2 * t >= P else 0
                else:
                    t2 = (-dy * px + dx * py + phase2) % P
                    W += 256 if (2 * t >= P) != (2 * t2 >= P) else 0
            grey = (g0 * (256 * n - W) + g1 * W + 128 * n) // (256 * n)
            pix = [grey + (px * 5) // 16 - 40, grey, grey + (py * 5) // 16 - 40]
            assert all(43 <= v <= 211 for v in pix)
            for o in objs:
                if inside(o, px, py):
                    pix = list(o["rgb"])
            row.append(pix)
        out.append(row)
    return out


def object_count(seed):
    """The scene's object count without drawing it: the PRNG calls of section 1, then section 2's first."""
    rng = SplitMix64(seed)
    n = 2 + rng.randint(2)
    rng.randint(76)
    rng.randint(26)
    for _ in range(n):
        kind = rng.randint(3)
        dx, dy = DIRS[rng.randint(8)]
        P = (8 + rng.randint(25)) * (abs(dx) + abs(dy))
        rng.randint(P)
        if kind == 2:
            rng.randint(P)
    return 1 + rng.randint(4)


def caption_ids(words):
    index = {w: i for i, w in enumerate(VOCAB)}
    return [index.get(w, 3) for w in words] + [2]


# ------------------------------------------------------------------ PNG without PIL

def write_png(path, pixels):
    """pixels uint8 [h, w, 3] -> an 8-bit RGB PNG (filter 0 on every row)."""
    h, w, _ = pixels.shape
    raw = b"".join(b"\x00" + pixels[y].tobytes() for y in range(h))

    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(png)


def contact_sheet(scenes, cols=4, scale=2, gap=4):
    rows = (len(scenes) + cols - 1) // cols
    side = S * scale
    sheet = np.full((rows * (side + gap) + gap, cols * (side + gap) + gap, 3), 255, dtype=np.uint8)
    for i, sc in enumerate(scenes):
        r, c = divmod(i, cols)
        big = sc.pixels.repeat(scale, 0).repeat(scale, 1)
        y0, x0 = gap + r * (side + gap), gap + c * (side + gap)
        sheet[y0:y0 + side, x0:x0 + side] = big
    return sheet


def check(n):
    from collections import Counter
    for seed in [0, 1, 2, 3, 7, 9, 10, HELDOUT_START, HELDOUT_START + 1, 2 ** 64 - 1]:
        want = np.array(reference_pixels(seed), dtype=np.uint8)
        assert (generate_scene(seed).pixels == want).all(), f"seed {seed}: generate_scene != reference_pixels"
    print("generate_scene == reference_pixels (the docstring, pixel by pixel) on 10 seeds")
    counts, rel, lengths, restarts = Counter(), Counter(), Counter(), Counter()
    for seed in list(range(n)) + list(range(HELDOUT_START, HELDOUT_START + n // 4)):
        sc = generate_scene(seed)
        assert len(sc.words) <= MAX_WORDS and all(w in VOCAB for w in sc.words), sc.caption
        assert len(sc.word_objects) == len(sc.words)
        total = np.zeros((S, S), dtype=int)
        for o in sc.objects:
            assert o.mask.any() and 2 <= o.bbox[0] and o.bbox[2] <= 126 and 2 <= o.bbox[1] and o.bbox[3] <= 126
            assert (sc.pixels[o.mask] == np.array(o.rgb, dtype=np.uint8)).all()
            total += o.mask
        assert total.max() <= 1
        counts[len(sc.objects)] += 1
        assert object_count(seed) == len(sc.objects)
        lengths[len(sc.words)] += 1
        restarts[sc.restarts] += 1
        if len(sc.objects) == 2:
            rel[[w for w in sc.words if w in ("above", "below", "left", "right")][0]] += 1
    print("objects per scene", dict(sorted(counts.items())))
    print("2-object relations", dict(rel))
    print("caption lengths", dict(sorted(lengths.items())))
    print("placement restarts", dict(sorted(restarts.items())))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--show", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="/tmp/scenes")
    ap.add_argument("--check", type=int, nargs="?", const=20000)
    args = ap.parse_args()
    if args.check:
        check(args.check)
        return
    os.makedirs(args.out, exist_ok=True)
    scenes = [generate_scene(args.seed + i) for i in range(args.show)]
    for sc in scenes:
        write_png(os.path.join(args.out, f"scene-{sc.seed}.png"), sc.pixels)
        print(f"{sc.seed}: {sc.caption}")
    write_png(os.path.join(args.out, "sheet.png"), contact_sheet(scenes))
    print(f"wrote {args.out}/scene-*.png and {args.out}/sheet.png")


if __name__ == "__main__":
    sys.exit(main())
