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


def _take(lock: Path) -> int | None:
    """An fd holding the lock file's exclusive flock, or None when a living process holds it (or it cannot be
    opened: then it is left alone)."""
    try:
        fd = os.open(lock, os.O_RDWR)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


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
        fd = _take(lock) if lock.exists() else None
        if fd is None:
            continue  # in use, or being created (no lock yet)
        try:  # the lock is held while both go: a process starting now cannot take the segment meanwhile
            for path in (segment, lock):
                try:
                    size = path.stat().st_size
                    path.unlink()
                except OSError:
                    continue  # another cleaner, or its owner, removed it meanwhile
                removed, freed = removed + 1, freed + size
        finally:
            os.close(fd)
    return removed, freed
