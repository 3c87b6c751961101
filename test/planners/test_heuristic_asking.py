"""The heuristic planner decides to ask from the scene: it asks nothing when one seen thing fits the
words, asks about what differs (colour, place, kind) when several do, looks at every room before it
settles, and reads answers as people give them (a spatial answer picks the thing at that place; an
answer it cannot use is asked about again, then reported)."""

from __future__ import annotations

import pytest

from homiebot.core.contracts import Action, Subtask
from homiebot.perception.grounding import Grounder
from homiebot.planners.asking import Asker
from homiebot.planners.heuristic import HeuristicPlanner, _Decision
from homiebot.planners.instructions import Move
from homiebot.planners.understanding import understand_request

ROOMS = {"kitchen": "room", "bathroom": "room", "living_room": "room"}


def planner(text: str, known: dict[str, str], support: dict[str, str] | None = None, room_of: dict[str, str] | None = None,
            unvisited: tuple[str, ...] = ()) -> HeuristicPlanner:
    """A planner with someone to ask, that has read ``text`` and seen ``known`` (every room visited unless named)."""
    p = HeuristicPlanner(embeddings=False)
    p.grounder = Grounder({}, None)
    p.read = understand_request(text, None)
    p.plan_ = p.read.plan
    p.can_ask = True
    p.asker = Asker(p.plan_.goals, p._rename_phrase, p._named)
    p.mem.known = {**ROOMS, **known}
    p.mem.support = dict(support or {})
    p.mem.room_of = dict(room_of or {})
    p.mem.rooms_visited = set(ROOMS) - set(unvisited)
    return p


def next_step(p: HeuristicPlanner) -> Subtask | None:
    """The subtask the scene check chooses (an Ask or a Go to), or None when it lets the plan go on."""
    try:
        p._scene_question()
    except _Decision as d:
        return d.sub
    return None


def first_action(p: HeuristicPlanner) -> Subtask:
    with pytest.raises(_Decision) as d:
        p._decide()
    return d.value.sub


def answer(p: HeuristicPlanner, text: str | None) -> None:
    about = p._asked
    assert about is not None and about.startswith("slot:")
    p._apply_answer(about, text)
    p._asked = None


def test_one_thing_that_fits_is_taken_without_a_question() -> None:
    p = planner("put the pear on the table", {"yellow_pear": "pear", "black_table": "table", "kitchen_counter": "kitchen_counter"},
                {"yellow_pear": "kitchen_counter"})
    assert next_step(p) is None
    assert p.asker is not None and all(s.done for s in p.asker.slots)
    assert first_action(p) == Subtask(action=Action.GO_TO, target="yellow_pear")


def test_rooms_not_seen_yet_are_looked_at_before_settling_on_the_one_seen() -> None:
    p = planner("put the pear on the kitchen counter", {"yellow_pear": "pear", "kitchen_counter": "kitchen_counter"},
                {"yellow_pear": "kitchen_counter"}, unvisited=("bathroom",))
    step = next_step(p)
    assert step == Subtask(action=Action.GO_TO, target="bathroom")


def test_it_asks_about_colour_when_colours_differ() -> None:
    p = planner("put the sponge in the sink", {"yellow_sponge": "sponge", "pink_sponge": "sponge", "sink": "sink"},
                {"yellow_sponge": "sink", "pink_sponge": "sink"})
    step = next_step(p)
    assert step is not None and step.action is Action.ASK
    assert step.target == "Which sponge do you mean: the pink one or the yellow one?"


def test_it_asks_about_position_when_only_the_place_differs() -> None:
    known = {"yellow_sponge": "sponge", "yellow_sponge_2": "sponge", "kitchen_counter": "kitchen_counter", "brown_shelf": "shelf",
             "sink": "sink"}
    p = planner("put the sponge in the sink", known, {"yellow_sponge": "kitchen_counter", "yellow_sponge_2": "brown_shelf"})
    step = next_step(p)
    assert step is not None and step.target == "Which sponge do you mean: the one on the kitchen counter or the one on the brown shelf?"
    answer(p, "the yellow sponge on the brown shelf")  # a spatial answer: the one at that place, not its twin
    assert next_step(p) is None
    assert first_action(p) == Subtask(action=Action.GO_TO, target="yellow_sponge_2")


def test_it_asks_which_of_a_category_and_reads_the_answer() -> None:
    p = planner("put a piece of fruit on the kitchen counter", {"yellow_pear": "pear", "green_banana": "banana",
                                                                 "kitchen_counter": "kitchen_counter"})
    step = next_step(p)
    assert step is not None and step.target == "Which one do you mean: the green banana or the yellow pear?"
    answer(p, "the banana")
    goal = p.plan_.goals[0]
    assert isinstance(goal, Move) and goal.things.names == ("green banana",)


