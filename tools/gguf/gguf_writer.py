#!/usr/bin/env python3
"""Write GGUF v3 files, with ggml's reference quantisers (tools only, never at run time).

The layout follows ggml/include/gguf.h of the llama.cpp that node-llama-cpp 3.22.1 ships: the magic "GGUF", the
version (3), the tensor count and the key/value count (uint64); each key/value as a string key, a uint32 value
type and the value (arrays as an element type, a uint64 count and the elements); each tensor as its name, its
number of dimensions, the dimensions innermost first (ne0 is the row length), its ggml type and the offset of its
data from the start of the data section; then padding to `general.alignment` (32 unless the file says otherwise)
and the data, each tensor starting on an aligned offset.

The quantisers are numpy translations of ggml/src/ggml-quants.c (quantize_row_q8_0_ref, quantize_row_q5_0_ref,
quantize_row_q4_K_ref with make_qkx2_quants) and ggml/src/ggml-impl.h (fp32 -> fp16 and -> bf16). They must give
ggml's bytes exactly, so every product and sum is done in float32 in the C code's order: a block's elements are
visited one after another (the loops run over the 32 or 256 positions of a block and are vectorised across
blocks only), because a pairwise numpy sum would round differently. check_quantizers.py compares them with
libggml-base.so itself.
"""
import struct

import numpy as np

GGML_TYPES = {"F32": 0, "F16": 1, "Q4_0": 2, "Q4_1": 3, "Q5_0": 6, "Q5_1": 7, "Q8_0": 8, "Q2_K": 10, "Q3_K": 11,
              "Q4_K": 12, "Q5_K": 13, "Q6_K": 14, "BF16": 30}
# (elements per block, bytes per block), from ggml.c's type_traits.
GGML_BLOCKS = {"F32": (1, 4), "F16": (1, 2), "BF16": (1, 2), "Q4_0": (32, 18), "Q4_1": (32, 20), "Q5_0": (32, 22),
               "Q5_1": (32, 24), "Q8_0": (32, 34), "Q2_K": (256, 84), "Q3_K": (256, 110), "Q4_K": (256, 144),
               "Q5_K": (256, 176), "Q6_K": (256, 210)}
# llama_ftype (include/llama.h) of a file whose 2-D weights are all of the given type: for the K-quants the
# small ("_S") mixture, whose default type llama-quantize --pure applies to every tensor.
LLAMA_FTYPES = {"F32": 0, "F16": 1, "Q4_0": 2, "Q4_1": 3, "Q8_0": 7, "Q5_0": 8, "Q5_1": 9, "Q2_K": 10,
                "Q3_K": 11, "Q4_K": 14, "Q5_K": 16, "Q6_K": 18, "BF16": 32}

GGUF_UINT8, GGUF_INT8, GGUF_UINT16, GGUF_INT16, GGUF_UINT32, GGUF_INT32, GGUF_FLOAT32, GGUF_BOOL = range(8)
GGUF_STRING, GGUF_ARRAY, GGUF_UINT64, GGUF_INT64, GGUF_FLOAT64 = range(8, 13)
_SCALAR_FORMATS = {GGUF_UINT8: "<B", GGUF_INT8: "<b", GGUF_UINT16: "<H", GGUF_INT16: "<h", GGUF_UINT32: "<I",
                   GGUF_INT32: "<i", GGUF_FLOAT32: "<f", GGUF_BOOL: "<?", GGUF_UINT64: "<Q", GGUF_INT64: "<q",
                   GGUF_FLOAT64: "<d"}

F32 = np.float32


# ----------------------------------------------------------------------------------------------------------------
# fp16 and bf16 (ggml-impl.h)


def fp32_to_fp16_bits(x):
    """ggml_compute_fp32_to_fp16: round to nearest even through float arithmetic, NaN made quiet (0x7E00)."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    w = x.view(np.uint32)
    with np.errstate(over="ignore", under="ignore"):
        base = (np.abs(x) * F32(2.0**112)) * F32(2.0**-110)
    shl1_w = (w + w).astype(np.uint32)
    sign = w & np.uint32(0x80000000)
    bias = shl1_w & np.uint32(0xFF000000)
    bias = np.maximum(bias, np.uint32(0x71000000))
    base = ((bias >> np.uint32(1)) + np.uint32(0x07800000)).astype(np.uint32).view(np.float32) + base
    bits = base.view(np.uint32)
    exp_bits = (bits >> np.uint32(13)) & np.uint32(0x00007C00)
    mantissa_bits = bits & np.uint32(0x00000FFF)
    nonsign = exp_bits + mantissa_bits
    out = (sign >> np.uint32(16)) | np.where(shl1_w > np.uint32(0xFF000000), np.uint32(0x7E00), nonsign)
    return out.astype(np.uint16)


def fp16_bits_to_fp32(h):
    """Exact: every half is a float."""
    return np.asarray(h, dtype=np.uint16).view(np.float16).astype(np.float32)


def fp32_to_bf16_bits(x):
    """ggml_compute_fp32_to_bf16: round to nearest even, NaN made quiet."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (u + (0x7FFF + ((u >> 16) & 1))) >> 16
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    return np.where(nan, (u >> 16) | 64, rounded).astype(np.uint16)


