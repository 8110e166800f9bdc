"""Errors raised by gpuwrite: one base class so callers can catch everything we raise on purpose."""

from __future__ import annotations

import errno


class GpuwriteError(Exception):
    """Base of every error gpuwrite raises for bad data, bad options or a failed write."""


class UnsupportedTypeError(GpuwriteError, TypeError):
    """A column's Arrow type has no Parquet mapping in gpuwrite (the message names column and type)."""


class OptionError(GpuwriteError, ValueError):
    """An unknown option, or a known option with a bad value (the message names the option)."""


class SchemaMismatchError(GpuwriteError, ValueError):
    """A streamed batch whose schema differs from the writer's schema."""


class FileWriteError(GpuwriteError, OSError):
    """The file could not be written, flushed or moved into place (disk full, file too large, permission
    denied...): the message names the path; `errno` and `filename` are set as on the OSError behind it."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else super().__str__()


class ValueCheckError(GpuwriteError, ValueError):
    """A value a reader would fail on later (a decimal wider than its precision, invalid UTF-8, a value too
    large for a Parquet page): the message names the column and the row."""


class WideDecimalError(ValueCheckError):
    """A decimal wider than its precision, found while converting rows whose batch check left decimals to the
    conversion (`FileWriter.write(..., more=False)`); the writer reports the batch check's own error."""


class BloomFilterSizeWarning(UserWarning):
    """A write whose bloom filters take more bytes than the data they index (the message names the columns)."""


def os_reason(e: OSError) -> str:
    """An OS error's cause with its errno name, as messages give it: 'No space left on device (ENOSPC)'."""
    reason = e.strerror or str(e) or type(e).__name__
    name = errno.errorcode.get(e.errno) if isinstance(e.errno, int) else None
    return f"{reason} ({name})" if name else reason


class LeftoverWarning(UserWarning):
    """A write succeeded (or failed cleanly) but some of its own files, or an overwritten table's old files,
    could not be deleted: the message names the directory, which the next write to the table or `gpuwrite clean
    PATH --force` removes."""
