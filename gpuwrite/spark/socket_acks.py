"""Prompt TCP acknowledgements on a PySpark worker's connection to its JVM, while a gpuwrite task receives.

The JVM writes a task's Arrow batches to its Python worker over a loopback TCP socket on which it does not set
TCP_NODELAY, so Nagle's algorithm holds each small segment it writes (the tail of a batch, the end-of-stream
marker) until the worker's kernel has acknowledged what it sent before; Linux delays that acknowledgement by up
to 40 ms when the reading thread is not promptly back in `recv`. A receive-only task is always back at once;
a gpuwrite task's receiving thread shares the GIL with its encoding thread, and in about half the tasks of a
local Spark session the end of the input arrived ~40 ms after the last batch (bench/README.md), with the task,
which can only close its files after it, waiting for it. Putting the worker's end of that socket in quick-ack
mode before each read (Linux's TCP_QUICKACK is not permanent, so it is re-armed after every batch) makes the
kernel acknowledge at once, and the marker comes ~3 ms after the last batch.

Only Linux has TCP_QUICKACK; elsewhere, over Unix domain sockets (spark.python.unix.domain.socket.enabled),
outside a PySpark worker, or with spark.gpuwrite.python.quickAck=false nothing is done. Acknowledging sooner
changes no byte of the stream, only when the JVM's kernel may send the next small segment.

SPEC: org.apache.spark.api.python.PythonWorkerFactory (the worker's socket: no setTcpNoDelay); tcp(7),
TCP_QUICKACK.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Iterable, Iterator
from typing import TypeVar

from .worker_gc import in_pyspark_worker

T = TypeVar("T")

_QUICKACK: int | None = getattr(socket, "TCP_QUICKACK", None)  # Linux only


class QuickAcks:
    """Sockets to keep in quick-ack mode: duplicates of their descriptors, closed by `close`."""

    def __init__(self, sockets: Iterable[socket.socket]) -> None:
        self.sockets = list(sockets)

    @classmethod
    def of_worker(cls, enabled: bool = True) -> QuickAcks:
        """This PySpark worker's loopback TCP sockets (its connection to the JVM); none when not `enabled`, on a
        platform without TCP_QUICKACK, or outside a PySpark worker (a driver's or test's sockets are left as
        they are)."""
        if not enabled or _QUICKACK is None or not in_pyspark_worker():
            return cls([])
        return cls(loopback_tcp_sockets())

    def arm(self) -> None:
        """Put each socket in quick-ack mode for the next segments it receives; a socket that refuses it (closed,
        not TCP after all) is dropped."""
        kept = []
        for sock in self.sockets:
            try:
                sock.setsockopt(socket.IPPROTO_TCP, _QUICKACK, 1)  # type: ignore[arg-type]
                kept.append(sock)
            except OSError:
                sock.close()
        self.sockets = kept

    def close(self) -> None:
        """Close the duplicated descriptors (the sockets themselves stay open)."""
        for sock in self.sockets:
            sock.close()
        self.sockets = []


def loopback_tcp_sockets(fd_dir: str = "/proc/self/fd") -> list[socket.socket]:
    """A duplicate descriptor of each connected TCP socket of this process whose peer is a loopback address (a
    PySpark worker's JVM is on its own host), one per socket however many descriptors it has (the worker reads
    and writes through duplicates); empty where `fd_dir` cannot be listed."""
    try:
        names = os.listdir(fd_dir)
    except OSError:
        return []
    found: dict[str, socket.socket] = {}
    for name in names:
        try:
            target = os.readlink(os.path.join(fd_dir, name)) if name.isdigit() else ""
            if not target.startswith("socket:") or target in found:
                continue
            sock = socket.socket(fileno=os.dup(int(name)))
        except OSError:  # closed meanwhile (the listing's own descriptor among them)
            continue
        if _is_loopback_tcp(sock):
            found[target] = sock
        else:
            sock.close()
    return list(found.values())


def _is_loopback_tcp(sock: socket.socket) -> bool:
    """Whether `sock` is a connected TCP stream socket to a loopback address."""
    if sock.family not in (socket.AF_INET, socket.AF_INET6) or sock.type != socket.SOCK_STREAM:
        return False
    try:
        peer = sock.getpeername()[0]
    except OSError:  # not connected (a listening socket)
        return False
    try:
        return ipaddress.ip_address(peer.split("%")[0]).is_loopback or peer.startswith("::ffff:127.")
    except ValueError:
        return False


def acked(items: Iterator[T], acks: QuickAcks) -> Iterator[T]:
    """`items`, with `acks` armed before the first read and again after each item (before the next read)."""
    acks.arm()
    for item in items:
        yield item
        acks.arm()
