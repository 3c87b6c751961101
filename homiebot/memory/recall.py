"""Recalling demonstrations for an episode: the run config's ``memory`` section opened as a
``DemonstrationMemory``, the top-k segments for the instruction, and a planner wrapper that hands them
to the planner (``EpisodeContext.memories`` once, ``PlannerRequest.memories`` every round)."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

from homiebot.config import MemorySettings
from homiebot.memory.store import FOLDER_NAME, DemonstrationMemory, MemoryStoreError
from homiebot.planners.base import EpisodeContext, Planner, PlannerReply, PlannerRequest, RecalledSegment


def home_name(scene_key: str) -> str:
    """A folder-safe name for a home, as the recorder names it: a scene file's stem; a scene given
    inline (a generated home) by a digest of its key."""
    stem = Path(scene_key).stem.replace(" ", "_")
    if stem and len(stem) <= 64 and FOLDER_NAME.match(stem):
        return stem
    return "home_" + hashlib.sha1(scene_key.encode()).hexdigest()[:12] if scene_key else "home"


def open_memory(settings: MemorySettings, home: str) -> DemonstrationMemory:
    """The memory the settings name for ``home`` (``settings.home`` when given); MemoryStoreError when
    the folder does not exist, does not validate, or remembers nothing for that home and user."""
    root = Path(settings.root)
    if not root.is_dir():
        raise MemoryStoreError(f"memory {root}: no such folder (make one with python -m homiebot.memory remember DEMO --memory {root})")
    memory = DemonstrationMemory(root, settings.home or home, settings.user)
    if not memory.segments:
        raise MemoryStoreError(f"memory {root}: no demonstrations remembered for home '{memory.home}' and user '{memory.user}' "
                               f"(python -m homiebot.memory remember DEMO --memory {root} --home {memory.home} --user {memory.user})")
    return memory


def recall(memory: DemonstrationMemory, instruction: str, k: int) -> list[RecalledSegment]:
    """The ``k`` segments closest in meaning to ``instruction``, best first, as the planner sees them."""
    return [RecalledSegment(caption=h.segment.caption, score=round(h.score, 4), demo=h.segment.demo,
                            put=tuple((o, p) for o, p in h.segment.put), room=h.segment.room,
                            key_frames=tuple(str(p) for p in memory.key_image_paths(h.segment)))
            for h in memory.search(instruction, k)]


class RecallingPlanner(Planner):
    """A planner that is handed the segments recalled for the episode's instruction; everything else
    is the wrapped planner's."""

    def __init__(self, inner: Planner, memories: list[RecalledSegment]) -> None:
        self.inner = inner
        self.memories = list(memories)
        self.needs_views = inner.needs_views

    def reset(self, context: EpisodeContext) -> None:
        """Reset the wrapped planner with the recalled segments in its context."""
        self.inner.reset(dataclasses.replace(context, memories=list(self.memories)))

    def plan(self, request: PlannerRequest) -> PlannerReply:
        """The wrapped planner's reply to the request with the recalled segments in it."""
        return self.inner.plan(dataclasses.replace(request, memories=list(self.memories)))

    def understood(self) -> str | None:
        """What the wrapped planner understood."""
        return self.inner.understood()

    def report(self) -> str | None:
        """What the wrapped planner reported."""
        return self.inner.report()

    def close(self) -> None:
        """Close the wrapped planner."""
        self.inner.close()


__all__ = ["MemoryStoreError", "RecallingPlanner", "home_name", "open_memory", "recall"]
