"""Instructions that refer to a demonstration, resolved from recalled segments' put records."""

from __future__ import annotations

import pytest

from homiebot.planners.base import RecalledSegment
from homiebot.planners.recalled import reference_in, resolve

RECALLED = [RecalledSegment("Put the red toy block in the drawer.", 0.6, "toys", (("red_toy_block", "drawer"),)),
            RecalledSegment("Looked at the white desk.", 0.5, "mug"),
            RecalledSegment("Put the yellow cereal box on the kitchen counter.", 0.4, "cereal", (("yellow_cereal_box", "kitchen_counter"),)),
            RecalledSegment("Put the white mug in the kitchen sink.", 0.3, "mug", (("white_mug", "kitchen_sink"),))]


@pytest.mark.parametrize("instruction, reference", [
    ("put the toy block away like I showed you", "like i showed you"),
    ("Put the cereal where I keep it.", "where i keep it"),
    ("could you put my mug back where it belongs", "back where it belongs"),
    ("get the cereal out like I do every morning", "like i do"),
    ("put the remote in its usual place", "in its usual place"),
    ("put the toy block in the drawer", None),
    ("where is the mug", None),
])
def test_references_to_a_demonstration_are_found(instruction: str, reference: str | None) -> None:
    assert reference_in(instruction) == reference


@pytest.mark.parametrize("instruction, rewritten, demo", [
    ("put the toy block away like I showed you", "put the red toy block in the drawer", "toys"),
    ("please put the cereal where I keep it", "put the yellow cereal box on the kitchen counter", "cereal"),
    ("clear the cups away like I showed you", "put the white mug in the kitchen sink", "mug"),  # everyday word, plural
    ("put them away like I showed you", "put the red toy block in the drawer", "toys"),  # a pronoun: the best recalled put
])
def test_the_place_comes_from_the_recalled_put_record_of_the_named_object(instruction: str, rewritten: str, demo: str) -> None:
    got = resolve(instruction, RECALLED)
    assert (got.instruction, got.source, got.unresolved) == (rewritten, demo, False)


def test_without_a_fitting_demonstration_the_reference_stays_unresolved() -> None:
    assert resolve("put the green can where it belongs", RECALLED).unresolved  # nothing recalled shows the can
    assert resolve("put the mug where it belongs", []).unresolved  # no memory
    plain = resolve("put the mug in the sink", [])
    assert plain.instruction == "put the mug in the sink" and plain.reference is None and not plain.unresolved


def test_the_heuristic_reports_a_reference_it_cannot_resolve_and_acts_on_one_it_can() -> None:
    from homiebot.core.tasks import Task
    from homiebot.planners.base import EpisodeContext, PlannerRequest
    from homiebot.planners.heuristic import HeuristicPlanner

    planner = HeuristicPlanner()
    task = Task(instruction="put the toy block away like I showed you")
    planner.reset(EpisodeContext(task=task, models=[], seed=0))
    reply = planner.plan(PlannerRequest(1, "", "", task.instruction, [], [], None, None))
    assert '"End"' in reply.text and "like i showed you" in (planner.report() or "")
    planner.reset(EpisodeContext(task=task, models=[], seed=0, memories=RECALLED))
    assert planner.understood() == "move red toy block -> drawer" and planner.report() is None


def test_a_place_known_by_its_category_only_is_qualified_by_the_room_it_was_shown_in() -> None:
    # a demonstration from a robot's bag: the detector named the place "sink", the odometry the room
    from_bag = [RecalledSegment("In the kitchen. Put the mug in the sink.", 0.6, "teleop", (("mug", "sink"),), room="kitchen"),
                RecalledSegment("In the kitchen. Put the cereal box on the kitchen counter.", 0.5, "teleop",
                                (("cereal_box", "kitchen_counter"),), room="kitchen")]
    assert resolve("put the mug where it belongs", from_bag).instruction == "put the mug in the sink in the kitchen"
    assert resolve("put the cereal where I keep it", from_bag).instruction == "put the cereal box on the kitchen counter"
    assert resolve("put the mug where it belongs", [RecalledSegment("", 0.6, "t", (("mug", "sink"),))]).instruction == \
        "put the mug in the sink"  # no room known: the place as shown
