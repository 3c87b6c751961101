"""ObservationCache: before an episode, a node that reads camera frames waits until each of its image topics
has a publisher (the world sends frames only to readers it has matched), and says which still have none."""

from __future__ import annotations

import time

import pytest

rclpy = pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from rclpy.context import Context  # noqa: E402
from rclpy.node import Node  # noqa: E402
from sensor_msgs.msg import Image  # noqa: E402

from homiebot.core.contracts import VIEW_NAMES  # noqa: E402
from homiebot.ros.messages.common import image_topic  # noqa: E402
from homiebot.ros.messages.observations import IMAGES, ObservationCache  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

DOMAIN = domain_of(__name__)


def test_the_cache_waits_for_a_publisher_of_every_camera_topic_it_reads(context: Context) -> None:
    cache = ObservationCache(Node("cameras_reader", context=context), kinds=("depth",))
    topics = [image_topic(view, "depth") for view in VIEW_NAMES]
    resolved = [f"/{t}" for t in topics]  # as the cache names them: resolved, here in the root namespace
    assert sorted(cache.wait_for_cameras(0.2)) == sorted(resolved)  # nobody publishes them
    world = Node("cameras_world", context=context)
    publishers = [world.create_publisher(Image, topic, IMAGES) for topic in topics[:-1]]
    end = time.monotonic() + 20
    while (missing := cache.wait_for_cameras(0.2)) != resolved[-1:] and time.monotonic() < end:
        pass
    assert missing == resolved[-1:], "the topic nobody publishes was not named, or a published one was"
    publishers.append(world.create_publisher(Image, topics[-1], IMAGES))
    assert cache.wait_for_cameras(20.0) == []
