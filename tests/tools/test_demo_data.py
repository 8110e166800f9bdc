"""Tests for the store_sales-shaped demo table: shape, schema, nulls, determinism, ranges and decimal scale."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from gpuwrite.tools.demo_data import (
    AMOUNT_COLUMNS,
    DEMO_ROWS,
    STORE_SALES_SCHEMA,
    decimal_array_from_unscaled,
    store_sales_table,
)

ROWS = 200_000

EXPECTED_COLUMNS = [
    ("ss_sold_date_sk", pa.int32()),
    ("ss_sold_time_sk", pa.int32()),
    ("ss_item_sk", pa.int32()),
    ("ss_customer_sk", pa.int32()),
    ("ss_cdemo_sk", pa.int32()),
    ("ss_hdemo_sk", pa.int32()),
    ("ss_addr_sk", pa.int32()),
    ("ss_store_sk", pa.int32()),
    ("ss_promo_sk", pa.int32()),
    ("ss_ticket_number", pa.int64()),
    ("ss_quantity", pa.int32()),
] + [(name, pa.decimal128(7, 2)) for name in AMOUNT_COLUMNS]

NOT_NULL = {"ss_item_sk", "ss_ticket_number"}

RANGES = {
    "ss_sold_date_sk": (2_450_816, 2_452_642),
    "ss_sold_time_sk": (28_800, 75_599),
    "ss_item_sk": (1, 18_000),
    "ss_customer_sk": (1, 100_000),
    "ss_cdemo_sk": (1, 1_920_800),
    "ss_hdemo_sk": (1, 7_200),
    "ss_addr_sk": (1, 50_000),
    "ss_store_sk": (1, 12),
    "ss_promo_sk": (1, 300),
    "ss_quantity": (1, 100),
}


@pytest.fixture(scope="module")
def table() -> pa.Table:
    """Build the table once for the module, at a size that keeps the tests fast."""
    return store_sales_table(ROWS)


def _valid(table: pa.Table, *names: str) -> dict[str, list]:
    """Return the named columns as Python lists over the rows where all of them are non-null."""
    keep = np.ones(table.num_rows, dtype=bool)
    for name in names:
        keep &= pc.is_valid(table[name]).to_numpy(zero_copy_only=False)
    filtered = table.select(list(names)).filter(pa.array(keep))
    return {name: filtered[name].to_pylist() for name in names}


def test_demo_rows_is_tpcds_sf1() -> None:
    """DEMO_ROWS is the row count of store_sales at scale factor 1."""
    assert DEMO_ROWS == 2_880_404


def test_shape_and_schema(table: pa.Table) -> None:
    """The table has the requested rows and TPC-DS columns, types, order and nullability."""
    assert table.num_rows == ROWS
    assert [(f.name, f.type) for f in table.schema] == EXPECTED_COLUMNS
    assert table.schema.equals(STORE_SALES_SCHEMA)
    for field in table.schema:
        assert field.nullable == (field.name not in NOT_NULL), field.name
    table.validate(full=True)


@pytest.mark.parametrize("rows", [0, 1, 7, 17])
def test_tiny_sizes(rows: int) -> None:
    """Small and empty tables come out valid with the same schema."""
    small = store_sales_table(rows)
    assert small.num_rows == rows
    assert small.schema.equals(STORE_SALES_SCHEMA)
    small.validate(full=True)


def test_negative_rows_rejected() -> None:
    """A negative row count is an error, not an empty table."""
    with pytest.raises(ValueError):
        store_sales_table(-1)


def test_null_fractions(table: pa.Table) -> None:
    """Every nullable column has 3.5%..5.5% nulls; the key columns have none."""
    for name in table.column_names:
        fraction = table[name].null_count / table.num_rows
        if name in NOT_NULL:
            assert fraction == 0, name
        else:
            assert 0.035 <= fraction <= 0.055, (name, fraction)


def test_null_masks_differ_between_columns(table: pa.Table) -> None:
    """Nulls are drawn per column, so two columns do not share their null positions."""
    a = pc.is_null(table["ss_customer_sk"]).to_numpy(zero_copy_only=False)
    b = pc.is_null(table["ss_net_profit"]).to_numpy(zero_copy_only=False)
    both = np.count_nonzero(a & b) / len(a)
    assert both < 0.01


def test_deterministic_for_a_seed() -> None:
    """The same seed gives the same table; another seed gives another."""
    first = store_sales_table(20_000, seed=7)
    assert first.equals(store_sales_table(20_000, seed=7))
    assert not first.equals(store_sales_table(20_000, seed=8))


def test_default_seed_is_42(table: pa.Table) -> None:
    """The default seed is 42."""
    assert table.equals(store_sales_table(ROWS, seed=42))


def test_key_ranges_and_cardinalities(table: pa.Table) -> None:
    """Surrogate keys stay in their TPC-DS SF1 ranges with roughly SF1-like distinct counts."""
    for name, (low, high) in RANGES.items():
        assert pc.min(table[name]).as_py() >= low, name
        assert pc.max(table[name]).as_py() <= high, name
    distinct = {name: pc.count_distinct(table[name]).as_py() for name in RANGES}
    assert 1_800 <= distinct["ss_sold_date_sk"] <= 1_827
    assert distinct["ss_item_sk"] > 17_500
    assert distinct["ss_promo_sk"] == 300
    assert distinct["ss_quantity"] == 100
    assert distinct["ss_hdemo_sk"] > 6_000
    assert distinct["ss_sold_time_sk"] > 10_000
    assert distinct["ss_customer_sk"] > 10_000
    stores = set(pc.unique(table["ss_store_sk"].drop_null()).to_pylist())
    assert stores == {2, 4, 6, 8, 10, 12}


def test_tickets_are_consecutive_runs(table: pa.Table) -> None:
    """Tickets start at 1, never decrease, step by at most 1, and hold 8..16 lines each."""
    tickets = table["ss_ticket_number"].to_numpy()
    assert tickets[0] == 1
    steps = np.diff(tickets)
    assert set(np.unique(steps).tolist()) <= {0, 1}
    _, counts = np.unique(tickets, return_counts=True)
    assert counts[:-1].min() >= 8 and counts.max() <= 16
    assert 10 <= counts.mean() <= 14


def test_ticket_and_item_form_a_key(table: pa.Table) -> None:
    """(ss_item_sk, ss_ticket_number) is unique, as the TPC-DS primary key requires."""
    keys = table["ss_ticket_number"].to_numpy() * 100_000 + table["ss_item_sk"].to_numpy()
    assert len(np.unique(keys)) == table.num_rows


def test_ticket_level_columns_shared_within_a_ticket(table: pa.Table) -> None:
    """A ticket's non-null store and customer are the same on all its lines."""
    for name in ("ss_store_sk", "ss_customer_sk", "ss_sold_date_sk"):
        grouped = (
            table.select(["ss_ticket_number", name])
            .group_by("ss_ticket_number")
            .aggregate([(name, "count_distinct")])
        )
        assert pc.max(grouped[f"{name}_count_distinct"]).as_py() == 1, name


