"""Shared memory that Fast DDS processes left behind.

Each Fast DDS participant maps a segment in /dev/shm (the graph's profile makes it 32 MiB, for camera
frames) and holds a lock on a companion ``_el`` file while it lives; each port (a queue other
processes write to) is held the same way by the one process that listens on it. A process that ends
normally removes what it made; one that is killed (SIGKILL, an OOM kill, a crash) leaves it. Two kinds
of leftovers hurt:

* whole segments and ports nobody holds: a robot whose supervisor restarts crashed nodes for days, or a
  machine that runs the test suite many times, fills /dev/shm until the next publish blocks;
* a file killed half-made (created, never initialised): the next process of ANY domain that opens that
  name spins forever inside Fast DDS's participant creation (some port numbers, 7000 and up, are shared
  by every domain), so one node killed at the wrong microsecond hangs every later graph on the machine.

``clean_stale`` removes both, as ``fastdds shm clean`` does for the first; every homiebot ROS process
runs it before its first participant (``kit.common.init``) and ``homiebot up`` reports what it freed.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

SHM = Path("/dev/shm")
PREFIX = "fastrtps_"  # segments and ports of Fast DDS 2.x (the name stayed when the project was renamed)
PORT_PREFIX = PREFIX + "port"
LOCK_SUFFIX = "_el"
INITIALISED = 2  # boost.interprocess's flag, the first 4 bytes of a managed segment, once it is built
GRACE = 30.0  # s: younger files without a lock may be in creation right now (which takes microseconds)


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


def _half_made(path: Path) -> bool:
    """Whether a segment or port was created but never initialised (its creator died in between)."""
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError:
        return False
    return len(head) < 4 or int.from_bytes(head, "little") != INITIALISED


def _orphan(path: Path, now: float, grace: float) -> bool:
    """A file without its lock file that no creator is still building: a port whose listener is gone, or
    anything half-made."""
    try:
        if now - path.stat().st_mtime < grace:
            return False
    except OSError:
        return False
    return path.name.startswith(PORT_PREFIX) or _half_made(path)


def _young(segment: Path, lock: Path, now: float, grace: float) -> bool:
    """Whether the segment or its lock file changed less than ``grace`` seconds ago (or is gone)."""
    try:
        return now - max(segment.stat().st_mtime, lock.stat().st_mtime) < grace
    except OSError:
        return True


def _remove(paths: tuple[Path, ...]) -> tuple[int, int]:
    removed = freed = 0
    for path in paths:
        try:
            size = path.stat().st_size
            path.unlink()
        except OSError:
            continue  # another cleaner, or its owner, removed it meanwhile
        removed, freed = removed + 1, freed + size
    return removed, freed


def clean_stale(root: Path = SHM, grace: float = GRACE) -> tuple[int, int]:
    """Remove the Fast DDS segments and ports under ``root`` that no living process holds, and those left
    half-made. Returns (files removed, bytes freed); files in use, files younger than ``grace`` seconds
    (a process starting beside this one makes its files, then locks them), and anything not Fast DDS's,
    are left alone."""
    removed = freed = 0
    try:
        names = os.listdir(root)
    except OSError:
        return 0, 0  # no shared memory file system here
    now = time.time()
    for name in names:
        if not name.startswith(PREFIX) or name.endswith(LOCK_SUFFIX):
            continue
        segment, lock = root / name, root / (name + LOCK_SUFFIX)
        if not lock.exists():
            if _orphan(segment, now, grace):
                files, size = _remove((segment,))
                removed, freed = removed + files, freed + size
            continue
        if _young(segment, lock, now, grace):
            continue  # its creator may not hold the lock yet (made, not yet locked): never take a starting process's
        fd = _take(lock)
        if fd is None:
            continue  # in use
        try:  # the lock is held while both go: a process starting now cannot take the segment meanwhile
            files, size = _remove((segment, lock))
            removed, freed = removed + files, freed + size
        finally:
            os.close(fd)
    return removed, freed
