"""The simulator-only side channel of a robot served by the sim driver, as a bridged world reads it.

Gazebo publishes model states next to a simulated robot's driver topics; the sim driver
(``homiebot_sim_driver``) likewise publishes the embedded home's truth on ``TRUTH_TOPIC`` and serves
simulator-only typed services under ``SIM_SERVICES`` (homiebot_msgs Sim*; the calls are the
``SimDriver`` protocol, ``homiebot.ros.clients.sim_client`` its ROS 2 client): ``expert/reset`` and
``expert/act`` (privileged expert policies computed from its truth), ``goal`` (whether task goal
conditions hold), ``restart`` (the home back to its initial state, a new episode), and for lock-step
``mode``, ``step`` and ``truth``. Nothing here imports the home: a bridged world (``ros2_robot`` with
``sim_truth: true``) reads the topic into a ``SimTruth``, whose belief is the error detector's truth
in simulation and whose ``driver`` lets the ``sim_expert`` policy ask the simulator for the next
command. A real robot has neither.

Truth message (homiebot_msgs/GroundTruth, read into a dict by ``homiebot.ros.messages.truth``):
``robot``, ``stamp`` (ns), ``dynamic`` (the home's moving state), ``belief``
(``homiebot.core.errors.take_snapshot`` of the home's belief at the robot's pose), ``powered``, ``standing``,
``counters`` (commands the driver received and applied), ``labels`` (instance id -> {name, category}
for the segmentation images on ``segmentation_topic(camera)``, which the driver publishes for the
cameras of the planner's views).

``TruthCheck`` judges skill attempts of a bridged world in simulation from that truth.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any, Protocol

from homiebot.core.attempt_checks import RobotSignalsCheck, Tolerances
from homiebot.core.contracts import Action, Subtask
from homiebot.core.errors import EntityLike, SnapshotBelief
from homiebot.core.robot import Robot, RobotUnavailable

TRUTH_TOPIC = "/homiebot/sim/ground_truth"
SIM_SERVICES = "/homiebot/sim"  # its services: /homiebot/sim/{truth,restart,step,mode,goal,expert/reset,expert/act}


class SimDriver(Protocol):
    """The sim driver's simulator-only calls. Each waits at most ``timeout`` seconds and raises
    RobotUnavailable when the driver does not answer or reports an error."""

    def truth(self, timeout: float) -> dict[str, Any]:
        """The truth message of this instant (see the module doc)."""

    def restart(self, timeout: float) -> int:
        """The home back to its initial state; the stamp (ns) from which messages are the new episode's."""

    def mode(self, timeout: float) -> tuple[bool, int]:
        """Whether the driver runs in lock-step, and its simulated time (ns)."""

    def step(self, seconds: float, after: Mapping[str, int], until: str | None, timeout: float,
             cameras: list[str] | None = None) -> tuple[int, dict[str, int]]:
        """Lock-step: advance ``seconds`` once the counted commands ``after`` (and the goal ``until``) have
        arrived, rendering ``cameras`` at the new instant (None: all); the new simulated time and the
        driver's command counters."""

    def render(self, cameras: list[str], timeout: float) -> int:
        """Lock-step: render ``cameras`` at the present instant (the last step did not); that instant (ns)."""

    def goal(self, conditions: list[Any], timeout: float) -> bool:
        """Whether the task goal conditions (the task format's JSON) hold in the home now."""

    def expert_reset(self, policy: str, params: Mapping[str, Any], instruction: str, subtask: Subtask, timeout: float) -> None:
        """Start the home's expert ``policy`` on ``subtask``."""

    def expert_act(self, step: int, timeout: float) -> tuple[list[Any], str]:
        """The running expert's next commands (``homiebot.policies.base`` commands) and why it cannot plan ("")."""


def segmentation_topic(camera: str) -> str:
    """The sim-only instance segmentation of a driver camera (sensor_msgs/Image 32SC1, mounted as the camera
    is; ids as in the truth message's ``labels``), as a simulator's segmentation camera publishes it."""
    return f"/homiebot/sim/{camera}/segmentation"


