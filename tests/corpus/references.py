"""The corpus's reference functions: what each kernel computes, in float64 (integers exactly, in their own
type). Each takes the launch's values by name (float arrays as float64) and returns the expected outputs by
name; see :mod:`manifest`.

>>> x = np.array([0, 1, 0xFFFFFFFF], np.uint32)             # three rounds of Marsaglia's xorshift32
>>> xorshift_reference({"x": x})["out"].tolist()
[0, 2647435461, 1958451267]
"""

import numpy as np

__all__ = ["mix_u32_reference", "xorshift_reference", "softmax", "layernorm", "attention", "layernorm_outputs"]


def _u32(x):
    return np.asarray(x, np.uint64) & np.uint64(0xFFFFFFFF)


def _popc(v):
    v = v.astype(np.uint64)
    return np.array([bin(int(x)).count("1") for x in v.ravel()], np.uint64).reshape(v.shape)


def _clz(v):
    return np.array([32 - int(x).bit_length() for x in v.ravel()], np.uint64).reshape(v.shape)


def _brev(v):
    return np.array([int(f"{int(x):032b}"[::-1], 2) for x in v.ravel()], np.uint64).reshape(v.shape)


def _byte(v, k):
    return (v >> np.uint64(8 * k)) & np.uint64(0xFF)


def mix_u32_reference(v):
    """``mix_u32`` of ``vector_ops.cu`` in exact integer arithmetic (u32 wrap-around)."""
    x = v["x"].astype(np.uint64)
    i = np.arange(x.size, dtype=np.uint64)
    h = x ^ i
    h = h ^ (h >> np.uint64(16))
    h = _u32(h * np.uint64(0x85EBCA6B))
    h = h ^ (h >> np.uint64(13))
    h = _u32(h * np.uint64(0xC2B2AE35))
    h = h ^ (h >> np.uint64(16))
    h = _u32(h + _popc(x) + _clz(x) + ((x * np.uint64(0x9E3779B9)) >> np.uint64(32)))
    perm = _byte(x, 0) | (_byte(h, 0) << np.uint64(8)) | (_byte(x, 1) << np.uint64(16)) | (_byte(h, 1) << np.uint64(24))
    h = h ^ _u32(_brev(x) + perm)
    s = i & np.uint64(31)
    h = _u32((h << s) | (h >> (np.uint64(32) - s)))                # funnel shift of (h:h): a rotate
    signed = x.astype(np.uint32).view(np.int32).astype(np.int64) >> 3
    return {"y": _u32(h + x // np.uint64(7) + (signed.astype(np.uint32).astype(np.uint64) % np.uint64(1000)))
            .astype(np.uint32)}


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def layernorm(x, w, b, eps):
    mean = x.mean(axis=1)
    rstd = 1.0 / np.sqrt(((x - mean[:, None]) ** 2).mean(axis=1) + eps)
    return (x - mean[:, None]) * rstd[:, None] * w + b, mean, rstd


def attention(q, k, v, scale):
    return softmax(np.einsum("...id,...jd->...ij", q, k) * scale) @ v


def xorshift_reference(v):
    x = v["x"].astype(np.uint64)
    for _ in range(3):
        x = x ^ _u32(x << np.uint64(13))
        x = x ^ (x >> np.uint64(17))
        x = x ^ _u32(x << np.uint64(5))
    return {"out": x.astype(np.uint32)}


def layernorm_outputs(v, y, mean, rstd):
    out, mu, r = layernorm(v["x"], v["gamma"], v["beta"], v["eps"])
    return {y: out, mean: mu, rstd: r}
