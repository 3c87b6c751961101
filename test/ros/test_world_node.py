"""The world node's handlers, called directly in this process: rendering ahead after an execution.

The node joins a ROS_DOMAIN_ID of its own with localhost-only discovery; nothing is spun, since the
handlers are called as their typed servers would call them.
"""

from __future__ import annotations

import os

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

import rclpy  # noqa: E402
from homiebot_msgs.srv import Observe, ResetWorld, SkillAttempt  # noqa: E402
from rclpy.node import Node  # noqa: E402

from homiebot.contracts import Action, Subtask  # noqa: E402
from homiebot.ros.messages import subtask_msg  # noqa: E402
from homiebot.ros.nodes.world import WorldNode  # noqa: E402
from homiebot.ros.world_link import scene_text  # noqa: E402
from homiebot.runtime import scene_for  # noqa: E402
from homiebot.skills.base import Skill, SkillResult  # noqa: E402
from homiebot.tasks import load_task  # noqa: E402
from test.conftest import DEMO_TASK  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

DOMAIN = domain_of(__name__)


class Scripted(Skill):
    """Fails or succeeds as told, without moving anything."""

    def __init__(self, results: list[bool]) -> None:
        super().__init__("RT-1-X", frozenset({Action.PICK}))
        self.results = results

    def run(self, subtask, world, context):
        return SkillResult(self.results[context.attempt - 1], "scripted")


@pytest.fixture(scope="module")
def world_node(tmp_path_factory):
    cfg = tmp_path_factory.mktemp("cfg") / "small.yaml"
    cfg.write_text("world: {name: embedded_home, params: {width: 32, height: 32, depth: false, segmentation: false}}\n")
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=DOMAIN)
    node = Node("world_under_test", context=context)
    world = WorldNode(node, {"config": str(cfg), "prefetch": True})
    try:
        yield world
    finally:
        world.close()
        node.destroy_node()
        rclpy.try_shutdown(context=context)


def call(node: WorldNode, service: str, request):
    """Call a service's handler as its server does, then wait for the work it does beside the reply."""
    response = node.handle(service, request)
    node.sim.settle()
    return response


def attempt(node: WorldNode, number: int, of: int) -> SkillAttempt.Response:
    return call(node, "attempt", SkillAttempt.Request(model="RT-1-X", subtask=subtask_msg(Subtask(action=Action.PICK, target="green_can")),
                                                               episode_seed=0, round=1, attempt=number, max_attempts=of))


def test_views_are_rendered_ahead_only_after_the_last_attempt(world_node):
    scene = scene_for(load_task(DEMO_TASK)).model_dump(mode="json", by_alias=True, exclude_none=True)
    call(world_node, "reset", ResetWorld.Request(scene=scene_text(scene)))
    assert world_node._ahead is not None  # the first round's views, rendered after the reset
    world_node.skills.skills["RT-1-X"] = Scripted([False, False, True])

    reply = attempt(world_node, 1, 3)
    assert not reply.success and world_node._ahead is None  # a retry follows: nothing rendered
    assert reply.world_path_length == pytest.approx(0.0) and list(reply.inventory) == []
    attempt(world_node, 2, 3)
    assert world_node._ahead is None
    assert attempt(world_node, 3, 3).success
    assert world_node._ahead is not None and world_node._ahead[0] == world_node._version

    meta = call(world_node, "observe", Observe.Request(round=2)).observation
    assert meta.round == 2 and world_node._ahead is None  # used up by the observation


def test_a_failed_last_attempt_renders_ahead_too(world_node):
    world_node.skills.skills["RT-1-X"] = Scripted([False])
    assert not attempt(world_node, 1, 1).success
    assert world_node._ahead is not None
