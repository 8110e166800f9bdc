"""ChunkOptions per leaf: leaves with the same settings share one object (issue 33, item 6: a frozen
dataclass per column of a wide table cost more than the rest of its options)."""

from __future__ import annotations

import pyarrow as pa

from gpuwrite.encode.chunk import ChunkOptions
from gpuwrite.encode.compress import compressor
from gpuwrite.options.model import WriteOptions
from gpuwrite.schema import FileSchema


def test_leaves_with_the_same_settings_share_their_options() -> None:
    schema = pa.schema([(f"c{i}", pa.int64()) for i in range(1000)] + [("flag", pa.bool_())])
    opts = WriteOptions(column_dictionary={"c7": False}, bloom_filter_columns={"c9": True})
    leaves = FileSchema.from_arrow(schema, opts).leaves
    options = ChunkOptions.for_leaves(leaves, opts, compressor(opts.compression))
    assert len({id(o) for o in options}) == 3  # the ints; c9 with a filter; c7 and the bool without a dictionary
    assert options[0] is options[999] and options[0].use_dictionary and options[0].bloom is None
    assert options[7] is options[1000] and not options[7].use_dictionary and options[9].bloom is not None
    settings = ("use_dictionary", "dictionary_limit", "identity", "checksum", "bloom", "plain_fallback")
    for leaf, shared in zip(leaves, options, strict=True):  # what each leaf alone gets
        alone = ChunkOptions.for_leaf(leaf, opts, compressor(opts.compression))
        assert [getattr(alone, name) for name in settings] == [getattr(shared, name) for name in settings]
