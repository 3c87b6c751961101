"""The agent loop: observe -> plan -> parse (F1) -> ground and check (F2, L*, D*) -> execute (E*) -> feedback.

Middleware-free: the in-process runner calls it directly and the ROS 2 nodes wrap the same parts.
One round costs one planner call, whatever happens in it; a malformed answer is fed back as F1
and the planner is asked again in the next round. ``End`` finishes the episode.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from homiebot.core.contracts import (
    Action,
    EpisodeRecord,
    ErrorCode,
    Exchange,
    Feedback,
    Observation,
    PlannerOutput,
    Status,
    StepRecord,
    Subtask,
    Timings,
    offered_actions,
)
from homiebot.core.errors import CheckResult, ErrorDetector
from homiebot.core.parsing import FormatError, parse_planner_output
from homiebot.core.prompting import PromptBuilder, history_line
from homiebot.core.records import EpisodeWriter
from homiebot.core.tasks import Task
from homiebot.core.world import World
from homiebot.core.world_capabilities import MapDescribing, MappedWorld, PrivilegedWorld
from homiebot.executor import Execution
from homiebot.people.base import NOBODY_ANSWERED, User
from homiebot.planners.base import EpisodeContext, ModelInfo, PlanCancelled, Planner, PlannerError, PlannerRequest
from homiebot.safety.gate import SafetyGate

T = TypeVar("T")


class Runs(Protocol):
    """Executes checked subtasks (the in-process Executor, or a proxy of the executor node)."""

    @property
    def unavailable(self) -> Mapping[str, str]:
        """Configured models that cannot run here -> why."""
        ...

    def capabilities(self) -> Mapping[str, frozenset[Action]]: ...

    def execute(self, subtask: Subtask, model: str, world: World | None, seed: int, round_index: int) -> Execution: ...


class Checker(Protocol):
    """Runs the pre-execution checks (the ErrorDetector, or a proxy of one)."""

    def check(self, output: PlannerOutput) -> CheckResult: ...


@dataclass(frozen=True)
class AgentSettings:
    max_rounds: int = 20
    history_window: int | None = None  # None: the whole history
    max_planner_errors: int = 3  # consecutive planner failures before giving up
    far: float = 2.0
    near: float = 0.1
    suggest_names: bool = True


class Agent:
    """Runs episodes of one world with one planner and one set of skills."""

    def __init__(self, world: World, planner: Planner, executor: Runs, models: list[ModelInfo],
                 settings: AgentSettings = AgentSettings(), planner_name: str = "planner",
                 make_checker: Callable[[Task], Checker] | None = None, safety: SafetyGate | None = None,
                 user: User | None = None) -> None:
        """``safety``: keep-out rules, approval, e-stop and cancel around each round (``SafetyGate``);
        ``user``: who answers [Ask, ...] (None: Ask is not offered, and a question asked anyway gets U1)."""
        self.world = world
        self.safety = safety
        self.planner = planner
        self.executor = executor
        self.models = models
        self.settings = settings
        self.planner_name = planner_name
        self.make_checker = make_checker  # e.g. a detector in another process; default: a local ErrorDetector
        self.user = user
        self.prompts = PromptBuilder([(m.name, m.description) for m in models],
                                     actions=offered_actions((m.actions for m in models), ask=user is not None))
        self.system = self.prompts.system()
        self.on_observe: Callable[[Observation], None] | None = None  # e.g. a live viewer; must not block

    def run(self, task: Task, seed: int, writer: EpisodeWriter | None = None, config: dict[str, Any] | None = None,
            on_step: Callable[[StepRecord], None] | None = None,
            goal_check: Callable[[], bool | None] | None = None) -> EpisodeRecord:
        """Run one episode from the world's initial state and return (and write) its record."""
        started = time.perf_counter()
        if self.safety is not None:
            self.safety.state.new_episode()
        self.world.reset()
        # the planner gets the task without its hidden intent (what a simulated user answers from)
        seen_task = task.model_copy(update={"intent": None, "min_questions": None})
        self.planner.reset(EpisodeContext(task=seen_task, models=self.models, seed=seed, world=self.world if isinstance(self.world, PrivilegedWorld) else None,
                                          ask=self.user is not None, max_rounds=self.settings.max_rounds))
        self.planner_name = self.planner.backend_name() or self.planner_name  # the one that answers, if another was swapped in
        detector = self.make_checker(task) if self.make_checker else ErrorDetector(
            self.world.belief, self.executor.capabilities(), task.aliases,
            far=self.settings.far, near=self.settings.near, suggest=self.settings.suggest_names,
            unavailable=self.executor.unavailable)
        # parse against the configured-but-unavailable names too, so that choosing one meets the
        # detector's F1 that says why it cannot run, not a generic "not in the model list"
        model_names = [m.name for m in self.models] + sorted(self.executor.unavailable)
        steps: list[StepRecord] = []
        history: list[str] = []
        feedback: Feedback | None = None
        ended, termination, planner_errors, error = False, "max_rounds", 0, None
        try:
            for r in range(1, self.settings.max_rounds + 1):
                if self.safety is not None and not self.safety.start_round(r):  # waits while the e-stop holds
                    termination = "cancelled"
                    break
                try:
                    step = self._round(r, task, seed, detector, model_names, history, feedback, writer)
                except PlanCancelled:
                    termination = "cancelled"
                    break
                steps.append(step)
                if writer is not None:
                    writer.write_step(step)
                feedback = step.feedback
                if on_step:
                    on_step(step)
                if step.output is not None and step.output.subtask.action is Action.END:
                    ended, termination = True, "end"
                    report = self.planner.report()
                    if report:  # it stopped to say what it could not understand or ground
                        termination, error = "reported", report
                    break
                planner_errors = planner_errors + 1 if step.raw_output == "" and step.feedback.code is ErrorCode.F1 else 0
                if planner_errors >= self.settings.max_planner_errors:
                    termination = "planner_error"
                    break
                if self.safety is not None and self.safety.state.cancelled:
                    termination = "cancelled"
                    break
        except Exception as err:  # a component failed (e.g. a node stopped answering): keep what was recorded
            if _interrupted(err):  # Ctrl-C or SIGTERM arrived inside a C call that wrapped it (ctypes does)
                termination = "interrupted"
                raise KeyboardInterrupt from err
            termination = getattr(err, "termination", "error")  # an exception may say it means a stop from outside
            error = f"{type(err).__name__}: {err}"
            raise
        except BaseException:
            termination = "interrupted"
            raise
        finally:
            record = EpisodeRecord(
                episode_id=writer.episode_id if writer else f"{task.id}_seed{seed}",
                instruction=task.instruction, task_id=task.id, scene=self.world.scene_description(),
                planner=self.planner_name, seed=seed, max_rounds=self.settings.max_rounds, config=config or {},
                steps=steps, ended=ended, termination=termination, error=error, understood=self.planner.understood(),
                goal_satisfied=_settled(goal_check, None, termination) if goal_check else None,
                path_length=round(_settled(self.world.path_length, 0.0, termination), 4), wall_time=time.perf_counter() - started,
                safety_events=self.safety.state.take_events() if self.safety is not None else [],
            )
            if writer is not None:
                record = writer.finish(record)
        return record

    def _review(self, check: CheckResult, output: PlannerOutput, detector: Checker, r: int, task: Task) -> CheckResult:
        """The safety gate's say on a checked subtask: refused (S1/S2), approved, or edited by the
        operator (an edit goes through the detector's checks again)."""
        assert self.safety is not None and check.subtask is not None
        verdict = self.safety.review(check.subtask, output.model, self.world, r, task.instruction)
        if verdict.feedback is not None:
            return CheckResult(verdict.feedback)
        if verdict.subtask is not None and verdict.subtask != check.subtask:
            return detector.check(output.model_copy(update={"subtask": verdict.subtask}))
        return check

    def _round(self, r: int, task: Task, seed: int, detector: Checker, model_names: list[str],
               history: list[str], feedback: Feedback | None, writer: EpisodeWriter | None) -> StepRecord:
        t0 = time.perf_counter()
        obs = self.world.observe(r)
        if self.on_observe is not None:
            self.on_observe(obs)
        inventory_before = self.world.inventory()
        window = self.settings.history_window
        shown = history[-window:] if window else history
        user = self.prompts.user(task.instruction, inventory_before, shown, feedback, r)
        if isinstance(self.world, MapDescribing) and self.world.describe_in_prompt:  # mapped perception: the map's text, when configured
            user += "\n\nWhat you have seen so far (semantic map):\n" + self.world.map_text()
        t1 = time.perf_counter()
        request = PlannerRequest(r, self.system, user, task.instruction, inventory_before, list(shown), feedback, obs,
                                 scene_map=self.world.map_summary() if isinstance(self.world, MappedWorld) else None)
        usage: dict[str, float] = {}
        output: PlannerOutput | None = None
        try:
            reply = self.planner.plan(request)
            raw, usage = reply.text, dict(reply.usage)
            user = reply.prompt or user  # a planner with its own prompt template reports what it sent
            try:
                output = parse_planner_output(raw, model_names)
                fb = Feedback.ok()
            except FormatError as err:
                fb = Feedback.fail(ErrorCode.F1, str(err))
        except PlanCancelled:
            raise
        except PlannerError as err:
            raw = ""
            fb = Feedback.fail(ErrorCode.F1, f"The planner produced no answer ({err}). Answer again with the next subtask.")
        t2 = time.perf_counter()
        skill, attempts, travelled, acted = None, 0, 0.0, None
        exchange: Exchange | None = None
        t3 = t2
        if output is not None and output.subtask.action is Action.ASK:
            exchange, fb = self._ask(output.subtask.target or "", r)
            t3 = time.perf_counter()
        elif output is not None and output.subtask.action is not Action.END:
            check = detector.check(output)
            t3 = time.perf_counter()
            if check.passed and self.safety is not None:
                check = self._review(check, output, detector, r, task)
            if check.passed:
                assert check.subtask is not None and output.model is not None
                run = self.executor.execute(check.subtask, output.model, self.world, seed, r)
                fb, skill, attempts, travelled = run.feedback, run.skill, run.attempts, run.path_length
                acted = run.acted or check.subtask
            else:
                assert check.feedback is not None  # a check that did not pass always says why
                fb = check.feedback
        t4 = time.perf_counter()
        label = output.subtask.text() if output else "[invalid output]"
        line = history_line(len(history) + 1, label, output.model if output else None, fb.success)
        if exchange is not None:
            line += f" answer: {exchange.answer or NOBODY_ANSWERED}"
        history.append(line)
        images = writer.write_views(r, obs) if writer else {}
        t5 = time.perf_counter()
        return StepRecord(
            round=r, prompt=user, raw_output=raw, output=output, feedback=fb,
            inventory_before=inventory_before, inventory_after=self.world.inventory(),
            skill=skill, acted=acted, attempts=attempts, path_length=round(travelled, 4), images=images, planner_usage=usage,
            exchange=exchange, people=list(obs.people), timings=Timings(observe=t1 - t0, plan=t2 - t1, check=t3 - t2, execute=t4 - t3, record=t5 - t4, total=t5 - t0),
        )

    def _ask(self, question: str, r: int) -> tuple[Exchange, Feedback]:
        """Put the planner's question to the user; the answer is this round's feedback."""
        exchange = self.user.answer(question, r) if self.user is not None else Exchange(question=question, answerer="none")
        if exchange.answer is None:
            return exchange, Feedback.fail(ErrorCode.U1, f"Nobody answered your question ('{question}'). Carry on with "
                                                         "what you know, or report what you cannot resolve.", answer=NOBODY_ANSWERED)
        return exchange, Feedback(status=Status.SUCCESS, message=f"The user answered: {exchange.answer}",
                                  details={"answer": exchange.answer})


def _settled(read: Callable[[], T], fallback: T, termination: str) -> T:
    """A final reading for the record; after a failure or interruption the component asked may be
    gone, and the record must be written all the same."""
    if termination not in ("error", "interrupted"):
        return read()
    try:
        return read()
    except Exception:
        return fallback


STOP_SIGNALLED = threading.Event()  # set by the command line's SIGINT/SIGTERM handler


def _interrupted(err: BaseException) -> bool:
    """True if a stop signal is behind this exception: a C call may have turned the KeyboardInterrupt
    its handler raised into another exception (ctypes does), with or without a chain to it."""
    if STOP_SIGNALLED.is_set():
        return True
    seen: set[int] = set()
    link: BaseException | None = err
    while link is not None and id(link) not in seen:
        if isinstance(link, KeyboardInterrupt):
            return True
        seen.add(id(link))
        link = link.__cause__ or link.__context__
    return False
