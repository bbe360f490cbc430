"""Fork a child that runs a program, with the parent's heap kept out of the child's collections.

A parent that forks a child per program run holds torch and what `preload` imported: hundreds of
thousands of objects. Each full garbage collection in a child walked all of them again (pytest
collects five times as it ends: over a second per run with torch loaded) and, by touching them,
copied their memory pages. `gc.freeze()` right before `os.fork()`, as Python's documentation of
`gc.freeze` advises for a parent that forks without exec, moves them to a generation no
collection visits; the child's own objects are collected as usual, and the parent takes its
objects back as soon as the child is forked.
"""

from __future__ import annotations

import gc
import os


def fork() -> int:
    """`os.fork()`: 0 in the child, the child's pid in the parent."""
    gc.freeze()
    pid = -1
    try:
        pid = os.fork()
        return pid
    finally:
        if pid != 0:  # the parent, also when the fork failed
            gc.unfreeze()
