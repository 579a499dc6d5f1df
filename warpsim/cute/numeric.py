"""Element types of tensors and atoms: names, widths and raw storage types.

warpsim keeps every value as raw bits; a dtype name says how many bits an element has and how
the arithmetic model reads them. The names are the ones ``Copy_Atom(op, dtype)`` and tensors
take: ``"f16"`` (CuTe ``half_t``), ``"bf16"`` (``bfloat16_t``), ``"f32"`` (``float``), ``"u16"``
(``uint16_t``) and ``"u32"`` (``uint32_t``).

>>> dtype_bits("bf16"), storage_dtype("f32").name, cute_type_name("f16")
(16, 'uint32', 'half_t')
"""

import numpy as np

__all__ = ["DTYPES", "dtype_bits", "storage_dtype", "cute_type_name", "check_dtype"]

# name -> (bits, CuTe C++ type)
DTYPES = {
    "f16": (16, "half_t"),
    "bf16": (16, "bfloat16_t"),
    "u16": (16, "uint16_t"),
    "f32": (32, "float"),
    "u32": (32, "uint32_t"),
}


def check_dtype(op, dtype):
    """``dtype`` if it is a known name; ``ValueError`` naming ``op`` otherwise."""
    if not isinstance(dtype, str) or dtype not in DTYPES:
        raise ValueError(f"{op}: unknown element type {dtype!r}; expected one of {', '.join(DTYPES)}")
    return dtype


def dtype_bits(dtype):
    """Width of one element in bits."""
    return DTYPES[check_dtype("dtype_bits", dtype)][0]


def storage_dtype(dtype):
    """The numpy type that holds one element's raw bits (``uint16`` or ``uint32``)."""
    return np.dtype(np.uint16) if dtype_bits(dtype) == 16 else np.dtype(np.uint32)


def cute_type_name(dtype):
    """The CuTe C++ type of ``dtype`` (for messages and generated code)."""
    return DTYPES[check_dtype("cute_type_name", dtype)][1]
