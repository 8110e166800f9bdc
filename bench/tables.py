"""The tables bench/write_bench.py writes: store_sales (TPC-DS), string-heavy, wide, nested, timeseries.

Each builder is vectorised (NumPy and Arrow compute, no per-row Python), deterministic for a seed, and takes
a row count, so a quick run can use a small one. Sizes at scale 1:
- `store_sales`: TPC-DS SF1, 2,880,404 rows, from `gpuwrite.tools.demo_data` (the project's generator), or from
  DuckDB's dsdgen (`duckdb-extension-tpcds`) with the identifier columns cast to INT as in the TPC-DS spec;
- `strings`: 1,000,000 rows of a URL, a name from 5,000, free text of 3..12 words, a 4-value code
  (low cardinality), a 16-hex-digit SKU (high cardinality) and a double;
- `wide`: 200,000 rows x 64 doubles, four kinds of column in turn (random, cents, 100 distinct values,
  a random walk with 5% nulls), and 16 int64 counters (running totals of small random increments);
- `nested`: 300,000 orders, a list of 0..5 structs (sku long, price double, name string) and a
  string -> long map of 0..3 entries;
- `timeseries`: 2,000,000 readings of 1,000 sensors in time order: a zone-less microsecond timestamp, the sensor id
  (int32), a float32 reading (a random walk per sensor) and a status string (mostly "ok").
"""

from __future__ import annotations

import glob
import importlib
import importlib.util
import os
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

REPO_ROOT = Path(__file__).resolve().parent.parent

ROWS = {"store_sales": 2_880_404, "strings": 1_000_000, "wide": 200_000, "nested": 300_000,
        "timeseries": 2_000_000}
"""Rows of each table at scale 1."""

WIDE_COLUMNS = 64
WIDE_COUNTERS = 16
SENSORS = 1_000
NAMES = 5_000
VOCABULARY = 2_000


def load_demo_data() -> ModuleType:
    """Import gpuwrite.tools.demo_data, or load the file alone when the gpuwrite package itself fails to import."""
    try:
        return importlib.import_module("gpuwrite.tools.demo_data")
    except Exception:
        path = REPO_ROOT / "gpuwrite" / "demo_data.py"
        spec = importlib.util.spec_from_file_location("_bench_demo_data", path)
        if spec is None or spec.loader is None:
            raise
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module


def store_sales(rows: int, seed: int) -> pa.Table:
    """store_sales from the project's generator (TPC-DS shape, 4.5% nulls in every nullable column)."""
    return load_demo_data().store_sales_table(rows, seed=seed)


def store_sales_dsdgen(rows: int, seed: int) -> pa.Table:
    """store_sales from DuckDB's dsdgen at the scale factor giving about `rows` rows, cut to `rows`.

    Needs `duckdb-extension-tpcds` (loaded from its pip package, offline). dsdgen has no seed: `seed` is unused.
    """
    import duckdb
    import duckdb_extension_tpcds  # type: ignore[import-not-found]

    found = glob.glob(os.path.join(os.path.dirname(duckdb_extension_tpcds.__file__), "extensions", "*",
                                   "*.duckdb_extension"))
    if not found:
        raise RuntimeError("duckdb-extension-tpcds has no extension file")
    con = duckdb.connect()
    con.execute(f"LOAD '{found[0]}'")
    sf = max(0.01, rows / ROWS["store_sales"])
    con.execute(f"CALL dsdgen(sf={sf!r})")
    table = con.execute(f"SELECT * FROM store_sales LIMIT {int(rows)}").to_arrow_table()
    con.close()
    schema = load_demo_data().STORE_SALES_SCHEMA
    return table.cast(pa.schema([pa.field(f.name, f.type, nullable=True) for f in schema]))


