"""Start the whole graph as one process per node (what ``ros2 launch homiebot sim.launch.py`` does
where the ROS launch tools are installed), keep it running (a node that dies is restarted, with
back-off and a limit), and stop it cleanly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from homiebot.ros.bringup.graph import NodeSpec, ros_args
from homiebot.ros.kit.names import DEFAULT_NAMESPACE
from homiebot.ros.kit.shm import GRACE, clean_stale

CANNOT_RUN = 3  # a node's exit status when something outside the graph is missing (homiebot.ros.kit.common.CannotRun)


def tied_to_this_process(own_group: bool = False) -> Callable[[], None] | None:
    """What a child runs before it starts (``preexec_fn``) so that it gets SIGTERM when this process dies,
    SIGKILL included: a killed supervisor must not leave a graph running that a new one would meet.
    ``own_group``: the child leaves the terminal's process group, so Ctrl-C reaches it only through
    ``stop`` (a driver outlives the nodes that stop the robot through it). Linux only
    (``prctl(PR_SET_PDEATHSIG)``); None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    parent = os.getpid()

    def tie() -> None:
        if own_group:
            os.setpgid(0, 0)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:  # the supervisor died before the tie was made
            os.kill(os.getpid(), signal.SIGTERM)

    return tie


PR_SET_PDEATHSIG = 1  # linux/prctl.h
LAST = ("sim_driver",)  # drivers: the nodes that command the robot stop it through them, so they go last


def spawn(spec: NodeSpec, env: dict[str, str]) -> subprocess.Popen:
    """One node as a process, run by its own interpreter when the spec names one (``spec.python``); it
    ends when this process does."""
    return subprocess.Popen([spec.python or sys.executable, "-m", spec.module, *ros_args(spec)], env=env,
                            preexec_fn=tied_to_this_process(own_group=spec.name in LAST))


def spawn_all(specs: Sequence[NodeSpec], env: dict[str, str], compose: bool = False) -> dict[str, subprocess.Popen]:
    """One process per node, or (``compose``) all nodes in one process; not supervised."""
    return {name: start() for name, start in starters(specs, env, compose).items()}


def stop(procs: dict[str, subprocess.Popen], grace: float = 5.0) -> None:
    """SIGTERM every node we started, then SIGKILL those still running after ``grace`` seconds. The graph's
    nodes stop together (the task manager moves an episode's folder only once the recorder has closed its
    bag), the robot's driver after them: their last act is the robot's stop, which it must still serve."""
    for last in (False, True):
        _stop_together({n: p for n, p in procs.items() if (n in LAST) is last}, time.monotonic() + grace)


def _stop_together(procs: dict[str, subprocess.Popen], deadline: float) -> None:
    for p in procs.values():
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs.values():
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


@dataclass
class Restarts:
    """When to restart a node that died: back-off doubling from ``first`` to ``longest`` seconds; after
    ``limit`` restarts within ``window`` seconds the node is reported and left down."""

    first: float = 0.5
    longest: float = 8.0
    limit: int = 5
    window: float = 60.0


@dataclass
class _Member:
    name: str
    start: Callable[[], subprocess.Popen]
    proc: subprocess.Popen
    deaths: list[float] = field(default_factory=list)
    due: float | None = None  # when to start it again
    given_up: bool = False


class Supervisor:
    """Keeps the graph's processes running, as launch's ``respawn`` does: a node that exits is started
    again after a back-off; one that keeps dying is reported and left down. A node that exits with
    status 2 (its parameters or config are wrong) or 3 (something outside the graph that it needs, such
    as a robot driver, is missing) is not restarted: it would fail the same way; the graph stops with
    that status (the node has said why)."""

    def __init__(self, starters: dict[str, Callable[[], subprocess.Popen]], policy: Restarts = Restarts(),
                 log: Callable[[str], None] = lambda text: print(text, file=sys.stderr, flush=True),
                 on_death: Callable[[float], None] = lambda now: None) -> None:
        self.policy, self.log, self.on_death = policy, log, on_death
        self.members = {name: _Member(name, start, start()) for name, start in starters.items()}

    @property
    def procs(self) -> dict[str, subprocess.Popen]:
        return {m.name: m.proc for m in self.members.values()}

    def poll(self, now: float | None = None) -> int | None:
        """Restart what died and is due; returns an exit status when the graph must stop (a node's
        configuration error), else None."""
        now = time.monotonic() if now is None else now
        for m in self.members.values():
            if m.given_up:
                continue
            if m.due is not None:
                if now >= m.due:
                    m.proc, m.due = m.start(), None
                    self.log(f"homiebot graph: restarted node {m.name} (pid {m.proc.pid})")
                continue
            code = m.proc.poll()
            if code is None:
                continue
            if code == 2:
                self.log(f"homiebot graph: node {m.name} exited with status 2 (a configuration error); stopping the graph")
                return 2
            if code == CANNOT_RUN:
                self.log(f"homiebot graph: node {m.name} cannot run (status {code}, see above); stopping the graph")
                return CANNOT_RUN
            self.on_death(now)
            m.deaths = [t for t in m.deaths if now - t < self.policy.window] + [now]
            if len(m.deaths) > self.policy.limit:
                m.given_up = True
                self.log(f"homiebot graph: node {m.name} keeps dying ({len(m.deaths)} exits within {self.policy.window:g} s, "
                         f"last status {code}); it is not restarted again")
                continue
            delay = min(self.policy.longest, self.policy.first * 2 ** (len(m.deaths) - 1))
            m.due = now + delay
            self.log(f"homiebot graph: node {m.name} exited with status {code}; restarting it in {delay:g} s "
                     f"(restart {len(m.deaths)} of at most {self.policy.limit} within {self.policy.window:g} s)")
        return None


