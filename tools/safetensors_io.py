"""safetensors by hand (Debian has no Python package for it): the training scripts and the parity
fixture generators write and read model files with these functions.

Format: u64 little-endian header length, a JSON header (tensor name -> dtype, shape, data_offsets;
optional "__metadata__" of strings), then the tensors' bytes back to back. Names are written sorted,
the header is space padded to a multiple of 8, as the reference implementation's serialize() does.
"""
import json
import os
import struct

import numpy as np

_DT = {np.dtype("float32"): "F32", np.dtype("float16"): "F16", np.dtype("int32"): "I32", np.dtype("int64"): "I64"}
_NP = {v: k for k, v in _DT.items()}


def _tensor_bytes(t):
    """(dtype tag, shape, bytes): a numpy array, or a CPU torch tensor (bfloat16 too, which numpy lacks:
    written as the raw 16 bits)."""
    if str(getattr(t, "dtype", "")) == "torch.bfloat16":
        import torch  # only the fixture generators pass torch tensors
        return "BF16", list(t.shape), t.contiguous().view(torch.int16).numpy().tobytes()
    if hasattr(t, "detach"):
        t = t.detach().numpy()
    a = np.ascontiguousarray(t)
    return _DT[a.dtype], list(a.shape), a.tobytes()


def write_safetensors(path, tensors, metadata=None):
    """tensors: name -> numpy array or CPU torch tensor (float32, float16, bfloat16, int32, int64)."""
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        dtype, shape, raw = _tensor_bytes(tensors[name])
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    if metadata:
        header["__metadata__"] = metadata
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    """name -> numpy array (a copy), and the metadata dict (empty when absent). BF16 tensors, which numpy
    lacks, come back as float32: the 16 bits as the high half of each float, the exact value (as torch's
    .float() and the engine widen them)."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    metadata = header.pop("__metadata__", {})
    out = {}
    for name, info in header.items():
        a, b = info["data_offsets"]
        raw = data[8 + n + a:8 + n + b]
        if info["dtype"] == "BF16":
            bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            out[name] = bits.view(np.float32).reshape(info["shape"])
        else:
            out[name] = np.frombuffer(raw, dtype=_NP[info["dtype"]]).reshape(info["shape"]).copy()
    return out, metadata


def write_model_folder(folder, config, tensors):
    """A bundled model's folder (created if needed): config.json (indent 1, ASCII) and model.safetensors
    (tensors: name -> float32 array, with the metadata {"format": "pt"} that Hugging Face files carry)."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=1, ensure_ascii=True)
        f.write("\n")
    write_safetensors(os.path.join(folder, "model.safetensors"), tensors, {"format": "pt"})


def read_model_folder(folder, shapes_of=None):
    """(config, tensors) of a model folder. With shapes_of (config -> {name: shape}) every tensor must be
    float32 of exactly that shape and there must be no others; otherwise ValueError naming the folder."""
    with open(os.path.join(folder, "config.json")) as f:
        config = json.load(f)
    tensors, _ = read_safetensors(os.path.join(folder, "model.safetensors"))
    if shapes_of is not None:
        shapes = shapes_of(config)
        for name, shape in shapes.items():
            if name not in tensors:
                raise ValueError(f"{folder}: tensor {name} missing")
            if list(tensors[name].shape) != shape or tensors[name].dtype != np.float32:
                raise ValueError(f"{folder}: tensor {name} is {tensors[name].dtype} {list(tensors[name].shape)}, "
                                 f"expected float32 {shape}")
        extra = set(tensors) - set(shapes)
        if extra:
            raise ValueError(f"{folder}: unexpected tensors {sorted(extra)}")
    return config, tensors
