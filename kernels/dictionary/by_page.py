"""Hash-based dictionary build in first-occurrence order, page by page, with parquet-java's byte accounting.

Ids are assigned in the order values are first seen (parquet-java's linked hash maps do the same), so the
dictionary is deterministic. Insertion stops at the value whose new entry pushes the dictionary's byte size
past the limit: that is where parquet-java falls back, and no later id is ever needed.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit, jit_inline
from ..encode.byteops import copy_bytes, load_tail, load_u64, low_bytes_mask, same_bytes

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
def _mix_word(h: np.uint64, w: np.uint64) -> np.uint64:
    """One step of the word hash: fold a word into the running hash."""
    h = (h ^ w) * _GOLDEN
    return h ^ (h >> np.uint64(29))


@jit_inline
def _hashed(data: np.ndarray, us: np.uint64, ue: np.uint64, w0: np.uint64, w1: np.uint64) -> tuple:
    """(hash, w0, w1) of data[us:ue] given its first two words w0, w1 (zero-padded past the end): the words
    after them folded in a word at a time, then the length (hash_u64 finalises)."""
    h = _mix_word(_mix_word(np.uint64(0xCBF29CE484222325), w0), w1)
    i = us + np.uint64(16)
    while i < ue:
        h = _mix_word(h, load_tail(data, i, min(ue - i, np.uint64(8))))
        i += np.uint64(8)
    return hash_u64(h ^ (ue - us)), w0, w1


@jit_inline
def head_words(data: np.ndarray, start: int, end: int) -> tuple:
    """(hash, first word, second word) of data[start:end]: the words are the value's bytes 0..7 and 8..15 as
    little-endian words, zero past its end (masked word loads: no loop or branch on the length of a value of
    up to 16 bytes; a byte tail's exit, at mixed lengths as in a column of codes, mispredicted at every value).
    The hash reads every byte (a word at a time) and the length."""
    us = np.uint64(start)
    ue = np.uint64(end)
    n = ue - us
    k0 = min(n, np.uint64(8))
    return _hashed(data, us, ue, load_tail(data, us, k0), load_tail(data, us + np.uint64(8), min(n, np.uint64(16)) - k0))


@jit_inline
def _words(data: np.ndarray, start: int, end: int) -> tuple:
    """head_words' two words of data[start:end] without the hash (`_hashed` adds it)."""
    us = np.uint64(start)
    n = np.uint64(end) - us
    k0 = min(n, np.uint64(8))
    return load_tail(data, us, k0), load_tail(data, us + np.uint64(8), min(n, np.uint64(16)) - k0)


@jit_inline
def _words_inside(data: np.ndarray, start: int, end: int) -> tuple:
    """_words of a value that starts at least 16 bytes before the end of `data`: loaded without load_tail's
    bounds test (a third of a short value's hashing time)."""
    us = np.uint64(start)
    n = np.uint64(end) - us
    k0 = min(n, np.uint64(8))
    return (load_u64(data, us) & low_bytes_mask(k0),
            load_u64(data, us + np.uint64(8)) & low_bytes_mask(min(n, np.uint64(16)) - k0))


@jit_inline
def hash_words(data: np.ndarray, start: int, end: int) -> np.uint64:
    """A hash of data[start:end] a word at a time (bytes_insert's own: one multiply per 8 bytes where hash_bytes'
    FNV-1a chains one per byte; head_words' first item). Only this module's tables use it (ids follow first
    occurrence, so the hash never shows in a file); row_group.py keeps hash_bytes."""
    return head_words(data, start, end)[0]


@jit
def _inside_end(offsets: np.ndarray, data: np.ndarray, start: int, end: int) -> int:
    """The first value of start..end from which on values may start within 16 bytes of the end of `data`
    (_words_inside serves the values before it); offsets ascend, so a scan back from `end`."""
    last = np.int64(data.shape[0]) - 16
    k = end
    while k > start and offsets[k - 1] > last:
        k -= 1
    return k


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
                 entry_head: np.ndarray, entry_offsets: np.ndarray, entry_data: np.ndarray,
                 n_entries: int, size_overhead: int, dict_bytes: int, limit: int, ids: np.ndarray) -> tuple:
    """Byte-string version of fixed_insert: values are data[offsets[i]:offsets[i+1]].

    New entries are appended to entry_data / entry_offsets (the caller sizes them: at most limit - dict_bytes
    more bytes are copied); each costs its length plus `size_overhead` (4 for BINARY's length prefix, 0 for
    FIXED_LEN_BYTE_ARRAY and INT96). The entry that overflows gets an id but no bytes (an empty entry).
    `entry_head` (uint64[capacity, 3]) holds each entry's head_words: a value matches an entry when hash, both
    words and length are equal (one test, no branch on the length), and only a value longer than 16 bytes
    compares the rest of its bytes. A value equal to the one before it (a run, as in a column of statuses that
    are mostly "ok") takes that one's id from its words and length, without hashing or a table lookup.
    """
    mask = np.uint64(table.shape[0] - 1)
    base = np.uint64(start)  # unsigned indices: no negative-index wrap-around test per access
    inside = np.uint64(_inside_end(offsets, data, start, end) - start)
    # the value before: its words, length (none matches the first value's), start and id
    pw0 = pw1 = np.uint64(0)
    pn = np.uint64(1) << np.uint64(63)
    ps = offsets[base]
    pid = -1
    for j in range(np.uint64(0), np.uint64(end - start)):
        i = base + j
        s = offsets[i]
        t = offsets[i + np.uint64(1)]
        n = np.uint64(t - s)
        if j < inside:
            w0, w1 = _words_inside(data, s, t)
        else:
            w0, w1 = _words(data, s, t)
        if ((pw0 ^ w0) | (pw1 ^ w1) | (pn ^ n)) == np.uint64(0):
            rest = max(n, np.uint64(16)) - np.uint64(16)
            if rest == np.uint64(0) or same_bytes(data, ps + 16, data, s + 16, rest):
                ids[j] = pid
                continue
        h = _hashed(data, np.uint64(s), np.uint64(t), w0, w1)[0]
        pw0, pw1, pn, ps = w0, w1, n, s
        slot = h & mask
        while True:
            e = table[slot]
            if e < 0:
                table[slot] = n_entries
                un = np.uint64(n_entries)
                entry_head[un, 0] = h
                entry_head[un, 1] = w0
                entry_head[un, 2] = w1
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
                pid = n_entries
                n_entries += 1
                break
            ue = np.uint64(e)
            a0 = entry_offsets[ue]
            length = np.uint64(entry_offsets[ue + np.uint64(1)] - a0)
            if ((entry_head[ue, 0] ^ h) | (entry_head[ue, 1] ^ w0) | (entry_head[ue, 2] ^ w1)
                    | (length ^ n)) == np.uint64(0):
                rest = max(n, np.uint64(16)) - np.uint64(16)
                if rest == np.uint64(0) or same_bytes(entry_data, a0 + 16, data, s + 16, rest):
                    ids[j] = e
                    pid = e
                    break
            slot = (slot + np.uint64(1)) & mask
    return n_entries, dict_bytes, -1


@jit
def bytes_rehash(entry_head: np.ndarray, n_entries: int, table: np.ndarray) -> None:
    """Rebuild an empty (all -1) table from the stored hashes (entry_head[:, 0]) of the first n_entries
    entries."""
    mask = np.uint64(table.shape[0] - 1)
    for e in range(n_entries):
        slot = entry_head[e, 0] & mask
        while table[slot] >= 0:
            slot = (slot + np.uint64(1)) & mask
        table[slot] = e
