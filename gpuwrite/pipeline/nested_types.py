"""One walk over a nested Arrow type: rebuilt with a function applied to its leaf types or to its fields,
shared by the passes that rewrite a schema (unsigned widening, nanosecond truncation, nullability)."""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa


def rebuilt_type(t: pa.DataType, leaf: Callable[[pa.DataType], pa.DataType],
                 child: Callable[[pa.Field], pa.Field]) -> pa.DataType:
    """`t` with `leaf` applied to it or, a nested type, `child` to its fields and its dictionary's values (a map's
    key stays non-nullable, as Arrow requires)."""
    if pa.types.is_dictionary(t):
        return pa.dictionary(t.index_type, rebuilt_type(t.value_type, leaf, child), t.ordered)
    if pa.types.is_struct(t):
        return pa.struct([child(t.field(i)) for i in range(t.num_fields)])
    if pa.types.is_map(t):
        return pa.map_(child(t.key_field).with_nullable(False), child(t.item_field), t.keys_sorted)
    if pa.types.is_fixed_size_list(t):
        return pa.list_(child(t.value_field), t.list_size)
    if pa.types.is_large_list(t):
        return pa.large_list(child(t.value_field))
    if pa.types.is_list(t):
        return pa.list_(child(t.value_field))
    return leaf(t)
