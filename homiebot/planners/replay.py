"""The replay planner: returns a scripted list of raw outputs, one per round (tests, demos, debugging)."""

from __future__ import annotations

from pathlib import Path

import yaml

from homiebot.planners.base import Planner, PlannerConfigError, PlannerReply, PlannerRequest


class ReplayPlanner(Planner):
    """Replays ``outputs`` verbatim (strings: JSON or the paper's text form, valid or not).

    After the script runs out it answers ``[End]`` so episodes finish, unless ``then_end`` is False,
    in which case it repeats the last output.
    """

    needs_views = ()

    def __init__(self, outputs: list[str] | None = None, file: str | None = None, then_end: bool = True) -> None:
        if (outputs is None) == (file is None):
            raise PlannerConfigError("replay planner needs exactly one of 'outputs' (a list of strings) or 'file'")
        if file is not None:
            try:
                data = yaml.safe_load(Path(file).read_text())
            except (OSError, yaml.YAMLError) as err:
                raise PlannerConfigError(f"replay planner: cannot read {file}: {err}") from None
            outputs = data.get("outputs") if isinstance(data, dict) else data
        if not isinstance(outputs, list) or not all(isinstance(o, str) for o in outputs):
            raise PlannerConfigError("replay planner: 'outputs' must be a list of strings")
        self.outputs = list(outputs)
        self.then_end = then_end

    def plan(self, request: PlannerRequest) -> PlannerReply:
        i = request.round - 1
        if i < len(self.outputs):
            return PlannerReply(self.outputs[i])
        if self.then_end or not self.outputs:
            return PlannerReply("Analysis: the script is over.\nSubtask: [End]\nModel: None")
        return PlannerReply(self.outputs[-1])
