"""The simulated user, personas, the terminal user, Ask through the agent, and ARS / QR."""

from __future__ import annotations

import io
import json

import pytest

from homiebot.bench import metrics
from homiebot.bench.results import RunResult, StepSummary
from homiebot.core.contracts import Action, ErrorCode, offered_actions
from homiebot.core.errors import ConfigError
from homiebot.core.parsing import FormatError, parse_planner_output
from homiebot.core.prompting import PromptBuilder
from homiebot.core.tasks import ObjectAt
from homiebot.people.persona import PersonaUser, load_persona, reword
from homiebot.people.simulated import SimulatedUser
from homiebot.people.terminal import TerminalUser
from homiebot.planners.base import EpisodeContext, Planner, PlannerReply, PlannerRequest
from homiebot.planners.openai_compat import subtask_schema
from homiebot.runtime import make_task, run_episode, scene_for

from ..conftest import DEMO_TASK

SCENE = {
    "rooms": [{"name": "kitchen"}, {"name": "office"}],
    "receptacles": [{"name": "white_table", "type": "table", "room": "kitchen", "color": "white"},
                    {"name": "brown_table", "type": "table", "room": "office", "color": "brown"},
                    {"name": "fridge", "type": "fridge", "room": "kitchen", "color": "white"}],
    "objects": [{"name": "red_mug", "class": "mug", "color": "red", "on": "white_table"},
                {"name": "black_mug", "class": "mug", "color": "black", "on": "brown_table"},
                {"name": "green_can", "class": "can", "color": "green", "on": "white_table"}],
}
GOAL = [ObjectAt(object="black_mug", receptacle="white_table")]


def test_simulated_user_answers_relevant_questions_from_the_intent() -> None:
    user = SimulatedUser("put the mug on the table", GOAL, SCENE)
    assert user.min_questions == 2  # which mug, which table
    which = user.answer("Which mug do you mean?", 1)
    assert which.relevant and "black mug on the brown table" in (which.answer or "")
    where = user.answer("Which table should it go on?", 2)
    assert where.relevant and "white table" in (where.answer or "")
    again = user.answer("Which mug was it again?", 3)
    assert again.relevant is False and "black mug" in (again.answer or "")  # answered already: irrelevant
    off = user.answer("Should I water the plants?", 4)
    assert off.relevant is False


def test_questions_about_what_the_instruction_already_fixes_are_irrelevant() -> None:
    user = SimulatedUser("put the black mug on the white table", GOAL, SCENE)
    assert user.min_questions == 0
    assert user.answer("Which mug do you mean?", 1).relevant is False


def _run(k: int | None, asks: list[bool | None], success: bool) -> RunResult:
    steps = [StepSummary(action="Ask", target="q", success=True, relevant=r) for r in asks]
    steps += [StepSummary(action="Pick", target="a", success=True), StepSummary(action="Put", target="a", place="b", success=success),
              StepSummary(action="End", success=True)]
    return RunResult(task_id=f"t{len(asks)}{k}{success}", run=0, seed=0, keypaths=[["[Pick, a]", "[Put, a, b]", "[End]"]],
                     steps=steps, min_questions=k)


def test_ars_and_qr_on_hand_made_cases() -> None:
    exact = _run(2, [True, True], True)  # success, exactly the K relevant questions: 1/(1+0+0)
    extra = _run(1, [True, False], True)  # one irrelevant question: 1/(1+0+1)
    silent = _run(1, [], True)  # asked nothing where one question was needed: 1/(1+1+0)
    failed = _run(1, [True], False)
    assert metrics.is_success(exact)  # Ask steps are skipped when matching keypaths
    assert [metrics.ask_run_score(r) for r in (exact, extra, silent, failed)] == [1.0, 0.5, 0.5, 0.0]
    assert metrics.ars([exact, extra, silent, failed]) == pytest.approx(50.0)
    assert metrics.qr([exact, extra, silent, failed]) == pytest.approx((1.0 + 2.0 + 0.0 + 1.0) / 4)
    s = metrics.summary([exact, extra])
    assert s["ARS"] == pytest.approx(75.0) and s["questions"] == 4
    assert "ARS" not in metrics.summary([_run(None, [], True)])  # tasks without K: no asking metrics


def test_ask_parses_without_a_model_and_keeps_commas() -> None:
    out = parse_planner_output('{"analysis": "", "subtask": ["Ask", "which mug, the red or the black one?"], "model": null}', ["M"])
    assert out.subtask.action is Action.ASK and out.subtask.target == "which mug, the red or the black one?" and out.model is None
    assert parse_planner_output("Analysis: x\nSubtask: [Ask, where to?]\nModel: None", ["M"]).subtask.target == "where to?"
    with pytest.raises(FormatError, match="Ask needs a question"):
        parse_planner_output('{"subtask": ["Ask"], "model": null}', ["M"])


