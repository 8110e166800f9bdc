"""Option values refused up front with an OptionError naming the option as written (issue 12): compression levels
per codec (the same rule for keywords and keys), session time zones as Spark accepts them."""

from __future__ import annotations

import pyarrow as pa
import pytest

import gpuwrite
from gpuwrite import OptionError, WriteOptions

TABLE = pa.table({"a": pa.array(range(100), pa.int64())})


@pytest.mark.parametrize("codec, level", [("zstd", 23), ("zstd", 100), ("zstd", -(2**17) - 1), ("zstd", 2**70),
                                          ("gzip", 10), ("gzip", -1)])
def test_level_outside_the_codec_range(tmp_path, codec, level):
    """Reproducer: gzip 10 and zstd 100 were accepted silently (zstd clamps to 22), 2**70 overflowed."""
    with pytest.raises(OptionError, match=rf"compression_level={level}.*{codec}'s levels"):
        gpuwrite.write_table(TABLE, tmp_path / "x.parquet", compression=codec, compression_level=level)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("level", ["3", 3.0, True])
def test_level_of_the_wrong_type(level):
    """Reproducer: a string level raised a bare TypeError deep in the codec."""
    with pytest.raises(OptionError, match="compression_level must be an integer"):
        WriteOptions(compression="zstd", compression_level=level)


@pytest.mark.parametrize("codec, level", [("zstd", 22), ("zstd", 1), ("zstd", 0), ("zstd", -5), ("gzip", 0),
                                          ("gzip", 9)])
def test_levels_in_range_are_written(tmp_path, codec, level):
    result = gpuwrite.write_table(TABLE, tmp_path / "x.parquet", compression=codec, compression_level=level)
    assert result.num_rows == 100


def test_zstd_level_key_uses_the_same_rule_and_names_the_key(tmp_path):
    """The key is checked like the keyword, and named as the user wrote it."""
    conf = {"parquet.compression": "zstd", "parquet.compression.codec.zstd.level": "23"}
    with pytest.raises(OptionError, match=r"'parquet\.compression\.codec\.zstd\.level'=23 is outside zstd's"):
        gpuwrite.write_table(TABLE, tmp_path / "x.parquet", options=conf)
    with pytest.raises(OptionError, match="parquet.compression.codec.zstd.level.*must be an integer"):
        WriteOptions.from_conf({"parquet.compression.codec.zstd.level": "high"})
    assert WriteOptions.from_conf({**conf, "parquet.compression.codec.zstd.level": "9"}).compression_level == 9


def test_zstd_level_key_is_ignored_for_other_codecs(tmp_path):
    """parquet-java reads the zstd level only in ZstandardCodec: with gzip or snappy it is checked, then unused
    (before, it raised for snappy and changed gzip's level)."""
    for codec in ("snappy", "gzip"):
        opts = WriteOptions.from_conf({"parquet.compression": codec, "parquet.compression.codec.zstd.level": "9"})
        assert opts.compression == codec and opts.compression_level is None
    with pytest.raises(OptionError, match="zstd.level"):
        WriteOptions.from_conf({"parquet.compression": "gzip", "parquet.compression.codec.zstd.level": "99"})
    plain = gpuwrite.write_table(TABLE, tmp_path / "a.parquet", compression="gzip")
    keyed = gpuwrite.write_table(TABLE, tmp_path / "b.parquet",
                                 options={"parquet.compression": "gzip", "parquet.compression.codec.zstd.level": "9"})
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()
    assert plain.size == keyed.size


def test_level_for_a_codec_without_levels():
    with pytest.raises(OptionError, match="applies to zstd and gzip, not 'snappy'"):
        WriteOptions(compression="snappy", compression_level=3)


@pytest.mark.parametrize("zone", ["Not/AZone", "Europe/Pariss", "utc", "+19:00", "GMT+25", "", "../../etc/passwd"])
def test_invalid_time_zone_is_refused_up_front(tmp_path, zone):
    """Reproducer: an invalid spark.sql.session.timeZone was accepted unless LEGACY rebase was on."""
    with pytest.raises(OptionError, match=r"'spark\.sql\.session\.timeZone'"):
        gpuwrite.write_table(TABLE, tmp_path / "x.parquet", options={"spark.sql.session.timeZone": zone})
    with pytest.raises(OptionError, match="time_zone"):
        gpuwrite.write_table(TABLE, tmp_path / "x.parquet", time_zone=zone)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("zone", ["UTC", "Z", "America/Los_Angeles", "+05:30", "+5:30", "-0800", "GMT+8",
                                  "UTC-05:00", "PST", "EST", "Etc/GMT+5", "+18:00"])
def test_time_zones_spark_accepts(zone):
    """Region IDs, offsets in java.time's forms (after Spark's +h: fix-up), prefixed offsets and SHORT_IDS."""
    assert WriteOptions(time_zone=zone).time_zone == zone


@pytest.mark.parametrize("keywords, named", [
    ({"row_group_size": 2**63}, "'row_group_size'=9223372036854775808"),
    ({"block_size": 2**64}, "block_size=18446744073709551616"),
    ({"data_page_size": 2**63}, "'data_page_size'"),
    ({"page_row_count_limit": 2**100}, "page_row_count_limit"),
    ({"options": {"parquet.block.size": str(2**64)}}, "'parquet.block.size'"),
])
def test_sizes_past_a_java_long_name_the_option_and_its_range(tmp_path, keywords, named):
    """Reproducer (issue 33): row_group_size=2**63 and block_size=2**64 raised a bare OverflowError from the
    page schedule; now an OptionError names the option as written and its range, and no file appears."""
    with pytest.raises(OptionError, match=rf"{named}.*too large: it must be from 1 to 9223372036854775807"):
        gpuwrite.write_table(TABLE, tmp_path / "x.parquet", **keywords)
    assert list(tmp_path.iterdir()) == []


def test_sizes_up_to_a_java_long_are_still_taken(tmp_path):
    """The largest value a Java long holds still writes (nothing narrower was imposed)."""
    result = gpuwrite.write_table(TABLE, tmp_path / "x.parquet", row_group_size=2**63 - 1, block_size=2**63 - 1)
    assert result.num_rows == 100
    with pytest.raises(OptionError, match="dictionary_page_size must be from 0 to 9223372036854775807"):
        WriteOptions(dictionary_page_size=2**63)