def test_a_place_of_a_shared_type_is_asked_about_and_a_name_given_in_answer_is_used() -> None:
    known = {"white_mug": "mug", "cabinet": "cabinet", "bathroom_cabinet": "cabinet"}
    for said in ("the kitchen cabinet", "kitchen_cabinet", "the kitchen one", "the one in the kitchen"):
        p = planner("put the white mug in the cabinet", known, room_of={"cabinet": "kitchen"})
        step = next_step(p)
        assert step is not None and step.target == "Which cabinet do you mean: the bathroom cabinet or the cabinet in the kitchen?"
        answer(p, said)
        assert next_step(p) is None
        goal = p.plan_.goals[0]
        assert isinstance(goal, Move) and goal.dest == "cabinet", said


def test_an_answer_it_cannot_use_is_asked_about_again_then_reported() -> None:
    p = planner("put the white mug in the cabinet", {"white_mug": "mug", "cabinet": "cabinet", "bathroom_cabinet": "cabinet"})
    next_step(p)
    answer(p, "whatever you like")
    again = next_step(p)
    assert again is not None and again.action is Action.ASK
    assert again.target.startswith("Sorry, I could not tell from 'whatever you like'. Which cabinet")
    answer(p, "hmm")
    assert "could not tell which cabinet you mean" in (p.report() or "")


def test_the_kitchen_sink_is_the_sink_standing_in_the_kitchen() -> None:
    p = planner("put the white mug in the kitchen sink", {"white_mug": "mug", "sink": "sink", "bathroom_sink": "sink"},
                room_of={"sink": "kitchen"})
    assert next_step(p) is None
    goal = p.plan_.goals[0]
    assert isinstance(goal, Move) and goal.dest == "sink"


def test_nothing_is_asked_when_the_words_name_one_thing() -> None:
    p = planner("put the white mug in the bathroom cabinet", {"white_mug": "mug", "red_mug": "mug", "cabinet": "cabinet",
                                                             "bathroom_cabinet": "cabinet"})
    assert next_step(p) is None


def test_a_kind_with_none_seen_after_every_room_is_asked_about() -> None:
    p = planner("put a toy on the kitchen counter", {"kitchen_counter": "kitchen_counter"})
    step = next_step(p)
    assert step is not None and step.target == "I have not found any toy yet. Which toy do you mean?"
    answer(p, "the red toy block in the fridge")
    goal = p.plan_.goals[0]
    assert isinstance(goal, Move) and goal.things.names == ("red toy block on the fridge",)


def test_where_in_a_room_is_read_from_the_answer_and_asked_again_when_unusable() -> None:
    p = planner("put the white mug in the kitchen", {"white_mug": "mug", "kitchen_counter": "kitchen_counter", "cabinet": "cabinet"},
                room_of={"kitchen_counter": "kitchen", "cabinet": "kitchen"})
    p.questions = [("Where in the kitchen should it go?", "room:kitchen")]
    p._apply_answer("room:kitchen", "dunno")
    assert p.questions[0] == ("Sorry, I could not tell from 'dunno'. Where in the kitchen should it go?", "room:kitchen")
    p.questions.pop(0)
    p._apply_answer("room:kitchen", "on the counter")
    goal = p.plan_.goals[0]
    assert isinstance(goal, Move) and goal.dest == "kitchen counter" and goal.dest_kind is None


def test_a_basin_is_looked_into_before_settling_on_the_one_thing_seen() -> None:
    p = planner("put the pear on the kitchen counter", {"yellow_pear": "pear", "kitchen_counter": "kitchen_counter", "sink": "sink"},
                {"yellow_pear": "kitchen_counter"})
    assert next_step(p) == Subtask(action=Action.GO_TO, target="sink")  # a pear lying low in the sink shows only from close by
    p.mem.inspected.add("sink")
    assert next_step(p) is None


def _heldout_episode(task_id: str):
    import sys
    from pathlib import Path

    from homiebot.config import RunConfig
    from homiebot.people.simulated import SimulatedUser
    from homiebot.runtime import run_episode, scene_for

    sys.path.insert(0, str(Path(__file__).parent))
    from heldout_people import heldout_tasks

    task = next(t for t in heldout_tasks(12) if t.id == task_id)
    cfg = RunConfig.model_validate({"planner": {"name": "heuristic"}, "skill_profile": "perfect",
                                    "world": {"name": "embedded_home", "params": {"width": 256, "height": 256}}})
    user = SimulatedUser(task.instruction, task.goal or [], scene_for(task).model_dump(mode="json", by_alias=True))
    record, _ = run_episode(cfg, task, user=user)
    return task, record, [s.exchange for s in record.steps if s.exchange is not None]


