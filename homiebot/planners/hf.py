"""A planner that runs a vision-language model, or a text-only language model, locally with ``transformers``.

Each round the model receives the system text and the round's message written by ``PromptBuilder``
(or by a template file), with the camera views as images, and the text it generates is handed back
to the agent unchanged, so a malformed answer becomes F1 feedback like any other planner's.

Supported families (``family: auto`` reads ``model_type`` from the folder's ``config.json``):

* ``qwen2_vl`` and ``qwen2_5_vl``: Qwen2-VL / Qwen2.5-VL and their fine-tunes;
* ``llava`` and ``video_llava``: LLaVA-1.5 style models and Video-LLaVA (images only);
* ``causal_lm``: any text-only causal language model (``AutoModelForCausalLM``: Llama, SmolLM2, Qwen2 ...),
  from a model folder or from a single GGUF file (``model_path: /models/SmolLM2-135M-Instruct.Q4_1.gguf``,
  read with the ``gguf`` package and dequantized). It sees no images: the four views are described in
  words from perception's detections (``homiebot.planners.view_text``). ``auto`` picks it for a GGUF
  file and for a folder whose ``config.json`` names a ``...ForCausalLM`` architecture;
* ``minicpm_v``: MiniCPM-V through its own remote code. That code is Python shipped inside the model
  folder, so it is only run when the folder really contains it (``auto_map`` in ``config.json`` and
  the ``.py`` files next to it) and ``trust_remote_code: true`` is set; constrained decoding is not
  available for it.

``vision: false`` makes a vision model read that description instead of the images too.

Models are never downloaded: ``model_path`` must be a local folder or GGUF file (``config.json``, the weights, the
tokenizer and the image processor configuration), and every load is done with ``local_files_only``.
To use a fine-tuned HomieBot-style checkpoint (one trained on ``Analysis: / Subtask: / Model:``
answers), save or merge it into a folder with ``save_pretrained`` (copy the processor files of the
base model next to the weights if the fine-tuning run did not save them) and point at it::

    planner:
      name: hf
      params: {model_path: /models/homiebot-qwen2-vl-2b, output_format: text, template: prompts/train.yaml}

``template`` should be the prompt file the model was trained with, so that it sees the same words.
Small or untuned models answer in the right format far more often with ``in_context_example: true``
(a worked example exchange is put before the real question), or with ``constrained: true``.

Choice-constrained decoding (``constrained: true``) fixes the skeleton of the answer and leaves the
model only the free parts. The analysis is generated freely up to a newline (``max_new_tokens`` at
most); the literal ``Subtask: [`` is forced; the action is chosen among the allowed action strings by
the log-likelihood the model gives each candidate continuation; the target (object and place for Put)
is generated freely up to ``]`` (a few tokens at most, characters that would break the format are
removed); ``Model:`` is forced and the model name is chosen, again by log-likelihood, among the models
able to run that action (``End`` gets ``None``). Candidates are compared by their average
log-likelihood per token and the best is taken, also when the free parts are sampled. The JSON form
is handled the same way. Every answer therefore parses, although its target may still name something
that does not exist (F2). Each candidate costs one forward pass over the whole prompt.

Images are resized (``image_size``) and processed with PIL only: ``torchvision`` is not needed and
never imported; processors whose video part requires it are assembled without that part.
Greedy decoding is the default (``temperature: 0``); sampling uses a ``torch.Generator`` seeded from
the episode seed and the round, so runs are reproducible.
"""

from __future__ import annotations

import copy
import functools
import gc
import json
import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from homiebot.core.contracts import VIEW_NAMES, Action, Observation, offered_actions
from homiebot.core.prompting import PromptBuilder, PromptError, history_line
from homiebot.planners.base import (
    EpisodeContext,
    ModelInfo,
    Planner,
    PlannerConfigError,
    PlannerError,
    PlannerReply,
    PlannerRequest,
)
from homiebot.planners.cached_decoding import CachedSteps, common_prefix, cut_at_stops
from homiebot.planners.view_text import describe_views

# family -> (model class in transformers, model_type values in config.json, default processor class)
FAMILIES: dict[str, tuple[str | None, tuple[str, ...], str | None]] = {
    "qwen2_vl": ("Qwen2VLForConditionalGeneration", ("qwen2_vl",), "Qwen2VLProcessor"),
    "qwen2_5_vl": ("Qwen2_5_VLForConditionalGeneration", ("qwen2_5_vl",), "Qwen2_5_VLProcessor"),
    "llava": ("LlavaForConditionalGeneration", ("llava",), "LlavaProcessor"),
    "video_llava": ("VideoLlavaForConditionalGeneration", ("video_llava",), "VideoLlavaProcessor"),
    "minicpm_v": (None, ("minicpmv", "minicpm_v"), None),
    "causal_lm": ("AutoModelForCausalLM", (), None),  # text only; auto picks it by architecture or a GGUF file
}
TEXT_FAMILIES = frozenset({"causal_lm"})
GGUF_SUFFIX = ".gguf"
DTYPES = ("float32", "bfloat16", "float16")
DEVICES = ("cpu", "cuda", "auto")
TARGET_TOKENS = 16  # bound on each freely generated target in constrained decoding
FALLBACK_TARGET = "unknown"  # used when the model generates an empty target in constrained decoding
SEED_MIX = 1_000_003
PER_TOKEN_KEYS = ("input_ids", "attention_mask", "mm_token_type_ids", "token_type_ids")

