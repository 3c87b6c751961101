"""What the safety layer knows right now: e-stop and cancel flags, and the events so far."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from homiebot.core.contracts import SafetyEvent
from homiebot.core.robot import Stopped


class SafetyState:
    """Shared by the robot wrapper, the gate and whoever engages the e-stop or cancels (a ROS topic,
    a service, a test). Thread-safe; listeners hear every event (e.g. to publish it)."""

    def __init__(self) -> None:
        self._estop = threading.Event()
        self._released = threading.Event()
        self._released.set()
        self._cancel = threading.Event()
        self._lock = threading.Lock()
        self.events: list[SafetyEvent] = []
        self.round: int | None = None
        self.listeners: list[Callable[[SafetyEvent], None]] = []
        self.on_estop: list[Callable[[], None]] = []  # called at once when the e-stop engages (stop the robot)
        self.on_release: list[Callable[[], None]] = []  # called on release, before motion may resume

    # ---- events -------------------------------------------------------------------------------
    def record(self, kind: str, message: str = "", **details: str) -> SafetyEvent:
        """Log an event (timestamped, with the current round) and tell the listeners."""
        event = SafetyEvent(kind=kind, stamp=time.time(), round=self.round, message=message, details=details)  # type: ignore[arg-type]
        with self._lock:
            self.events.append(event)
        for listener in list(self.listeners):
            listener(event)
        return event

    def take_events(self) -> list[SafetyEvent]:
        """The events so far, forgetting them (one episode's worth)."""
        with self._lock:
            out, self.events = self.events, []
        return out

    # ---- e-stop ---------------------------------------------------------------------------------
    @property
    def estopped(self) -> bool:
        return self._estop.is_set()

    def engage_estop(self, source: str = "", record: bool = True) -> None:
        """Stop everything now; holds until ``release_estop``. ``record=False`` applies it without an
        event (a node following the e-stop topic, whose event another node records)."""
        if self._estop.is_set():
            return
        self._estop.set()
        self._released.clear()
        for stop in list(self.on_estop):
            stop()
        if record:
            self.record("estop", f"e-stop engaged{f' ({source})' if source else ''}", source=source)

    def release_estop(self, source: str = "", record: bool = True) -> None:
        """Release the e-stop (only an explicit release does)."""
        if not self._estop.is_set():
            return
        for ready in list(self.on_release):
            ready()  # e.g. power the robot on again: the episode resumes only when it can move
        self._estop.clear()
        self._released.set()
        if record:
            self.record("estop_released", f"e-stop released{f' ({source})' if source else ''}", source=source)

    def wait_released(self, timeout: float | None = None) -> bool:
        """Block while the e-stop holds (or the episode is cancelled); True once released."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._released.wait(0.05):
            if self._cancel.is_set():
                return False
            if deadline is not None and time.monotonic() > deadline:
                return False
        return True

    # ---- cancel ---------------------------------------------------------------------------------
    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def cancel(self, source: str = "", record: bool = True) -> None:
        """End the running episode: the skill stops before its next control step."""
        if self._cancel.is_set():
            return
        self._cancel.set()
        if record:
            self.record("cancel", f"episode cancelled{f' ({source})' if source else ''}", source=source)

    def add(self, event: SafetyEvent) -> None:
        """Keep an event that happened elsewhere (another node's), without telling the listeners."""
        with self._lock:
            self.events.append(event)

    def new_episode(self) -> None:
        """Clear the cancel flag and the events (the e-stop stays as it is: only a release clears it)."""
        self._cancel.clear()
        self.round = None
        self.take_events()

    def interruption(self) -> str | None:
        """Why motion must not continue now (e-stop or cancel), or None."""
        if self._estop.is_set():
            return "the e-stop is engaged"
        if self._cancel.is_set():
            return "the episode was cancelled"
        return None

    def check(self) -> None:
        """Raise ``Stopped`` if motion is not allowed now."""
        why = self.interruption()
        if why:
            raise Stopped(why)


class Deadman:
    """The e-stop's heartbeat mode: ``beat`` on every e-stop message; ``expired`` once none came for
    ``timeout`` seconds (then the e-stop engages; only an explicit release lets it go)."""

    def __init__(self, timeout: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.timeout, self.clock = timeout, clock
        self._last = clock()
        self._tripped = False

    def beat(self) -> None:
        self._last = self.clock()
        self._tripped = False

    def expired(self) -> bool:
        """True once per silence longer than the timeout (not again until the next beat)."""
        if not self._tripped and self.clock() - self._last > self.timeout:
            self._tripped = True
            return True
        return False


__all__ = ["Deadman", "SafetyState", "Stopped"]
