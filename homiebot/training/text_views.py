"""Exported rounds for text-only models: the four views described in words, as the ``hf`` and ``openai``
planners describe them to a model without vision (``homiebot.planners.view_text``).

An episode folder keeps each round's four RGB views but not the detections (instance segmentation and
depth) that the description is written from. So the episode is run again from its record: the same
scene, configuration and seed, the recorded planner outputs replayed round by round, and each round's
observation described as a text-only planner would see it. The replayed rounds are checked against
the record (same subtask, same feedback); a round from the first one that differs on is left without
a description, and its records are left out of a text export (counted as ``left_out_replay_diverged``).
"""

from __future__ import annotations

from typing import Any

from homiebot.core.contracts import EpisodeRecord, PlannerOutput
from homiebot.core.prompting import DEFAULT_USER, PromptBuilder
from homiebot.planners.base import PlannerReply, PlannerRequest
from homiebot.planners.replay import ReplayPlanner
from homiebot.planners.view_text import describe_views
from homiebot.training.build import Built
from homiebot.training.episodes import Episode
from homiebot.training.render import output_format, skill_specs

VIEWS_HEADER = "What the cameras see:"


class _Describing(ReplayPlanner):
    """Replays the recorded outputs and writes down what each round's views show."""

    needs_views: tuple[str, ...] = ("depth", "segmentation")  # type: ignore[assignment]  # more than a replay needs

    def __init__(self, outputs: list[str]) -> None:
        super().__init__(outputs=outputs, then_end=True)
        self.views: dict[int, str] = {}

    def plan(self, request: PlannerRequest) -> PlannerReply:
        self.views[request.round] = describe_views(request.observation)
        return super().plan(request)


def _decision(output: PlannerOutput | None) -> tuple[str | None, ...] | None:
    """What a round decided, whatever contract version recorded it."""
    if output is None:
        return None
    sub = output.subtask
    return sub.action.value, sub.target, sub.place, output.model


def describe_rounds(record: EpisodeRecord) -> dict[int, str]:
    """Round -> the text description of its four views, for every round the replay reproduced."""
    from homiebot.config import RunConfig
    from homiebot.core.tasks import Task
    from homiebot.runtime import run_episode

    cfg = RunConfig.model_validate(record.config)
    task = Task(id=record.task_id, instruction=record.instruction, scene=record.scene)
    planner = _Describing([s.raw_output for s in record.steps])
    replay, _ = run_episode(cfg, task, planner=planner)
    views: dict[int, str] = {}
    for old, new in zip(record.steps, replay.steps):
        same = (old.round == new.round and _decision(old.output) == _decision(new.output)
                and old.feedback.status == new.feedback.status and old.feedback.code == new.feedback.code)
        if not same or new.round not in planner.views:
            break
        views[old.round] = planner.views[old.round]
    return views


def text_user(prompt: str, views: str) -> str | None:
    """The recorded user text with the views' description where the text-only template puts it (after
    the task line); None for a prompt not written with the default template."""
    head, sep, rest = prompt.partition("\n")
    if not sep or not head.startswith("Task: ") or not rest.startswith(DEFAULT_USER.split("\n")[1].split("$")[0]):
        return None
    return f"{head}\n{VIEWS_HEADER}\n{views}\n{rest}"


def text_system(record: EpisodeRecord, fmt: str) -> str:
    """The system text a text-only planner of the run's models is given."""
    models = [(str(s["model"]), str(s.get("description") or "")) for s in skill_specs(record)]
    return PromptBuilder(models, output_format="json" if fmt == "json" else "text", vision=False).system()


def to_text(built: Built, episodes: list[Episode], fmt: str) -> Built:
    """The records of ``built`` (an ``fmt`` export) rewritten for text-only models: text system and user
    turns with the views described, no images. Records whose round the replay did not reproduce, or
    whose user text is not in the default template, are left out and counted."""
    by_key = {ep.key: ep for ep in episodes}
    described: dict[str, dict[int, str]] = {}
    out = Built(counts=built.counts.copy())
    for rec in built.records:
        ep = by_key[rec["episode"]]
        if ep.key not in described:
            described[ep.key] = describe_rounds(ep.record)
        views = described[ep.key].get(int(rec["round"]))
        if views is None:
            out.counts["left_out_replay_diverged"] += 1
            continue
        turns = rec["messages"] if fmt == "sft" else rec["prompt"]
        user = text_user(turns[1]["content"], views)
        if user is None:
            out.counts["left_out_template"] += 1
            continue
        answer = turns[2]["content"] if fmt == "sft" else rec["chosen"][0]["content"]
        system = text_system(ep.record, output_format(answer))
        new: dict[str, Any] = {**rec, "images": []}
        new_turns = [{"role": "system", "content": system}, {"role": "user", "content": user}, *turns[2:]]
        if fmt == "sft":
            new["messages"] = new_turns
            new["conversations"] = [{"from": "human", "value": user}, {"from": "gpt", "value": answer}]
        else:
            new["prompt"] = new_turns
        out.records.append(new)
    out.counts["described_episodes"] = len(described)
    return out
