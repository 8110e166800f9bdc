"""Against a real S3 protocol (a local moto server, no network): pyarrow's S3 (spooled, one stream at close)
and s3fs (multipart parts uploaded while writing, completed at close, aborted on failure), files and datasets.

Optional: needs `moto[server]`, boto3 and s3fs, which the test extra does not install (they are heavy); run with
`pip install 'moto[server]' s3fs` first.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

moto_server = pytest.importorskip("moto.server", reason="needs moto[server] (not in the test extra)")
s3fs = pytest.importorskip("s3fs", reason="needs s3fs (not in the test extra)")
boto3 = pytest.importorskip("boto3", reason="needs boto3 (with moto)")

import gpuwrite  # noqa: E402
from gpuwrite.api import ParquetWriter  # noqa: E402

PORT = 5127
QUERY = f"?endpoint_override=127.0.0.1:{PORT}&scheme=http&region=us-east-1"
N = 600_000
TABLE = pa.table({"x": np.random.default_rng(0).integers(0, 1 << 62, N), "y": np.random.default_rng(1).random(N)})


@pytest.fixture(scope="module")
def s3() -> Iterator[Any]:
    """A moto S3 server with bucket `bkt`; yields a boto3 client."""
    env = {"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_DEFAULT_REGION": "us-east-1"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    server = moto_server.ThreadedMotoServer(port=PORT, verbose=False)
    server.start()
    client = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{PORT}")
    client.create_bucket(Bucket="bkt")
    try:
        yield client
    finally:
        server.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _keys(client: Any) -> list[str]:
    return sorted(o["Key"] for o in client.list_objects_v2(Bucket="bkt").get("Contents", []))


def _uploads(client: Any) -> int:
    return len(client.list_multipart_uploads(Bucket="bkt").get("Uploads", []))


def _write(path: str, filesystem: Any, fail_after: int | None, seen: list[tuple[list[str], int]], client: Any) -> None:
    """Write TABLE in 6 batches (streaming, 1 MiB row groups), noting keys and open uploads after each."""
    with ParquetWriter(path, TABLE.schema, filesystem=filesystem, streaming=True, block_size=1 << 20) as w:
        for i, batch in enumerate(TABLE.to_batches(max_chunksize=100_000)):
            w.write(batch)
            seen.append((_keys(client), _uploads(client)))
            if i == fail_after:
                raise RuntimeError("injected failure")


def test_pyarrow_s3_uri(s3: Any) -> None:
    """`s3://` (pyarrow): nothing reaches the store before close; a failure sends nothing at all."""
    seen: list[tuple[list[str], int]] = []
    _write("s3://bkt/pa.parquet" + QUERY, None, None, seen, s3)
    assert all(keys == [] and uploads == 0 for keys, uploads in seen) and _keys(s3) == ["pa.parquet"]
    fs = pafs.S3FileSystem(endpoint_override=f"127.0.0.1:{PORT}", scheme="http", region="us-east-1")
    assert pq.read_table("bkt/pa.parquet", filesystem=fs).equals(TABLE)
    with pytest.raises(RuntimeError, match="injected"):
        _write("s3://bkt/pa2.parquet" + QUERY, None, 3, [], s3)
    assert _keys(s3) == ["pa.parquet"] and _uploads(s3) == 0


def test_s3fs_multipart_completed_at_close(s3: Any) -> None:
    """s3fs: parts are uploaded while writing (an upload in progress, no key), the key appears at close; a
    failure aborts the upload and the old object stays."""
    fs = s3fs.S3FileSystem(client_kwargs={"endpoint_url": f"http://127.0.0.1:{PORT}"}, key="k", secret="s",
                           default_block_size=5 << 20)
    seen: list[tuple[list[str], int]] = []
    _write("bkt/fs.parquet", fs, None, seen, s3)
    assert any(uploads == 1 for _, uploads in seen) and all("fs.parquet" not in keys for keys, _ in seen)
    assert "fs.parquet" in _keys(s3) and _uploads(s3) == 0
    before = s3.get_object(Bucket="bkt", Key="fs.parquet")["Body"].read()
    seen.clear()
    with pytest.raises(RuntimeError, match="injected"):
        _write("bkt/fs.parquet", fs, 4, seen, s3)
    assert seen[-1][1] == 1 and _uploads(s3) == 0
    assert s3.get_object(Bucket="bkt", Key="fs.parquet")["Body"].read() == before
    fs.invalidate_cache()
    assert pq.read_table("bkt/fs.parquet", filesystem=fs).equals(TABLE)


def test_dataset_on_s3(s3: Any) -> None:
    """write_dataset on `s3://`: partitions, `_SUCCESS`, no `_temporary` left; overwrite replaces."""
    small = pa.table({"v": list(range(100)), "k": [i % 4 for i in range(100)]})
    gpuwrite.write_dataset(small, "s3://bkt/ds" + QUERY, partition_by=["k"])
    files = [k for k in _keys(s3) if k.startswith("ds/") and not k.endswith("/")]
    assert len(files) == 5 and "ds/_SUCCESS" in files and not any("_temporary" in k for k in _keys(s3))
    gpuwrite.write_dataset(small.slice(0, 10), "s3://bkt/ds" + QUERY, mode="overwrite")
    fs = pafs.S3FileSystem(endpoint_override=f"127.0.0.1:{PORT}", scheme="http", region="us-east-1")
    assert pads.dataset("bkt/ds", filesystem=fs).to_table().num_rows == 10