# the worked example exchange of ``in_context_example`` (models are filled in from the episode)
EXAMPLE_TASK = "put the red apple from the kitchen counter into the fridge"
EXAMPLE_ANALYSIS = ("I am in front of the fridge and my hand is empty. The apple has to go inside the fridge, "
                    "which is closed, so I open it now while my hand is free.")


@dataclass(frozen=True)
class _Format:
    """The fixed text around the free parts of an answer, for choice-constrained decoding."""

    start: str  # before the analysis
    analysis_stops: tuple[str, ...]
    before_action: str
    after_action: str  # after a non-End action, before its target (scored with the action)
    end: str  # after End, scored with it
    end_rest: str  # then closes the answer
    arg_stops: tuple[str, ...]
    arg_sep: str  # between the object and the place of Put
    before_model: str  # closes the subtask and opens the model
    after_model: str
    banned: str  # characters removed from free parts


FORMAT_SKELETONS = {
    "text": _Format(start="Analysis: ", analysis_stops=("\n",), before_action="\nSubtask: [", after_action=", ",
                    end="]", end_rest="\nModel: None", arg_stops=("]", "\n", "["), arg_sep=", ", before_model="]\nModel: ",
                    after_model="", banned="[]\n\r"),
    "json": _Format(start='{"analysis": "', analysis_stops=('"', "\n"), before_action='", "subtask": ["',
                    after_action='", "', end='"]', end_rest=', "model": null}', arg_stops=('"', "\n"), arg_sep='", "',
                    before_model='"], "model": "', after_model='"}', banned='"\\\n\r'),
}


def _require_ml() -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError as err:
        raise PlannerConfigError(f"the hf planner needs torch and transformers ({err}); install them with "
                                 "`pip install -e .[ml]`") from None
    return torch, transformers


@functools.lru_cache(maxsize=1)
def _generation_helpers() -> tuple[type, type]:
    """The logits processor and stopping criterion classes (defined late: torch is imported on demand)."""
    torch, transformers = _require_ml()
    logits_processor: Any = transformers.LogitsProcessor
    stopping_criteria: Any = transformers.StoppingCriteria

    class SeededSampler(logits_processor):
        """Samples the next token with its own generator and leaves only that token possible.

        ``generate`` then runs greedily over the result, so sampling is reproducible and never touches
        torch's global random state.
        """

        def __init__(self, generator: Any, temperature: float, top_p: float) -> None:
            self.generator, self.temperature, self.top_p = generator, temperature, top_p

        def __call__(self, input_ids: Any, scores: Any) -> Any:
            probs = torch.softmax(scores.float().cpu() / self.temperature, dim=-1)
            if self.top_p < 1.0:
                sorted_probs, order = torch.sort(probs, descending=True, dim=-1)
                outside = sorted_probs.cumsum(-1) - sorted_probs > self.top_p  # keep the smallest nucleus
                sorted_probs = sorted_probs.masked_fill(outside, 0.0)
                probs = torch.zeros_like(probs).scatter(-1, order, sorted_probs)
            chosen = torch.multinomial(probs, 1, generator=self.generator).to(scores.device)
            return torch.full_like(scores, -math.inf).scatter(-1, chosen, 0.0)

    class StopOnText(stopping_criteria):
        """Stops once the text generated after ``start`` contains one of ``stops``."""

        def __init__(self, decode: Any, start: int, stops: Sequence[str]) -> None:
            self.decode, self.start, self.stops = decode, start, tuple(stops)

        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            text = self.decode(input_ids[0, self.start:])
            done = any(s in text for s in self.stops)
            return torch.full((input_ids.shape[0],), done, dtype=torch.bool, device=input_ids.device)

    return SeededSampler, StopOnText


def read_model_type(path: Path) -> str:
    """``model_type`` from a model folder's config.json (PlannerConfigError when unreadable); for a text-only
    model (a GGUF file, or an architecture ``...ForCausalLM``) the family name ``causal_lm``."""
    if path.is_file():  # only a GGUF file gets here
        return "causal_lm"
    config = path / "config.json"
    try:
        data = json.loads(config.read_text())
    except OSError as err:
        raise PlannerConfigError(f"hf planner: cannot read {config} ({err.strerror}); model_path must be a model folder "
                                 "saved with save_pretrained (config.json, weights, tokenizer, processor files)") from None
    except json.JSONDecodeError as err:
        raise PlannerConfigError(f"hf planner: {config} is not valid JSON: {err}") from None
    if not isinstance(data, dict):
        return ""
    model_type = str(data.get("model_type", ""))
    known = any(model_type in types for _, types, _ in FAMILIES.values())
    architectures = data.get("architectures") or []
    if not known and any(str(a).endswith("ForCausalLM") for a in architectures):
        return "causal_lm"
    return model_type