def test_amount_ranges(table: pa.Table) -> None:
    """Amounts fit decimal(7,2) with plausible store-sales ranges; only profit goes negative."""
    for name in AMOUNT_COLUMNS:
        low = pc.min(table[name]).as_py()
        high = pc.max(table[name]).as_py()
        assert high <= Decimal("99999.99"), name
        if name == "ss_net_profit":
            assert low < 0 < high
        else:
            assert low >= 0, name
    assert pc.min(table["ss_wholesale_cost"]).as_py() >= Decimal("1.00")
    assert pc.max(table["ss_wholesale_cost"]).as_py() <= Decimal("100.00")
    assert pc.max(table["ss_list_price"]).as_py() <= Decimal("200.00")


def test_decimal_scale_and_identities(table: pa.Table) -> None:
    """Decimals carry two places and the dsdgen pricing identities hold exactly in Decimal arithmetic."""
    names = (
        "ss_quantity",
        "ss_wholesale_cost",
        "ss_list_price",
        "ss_sales_price",
        "ss_ext_discount_amt",
        "ss_ext_sales_price",
        "ss_ext_wholesale_cost",
        "ss_ext_list_price",
        "ss_ext_tax",
        "ss_coupon_amt",
        "ss_net_paid",
        "ss_net_paid_inc_tax",
        "ss_net_profit",
    )
    rows = _valid(table.slice(0, 5_000), *names)
    assert len(rows["ss_quantity"]) > 2_000
    for name in names[1:]:
        assert all(value.as_tuple().exponent == -2 for value in rows[name]), name
    for i, quantity in enumerate(rows["ss_quantity"]):
        row = {name: rows[name][i] for name in names}
        assert row["ss_ext_sales_price"] == row["ss_sales_price"] * quantity
        assert row["ss_ext_list_price"] == row["ss_list_price"] * quantity
        assert row["ss_ext_wholesale_cost"] == row["ss_wholesale_cost"] * quantity
        assert row["ss_ext_discount_amt"] == row["ss_ext_list_price"] - row["ss_ext_sales_price"]
        assert row["ss_net_paid"] == row["ss_ext_sales_price"] - row["ss_coupon_amt"]
        assert row["ss_net_paid_inc_tax"] == row["ss_net_paid"] + row["ss_ext_tax"]
        assert row["ss_net_profit"] == row["ss_net_paid"] - row["ss_ext_wholesale_cost"]
        assert row["ss_sales_price"] <= row["ss_list_price"]


