"""The planner assembles its parts around one shared state per episode and runs the round through them."""

from __future__ import annotations

import json

import pytest

from homiebot.core.contracts import ErrorCode, Feedback
from homiebot.core.tasks import Task
from homiebot.planners.base import EpisodeContext, ModelInfo, PlannerConfigError, PlannerRequest
from homiebot.planners.heuristic import HeuristicPlanner

MODELS = [ModelInfo("nav", ("Go to",)), ModelInfo("arm", ("Pick", "Put", "Open", "Close"))]
SCENE = {"robot": [1.0, 1.0], "instances": [], "rooms": [{"name": "bedroom", "rect": [0, 0, 5, 5]},
                                                         {"name": "kitchen", "rect": [5, 0, 10, 5]}]}


def started(instruction: str) -> HeuristicPlanner:
    p = HeuristicPlanner(embeddings=False)
    p.reset(EpisodeContext(task=Task(instruction=instruction), models=MODELS, seed=0, max_rounds=10))
    return p


def reply(p: HeuristicPlanner, rnd: int, fb: Feedback | None = None) -> dict:
    return json.loads(p.plan(PlannerRequest(rnd, "", "", "", [], [], fb, None, scene_map=SCENE)).text)


def test_state_set_on_the_planner_is_what_every_part_reads() -> None:
    p = HeuristicPlanner(embeddings=False)
    p.mem.known = {"kitchen": "room"}
    p.max_rounds, p._round = 20, 3
    assert p.referents.ep is p.episode and p.search.ep.mem.known == {"kitchen": "room"}
    assert (p.episode.max_rounds, p.episode.round) == (20, 3)
    assert p.scene_check.dialogue is p.dialogue and p._asked is None


def test_each_episode_starts_from_fresh_parts() -> None:
    p = started("go to the kitchen")
    first = p.episode
    p.mem.known["kitchen"] = "room"
    p.reset(EpisodeContext(task=Task(instruction="go to the kitchen"), models=MODELS, seed=1))
    assert p.episode is not first and p.mem.known == {} and p.goals.ep is p.episode
    assert p.understood() == "go to kitchen" and p.report() is None


def test_a_round_goes_where_the_goal_says_then_ends_there() -> None:
    p = started("go to the kitchen")
    first = reply(p, 1)
    assert first["subtask"] == ["Go to", "kitchen"] and first["model"] == "nav"
    assert first["analysis"].startswith("I understood: go to kitchen.")
    last = reply(p, 2, Feedback.ok())
    assert last["subtask"] == ["End"] and last["analysis"].endswith("I am in the kitchen")


def test_an_instruction_of_which_nothing_can_be_read_is_refused() -> None:
    with pytest.raises(PlannerConfigError):
        started("juggle three oranges")


def test_a_subtask_the_world_says_does_not_apply_is_reported_not_repeated() -> None:
    p = started("close the kitchen shelf")
    p.mem.known |= {"kitchen": "room", "bedroom": "room", "kitchen_shelf": "shelf"}
    p.mem.rooms_visited |= {"kitchen", "bedroom"}
    p.mem.near = "kitchen_shelf"

    def unseen(rnd: int, fb: Feedback | None = None) -> dict:  # nothing perceived: memory is what was set above
        return json.loads(p.plan(PlannerRequest(rnd, "", "", "", [], [], fb, None)).text)

    first = unseen(1)
    assert first["subtask"] == ["Close", "kitchen_shelf"], first
    refused = Feedback.fail(ErrorCode.L4, "Can not close kitchen_shelf! It has no door or drawer; please choose another object.")
    second = unseen(2, refused)
    assert second["subtask"] == ["End"] and "I cannot [Close, kitchen_shelf]: Can not close kitchen_shelf" in second["analysis"]
    assert p.report() is not None and "no door or drawer" in p.report()
