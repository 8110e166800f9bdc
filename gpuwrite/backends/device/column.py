"""One column chunk of the open row group on the GPU: its window on the device, its dictionary, its pages.

Pages arrive in batches (all pages the planner closed since the last batch); each batch is encoded with a
few launches covering all its pages: dictionary inserts (one thread per value), values and levels (one
thread per page, the CPU encoders' source compiled for CUDA), statistics, the gather of levels and stored
values into page bodies, and CRCs, then one copy of the bodies to the host. The encoding decisions are the
CPU path's (`encode.chunk.ChunkEncoder`), taken from the dictionary's first-occurrence numbering.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpuwrite.kernels import pages as K
from gpuwrite.kernels._jit import page_kernel
from gpuwrite.kernels.delta import delta_max_size
from gpuwrite.kernels.rle import rle_max_size

from ...assemble.pages import stamp_headers
from ...encode.bloom import BloomBuilder, chunk_bitset
from ...encode.chunk import (
    ChunkOptions,
    DictionaryPage,
    EncodedChunk,
    EncodedPage,
    PageSections,
    PageSpan,
)
from ...encode.dictionary import FIXED_ENTRY_SIZE, plain_page_of_values
from ...encode.rules import FALLBACK, as_signed32, keeps_dictionary, raw_value_bytes
from ...encode.stats import stats_at
from ...format.enums import Encoding
from ...leafdata import LeafData
from ...schema import BYTE_ARRAY, Leaf
from .arrays import DeviceArrays
from .codecs import HostCodec, NvcompCodec

# SPEC: DictionaryValuesWriter entry sizes, as in encode.dictionary.
_PLAIN_WIDTH = {"float": (4, 4), "double": (8, 8)}  # kind -> (bytes per value, NaN canonicalisation)
_DICT = int(Encoding.RLE_DICTIONARY)


def _next_pow2(n: int) -> int:
    """Smallest power of two >= n (at least 1024)."""
    p = 1024
    while p < n:
        p <<= 1
    return p


def _log2(n: int) -> int:
    """log2 of a power of two."""
    return n.bit_length() - 1


class DeviceColumn:
    """Encodes one column chunk's pages on the device, batch by batch, holding its dictionary between them."""

    def __init__(self, leaf: Leaf, chunk: ChunkOptions, arrays: DeviceArrays,
                 codec: HostCodec | NvcompCodec) -> None:
        self.leaf = leaf
        self.chunk = chunk
        self.arrays = arrays
        self.codec = codec
        self.use_dictionary = chunk.use_dictionary
        self.limit = chunk.dictionary_limit
        self.identity = chunk.identity
        self.checksum = chunk.checksum
        self.bloom_spec = chunk.bloom
        self.fixed = leaf.fixed_width
        self.host: LeafData | None = None
        self.dev: dict[str, Any] = {}
        self.pages: list[EncodedPage] = []
        self.page_entries: list[int] = []  # dictionary entries in use at the end of each page
        self.page_dict: list[bool] = []  # whether each page is dictionary-encoded
        self.page_values: list[tuple[int, int]] = []
        # dictionary state, over value indices 0..inserted of the window
        self.inserted = 0
        self.entries = 0
        self.dict_bytes = 0
        self.overflow = -1  # value index whose new entry pushed the dictionary past the limit
        self.table: Any = None
        self.slot_id: Any = None
        self.slot_of: Any = None
        self.ids: Any = None
        self.ent_cum: Any = None
        self.byte_cum: Any = None
        self.entry_first: list[Any] = []
        self._crc_table: Any = None
        self._keys_cache: Any = None
        self._hash_cache: Any = None

    # -- data --------------------------------------------------------------------------------------

    def load(self, data: LeafData) -> None:
        """Make the device hold this window: the row group's rows so far. A window only grows within a row group,
        so for levels and fixed-width values only the rows added since the last call are copied; byte values
        are copied again (joining windows rebases their offsets)."""
        if data is self.host:
            return
        a = self.arrays
        old = self.host
        self.host = data
        arrays: dict[str, np.ndarray] = {}
        if self.leaf.max_def > 0:
            arrays["levels"] = data.def_levels
        if self.leaf.max_rep > 0:
            assert data.rep is not None
            arrays["rep"] = data.rep
        if self.fixed:
            vals = data.value_array
            if self.leaf.kind == "float":
                vals = vals.view(np.int32)
            elif self.leaf.kind == "double":
                vals = vals.view(np.int64)
            arrays["values"] = vals
        else:
            arrays["offsets"] = data.byte_offsets
            arrays["data"] = data.byte_data
        for name, host in arrays.items():
            have = self.dev.get(name)
            if old is None or have is None or name in ("offsets", "data") or len(host) < len(have):
                self.dev[name] = a.to_device(host)
            elif len(host) > len(have):
                self.dev[name] = a.xp.concatenate([have, a.to_device(host[len(have):])])

    def _keys(self, hi: int) -> Any:
        """Dictionary keys (int64) of values 0..hi: integers as is, floats as canonical bits; computed once."""
        from gpuwrite.kernels import dictionary_cuda as D

        a, xp = self.arrays, self.arrays.xp
        cached = self._keys_cache
        done = 0 if cached is None else len(cached)
        if done >= hi:
            return cached
        if self.leaf.kind in ("float", "double"):
            b = a.empty(hi - done, np.int64)
            a.values(D.canonical_keys, hi - done, self.dev["values"], done, hi, self.leaf.kind == "float", b)
        else:
            b = self.dev["values"][done:hi].astype(xp.int64)
        self._keys_cache = b if cached is None else xp.concatenate([cached, b])
        return self._keys_cache

    def _hashes(self, hi: int) -> Any:
        """Hashes of the byte values 0..hi (one thread per value), each computed once."""
        from gpuwrite.kernels import dictionary_cuda as D

        a = self.arrays
        cached = self._hash_cache
        done = 0 if cached is None else len(cached)
        if done >= hi:
            return cached
        out = a.empty(hi, np.uint64)
        if cached is not None:
            out[:done] = cached
        a.values(D.hash_values, hi - done, self.dev["offsets"], self.dev["data"], done, hi, out)
        self._hash_cache = out
        return out

    # -- dictionary --------------------------------------------------------------------------------

    def _insert(self, lo: int, hi: int, table: Any, slot_of: Any, keys: Any, hashes: Any) -> None:
        """Insert value indices lo..hi into `table` (one thread per value)."""
        from gpuwrite.kernels import dictionary_cuda as D

        a = self.arrays
        if self.fixed:
            a.values(D.insert_fixed, hi - lo, keys, lo, hi, table, 64 - _log2(len(table)), slot_of)
        else:
            a.values(D.insert_bytes, hi - lo, self.dev["offsets"], self.dev["data"], hashes, lo, hi, table, slot_of)

    def _ensure_ids(self, hi: int) -> None:
        """Number the values up to `hi` in first-occurrence order, unless the dictionary already overflowed."""
        lo = self.inserted
        if hi <= lo or self.overflow >= 0:
            return
        from gpuwrite.kernels import dictionary_cuda as D

        a, xp = self.arrays, self.arrays.xp
        keys = self._keys(hi) if self.fixed else None
        hashes = None if self.fixed else self._hashes(hi)
        need = _next_pow2(2 * hi)
        slot_of = a.empty(hi, np.int64)
        if self.table is None or len(self.table) < need:
            table = a.full(need, -1, np.int64)
            slot_id = a.full(need, -1, np.int64)
            if lo > 0:  # rebuild: earlier values go back in first, so their first indices win again
                self._insert(0, lo, table, slot_of, keys, hashes)
                slot_id[slot_of[:lo]] = self.ids[:lo]
            self.table, self.slot_id = table, slot_id
        elif lo > 0:
            slot_of[:lo] = self.slot_of[:lo]
        self._insert(lo, hi, self.table, slot_of, keys, hashes)
        self.slot_of = slot_of
        first = a.empty(hi - lo, np.int64)
        a.values(D.first_of, hi - lo, slot_of, self.table, lo, hi, first)
        is_new = first == xp.arange(lo, hi, dtype=np.int64)
        count = xp.cumsum(is_new, dtype=np.int64)
        fresh = xp.nonzero(is_new)[0]
        self.slot_id[slot_of[lo + fresh]] = self.entries + count[fresh] - 1
        ids = self.slot_id[slot_of[lo:hi]].astype(np.int32)
        if self.fixed:
            sizes = is_new.astype(np.int64) * FIXED_ENTRY_SIZE[self.leaf.kind]
        else:
            overhead = 4 if self.leaf.physical == BYTE_ARRAY else 0
            off = self.dev["offsets"]
            sizes = xp.where(is_new, off[lo + 1:hi + 1] - off[lo:hi] + overhead, 0)
        byte_cum = self.dict_bytes + xp.cumsum(sizes, dtype=np.int64)
        over = xp.nonzero(byte_cum > self.limit)[0]
        if len(over):
            self.overflow = lo + int(over[0])
        ent_cum = self.entries + count
        self.ids = ids if lo == 0 else xp.concatenate([self.ids, ids])
        self.ent_cum = ent_cum if lo == 0 else xp.concatenate([self.ent_cum, ent_cum])
        self.byte_cum = byte_cum if lo == 0 else xp.concatenate([self.byte_cum, byte_cum])
        self.entry_first.append(fresh + lo)
        self.entries = int(ent_cum[-1])
        self.dict_bytes = int(byte_cum[-1])
        self.inserted = hi

    def _at_value(self, cum: Any, vb: np.ndarray) -> np.ndarray:
        """cum[vb - 1] per page (0 where vb == 0), copied to the host."""
        if cum is None or len(vb) == 0:
            return np.zeros(len(vb), dtype=np.int64)
        idx = self.arrays.to_device(np.clip(vb - 1, 0, len(cum) - 1))
        got = self.arrays.to_host(cum[idx]).astype(np.int64)
        return np.where(vb > 0, got, 0)

    # -- pages -------------------------------------------------------------------------------------

    def fell_back(self) -> bool:
        """Whether the chunk writes its next page without the dictionary."""
        return not self.use_dictionary or not all(self.page_dict)

    def _values_bound(self, dict_page: bool, n: int, nbytes: int, entries: int) -> int:
        """Upper bound on a page's values section."""
        if dict_page:
            width = 32 if entries == 0 else max(1, (entries - 1).bit_length())
            return rle_max_size(n, width) + 1
        kind = self.leaf.kind
        if kind == "bool":
            return (n + 7) // 8
        if kind in ("int32", "int64"):
            return delta_max_size(n)
        if kind in _PLAIN_WIDTH:
            return n * _PLAIN_WIDTH[kind][0]
        if kind == "int96":
            return nbytes
        return 2 * delta_max_size(n) + nbytes

    def _launch_values(self, sel: np.ndarray, dict_page: bool, va: np.ndarray, vb: np.ndarray,
                       entries: np.ndarray, *, off: np.ndarray, out: Any, sizes: np.ndarray) -> None:
        """Encode the values of the selected pages into `out` at `off` (one launch); fill their sizes."""
        if len(sel) == 0:
            return
        a = self.arrays
        d = self.dev
        n = len(sel)
        dva, dvb, doff = a.to_device(va[sel]), a.to_device(vb[sel]), a.to_device(off[sel])
        dsz = a.empty(n, np.int64)
        kind = self.leaf.kind
        if dict_page:
            a.pages(page_kernel(K.page_dict_ids), n, self.ids, dva, dvb, a.to_device(entries[sel]), out, doff, dsz)
        elif kind == "bool":
            a.pages(page_kernel(K.page_plain_bool), n, d["values"], dva, dvb, out, doff, dsz)
        elif kind in ("int32", "int64"):
            a.pages(page_kernel(K.page_delta), n, d["values"], dva, dvb, kind == "int32", out, doff, dsz)
        elif kind in _PLAIN_WIDTH:
            width, canon = _PLAIN_WIDTH[kind]
            a.pages(page_kernel(K.page_plain_fixed), n, d["values"], dva, dvb, width, canon, out, doff, dsz)
        elif kind == "int96":
            a.pages(page_kernel(K.page_copy_bytes), n, d["offsets"], d["data"], dva, dvb, out, doff, dsz)
        else:
            total = int(vb[sel].max()) if n else 0
            prefix, suffix = a.empty(total, np.int64), a.empty(total, np.int64)
            a.pages(page_kernel(K.page_delta_bytes), n, d["offsets"], d["data"], dva, dvb, prefix, suffix, out,
                    doff, dsz)
        sizes[sel] = a.to_host(dsz)

    def encode(self, ranges: list[tuple[int, int]]) -> None:
        """Encode the chunk's next pages, rows a..b of the window for each (a, b), as one batch."""
        host = self.host
        assert host is not None
        if not ranges:
            return
        a = self.arrays
        rows_a = np.array([r[0] for r in ranges], dtype=np.int64)
        rows_b = np.array([r[1] for r in ranges], dtype=np.int64)
        va = np.array([host.value_index(int(r)) for r in rows_a], dtype=np.int64)
        vb = np.array([host.value_index(int(r)) for r in rows_b], dtype=np.int64)
        n = len(ranges)
        fell = self.fell_back()
        if not fell:
            self._ensure_ids(int(vb.max()))
        entries = self._at_value(self.ent_cum, vb) if not fell else np.zeros(n, dtype=np.int64)
        use_dict = np.zeros(n, dtype=bool)
        for p in range(n):
            if fell:
                break
            if 0 <= self.overflow < vb[p]:
                fell = True
                break
            use_dict[p] = True
        entries = np.where(use_dict, entries, 0)
        nbytes = (self._value_bytes(va, vb) if not self.fixed else np.zeros(n, dtype=np.int64))
        first_test = bool(use_dict[0] and rows_a[0] == 0)
        bounds = np.array([self._values_bound(bool(use_dict[p]), int(vb[p] - va[p]), int(nbytes[p]),
                                              int(entries[p])) for p in range(n)], dtype=np.int64)
        if first_test:  # room for the fallback encoding, should the first page's test send the batch there
            for q in np.nonzero(use_dict)[0].tolist():
                bounds[q] = max(bounds[q], self._values_bound(False, int(vb[q] - va[q]), int(nbytes[q]), 0))
        off = np.concatenate(([0], np.cumsum(bounds)[:-1])).astype(np.int64)
        out = a.empty(int(bounds.sum()) + 1, np.uint8)
        sizes = np.zeros(n, dtype=np.int64)
        self._launch_values(np.nonzero(use_dict)[0], True, va, vb, entries, off=off, out=out, sizes=sizes)
        self._launch_values(np.nonzero(~use_dict)[0], False, va, vb, entries, off=off, out=out, sizes=sizes)
        if first_test:
            # SPEC: DictionaryValuesWriter.isCompressionSatisfying on the first page: keep iff
            # encoded + dictionary bytes < raw bytes; otherwise the whole chunk falls back from here.
            dict_bytes = int(self._at_value(self.byte_cum, vb[:1])[0])
            if not keeps_dictionary(int(sizes[0]), dict_bytes, raw_value_bytes(self.leaf, host, int(va[0]),
                                                                                  int(vb[0]))):
                redo = np.nonzero(use_dict)[0]
                use_dict[:] = False
                entries[:] = 0
                self._launch_values(redo, False, va, vb, entries, off=off, out=out, sizes=sizes)
        ea = np.array([host.entry_index(int(r)) for r in rows_a], dtype=np.int64)
        eb = np.array([host.entry_index(int(r)) for r in rows_b], dtype=np.int64)
        rep, rep_off, rep_len = self._levels("rep", self.leaf.max_rep, ea, eb)
        levels, lev_off, lev_len = self._levels("levels", self.leaf.max_def, ea, eb)
        stored, stored_len, compressed = self._compress(out, off, sizes)
        body_len = rep_len + lev_len + stored_len
        body_off = np.concatenate(([0], np.cumsum(body_len)[:-1])).astype(np.int64)
        bodies = a.empty(int(body_len.sum()) + 1, np.uint8)
        stored_off = np.concatenate(([0], np.cumsum(stored_len)[:-1])).astype(np.int64)
        dbody_off, dbody_len = a.to_device(body_off), a.to_device(body_len)
        a.pages(page_kernel(K.page_gather), n, rep, a.to_device(rep_off), a.to_device(rep_len), levels,
                a.to_device(lev_off), a.to_device(lev_len), stored, a.to_device(stored_off), a.to_device(stored_len),
                bodies, dbody_off)
        crcs = None
        if self.checksum:
            if self._crc_table is None:
                self._crc_table = a.to_device(K.crc32_table())
            dcrc = a.empty(n, np.int64)
            a.pages(page_kernel(K.page_crc32), n, bodies, dbody_off, dbody_len, self._crc_table, dcrc)
            crcs = a.to_host(dcrc)
        imin, imax, same = self._extremes(va, vb)
        nans, tops = self._nans(va, vb)
        host_bodies = a.to_host(bodies)
        first_row = sum(p.num_rows for p in self.pages)
        new_pages = []
        for p in range(n):
            span = PageSpan(int(rows_a[p]), int(rows_b[p]), int(ea[p]), int(eb[p]), int(va[p]), int(vb[p]))
            encoding = _DICT if use_dict[p] else int(FALLBACK[self.leaf.kind])
            crc = as_signed32(int(crcs[p])) if crcs is not None else None
            body = host_bodies[body_off[p]:body_off[p] + body_len[p]].tobytes()
            sections = PageSections(body, int(rep_len[p]), int(lev_len[p]), int(sizes[p]), bool(compressed[p]), crc)
            st = stats_at(self.leaf, host, span.vb - span.va, span.num_nulls, imin=int(imin[p]), imax=int(imax[p]),
                          same=bool(same[p]), nan=(int(nans[p]), int(tops[p])))
            new_pages.append(EncodedPage.of(self.leaf, host, span, first_row=first_row, encoding=encoding,
                                            sections=sections, stats=st))
            self.page_entries.append(int(entries[p]) if use_dict[p] else 0)
            self.page_dict.append(bool(use_dict[p]))
            self.page_values.append((span.va, span.vb))
            first_row += span.num_rows
        stamp_headers(new_pages)
        self.pages.extend(new_pages)

    def _levels(self, name: str, max_level: int, ea: np.ndarray, eb: np.ndarray) -> tuple[Any, np.ndarray, np.ndarray]:
        """One level section per page (repetition or definition): (device buffer, offsets, lengths)."""
        a = self.arrays
        n = len(ea)
        if max_level == 0:
            return a.empty(1, np.uint8), np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
        width = max_level.bit_length()
        bound = np.array([rle_max_size(int(eb[p] - ea[p]), width) for p in range(n)], dtype=np.int64)
        off = np.concatenate(([0], np.cumsum(bound)[:-1])).astype(np.int64)
        buf = a.empty(int(bound.sum()) + 1, np.uint8)
        dsz = a.empty(n, np.int64)
        a.pages(page_kernel(K.page_levels), n, self.dev[name], a.to_device(ea), a.to_device(eb), width, buf,
                a.to_device(off), dsz)
        return buf, off, a.to_host(dsz).astype(np.int64)

    def _value_bytes(self, va: np.ndarray, vb: np.ndarray) -> np.ndarray:
        """Bytes of the values of each page (byte kinds)."""
        assert self.host is not None
        off = self.host.byte_offsets
        return (off[vb] - off[va]).astype(np.int64)

    def _compress(self, out: Any, off: np.ndarray, sizes: np.ndarray) -> tuple[Any, np.ndarray, np.ndarray]:
        """Stored values sections: compressed where that is smaller; (buffer, lengths, compressed flags)."""
        a, xp = self.arrays, self.arrays.xp
        n = len(sizes)
        sections = [out[int(off[p]):int(off[p] + sizes[p])] for p in range(n)]
        compressed = sizes > 0
        if self.identity:
            stored = sections
        else:
            todo = [p for p in range(n) if sizes[p] > 0]
            packed = dict(zip(todo, self.codec.compress([sections[p] for p in todo]), strict=True))
            stored = []
            for p in range(n):
                got = packed.get(p)
                if got is not None and len(got) < sizes[p]:
                    stored.append(got)
                else:
                    stored.append(sections[p])
                    compressed[p] = False
        lengths = np.array([len(s) for s in stored], dtype=np.int64)
        nonempty = [s for s in stored if len(s)]
        buffer = xp.concatenate(nonempty) if nonempty else a.empty(1, np.uint8)
        return buffer, lengths, compressed

    def _extremes(self, va: np.ndarray, vb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per page: indices of the min and max value and whether all values are equal (host arrays)."""
        a = self.arrays
        n = len(va)
        dva, dvb = a.to_device(va), a.to_device(vb)
        imin, imax, same = a.empty(n, np.int64), a.empty(n, np.int64), a.full(n, 1, np.int64)
        kind = self.leaf.kind
        if kind in ("bool", "int32", "int64"):
            a.pages(page_kernel(K.page_int_minmax), n, self.dev["values"], dva, dvb, imin, imax)
        elif kind in ("float", "double"):
            a.pages(page_kernel(K.page_float_minmax), n, self.dev["values"], dva, dvb, kind == "float", imin, imax)
        else:
            a.pages(page_kernel(K.page_bytes_minmax), n, self.dev["offsets"], self.dev["data"], dva, dvb,
                    self.leaf.is_decimal, imin, imax, same)
        return a.to_host(imin), a.to_host(imax), a.to_host(same)

    def _nans(self, va: np.ndarray, vb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per page: NaN count and index of the largest non-NaN value (float / double; zeros and -1 otherwise)."""
        n = len(va)
        kind = self.leaf.kind
        if kind not in ("float", "double"):
            return np.zeros(n, dtype=np.int64), np.full(n, -1, dtype=np.int64)
        a = self.arrays
        nans, tops = a.empty(n, np.int64), a.empty(n, np.int64)
        a.pages(page_kernel(K.page_float_nans), n, self.dev["values"], a.to_device(va), a.to_device(vb),
                kind == "float", nans, tops)
        return a.to_host(nans), a.to_host(tops)

    # -- chunk -------------------------------------------------------------------------------------

    def truncate(self, keep: int) -> None:
        """Forget every page after the first `keep` (the row group ended before them)."""
        del self.pages[keep:]
        del self.page_entries[keep:]
        del self.page_dict[keep:]
        del self.page_values[keep:]

    def finish(self) -> EncodedChunk:
        """The chunk: dictionary page (first-occurrence entries used by its dictionary pages), data pages,
        bloom filter."""
        host = self.host
        bloom = None
        if self.bloom_spec is not None and host is not None:
            builder = BloomBuilder(self.leaf, self.bloom_spec)
            for va, vb in self.page_values:
                builder.add(host, va, vb)
            bloom = chunk_bitset(builder, [p.encoding for p in self.pages])
        count = max((e for e in self.page_entries), default=0)
        if count == 0 or host is None:
            return EncodedChunk(None, self.pages, bloom)
        first = self.arrays.to_host(self.arrays.xp.concatenate(self.entry_first)[:count])
        raw = plain_page_of_values(self.leaf, host, first)
        body = None
        if not self.identity:
            body = self.arrays.to_host(self.codec.compress([self.arrays.to_device(
                np.frombuffer(raw, dtype=np.uint8))])[0]).tobytes()
        return EncodedChunk(DictionaryPage.build(raw, count, self.chunk, body), self.pages, bloom)
