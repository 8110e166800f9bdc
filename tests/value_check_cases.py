"""Tables whose decimals and strings hold values the value checks refuse, at chosen rows, in chunked and
sliced columns whose null slots hold such bytes too (they must not count)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa


def _chunks(arr: pa.Array, rng: np.random.Generator) -> pa.ChunkedArray:
    """`arr` cut into a few chunks, each a slice of a longer array (offsets inside its buffers)."""
    cuts = sorted({0, len(arr), *rng.integers(0, len(arr) + 1, 2).tolist()})
    parts = []
    for a, b in zip(cuts, cuts[1:], strict=False):
        padded = pa.concat_arrays([arr.slice(a, 1) if b > a else arr.slice(0, 0), arr.slice(a, b - a)])
        parts.append(padded.slice(1 if b > a else 0))
    return pa.chunked_array(parts, type=arr.type)


def decimals(rng: np.random.Generator, n: int, precision: int, bad: list[int], width: int = 128) -> pa.ChunkedArray:
    """decimal(precision, 2) values within precision, but those at rows `bad` one past it; some nulls, whose
    slots hold out-of-range words."""
    wide = pa.decimal128(38, 2) if width == 128 else pa.decimal256(76, 2)
    limit = 10 ** precision - 1
    values = [int(v) for v in rng.integers(-min(limit, 2**62), min(limit, 2**62), n)]
    for i in bad:
        values[i] = (limit + 1) * (1 if i % 2 else -1)
    mask = rng.random(n) < 0.2
    mask[bad] = False
    garbage = [limit * 10 if m else v for v, m in zip(values, mask, strict=True)]
    from decimal import Decimal

    arr = pa.array([Decimal(v).scaleb(-2) for v in garbage], type=wide)
    arr = pa.Array.from_buffers(arr.type, n, [pa.py_buffer(np.packbits(~mask, bitorder="little").tobytes()),
                                              arr.buffers()[1]], null_count=int(mask.sum()))
    target = pa.decimal128(precision, 2) if width == 128 else pa.decimal256(precision, 2)
    return _chunks(arr.view(target), rng)


def strings(rng: np.random.Generator, n: int, bad: list[int], large: bool = False) -> pa.ChunkedArray:
    """Strings (some multi-byte), invalid UTF-8 at rows `bad`; null slots hold invalid bytes."""
    words = [b"a", "\u00e9t\u00e9".encode(), "\u65e5\u672c".encode(), "\U0001f600".encode(), b""]
    raw = [words[k] for k in rng.integers(0, len(words), n)]
    for i in bad:
        raw[i] = b"x\xed\xa0\x80"  # a surrogate: not UTF-8
    mask = rng.random(n) < 0.2
    mask[bad] = False
    raw = [b"\xff\xfe" if m else r for r, m in zip(raw, mask, strict=True)]
    binary = pa.array(raw, pa.large_binary() if large else pa.binary())
    arr = pa.Array.from_buffers(binary.type, n, [pa.py_buffer(np.packbits(~mask, bitorder="little").tobytes()),
                                                 *binary.buffers()[1:]], null_count=int(mask.sum()))
    return _chunks(arr.view(pa.large_string() if large else pa.string()), rng)
