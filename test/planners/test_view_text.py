"""The four views in words for text-only models, and the llama.cpp grammar of one decision."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from homiebot.core.contracts import VIEW_NAMES, InstanceLabel, Observation, Pose2D, ViewImage
from homiebot.core.parsing import parse_planner_output
from homiebot.planners.grammar import literal, subtask_grammar
from homiebot.planners.view_text import NOTHING, describe_views

ROOM, FRIDGE, TABLE, CAN, KITCHEN = 1, 2, 3, 4, 5
LABELS = {ROOM: InstanceLabel(name="bedroom", category="room"), FRIDGE: InstanceLabel(name="fridge", category="fridge"),
          TABLE: InstanceLabel(name="brown_table", category="table"), CAN: InstanceLabel(name="green_can", category="can"),
          KITCHEN: InstanceLabel(name="kitchen", category="room")}


def view(seg: np.ndarray, depth: float) -> ViewImage:
    return ViewImage(rgb=np.zeros((*seg.shape, 3), np.uint8), depth=np.full(seg.shape, depth, np.float32), segmentation=seg)


def observation() -> Observation:
    floor = np.full((12, 12), ROOM, np.int32)
    front = floor.copy()
    front[2:8, 3:9] = TABLE  # the table stands on the bedroom floor (rows 8.. are floor)
    front[3:6, 5:8] = CAN  # the can rests on the table
    left = floor.copy()
    left[0:4, :] = KITCHEN  # a room seen through a door
    back = floor.copy()
    back[1:9, 2:10] = FRIDGE
    return Observation(round=1, pose=Pose2D(x=0, y=0, yaw=0), labels=LABELS,
                       views={"front": view(front, 1.5), "left": view(left, 3.0), "back": view(back, 0.8),
                              "right": view(floor.copy(), 1.0)})


def test_views_are_described_in_order_with_distance_and_place():
    lines = describe_views(observation()).splitlines()
    assert lines[0] == "You are in the bedroom."
    assert [line.split(":")[0] for line in lines[1:]] == list(VIEW_NAMES)
    front, left, back, right = lines[1:]
    assert "brown_table (1.5 m, bedroom)" in front and "green_can (1.5 m, on brown_table)" in front
    assert left == "left: kitchen (room, 3.0 m)"
    assert back == "back: fridge (0.8 m, bedroom)"
    assert right == f"right: {NOTHING}"


def test_views_without_segmentation_or_observation_say_so():
    assert describe_views(None) == "No camera views this round."
    obs = observation()
    bare = obs.model_copy(update={"views": {n: ViewImage(rgb=v.rgb) for n, v in obs.views.items()}})
    assert "no instance segmentation" in describe_views(bare)


MODELS = {"Go to": ["NoMaD", "PixNav"], "Pick": ["RT-1-X"], "Put": ["RT-1-X"], "Open": ["octo"], "Close": ["octo"]}
ACTIONS = ["Go to", "Pick", "Put", "Open", "Close", "End", "Explore", "Ask"]


def test_grammar_gives_each_action_its_arity_and_its_models():
    grammar = subtask_grammar(ACTIONS, MODELS)
    decision = next(line for line in grammar.splitlines() if line.startswith("decision ::= "))
    assert 'Explore' not in decision  # no model runs it
    assert '( "[" "\\"End\\"" "]," ws "\\"model\\":" ws "null" )' in decision
    assert '"\\"Put\\"" "," ws target "," ws target "]," ws "\\"model\\":" ws ("\\"RT-1-X\\"")' in decision
    assert '("\\"NoMaD\\"" | "\\"PixNav\\"")' in decision
    assert "target ::= free" in grammar
    named = subtask_grammar(ACTIONS, MODELS, names=["fridge", "green_can", "fridge"])
    assert 'target ::= "\\"fridge\\"" | "\\"green_can\\""' in named
    assert literal('a "b" \\') == '"a \\"b\\" \\\\"'


def test_grammar_compiles_in_llama_cpp_and_its_sentences_parse():
    llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make llm)")
    grammar = subtask_grammar(ACTIONS, MODELS, names=["fridge", "green_can"])
    assert llama_cpp.LlamaGrammar.from_string(grammar, verbose=False) is not None
    # one sentence of the grammar per action: what the server can let the model write
    for answer in ['{"analysis": "go", "subtask": ["Go to", "fridge"], "model": "PixNav"}',
                   '{"analysis": "", "subtask": ["Put", "green_can", "fridge"], "model": "RT-1-X"}',
                   '{"analysis": "done", "subtask": ["End"], "model": null}']:
        assert re.fullmatch(r'\{"analysis": "[^"]*", "subtask": \[.*\], "model": .*\}', answer)
        parsed = parse_planner_output(answer, ["NoMaD", "PixNav", "RT-1-X", "octo"])
        assert parsed.subtask.action.value == json.loads(answer)["subtask"][0]
