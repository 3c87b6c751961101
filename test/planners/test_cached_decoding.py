"""Constrained decoding over one key/value cache gives the answers of the full passes it replaces, with a tiny
random Llama built offline (a text-only model: the family the cache is used for)."""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import pytest  # noqa: E402

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from homiebot.core.contracts import ErrorCode, Feedback, Status  # noqa: E402
from homiebot.planners.base import EpisodeContext, ModelInfo, PlannerRequest  # noqa: E402
from homiebot.planners.cached_decoding import CachedSequence  # noqa: E402
from homiebot.planners.hf import HFPlanner  # noqa: E402
from homiebot.training.tiny import build_tiny_causal_lm  # noqa: E402

MODELS = [ModelInfo("NoMaD", ("Go to",), "image-goal navigation"), ModelInfo("PixNav", ("Go to",), "pixel-goal navigation"),
          ModelInfo("octo", ("Open", "Close", "Pick", "Put"), "manipulation"),
          ModelInfo("RT-1-X", ("Pick", "Put", "Open", "Close"), "manipulation")]


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield build_tiny_causal_lm(tmp_path_factory.mktemp("tiny_llama"))
    torch.set_num_threads(threads)


def _planner(path, demo_task, **params) -> HFPlanner:
    planner = HFPlanner(model_path=str(path), constrained=True, **{"max_new_tokens": 12, **params})
    planner.reset(EpisodeContext(task=demo_task, models=MODELS, seed=5))
    return planner


def _request(round_index: int) -> PlannerRequest:
    history = ["(1) [Go to, fridge] (NoMaD) (success)"] if round_index > 1 else []
    feedback = Feedback(status=Status.FAIL, code=ErrorCode.L1, message="the fridge is closed") if round_index > 1 else None
    return PlannerRequest(round_index, "", "", "put the green can into the fridge", [], history, feedback, None)


def test_log_probs_after_rolling_back_equal_one_full_pass(tiny_llama, demo_task) -> None:
    planner = _planner(tiny_llama, demo_task)
    model = planner.model
    ids = planner.tokenizer.encode("put the green can into the fridge then close it", add_special_tokens=False)
    with torch.no_grad():
        full = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0].float(), dim=-1)
        expected = [float(full[i - 1, ids[i]]) for i in range(5, len(ids))]
        seq = CachedSequence(model, torch)
        seq.next_logits(ids[:3])  # a shorter sequence first, then others sharing a prefix: the cache grows and shrinks
        seq.log_probs(ids[:4] + ids[:2], 3)
        got = seq.log_probs(ids, 5)
        assert seq.ids == ids
        assert got == pytest.approx(expected, abs=1e-4)
        last = seq.next_logits(ids[:7])
        assert torch.allclose(last, model(input_ids=torch.tensor([ids[:7]])).logits[0, -1].float(), atol=1e-4)


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_cached_answers_equal_the_full_pass_answers(tiny_llama, demo_task, temperature: float) -> None:
    cached = _planner(tiny_llama, demo_task, temperature=temperature)
    full = _planner(tiny_llama, demo_task, temperature=temperature)
    full._cached_steps = lambda inputs, generator: None  # the full passes, as vision models decode
    for round_index in (1, 2, 3):
        a, b = cached.plan(_request(round_index)), full.plan(_request(round_index))
        assert a.text == b.text
        assert a.usage["model_calls"] == b.usage["model_calls"]
