"""Column chunk bloom filters exactly as parquet-java 1.17 builds them: sizes, candidates, hashed values.

Sizing replays BlockSplitBloomFilter (optimalNumOfBits, the constructor's bounds and power-of-two rounding,
with Java's int arithmetic) and AdaptiveBlockSplitBloomFilter (candidate sizes, their NDV capacities, the
distinct-value count taken on the largest candidate). Values are hashed as parquet-java hashes them
(ColumnValueCollector): INT32 / INT64 as 4 / 8 little-endian bytes, FLOAT / DOUBLE as their raw IEEE bits
(ByteBuffer.putFloat/putDouble: NaN payloads are not canonicalised), byte arrays, FIXED_LEN_BYTE_ARRAY and
INT96 as their bytes; BOOLEAN values and nulls are never inserted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from gpuwrite.kernels.hashing.bloom import (
    bloom_insert_counting,
    bloom_insert_many,
    hash_byte_arrays,
    hash_u32,
    hash_u64,
)

from ..format.enums import Encoding
from ..options.model import BloomSpec
from ..pipeline.leafdata import LeafData
from ..schema import Leaf

LOWER_BOUND_BYTES = 32  # SPEC: BlockSplitBloomFilter.LOWER_BOUND_BYTES
UPPER_BOUND_BYTES = 128 * 1024 * 1024  # SPEC: BlockSplitBloomFilter.UPPER_BOUND_BYTES
BYTES_PER_BLOCK = 32
BITS_PER_BLOCK = 256
NDV_STEP = 500  # SPEC: AdaptiveBlockSplitBloomFilter.NDV_STEP
MINIMUM_CANDIDATE_NDV = 16  # SPEC: AdaptiveBlockSplitBloomFilter.minimumCandidateNdv
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_DICTIONARY_ENCODINGS = (Encoding.PLAIN_DICTIONARY, Encoding.RLE_DICTIONARY)


def _java_int(x: int) -> int:
    """x wrapped to a Java int."""
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >= 1 << 31 else x


def _java_long(x: int) -> int:
    """x wrapped to a Java long."""
    x &= (1 << 64) - 1
    return x - (1 << 64) if x >= 1 << 63 else x


def _d2i(x: float) -> int:
    """Java's (int) cast of a double: NaN is 0, out-of-range values saturate, the rest truncate."""
    if x != x:
        return 0
    if x >= _INT_MAX:
        return _INT_MAX
    if x <= _INT_MIN:
        return _INT_MIN
    return int(x)


def _bits_per_value(p: float) -> float:
    """-8 / ln(1 - p^(1/8)), the divisor in optimalNumOfBits (Java's Math.pow / Math.log)."""
    inner = 1 - math.pow(p, 1.0 / 8)
    return math.log(inner) if inner > 0 else -math.inf