# ----------------------------------------------------------------------------------------------------------------
# Quantisers (ggml-quants.c)


def _roundf(v):
    """C roundf: halves away from zero. x - trunc(x) is exact in float, so the half test is exact too."""
    t = np.trunc(v)
    frac = np.abs(v - t)
    return t + np.where(frac >= F32(0.5), np.sign(v), F32(0))


def _nearest_int(v):
    """ggml's nearest_int adds 1.5 * 2^23 and reads the mantissa: round half to even, as np.rint."""
    return np.rint(v).astype(np.int64)


def quantize_q8_0(x):
    """quantize_row_q8_0_ref over a flat float32 array whose length is a multiple of 32."""
    b = np.asarray(x, dtype=np.float32).reshape(-1, 32)
    amax = np.abs(b).max(axis=1)
    d = amax / F32(127)
    with np.errstate(divide="ignore"):
        inv = np.where(d != 0, F32(1) / d, F32(0)).astype(np.float32)
    q = _roundf(b * inv[:, None]).astype(np.int8)
    out = np.empty((b.shape[0], 34), dtype=np.uint8)
    out[:, 0:2] = fp32_to_fp16_bits(d).view(np.uint8).reshape(-1, 2)
    out[:, 2:] = q.view(np.uint8)
    return out.reshape(-1)


def quantize_q5_0(x):
    """quantize_row_q5_0_ref: the signed value of largest magnitude becomes -16."""
    b = np.asarray(x, dtype=np.float32).reshape(-1, 32)
    # The C loop keeps the first element of largest magnitude; argmax does too.
    idx = np.abs(b).argmax(axis=1)
    mx = b[np.arange(b.shape[0]), idx]
    d = mx / F32(-16)
    with np.errstate(divide="ignore"):
        inv = np.where(d != 0, F32(1) / d, F32(0)).astype(np.float32)
    # (int8_t)(x * id + 16.5f) truncates toward zero; the value is never below -0.5 here.
    xi = np.minimum(31, np.trunc(b * inv[:, None] + F32(16.5)).astype(np.int64)).astype(np.uint32)
    lo, hi = xi[:, :16], xi[:, 16:]
    qs = ((lo & 0x0F) | ((hi & 0x0F) << 4)).astype(np.uint8)
    shifts = np.arange(16, dtype=np.uint32)
    qh = (((lo & 0x10) >> 4) << shifts).sum(axis=1, dtype=np.uint32) | (
        ((hi & 0x10) >> 4) << (shifts + 16)).sum(axis=1, dtype=np.uint32)
    out = np.empty((b.shape[0], 22), dtype=np.uint8)
    out[:, 0:2] = fp32_to_fp16_bits(d).view(np.uint8).reshape(-1, 2)
    out[:, 2:6] = qh.astype("<u4").view(np.uint8).reshape(-1, 4)
    out[:, 6:] = qs
    return out.reshape(-1)


