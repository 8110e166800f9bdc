"""Per-page bookkeeping steps that take plain numbers (kernels/plan/page_layout.py twins, on the stand-in device):
page and dictionary headers against the bytes assemble/pages.py serializes through the Python Thrift writer,
the stored-or-compressed choice against encode.chunk.page_sections, and the exclusive scan."""

from __future__ import annotations

import numpy as np
from gpuwrite.kernels.plan.page_layout import (
    F_COMPRESSED,
    F_COMPRESSED_SIZE,
    F_COUNT,
    F_DEF_LEN,
    F_REP_LEN,
    F_UNCOMPRESSED,
    HEADER_BOUND,
)
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from layout_cases import (
    CRCS,
    FILL,
    I32_MAX,
    data_page_fields,
    data_page_reference,
    dictionary_header_args,
    dictionary_reference,
    header_args,
    run_step,
)

from gpuwrite.backends.device import steps
from gpuwrite.backends.device.ops import Device
from gpuwrite.encode.chunk import ChunkOptions, page_sections

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LARGEST = [I32_MAX] * 6 + [1, I32_MAX, I32_MAX]  # every i32 field at its longest varint


def check_headers(out: np.ndarray, sizes: np.ndarray, expected: list[bytes]) -> None:
    """Item p's header is expected[p] at p * HEADER_BOUND, its size is right, and the rest of its region is
    untouched."""
    for p, want in enumerate(expected):
        assert sizes[p] == len(want) <= HEADER_BOUND, p
        region = out[p * HEADER_BOUND:(p + 1) * HEADER_BOUND]
        assert region[:len(want)].tobytes() == want, p
        assert (region[len(want):] == FILL).all(), p


@SETTINGS
@given(st.lists(data_page_fields(), min_size=1, max_size=12), st.lists(CRCS, min_size=12, max_size=12),
       st.booleans())
@example([LARGEST], [2**31] * 12, True)
@example([LARGEST], [2**32 - 1] * 12, True)
@example([[0] * F_COUNT], [I32_MAX] * 12, True)
def test_page_headers_equal_the_thrift_writer(rows: list[list[int]], crcs: list[int], has_crc: bool) -> None:
    n = len(rows)
    fields = np.array(rows, dtype=np.int64)
    crc = np.array(crcs[:n], dtype=np.int64)  # the CRC step's output: 0..2^32-1 as int64
    out, sizes = run_step(Device("standin"), steps.PAGE_HEADERS, n, header_args(fields, crc, has_crc), [3, 5])
    expected = [data_page_reference(r, c if has_crc else None) for r, c in zip(rows, crcs, strict=False)]
    check_headers(out, sizes, expected)


def test_largest_page_header_fits_the_bound() -> None:
    fields = np.array([LARGEST], dtype=np.int64)
    crc = np.array([2**31], dtype=np.int64)
    _, sizes = run_step(Device("standin"), steps.PAGE_HEADERS, 1, header_args(fields, crc, True), [3, 5])
    assert sizes[0] == len(data_page_reference(LARGEST, 2**31)) == 60  # every varint at its longest


DICT_FIELDS = st.tuples(st.integers(0, I32_MAX), st.integers(0, I32_MAX), st.integers(0, I32_MAX))


@SETTINGS
@given(st.lists(DICT_FIELDS, min_size=1, max_size=12), st.lists(CRCS, min_size=12, max_size=12), st.booleans())
@example([(I32_MAX, I32_MAX, I32_MAX)], [2**31] * 12, True)
@example([(0, 0, 0)], [0] * 12, False)
def test_dictionary_headers_equal_the_thrift_writer(rows: list[tuple[int, int, int]], crcs: list[int],
                                                    has_crc: bool) -> None:
    n = len(rows)
    fields = np.array(rows, dtype=np.int64).reshape(n, 3)
    crc = np.array(crcs[:n], dtype=np.int64)
    out, sizes = run_step(Device("standin"), steps.DICT_HEADERS, n, dictionary_header_args(fields, crc, has_crc),
                          [4, 6])
    expected = [dictionary_reference(r, c if has_crc else None) for r, c in zip(rows, crcs, strict=False)]
    check_headers(out, sizes, expected)


