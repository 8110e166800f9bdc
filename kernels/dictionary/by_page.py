"""Hash-based dictionary build in first-occurrence order, page by page, with parquet-java's byte accounting.

Ids are assigned in the order values are first seen (parquet-java's linked hash maps do the same), so the
dictionary is deterministic. Insertion stops at the value whose new entry pushes the dictionary's byte size
past the limit: that is where parquet-java falls back, and no later id is ever needed.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit, jit_inline
from ..encode.byteops import copy_bytes, load_u64, same_bytes

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@jit
def hash_u64(k: np.uint64) -> np.uint64:
    """Mix a 64-bit key (splitmix64 finaliser)."""
    k = (k ^ (k >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    k = (k ^ (k >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return k ^ (k >> np.uint64(31))


@jit_inline
def hash_bytes(data: np.ndarray, start: int, end: int) -> np.uint64:
    """FNV-1a over data[start:end], finalised with hash_u64."""
    h = np.uint64(0xCBF29CE484222325)
    for i in range(np.uint64(start), np.uint64(end)):  # unsigned: no wrap-around select per byte (byteops)
        h = (h ^ np.uint64(data[i])) * np.uint64(0x100000001B3)
    return hash_u64(h ^ np.uint64(end - start))


@jit_inline
def hash_words(data: np.ndarray, start: int, end: int) -> np.uint64:
    """A hash of data[start:end] a word at a time (bytes_insert's own: one multiply per 8 bytes where hash_bytes'
    FNV-1a chains one per byte), finalised with hash_u64 over the length. Only this module's tables use it
    (ids follow first occurrence, so the hash never shows in a file); row_group.py keeps hash_bytes."""
    h = np.uint64(0xCBF29CE484222325)
    i = np.uint64(start)
    ue = np.uint64(end)
    while i + np.uint64(8) <= ue:
        h = (h ^ load_u64(data, i)) * _GOLDEN
        h ^= h >> np.uint64(29)
        i += np.uint64(8)
    tail = np.uint64(0)
    shift = np.uint64(0)
    while i < ue:
        tail |= np.uint64(data[i]) << shift
        shift += np.uint64(8)
        i += np.uint64(1)
    return hash_u64((h ^ tail) * _GOLDEN ^ (ue - np.uint64(start)))


@jit
def _log2(n: int) -> int:
    """log2 of a power of two."""
    k = 0
    while (1 << k) < n:
        k += 1
    return k


@jit
def fixed_insert(keys: np.ndarray, start: int, end: int, table: np.ndarray, entry_keys: np.ndarray,
                 n_entries: int, entry_size: int, dict_bytes: int, limit: int, ids: np.ndarray) -> tuple:
    """Insert keys[start:end] (int32 or int64, kept as int64) and write their ids to ids[0:end-start].

    Returns (n_entries, dict_bytes, overflow): overflow is the offset of the value whose new entry made
    dict_bytes exceed `limit` (insertion stops there), or -1.
    """
    mask = np.uint64(table.shape[0] - 1)
    shift = np.uint64(64 - _log2(table.shape[0]))
    # unsigned indices: no negative-index wrap-around test per load and store
    base = np.uint64(start)
    for j in range(np.uint64(0), np.uint64(end - start)):
        k = keys[base + j]
        slot = (np.uint64(k) * _GOLDEN) >> shift
        while True:
            e = table[slot]
            if e < 0:
                table[slot] = n_entries
                entry_keys[np.uint64(n_entries)] = k
                ids[j] = n_entries
                n_entries += 1
                dict_bytes += entry_size
                if dict_bytes > limit:
                    return n_entries, dict_bytes, int(j)
                break
            if entry_keys[np.uint64(e)] == k:
                ids[j] = e
                break
            slot = (slot + np.uint64(1)) & mask
    return n_entries, dict_bytes, -1


@jit
def touch_lines(data: np.ndarray, nbytes: int) -> int:
    """Read one byte of each 64-byte line of data[0:nbytes] and return their sum (so the reads stay).

    Brings a dictionary's hash table and entries into the cache in one sequential pass, which the hardware
    prefetcher streams, before a page's lookups: otherwise each lookup that lands on a line evicted since the
    column's last page (its pages encoded a step at a time while other columns ran) waits for memory.
    Geometry: sequential, CPU only, one call per array. Input: `data` uint8[n] (a byte view of the array),
    nbytes <= n. Output: the sum of the bytes read. Twin: none (it computes nothing the bytes depend on).
    """
    total = np.uint64(0)
    for i in range(np.uint64(0), np.uint64(nbytes), np.uint64(64)):
        total += np.uint64(data[i])
    return int(total)


@jit
def fixed_rehash(entry_keys: np.ndarray, n_entries: int, table: np.ndarray) -> None:
    """Rebuild an empty (all -1) table from the first n_entries keys."""
    mask = np.uint64(table.shape[0] - 1)
    shift = np.uint64(64 - _log2(table.shape[0]))
    for e in range(n_entries):
        slot = (np.uint64(entry_keys[e]) * _GOLDEN) >> shift
        while table[slot] >= 0:
            slot = (slot + np.uint64(1)) & mask
        table[slot] = e


@jit_inline
def _bytes_equal(a: np.ndarray, a0: int, a1: int, b: np.ndarray, b0: int, b1: int) -> bool:
    """Whether a[a0:a1] and b[b0:b1] hold the same bytes."""
    if a1 - a0 != b1 - b0:
        return False
    return same_bytes(a, a0, b, b0, a1 - a0)


@jit
def bytes_insert(offsets: np.ndarray, data: np.ndarray, start: int, end: int, table: np.ndarray,
                 entry_hash: np.ndarray, entry_offsets: np.ndarray, entry_data: np.ndarray,
                 n_entries: int, size_overhead: int, dict_bytes: int, limit: int, ids: np.ndarray) -> tuple:
    """Byte-string version of fixed_insert: values are data[offsets[i]:offsets[i+1]].

    New entries are appended to entry_data / entry_offsets (the caller sizes them: at most limit - dict_bytes
    more bytes are copied); each costs its length plus `size_overhead` (4 for BINARY's length prefix, 0 for
    FIXED_LEN_BYTE_ARRAY and INT96). The entry that overflows gets an id but no bytes (an empty entry).
    """
    mask = np.uint64(table.shape[0] - 1)
    base = np.uint64(start)  # unsigned indices: no negative-index wrap-around test per access
    for j in range(np.uint64(0), np.uint64(end - start)):
        i = base + j
        s = offsets[i]
        t = offsets[i + np.uint64(1)]
        h = hash_words(data, s, t)
        slot = h & mask
        while True:
            e = table[slot]
            if e < 0:
                table[slot] = n_entries
                un = np.uint64(n_entries)
                entry_hash[un] = h
                p = entry_offsets[un]
                dict_bytes += (t - s) + size_overhead
                if dict_bytes > limit:
                    # The entry that overflows is numbered but its bytes are not kept: the chunk falls back
                    # and never writes it (so a huge value is not copied, nor room reserved for it).
                    entry_offsets[un + np.uint64(1)] = p
                    ids[j] = n_entries
                    return n_entries + 1, dict_bytes, int(j)
                copy_bytes(entry_data, p, data, s, t - s)
                entry_offsets[un + np.uint64(1)] = p + (t - s)
                ids[j] = n_entries
                n_entries += 1
                break
            ue = np.uint64(e)
            if entry_hash[ue] == h and _bytes_equal(entry_data, entry_offsets[ue], entry_offsets[ue + np.uint64(1)],
                                                    data, s, t):
                ids[j] = e
                break
            slot = (slot + np.uint64(1)) & mask
    return n_entries, dict_bytes, -1


@jit
def bytes_rehash(entry_hash: np.ndarray, n_entries: int, table: np.ndarray) -> None:
    """Rebuild an empty (all -1) table from the stored hashes of the first n_entries entries."""
    mask = np.uint64(table.shape[0] - 1)
    for e in range(n_entries):
        slot = entry_hash[e] & mask
        while table[slot] >= 0:
            slot = (slot + np.uint64(1)) & mask
        table[slot] = e