def test_llm_planners_get_ask_in_prompt_and_schema_only_with_a_user() -> None:
    with_user = offered_actions([["Go to", "Pick"]], ask=True)
    assert "Ask" in with_user and "Ask" not in offered_actions([["Go to"]])
    system = PromptBuilder([("M", "")], actions=with_user).system()
    assert '["Ask", "<one short question>"]' in system
    assert "Ask" not in PromptBuilder([("M", "")]).system().split("Actions:")[1].split("\n")[0]
    enum = subtask_schema(["M"], with_user)["properties"]["subtask"]["prefixItems"][0]["enum"]
    assert "Ask" in enum


def test_terminal_user_reads_a_line_and_times_out() -> None:
    out = io.StringIO()
    got = TerminalUser(stdin=io.StringIO("the red one\n"), stdout=out).answer("Which mug?", 3)
    assert got.answer == "the red one" and "the robot asks: Which mug?" in out.getvalue()
    silent = TerminalUser(timeout=0.05, stdin=io.StringIO(""), stdout=io.StringIO()).answer("Which mug?", 3)
    assert silent.answer is None


def test_personas_reword_reproducibly_and_answer_in_character() -> None:
    bo, cleo = load_persona("bo"), load_persona("cleo")
    assert reword("put the red mug on the white table", cleo, 7) == reword("put the red mug on the white table", cleo, 7)
    assert "red mug" in reword("put the red mug on the white table", bo, 1)
    user = PersonaUser(cleo, "put the mug on the white table", GOAL, SCENE, seed=3)
    got = user.answer("Which mug do you mean?", 1)
    assert got.relevant and "black mug" in (got.answer or "") and got.answerer == "persona:cleo"
    with pytest.raises(ConfigError, match="no persona 'nobody'"):
        load_persona("nobody")


class _Spy(Planner):
    """Asks once, then ends; remembers everything it was given."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def reset(self, context: EpisodeContext) -> None:
        self.seen.append(context.task.model_dump_json())
        self.ask = context.ask

    def plan(self, request: PlannerRequest) -> PlannerReply:
        self.seen += [request.system, request.user]
        if request.round == 1:
            return PlannerReply(json.dumps({"analysis": "", "subtask": ["Ask", "Which mug do you mean?"], "model": None}))
        return PlannerReply(json.dumps({"analysis": "", "subtask": ["End"], "model": None}))


def _demo_task():
    task = make_task("put the mug in the fridge", str(DEMO_TASK.parent.parent / "scenes" / "demo.yaml"))
    return task.model_copy(update={"goal": [ObjectAt(object="white_mug", receptacle="fridge")],
                                   "intent": "SECRET-INTENT the white mug belongs in the fridge", "min_questions": 1})


def test_ask_round_and_planners_never_see_the_hidden_intent(monkeypatch) -> None:
    spy = _Spy()
    monkeypatch.setattr("homiebot.runtime.build_planner", lambda cfg, override=None: spy)
    task = _demo_task()
    user = SimulatedUser(task.instruction, task.goal or [], scene_for(task).model_dump(mode="json", by_alias=True))
    from homiebot.config import RunConfig

    record, _ = run_episode(RunConfig.model_validate({"world": {"name": "embedded_home", "params": {"width": 32, "height": 32}}}),
                            task, user=user)
    ask = record.steps[0]
    assert ask.exchange is not None and ask.feedback.success
    assert ask.exchange.relevant is False  # one mug in this home: the instruction was clear enough
    assert "white mug" in ask.feedback.message and "white mug" in record.steps[1].prompt  # the answer is the next feedback
    assert "answer:" in record.steps[1].prompt  # and a history line
    assert spy.ask and not any("SECRET-INTENT" in text for text in spy.seen)


def test_a_question_nobody_answers_costs_a_round_with_u1(monkeypatch) -> None:
    spy = _Spy()
    monkeypatch.setattr("homiebot.runtime.build_planner", lambda cfg, override=None: spy)
    from homiebot.config import RunConfig

    record, _ = run_episode(RunConfig.model_validate({"world": {"name": "embedded_home", "params": {"width": 32, "height": 32}}}),
                            _demo_task())
    assert record.steps[0].feedback.code is ErrorCode.U1 and "Nobody answered" in record.steps[0].feedback.message
    assert not spy.ask


def test_ask_me_in_the_terminal_through_the_real_command_line(tmp_path) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "osmesa")}
    scene = str(DEMO_TASK.parent.parent / "scenes" / "demo.yaml")
    proc = subprocess.run([sys.executable, "-m", "homiebot.cli", "run", "put the whatsit thing on the blue sofa", "--scene", scene,
                           "--ask-me", "--ask-timeout", "30", "--out", str(tmp_path), "--quiet"],
                          input="put the red book on the blue sofa\n", capture_output=True, text=True, timeout=300, env=env)
    assert "the robot asks:" in proc.stderr, proc.stderr[-2000:]
    record = json.loads(next(tmp_path.rglob("episode.json")).read_text())
    first = record["steps"][0]
    assert first["output"]["subtask"]["action"] == "Ask" and first["exchange"]["answer"] == "put the red book on the blue sofa"
    assert first["exchange"]["answerer"] == "terminal"
    assert record["steps"][-1]["output"]["subtask"]["action"] == "End" and record["goal_satisfied"] in (None, True)