def _make_qkx2_quants(x, w, nmax, rmin, rdelta, nstep):
    """make_qkx2_quants (use_mad false) for many groups at once: x and w are (groups, n) float32.

    Returns (scale, the_min, L) as the C function returns scale and writes *the_min and L[].
    """
    groups, n = x.shape
    mn = x.min(axis=1)
    mx = x.max(axis=1)
    sum_w = w[:, 0].copy()
    sum_x = sum_w * x[:, 0]
    for i in range(1, n):
        sum_w = sum_w + w[:, i]
        sum_x = sum_x + w[:, i] * x[:, i]
    mn = np.where(mn > 0, F32(0), mn).astype(np.float32)
    flat = mx == mn
    rng = np.where(flat, F32(1), mx - mn).astype(np.float32)
    iscale = F32(nmax) / rng
    scale = F32(1) / iscale
    L = np.clip(_nearest_int(iscale[:, None] * (x - mn[:, None])), 0, nmax)
    Lf = L.astype(np.float32)
    best = np.zeros(groups, dtype=np.float32)
    for i in range(n):
        diff = scale * Lf[:, i] + mn - x[:, i]
        best = best + w[:, i] * (diff * diff)
    for step in range(nstep + 1):
        # The C code moves min to each better fit, so later steps measure the range from the new min.
        rng = np.where(flat, F32(1), mx - mn).astype(np.float32)
        iscale = (F32(rmin) + F32(rdelta) * F32(step) + F32(nmax)) / rng
        laux = np.clip(_nearest_int(iscale[:, None] * (x - mn[:, None])), 0, nmax)
        la = laux.astype(np.float32)
        sum_l = np.zeros(groups, dtype=np.float32)
        sum_l2 = np.zeros(groups, dtype=np.float32)
        sum_xl = np.zeros(groups, dtype=np.float32)
        for i in range(n):
            wl = w[:, i] * la[:, i]
            sum_l = sum_l + wl
            sum_l2 = sum_l2 + wl * la[:, i]
            sum_xl = sum_xl + wl * x[:, i]
        D = sum_w * sum_l2 - sum_l * sum_l
        ok = D > 0
        Dsafe = np.where(ok, D, F32(1)).astype(np.float32)
        this_scale = (sum_w * sum_xl - sum_x * sum_l) / Dsafe
        this_min = (sum_l2 * sum_x - sum_l * sum_xl) / Dsafe
        pos = this_min > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            this_scale = np.where(pos, sum_xl / sum_l2, this_scale).astype(np.float32)
        this_min = np.where(pos, F32(0), this_min).astype(np.float32)
        cur = np.zeros(groups, dtype=np.float32)
        for i in range(n):
            diff = this_scale * la[:, i] + this_min - x[:, i]
            cur = cur + w[:, i] * (diff * diff)
        better = ok & (cur < best) & ~flat
        L = np.where(better[:, None], laux, L)
        best = np.where(better, cur, best)
        scale = np.where(better, this_scale, scale)
        mn = np.where(better, this_min, mn)
    L = np.where(flat[:, None], 0, L)
    scale = np.where(flat, F32(0), scale).astype(np.float32)
    return scale, (-mn).astype(np.float32), L


def quantize_q4_K(x):
    """quantize_row_q4_K_ref (no importance matrix, as llama-quantize without --imatrix) over whole super-blocks."""
    b = np.asarray(x, dtype=np.float32).reshape(-1, 256)
    nb = b.shape[0]
    sub = b.reshape(nb * 8, 32)
    sum_x2 = np.zeros(nb * 8, dtype=np.float32)
    for l in range(32):
        sum_x2 = sum_x2 + sub[:, l] * sub[:, l]
    av_x = np.sqrt(sum_x2 / F32(32))
    weights = av_x[:, None] + np.abs(sub)
    scales, mins, L = _make_qkx2_quants(sub, weights, 15, -1.0, 0.1, 20)
    scales = scales.reshape(nb, 8)
    mins = mins.reshape(nb, 8)
    L = L.reshape(nb, 256)
    max_scale = np.maximum(scales.max(axis=1), F32(0))
    max_min = np.maximum(mins.max(axis=1), F32(0))
    with np.errstate(divide="ignore"):
        inv_scale = np.where(max_scale > 0, F32(63) / max_scale, F32(0)).astype(np.float32)
        inv_min = np.where(max_min > 0, F32(63) / max_min, F32(0)).astype(np.float32)
    # nearest_int's int is stored in a uint8_t before MIN(63, .): a negative value wraps first.
    ls = np.minimum(63, _nearest_int(inv_scale[:, None] * scales) & 0xFF)
    lm = np.minimum(63, _nearest_int(inv_min[:, None] * mins) & 0xFF)
    sc = np.zeros((nb, 12), dtype=np.int64)
    sc[:, 0:4] = ls[:, 0:4]
    sc[:, 4:8] = lm[:, 0:4]
    sc[:, 8:12] = (ls[:, 4:8] & 0xF) | ((lm[:, 4:8] & 0xF) << 4)
    sc[:, 0:4] |= (ls[:, 4:8] >> 4) << 6
    sc[:, 4:8] |= (lm[:, 4:8] >> 4) << 6
    d_bits = fp32_to_fp16_bits(max_scale / F32(63))
    dmin_bits = fp32_to_fp16_bits(max_min / F32(63))
    d_all = fp16_bits_to_fp32(d_bits)
    dmin_all = fp16_bits_to_fp32(dmin_bits)
    # get_scale_min_k4 reads back what was packed, so the 6-bit values are ls and lm themselves.
    d = d_all[:, None] * ls.astype(np.float32)
    dm = dmin_all[:, None] * lm.astype(np.float32)
    xs = b.reshape(nb, 8, 32)
    nz = d != 0
    dsafe = np.where(nz, d, F32(1)).astype(np.float32)
    requant = np.clip(_nearest_int((xs + dm[:, :, None]) / dsafe[:, :, None]), 0, 15)
    L = np.where(nz[:, :, None], requant, L.reshape(nb, 8, 32)).reshape(nb, 4, 2, 32)
    qs = (L[:, :, 0, :] | (L[:, :, 1, :] << 4)).astype(np.uint8).reshape(nb, 128)
    out = np.empty((nb, 144), dtype=np.uint8)
    out[:, 0:2] = d_bits.view(np.uint8).reshape(-1, 2)
    out[:, 2:4] = dmin_bits.view(np.uint8).reshape(-1, 2)
    out[:, 4:16] = sc.astype(np.uint8)
    out[:, 16:] = qs
    return out.reshape(-1)


