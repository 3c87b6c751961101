"""The hf planner end to end with a tiny, randomly initialised Qwen2-VL built offline in the test.

Nothing is downloaded: the tokenizer is a byte-level BPE trained here on the prompt vocabulary, the
image processor is Qwen2-VL's PIL one, and the model is built from a config with random weights.
"""

from __future__ import annotations

import os
import shutil

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import numpy as np  # noqa: E402
import pytest  # noqa: E402

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from homiebot.config import RunConfig  # noqa: E402
from homiebot.core.contracts import VIEW_NAMES, ErrorCode, Observation, Pose2D, ViewImage  # noqa: E402
from homiebot.core.parsing import parse_planner_output  # noqa: E402
from homiebot.core.prompting import FORMATS, PromptBuilder  # noqa: E402
from homiebot.planners.base import EpisodeContext, ModelInfo, PlannerConfigError, PlannerError, PlannerRequest  # noqa: E402
from homiebot.planners.hf import EXAMPLE_TASK, HFPlanner  # noqa: E402
from homiebot.runtime import run_episode  # noqa: E402
from homiebot.training.tiny import CHAT_TEMPLATE, IMAGE, SPECIAL, build_tiny_qwen2_vl  # noqa: E402

from ..conftest import small_render  # noqa: E402

MODELS = [
    ModelInfo("NoMaD", ("Go to",), "image-goal navigation"),
    ModelInfo("PixNav", ("Go to",), "pixel-goal navigation"),
    ModelInfo("octo", ("Open", "Close", "Pick", "Put"), "manipulation"),
    ModelInfo("RT-1-X", ("Pick", "Put", "Open", "Close"), "manipulation"),
]


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Tiny models run fastest on one thread, and do not stall when other processes share the cores."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    prompts = PromptBuilder([(m.name, m.description) for m in MODELS], "text")
    corpus = [prompts.system(), prompts.user("put the green can from the brown table into the fridge", [], [], None),
              *FORMATS.values(), "Analysis: Subtask: [Go to, fridge] [Put, green_can, fridge] Model: None End"]
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=600, special_tokens=SPECIAL, show_progress=False,
                                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


@pytest.fixture(scope="module")
def tiny_qwen2_vl(tmp_path_factory):
    """A folder like a Qwen2-VL checkpoint: config, random weights, tokenizer, PIL image processor, chat template."""
    return build_tiny_qwen2_vl(tmp_path_factory.mktemp("tiny_qwen2_vl"))


@pytest.fixture(scope="module")
def tiny_llava(tmp_path_factory):
    """A LLaVA-1.5 style folder: tiny CLIP vision tower and Llama text model, saved with its real processor."""
    from transformers.models.llava.image_processing_pil_llava import LlavaImageProcessorPil

    path = tmp_path_factory.mktemp("tiny_llava")
    tokenizer = _tokenizer()
    tokenizer.add_special_tokens({"additional_special_tokens": ["<image>"]})
    template = CHAT_TEMPLATE.replace("<|vision_start|><|image_pad|><|vision_end|>", "<image>")
    tokenizer.chat_template = template
    eos, pad = tokenizer.convert_tokens_to_ids("<|im_end|>"), tokenizer.convert_tokens_to_ids("<|endoftext|>")
    config = transformers.LlavaConfig(
        vision_config=transformers.CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                                    num_attention_heads=2, image_size=28, patch_size=14),
        text_config=transformers.LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                             num_attention_heads=2, num_key_value_heads=1, bos_token_id=pad, eos_token_id=eos,
                                             pad_token_id=pad),
        image_token_id=tokenizer.convert_tokens_to_ids("<image>"), vision_feature_select_strategy="default", vision_feature_layer=-1)
    torch.manual_seed(0)
    transformers.LlavaForConditionalGeneration(config).save_pretrained(path)
    image_processor = LlavaImageProcessorPil(size={"shortest_edge": 28}, crop_size={"height": 28, "width": 28})
    transformers.LlavaProcessor(image_processor=image_processor, tokenizer=tokenizer, patch_size=14, chat_template=template,
                                vision_feature_select_strategy="default", num_additional_image_tokens=1).save_pretrained(path)
    return path


