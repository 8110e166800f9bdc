"""A gpuwrite task keeps its PySpark worker's socket to the JVM in quick-ack mode while it receives (the JVM's end
has Nagle's algorithm on, so a small segment waited up to 40 ms for a delayed acknowledgement); elsewhere, or
with spark.gpuwrite.python.quickAck=false, no socket is touched."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import textwrap
import types
from collections.abc import Iterator

import pytest

from gpuwrite.spark import socket_acks
from gpuwrite.spark.socket_acks import QuickAcks, acked, loopback_tcp_sockets

linux_only = pytest.mark.skipif(not hasattr(socket, "TCP_QUICKACK"), reason="TCP_QUICKACK is Linux's")


@pytest.fixture
def connection() -> Iterator[tuple[socket.socket, socket.socket]]:
    """A connected loopback TCP pair (client, server side), as a worker and its JVM hold."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    client = socket.create_connection(server.getsockname())
    accepted, _ = server.accept()
    yield client, accepted
    for s in (client, accepted, server):
        s.close()


def _as_worker(monkeypatch, name: str) -> None:
    """Make this process look like one run as `python -m NAME`."""
    main = types.ModuleType("__main__")
    main.__spec__ = types.SimpleNamespace(name=name)  # type: ignore[assignment]
    monkeypatch.setitem(sys.modules, "__main__", main)


def _ends(socks: list[socket.socket]) -> set[tuple]:
    return {(s.getsockname(), s.getpeername()) for s in socks}


def test_finds_each_connected_loopback_tcp_socket_once(connection):
    client, accepted = connection
    extra = socket.socket(fileno=socket.dup(client.fileno()))  # a second descriptor of the same socket
    unix_a, unix_b = socket.socketpair()  # not TCP: Nagle's algorithm does not apply
    try:
        found = loopback_tcp_sockets()
        ends = _ends(found)
        assert (client.getsockname(), client.getpeername()) in ends
        assert (accepted.getsockname(), accepted.getpeername()) in ends
        assert len(found) == len(ends)  # the client's two descriptors give one socket
        assert all(s.family in (socket.AF_INET, socket.AF_INET6) for s in found)  # no Unix socket, no listener
        for s in found:
            s.close()  # duplicates: the originals stay open
        client.sendall(b"ok")
        assert accepted.recv(2) == b"ok"
    finally:
        for s in (extra, unix_a, unix_b):
            s.close()


def test_no_listing_no_sockets(tmp_path):
    assert loopback_tcp_sockets(str(tmp_path / "missing")) == []


def test_outside_a_pyspark_worker_no_socket_is_touched(connection):
    assert QuickAcks.of_worker().sockets == []  # pytest's own sockets are left alone


@linux_only
@pytest.mark.parametrize("module", ["pyspark.daemon", "pyspark.worker"])
def test_in_a_worker_its_loopback_sockets_are_armed(connection, monkeypatch, module):
    client, accepted = connection
    _as_worker(monkeypatch, module)
    acks = QuickAcks.of_worker()
    try:
        assert (client.getsockname(), client.getpeername()) in _ends(acks.sockets)
        acks.arm()  # a real socket takes the option: kept
        assert (client.getsockname(), client.getpeername()) in _ends(acks.sockets)
    finally:
        acks.close()
    assert acks.sockets == []
    assert QuickAcks.of_worker(enabled=False).sockets == []  # spark.gpuwrite.python.quickAck=false


class _Recording:
    def __init__(self) -> None:
        self.options: list[tuple[int, int, int]] = []

    def setsockopt(self, level: int, option: int, value: int) -> None:
        self.options.append((level, option, value))

    def close(self) -> None:
        pass


@linux_only
def test_arming_sets_quickack_on_each_socket_each_time():
    socks = [_Recording(), _Recording()]
    acks = QuickAcks(socks)  # type: ignore[arg-type]
    acks.arm()
    acks.arm()
    want = (socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
    assert [s.options for s in socks] == [[want, want], [want, want]]


@linux_only
def test_a_socket_that_refuses_is_dropped(connection):
    client, _ = connection
    gone = socket.socket(fileno=socket.dup(client.fileno()))
    gone.close()
    kept = socket.socket(fileno=socket.dup(client.fileno()))
    acks = QuickAcks([gone, kept])
    acks.arm()
    assert acks.sockets == [kept]
    acks.close()


class _Counting(QuickAcks):
    def __init__(self) -> None:
        super().__init__([])
        self.armed = 0

    def arm(self) -> None:
        self.armed += 1


def test_acked_arms_before_every_read():
    acks = _Counting()
    seen = []

    def source() -> Iterator[int]:
        for i in range(3):
            seen.append((i, acks.armed))  # armed once more before each read than items handed out
            yield i
        seen.append(("end", acks.armed))

    assert list(acked(source(), acks)) == [0, 1, 2]
    assert seen == [(0, 1), (1, 2), (2, 3), ("end", 4)]


def test_quick_ack_switch_reads_like_the_other_gpuwrite_switches():
    from gpuwrite.spark.routing import QUICK_ACK_KEY, acks_quickly

    assert QUICK_ACK_KEY == "spark.gpuwrite.python.quickAck"
    assert acks_quickly({}) and acks_quickly({QUICK_ACK_KEY: "true"})
    assert not acks_quickly({QUICK_ACK_KEY: " False "})


@pytest.mark.spark
@linux_only
def test_a_pyspark_worker_finds_its_connection_to_the_jvm(tmp_path):
    """In a real PySpark worker (local[1], daemon and plain worker): the worker's connection to its JVM is found,
    as one socket; a gpuwrite write reads back the same with the switch on and off."""
    if shutil.which("java") is None:
        pytest.skip("no `java` on PATH: PySpark needs a JVM")
    script = textwrap.dedent(f"""
        import os, sys
        os.environ["PYSPARK_PYTHON"] = sys.executable
        from pyspark.sql import SparkSession
        import pyarrow.parquet as pq
        for daemon in ("true", "false"):
            spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
                     .config("spark.ui.showConsoleProgress", "false")
                     .config("spark.python.use.daemon", daemon).getOrCreate())
            spark.sparkContext.setLogLevel("OFF")
            import gpuwrite.spark

            def probe(batches):
                import pyarrow as pa
                from gpuwrite.spark.socket_acks import QuickAcks
                for _ in batches:
                    pass
                acks = QuickAcks.of_worker()
                acks.arm()
                ends = [str(s.getpeername()) for s in acks.sockets]
                acks.close()
                yield pa.RecordBatch.from_pydict({{"found": [len(ends)]}})

            print("FOUND", daemon, spark.range(1).mapInArrow(probe, "found long").collect()[0].found)
            df = spark.range(0, 3000, 1, 2).selectExpr("id", "cast(id % 7 as decimal(7, 2)) as d")
            for switch in ("true", "false"):
                spark.conf.set("spark.gpuwrite.python.quickAck", switch)
                out = {str(tmp_path)!r} + "/" + daemon + switch
                gpuwrite.spark.write_parquet(df, out)
                print("ROWS", daemon, switch, pq.read_table(out).num_rows)
            spark.stop()
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line.split() for line in done.stdout.splitlines() if line.split()[:1] in (["FOUND"], ["ROWS"])]
    assert sorted(lines) == sorted([["FOUND", "true", "1"], ["FOUND", "false", "1"]]
                                   + [["ROWS", d, s, "3000"] for d in ("true", "false") for s in ("true", "false")])
    assert socket_acks.in_pyspark_worker() is False  # this (pytest) process is not a worker
