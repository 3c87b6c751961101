"""The one thread that does a simulator's work in a node (the world node's, the executor node's copy)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from rclpy.node import Node

CLOSE_WAIT = 10.0  # seconds a node's stop waits for the simulator's work in hand before it releases the simulator


class SimThread:
    """The one thread that does all of the simulator's work: calls, and the work done beside their replies
    (publishing frames, rendering ahead), in the order given. A renderer's GL context then lives, renders
    and is freed in one thread; freed while current in another live thread, it crashed the next context
    that thread made current."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="simulator")

    def call(self, fn: Callable[[Any], Any], request: Any) -> Any:
        """``fn(request)`` on the simulator's thread, once the work before it is done."""
        return self.pool.submit(fn, request).result()

    def later(self, job: Callable[[], None]) -> None:
        """Queue ``job``; the caller does not wait for it."""
        self.pool.submit(job).add_done_callback(self._log_failure)

    def settle(self) -> None:
        """Until the work queued so far is done."""
        self.pool.submit(lambda: None).result()

    def close(self, last: Callable[[], None], wait: float | None = CLOSE_WAIT) -> None:
        """Run ``last`` after the work in hand (up to ``wait`` s; None: until it is done), and take no more."""
        try:
            self.pool.submit(last).result(timeout=wait)
        finally:
            self.pool.shutdown(wait=False, cancel_futures=True)

    def _log_failure(self, done: Future) -> None:
        err = None if done.cancelled() else done.exception()
        if err is not None:  # one failed job (a frame that cannot be published) must not go unnoticed
            self.node.get_logger().error(f"after a reply: {type(err).__name__}: {err}")
