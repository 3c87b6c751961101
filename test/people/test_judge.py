"""The strict simulated user: K from the scene's candidates (not names), off-topic questions, double
questions, yes/no questions, and the ARS / QR / clear-task figures of hand-made episodes judged by it."""

from __future__ import annotations

import pytest

from homiebot.bench import metrics
from homiebot.bench.results import RunResult, StepSummary
from homiebot.bench.suite import load_suite
from homiebot.core.contracts import Exchange
from homiebot.core.tasks import ObjectAt
from homiebot.people.persona import PersonaUser, load_persona
from homiebot.people.simulated import DONT_KNOW, SimulatedUser

SCENE = {
    "rooms": [{"name": "kitchen"}, {"name": "living_room"}, {"name": "bedroom"}],
    "receptacles": [{"name": "kitchen_counter", "type": "kitchen_counter", "room": "kitchen", "color": "gray"},
                    {"name": "fridge", "type": "fridge", "room": "kitchen", "color": "white"},
                    {"name": "red_sofa", "type": "sofa", "room": "living_room", "color": "red"},
                    {"name": "white_chair", "type": "chair", "room": "living_room", "color": "white"},
                    {"name": "bedroom_chair", "type": "chair", "room": "bedroom", "color": "brown"},
                    {"name": "white_shelf", "type": "shelf", "room": "bedroom", "color": "white"}],
    "objects": [{"name": "pink_sponge", "class": "sponge", "color": "pink", "on": "red_sofa"},
                {"name": "yellow_sponge", "class": "sponge", "color": "yellow", "on": "white_shelf"},
                {"name": "red_mug", "class": "mug", "color": "red", "on": "kitchen_counter"},
                {"name": "red_mug_2", "class": "mug", "color": "red", "on": "white_shelf"},
                {"name": "yellow_apple", "class": "apple", "color": "yellow", "on": "kitchen_counter"},
                {"name": "orange_orange", "class": "orange", "color": "orange", "on": "white_shelf"},
                {"name": "green_can", "class": "can", "color": "green", "on": "red_sofa"}],
}
SPONGE = [ObjectAt(object="pink_sponge", receptacle="bedroom_chair")]


def test_k_comes_from_the_scene_not_from_names() -> None:
    twin = SimulatedUser("put the red mug in the fridge", [ObjectAt(object="red_mug", receptacle="fridge")], SCENE)
    assert twin.min_questions == 1  # red_mug and red_mug_2 are both red mugs
    assert twin.answer("Which mug do you mean?", 1).answer == "I mean the red mug on the kitchen counter."
    assert SimulatedUser("put the red mug on the shelf", [ObjectAt(object="red_mug_2", receptacle="white_shelf")],
                         SCENE).min_questions == 1  # the one in the fridge
    assert SimulatedUser("put the sponge on the chair", SPONGE, SCENE).min_questions == 2
    assert SimulatedUser("put the pink sponge on the bedroom chair", SPONGE, SCENE).min_questions == 0
    fruit = SimulatedUser("bring a piece of fruit to the fridge", [ObjectAt(object="orange_orange", receptacle="fridge")], SCENE)
    assert fruit.min_questions == 1 and fruit.answer("Which fruit?", 1).answer == "I mean the orange on the white shelf."
    assert SimulatedUser("put something to drink in the fridge", [ObjectAt(object="green_can", receptacle="fridge")],
                         SCENE).min_questions == 0  # the only drink
    assert SimulatedUser("put the mug from the shelf in the fridge", [ObjectAt(object="red_mug_2", receptacle="fridge")],
                         SCENE).min_questions == 0  # where it is tells it apart


@pytest.mark.parametrize("question", ["Is it raining outside?", "Hello?", "How are you?", "Should I water the plants?"])
def test_off_topic_questions_are_not_understood_even_while_something_is_open(question: str) -> None:
    user = SimulatedUser("put the sponge on the chair", SPONGE, SCENE)
    got = user.answer(question, 1)
    assert (got.answer, got.relevant, got.resolved) == (DONT_KNOW, False, 0)
    assert "pink" not in (got.answer or "")


def test_a_question_that_settles_two_things_counts_twice() -> None:
    user = SimulatedUser("put the sponge on the chair", SPONGE, SCENE)
    got = user.answer("Which sponge, and where should it go?", 1)
    assert got.answer == "I mean the pink sponge on the red sofa. It goes on the bedroom chair."
    assert (got.relevant, got.resolved) == (True, 2)
    again = user.answer("Where should it go?", 2)
    assert (again.relevant, again.resolved) == (False, 0) and again.answer.startswith("I told you already")