def encode_tensor(data, type_name):
    """The bytes of a float32 tensor stored as type_name (rows are the last numpy axis, ggml's ne0)."""
    flat = np.ascontiguousarray(data, dtype=np.float32).reshape(-1)
    if type_name == "F32":
        return flat.astype("<f4").tobytes()
    if type_name == "F16":
        return fp32_to_fp16_bits(flat).astype("<u2").tobytes()
    if type_name == "BF16":
        return fp32_to_bf16_bits(flat).astype("<u2").tobytes()
    if type_name == "Q8_0":
        return quantize_q8_0(flat).tobytes()
    if type_name == "Q5_0":
        return quantize_q5_0(flat).tobytes()
    if type_name == "Q4_K":
        return quantize_q4_K(flat).tobytes()
    raise ValueError(f"no quantiser for {type_name}")


# ----------------------------------------------------------------------------------------------------------------
# The file


class GGUFWriter:
    """Collects key/values and tensors, then writes them in the order they were added."""

    def __init__(self, alignment=32):
        self.alignment = alignment
        self.kv = []
        self.tensors = []
        if alignment != 32:
            self.add_uint32("general.alignment", alignment)

    def add(self, key, value_type, value, element_type=None):
        self.kv.append((key, value_type, value, element_type))

    def add_string(self, key, value):
        self.add(key, GGUF_STRING, value)

    def add_uint32(self, key, value):
        self.add(key, GGUF_UINT32, int(value))

    def add_int32(self, key, value):
        self.add(key, GGUF_INT32, int(value))

    def add_float32(self, key, value):
        self.add(key, GGUF_FLOAT32, float(value))

    def add_bool(self, key, value):
        self.add(key, GGUF_BOOL, bool(value))

    def add_array(self, key, element_type, values):
        self.add(key, GGUF_ARRAY, list(values), element_type)

    def add_tensor(self, name, shape, type_name, payload):
        """shape is numpy's (outermost first); payload the encoded bytes (encode_tensor)."""
        ne = list(reversed(shape))
        block, size = GGML_BLOCKS[type_name]
        if ne[0] % block:
            raise ValueError(f"{name}: row length {ne[0]} is not a multiple of {type_name}'s block of {block}")
        expect = int(np.prod(ne)) // block * size
        if len(payload) != expect:
            raise ValueError(f"{name}: {len(payload)} bytes, {type_name} {ne} needs {expect}")
        self.tensors.append((name, ne, GGML_TYPES[type_name], payload))

    @staticmethod
    def _string(s):
        raw = s.encode("utf-8") if isinstance(s, str) else bytes(s)
        return struct.pack("<Q", len(raw)) + raw

    def _value(self, value_type, value, element_type):
        if value_type == GGUF_STRING:
            return self._string(value)
        if value_type == GGUF_ARRAY:
            head = struct.pack("<IQ", element_type, len(value))
            if element_type == GGUF_STRING:
                return head + b"".join(self._string(v) for v in value)
            fmt = _SCALAR_FORMATS[element_type]
            return head + np.asarray(value, dtype=np.dtype(fmt)).tobytes()
        return struct.pack(_SCALAR_FORMATS[value_type], value)

    def _pad(self, n):
        return (-n) % self.alignment

    def write(self, path):
        out = bytearray()
        out += b"GGUF" + struct.pack("<IQQ", 3, len(self.tensors), len(self.kv))
        for key, value_type, value, element_type in self.kv:
            out += self._string(key) + struct.pack("<I", value_type) + self._value(value_type, value, element_type)
        offset = 0
        for name, ne, ggml_type, payload in self.tensors:
            out += self._string(name) + struct.pack("<I", len(ne)) + struct.pack(f"<{len(ne)}Q", *ne)
            out += struct.pack("<IQ", ggml_type, offset)
            offset += len(payload) + self._pad(len(payload))
        out += bytes(self._pad(len(out)))
        for _, _, _, payload in self.tensors:
            out += payload + bytes(self._pad(len(payload)))
        with open(path, "wb") as f:
            f.write(out)
