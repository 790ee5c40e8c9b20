"""How deeply a JSON text nests, counted on its bytes.

Python's ``json`` (and every walk of what it returns) recurses once per level, and fails with
``RecursionError`` some thousand levels down; Loro's conversions of a deep value to Python
crash the process outright. Counting first costs two passes of C code over the bytes, whatever
the nesting.
"""

from __future__ import annotations

import re
from itertools import accumulate

# A JSON string, or an unterminated one running to the end: every quote starts a match, so one
# left-to-right pass removes every string and no position is scanned twice.
_STRING = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+(?:"|\\?\Z)', re.S)
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def json_depth(body: bytes) -> int:
    """How deeply the arrays and objects in the JSON text ``body`` nest (brackets inside
    strings do not count; in text that is not JSON the figure is only an estimate)."""
    brackets = _STRING.sub(b"", body).translate(None, _NOT_BRACKET)
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)