def _java_div(a: float, b: float) -> float:
    """a / b with IEEE semantics (Python raises on division by zero)."""
    if b != 0:
        return a / b
    if a == 0 or a != a:
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def optimal_num_of_bits(n: int, p: float) -> int:
    """SPEC: BlockSplitBloomFilter.optimalNumOfBits, quirks included.

    m = -8n / ln(1 - p^(1/8)) (with -8n a wrapping Java long); overflow or m < 0 gives the 128 MiB cap;
    then `(bits + 255) & ~256`, which clears bit 8 rather than rounding up to a multiple of 256; at least 256.
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"FPP should be less than 1.0 and great than 0.0, got {p}")
    m = _java_div(float(_java_long(-8 * n)), _bits_per_value(p))
    bits = _d2i(m)
    if bits > UPPER_BOUND_BYTES << 3 or m < 0:
        bits = UPPER_BOUND_BYTES << 3
    bits = (bits + BITS_PER_BLOCK - 1) & ~BITS_PER_BLOCK
    return max(bits, LOWER_BOUND_BYTES << 3)


def _highest_one_bit(n: int) -> int:
    """Integer.highestOneBit for a positive int."""
    return 1 << (n.bit_length() - 1)


def filter_bytes(num_bytes: int, minimum_bytes: int = LOWER_BOUND_BYTES, maximum_bytes: int = UPPER_BOUND_BYTES) -> int:
    """Bitset size the constructor BlockSplitBloomFilter(numBytes, minimumBytes, maximumBytes) allocates.

    A bound takes effect only strictly inside (32, 128 MiB); below the minimum the minimum is used, a size
    that is not a power of two goes up to the next one (Java int, so it can wrap negative), and a size over
    the maximum (or negative) becomes the maximum, which need not be a power of two or a multiple of 32.
    """
    if minimum_bytes > maximum_bytes:
        raise ValueError("the minimum bytes should be less or equal than maximum bytes")
    lo = minimum_bytes if LOWER_BOUND_BYTES < minimum_bytes < UPPER_BOUND_BYTES else LOWER_BOUND_BYTES
    hi = maximum_bytes if LOWER_BOUND_BYTES < maximum_bytes < UPPER_BOUND_BYTES else UPPER_BOUND_BYTES
    n = max(num_bytes, lo)
    if n & (n - 1):
        n = _java_int(_highest_one_bit(n) << 1)
    if n > hi or n < 0:
        n = hi
    return n


def expected_ndv(num_bytes: int, fpp: float) -> int:
    """SPEC: AdaptiveBlockSplitBloomFilter.expectedNDV: the last multiple of 500 before optimalNumOfBits / 8
    reaches num_bytes (0 when none); Java int arithmetic. The scan starts at a multiple that provably falls
    short (optimalNumOfBits(n) <= (int) m + 255), so large filters need few steps."""
    per_value = _java_div(-8.0, _bits_per_value(fpp))  # bits per distinct value (m / n)
    target_bits = 8 * num_bytes
    k = 1
    if per_value > 0 and math.isfinite(per_value):
        k = max(1, int((target_bits - 2 * BITS_PER_BLOCK) / (NDV_STEP * per_value)) - 2)
    k = min(k, _INT_MAX // NDV_STEP + 1)  # Java's loop wraps past Integer.MAX_VALUE; that step ends it
    while True:
        ndv = _java_int(k * NDV_STEP)
        if optimal_num_of_bits(ndv, fpp) // 8 >= num_bytes:
            break
        k += 1
    ndv = _java_int(ndv - NDV_STEP)
    return max(ndv, 0)


def _bounded_power_of_two(num_bytes: int) -> int:
    """SPEC: AdaptiveBlockSplitBloomFilter.calculateBoundedPowerOfTwo (its bounds are always 32 B .. 128 MiB)."""
    n = max(num_bytes, LOWER_BOUND_BYTES)
    if n & (n - 1):
        n = _highest_one_bit(n)
    return max(min(n, UPPER_BOUND_BYTES), LOWER_BOUND_BYTES)


def adaptive_candidates(max_bytes: int, count: int, fpp: float) -> list[tuple[int, int]]:
    """SPEC: AdaptiveBlockSplitBloomFilter.initCandidates: (bitset bytes, NDV capacity) from the largest down."""
    out: list[tuple[int, int]] = []
    size = _bounded_power_of_two(max_bytes)
    for _ in range(count):
        ndv = expected_ndv(size, fpp)
        if ndv <= 0:
            break
        out.append((filter_bytes(size), ndv))
        size = _bounded_power_of_two(size // 2)
    if not out:
        out.append((filter_bytes(LOWER_BOUND_BYTES), MINIMUM_CANDIDATE_NDV))
    return out


def filter_size(spec: BloomSpec, values: int) -> int:
    """Bitset bytes of a non-adaptive filter for a chunk of `values` non-null values: sized for the NDV when
    one is given, else for `values` distinct values (a chunk has no more), between 32 bytes and max_bytes.

    SPEC: ColumnValueCollector.initBloomFilter sizes a filter with an NDV as here
    (BlockSplitBloomFilter(optimalNumOfBits(ndv, fpp) / 8, maxBytes)); without one it allocates the maximum
    (BlockSplitBloomFilter(maxBytes, maxBytes), ParquetOutputFormat's parquet.bloom.filter.max.bytes, 1 MiB by
    default) for every chunk, whatever its size. gpuwrite departs from that on purpose (docs/compatibility.md):
    a filter never holds more distinct values than its chunk has values, and 1 MiB per chunk made files of
    many small row groups mostly filter (400 row groups x 2 columns: 861 MB of file for 61 MB of data) and
    the filters, kept until the footer, exhausted memory. The filter is the one parquet-java writes when
    given the chunk's value count as its NDV.
    """
    ndv = spec.ndv if spec.ndv is not None else values
    return filter_bytes(optimal_num_of_bits(ndv, spec.fpp) // 8, LOWER_BOUND_BYTES, spec.max_bytes)


class _Bitset:
    """One filter's bitset as little-endian uint32 words (8 per 32-byte block), with its NDV capacity."""

    def __init__(self, num_bytes: int, capacity: int | None) -> None:
        self.num_bytes = num_bytes
        self.capacity = capacity
        self.num_blocks = num_bytes // BYTES_PER_BLOCK
        self.words = np.zeros((num_bytes + 3) // 4, dtype=np.uint32)

    def to_bytes(self) -> bytes:
        """The bitset as written: num_bytes bytes."""
        return self.words.view("<u4").view(np.uint8)[:self.num_bytes].tobytes()


def hash_values(leaf: Leaf, data: LeafData, va: int, vb: int) -> np.ndarray:
    """XXH64 (seed 0) of non-null values va..vb as parquet-java hashes them (empty for booleans)."""
    n = vb - va
    out = np.empty(n if leaf.kind != "bool" else 0, dtype=np.uint64)
    if n == 0 or leaf.kind == "bool":
        return out
    if data.offsets is not None:
        hash_byte_arrays(data.offsets, data.data, va, vb, out)
        return out
    values = np.ascontiguousarray(data.values)
    if values.dtype.itemsize == 4:
        hash_u32(values.view(np.uint32), va, vb, out)
    else:
        hash_u64(values.view(np.uint64), va, vb, out)
    return out


class BloomBuilder:
    """One column chunk's bloom filter, fed page by page with the pages' non-null values (`values` of them in
    the chunk, which size a filter given no NDV: `filter_size`)."""

    def __init__(self, leaf: Leaf | None, spec: BloomSpec, values: int) -> None:
        self.leaf = leaf
        self.adaptive = spec.ndv is None and spec.adaptive
        if self.adaptive:
            self.filters = [_Bitset(size, ndv) for size, ndv in adaptive_candidates(spec.max_bytes,
                                                                                    spec.candidates, spec.fpp)]
        else:
            self.filters = [_Bitset(filter_size(spec, values), None)]
        # The largest candidate (the first of that size) counts distinct values and is never dropped.
        self.largest = max(self.filters, key=lambda f: f.num_bytes)
        self.distinct = 0

    def add(self, data: LeafData, va: int, vb: int) -> None:
        """Insert the non-null values va..vb of `data`."""
        assert self.leaf is not None
        self.add_hashes(hash_values(self.leaf, data, va, vb))

    def add_hashes(self, hashes: np.ndarray) -> None:
        """Insert value hashes (uint64), in value order."""
        n = len(hashes)
        if n == 0:
            return
        if not self.adaptive:
            f = self.filters[0]
            bloom_insert_many(hashes, 0, n, f.words, f.num_blocks)
            return
        # Candidates whose capacity the count already exceeds are gone for good; the others get every hash
        # and are judged on the final count (the count only grows).
        alive = [f for f in self.filters if f is not self.largest and f.capacity is not None
                 and f.capacity >= self.distinct]
        big = self.largest
        self.distinct += int(bloom_insert_counting(hashes, 0, n, big.words, big.num_blocks))
        for f in alive:
            bloom_insert_many(hashes, 0, n, f.words, f.num_blocks)

    def chosen(self) -> _Bitset:
        """The filter written: the only one, or the smallest surviving adaptive candidate."""
        if not self.adaptive:
            return self.filters[0]
        alive = [f for f in self.filters if f is self.largest or (f.capacity or 0) >= self.distinct]
        return min(alive, key=lambda f: f.num_bytes)

    def bitset(self) -> bytes:
        """The bitset bytes of the filter written."""
        return self.chosen().to_bytes()


def chunk_bitset(builder: BloomBuilder | None, page_encodings: Sequence[int]) -> bytes | None:
    """The chunk's bitset, or None: SPEC ParquetFileWriter.writeColumnChunk writes a filter only when some
    data page is not dictionary-encoded."""
    if builder is None or not needs_filter(page_encodings):
        return None
    return builder.bitset()


def needs_filter(page_encodings: Sequence[int]) -> bool:
    """Whether a chunk with data pages of these encodings gets its filter written (some page is not
    dictionary-encoded: SPEC ParquetFileWriter.writeColumnChunk)."""
    return not all(e in _DICTIONARY_ENCODINGS for e in page_encodings)
