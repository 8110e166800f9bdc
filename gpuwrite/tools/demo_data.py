"""A TPC-DS store_sales-shaped table generated in memory, for demos, tests and benchmarks.

The shape follows dsdgen at scale factor 1: tickets of 8..16 line items share their date, time, customer,
demographics, address and store; every line has its own item (distinct within its ticket), promotion,
quantity and prices; each nullable column has about 4.5% nulls drawn independently per row.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

DEMO_ROWS = 2_880_404
"""Rows of store_sales at TPC-DS scale factor 1."""

NULL_FRACTION = 0.045
"""Share of nulls in every nullable column."""

DECIMAL_TYPE = pa.decimal128(7, 2)

KEY_COLUMNS = (
    "ss_sold_date_sk",
    "ss_sold_time_sk",
    "ss_item_sk",
    "ss_customer_sk",
    "ss_cdemo_sk",
    "ss_hdemo_sk",
    "ss_addr_sk",
    "ss_store_sk",
    "ss_promo_sk",
)
AMOUNT_COLUMNS = (
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
NOT_NULL_COLUMNS = ("ss_item_sk", "ss_ticket_number")

FIRST_DATE_SK, LAST_DATE_SK = 2_450_816, 2_452_642
FIRST_TIME_SK, LAST_TIME_SK = 28_800, 75_599
ITEMS = 18_000
CUSTOMERS = 100_000
CDEMOS = 1_920_800
HDEMOS = 7_200
ADDRESSES = 50_000
STORE_SKS = (2, 4, 6, 8, 10, 12)
PROMOS = 300
MIN_LINES_PER_TICKET, MAX_LINES_PER_TICKET = 8, 16
COUPON_FRACTION = 0.2

STORE_SALES_SCHEMA = pa.schema(
    [pa.field(name, pa.int32(), nullable=name not in NOT_NULL_COLUMNS) for name in KEY_COLUMNS]
    + [pa.field("ss_ticket_number", pa.int64(), nullable=False), pa.field("ss_quantity", pa.int32())]
    + [pa.field(name, DECIMAL_TYPE) for name in AMOUNT_COLUMNS]
)
"""Schema of store_sales: TPC-DS column order, its two NOT NULL key columns non-nullable."""


def decimal_array_from_unscaled(
    unscaled: np.ndarray, type_: pa.Decimal128Type, null_mask: np.ndarray | None = None
) -> pa.Array:
    """Build a decimal128 array straight from unscaled integers, without a per-value Python round trip."""
    unscaled = np.asarray(unscaled)
    if unscaled.ndim != 1 or unscaled.dtype.kind not in "iu":
        raise TypeError(
            f"unscaled values must be a 1-d integer array, got {unscaled.ndim}-d {unscaled.dtype}"
        )
    if null_mask is not None and len(null_mask) != len(unscaled):
        raise ValueError(f"null_mask has {len(null_mask)} entries for {len(unscaled)} values")
    bound = min(10**type_.precision, 2**63)
    if len(unscaled) and (int(unscaled.min()) <= -bound or int(unscaled.max()) >= bound):
        raise ValueError(f"unscaled values do not fit {type_}")
    words = np.empty((len(unscaled), 2), dtype="<i8")
    words[:, 0] = unscaled
    np.right_shift(words[:, 0], 63, out=words[:, 1])
    if null_mask is not None:
        words.view(np.complex128)[:, 0][null_mask] = 0
    validity, null_count = _validity_buffer(null_mask, len(unscaled))
    return pa.Array.from_buffers(type_, len(unscaled), [validity, pa.py_buffer(words)], null_count)


def store_sales_table(num_rows: int = DEMO_ROWS, seed: int = 42) -> pa.Table:
    """Generate a store_sales-shaped table of num_rows rows, the same for a seed; vectorised, about 1 s at SF1."""
    if num_rows < 0:
        raise ValueError(f"num_rows must be >= 0, got {num_rows}")
    rng = np.random.default_rng(seed)
    n = num_rows

    ticket, line = _tickets(rng, n)
    tickets = int(ticket[-1]) + 1 if n else 0

    def per_ticket(low: int, high: int) -> np.ndarray:
        return rng.integers(low, high + 1, size=tickets, dtype=np.int32)[ticket]

    keys = {
        "ss_sold_date_sk": per_ticket(FIRST_DATE_SK, LAST_DATE_SK),
        "ss_sold_time_sk": per_ticket(FIRST_TIME_SK, LAST_TIME_SK),
        "ss_item_sk": _items(rng, ticket, line, tickets),
        "ss_customer_sk": per_ticket(1, CUSTOMERS),
        "ss_cdemo_sk": per_ticket(1, CDEMOS),
        "ss_hdemo_sk": per_ticket(1, HDEMOS),
        "ss_addr_sk": per_ticket(1, ADDRESSES),
        "ss_store_sk": np.asarray(STORE_SKS, dtype=np.int32)[per_ticket(0, len(STORE_SKS) - 1)],
        "ss_promo_sk": rng.integers(1, PROMOS + 1, size=n, dtype=np.int32),
    }
    quantity = rng.integers(1, 101, size=n, dtype=np.int32)
    amounts = _amounts(rng, quantity)

    columns: list[pa.Array] = []
    for name, values in keys.items():
        columns.append(_int_array(values, pa.int32(), None if name in NOT_NULL_COLUMNS else _nulls(rng, n)))
    columns.append(_int_array(ticket + 1, pa.int64(), None))
    columns.append(_int_array(quantity, pa.int32(), _nulls(rng, n)))
    for name in AMOUNT_COLUMNS:
        columns.append(decimal_array_from_unscaled(amounts[name], DECIMAL_TYPE, _nulls(rng, n)))
    return pa.Table.from_arrays(columns, schema=STORE_SALES_SCHEMA)


def _tickets(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Give each row its 0-based ticket and its line within the ticket; tickets run in increasing order."""
    sizes = rng.integers(MIN_LINES_PER_TICKET, MAX_LINES_PER_TICKET + 1, size=n // MIN_LINES_PER_TICKET + 1)
    ends = np.cumsum(sizes)
    used = int(np.searchsorted(ends, n)) + 1
    starts = ends[:used] - sizes[:used]
    ticket = np.repeat(np.arange(used, dtype=np.int64), sizes[:used])[:n]
    line = np.arange(n, dtype=np.int64) - starts[ticket]
    return ticket, line


def _items(rng: np.random.Generator, ticket: np.ndarray, line: np.ndarray, tickets: int) -> np.ndarray:
    """Walk a random item permutation from a random start per ticket, like dsdgen, so items differ per ticket."""
    permutation = rng.permutation(ITEMS).astype(np.int32) + 1
    start = rng.integers(0, ITEMS, size=tickets, dtype=np.int64)
    return permutation[(start[ticket] + line) % ITEMS]


def _amounts(rng: np.random.Generator, quantity: np.ndarray) -> dict[str, np.ndarray]:
    """Price each line in integer cents after dsdgen's set_pricing, so the amounts' identities hold exactly."""
    n = len(quantity)
    quantity = quantity.astype(np.int64)
    wholesale = rng.integers(100, 10_001, size=n, dtype=np.int64)
    markup_pct = rng.integers(100, 201, size=n, dtype=np.int16)
    discount_pct = rng.integers(0, 101, size=n, dtype=np.int16)
    tax_bp = rng.integers(0, 901, size=n, dtype=np.int16)
    coupon_pct = rng.integers(0, 101, size=n, dtype=np.int16)
    coupon_pct[rng.random(n, dtype=np.float32) >= COUPON_FRACTION] = 0

    list_price = wholesale * markup_pct
    list_price //= 100
    sales_price = list_price * (100 - discount_pct)
    sales_price //= 100
    ext_sales = sales_price * quantity
    ext_wholesale = wholesale * quantity
    ext_list = list_price * quantity
    ext_tax = ext_sales * tax_bp
    ext_tax //= 10_000
    coupon = ext_sales * coupon_pct
    coupon //= 100
    net_paid = ext_sales - coupon
    return {
        "ss_wholesale_cost": wholesale,
        "ss_list_price": list_price,
        "ss_sales_price": sales_price,
        "ss_ext_discount_amt": ext_list - ext_sales,
        "ss_ext_sales_price": ext_sales,
        "ss_ext_wholesale_cost": ext_wholesale,
        "ss_ext_list_price": ext_list,
        "ss_ext_tax": ext_tax,
        "ss_coupon_amt": coupon,
        "ss_net_paid": net_paid,
        "ss_net_paid_inc_tax": net_paid + ext_tax,
        "ss_net_profit": net_paid - ext_wholesale,
    }


def _nulls(rng: np.random.Generator, n: int) -> np.ndarray:
    """Draw an independent Bernoulli(NULL_FRACTION) null mask per row, from geometric gaps to stay cheap."""
    mask = np.zeros(n, dtype=bool)
    expected = n * NULL_FRACTION
    position = -1
    while True:
        gaps = rng.geometric(NULL_FRACTION, size=int(expected + 6 * expected**0.5) + 16)
        positions = position + np.cumsum(gaps)
        mask[positions[positions < n]] = True
        position = int(positions[-1])
        if position >= n:
            return mask
        expected = (n - position) * NULL_FRACTION


def _validity_buffer(null_mask: np.ndarray | None, n: int) -> tuple[pa.Buffer | None, int]:
    """Pack a null mask into an Arrow validity bitmap (bit set = valid) and count its nulls."""
    if null_mask is None:
        return None, 0
    null_count = int(np.count_nonzero(null_mask))
    if null_count == 0:
        return None, 0
    return pa.py_buffer(np.packbits(~null_mask, bitorder="little")), null_count


def _int_array(values: np.ndarray, type_: pa.DataType, null_mask: np.ndarray | None) -> pa.Array:
    """Wrap an integer numpy array (taken over, zeroed in place under its nulls) as an Arrow array."""
    values = np.ascontiguousarray(values, dtype=type_.to_pandas_dtype())
    if null_mask is not None:
        values[null_mask] = 0
    validity, null_count = _validity_buffer(null_mask, len(values))
    return pa.Array.from_buffers(type_, len(values), [validity, pa.py_buffer(values)], null_count)
