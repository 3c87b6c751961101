"""An rclpy executor that runs callbacks on a thread pool and hands each callback to it once.

rclpy's ``MultiThreadedExecutor`` offers a task again on every pass until a pool thread has started it,
and hands it to the pool again each time. In py-spy profiles of the planner node under load its thread
looped like this for 100 ms and more, holding the GIL, while the pool thread that was to answer the
round's ``Plan`` call waited for it; service calls that take 3 ms took 100 ms to 1.4 s in some rounds.
``PoolExecutor`` hands a callback over once (``benchmarks/bench_ros.py``: median overhead per round
13-16 ms instead of 17-21 ms, README). rclpy offers such a callback again before it waits for new work,
on every pass, until a pool thread starts it: the spin thread then waits for that start (the GIL released)
instead of passing again at once. Passing at once made it a busy loop that held the GIL the pool threads
needed to start the callbacks: requests took 20-400 ms to reach their handlers in a few rounds of every run.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from rclpy.context import Context
from rclpy.executors import Executor, ExternalShutdownException, ShutdownException, TimeoutException, TimeoutObject
from rclpy.task import Future, Task

STARTED_WAIT = 0.05  # s the spin thread waits for a queued callback to start (all pool threads busy: passes again)


class PoolExecutor(Executor):
    """Callbacks run on ``num_threads`` threads; a callback's exception is raised by the next ``spin_once``,
    as rclpy's single-threaded executor raises it."""

    def __init__(self, num_threads: int, context: Context | None = None) -> None:
        super().__init__(context=context)
        self._pool = ThreadPoolExecutor(max_workers=num_threads, thread_name_prefix="ros_callback")
        self._lock = threading.Lock()
        self._started = threading.Condition(self._lock)  # notified when a pool thread takes a callback
        self._queued: set[Task] = set()  # handed to the pool, not started yet
        self._failures: list[BaseException] = []

    def spin_once(self, timeout_sec: float | TimeoutObject | None = None) -> None:
        """Wait up to ``timeout_sec`` for work and hand one callback to the pool."""
        self._raise_failure()
        try:
            handler, _, _ = self.wait_for_ready_callbacks(timeout_sec)
        except (ShutdownException, ExternalShutdownException, TimeoutException):
            return
        with self._lock:
            if handler in self._queued:  # offered again before a pool thread took it: wait for a start, not spin
                self._started.wait_for(lambda: handler not in self._queued, STARTED_WAIT)
                return
            self._queued.add(handler)
        self._pool.submit(self._run, handler)

    def spin_once_until_future_complete(self, future: Future, timeout_sec: float | TimeoutObject | None = None) -> None:
        """``spin_once``, woken early when ``future`` completes."""
        future.add_done_callback(lambda _: self.wake())
        self.spin_once(timeout_sec)

    def _run(self, handler: Task) -> None:
        with self._lock:
            self._queued.discard(handler)
            self._started.notify_all()
        handler()
        error = handler.exception()
        if error is not None:
            with self._lock:
                self._failures.append(error)
            self.wake()

    def _raise_failure(self) -> None:
        with self._lock:
            error = self._failures.pop(0) if self._failures else None
        if error is not None:
            raise error

    def shutdown(self, timeout_sec: float | None = None) -> bool:
        """Stop as rclpy's executors do, then let the running callbacks finish (none starts after this)."""
        done = super().shutdown(timeout_sec)
        self._pool.shutdown(wait=True, cancel_futures=True)
        return done
