"""Questions before acting and answers folded into the plan."""

from __future__ import annotations

from homiebot.core.contracts import Action, Feedback, Status
from homiebot.planners.heuristic.dialogue import Dialogue, renamed
from homiebot.planners.heuristic.episode import Episode
from homiebot.planners.instructions import Fetch, IfEmpty, Move, Plan, Things
from homiebot.planners.understanding import Understanding, understand_request


def dialogue(text: str, can_ask: bool = True) -> Dialogue:
    read = understand_request(text, None)
    d = Dialogue(Episode(read=read, plan=read.plan, can_ask=can_ask))
    d.begin(lambda phrase: False)
    return d


def test_a_settled_phrase_is_renamed_in_every_kind_of_goal() -> None:
    assert renamed(Move(Things(kind="fruit", count=1), "table"), "fruit", "green banana") == Move(Things(names=("green banana",)), "table")
    assert renamed(Move(Things(names=("mug", "can")), "table"), "mug", "red mug").things.names == ("red mug", "can")
    assert renamed(Fetch("mug", True), "mug", "red mug") == Fetch("red mug", True)
    assert renamed(IfEmpty("fridge", "mug", "table"), "mug", "red mug") == IfEmpty("fridge", "red mug", "table")
    assert renamed(Fetch("can", True), "mug", "red mug") == Fetch("can", True)


def test_where_in_a_room_is_asked_first_and_an_unusable_answer_twice_is_reported() -> None:
    d = dialogue("put the white mug in the kitchen")
    assert d.asker is not None
    sub, _ = d.ask_queued()
    assert sub.action is Action.ASK and sub.target == "Where in the kitchen should it go?" and d.asked == "room:kitchen"
    d.hear(Feedback(status=Status.SUCCESS, details={"answer": "dunno"}))
    assert d.asked is None and d.questions[0][0].startswith("Sorry, I could not tell from 'dunno'")
    d.ask_queued()
    d.hear(Feedback(status=Status.SUCCESS, details={"answer": "no idea"}))
    assert d.ep.report == "I could not tell where in the kitchen it should go from your answers"


def test_a_request_not_understood_is_read_again_from_the_answer() -> None:
    d = Dialogue(Episode(read=Understanding(Plan(), ["blorp"]), can_ask=True))
    d.begin(lambda phrase: False)
    assert d.asker is None and d.questions == [("I am not sure what you mean by 'blorp'. What should I do?", "unsure")]
    d.fold_answer("unsure", "put the red mug in the fridge")
    assert d.ep.read.statement() and d.ep.plan is d.ep.read.plan and d.ep.report is None


def test_nobody_answering_is_reported() -> None:
    d = dialogue("put the white mug in the kitchen")
    d.ask_queued()
    d.hear(None)
    assert d.ep.report is not None and "nobody answered" in d.ep.report


def test_a_furniture_a_home_has_one_of_is_named_without_a_question() -> None:
    d = dialogue("put the white mug in the fridge")
    assert d.named("the fridge", objects=False) == "fridge"
    assert d.named("the fridge", objects=True) is None
    assert d.named("the shelf", objects=False) is None