def test_a_clear_request_by_kind_alone_in_a_home_of_its_own_asks_nothing() -> None:
    task, record, asks = _heldout_episode("005_plain")  # "i'd like the cereal box on the chair": one of each there
    assert task.min_questions == 0
    assert asks == [] and record.goal_satisfied


def test_twins_of_two_colours_are_told_apart_by_one_question() -> None:
    task, record, asks = _heldout_episode("000_colour")  # "can you move the sugar box on the brown chair for me"
    assert task.min_questions == 1
    assert [e.question for e in asks] == ["Which sugar box do you mean: the white one or the yellow one?"]
    assert asks[0].relevant and record.goal_satisfied


def shut_away_planner(round_: int = 8) -> HeuristicPlanner:
    """Every room seen, one soap in view, two closed cabinets (the bathroom's is where the robot stands)."""
    p = planner("put the soap in the sink", {"pink_soap": "soap", "kitchen_counter": "kitchen_counter", "sink": "sink",
                                             "cabinet": "cabinet", "bathroom_cabinet": "cabinet"},
                {"pink_soap": "kitchen_counter"}, room_of={"cabinet": "kitchen", "bathroom_cabinet": "bathroom"})
    p.asker = Asker(p.plan_.goals, p._rename_phrase, p._named, p._shut_away)
    p.mem.inspected.add("sink")
    p.mem.robot_room = "bathroom"
    p.max_rounds, p._round = 20, round_
    return p


def test_closed_containers_are_looked_into_before_settling_on_the_one_thing_seen_and_a_second_is_asked_about() -> None:
    p = shut_away_planner()
    assert next_step(p) == Subtask(action=Action.GO_TO, target="bathroom_cabinet")  # the one in the robot's room first
    p.mem.near = "bathroom_cabinet"
    assert next_step(p) == Subtask(action=Action.OPEN, target="bathroom_cabinet")
    p.mem.opened.add("bathroom_cabinet")
    p.mem.known["white_soap"] = "soap"  # seen inside
    p.mem.support["white_soap"] = "bathroom_cabinet"
    step = next_step(p)
    assert step is not None and step.target == "Which soap do you mean: the pink one or the white one?"
    answer(p, "I mean the white soap in the bathroom cabinet.")
    assert next_step(p) is None
    goal = p.plan_.goals[0]
    assert isinstance(goal, Move) and goal.things.names == ("white soap",)


def test_with_every_container_looked_into_the_one_thing_seen_is_taken_without_a_question() -> None:
    p = shut_away_planner()
    p.mem.opened |= {"bathroom_cabinet", "cabinet"}
    assert next_step(p) is None
    goal = p.plan_.goals[0]
    assert isinstance(goal, Move) and goal.things.names == ("pink soap",)


def test_no_look_inside_when_the_rounds_left_are_needed_for_the_task() -> None:
    # round 10 of 20: 11 rounds left, 2 for the look, 9 kept for the move (5) and the End with failures (4)
    assert next_step(shut_away_planner(round_=10)) == Subtask(action=Action.GO_TO, target="bathroom_cabinet")
    assert next_step(shut_away_planner(round_=11)) is None


def test_no_look_inside_for_a_phrase_that_says_the_colour_or_a_container_it_cannot_fit_in() -> None:
    p = shut_away_planner()
    p.plan_ = understand_request("put the pink soap in the sink", None).plan
    p.asker = Asker(p.plan_.goals, p._rename_phrase, p._named, p._shut_away)
    assert next_step(p) is None
    q = planner("put the bottle on the kitchen counter", {"green_bottle": "bottle", "kitchen_counter": "kitchen_counter",
                                                          "drawer": "drawer"}, {"green_bottle": "kitchen_counter"})
    q.asker = Asker(q.plan_.goals, q._rename_phrase, q._named, q._shut_away)
    q.max_rounds, q._round = 20, 5
    assert q._closed_for("the bottle") == []  # a 24 cm bottle does not fit in a drawer
    assert next_step(q) is None


def test_a_colour_and_kind_equal_to_a_name_waits_for_the_rooms_not_seen_yet() -> None:
    # "the pink peach" describes how it looks: its twin pink_peach_2 may stand in the bathroom
    p = planner("put the pink peach on the kitchen counter", {"pink_peach": "peach", "kitchen_counter": "kitchen_counter"},
                {"pink_peach": "kitchen_counter"}, unvisited=("bathroom",))
    assert next_step(p) == Subtask(action=Action.GO_TO, target="bathroom")
    p.mem.rooms_visited.add("bathroom")
    p.mem.known["pink_peach_2"] = "peach"
    p.mem.support["pink_peach_2"] = "white_shelf"
    p.mem.known["white_shelf"] = "shelf"
    step = next_step(p)
    assert step is not None and step.target == "Which pink peach do you mean: the one on the kitchen counter or the one on the white shelf?"
