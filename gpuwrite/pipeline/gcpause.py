"""Python's cyclic garbage collector held off while a writer encodes.

A write makes a few Python objects per page (its sections, statistics, header), thousands a row group, and
they live until the row group is written: enough to run the collector's young passes tens of times a file and,
as they reach the oldest generation, a full pass every few files. A full pass visits every object the process
holds (about 75 ms with pyarrow, polars and numba loaded, measured), with the GIL held, so it stalls every
encoding thread in the middle of a write. The writer makes no reference cycles (its objects are freed by
reference counting as row groups are written), so it runs with the collector off, and turns it back on as it
found it: the same objects, none left for the collector to find, no pass in the write.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_holders = 0  # writes in progress in this process (in any thread)
_disabled_here = False  # whether the first of them turned the collector off (it was on)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Run the body with automatic garbage collection off, unless the caller had already turned it off;
    concurrent writes (threads) share one pause, lifted when the last one ends."""
    global _holders, _disabled_here
    with _lock:
        if _holders == 0:
            _disabled_here = gc.isenabled()
            if _disabled_here:
                gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0 and _disabled_here:
                _disabled_here = False
                gc.enable()