class SimTruth:
    """The newest truth message of the sim driver, and its calls (see the module doc).

    ``driver`` reaches the sim driver's services (``SimDriver``); ``stale_after``
    seconds without a message and the truth is gone (``fresh`` is false). The driver publishes it at
    5 Hz between camera renderings, so on a loaded machine it may pause for a second or two; that the
    driver died is told by its odometry (the bridge's ``stale_after``), not by this.

    ``lockstep``: the driver runs in lock-step; the topic is then ignored and the truth is asked for
    (``refresh``) where it is read after commands (observations, attempt checks), so that every reader
    sees the instant the last command left, whatever the load."""

    def __init__(self, driver: SimDriver, stale_after: float = 5.0, lockstep: bool = False, timeout: float = 10.0) -> None:
        self.driver = driver
        self.timeout = timeout
        self.stale_after = stale_after
        self.lockstep = lockstep
        self._lock = threading.Lock()
        self._data: dict[str, Any] | None = None
        self._received = 0.0

    def update(self, data: dict[str, Any]) -> None:
        """Keep a truth message read from the topic (ignored when it has no belief)."""
        if self.lockstep:
            return  # lock-step readers ask for the truth of the instant (refresh)
        self._keep(data)

    def _keep(self, data: Any) -> None:
        if isinstance(data, dict) and isinstance(data.get("belief"), dict) and isinstance(data["belief"].get("entities"), dict):
            with self._lock:
                self._data, self._received = data, time.monotonic()

    def refresh(self, timeout: float | None = None) -> None:
        """Ask the driver for the truth of this instant (lock-step readers)."""
        self._keep(self.driver.truth(self.timeout if timeout is None else timeout))

    def settle(self) -> None:
        """The truth after the last command: asked for in lock-step, else the next message waited for."""
        if self.lockstep:
            self.refresh()
        else:
            self.wait_for_next()

    def wait_for_next(self, timeout: float = 1.0) -> None:
        """Wait (at most ``timeout`` s) for a message newer than this call: the truth after the last command."""
        asked = time.monotonic()
        while time.monotonic() - asked < timeout:
            with self._lock:
                if self._received > asked:
                    return
            time.sleep(0.01)

    @property
    def fresh(self) -> bool:
        with self._lock:
            return self._data is not None and time.monotonic() - self._received <= self.stale_after

    def latest(self) -> dict[str, Any]:
        """The newest message; RobotUnavailable when none arrived lately (the sim driver is gone: a skill
        attempt judged by this truth fails with the reason ``unavailable``)."""
        with self._lock:
            data, age = self._data, time.monotonic() - self._received
        if data is not None and age > self.stale_after:  # a busy machine delays delivery: a stall unless none comes
            self.wait_for_next(self.stale_after)
            with self._lock:
                data, age = self._data, time.monotonic() - self._received
        if data is None or age > self.stale_after:
            raise RobotUnavailable(f"no simulator truth on {TRUTH_TOPIC} for {age:.1f} s: is the sim driver running?")
        return data

    def dynamic(self) -> dict[str, Any]:
        """The home's moving state (what the world node mirrors for privileged planners)."""
        return dict(self.latest().get("dynamic") or {})

    def labels(self) -> dict[int, dict[str, str]]:
        """Instance id -> {name, category} of the sim driver's segmentation images."""
        return {int(k): v for k, v in (self.latest().get("labels") or {}).items()}

    def counters(self) -> dict[str, int]:
        """The sim driver's command counters (cmd_vel received, applied, timeouts, arm goals, services)."""
        return dict(self.latest().get("counters") or {})


class TruthBelief:
    """A WorldBelief that always answers from the newest truth snapshot (kept live for attempt checks)."""

    def __init__(self, truth: SimTruth) -> None:
        self.truth = truth

    def _now(self) -> SnapshotBelief:
        return SnapshotBelief(self.truth.latest()["belief"])

    def names(self) -> list[str]:
        return self._now().names()

    def lookup(self, name: str) -> EntityLike | None:
        return self._now().lookup(name)

    def held_object(self) -> str | None:
        return self._now().held_object()

    def distance_to(self, name: str) -> float:
        return self._now().distance_to(name)

    def enclosing_container(self, obj: str) -> str | None:
        return self._now().enclosing_container(obj)


class TruthCheck(RobotSignalsCheck):
    """Judges a bridged robot's attempts from the sim driver's truth, as the embedded home's own check
    does in-process: Pick when the target is held, Put when it rests on or in the place, Open and Close
    when the door state says so, Go to as the robot's signals do (the truth's distance)."""

    def __init__(self, truth: SimTruth) -> None:
        super().__init__(TruthBelief(truth))
        self.truth = truth

    def _holding(self, robot: Robot) -> bool | None:
        return self.belief.held_object() is not None

    def begin(self, subtask: Subtask, robot: Robot) -> None:
        if self.truth.lockstep:
            self.truth.refresh()
        super().begin(subtask, robot)

    def done_early(self, subtask: Subtask, robot: Robot, tol: Tolerances) -> bool:
        if self.truth.lockstep:  # each command's outcome, exactly (in real time the topic keeps up)
            self.truth.refresh()
        return super().done_early(subtask, robot, tol)

    def succeeded(self, subtask: Subtask, robot: Robot, tol: Tolerances) -> bool:
        target = subtask.target or ""
        self.truth.settle()  # judged on the state after the attempt's last command
        if subtask.action is Action.PICK:
            return self.belief.held_object() == target
        if subtask.action is Action.PUT:
            where = (self.truth.dynamic().get("locations") or {}).get(target) or [None]
            return self.belief.held_object() is None and where[0] == subtask.place
        if subtask.action in (Action.OPEN, Action.CLOSE):
            entity = self.belief.lookup(target)
            return entity is not None and entity.is_open is (subtask.action is Action.OPEN)
        return super().succeeded(subtask, robot, tol)


__all__ = ["SIM_SERVICES", "TRUTH_TOPIC", "SimDriver", "SimTruth", "TruthBelief", "TruthCheck", "segmentation_topic"]