def test_yes_no_questions_get_yes_or_no() -> None:
    user = SimulatedUser("put the sponge on the chair", SPONGE, SCENE)
    no = user.answer("Do you mean the yellow sponge?", 1)
    assert (no.answer, no.relevant, no.resolved) == ("No.", True, 1)  # two sponges: 'no' settles it
    settled = user.answer("Is it the one on the red sofa?", 2)
    assert (settled.answer, settled.relevant) == ("Yes.", False)  # nothing left to learn
    fridge = user.answer("Should it go in the fridge?", 3)
    assert (fridge.answer, fridge.relevant) == ("No.", False)  # the fridge was never a candidate
    chair = user.answer("Should it go on the white chair?", 4)
    assert (chair.answer, chair.relevant, chair.resolved) == ("No.", True, 1)
    assert user.answer("Which chair?", 5).relevant is False  # the 'no' left one chair


def test_a_yes_that_fits_twins_does_not_settle() -> None:
    user = SimulatedUser("put the mug in the fridge", [ObjectAt(object="red_mug_2", receptacle="fridge")], SCENE)
    assert user.answer("Do you mean the red mug?", 1).relevant is False  # both mugs are red
    where = user.answer("Is it the one on the white shelf?", 2)
    assert (where.answer, where.relevant, where.resolved) == ("Yes.", True, 1)


def test_what_to_do_gets_the_whole_intent_and_personas_keep_yes_and_no() -> None:
    user = SimulatedUser("put the sponge on the chair", SPONGE, SCENE)
    assert user.answer("What should I do?", 1).answer == "Please put the pink sponge on the red sofa on the bedroom chair."
    terse = PersonaUser(load_persona("bo"), "put the sponge on the chair", SPONGE, SCENE, seed=1)
    assert load_persona("bo").verbosity == "terse"
    assert terse.answer("Do you mean the yellow sponge?", 1).answer == "No."
    assert (terse.answer("Hello?", 2).answer or "").endswith(DONT_KNOW)


def _episode(k: int, exchanges: list[Exchange], success: bool = True, task: str = "t") -> RunResult:
    steps = [StepSummary(action="Ask", target=e.question, success=True, relevant=e.relevant,
                         resolved=e.resolved if e.relevant else None) for e in exchanges]
    steps += [StepSummary(action="Pick", target="a", success=True), StepSummary(action="Put", target="a", place="b", success=success),
              StepSummary(action="End", success=True)]
    return RunResult(task_id=task, run=0, seed=0, keypaths=[["[Pick, a]", "[Put, a, b]", "[End]"]], steps=steps, min_questions=k)


def test_ars_qr_and_clear_tasks_of_episodes_judged_by_the_strict_user() -> None:
    def asked(instruction: str, goal: list, questions: list[str]) -> tuple[int, list[Exchange]]:
        user = SimulatedUser(instruction, goal, SCENE)
        return user.min_questions, [user.answer(q, i) for i, q in enumerate(questions, 1)]

    off_topic = _episode(*asked("put the pink sponge on the chair", SPONGE, ["Is it raining outside?", "Which chair?"]), task="off")
    double = _episode(*asked("put the sponge on the chair", SPONGE, ["Which sponge, and where should it go?"]), task="double")
    yes_no = _episode(*asked("put the pink sponge on the chair", SPONGE, ["Should it go on the white chair?"]), task="yesno")
    twin = _episode(*asked("put the red mug in the fridge", [ObjectAt(object="red_mug_2", receptacle="fridge")], []), task="twin")
    clear = _episode(*asked("put the pink sponge on the bedroom chair", SPONGE, ["Which sponge?"]), task="clear")
    assert [r.min_questions for r in (off_topic, double, yes_no, twin, clear)] == [1, 2, 1, 1, 0]
    assert [metrics.questions(r) for r in (off_topic, double, yes_no, twin, clear)] == [(1, 1), (2, 0), (1, 0), (0, 0), (0, 1)]
    assert [metrics.ask_run_score(r) for r in (off_topic, double, yes_no, twin)] == [0.5, 1.0, 1.0, 0.5]
    runs = [off_topic, double, yes_no, twin, clear]
    assert metrics.ars(runs) == 75.0  # the clear task's needless question does not lower ARS...
    assert metrics.qr(runs) == 1.0  # (2/1 + 2/2 + 1/1 + 0/1) / 4
    s = metrics.summary(runs)
    assert (s["ambiguous"], s["ARS"], s["questions"]) == (4, 75.0, 4)
    assert (s["clear"], s["clear SR"], s["unnecessary questions"]) == (1, 100.0, 1)  # ...it is counted apart


def test_the_suite_keeps_its_instructions_and_its_k_is_the_users() -> None:
    tasks = load_suite("ambiguity")
    assert len(tasks) == 100
    assert tasks[0].instruction == "could you put the sponge on the chair?" and tasks[63].id == "063_ambiguous"
    families = {t.id.split("_", 1)[1] for t in tasks}
    assert families == {"ambiguous", "position", "category", "twins", "clear"}
    for t in tasks:
        assert SimulatedUser(t.instruction, t.goal or [], t.scene).min_questions == t.min_questions, t.id
    assert sum(t.min_questions == 0 for t in tasks) == 8
    assert any(o["name"].endswith("_2") for t in tasks if "twins" in t.id for o in t.scene["objects"])
    assert {t.split for t in tasks[::2]} == {"dev"} and {t.split for t in tasks[1::2]} == {"test"}
