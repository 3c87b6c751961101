"""Stale Fast DDS shared memory is removed, and nothing a living process holds or that is not Fast DDS's."""

from __future__ import annotations

import fcntl
import os

from homiebot.ros.kit.shm import clean_stale


def make(root, name: str, size: int = 4096) -> None:
    (root / name).write_bytes(b"\0" * size)
    (root / f"{name}_el").write_bytes(b"")


def test_only_segments_and_ports_nobody_holds_are_removed(tmp_path):
    make(tmp_path, "fastrtps_dead", 8192)
    make(tmp_path, "fastrtps_port7411")
    make(tmp_path, "fastrtps_alive")
    (tmp_path / "fastrtps_no_lock_yet").write_bytes(b"\0" * 10)  # being created: its lock file is not there yet
    (tmp_path / "someone_else").write_bytes(b"\0")
    holder = os.open(tmp_path / "fastrtps_alive_el", os.O_RDWR)
    fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a living participant holds its segment's lock
    try:
        files, freed = clean_stale(tmp_path)
        again = clean_stale(tmp_path)
    finally:
        os.close(holder)
    assert files == 4 and freed == 8192 + 4096 and again == (0, 0)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fastrtps_alive", "fastrtps_alive_el", "fastrtps_no_lock_yet", "someone_else"]
    assert clean_stale(tmp_path) == (2, 4096)  # its process has ended: the lock is free
    assert clean_stale(tmp_path / "missing") == (0, 0)