def resolve_family(family: str, model_type: str) -> str:
    """The family to use for ``model_type``; ``auto`` picks it, otherwise the two must agree."""
    if model_type == "causal_lm" and family in ("auto", "causal_lm"):
        return "causal_lm"
    if family == "causal_lm":
        raise PlannerConfigError(f"hf planner: family 'causal_lm' is for text-only models (a GGUF file, or a folder whose "
                                 f"config.json names a ...ForCausalLM architecture); model_type '{model_type}' is not one")
    if family == "auto":
        for name, (_, types, _) in FAMILIES.items():
            if model_type in types:
                return name
        raise PlannerConfigError(f"hf planner: model_type '{model_type}' in config.json is not a supported family; "
                                 f"supported: {', '.join(FAMILIES)}")
    if model_type and model_type not in FAMILIES[family][1]:
        raise PlannerConfigError(f"hf planner: family '{family}' does not match model_type '{model_type}' in config.json; "
                                 "use family: auto or the matching family")
    return family


def view_images(observation: Observation | None, views: Sequence[str], size: tuple[int, int] | None) -> list[Image.Image]:
    """The chosen views as RGB PIL images (resized to ``size`` = (width, height) when given)."""
    if observation is None:
        return []
    images = []
    for name in views:
        rgb = np.asarray(observation.views[name].rgb)  # type: ignore[index]
        if rgb.dtype != np.uint8:
            rgb = np.clip(rgb, 0, 255).astype(np.uint8)
        image = Image.fromarray(rgb[..., :3]).convert("RGB")
        if size is not None and image.size != size:
            image = image.resize(size, Image.Resampling.BICUBIC)
        images.append(image)
    return images


def _model_for(models: Sequence[ModelInfo], action: str) -> str:
    for m in models:
        if action in m.actions:
            return m.name
    return models[0].name if models else "None"


def example_exchange(prompts: PromptBuilder, models: Sequence[ModelInfo], output_format: str) -> tuple[str, str]:
    """The worked example of ``in_context_example``: (its user text, its answer), with this episode's models."""
    user = prompts.user(EXAMPLE_TASK, [], [history_line(1, "[Go to, fridge]", _model_for(models, "Go to"), True)], None, 2)
    model = _model_for(models, Action.OPEN.value)
    if output_format == "json":
        answer = json.dumps({"analysis": EXAMPLE_ANALYSIS, "subtask": ["Open", "fridge"], "model": model})
    else:
        answer = f"Analysis: {EXAMPLE_ANALYSIS}\nSubtask: [Open, fridge]\nModel: {model}"
    return user, answer


def _accepting_missing_parts(cls: type[Any]) -> type[Any]:
    """A subclass of processor ``cls`` that may be built without some part (its torchvision-only video processor)."""

    def check_argument_for_proper_class(self: Any, name: str, arg: Any) -> Any:
        if arg is None:  # the part left out: nothing to check
            return None
        return cls.check_argument_for_proper_class(self, name, arg)

    return type(cls.__name__, (cls,), {"check_argument_for_proper_class": check_argument_for_proper_class,
                                       "__module__": cls.__module__})


