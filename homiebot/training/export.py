"""``homiebot export``: episode folders -> an SFT or DPO dataset folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from homiebot.training.build import DPO_SOURCES, SFT_SOURCES, build_dpo, build_sft
from homiebot.training.episodes import ExportError, find_episodes
from homiebot.training.writer import write_export

SPLITS = ("train", "test", "all")
VIEWS = ("images", "text")


def parse_sources(text: str | None, fmt: str) -> tuple[str, ...]:
    """``--sources a,b``: which record sources to keep (default: all of the format's)."""
    allowed = SFT_SOURCES if fmt == "sft" else DPO_SOURCES
    if not text:
        return allowed
    chosen = tuple(s.strip() for s in text.split(",") if s.strip())
    unknown = [s for s in chosen if s not in allowed]
    if unknown or not chosen:
        raise ExportError(f"--sources {text}: a {fmt} export knows the sources {', '.join(allowed)}")
    return chosen


def export(sources: list[str | Path], fmt: str, out: Path, split: str = "train", suite: str | None = "home100",
           keep: str | None = None, check_visible: bool = True, search: bool = False, views: str = "images") -> dict[str, Any]:
    """Export the episodes under ``sources`` as ``fmt`` (sft or dpo) into ``out``; returns the stats.
    ``search`` (SFT only): a round naming something not known yet is kept with a search label
    (``build.search_label``) instead of being left out. ``views``: ``images`` (the four views) or
    ``text`` (described in words for text-only models, ``text_views``; no images)."""
    if views not in VIEWS:
        raise ExportError(f"--views {views}: choose images or text")
    if fmt not in ("sft", "dpo"):
        raise ExportError(f"--format {fmt}: choose sft or dpo")
    if split not in SPLITS:
        raise ExportError(f"--split {split}: choose one of {', '.join(SPLITS)}")
    chosen = parse_sources(keep, fmt)
    found = find_episodes(sources, suite)
    episodes = [e for e in found if split == "all" or e.split == split]
    if search and not check_visible:
        raise ExportError("--search-labels relabels the rounds --keep-unseen keeps as they are; give one of the two")
    built = build_sft(episodes, chosen, check_visible, search) if fmt == "sft" else build_dpo(episodes, chosen, check_visible)
    if views == "text":
        from homiebot.training.text_views import to_text

        built = to_text(built, episodes, fmt)
    built.counts["episodes_other_split"] = len(found) - len(episodes)
    meta = [{"episode": e.key, "task_id": e.record.task_id} for e in episodes]
    return write_export(built, fmt, out, meta, split, views)
