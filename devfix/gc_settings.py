"""Fewer garbage collections while devfix analyses source (check, diff, fix, the language server).

An analysis allocates hundreds of thousands of small objects per file (`ast` and libcst nodes,
metadata maps) that live until the file is done. At CPython's default thresholds (a collection
every 700 net allocations, a full one every 100 of those) the collector walks them again and again
and finds little: the trees hold few reference cycles. Rarer collections save about a tenth of a
check's time (`benchmarks/check_vs_parse.py` runs both its floor and the check under them); mypy
does the same. Not for `devfix run`, which executes the user's program in-process.
"""

from __future__ import annotations

import gc

ANALYSIS_THRESHOLDS = (100_000, 50, 100)  # youngest generation, then how many of each before the next


def for_analysis() -> None:
    gc.set_threshold(*ANALYSIS_THRESHOLDS)
