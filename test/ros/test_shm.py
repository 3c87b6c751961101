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
        assert clean_stale(tmp_path) == (0, 0)  # all just made: their processes may not hold their locks yet
        for name in ("fastrtps_dead", "fastrtps_port7411", "fastrtps_alive"):
            for path in (tmp_path / name, tmp_path / f"{name}_el"):
                os.utime(path, (path.stat().st_mtime - 3600,) * 2)
        files, freed = clean_stale(tmp_path)
        again = clean_stale(tmp_path)
    finally:
        os.close(holder)
    assert files == 4 and freed == 8192 + 4096 and again == (0, 0)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fastrtps_alive", "fastrtps_alive_el", "fastrtps_no_lock_yet", "someone_else"]
    assert clean_stale(tmp_path) == (2, 4096)  # its process has ended: the lock is free
    assert clean_stale(tmp_path / "missing") == (0, 0)


def test_files_killed_half_made_and_ports_without_a_listener_go_once_old(tmp_path):
    """A port created but never initialised makes the next participant of any domain spin forever."""
    initialised = (2).to_bytes(4, "little") + b"\0" * 60
    (tmp_path / "fastrtps_port7004").write_bytes(b"")  # killed between create and truncate
    (tmp_path / "fastrtps_port7005").write_bytes(b"\0" * 64)  # killed before its flag was set
    (tmp_path / "fastrtps_port16911").write_bytes(initialised)  # its listener is gone
    (tmp_path / "fastrtps_0123456789abcdef").write_bytes(b"")  # a participant's segment, killed half-made
    (tmp_path / "fastrtps_fedcba9876543210").write_bytes(initialised)  # built, its lock not made yet: left
    assert clean_stale(tmp_path) == (0, 0)  # all young: their creators may be at work
    old = os.stat(tmp_path / "fastrtps_port7004").st_mtime - 3600
    for path in tmp_path.iterdir():
        os.utime(path, (old, old))
    assert clean_stale(tmp_path) == (4, 128)
    assert [p.name for p in tmp_path.iterdir()] == ["fastrtps_fedcba9876543210"]
