"""The supervisor of ``homiebot up``: restarts with back-off, gives up on a node that keeps dying,
stops the graph on a configuration error. Processes here are tiny Python programs, not nodes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from homiebot.core.errors import ConfigError
from homiebot.ros.bringup.up import Restarts, Supervisor
from homiebot.ros.kit.environment import check_domain, ros_environment


def exits(status: int):
    return lambda: subprocess.Popen([sys.executable, "-c", f"import sys; sys.exit({status})"])


def sleeps():
    return lambda: subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


def settle(sup: Supervisor) -> None:
    for m in sup.members.values():
        if m.due is None and m.proc.poll() is None and m.name != "steady":
            m.proc.wait(30)


def test_a_dying_node_is_restarted_with_growing_back_off_then_given_up():
    log: list[str] = []
    sup = Supervisor({"flaky": exits(1), "steady": sleeps()}, Restarts(first=1.0, longest=4.0, limit=3, window=100.0), log.append)
    try:
        now, delays = 0.0, []
        for _ in range(4):
            settle(sup)
            assert sup.poll(now) is None
            member = sup.members["flaky"]
            if member.given_up:
                break
            delays.append(member.due - now)
            now = member.due
            assert sup.poll(now) is None  # due: started again
        assert delays == [1.0, 2.0, 4.0]
        assert sup.members["flaky"].given_up and "keeps dying" in log[-1] and "not restarted again" in log[-1]
        assert sum("restarted node flaky" in line for line in log) == 3
        assert sup.members["steady"].proc.poll() is None and not sup.members["steady"].deaths
    finally:
        sup.members["steady"].proc.kill()
        sup.members["steady"].proc.wait()


def test_deaths_outside_the_window_do_not_count():
    sup = Supervisor({"rare": exits(1)}, Restarts(first=0.5, limit=1, window=10.0), lambda text: None)
    for now in (0.0, 100.0, 200.0):
        settle(sup)
        sup.poll(now)
        assert not sup.members["rare"].given_up
        sup.poll(sup.members["rare"].due)


def test_a_configuration_error_stops_the_graph():
    log: list[str] = []
    sup = Supervisor({"misconfigured": exits(2)}, log=log.append)
    settle(sup)
    assert sup.poll(0.0) == 2 and "configuration error" in log[-1]


def test_a_node_that_cannot_run_stops_the_graph_with_status_3():
    log: list[str] = []
    sup = Supervisor({"world": exits(3), "steady": sleeps()}, log=log.append)
    try:
        settle(sup)
        assert sup.poll(0.0) == 3 and "cannot run" in log[-1] and "stopping the graph" in log[-1]
        assert not sup.members["world"].deaths  # not restarted: it would fail the same way
    finally:
        sup.members["steady"].proc.kill()
        sup.members["steady"].proc.wait()


@pytest.mark.parametrize("domain", ["233", "-1", "abc", "1e2"])
def test_a_domain_fast_dds_cannot_use_is_refused_in_one_line_before_any_node_starts(domain: str) -> None:
    env = {**os.environ, "ROS_DOMAIN_ID": domain}
    done = subprocess.run([sys.executable, "-m", "homiebot.cli", "up"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [f"homiebot: error: ROS_DOMAIN_ID={domain!r} cannot be used: Fast DDS takes a "
                                                "whole number from 0 to 232 (ROS 2 recommends 0 to 101 on Linux)"]


def test_the_domain_range_fast_dds_takes() -> None:
    for good in ("", "0", "101", "232", " 7 "):
        check_domain({"ROS_DOMAIN_ID": good})
    with pytest.raises(ConfigError, match="233"):
        ros_environment(233)


def test_the_shared_memory_of_a_killed_node_is_freed_once_it_is_old_enough(tmp_path):
    """A node that dies holding a Fast DDS segment (its lock file flocked) leaves both; the sweep after its death
    (shm.GRACE later: younger files may be a starting process's) removes them while the graph runs on."""
    from homiebot.ros.bringup.up import ShmSweeper
    from homiebot.ros.kit.shm import GRACE, INITIALISED, clean_stale

    holder = ("import fcntl, os, sys, time\n"
              f"seg = os.path.join({str(tmp_path)!r}, 'fastrtps_0123456789abcdef')\n"
              f"open(seg, 'wb').write(({INITIALISED}).to_bytes(4, 'little') + bytes(1024))\n"
              "lock = os.open(seg + '_el', os.O_CREAT | os.O_RDWR)\n"
              "fcntl.flock(lock, fcntl.LOCK_EX)\n"
              "print('held', flush=True)\n"
              "time.sleep(60)\n")
    log: list[str] = []
    sweeper = ShmSweeper(clean=lambda: clean_stale(root=tmp_path), log=log.append)
    node = subprocess.Popen([sys.executable, "-c", holder], stdout=subprocess.PIPE, text=True)
    assert node.stdout.readline().strip() == "held"
    sup = Supervisor({"mapper": lambda: node}, Restarts(first=1.0), lambda text: None, on_death=sweeper.death)
    node.kill()  # a process we started
    node.wait()
    assert sup.poll(0.0) is None and sweeper.due == GRACE + 1.0
    sweeper.poll(GRACE)  # not yet: the files may still be young
    assert len(list(tmp_path.iterdir())) == 2 and log == []
    old = os.stat(tmp_path / "fastrtps_0123456789abcdef").st_mtime - GRACE - 5  # as they are GRACE later
    for path in tmp_path.iterdir():
        os.utime(path, (old, old))
    sweeper.poll(GRACE + 1.0)
    assert list(tmp_path.iterdir()) == [] and "removed 2 Fast DDS shared-memory files" in log[0]
    assert sweeper.due is None