class HFPlanner(Planner):
    """Plans with a local transformers vision-language model (see the module docstring).

    Parameters: ``model_path`` (a local model folder, required); ``family`` (auto, qwen2_vl, qwen2_5_vl,
    llava, video_llava, minicpm_v); ``dtype`` (float32, bfloat16, float16); ``device`` (cpu, cuda,
    cuda:N, auto); ``max_new_tokens``; ``temperature`` (0: greedy) and ``top_p``; ``output_format``
    (text or json) and ``template`` (a PromptBuilder template file); ``in_context_example``;
    ``image_size`` (pixels, or [width, height]; None keeps the rendered size); ``views`` (a subset of
    front, left, back, right, always sent in that order); ``constrained``; ``trust_remote_code`` (only
    for minicpm_v); ``vision`` (default: true for vision families, false for ``causal_lm``; false
    describes the four views in words instead of sending images). The model is loaded by the first
    ``reset`` and kept until ``close``.
    """

    needs_views: tuple[str, ...] = ("image",)

    def __init__(self, model_path: str, family: str = "auto", dtype: str = "float32", device: str = "cpu",
                 max_new_tokens: int = 256, temperature: float = 0.0, top_p: float = 1.0, output_format: str = "text",
                 template: str | None = None, in_context_example: bool = False, image_size: int | Sequence[int] | None = None,
                 views: Sequence[str] | None = None, constrained: bool = False, trust_remote_code: bool = False,
                 vision: bool | None = None) -> None:
        path = Path(str(model_path)).expanduser()
        gguf = path.is_file() and path.suffix.lower() == GGUF_SUFFIX
        if not path.is_dir() and not gguf:
            what = "is not a folder or a .gguf file" if path.exists() else "does not exist"
            raise PlannerConfigError(
                f"hf planner: model_path '{path}' {what}. Models are "
                "never downloaded: set model_path to a local folder holding the model (config.json, weights, tokenizer "
                "and processor files), e.g. one written by save_pretrained, a fine-tuning run, or "
                "`huggingface-cli download <repo> --local-dir <folder>` run beforehand on a machine with internet access, "
                "or to a text-only model's GGUF file")
        if vision is not None and not isinstance(vision, bool):
            raise PlannerConfigError(f"hf planner: 'vision' must be true or false, got {vision!r}")
        if family != "auto" and family not in FAMILIES:
            raise PlannerConfigError(f"hf planner: unknown family '{family}'; choose auto or one of {', '.join(FAMILIES)}")
        if dtype not in DTYPES:
            raise PlannerConfigError(f"hf planner: unknown dtype '{dtype}'; choose one of {', '.join(DTYPES)}")
        if device not in DEVICES and not re.fullmatch(r"cuda:\d+", str(device)):
            raise PlannerConfigError(f"hf planner: unknown device '{device}'; choose cpu, cuda, cuda:N or auto")
        if not isinstance(max_new_tokens, int) or max_new_tokens < 1:
            raise PlannerConfigError("hf planner: max_new_tokens must be a positive integer")
        if not isinstance(temperature, (int, float)) or temperature < 0:
            raise PlannerConfigError("hf planner: temperature must be >= 0 (0 is greedy decoding)")
        if not isinstance(top_p, (int, float)) or not 0 < top_p <= 1:
            raise PlannerConfigError("hf planner: top_p must be in (0, 1]")
        try:
            PromptBuilder([], output_format, template)  # type: ignore[arg-type]  # checks the format and the template file
        except PromptError as err:
            raise PlannerConfigError(f"hf planner: {err}") from None
        views = list(VIEW_NAMES) if views is None else list(views)
        unknown = [v for v in views if v not in VIEW_NAMES]
        if unknown or len(set(views)) != len(views):
            raise PlannerConfigError(f"hf planner: views must be distinct names among {', '.join(VIEW_NAMES)}; got {views}")
        self.image_size = self._size(image_size)
        self.model_type = read_model_type(path)
        self.family = resolve_family(family, self.model_type)
        if self.family == "minicpm_v":
            self._check_remote_code(path, trust_remote_code)
            if constrained:
                raise PlannerConfigError("hf planner: constrained decoding is not available for minicpm_v (its remote code "
                                         "only offers chat()); set constrained: false")
        text_only = self.family in TEXT_FAMILIES
        if vision and text_only:
            raise PlannerConfigError(f"hf planner: {path.name} is a text-only model (family {self.family}); it cannot see images: "
                                     "set vision: false (the views are then described in words)")
        self.vision = (not text_only) if vision is None else vision
        if not self.vision:  # the description is written from the detections
            self.needs_views = ("depth", "segmentation")
        self.model_path = path
        self.dtype, self.device_name = dtype, device
        self.max_new_tokens, self.temperature, self.top_p = max_new_tokens, float(temperature), float(top_p)
        self.output_format, self.template = output_format, template
        self.in_context_example, self.constrained = bool(in_context_example), bool(constrained)
        self.views = [v for v in VIEW_NAMES if v in views]  # always in the order the prompt describes
        self.trust_remote_code = bool(trust_remote_code)
        self.model: Any = None
        self.processor: Any = None
        self.tokenizer: Any = None
        self.device: Any = None
        self.prompts: PromptBuilder | None = None
        self.models: list[ModelInfo] = []
        self.seed = 0
        self.last_prompt_text = ""  # the full text given to the model last round (after the chat template)

    # ---- configuration ------------------------------------------------------------------------
    @staticmethod
    def _size(image_size: int | Sequence[int] | None) -> tuple[int, int] | None:
        if image_size is None:
            return None
        if isinstance(image_size, int) and not isinstance(image_size, bool) and image_size >= 14:
            return (image_size, image_size)
        if (isinstance(image_size, (list, tuple)) and len(image_size) == 2
                and all(isinstance(s, int) and not isinstance(s, bool) and s >= 14 for s in image_size)):
            return (image_size[0], image_size[1])
        raise PlannerConfigError("hf planner: image_size must be an integer >= 14 or [width, height]")

    @staticmethod
    def _check_remote_code(path: Path, trust: bool) -> None:
        data = json.loads((path / "config.json").read_text())
        auto_map = data.get("auto_map") if isinstance(data, dict) else None
        modules = {str(ref).split("--")[-1].split(".")[0] for ref in (auto_map or {}).values() if isinstance(ref, str)}
        missing = sorted(m for m in modules if not (path / f"{m}.py").is_file())
        if not auto_map or missing:
            raise PlannerConfigError(
                f"hf planner: MiniCPM-V runs through its own remote code, which is not in {path} "
                f"({'no auto_map in config.json' if not auto_map else 'missing ' + ', '.join(m + '.py' for m in missing)}). "
                "Copy the complete checkpoint folder, .py files included, and set trust_remote_code: true")
        if not trust:
            raise PlannerConfigError(f"hf planner: MiniCPM-V runs the Python code shipped in {path}; set trust_remote_code: "
                                     "true if you trust that folder")

    # ---- lifecycle ------------------------------------------------------------------------------
    def reset(self, context: EpisodeContext) -> None:
        self.models = list(context.models)
        self.prompts = PromptBuilder([(m.name, m.description) for m in self.models], self.output_format,  # type: ignore[arg-type]
                                     self.template, actions=offered_actions(m.actions for m in self.models), vision=self.vision)
        self.seed = int(context.seed)
        if self.model is None:
            self._load()

    def close(self) -> None:
        if self.model is None:
            return
        cuda = str(self.device).startswith("cuda")
        self.model = self.processor = self.tokenizer = None
        gc.collect()
        if cuda:
            torch, _ = _require_ml()
            torch.cuda.empty_cache()

    def _load(self) -> None:
        torch, transformers = _require_ml()
        if self.device_name == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        else:
            device = self.device_name
        if device.startswith("cuda") and not torch.cuda.is_available():
            raise PlannerConfigError("hf planner: device cuda was asked for but torch sees no CUDA device; use device: cpu or auto")
        self.device = torch.device(device)
        torch_dtype = getattr(torch, self.dtype)
        v5 = int(transformers.__version__.split(".")[0]) >= 5
        dtype_kw = {"dtype": torch_dtype} if v5 else {"torch_dtype": torch_dtype}
        path = str(self.model_path)
        try:
            if self.family in TEXT_FAMILIES:
                self._load_text_model(transformers, dtype_kw)
            elif self.family == "minicpm_v":
                self.model = transformers.AutoModel.from_pretrained(path, trust_remote_code=True, local_files_only=True, **dtype_kw)
                self.tokenizer = transformers.AutoTokenizer.from_pretrained(path, trust_remote_code=True, local_files_only=True)
            else:
                model_cls = getattr(transformers, FAMILIES[self.family][0] or "", None)
                if model_cls is None:
                    raise PlannerConfigError(f"hf planner: this transformers ({transformers.__version__}) has no "
                                             f"{FAMILIES[self.family][0]}; upgrade transformers to use family {self.family}")
                self.processor = self._load_processor(transformers, v5)
                self.tokenizer = self.processor.tokenizer
                self.model = model_cls.from_pretrained(path, local_files_only=True, **dtype_kw)
        except PlannerConfigError:
            raise
        except Exception as err:  # any loading failure is a configuration problem here
            raise PlannerConfigError(f"hf planner: cannot load the {self.family} model from {path}: "
                                     f"{type(err).__name__}: {err}") from err
        self.model.to(self.device)
        self.model.eval()

    def _load_text_model(self, transformers: Any, dtype_kw: dict[str, Any]) -> None:
        """A text-only model and its tokenizer, from a folder or a GGUF file (dequantized by transformers)."""
        path = self.model_path
        where = {"pretrained_model_name_or_path": str(path.parent), "gguf_file": path.name} if path.is_file() \
            else {"pretrained_model_name_or_path": str(path)}
        if path.is_file():
            try:
                import gguf  # noqa: F401  # transformers reads GGUF files through it
            except ImportError:
                raise PlannerConfigError("hf planner: reading a GGUF file needs the gguf package: "
                                         "pip install 'homiebot[llm]' (or pip install gguf)") from None
        self.tokenizer = transformers.AutoTokenizer.from_pretrained(**where, local_files_only=True)
        self.processor = self.tokenizer
        self.model = transformers.AutoModelForCausalLM.from_pretrained(**where, local_files_only=True, **dtype_kw)

    def _load_processor(self, transformers: Any, v5: bool) -> Any:
        """The processor, with the PIL image processor (never the torchvision one).

        It is put together from the folder's tokenizer and image processor: ``AutoProcessor`` cannot build
        the Qwen2-VL, Qwen2.5-VL and Video-LLaVA processors without torchvision (their video part needs
        it), and it would pass an image ``backend`` choice on to the tokenizer too. ``AutoProcessor`` is
        only the fallback, for processors of another shape.
        """
        try:
            return self._assemble_processor(transformers, {"backend": "pil"} if v5 else {"use_fast": False})
        except Exception as err:
            try:
                return transformers.AutoProcessor.from_pretrained(str(self.model_path), local_files_only=True)
            except Exception as auto_err:
                raise PlannerConfigError(
                    f"hf planner: cannot load the processor from {self.model_path}: {type(err).__name__}: {err}; "
                    f"AutoProcessor failed too: {type(auto_err).__name__}: {auto_err}") from err

    def _assemble_processor(self, transformers: Any, pil: dict[str, Any]) -> Any:
        """The family's processor built from its tokenizer and PIL image processor, without a video processor."""
        path = self.model_path
        name = None
        for config in ("processor_config.json", "preprocessor_config.json", "tokenizer_config.json"):
            try:
                name = json.loads((path / config).read_text()).get("processor_class")
            except (OSError, ValueError, AttributeError):
                continue
            if name:
                break
        name = name or FAMILIES[self.family][2]
        base = getattr(transformers, name or "", None)
        if base is None:
            raise PlannerConfigError(f"unknown processor class '{name}'")
        cls = _accepting_missing_parts(base)
        parts = {
            "tokenizer": transformers.AutoTokenizer.from_pretrained(str(path), local_files_only=True),
            "image_processor": transformers.AutoImageProcessor.from_pretrained(str(path), local_files_only=True, **pil),
        }
        processor_dict, _ = cls.get_processor_dict(str(path), local_files_only=True)
        args = [parts.get(attribute) for attribute in cls.get_attributes()]
        return cls.from_args_and_dict(args, processor_dict)

    # ---- prompt ---------------------------------------------------------------------------------
    def build_prompt(self, request: PlannerRequest, n_images: int) -> tuple[str, str]:
        """(the text given to the model, the user-side text recorded for the step)."""
        assert self.prompts is not None, "reset() was not called"
        system = self.prompts.system()
        views = None if self.vision else describe_views(request.observation)
        user = self.prompts.user(request.instruction, request.inventory, request.history, request.feedback, request.round,
                                 views=views, memories=[m.caption for m in request.memories])
        example = example_exchange(self.prompts, self.models, self.output_format) if self.in_context_example else None
        recorded = user if example is None else f"Example question:\n{example[0]}\nExample answer:\n{example[1]}\n\n{user}"
        template = getattr(self.processor, "chat_template", None)
        if template:
            return self._chat_prompt(system, user, example, n_images), recorded
        return self._plain_prompt(system, recorded, n_images), recorded

    def _chat_prompt(self, system: str, user: str, example: tuple[str, str] | None, n_images: int) -> str:
        if self.family in TEXT_FAMILIES:  # text-only chat templates expect plain string contents
            return self._text_chat_prompt(system, user, example)

        def messages(with_system: bool) -> list[dict[str, Any]]:
            turns: list[dict[str, Any]] = []
            lead = ""
            if with_system:
                turns.append({"role": "system", "content": [{"type": "text", "text": system}]})
            else:
                lead = system + "\n\n"
            if example is not None:
                turns.append({"role": "user", "content": [{"type": "text", "text": lead + example[0]}]})
                turns.append({"role": "assistant", "content": [{"type": "text", "text": example[1]}]})
                lead = ""
            turns.append({"role": "user", "content": [{"type": "image"}] * n_images + [{"type": "text", "text": lead + user}]})
            return turns

        try:
            return self.processor.apply_chat_template(messages(True), tokenize=False, add_generation_prompt=True)
        except Exception:  # templates that refuse a system turn: put it in the first user turn
            return self.processor.apply_chat_template(messages(False), tokenize=False, add_generation_prompt=True)

    def _text_chat_prompt(self, system: str, user: str, example: tuple[str, str] | None) -> str:
        turns = [{"role": "system", "content": system}]
        if example is not None:
            turns += [{"role": "user", "content": example[0]}, {"role": "assistant", "content": example[1]}]
        turns.append({"role": "user", "content": user})
        try:
            return str(self.tokenizer.apply_chat_template(turns, tokenize=False, add_generation_prompt=True))
        except Exception:  # templates that refuse a system turn: put it in the first user turn
            turns = turns[1:]
            turns[0] = {"role": "user", "content": f"{system}\n\n{turns[0]['content']}"}
            return str(self.tokenizer.apply_chat_template(turns, tokenize=False, add_generation_prompt=True))

    def _plain_prompt(self, system: str, recorded: str, n_images: int) -> str:
        if self.family in TEXT_FAMILIES:
            return f"{system}\n\nUSER: {recorded}\nASSISTANT: "
        token = getattr(self.processor, "image_token", None) or "<image>"
        vocab = self.tokenizer.get_vocab() if self.tokenizer is not None else {}
        if "<|vision_start|>" in vocab and "<|vision_end|>" in vocab:
            token = f"<|vision_start|>{token}<|vision_end|>"
        return f"{system}\n\nUSER: {token * n_images}\n{recorded}\nASSISTANT: "

    # ---- planning -------------------------------------------------------------------------------
    def plan(self, request: PlannerRequest) -> PlannerReply:
        if self.model is None or self.prompts is None:
            raise PlannerError("the hf planner was not reset (no model loaded)")
        started = time.perf_counter()
        try:
            images = view_images(request.observation, self.views, self.image_size) if self.vision else []
            if self.family == "minicpm_v":
                text, usage, recorded = self._plan_minicpm(request, images)
            else:
                prompt, recorded = self.build_prompt(request, len(images))
                text, usage = self._plan_processor(prompt, images, request.round)
        except PlannerError:
            raise
        except Exception as err:  # out of memory, bad inputs...: the agent turns it into F1
            raise PlannerError(f"{type(err).__name__}: {err}") from err
        usage["latency_s"] = time.perf_counter() - started
        return PlannerReply(text, usage, prompt=recorded)

    def _generator(self, round_index: int) -> Any:
        torch, _ = _require_ml()
        return torch.Generator().manual_seed((self.seed * SEED_MIX + round_index) % (2**63 - 1))

    def _plan_processor(self, prompt: str, images: list[Image.Image], round_index: int) -> tuple[str, dict[str, float]]:
        torch, _ = _require_ml()
        self.last_prompt_text = prompt
        if self.family in TEXT_FAMILIES:  # the chat template already wrote the special tokens
            inputs = dict(self.tokenizer([prompt], return_tensors="pt", add_special_tokens=False))
        else:
            inputs = self.processor(text=[prompt], images=images or None, return_tensors="pt")
        inputs = {k: (v.to(self.device, dtype=self.model.dtype) if v.is_floating_point() else v.to(self.device))
                  if torch.is_tensor(v) else v for k, v in inputs.items()}
        generator = self._generator(round_index)
        with torch.no_grad():
            if self.constrained:
                text, completion, calls = self._constrained(inputs, generator)
            else:
                text, completion = self._free(inputs, [], self.max_new_tokens, (), generator)
                calls = 1
        usage = {"prompt_tokens": float(inputs["input_ids"].shape[1]), "completion_tokens": float(completion),
                 "model_calls": float(calls)}
        return text, usage

    def _extend(self, inputs: dict[str, Any], suffix: Sequence[int]) -> dict[str, Any]:
        """``inputs`` with ``suffix`` token ids appended (and the per-token tensors grown to match)."""
        if not suffix:
            return inputs
        torch, _ = _require_ml()
        length = inputs["input_ids"].shape[1]
        ids = torch.tensor([list(suffix)], dtype=inputs["input_ids"].dtype, device=self.device)
        out = dict(inputs)
        for key in PER_TOKEN_KEYS:
            value = inputs.get(key)
            if value is not None and torch.is_tensor(value) and value.dim() == 2 and value.shape == (1, length):
                fill = ids if key == "input_ids" else (torch.ones_like(ids) if key == "attention_mask" else torch.zeros_like(ids))
                out[key] = torch.cat([value, fill.to(value.dtype)], dim=1)
        return out

    def _generation_config(self, max_new_tokens: int) -> Any:
        config = copy.deepcopy(self.model.generation_config)
        config.do_sample, config.num_beams, config.max_new_tokens = False, 1, max_new_tokens
        config.temperature = config.top_p = config.top_k = None
        config.max_length = None
        if config.pad_token_id is None:
            config.pad_token_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else config.eos_token_id
        return config

    def _free(self, inputs: dict[str, Any], prefix: Sequence[int], max_new_tokens: int, stops: Sequence[str],
              generator: Any) -> tuple[str, int]:
        """Generate after the prompt and ``prefix``; the text (cut at the first stop) and the token count."""
        sampler_cls, stop_cls = _generation_helpers()
        extended = self._extend(inputs, prefix)
        start = extended["input_ids"].shape[1]

        def decode(ids: Any) -> str:
            return self.tokenizer.decode(ids, skip_special_tokens=True)

        processors = [sampler_cls(generator, self.temperature, self.top_p)] if self.temperature > 0 else []
        criteria = [stop_cls(decode, start, stops)] if stops else []
        output = self.model.generate(**extended, generation_config=self._generation_config(max_new_tokens),
                                     logits_processor=processors, stopping_criteria=criteria)
        new = output[0, start:]
        return cut_at_stops(decode(new), stops) if stops else decode(new).strip(), int(new.shape[0])

    def _choose(self, inputs: dict[str, Any], text: str, candidates: Sequence[str]) -> int:
        """Index of the candidate continuation of ``text`` with the highest log-likelihood per token.

        Averaging over tokens keeps long candidates ("Go to", "RT-1-X") from losing to short ones merely
        for being long; all candidates are scored from the same token, where their encodings diverge.
        """
        torch, _ = _require_ml()
        encode = functools.partial(self.tokenizer.encode, add_special_tokens=False)
        base = encode(text)
        ids = [encode(text + c) for c in candidates]
        shared = min(common_prefix(base, c) for c in ids)  # score every candidate from the same point
        length = inputs["input_ids"].shape[1]
        scores = []
        for cand in ids:
            logits = self.model(**self._extend(inputs, cand), use_cache=False).logits[0].float()
            logprobs = torch.log_softmax(logits, dim=-1)
            picked = [float(logprobs[length + i - 1, cand[i]]) for i in range(shared, len(cand))]
            scores.append(sum(picked) / max(len(picked), 1))
        return max(range(len(candidates)), key=lambda i: scores[i])

    @staticmethod
    def _clean(text: str, banned: str, extra: str = "") -> str:
        """A free part made safe for the format: no delimiters, control characters or line breaks."""
        cleaned = "".join(ch if ch.isprintable() else " " for ch in text if ch not in banned + extra)
        return " ".join(cleaned.split()).strip(" '`")

    def _cached_steps(self, inputs: dict[str, Any], generator: Any) -> CachedSteps:
        """A text-only model's constrained steps over one key/value cache (the same answers, fewer passes)."""
        torch, _ = _require_ml()
        sampler_cls, _ = _generation_helpers()
        sampler = sampler_cls(generator, self.temperature, self.top_p) if self.temperature > 0 else None
        return CachedSteps(self.model, self.tokenizer, inputs["input_ids"][0].tolist(), torch,
                           pick=(lambda scores: sampler(None, scores)) if sampler is not None else None)

    def _constrained(self, inputs: dict[str, Any], generator: Any) -> tuple[str, int, int]:
        """Choice-constrained decoding; returns (answer, its token count, model calls)."""
        fmt = FORMAT_SKELETONS[self.output_format]
        encode = functools.partial(self.tokenizer.encode, add_special_tokens=False)
        calls = 0
        cached = self._cached_steps(inputs, generator) if self.family in TEXT_FAMILIES else None

        def free(text: str, stops: Sequence[str], budget: int, extra: str = "") -> str:
            nonlocal calls
            calls += 1
            generated, _ = (cached.free(text, stops, budget) if cached is not None
                            else self._free(inputs, encode(text), budget, stops, generator))
            return self._clean(generated, fmt.banned, extra)

        def choose(text: str, options: Sequence[str]) -> int:
            nonlocal calls
            calls += len(options)
            if len(options) < 2:
                return 0
            return cached.choose(text, options) if cached is not None else self._choose(inputs, text, options)

        text = fmt.start
        text += free(text, fmt.analysis_stops, self.max_new_tokens)
        text += fmt.before_action
        # the actions the prompt offers (a model's action the task does not allow, e.g. Give without a person, is not one)
        offered = set(self.prompts.actions) if self.prompts is not None else {a.value for a in Action}
        usable = {a for m in self.models for a in m.actions}
        actions = [a.value for a in Action if a is not Action.END and a.value in offered and (a.value in usable or not usable)]
        options = [a + fmt.after_action for a in actions] + [Action.END.value + fmt.end]
        pick = choose(text, options)
        if pick == len(actions):
            text += options[pick] + fmt.end_rest
            return text, len(encode(text)), calls
        action = actions[pick]
        text += options[pick]
        if action == Action.PUT.value:
            text += free(text, (*fmt.arg_stops, ","), TARGET_TOKENS, ",") or FALLBACK_TARGET
            text += fmt.arg_sep
        text += free(text, fmt.arg_stops, TARGET_TOKENS, ",") or FALLBACK_TARGET
        text += fmt.before_model
        names = [m.name for m in self.models if action in m.actions] or [m.name for m in self.models]
        if names:
            text += names[choose(text, names)]
        else:
            text += "None"
        text += fmt.after_model
        return text, len(encode(text)), calls

    # ---- MiniCPM-V (remote code) ----------------------------------------------------------------
    def _plan_minicpm(self, request: PlannerRequest, images: list[Image.Image]) -> tuple[str, dict[str, float], str]:
        torch, _ = _require_ml()
        assert self.prompts is not None
        system = self.prompts.system()
        user = self.prompts.user(request.instruction, request.inventory, request.history, request.feedback, request.round,
                                 memories=[m.caption for m in request.memories])
        msgs: list[dict[str, Any]] = []
        recorded = user
        if self.in_context_example:
            example = example_exchange(self.prompts, self.models, self.output_format)
            msgs += [{"role": "user", "content": [example[0]]}, {"role": "assistant", "content": [example[1]]}]
            recorded = f"Example question:\n{example[0]}\nExample answer:\n{example[1]}\n\n{user}"
        msgs.append({"role": "user", "content": [*images, user]})
        self.last_prompt_text = f"{system}\n\n{recorded}"
        sampling = self.temperature > 0
        extra = {"temperature": self.temperature, "top_p": self.top_p} if sampling else {}
        # the remote chat() takes no generator: seed a forked global state so the caller's is untouched
        devices = [self.device.index or 0] if self.device.type == "cuda" else []
        with torch.random.fork_rng(devices=devices), torch.no_grad():
            torch.manual_seed((self.seed * SEED_MIX + request.round) % (2**63 - 1))
            text = self.model.chat(image=None, msgs=msgs, tokenizer=self.tokenizer, sampling=sampling,
                                   max_new_tokens=self.max_new_tokens, system_prompt=system, **extra)
        text = text if isinstance(text, str) else str(text)
        completion = len(self.tokenizer.encode(text, add_special_tokens=False))
        return text, {"completion_tokens": float(completion)}, recorded
