"""Free-form instructions: each form is read into the right goal in a test scene; what cannot be read
or grounded is reported (no user) or asked about (with a user) within two rounds."""

from __future__ import annotations

import pytest

from homiebot.config import RunConfig
from homiebot.core.contracts import Action
from homiebot.core.tasks import ObjectAt
from homiebot.people.scene_facts import SceneFacts
from homiebot.people.simulated import SimulatedUser
from homiebot.planners.goal_grounding import SceneGrounder, Unsure, same_goal
from homiebot.planners.understanding import understand
from homiebot.runtime import make_task, run_episode, scene_for

from ..conftest import DEMO_TASK

DEMO_SCENE = str(DEMO_TASK.parent.parent / "scenes" / "demo.yaml")


@pytest.fixture(scope="module")
def grounder() -> tuple[SceneGrounder, SceneFacts]:
    task = make_task("open the fridge", DEMO_SCENE)
    facts = SceneFacts.from_scene(scene_for(task).model_dump(mode="json", by_alias=True, exclude_none=True))
    return SceneGrounder(facts), facts


def at(obj: str | None, rec: str | list[str], cls: str | None = None) -> dict:
    return {"kind": "object_at", "object": obj, "object_class": cls, "receptacle": rec} if obj else \
        {"kind": "object_at", "object_class": cls, "receptacle": rec}


FORMS = [
    ("question", "Could the green can go in the fridge?", [at("green_can", "fridge")]),
    ("politeness", "hey, would you mind bringing the white mug to the brown table, thanks!", [at("white_mug", "brown_table")]),
    ("pronoun", "See the mug on the desk? Put it on the blue sofa.", [at("white_mug", "blue_sofa")]),
    ("several destinations", "The banana goes in the fridge and the bowl on the brown table.",
     [at("yellow_banana", "fridge"), at("blue_bowl", "brown_table")]),
    ("relative place", "move the book from the white desk onto the white bed", [at("red_book", "white_bed")]),
    ("somewhere", "put the remote somewhere in the bedroom", [at("black_remote", ["drawer", "white_bed", "white_desk"])]),
    ("one of", "bring one of the bowls to the tv stand", [at(None, "tv_stand", "bowl")]),
    ("condition", "if the fridge is empty put the banana inside it, otherwise put it on the brown table",
     [at("yellow_banana", "brown_table")]),  # the apple is in the fridge
    ("negation", "put the can on the white desk, not in the fridge", [at("green_can", "white_desk")]),
]


@pytest.mark.parametrize("form, text, goal", FORMS, ids=[f[0] for f in FORMS])
def test_each_form_is_understood(grounder, form, text, goal) -> None:
    g, facts = grounder
    u = understand(text)
    assert not u.unsure, u.unsure
    assert same_goal(g.conditions(u.plan), goal, facts), u.statement()


@pytest.mark.parametrize("text", ["could it go in the fridge", "put everything on it can in the sink", "do the thing we talked about"])
def test_unreadable_phrases_are_unsure_not_guessed(text) -> None:
    u = understand(text)
    assert u.unsure or not u.plan.goals


def test_a_phrase_fitting_several_things_is_unsure(grounder) -> None:
    g, _ = grounder
    with pytest.raises(Unsure, match="several places"):
        g.conditions(understand("put the green can in the sink").plan)  # kitchen sink or bathroom sink


def _config(**extra) -> RunConfig:
    return RunConfig.model_validate({"planner": {"name": "heuristic"}, "skill_profile": "perfect", "max_rounds": 25,
                                     "world": {"name": "embedded_home", "params": {"width": 96, "height": 96, "depth": True}}, **extra})


def test_free_form_episode_states_what_it_understood_and_succeeds() -> None:
    task = make_task("See the can on the brown table? Could you put it in the fridge, please?", DEMO_SCENE)
    task = task.model_copy(update={"goal": [ObjectAt(object="green_can", receptacle="fridge")]})
    record, _ = run_episode(_config(), task)
    assert record.understood == "move can on the brown table -> fridge"
    assert record.steps[0].output is not None and record.steps[0].output.analysis.startswith("I understood: move can")
    assert record.ended and record.goal_satisfied


def test_unreadable_part_is_reported_without_a_user() -> None:
    task = make_task("put the green can in the fridge and then the whatsit thing on the blue sofa", DEMO_SCENE)
    record, _ = run_episode(_config(), task)
    assert len(record.steps) <= 2 and record.termination == "reported"
    assert "whatsit" in (record.error or "")


def test_unreadable_part_is_asked_about_with_a_user() -> None:
    task = make_task("put the green can in the fridge and then the whatsit thing on the blue sofa", DEMO_SCENE)
    task = task.model_copy(update={"goal": [ObjectAt(object="green_can", receptacle="fridge"),
                                            ObjectAt(object="red_book", receptacle="blue_sofa")]})
    user = SimulatedUser(task.instruction, task.goal or [], scene_for(task).model_dump(mode="json", by_alias=True))
    record, _ = run_episode(_config(), task, user=user)
    asks = [s for s in record.steps[:2] if s.output and s.output.subtask.action is Action.ASK]
    assert asks and asks[0].exchange is not None and "red book" in (asks[0].exchange.answer or "")
    assert record.ended and record.goal_satisfied  # the answer restated the request, and the planner did it


CHATTY = [
    ("hi! i have a favour to ask. could you bring the pink peach, the yellow lemon and the green banana to the blue bed, "
     "that would be lovely.", "bring the pink peach, the yellow lemon and the green banana to the blue bed"),
    ("oh, hello. when you have a moment, could you put the blue plate in the cabinet and the red toy block in the fridge, "
     "and make sure both are closed when you are done, that would be lovely.",
     "put the blue plate in the cabinet and the red toy block in the fridge, and make sure both are closed when you are done"),
    ("right, so, could you put the silver can away behind a door or in a drawer, closed afterwards, thank you so much!",
     "put the silver can away behind a door or in a drawer, closed afterwards"),
    ("i'll need the yellow sponge later, leave it on the blue bed for me please, thank you so much!",
     "i'll need the yellow sponge later, leave it on the blue bed for me please"),
    ("if there is no bowl in the drawer, put one in it, that would be lovely.", "if there is no bowl in the drawer, put one in it"),
]


@pytest.mark.parametrize("chatty, plain", CHATTY, ids=[c[1][:30] for c in CHATTY])
def test_chatty_openers_and_closers_change_nothing(chatty, plain) -> None:
    a, b = understand(chatty), understand(plain)
    assert not a.unsure and not b.unsure
    assert a.statement() == b.statement() and a.plan.close_after == b.plan.close_after
