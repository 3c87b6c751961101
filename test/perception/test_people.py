"""A detected person becomes the observation's ``PersonSeen`` in mapped perception (a robot's world
reports nobody): placed from depth, kept out of the semantic map."""

from __future__ import annotations

import math

import numpy as np
import pytest

from homiebot.core.contracts import Observation
from homiebot.perception.detection import Detection, Detector, DetectorInput, box_of
from homiebot.perception.detectors import SimTruthDetector
from homiebot.perception.people import without_people
from homiebot.worlds.home.scene import parse_scene
from homiebot.worlds.home.world import EmbeddedHome
from homiebot.worlds.perceiving import PerceivingWorld

from ..worlds.test_person import scene_data

PERSON_AT = (2.5, 4.9)  # in front of the robot, which stands at (2.5, 6.2) facing south


class PersonBoxes(Detector):
    """A stand-in for a learned detector: a box (no mask) around every ``person`` blob of the segmentation,
    and the simulator's other things as they are."""

    name = "person_boxes"

    def __init__(self) -> None:
        self.things = SimTruthDetector()

    def detect(self, rgb: np.ndarray, depth: np.ndarray | None = None) -> list[Detection]:
        raise NotImplementedError

    def detect_frame(self, frame: DetectorInput) -> list[Detection]:
        found = self.things.detect_frame(frame)
        assert frame.segmentation is not None and frame.categories is not None
        for inst, category in frame.categories.items():
            mask = frame.segmentation == inst
            if category == "person" and mask.any():
                found.append(Detection("person", 0.8, box_of(mask)))
        return found


class RobotLike(EmbeddedHome):
    """The embedded home as a robot's world: its observations report nobody."""

    def observe(self, round_index: int) -> Observation:
        return super().observe(round_index).model_copy(update={"people": []})


@pytest.fixture()
def world():  # noqa: ANN201 - a PerceivingWorld
    inner = RobotLike(parse_scene(scene_data({"position": list(PERSON_AT), "yaw": 90})), width=96, height=96)
    outer = PerceivingWorld(inner, PersonBoxes())
    yield outer
    inner.close()


def test_a_detected_person_is_placed_from_depth_and_kept_out_of_the_map(world: PerceivingWorld) -> None:
    obs = world.observe(1)
    assert len(obs.people) == 1
    seen = obs.people[0]
    assert seen.name == "person" and seen.holding is None and seen.room in ("bedroom", "kitchen")
    assert math.dist((seen.x, seen.y), PERSON_AT) < 0.35  # their front, seen from the robot
    assert seen.distance == pytest.approx(math.dist((seen.x, seen.y), (2.5, 6.2)) - 0.35 - 0.25, abs=0.01)
    assert all(inst.label != "person" for inst in world.map.instances())
    assert world.belief.lookup("person") is not None and world.belief.distance_to("person") == seen.distance


def test_no_person_detection_gives_nobody_and_the_world_s_own_report_wins() -> None:
    inner = EmbeddedHome(parse_scene(scene_data({"position": list(PERSON_AT), "yaw": 90})), width=96, height=96)
    try:
        outer = PerceivingWorld(inner, SimTruthDetector())  # reports no people
        truth = inner.state.person
        obs = outer.observe(1)
        assert [(p.x, p.y) for p in obs.people] == [(round(truth.x, 3), round(truth.y, 3))]  # the world's own
    finally:
        inner.close()
    box = Detection("person", 0.9, (0, 0, 3, 3))
    assert without_people({"front": [box, Detection("cup", 0.5, (0, 0, 1, 1))]}) == {"front": [Detection("cup", 0.5, (0, 0, 1, 1))]}
