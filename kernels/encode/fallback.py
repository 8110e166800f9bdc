"""parquet-java's dictionary fallback accounting, written once for both backends: the raw (PLAIN-equivalent)
size of a page's values and the first-page test whether the dictionary stays. The device kernels inline
these; the host backends and the page planner call the same compiled functions."""

from __future__ import annotations

from .._jit import jit_inline
from ..plan.layout import K_BOOL

# SPEC: FallbackValuesWriter raw size (PlainValuesWriter's buffered bytes): PLAIN bytes per value of the fixed
# kinds, by K_* code; 0 for the others (BOOLEAN counts packed bits, byte kinds their length + 4 each,
# FIXED_LEN_BYTE_ARRAY and INT96 included). Also the width the PLAIN encoders write these kinds at.
PLAIN_WIDTH = (0, 4, 8, 4, 8, 0, 0, 0)


@jit_inline
def raw_size(kind: int, n: int, nbytes: int) -> int:
    """Raw bytes of n values of K_* `kind` whose bytes (byte kinds only) total `nbytes`: what parquet-java's
    writers buffer for a page without the dictionary (booleans: whole bytes of packed bits)."""
    if kind == K_BOOL:
        return n // 8
    width = PLAIN_WIDTH[kind]
    if width != 0:
        return width * n
    return nbytes + 4 * n


@jit_inline
def keeps_dictionary(encoded: int, dictionary: int, raw: int) -> bool:
    """SPEC: DictionaryValuesWriter.isCompressionSatisfying, judged on the chunk's first page only: the
    dictionary stays iff its encoded ids plus the dictionary's bytes are smaller than the raw values."""
    return encoded + dictionary < raw