class ShmSweeper:
    """Frees the Fast DDS shared memory of the nodes that died, once it is older than ``shm.GRACE`` (younger files
    may be a starting process's, so the sweep waits that long after the last death); before, a killed node's
    files stayed until the graph stopped, and a node killed again and again filled /dev/shm."""

    def __init__(self, clean: Callable[[], tuple[int, int]] = clean_stale,
                 log: Callable[[str], None] = lambda text: print(text, flush=True)) -> None:
        self.clean, self.log = clean, log
        self.due: float | None = None

    def death(self, now: float) -> None:
        """A node died at ``now``: sweep once its files are old enough."""
        self.due = now + GRACE + 1.0

    def poll(self, now: float) -> None:
        """Sweep if one is due."""
        if self.due is None or now < self.due:
            return
        self.due = None
        files, freed = self.clean()
        if files:
            self.log(f"homiebot graph: removed {files} Fast DDS shared-memory files ({freed / 2**20:.0f} MiB) of nodes that died")


def starters(specs: Sequence[NodeSpec], env: dict[str, str], compose: bool = False) -> dict[str, Callable[[], subprocess.Popen]]:
    """How to start each process of the graph (one per node, or one for all composed nodes)."""
    if compose:  # policy servers keep their own processes: they exist to isolate their model's software stack
        servers = [s for s in specs if s.executable == "homiebot_policy_server"]
        members = [s for s in specs if s not in servers]
        payload = json.dumps([{k: v for k, v in spec.__dict__.items() if k != "python"} for spec in members])
        out: dict[str, Callable[[], subprocess.Popen]] = {
            "graph": lambda: subprocess.Popen([sys.executable, "-m", "homiebot.ros.bringup.compose", payload], env=env,
                                              preexec_fn=tied_to_this_process())}
        return out | {spec.name: _spawner(spec, env) for spec in servers}
    return {spec.name: _spawner(spec, env) for spec in specs}


def _spawner(spec: NodeSpec, env: dict[str, str]) -> Callable[[], subprocess.Popen]:
    """What starts (and restarts) one node's process."""
    return lambda: spawn(spec, env)


PROBE_WAIT = 3.0  # s to listen for another graph's heartbeats (every node beats twice a second)


def graph_running(specs: Sequence[NodeSpec], env: dict[str, str], wait: float = PROBE_WAIT) -> str | None:
    """A line naming the graph that already runs in this graph's namespace on its ROS domain (a node of the same
    name beating there), or None. Listened for in a process of its own (``graph_probe``); when that cannot run,
    the graph starts as before."""
    if not specs:
        return None
    namespace = specs[0].namespace
    try:
        probe = subprocess.run([sys.executable, "-m", "homiebot.ros.clients.graph_probe", namespace, str(wait),
                                *sorted({s.name for s in specs})], env=env, capture_output=True, text=True, timeout=wait + 60,
                               preexec_fn=tied_to_this_process())
        found = json.loads(probe.stdout.strip().splitlines()[-1]) if probe.returncode == 0 and probe.stdout.strip() else {}
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return None
    if not found:
        return None
    where = "" if namespace == DEFAULT_NAMESPACE else f" --namespace {namespace.lstrip('/')}"
    return (f"a homiebot graph is already running in namespace {namespace} on ROS_DOMAIN_ID={env.get('ROS_DOMAIN_ID', '0')} "
            f"(its {found.get('node')} node, pid {found.get('pid')}); submit to it (`homiebot submit{where}`), stop it first, "
            "or start this one with another --namespace or ROS_DOMAIN_ID")


def run_graph(specs: Sequence[NodeSpec], env: dict[str, str], compose: bool = False, policy: Restarts = Restarts()) -> int:
    """Run and supervise the graph until Ctrl-C or SIGTERM; returns non-zero if it had to stop."""
    signal.signal(signal.SIGTERM, _interrupt)  # stop the graph on SIGTERM as on Ctrl-C
    signal.signal(signal.SIGINT, _interrupt)  # even when started in the background, where SIGINT is ignored
    first = graph_running(specs, env)
    if first:
        print(f"homiebot up: {first}", file=sys.stderr, flush=True)
        return CANNOT_RUN
    files, freed = clean_stale()
    if files:
        print(f"homiebot graph: removed {files} Fast DDS shared-memory files ({freed / 2**20:.0f} MiB) left by killed processes", flush=True)
    sweeper = ShmSweeper()
    supervisor = Supervisor(starters(specs, env, compose), policy, on_death=sweeper.death)
    print("homiebot graph: " + ", ".join(f"{n} (pid {p.pid})" for n, p in supervisor.procs.items()), flush=True)
    namespace = specs[0].namespace if specs else DEFAULT_NAMESPACE
    where = "" if namespace == DEFAULT_NAMESPACE else f" --namespace {namespace.lstrip('/')}"
    print(f"ROS_DOMAIN_ID={env.get('ROS_DOMAIN_ID', '0')} ROS_AUTOMATIC_DISCOVERY_RANGE={env.get('ROS_AUTOMATIC_DISCOVERY_RANGE', '')} "
          f"namespace {namespace}; submit tasks with `homiebot submit{where} \"INSTRUCTION\"`; Ctrl-C stops the graph", flush=True)
    try:
        while True:
            now = time.monotonic()
            status = supervisor.poll(now)
            if status is not None:
                return status
            sweeper.poll(now)
            time.sleep(0.2)
    except KeyboardInterrupt:
        return 0
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the shutdown short
        stop(supervisor.procs)
        clean_stale()  # the segments of nodes the middleware could not release in time (common.FINALIZE_LIMIT)
