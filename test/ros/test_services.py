"""TypedServer's follow-up work: what a handler leaves with ``after_reply`` runs once its reply has gone out (the
world node renders the next views and publishes the camera frames that way), in the thread that sent it."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

rclpy = pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot_msgs.srv import RoomOf  # noqa: E402
from rclpy.context import Context  # noqa: E402
from rclpy.node import Node  # noqa: E402

from homiebot.ros.executors import PoolExecutor  # noqa: E402
from homiebot.ros.services import ServiceCaller, TypedServer, after_reply  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

DOMAIN = domain_of(__name__)


@pytest.fixture
def context() -> Iterator[Context]:
    ctx = Context()
    rclpy.init(context=ctx, domain_id=DOMAIN)
    yield ctx
    rclpy.shutdown(context=ctx)


def test_work_left_for_after_the_reply_runs_once_the_caller_has_it(context: Context) -> None:
    server, client = Node("after_server", context=context), Node("after_client", context=context)
    answered = threading.Event()  # the caller has the reply
    seen: list[tuple[str, bool, str]] = []

    def follow_up(room: str) -> None:
        # waits for the caller's reply: a follow-up run before the reply was sent would wait out the 10 s
        seen.append((room, answered.wait(10.0), threading.current_thread().name))

    def handler(request: RoomOf.Request) -> RoomOf.Response:
        after_reply(lambda: follow_up(f"after {request.name}"))
        seen.append(("handler", answered.is_set(), threading.current_thread().name))
        return RoomOf.Response(known=True, room="kitchen")

    TypedServer(server, RoomOf, "/after_test/room_of", handler, (), RoomOf.Response.FAILED)
    caller = ServiceCaller(client, RoomOf, "/after_test/room_of", "test")
    executor = PoolExecutor(2, context=context)
    for node in (server, client):
        executor.add_node(node)
    spin = threading.Thread(target=executor.spin, daemon=True)
    spin.start()
    try:
        caller.verify(20.0)
        reply = caller.call(RoomOf.Request(name="can_1"), 20.0)
        answered.set()
        end = time.monotonic() + 20
        while len(seen) < 2 and time.monotonic() < end:
            time.sleep(0.01)
    finally:
        executor.shutdown()
    assert reply.room == "kitchen"
    assert [(what, had_reply) for what, had_reply, _ in seen] == [("handler", False), ("after can_1", True)]
    assert seen[0][2] == seen[1][2], "the follow-up ran in another thread than the one that answered"


def test_outside_a_handler_the_work_runs_at_once() -> None:
    ran: list[str] = []
    after_reply(lambda: ran.append("now"))
    assert ran == ["now"]