def strings(rows: int, seed: int) -> pa.Table:
    """A string-heavy table: URLs, names from 5,000, free text of 3..12 words, a 4-value code, a SKU, a double."""
    rng = np.random.default_rng(seed)
    syllables = np.array(["ka", "lo", "mi", "ra", "tes", "vin", "do", "pel", "sar", "qu", "ent", "bor"])

    def words(count: int, low: int, high: int) -> np.ndarray:
        """`count` pronounceable words of low..high syllables."""
        out = np.full(count, "", dtype=object)
        lengths = rng.integers(low, high + 1, size=count)
        for k in range(high):
            pick = syllables[rng.integers(0, len(syllables), size=count)]
            out = np.where(lengths > k, out + pick, out)
        return out.astype(str)

    firsts, lasts = words(NAMES, 2, 3), words(NAMES, 2, 4)
    names = pa.array(np.char.add(np.char.add(np.char.capitalize(firsts), " "), np.char.capitalize(lasts)))
    vocabulary = pa.array(words(VOCABULARY, 1, 4))
    # Zipf-like word frequencies, as in prose: a few words are common, most are rare.
    weights = 1.0 / np.arange(1, VOCABULARY + 1)
    counts = rng.integers(3, 13, size=rows)
    offsets = np.zeros(rows + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    word_ids = rng.choice(VOCABULARY, size=int(offsets[-1]), p=weights / weights.sum())
    text = pc.binary_join(pa.ListArray.from_arrays(pa.array(offsets), vocabulary.take(pa.array(word_ids))), " ")
    hosts = pa.array([f"www.{w}.com" for w in words(200, 2, 3)])
    paths = vocabulary.take(pa.array(rng.integers(0, VOCABULARY, size=rows)))
    ids = pc.cast(pa.array(rng.integers(1, 10_000_000, size=rows)), pa.string())
    url = pc.binary_join_element_wise(
        "https://", hosts.take(pa.array(rng.integers(0, len(hosts), size=rows))), "/", paths, "/item?id=", ids, "")
    sku = _hex16(rng.integers(0, 2**62, size=rows, dtype=np.uint64))
    code = pa.array(np.array(["NEW", "SHIPPED", "RETURNED", "CANCELLED"])[rng.integers(0, 4, size=rows)])
    return pa.table({
        "url": url,
        "name": names.take(pa.array(rng.integers(0, NAMES, size=rows))),
        "comment": text,
        "status": code,
        "sku": sku,
        "amount": pa.array(np.round(rng.lognormal(3, 1, size=rows), 2)),
    })


def wide(rows: int, seed: int, columns: int = WIDE_COLUMNS, counters: int = WIDE_COUNTERS) -> pa.Table:
    """`columns` doubles of four kinds in turn (random, cents, 100 distinct values, a random walk with nulls),
    then `counters` int64 running totals of small random increments."""
    rng = np.random.default_rng(seed)
    out: dict[str, pa.Array] = {}
    for i in range(columns):
        kind = i % 4
        if kind == 0:
            values = rng.standard_normal(rows)
            mask = None
        elif kind == 1:
            values = rng.integers(0, 100_000, size=rows) / 100.0
            mask = None
        elif kind == 2:
            values = (rng.standard_normal(100) * 1000)[rng.integers(0, 100, size=rows)]
            mask = None
        else:
            values = np.cumsum(rng.standard_normal(rows))
            mask = rng.random(rows) < 0.05
        out[f"d{i:03d}"] = pa.array(values, mask=mask)
    for i in range(counters):
        out[f"n{i:02d}"] = pa.array(np.cumsum(rng.integers(0, 1 << (2 + i % 8), size=rows, dtype=np.int64)))
    return pa.table(out)


def timeseries(rows: int, seed: int, sensors: int = SENSORS) -> pa.Table:
    """Sensor readings in time order: a local timestamp (us, no zone), sensor id, a float32 random walk per
    sensor, a status."""
    rng = np.random.default_rng(seed)
    start = np.datetime64("2026-01-01T00:00:00", "us").astype(np.int64)
    # one reading per sensor per second, each a few ms late: time order, nearly regular steps
    ticks = np.arange(rows, dtype=np.int64) // sensors * 1_000_000 + rng.integers(0, 5_000, size=rows)
    sensor = (np.arange(rows) % sensors).astype(np.int32)
    steps = rng.standard_normal(rows).astype(np.float32).reshape(-1)
    level = np.zeros(rows, dtype=np.float32)
    for s in range(min(sensors, rows)):
        level[s::sensors] = np.cumsum(steps[s::sensors]) + np.float32(20 + s % 50)
    status = np.array(["ok", "warn", "fail", "offline"])[
        np.searchsorted(np.array([0.97, 0.99, 0.997]), rng.random(rows))]
    return pa.table({
        "ts": pa.array(start + ticks, type=pa.timestamp("us")),
        "sensor_id": pa.array(sensor),
        "value": pa.array(level),
        "status": pa.array(status),
    })


def nested(rows: int, seed: int) -> pa.Table:
    """Orders: an id, a list of 0..5 structs (sku long, price double, name string), a string -> long map."""
    rng = np.random.default_rng(seed)
    item_counts = rng.integers(0, 6, size=rows)
    item_offsets = np.zeros(rows + 1, dtype=np.int32)
    np.cumsum(item_counts, out=item_offsets[1:])
    n_items = int(item_offsets[-1])
    products = pa.array([f"product {i}" for i in range(1_000)])
    items = pa.StructArray.from_arrays(
        [pa.array(rng.integers(1, 200_000, size=n_items)),
         pa.array(np.round(rng.lognormal(2, 1, size=n_items), 2)),
         products.take(pa.array(rng.integers(0, len(products), size=n_items)))],
        names=["sku", "price", "name"])
    attr_counts = rng.integers(0, 4, size=rows)
    attr_offsets = np.zeros(rows + 1, dtype=np.int32)
    np.cumsum(attr_counts, out=attr_offsets[1:])
    n_attrs = int(attr_offsets[-1])
    # distinct keys within a map: entry k of a map takes key (start + k) mod 8
    keys = pa.array(["color", "size", "gift", "channel", "region", "priority", "campaign", "coupon"])
    position = np.arange(n_attrs) - np.repeat(attr_offsets[:-1], attr_counts)
    start = np.repeat(rng.integers(0, 8, size=rows), attr_counts)
    attrs = pa.MapArray.from_arrays(pa.array(attr_offsets), keys.take(pa.array((start + position) % 8)),
                                    pa.array(rng.integers(0, 1_000, size=n_attrs)))
    return pa.table({
        "order_id": pa.array(np.arange(1, rows + 1, dtype=np.int64)),
        "items": pa.ListArray.from_arrays(pa.array(item_offsets), items),
        "attrs": attrs,
    })


def _hex16(values: np.ndarray) -> pa.Array:
    """Each uint64 as a 16-digit lowercase hex string, built as one Arrow buffer."""
    digits = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
    shifts = np.arange(60, -4, -4, dtype=np.uint64)
    chars = digits[((values[:, None] >> shifts) & np.uint64(15)).astype(np.intp)]
    offsets = np.arange(0, 16 * (len(values) + 1), 16, dtype=np.int32)
    return pa.Array.from_buffers(pa.string(), len(values), [None, pa.py_buffer(offsets), pa.py_buffer(chars)])


BUILDERS: dict[str, Callable[[int, int], pa.Table]] = {
    "store_sales": store_sales,
    "strings": strings,
    "wide": wide,
    "nested": nested,
    "timeseries": timeseries,
}
