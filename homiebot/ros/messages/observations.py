"""Rebuild Observations from the camera topics: the world publishes each round's images with one
stamp, and the round's metadata (pose, inventory, labels) as a RoundObservation on /homiebot/observation.
The other per-round messages (belief, map, simulator state) are kept by episode and round until asked for."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, cast

import numpy as np
from homiebot_msgs.msg import RoundObservation
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.subscription import Subscription
from sensor_msgs.msg import Image

from homiebot.core.contracts import CONTRACT_VERSION, VIEW_NAMES, Observation, ViewImage, ViewName
from homiebot.ros.messages.common import IMAGE_KINDS, ROUND_TOPICS, from_image, image_topic, ns_of
from homiebot.ros.messages.round import labels_of, people_of, pose_of
from homiebot.ros.messages.wire import WireError, safe_callback

IMAGES = QoSProfile(depth=4, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST)
# A round's data is kept by its publisher for late joiners: a subscription matched a moment after the
# round was published (discovery on a loaded machine) still gets it. Volatile subscribers (a plain client,
# the recorder) match too and get only new messages.
ROUND_DATA = QoSProfile(depth=4, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST,
                        durability=DurabilityPolicy.TRANSIENT_LOCAL)


class ObservationCache:
    """Keeps the latest images per view and kind, and the per-round messages of ``round_topics``, until asked for."""

    def __init__(self, node: Node, kinds: tuple[str, ...] = tuple(IMAGE_KINDS), round_topics: tuple[str, ...] = ()) -> None:
        self.kinds = kinds
        self._images: dict[tuple[str, str], tuple[int, np.ndarray]] = {}
        self._rounds: dict[str, dict[tuple[int, int], Any]] = {t: {} for t in round_topics}  # (episode, round) -> message
        self._cond = threading.Condition()
        self._closed = False
        group = ReentrantCallbackGroup()
        self._image_subs: list[Subscription] = []
        self._namespace = node.get_namespace().rstrip("/")  # for messages: the names as the graph resolves them
        for view in VIEW_NAMES:
            for kind in kinds:
                topic = image_topic(view, kind)
                self._image_subs.append(node.create_subscription(Image, topic, safe_callback(node, topic, self._image_cb(view, kind)),
                                                                 IMAGES, callback_group=group))
        for topic in round_topics:
            node.create_subscription(ROUND_TOPICS[topic], topic, safe_callback(node, topic, self._round_cb(topic)),
                                     ROUND_DATA, callback_group=group)

    def _image_cb(self, view: str, kind: str):
        def cb(msg: Image) -> None:
            try:
                pixels = from_image(msg)
            except ValueError as err:
                raise WireError(str(err)) from None
            with self._cond:
                self._images[(view, kind)] = (ns_of(msg.header.stamp), pixels)
                self._cond.notify_all()
        return cb

    def _round_cb(self, topic: str):
        def cb(msg: Any) -> None:
            with self._cond:
                rounds = self._rounds[topic]
                rounds[(int(msg.episode), int(msg.round))] = msg
                while len(rounds) > 16:  # keep the most recent messages (dicts keep insertion order)
                    rounds.pop(next(iter(rounds)))
                self._cond.notify_all()
        return cb

    def wait_for_cameras(self, timeout: float) -> list[str]:
        """Until every image topic read here has a publisher (at most ``timeout`` s); the topics still without one.
        The world publishes a kind of frame only to subscriptions it has matched, so frames of a round rendered
        before discovery matched this node never come (the first episode right after the graph starts)."""
        deadline = time.monotonic() + timeout
        while True:
            missing = [sub.topic_name for sub in self._image_subs if sub.get_publisher_count() == 0]
            if not missing or self._closed or time.monotonic() >= deadline:
                return missing
            time.sleep(0.05)

    def close(self) -> None:
        """The node is stopping: waits end now (TimeoutError), later ones at once."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def _wait(self, ready: Callable[[], bool], timeout: float, missing: str) -> None:
        """Until ``ready()`` (call with the lock held); TimeoutError naming what is ``missing``."""
        if not self._cond.wait_for(lambda: self._closed or ready(), timeout) or not ready():
            raise TimeoutError("the node is stopping" if self._closed else missing)

    def wait_round(self, topic: str, episode: int, round_index: int, timeout: float) -> Any:
        """The message of that episode's round on a per-round topic (TimeoutError if it does not come)."""
        key = (episode, round_index)
        with self._cond:
            self._wait(lambda: key in self._rounds[topic], timeout, f"no {self._namespace}/{topic} message for round {round_index} within {timeout:g} s")
            return self._rounds[topic][key]

    def wait_views(self, stamp_ns: int, kinds: tuple[str, ...], timeout: float) -> dict[str, dict[str, np.ndarray]]:
        """All views' images with exactly this stamp."""
        def ready() -> bool:
            return all(self._images.get((v, k), (None,))[0] == stamp_ns for v in VIEW_NAMES for k in kinds)

        with self._cond:
            self._wait(ready, timeout, f"camera images of stamp {stamp_ns} did not all arrive within {timeout:g} s")
            return {v: {k: self._images[(v, k)][1] for k in kinds} for v in VIEW_NAMES}

    def lazy_observation(self, meta: RoundObservation, timeout: float) -> Observation:
        """Like ``observation``, but the images are awaited only when first looked at."""
        return Observation.model_construct(
            version=CONTRACT_VERSION, round=int(meta.round), pose=pose_of(meta), inventory=list(meta.inventory),
            labels=labels_of(meta), people=people_of(meta),
            # model_construct skips validation: the mapping stands in for the dict until it is read
            views=cast("dict[ViewName, ViewImage]", _LazyViews(lambda: self.observation(meta, timeout).views)))

    def observation(self, meta: RoundObservation, timeout: float) -> Observation:
        """The Observation described by a /homiebot/observation message, with its images."""
        kinds = tuple(k for k in self.kinds if k in meta.kinds)
        views = self.wait_views(ns_of(meta.header.stamp), kinds, timeout)
        if "image" not in kinds:  # the consumer does not look at colour: keep the contract with empty frames
            shape = next(iter(views["front"].values())).shape[:2] if kinds else (1, 1)
            for v in views.values():
                v["image"] = np.zeros((*shape, 3), np.uint8)
        return Observation(
            round=int(meta.round), pose=pose_of(meta), inventory=list(meta.inventory), labels=labels_of(meta), people=people_of(meta),
            views={v: ViewImage(rgb=views[v]["image"], depth=views[v].get("depth"), segmentation=views[v].get("segmentation"))
                   for v in VIEW_NAMES},
        )


class _LazyViews(Mapping[ViewName, ViewImage]):
    """The four views of an observation, fetched from the cache on first access."""

    def __init__(self, fetch: Callable[[], dict[ViewName, ViewImage]]) -> None:
        self._fetch = fetch
        self._views: dict[ViewName, ViewImage] | None = None

    def _get(self) -> dict[ViewName, ViewImage]:
        if self._views is None:
            self._views = self._fetch()
        return self._views

    def __getitem__(self, view: ViewName) -> ViewImage:
        return self._get()[view]

    def __iter__(self) -> Iterator[ViewName]:
        return iter(VIEW_NAMES)

    def __len__(self) -> int:
        return len(VIEW_NAMES)