# -- stored or compressed ----------------------------------------------------------------------------------

PAGE_SIZES = st.tuples(st.integers(0, 3) | st.integers(0, 400), st.integers(0, 500), st.integers(0, 40),
                       st.integers(0, 40))  # values, compressed values, definition and repetition levels


def stored_case(pages: list[tuple[int, int, int, int]], identity: bool) -> list[np.ndarray]:
    """Run STORED over pages of (values, compressed values, def, rep) bytes: fields, stored, copy, body."""
    n = len(pages)
    sizes = np.array(pages, dtype=np.int64).reshape(n, 4)
    fields = np.full((n, F_COUNT), -3, dtype=np.int64)
    fields[:, F_DEF_LEN], fields[:, F_REP_LEN] = sizes[:, 2], sizes[:, 3]
    outs = [np.full(n, -7, dtype=np.int64) for _ in range(3)]
    got = run_step(Device("standin"), steps.STORED, n, [sizes[:, 0].copy(), sizes[:, 1].copy(), identity,
                                                        np.ascontiguousarray(fields.T), *outs], [3, 4, 5, 6])
    return [got[0].T, *got[1:]]  # fields one row per page again


@SETTINGS
@given(st.lists(PAGE_SIZES, min_size=1, max_size=20), st.booleans())
@example([(0, 0, 1, 2), (5, 5, 0, 0), (5, 4, 3, 0), (5, 6, 0, 0), (1, 0, 0, 0)], False)
@example([(0, 0, 1, 2), (5, 5, 0, 0), (5, 4, 3, 0)], True)
def test_stored_choice_follows_page_sections(pages: list[tuple[int, int, int, int]], identity: bool) -> None:
    fields, stored, copy, body = stored_case(pages, identity)
    for p, (n, packed, def_len, rep_len) in enumerate(pages):
        chunk = ChunkOptions(True, 1 << 20, lambda v, k=packed: bytes(k), identity, False, None)
        ref = page_sections((bytes(rep_len), bytes(def_len)), bytes(range(7)) * (n // 7) + bytes(n % 7), chunk)
        assert fields[p, F_COMPRESSED] == ref.compressed, p
        assert fields[p, F_UNCOMPRESSED] == ref.rep_len + ref.def_len + ref.values_len, p
        assert fields[p, F_COMPRESSED_SIZE] == body[p] == len(ref.body), p
        assert stored[p] == len(ref.body) - def_len - rep_len, p
        # raw values are copied into the stored buffer only when a codec ran and lost
        assert copy[p] == (0 if identity or ref.compressed else n), p
        assert (fields[p, :F_DEF_LEN] == -3).all() and fields[p, F_DEF_LEN] == def_len and \
            fields[p, F_REP_LEN] == rep_len, p
        if identity:
            assert fields[p, F_COMPRESSED] == (n > 0), p


# -- exclusive scan ----------------------------------------------------------------------------------------


@SETTINGS
@given(st.lists(st.integers(-2**40, 2**40), max_size=300), st.integers(0, 5))
@example([], 0)
def test_exclusive_scan_is_the_running_sum(values: list[int], spare: int) -> None:
    n = max(0, len(values) - spare)  # the scan may cover a prefix of its input
    src = np.array(values, dtype=np.int64)
    out = np.full(n + 3, -7, dtype=np.int64)
    (got,) = run_step(Device("standin"), steps.SCAN, 1, [src, n, out], [2])
    want = np.concatenate(([0], np.cumsum(src[:n], dtype=np.int64)))
    assert got[:n + 1].tolist() == want.tolist()
    assert (got[n + 1:] == -7).all()
