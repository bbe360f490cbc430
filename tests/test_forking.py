"""`forking.fork`: the child's collections leave the parent's objects alone; the parent's do not."""

from __future__ import annotations

import gc
import os

from devfix import forking


def test_the_child_starts_with_the_parents_objects_frozen_and_the_parent_keeps_collecting_them():
    held = [[index] for index in range(50_000)]  # objects of the parent, tracked by the collector
    read_end, write_end = os.pipe()
    pid = forking.fork()
    if pid == 0:  # the child: report how many objects its collections skip, then end at once
        os.write(write_end, str(gc.get_freeze_count()).encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        frozen_in_child = int(pipe.read())
    os.waitpid(pid, 0)
    assert frozen_in_child >= len(held)
    assert gc.get_freeze_count() == 0
