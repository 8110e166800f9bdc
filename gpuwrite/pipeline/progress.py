"""A progress bar for writes: rows encoded (not merely read) of the total, redrawn while the writer works.

The bar is redrawn by a ticker thread, so it keeps moving while one call encodes a row group, compiles
kernels on first use or writes the footer; it reaches 100% only when the rows are encoded. `write_table`
(`progress=True`) and the `gpuwrite write` command use it.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from ..backends import kernel_cache

ProgressArg = bool | Callable[[int], None] | None


class ProgressBar:
    """One line on `stream`: a bar of rows encoded of `total` (when known), rate, time and what is happening.

    On a terminal (or in a notebook) the line is redrawn in place ten times a second; elsewhere a line is
    printed each second. Nothing is drawn before `delay_s` has passed, so quick writes stay quiet.
    """

    WIDTH = 24

    def __init__(self, total: int | None, stream: TextIO | None = None, *, delay_s: float = 0.5,
                 unit: str = "rows", verb: str = "encoded") -> None:
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.delay_s = delay_s
        self.unit = unit
        self.verb = verb
        self.read = 0  # rows handed to the writer
        self.note = ""  # what is happening now, shown after the numbers
        self._encoded: Callable[[], int] = lambda: 0
        self._best = 0
        self._drawn = 0
        self._start = time.perf_counter()
        self._last = 0.0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)()) or "ipykernel" in sys.modules
        self.interval_s = 0.1 if self.tty else 1.0

    # -- life cycle ------------------------------------------------------------------------------------

    def start(self, encoded: Callable[[], int]) -> None:
        """Start the ticker; `encoded()` returns the rows encoded so far (read from the ticker thread)."""
        self._encoded = encoded
        self._start = time.perf_counter()
        kernel_cache.WATCH.claim()
        self._thread = threading.Thread(target=self._tick, name="gpuwrite-progress", daemon=True)
        self._thread.start()

    def advance(self, rows: int) -> None:
        """Count `rows` more rows handed to the writer."""
        self.read += rows

    def finish(self, outcome: str) -> None:
        """Stop the ticker, draw the final state with `outcome` if the bar was shown, and end its line."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
            kernel_cache.WATCH.release()
        with self._lock:
            if self._drawn or time.perf_counter() - self._start >= self.delay_s:
                self._draw(outcome)
                if self.tty:
                    self.stream.write("\n")
                    self.stream.flush()

    # -- drawing ---------------------------------------------------------------------------------------

    def _tick(self) -> None:
        """Redraw until stopped (the ticker thread)."""
        while not self._stop.wait(self.interval_s):
            with self._lock:
                if time.perf_counter() - self._start >= self.delay_s:
                    self._draw("; ".join(n for n in (self.note, kernel_cache.compile_note()) if n))

    def rows_encoded(self) -> int:
        """Rows encoded so far, never going back and never past the total."""
        try:
            now = int(self._encoded())
        except Exception:  # the writer is being torn down: keep the last value
            now = self._best
        self._best = max(self._best, now)
        if self.total is not None:
            self._best = min(self._best, self.total)
        return self._best

    def text(self, note: str = "") -> str:
        """The bar's line as it would be drawn now."""
        elapsed = time.perf_counter() - self._start
        done = self.rows_encoded()
        rate = done / elapsed if elapsed > 0 else 0.0
        if self.total:
            share = min(1.0, done / self.total)
            filled = int(share * self.WIDTH)
            line = (f"[{'#' * filled}{'-' * (self.WIDTH - filled)}] {share:6.1%}  "
                    f"{done:,}/{self.total:,} {self.unit} {self.verb}")
        else:
            line = f"{done:,} {self.unit} {self.verb}"
        if self.read > done:
            line += f" ({self.read:,} read)"
        line += f"  {rate_text(rate)} {self.unit}/s  {elapsed:.1f} s"
        return f"{line}  {note}" if note else line

    def _draw(self, note: str) -> None:
        """Write the line over the previous one (terminal) or as a new line (elsewhere)."""
        line = self.text(note)
        self.stream.write("\r" + line.ljust(self._drawn) if self.tty else line + "\n")
        self.stream.flush()
        self._drawn = max(1, len(line))


def rate_text(per_second: float) -> str:
    """A rate with a k/M suffix, e.g. 812k or 1.25M."""
    if per_second >= 1e6:
        return f"{per_second / 1e6:.2f}M"
    if per_second >= 1e3:
        return f"{per_second / 1e3:.0f}k"
    return f"{per_second:.0f}"


def known_rows(data: Any) -> int | None:
    """The row count of `data` when it is known without reading it (Arrow tables, pandas / polars frames)."""
    rows = getattr(data, "num_rows", None)
    if isinstance(rows, int):
        return rows
    module = type(data).__module__.split(".")[0]
    shape = getattr(data, "shape", None) if module in ("pandas", "polars", "cudf") else None
    return int(shape[0]) if isinstance(shape, tuple) and shape else None


@contextmanager
def reporter(progress: ProgressArg, writer: Any, data: Any) -> Iterator[Callable[[int], None]]:
    """For `write_table`: yields a function to call with each piece's row count.

    `progress=True` draws a ProgressBar of `writer.rows_encoded` on stderr; a callable is called with each
    piece's row count (rows handed to the writer); None or False does nothing.
    """
    if progress is None or progress is False:
        yield lambda rows: None
        return
    if callable(progress):
        yield progress
        return
    bar = ProgressBar(known_rows(data), delay_s=0.0)  # asked for: shown even for a quick write
    bar.start(lambda: int(writer.rows_encoded))
    outcome = "failed"
    try:
        yield bar.advance
        outcome = "done"
    finally:
        bar.finish(outcome)