def _config(path, max_rounds: int = 3, **params) -> RunConfig:
    params = {"model_path": str(path), "max_new_tokens": 16, "image_size": IMAGE, **params}
    return RunConfig.model_validate({"planner": {"name": "hf", "params": params}, "skill_profile": "perfect",
                                     "world": small_render(), "max_rounds": max_rounds})


def _request(round_index: int = 1) -> PlannerRequest:
    rng = np.random.default_rng(round_index)
    views = {v: ViewImage(rgb=rng.integers(0, 255, (64, 64, 3), dtype=np.uint8)) for v in VIEW_NAMES}
    obs = Observation(round=round_index, views=views, pose=Pose2D(x=0, y=0, yaw=0))
    return PlannerRequest(round_index, "", "", "put the green can from the brown table into the fridge", [], [], None, obs)


def _planner(path, demo_task, seed: int = 0, **params) -> HFPlanner:
    planner = HFPlanner(model_path=str(path), **{"max_new_tokens": 8, "image_size": IMAGE, **params})
    planner.reset(EpisodeContext(task=demo_task, models=MODELS, seed=seed))
    return planner


def test_selected_by_config_runs_the_whole_pipeline(tiny_qwen2_vl, demo_task):
    record, _ = run_episode(_config(tiny_qwen2_vl), demo_task)
    assert record.termination == "max_rounds" and len(record.steps) == 3
    for step in record.steps:
        assert step.output is None and step.feedback.code is ErrorCode.F1  # random weights: garbage, fed back as F1
        assert "Task: put the green can from the brown table into the fridge" in step.prompt
        assert "Answer with the single next subtask" not in step.prompt  # the user text: the format is in the system text
        usage = step.planner_usage
        assert usage["prompt_tokens"] > 16  # 4 views x 4 image tokens, plus the text
        assert 0 <= usage["completion_tokens"] <= 16 and usage["latency_s"] > 0
    assert "Feedback: " in record.steps[1].prompt and record.steps[1].prompt != record.steps[0].prompt


def test_constrained_outputs_always_parse(tiny_qwen2_vl, demo_task):
    record, _ = run_episode(_config(tiny_qwen2_vl, constrained=True), demo_task)
    assert record.steps
    for step in record.steps:
        assert step.output is not None, step.raw_output
        assert step.feedback.code is not ErrorCode.F1
        assert step.raw_output.startswith("Analysis: ") and "\nSubtask: [" in step.raw_output
        assert step.planner_usage["model_calls"] >= 3


def test_constrained_json_format_parses(tiny_qwen2_vl, demo_task):
    planner = _planner(tiny_qwen2_vl, demo_task, constrained=True, output_format="json", temperature=1.0)
    for r in (1, 2, 3):
        reply = planner.plan(_request(r))
        output = parse_planner_output(reply.text, [m.name for m in MODELS])
        assert reply.text.startswith('{"analysis": "')
        if output.model is not None:
            assert output.subtask.action.value in next(m.actions for m in MODELS if m.name == output.model)


def test_prompt_images_and_in_context_example(tiny_qwen2_vl, demo_task):
    plain = _planner(tiny_qwen2_vl, demo_task)
    reply = plain.plan(_request())
    assert EXAMPLE_TASK not in reply.prompt and EXAMPLE_TASK not in plain.last_prompt_text
    assert plain.last_prompt_text.count("<|image_pad|>") == 4  # the four views, before expansion
    assert "Analysis: <what you see" in plain.last_prompt_text  # the text output format is the default

    example = _planner(tiny_qwen2_vl, demo_task, in_context_example=True)
    reply = example.plan(_request())
    assert EXAMPLE_TASK in reply.prompt and "Subtask: [Open, fridge]\nModel: octo" in reply.prompt
    assert reply.prompt.endswith("Now output the analysis, the next subtask and the model.")
    text = example.last_prompt_text
    assert text.index(EXAMPLE_TASK) < text.index("<|image_pad|>") < text.index("the green can")
    assert "<|im_start|>assistant\nAnalysis: I am in front of the fridge" in text  # a real example turn

    two = _planner(tiny_qwen2_vl, demo_task, views=["back", "front"])
    two.plan(_request())
    assert two.last_prompt_text.count("<|image_pad|>") == 2 and two.views == ["front", "back"]


