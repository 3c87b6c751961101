"""The executor's attempt loop: when it retries, when it stops, and what it reports."""

from __future__ import annotations

from homiebot.core.contracts import Action, ErrorCode, Subtask
from homiebot.executor import Executor, is_last_attempt
from homiebot.skills.base import Skill, SkillContext, SkillResult


class Outcomes(Skill):
    """Plays a list of attempt results and remembers the contexts it was given."""

    def __init__(self, *results: SkillResult) -> None:
        super().__init__("M", frozenset({Action.PICK, Action.PUT}))
        self.results, self.seen = list(results), []

    def run(self, subtask, world, context):
        self.seen.append(context)
        return self.results[len(self.seen) - 1]


FAIL, OK = SkillResult(False, "missed"), SkillResult(True, "")
PICK = Subtask(action=Action.PICK, target="apple")


def test_retries_until_success_and_counts_attempts():
    skill = Outcomes(FAIL, FAIL, OK)
    run = Executor({"M": skill}, max_attempts=3).execute(PICK, "M", None, 0, 1)
    assert run.feedback.success and run.attempts == 3
    assert [is_last_attempt(r, c) for r, c in zip(skill.results, skill.seen)] == [False, False, True]


def test_stops_after_the_last_allowed_attempt_with_e1():
    skill = Outcomes(FAIL, FAIL, FAIL, OK)
    run = Executor({"M": skill}, max_attempts=3).execute(PICK, "M", None, 0, 1)
    assert run.feedback.code is ErrorCode.E1 and run.attempts == 3 and len(skill.seen) == 3
    assert "missed" in run.feedback.message


def test_a_dropped_object_ends_the_execution_at_once_with_e2():
    skill = Outcomes(SkillResult(False, "it slipped", dropped="apple"), OK)
    run = Executor({"M": skill}, max_attempts=3).execute(PICK, "M", None, 0, 1)
    assert run.feedback.code is ErrorCode.E2 and run.attempts == 1
    assert is_last_attempt(skill.results[0], skill.seen[0])


def test_put_is_not_retried_by_default():
    skill = Outcomes(FAIL, OK)
    run = Executor({"M": skill}, max_attempts=3).execute(Subtask(action=Action.PUT, target="apple", place="fridge"), "M", None, 0, 1)
    assert run.attempts == 1 and not run.feedback.success
    assert skill.seen[0] == SkillContext(0, 1, 1, 1) and is_last_attempt(FAIL, skill.seen[0])
