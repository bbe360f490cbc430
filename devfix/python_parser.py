"""Python's own parser as the user's `python` runs it: at the default recursion limit.

devfix raises the recursion limit for libcst's deep visitors (`budget.run_deep`). CPython's parser
and AST take their depth limit from it, and would then accept a 20,000-term sum that libcst's
native parser does not survive. Every `ast` parse of a user's file goes through here, so what
reaches libcst is what a default CPython accepts.
"""

from __future__ import annotations

import ast
import sys
import threading

DEFAULT_RECURSION_LIMIT = 1000  # CPython's own

_limit_lock = threading.Lock()  # the limit is process-wide


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    with _limit_lock:
        raised = sys.getrecursionlimit()
        if raised <= DEFAULT_RECURSION_LIMIT:
            return ast.parse(source, filename=filename)
        sys.setrecursionlimit(DEFAULT_RECURSION_LIMIT)
        try:
            return ast.parse(source, filename=filename)
        finally:
            sys.setrecursionlimit(raised)
