"""The frozen free-form instruction file: its hash is pinned (it must never be edited) and its shape checked."""

from __future__ import annotations

import hashlib
from pathlib import Path

import yaml

import homiebot.bench

FILE = Path(homiebot.bench.__file__).parent / "data" / "freeform_instructions.yaml"
SHA256 = "79f44f38b4158b6f554f316f3ebac6ca1f8100fa80e9e11a7bc0aa1156ebf2c5"


def test_file_is_frozen() -> None:
    assert hashlib.sha256(FILE.read_bytes()).hexdigest() == SHA256, "the frozen instruction file was edited"


def test_file_shape() -> None:
    data = yaml.safe_load(FILE.read_text())
    goals = data["goals"]
    assert sum(len(g["phrasings"]) for g in goals) >= 150
    assert all(len(g["phrasings"]) >= 5 for g in goals)
    assert all(not 1000 <= g["scene_seed"] < 5000 for g in goals)  # homes outside home100
    forms = {f for g in goals for f in g["forms"]}
    assert {"question", "politeness", "pronoun", "several_destinations", "relative_place", "somewhere", "one_of",
            "condition", "negation"} <= forms
