"""Writing a planner decision as the text a planner emits, in a run's output format, and the
system text a run's planner saw."""

from __future__ import annotations

import json
import re
from typing import Any

from homiebot.core.contracts import EpisodeRecord, PlannerOutput
from homiebot.core.prompting import PromptBuilder

# what each action is replaced by in "action change" pairs: names outside the action list
OFF_LIST_ACTIONS = {"Go to": "Move", "Pick": "Fetch", "Put": "Place", "Open": "Pull", "Close": "Push", "Explore": "Search"}


def output_format(raw: str) -> str:
    """The format a raw planner output was written in: json (an object) or text (the EMMOE lines)."""
    body = re.sub(r"^\s*```(?:json)?", "", raw)
    return "json" if body.lstrip().startswith("{") else "text"


def render(output: PlannerOutput, fmt: str, action: str | None = None, model: str | None | bool = False) -> str:
    """``output`` as planner text in ``fmt``; ``action`` / ``model`` replace the decision's own (augmentations)."""
    sub = output.subtask
    parts = [action or sub.action.value] + [p for p in (sub.target, sub.place) if p]
    chosen_model = output.model if model is False else model
    if fmt == "json":
        return json.dumps({"analysis": output.analysis, "subtask": parts, "model": chosen_model})
    return f"Analysis: {output.analysis}\nSubtask: [{', '.join(parts)}]\nModel: {chosen_model or 'None'}"


def skill_specs(record: EpisodeRecord) -> list[dict[str, Any]]:
    specs = record.config.get("skills") or []
    return [s for s in specs if isinstance(s, dict) and s.get("model")]


def system_text(record: EpisodeRecord, fmt: str) -> str:
    """The instructions of the run's planner, rebuilt from its configuration (the models it was offered)."""
    models = [(str(s["model"]), str(s.get("description") or "")) for s in skill_specs(record)]
    return PromptBuilder(models, output_format="json" if fmt == "json" else "text").system()


def same_kind_models(record: EpisodeRecord, model: str, action: str) -> list[str]:
    """The other models of the run able to do ``action`` that are of ``model``'s kind, in cyclic name order
    after ``model``: models whose configured actions include ``action``, or, for a model configured
    without an action list, models run by the same skill (NoMaD and PixNav are both navigation)."""
    specs = skill_specs(record)
    mine = next((s for s in specs if s["model"] == model), None)
    if mine is None:
        return []
    able = sorted({str(s["model"]) for s in specs
                   if (action in s["actions"] if s.get("actions") is not None else s.get("name") == mine.get("name"))} | {model})
    i = able.index(model)
    return [m for m in able[i + 1:] + able[:i] if m != model]
