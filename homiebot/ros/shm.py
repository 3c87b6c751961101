"""Shared memory that Fast DDS processes left behind.

Each Fast DDS participant maps a segment in /dev/shm (the graph's profile makes it 32 MiB, for camera
frames) and holds a lock on a companion ``_el`` file while it lives. A process that ends normally
removes its segment; one that is killed (SIGKILL, an OOM kill, a crash) leaves it. A robot whose
supervisor restarts crashed nodes for days, or a machine that runs the test suite many times, fills
/dev/shm until the next publish blocks. ``clean_stale`` removes what no living process holds, as
``fastdds shm clean`` does; ``homiebot up`` runs it before starting the graph.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

SHM = Path("/dev/shm")
PREFIX = "fastrtps_"  # segments and ports of Fast DDS 2.x (the name stayed when the project was renamed)
LOCK_SUFFIX = "_el"


def _held(lock: Path) -> bool:
    """Whether a living process holds the lock file (an exclusive flock that we cannot take)."""
    try:
        fd = os.open(lock, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing releases a lock we took
    return False


def clean_stale(root: Path = SHM) -> tuple[int, int]:
    """Remove the Fast DDS segments and ports under ``root`` that no living process holds.
    Returns (files removed, bytes freed); files in use, and anything not Fast DDS's, are left alone."""
    removed = freed = 0
    try:
        names = os.listdir(root)
    except OSError:
        return 0, 0  # no shared memory file system here
    for name in names:
        if not name.startswith(PREFIX) or name.endswith(LOCK_SUFFIX):
            continue
        segment, lock = root / name, root / (name + LOCK_SUFFIX)
        if not lock.exists() or _held(lock):
            continue  # being created (its lock comes first) or in use
        for path in (segment, lock):
            try:
                size = path.stat().st_size
                path.unlink()
            except OSError:
                continue  # another cleaner, or its owner, removed it meanwhile
            removed, freed = removed + 1, freed + size
    return removed, freed
