"""Whether a node's process still runs, for a node on this machine: its heartbeat names its pid and its host.

A heartbeat that stops says little on its own: the process may have died, or it may live but be held up (a busy
machine; Fast DDS holding a process's interpreter for seconds while a peer's shared memory goes away). Where the
watcher shares the node's kernel and pid namespace, ``/proc`` tells the two apart at once (Linux only; elsewhere
every node counts as remote and the heartbeat's silence decides alone).
"""

from __future__ import annotations

import os
from pathlib import Path

RUNNING, STOPPED, GONE, UNKNOWN = "running", "stopped", "gone", "unknown"


def host_id() -> str:
    """This machine's boot and pid namespace, e.g. ``'1b6f…/pid:[4026531836]'``: processes with the same id see
    each other's pids. Empty where ``/proc`` does not say (then no node is taken for local)."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip() + "/" + os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""


def process_state(pid: int) -> tuple[str, int | None]:
    """(state, start time in clock ticks since boot) of process ``pid`` on this machine: GONE when there is no such
    process or it has exited (a zombie not yet reaped), STOPPED when a signal stopped it (SIGSTOP, a debugger),
    RUNNING otherwise (running, sleeping or waiting on the disk), UNKNOWN when ``/proc`` cannot be read."""
    if pid <= 0:
        return UNKNOWN, None
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return GONE, None
    except OSError:
        return UNKNOWN, None
    fields = stat[stat.rindex(")") + 2:].split()  # after the command name, which may hold spaces and parentheses
    state, started = fields[0], int(fields[19])  # stat's 3rd and 22nd fields
    if state in ("Z", "X", "x"):
        return GONE, started
    return (STOPPED if state in ("T", "t") else RUNNING), started


class LocalProcess:
    """The process behind one heartbeat instance, when it runs on this machine: ``state()`` is GONE once it ended,
    also when another process has since taken its pid (its start time differs from the one first seen)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.started = process_state(pid)[1]

    def state(self) -> str:
        """RUNNING, STOPPED, GONE or UNKNOWN (see ``process_state``)."""
        state, started = process_state(self.pid)
        if state != GONE and self.started is not None and started != self.started:
            return GONE  # the pid was reused
        return state
