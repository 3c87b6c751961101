"""``homiebot bootstrap``: a privileged planner runs the train split of one or more suites under failure
profiles of several strengths, and the episodes are exported as SFT and DPO data.

Each (suite, failure scale) is one evaluation folder under ``OUT/runs/`` run by ``homiebot.bench.evaluate``
itself (the same jobs, seeds, workers, shards, lock and ``--resume``), with episode folders saved.
A failure scale multiplies every probability of the ``default`` profile (0: perfect skills), so the
rate of failures and re-plans in the data is set by the scales chosen. ``OUT/sft`` and ``OUT/dpo`` are
rebuilt from all episodes after the runs (they are derived data, replaced as a whole).
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from homiebot.bench.evaluate import EvalError, evaluate
from homiebot.bench.suite import builtin_suites
from homiebot.config import RunConfig
from homiebot.core.errors import ConfigError
from homiebot.skills.failures import PROFILES
from homiebot.training.export import export

PERSONA_SUITE = "home100_persona"


def default_suites() -> list[str]:
    """home100, plus the persona rewordings when that suite is installed."""
    return ["home100"] + ([PERSONA_SUITE] if PERSONA_SUITE in builtin_suites() else [])


def scaled_profile(scale: float) -> str | dict[str, Any]:
    """The ``default`` failure profile with every probability times ``scale`` (capped at 1); 0 is ``perfect``."""
    if scale < 0:
        raise EvalError(f"--failure-scales: {scale} is negative")
    if scale == 0:
        return "perfect"
    if scale == 1:
        return "default"
    base = PROFILES["default"].model_dump(mode="json")
    actions = {a: {k: min(1.0, v * scale) for k, v in fs.items()} for a, fs in base["actions"].items()}
    return {"name": f"default_x{scale:g}", "mismatch": min(1.0, base["mismatch"] * scale), "actions": actions}


def parse_scales(text: str) -> list[float]:
    try:
        scales = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise EvalError(f"--failure-scales must be numbers separated by commas (e.g. 0.5,1,2), got '{text}'") from None
    if not scales:
        raise EvalError("--failure-scales: give at least one scale")
    return scales


def bootstrap(cfg: RunConfig, out: Path, suites: Sequence[str], scales: Sequence[float], runs: int = 2, split: str = "train",
              workers: int = 1, resume: bool = False, shard: str | None = None, export_data: bool = True,
              progress: bool = True, search: bool = False) -> dict[str, Any]:
    """Run the privileged planner over every (suite, scale) into ``out/runs``, then export; returns counts.
    ``search``: the SFT export gives rounds naming something not seen yet a search label (``export``)."""
    summary: dict[str, Any] = {"runs": {}, "exports": {}}
    stages = [(suite, scale) for suite in suites for scale in scales]
    for stage, (suite, scale) in enumerate(stages, 1):
        profile = scaled_profile(scale)
        try:
            job_cfg = RunConfig.model_validate({**cfg.model_dump(mode="json"), "skill_profile": profile})
        except ValueError as err:
            raise ConfigError(str(err)) from None
        folder = out / "runs" / f"{Path(suite).name}__x{scale:g}"
        folder.mkdir(parents=True, exist_ok=True)
        s = evaluate(suite, job_cfg, folder, runs=runs, split=split, workers=workers, resume=resume, shard=shard,
                     save_episodes=True, progress=progress, label=f"stage {stage}/{len(stages)} {Path(suite).name} x{scale:g}")
        summary["runs"][folder.name] = {"runs": s["runs"], "new_runs": s["new_runs"], "SR": s["SR"]}
    if export_data:
        for fmt in ("sft", "dpo"):
            if progress:
                print(f"exporting {fmt} from {out / 'runs'} ...", file=sys.stderr, flush=True)
            summary["exports"][fmt] = export_to(out / "runs", fmt, out / fmt, split, suites, search and fmt == "sft")
    return summary


def export_to(runs: Path, fmt: str, target: Path, split: str, suites: Sequence[str], search: bool = False) -> dict[str, Any]:
    """Export into a fresh sibling folder, then put it in place of ``target``."""
    tmp = target.with_name(f".{target.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    stats = export([runs], fmt, tmp, split=split, suite=suites[0] if suites else None, search=search)
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    return stats
