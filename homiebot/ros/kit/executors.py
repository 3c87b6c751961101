"""An rclpy executor that runs callbacks on a thread pool and hands each callback to it once.

rclpy's ``MultiThreadedExecutor`` offers a task again on every pass until a pool thread has started it,
and hands it to the pool again each time. In py-spy profiles of the planner node under load its thread
looped like this for 100 ms and more, holding the GIL, while the pool thread that was to answer the
round's ``Plan`` call waited for it; service calls that take 3 ms took 100 ms to 1.4 s in some rounds.
``PoolExecutor`` hands a callback over once (``benchmarks/bench_ros.py``: median overhead per round
13-16 ms instead of 17-21 ms). rclpy offers such a callback again before it waits for new work,
on every pass, until a pool thread starts it: the spin thread then waits for that start (the GIL released)
instead of passing again at once. Passing at once made it a busy loop that held the GIL the pool threads
needed to start the callbacks: requests took 20-400 ms to reach their handlers in a few rounds of every run.

Two kinds of work run on the spin thread itself, because handing them over cost more than doing them: a
service client's response (taking it and completing its future) and a done callback marked ``inline``
(``ServiceCaller`` wakes its blocked caller with one). rclpy schedules a future's done callbacks as new
executor tasks, so a caller used to wait for two hand-overs to the pool and a pass of the spin thread
between them after its response arrived.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from rclpy.client import Client
from rclpy.context import Context
from rclpy.executors import Executor, ExternalShutdownException, ShutdownException, TimeoutException, TimeoutObject
from rclpy.task import Future, Task

STARTED_WAIT = 0.05  # s the spin thread waits for a queued callback to start (all pool threads busy: passes again)
INLINE = "_homiebot_inline"
F = TypeVar("F", bound=Callable[..., Any])


def inline(callback: F) -> F:
    """Mark a short, non-blocking future done callback to run at once in the thread that completes the future
    (a ``PoolExecutor``'s), rather than as a task of its own."""
    setattr(callback, INLINE, True)
    return callback


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
        self._between: list[tuple[Callable[[], None], threading.Event, list[BaseException]]] = []  # see between_waits
        self._spin_thread: threading.Thread | None = None

    def between_waits(self, work: Callable[[], None]) -> None:
        """Run ``work`` on the spin thread before it next builds a wait set, and return when it is done (raising its
        exception). Entities a lifecycle cleanup destroyed from a pool thread while the spin thread was putting them
        into a wait set made rcl fail ("action server pointer is invalid") and ended the node's process."""
        if self._spin_thread in (None, threading.current_thread()):
            work()
            return
        done, errors = threading.Event(), list[BaseException]()
        with self._lock:
            self._between.append((work, done, errors))
        self.wake()
        done.wait()
        if errors:
            raise errors[0]

    def _run_between(self) -> None:
        with self._lock:
            pending, self._between = self._between, []
        for work, done, errors in pending:
            try:
                work()
            except BaseException as err:  # the caller raises it
                errors.append(err)
            finally:
                done.set()
        if pending:
            self._cb_iter = None  # the ready list of the last wait may name what was destroyed: wait afresh

    def spin_once(self, timeout_sec: float | TimeoutObject | None = None) -> None:
        """Wait up to ``timeout_sec`` for work and hand one callback to the pool."""
        self._spin_thread = threading.current_thread()
        self._raise_failure()
        self._run_between()
        try:
            handler, entity, _ = self.wait_for_ready_callbacks(timeout_sec)  # type: ignore[var-annotated]
        except (ShutdownException, ExternalShutdownException, TimeoutException):
            return
        if isinstance(entity, Client):  # a response: take it and complete its future here (see the module doc)
            self._run_here(handler)
            return
        with self._lock:
            if handler in self._queued:  # offered again before a pool thread took it: wait for a start, not spin
                self._started.wait_for(lambda: handler not in self._queued, STARTED_WAIT)
                return
            self._queued.add(handler)
        self._pool.submit(self._run, handler)

    def create_task(self, callback: Callable[..., Any] | Coroutine[Any, Any, Any], *args: Any, **kwargs: Any) -> Task:
        """rclpy's, except that an ``inline`` callback runs now, in this thread (a future's done callback)."""
        if not getattr(callback, INLINE, False):
            return super().create_task(callback, *args, **kwargs)
        task = Task(callback, args, kwargs)
        self._run_here(task)
        return task

    def spin_once_until_future_complete(self, future: Future, timeout_sec: float | TimeoutObject | None = None) -> None:
        """``spin_once``, woken early when ``future`` completes."""
        future.add_done_callback(lambda _: self.wake())
        self.spin_once(timeout_sec)

    def _run(self, handler: Task) -> None:
        with self._lock:
            self._queued.discard(handler)
            self._started.notify_all()
        self._run_here(handler)

    def _run_here(self, handler: Task) -> None:
        """Run a task in this thread; its exception is raised by the next ``spin_once``."""
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
