"""Ascend C data types as numpy dtypes (bf16 and int4 from ml_dtypes).

| Ascend C    | ascend_sim |
|-------------|------------|
| half        | half       |
| float       | float32    |
| bfloat16_t  | bfloat16   |
| int8_t ...  | int8, int16, int32, uint8, uint16, uint32 |
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

half = np.dtype(np.float16)
float32 = np.dtype(np.float32)
bfloat16 = np.dtype(ml_dtypes.bfloat16)
int4b_t = np.dtype(ml_dtypes.int4)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
uint8 = np.dtype(np.uint8)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)

SUPPORTED = (half, float32, bfloat16, int8, int16, int32, int64, uint8, uint16, uint32)
FLOATS = (half, float32, bfloat16)

_NAMES = {half: "half", float32: "float", bfloat16: "bfloat16_t", int8: "int8_t",
          int16: "int16_t", int32: "int32_t", int64: "int64_t", uint8: "uint8_t",
          uint16: "uint16_t", uint32: "uint32_t", int4b_t: "int4b_t"}


def as_dtype(dtype) -> np.dtype:
    """Normalise a dtype-like (np.float16, "half", ml_dtypes.bfloat16 ...) to np.dtype."""
    if isinstance(dtype, np.dtype):     # hot path (every AllocTensor/DeQue): np.dtype(d) is d itself
        return dtype
    if isinstance(dtype, str):
        aliases = {"float": float32, "half": half, "bfloat16_t": bfloat16, "bfloat16": bfloat16}
        if dtype in aliases:
            return aliases[dtype]
        return np.dtype(dtype.removesuffix("_t"))
    return np.dtype(dtype)


def ascend_name(dtype) -> str:
    """The Ascend C spelling of a dtype, for error messages."""
    d = np.dtype(dtype)
    return _NAMES.get(d, str(d))


def elements_in(nbytes: int, dtype: np.dtype) -> int:
    """Elements of ``dtype`` in ``nbytes`` bytes: int4b_t packs two per byte (the low nibble first)."""
    return nbytes * 2 if dtype is int4b_t else nbytes // dtype.itemsize


def bytes_of(count: int, dtype: np.dtype) -> int:
    """Bytes that ``count`` elements of ``dtype`` take (int4b_t: half a byte each, rounded up)."""
    return (count + 1) // 2 if dtype is int4b_t else count * dtype.itemsize


def is_float(dtype) -> bool:
    return np.dtype(dtype) in FLOATS