def test_decimal_values_match_float_view(table: pa.Table) -> None:
    """The decimal buffers decode to the same numbers pyarrow's own cast to float64 sees."""
    column = table["ss_net_profit"].combine_chunks()
    as_float = column.cast(pa.float64()).to_numpy(zero_copy_only=False)
    as_decimal = column.to_pylist()
    for i in range(0, 5_000, 37):
        if as_decimal[i] is None:
            assert np.isnan(as_float[i])
        else:
            assert float(as_decimal[i]) == pytest.approx(as_float[i])


def test_decimal_array_from_unscaled_matches_python_decimal() -> None:
    """Unscaled integers, negative and at the precision limit, decode to the Decimals they stand for."""
    unscaled = np.array([0, 1, -1, 12_345, -12_345, 9_999_999, -9_999_999, 100, 42], dtype=np.int64)
    mask = np.zeros(len(unscaled), dtype=bool)
    mask[-1] = True
    array = decimal_array_from_unscaled(unscaled, pa.decimal128(7, 2), mask)
    array.validate(full=True)
    expected = [Decimal(int(v)).scaleb(-2) for v in unscaled[:-1]] + [None]
    assert array.to_pylist() == expected
    assert array.to_pylist()[4] == Decimal("-123.45")
    assert array.null_count == 1
    reference = pa.array(expected, type=pa.decimal128(7, 2))
    assert array.equals(reference)


def test_decimal_array_from_unscaled_without_nulls() -> None:
    """Without a mask the array has no validity buffer and no nulls."""
    array = decimal_array_from_unscaled(np.arange(-5, 5, dtype=np.int32), pa.decimal128(3, 1))
    assert array.null_count == 0
    assert array.buffers()[0] is None
    assert array.to_pylist() == [Decimal(v).scaleb(-1) for v in range(-5, 5)]


def test_decimal_array_from_unscaled_rejects_overflow() -> None:
    """Values past the type's precision are refused rather than written as corrupt decimals."""
    with pytest.raises(ValueError):
        decimal_array_from_unscaled(np.array([10_000_000]), pa.decimal128(7, 2))
    with pytest.raises(ValueError):
        decimal_array_from_unscaled(np.array([-10_000_000]), pa.decimal128(7, 2))
    with pytest.raises(TypeError):
        decimal_array_from_unscaled(np.array([1.5]), pa.decimal128(7, 2))