def test_configuration_errors(tiny_qwen2_vl, tmp_path):
    missing = tmp_path / "no_such_model"
    with pytest.raises(PlannerConfigError, match="never downloaded") as err:
        HFPlanner(model_path=str(missing))
    assert str(missing) in str(err.value)
    with pytest.raises(PlannerConfigError, match="unknown family 'gpt9'.*qwen2_vl"):
        HFPlanner(model_path=str(tiny_qwen2_vl), family="gpt9")
    with pytest.raises(PlannerConfigError, match="does not match model_type 'qwen2_vl'"):
        HFPlanner(model_path=str(tiny_qwen2_vl), family="llava")
    with pytest.raises(PlannerConfigError, match="views"):
        HFPlanner(model_path=str(tiny_qwen2_vl), views=["up"])
    with pytest.raises(PlannerConfigError, match="remote code"):
        (tmp_path / "config.json").write_text('{"model_type": "minicpmv"}')
        HFPlanner(model_path=str(tmp_path))


def test_same_seed_same_output(tiny_qwen2_vl, demo_task):
    first = _planner(tiny_qwen2_vl, demo_task, seed=7, temperature=1.0, top_p=0.9)
    state = torch.random.get_rng_state()
    a = [first.plan(_request(r)).text for r in (1, 2)]
    assert torch.equal(state, torch.random.get_rng_state())  # sampling never touches the global generator
    first.reset(EpisodeContext(task=demo_task, models=MODELS, seed=7))  # the model is kept across episodes
    assert [first.plan(_request(r)).text for r in (1, 2)] == a
    assert _planner(tiny_qwen2_vl, demo_task, seed=7, temperature=1.0, top_p=0.9).plan(_request(1)).text == a[0]
    assert _planner(tiny_qwen2_vl, demo_task, seed=8, temperature=1.0, top_p=0.9).plan(_request(1)).text != a[0]
    assert a[0] != a[1]  # the round is part of the seed

    runs = [run_episode(_config(tiny_qwen2_vl, max_rounds=2, temperature=1.0), demo_task)[0] for _ in range(2)]
    assert [s.raw_output for s in runs[0].steps] == [s.raw_output for s in runs[1].steps]


def test_generation_failure_is_a_planner_error(tiny_qwen2_vl, demo_task, monkeypatch):
    planner = _planner(tiny_qwen2_vl, demo_task)

    def broken(*args, **kwargs):
        raise RuntimeError("CUDA out of memory")

    monkeypatch.setattr(planner.model, "generate", broken)
    with pytest.raises(PlannerError, match="out of memory"):
        planner.plan(_request())


def test_llava_family(tiny_llava, demo_task):
    planner = _planner(tiny_llava, demo_task, image_size=28)
    assert planner.family == "llava" and type(planner.processor.image_processor).__name__.endswith("Pil")
    reply = planner.plan(_request())
    assert planner.last_prompt_text.count("<image>") == 4
    assert reply.usage["prompt_tokens"] > 4 * 5  # each <image> became 4 patches + CLS
    constrained = _planner(tiny_llava, demo_task, image_size=28, constrained=True)
    parse_planner_output(constrained.plan(_request()).text, [m.name for m in MODELS])


def test_plain_prompt_without_chat_template(tiny_qwen2_vl, demo_task, tmp_path):
    folder = shutil.copytree(tiny_qwen2_vl, tmp_path / "no_template")
    (folder / "chat_template.jinja").unlink()
    planner = _planner(folder, demo_task, in_context_example=True)
    reply = planner.plan(_request())
    text = planner.last_prompt_text
    assert text.startswith("You control a one-armed household robot") and "<|im_start|>" not in text
    assert text.count("<|vision_start|><|image_pad|><|vision_end|>") == 4 and reply.prompt in text
