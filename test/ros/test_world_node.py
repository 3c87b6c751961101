"""The world node's handlers, called directly in this process: taking over the state the executor's copy of
the simulator hands back (``apply``), rendering ahead after it, and refusing a state that is not its own.

The node joins a ROS_DOMAIN_ID of its own with localhost-only discovery; nothing is spun, since the
handlers are called as their typed servers would call them.
"""

from __future__ import annotations

import json
import os

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

import rclpy  # noqa: E402
from homiebot_msgs.srv import ApplyState, Observe, ResetWorld  # noqa: E402
from rclpy.node import Node  # noqa: E402

from homiebot.config import load_config  # noqa: E402
from homiebot.core.tasks import load_task  # noqa: E402
from homiebot.ros.clients.world_link import scene_text  # noqa: E402
from homiebot.ros.kit.common import RUN_CONFIG  # noqa: E402
from homiebot.ros.nodes.world import BadRequest, WorldNode  # noqa: E402
from homiebot.runtime import scene_for  # noqa: E402
from test.conftest import DEMO_TASK  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

DOMAIN = domain_of(__name__)


@pytest.fixture(scope="module")
def world_node(tmp_path_factory):
    cfg = tmp_path_factory.mktemp("cfg") / "small.yaml"
    cfg.write_text("world: {name: embedded_home, params: {width: 32, height: 32, depth: false, segmentation: false}}\n")
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=DOMAIN)
    node = Node("world_under_test", context=context)
    world = WorldNode(node, {"config": str(cfg), "prefetch": True, RUN_CONFIG: load_config(cfg)})
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


def reset(node: WorldNode) -> int:
    scene = scene_for(load_task(DEMO_TASK)).model_dump(mode="json", by_alias=True, exclude_none=True)
    return call(node, "reset", ResetWorld.Request(scene=scene_text(scene))).episode


def moved(node: WorldNode) -> dict:
    """The world's state with the robot a metre further and the can in its gripper, as the executor's copy would hand it back."""
    state = json.loads(json.dumps(node.world.ground_truth().dynamic()))
    state["robot"][0] += 1.0
    state["path_length"] += 1.0
    state["held"] = "green_can"
    return state


def test_the_state_handed_back_is_taken_over_and_the_next_views_are_rendered_ahead(world_node):
    episode = reset(world_node)
    assert world_node._ahead is not None  # the first round's views, rendered after the reset
    meta = call(world_node, "observe", Observe.Request(round=1)).observation
    assert world_node._ahead is None  # used up by the observation
    state = moved(world_node)

    reply = call(world_node, "apply", ApplyState.Request(episode=episode, round=1, dynamic=json.dumps(state)))
    assert reply.path_length == pytest.approx(state["path_length"]) and list(reply.inventory) == ["green_can"]
    assert world_node.world.ground_truth().dynamic() == state
    assert world_node._ahead is not None and world_node._ahead[0] == world_node._version  # the next round's views, ready
    after = call(world_node, "observe", Observe.Request(round=2)).observation
    assert after.robot_pose.position.x == pytest.approx(meta.robot_pose.position.x + 1.0) and list(after.inventory) == ["green_can"] and world_node._ahead is None


@pytest.mark.parametrize("dynamic", ["not json", "[1, 2]", json.dumps({"robot": [0, 0, 0]}), json.dumps({"robot": "here", "held": None})])
def test_a_state_that_is_not_the_simulators_is_refused_and_changes_nothing(world_node, dynamic):
    episode = reset(world_node)
    before = world_node.world.ground_truth().dynamic()
    with pytest.raises(BadRequest, match="the state is not"):
        world_node.handle("apply", ApplyState.Request(episode=episode, round=1, dynamic=dynamic))
    assert world_node.world.ground_truth().dynamic() == before


def test_a_state_of_another_episode_is_refused(world_node):
    episode = reset(world_node)
    state = moved(world_node)
    with pytest.raises(BadRequest, match=f"episode {episode - 1} is over"):
        world_node.handle("apply", ApplyState.Request(episode=episode - 1, round=1, dynamic=json.dumps(state)))
    assert world_node.world.ground_truth().dynamic() != state
