"""A batch whose schema differs from the writer's only in field nullability, at any depth (a pandas or polars
frame declares every field nullable; a writer's schema may not), read under the writer's schema.

Arrow tells such schemas apart (joining the batches at close() failed, losing the file), so the batch is
relabelled with the writer's types as it is taken (`FileWriter._piece`), its buffers shared; the batch
checks then hold its rows to the writer's schema, as any batch's: a null in a field the writer declares
non-nullable is refused where its parent holds a value (a null under a null struct row or list is no value).
Field metadata never matters (Arrow ignores it when comparing schemas).
"""

from __future__ import annotations

import pyarrow as pa

from ..integrations.arrow import ArrowPiece, relabel
from ..integrations.device_data import DeviceTable
from .nested_types import rebuilt_type


def loose_type(t: pa.DataType) -> pa.DataType:
    """`t` with every field in it nullable and without metadata (map keys stay non-nullable, as Arrow has
    them): the type two types differing only in nullability have in common."""
    return rebuilt_type(t, lambda x: x, lambda f: pa.field(f.name, loose_type(f.type)))


def conform(piece: ArrowPiece, schema: pa.Schema) -> ArrowPiece:
    """`piece` under the writer's `schema` (buffers shared) when the two differ only in field nullability;
    any other difference leaves the piece as it is, for the writer's checks to refuse with their message.

    Nothing is checked here: the writer's batch checks (`validate.check_batch`) read the rows against the
    writer's schema whatever the batch declares, and refuse a null in a non-nullable field where its parent
    holds a value, naming the field and the row, before the writer keeps anything."""
    got = piece.schema
    if got.equals(schema) or got.names != schema.names:
        return piece
    if any(loose_type(g.type) != loose_type(w.type) for g, w in zip(got, schema, strict=True)):
        return piece
    if isinstance(piece, DeviceTable):
        return piece.retyped(schema)
    if isinstance(piece, pa.RecordBatch):
        return pa.RecordBatch.from_arrays([relabel(c, f.type) for c, f in zip(piece.columns, schema, strict=True)],
                                          schema=schema)
    columns = [pa.chunked_array([relabel(c, f.type) for c in col.chunks], type=f.type)
               for col, f in zip(piece.columns, schema, strict=True)]
    return pa.Table.from_arrays(columns, schema=schema)
