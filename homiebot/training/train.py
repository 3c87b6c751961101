"""``homiebot train sft|dpo``: LoRA fine-tuning of a local vision-language model on exported data, with
TRL's trainers and PEFT (docs/training.md).

The base model is a local folder or GGUF file (never downloaded) loaded exactly as the ``hf`` planner
loads it (same family detection, PIL image processor, chat template), or ``tiny:qwen2_vl`` /
``tiny:causal_lm``: a Qwen2-VL or a text-only Llama of a few thousand random parameters built from a
config, for dry runs of the recipe. Each SFT record becomes the chat the planner sends (system text;
the four views then the round's text; the answer), and the loss is taken on the answer tokens only.
A text-only base (family ``causal_lm``, e.g. SmolLM2) trains on an export made with ``--views text``:
the views described in words, the chat built by the planner's own text prompt code. The LoRA adapter is saved under ``OUT/adapter`` with a
manifest (``OUT/homiebot_train.json``) that the ``trained`` planner reads.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from homiebot.core.records import atomic_write_text
from homiebot.training.episodes import ExportError

MANIFEST = "homiebot_train.json"
TINY = "tiny:qwen2_vl"
TINY_TEXT = "tiny:causal_lm"


class TrainError(ExportError):
    """Training that cannot start; the message says what to fix."""


def _require() -> tuple[Any, Any, Any, Any]:
    try:
        import datasets
        import peft
        import torch
        import trl
    except ImportError as err:
        raise TrainError(f"training needs torch, trl, peft and datasets ({err.name} is missing): pip install 'homiebot[ml,train]'") from None
    return datasets, peft, torch, trl


def _load_data(data: Path, fmt: str) -> Any:
    datasets, *_ = _require()
    stats_file = data / "stats.json"
    if not (data / "hf").is_dir() or not stats_file.is_file():
        raise TrainError(f"--data {data}: not an export folder (no hf/ and stats.json); make one with `homiebot export --format {fmt}`")
    stats = json.loads(stats_file.read_text())
    if stats.get("format") != fmt:
        raise TrainError(f"--data {data}: holds {stats.get('format')} data; `train {fmt}` needs an export made with --format {fmt}")
    ds = datasets.load_from_disk(str(data / "hf"))
    if len(ds) == 0:
        raise TrainError(f"--data {data}: no records")
    return ds


def _check_views(data: Path, fmt: str, text_only: bool) -> None:
    """A text-only base trains on views described in words, a vision model on images."""
    views = json.loads((data / "stats.json").read_text()).get("views", "images")
    if text_only and views != "text":
        raise TrainError(f"--data {data}: its records show the views as images, and the base is a text-only model; "
                         f"export them again with `homiebot export ... --format {fmt} --views text`")
    if not text_only and views == "text":
        raise TrainError(f"--data {data}: its records describe the views in words (--views text); the base is a vision "
                         "model: export them again without --views, or give a text-only base")


def _base(base: str, out: Path) -> Path:
    if base == TINY:
        from homiebot.training.tiny import build_tiny_qwen2_vl

        return build_tiny_qwen2_vl(out / "base")
    if base == TINY_TEXT:
        from homiebot.training.tiny import build_tiny_causal_lm

        return build_tiny_causal_lm(out / "base")
    path = Path(base).expanduser()
    if path.is_file() and path.suffix == ".gguf":  # a GGUF file: the hf planner reads it (dequantized), as here
        return path.resolve()
    if (path / MANIFEST).is_file():  # an earlier `train` run: its base with the adapter merged in (DPO after SFT)
        return _merged(path, out / "base")
    if not (path / "config.json").is_file():
        raise TrainError(f"--base {base}: not a local model folder (no config.json) nor a .gguf file; models are never "
                         f"downloaded, give a folder written by save_pretrained, a GGUF file, or {TINY} / {TINY_TEXT} for a dry run")
    return path.resolve()


def _merged(trained: Path, target: Path) -> Path:
    """Write the base model of a ``train`` output with its adapter merged, beside the base's other files."""
    import shutil

    from homiebot.planners.base import PlannerConfigError
    from homiebot.planners.trained import TrainedPlanner

    try:
        planner = TrainedPlanner(path=str(trained))
        planner._load()
    except PlannerConfigError as err:
        raise TrainError(f"--base {trained}: {err}") from None
    target.mkdir(parents=True)
    if planner.model_path.is_file():  # a GGUF base: the merged float model and the tokenizer read from the file
        _as_float_model(planner.model)
        planner.tokenizer.save_pretrained(str(target))
    else:
        for f in sorted(planner.model_path.iterdir()):
            if f.is_file() and not f.name.endswith((".safetensors", ".bin")) and f.name != "model.safetensors.index.json":
                shutil.copyfile(f, target / f.name)
    planner.model.save_pretrained(str(target))
    return target.resolve()


def _as_float_model(model: Any) -> None:
    """A model read from a GGUF file holds dequantized float weights, yet stays marked as GGUF-quantized, and
    the trainers refuse to train a quantized model: drop the mark (the adapter is trained in float32)."""
    model.hf_quantizer = None
    model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config


def _answer_format(text: str) -> str:
    return "json" if text.lstrip().startswith("{") else "text"


class _Counted:
    """A data collator that tells the progress line how many tokens each batch holds."""

    def __init__(self, collate: Any, progress: Any) -> None:
        self.collate, self.progress = collate, progress

    def __call__(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        batch = self.collate(rows)
        self.progress.count(int(batch["attention_mask"].sum()))
        return batch


class _ChatBatches:
    """Turns records into model inputs: the planner's chat with images, labels on the answer only."""

    def __init__(self, planner: Any, torch: Any) -> None:
        self.planner, self.torch = planner, torch

    def _images(self, row: dict[str, Any]) -> list[Any]:
        if not self.planner.vision:
            return []
        size = self.planner.image_size
        imgs = [im.convert("RGB") for im in row["images"]]
        return [im.resize(size) for im in imgs] if size else imgs

    def chat(self, system: str, user: str, n_images: int, answer: str | None) -> str:
        if not self.planner.vision:  # the text planner's own chat: the prompt trained on is the prompt planned with
            prompt = str(self.planner._text_chat_prompt(system, user, None))
            return prompt if answer is None else prompt + answer + (self.planner.tokenizer.eos_token or "")
        turns: list[dict[str, Any]] = [{"role": "system", "content": [{"type": "text", "text": system}]},
                                       {"role": "user", "content": [{"type": "image"}] * n_images + [{"type": "text", "text": user}]}]
        if answer is None:
            return self.planner.processor.apply_chat_template(turns, tokenize=False, add_generation_prompt=True)
        return self.chat(system, user, n_images, None) + answer + (self.planner.tokenizer.eos_token or "")

    def encode(self, system: str, user: str, images: list[Any], answer: str) -> tuple[Any, int]:
        if not self.planner.vision:
            tok = self.planner.tokenizer
            full = tok(self.chat(system, user, 0, answer), return_tensors="pt", add_special_tokens=False)
            prompt = tok(self.chat(system, user, 0, None), return_tensors="pt", add_special_tokens=False)
            return full, int(prompt["input_ids"].shape[1])
        proc = self.planner.processor
        full = proc(text=[self.chat(system, user, len(images), answer)], images=images or None, return_tensors="pt")
        prompt = proc(text=[self.chat(system, user, len(images), None)], images=images or None, return_tensors="pt")
        return full, int(prompt["input_ids"].shape[1])

    def sft(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        torch = self.torch
        encoded = []
        for row in rows:
            msgs = {m["role"]: m["content"] for m in row["messages"]}
            encoded.append(self.encode(msgs["system"], msgs["user"], self._images(row), msgs["assistant"]))
        return self._stack(encoded, torch)

    def _stack(self, encoded: list[tuple[Any, int]], torch: Any) -> dict[str, Any]:
        pad = self.planner.tokenizer.pad_token_id or 0
        longest = max(e["input_ids"].shape[1] for e, _ in encoded)
        ids, mask, labels = [], [], []
        for e, n_prompt in encoded:
            seq = e["input_ids"][0]
            extra = longest - seq.shape[0]
            lab = seq.clone()
            lab[:n_prompt] = -100
            ids.append(torch.cat([seq, torch.full((extra,), pad, dtype=seq.dtype)]))
            mask.append(torch.cat([torch.ones_like(seq), torch.zeros(extra, dtype=seq.dtype)]))
            labels.append(torch.cat([lab, torch.full((extra,), -100, dtype=seq.dtype)]))
        batch: dict[str, Any] = {"input_ids": torch.stack(ids), "attention_mask": torch.stack(mask), "labels": torch.stack(labels)}
        for key in encoded[0][0]:
            if key in batch or key == "input_ids":
                continue
            parts = [e[key] for e, _ in encoded]
            if all(p.dim() == 2 and p.shape == e["input_ids"].shape for p, (e, _) in zip(parts, encoded)):  # per token (mm_token_type_ids)
                batch[key] = torch.stack([torch.cat([p[0], torch.zeros(longest - p.shape[1], dtype=p.dtype)]) for p in parts])
            else:  # per image (pixel_values, image_grid_thw)
                batch[key] = torch.cat(parts)
        return batch


def _load_planner(base: Path, image_size: int | None) -> Any:
    from homiebot.planners.base import PlannerConfigError
    from homiebot.planners.hf import HFPlanner

    try:
        planner = HFPlanner(model_path=str(base), image_size=image_size)
        planner._load()  # the hf planner's own loading: same family, processor and chat template as at planning time
    except PlannerConfigError as err:
        raise TrainError(str(err)) from None
    return planner


def _check_out(out: Path, resume: bool) -> None:
    if resume:
        if not (out / "checkpoints").is_dir() or not any((out / "checkpoints").glob("checkpoint-*")):
            raise TrainError(f"--resume: {out} holds no checkpoint to resume from (checkpoints/checkpoint-N); "
                             "run without --resume, with --save-every N or --time-budget to get one")
        written = json.loads((out / MANIFEST).read_text()) if (out / MANIFEST).is_file() else None
        if written is not None and not written.get("stopped_by_budget"):
            raise TrainError(f"--resume: {out} is a finished training ({MANIFEST} is written); nothing to resume")
        return
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise TrainError(f"--out {out}: exists and is not an empty folder; choose a new one (or --resume an interrupted run)")


def _rewrite_prompts(ds: Any, stage: str, prompt: str, datasets: Any) -> tuple[Any, int]:
    """The records in the chosen prompt template (``compact``: rewritten by ``training.compact``)."""
    if prompt == "default":
        return ds, 0
    from homiebot.training.compact import to_compact

    rows = ds.to_list()
    answer = rows[0]["messages"][-1]["content"] if stage == "sft" else rows[0]["chosen"][0]["content"]
    kept, left_out = to_compact(rows, stage, _answer_format(answer))
    if not kept:
        raise TrainError(f"--prompt {prompt}: no record is in the default text template, so none can be rewritten "
                         "(export the data with --views text)")
    return datasets.Dataset.from_list(kept), left_out


def train(stage: str, data: Path, base: str, out: Path, steps: int = 50, lr: float | None = None, batch: int = 1,
          lora_r: int | None = None, lora_alpha: int | None = None, image_size: int | None = 56, seed: int = 0,
          beta: float = 0.1, prompt: str = "default", budget_min: float | None = None, save_every: int = 0,
          resume: bool = False) -> dict[str, Any]:
    """Fine-tune ``base`` with LoRA on the ``stage`` (sft or dpo) export in ``data``; writes ``out``; returns the manifest.
    ``prompt``: the template trained on (``compact``: the built-in short one, text-only records); ``budget_min``:
    stop, save and write the manifest after this many minutes; ``save_every``: a resumable checkpoint every N
    steps; ``resume``: continue the interrupted run in ``out`` from its last checkpoint."""
    from homiebot.training.compact import PROMPTS

    if stage not in ("sft", "dpo"):
        raise TrainError(f"unknown stage '{stage}'; choose sft or dpo")
    if steps < 1 or batch < 1:
        raise TrainError("--steps and --batch must be at least 1")
    if prompt not in PROMPTS:
        raise TrainError(f"--prompt {prompt}: choose {' or '.join(PROMPTS)}")
    if budget_min is not None and budget_min <= 0:
        raise TrainError("--time-budget must be a positive number of minutes")
    if save_every < 0:
        raise TrainError("--save-every must be 0 (no checkpoints) or a number of steps")
    _check_out(out, resume)
    datasets, peft, torch, trl = _require()
    from homiebot.training.callbacks import Progress

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    ds = _load_data(data, stage)
    out.mkdir(parents=True, exist_ok=True)
    base_path = _base(base, out) if not (resume and (out / "base").is_dir()) else (out / "base").resolve()
    planner = _load_planner(base_path, image_size)
    _check_views(data, stage, text_only=not planner.vision)
    if prompt != "default" and planner.vision:
        raise TrainError(f"--prompt {prompt}: only for text-only bases (the compact template describes the views in words)")
    ds, left_out = _rewrite_prompts(ds, stage, prompt, datasets)
    if base_path.suffix == ".gguf":
        _as_float_model(planner.model)
    if not planner.vision and "images" in ds.column_names:  # always empty there; TRL takes an images column for a vision task
        ds = ds.remove_columns("images")
    torch.manual_seed(seed)
    # the paper's ranks: 128/256 for SFT, 8/8 for DPO; learning rates 5e-4 and 5e-6 (appendix G)
    r = lora_r or (128 if stage == "sft" else 8)
    alpha = lora_alpha or (256 if stage == "sft" else 8)
    lora = peft.LoraConfig(r=r, lora_alpha=alpha, lora_dropout=0.05, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"],
                           task_type="CAUSAL_LM")
    saving = dict(save_strategy="steps", save_steps=save_every or steps, save_total_limit=2) if save_every or budget_min \
        else dict(save_strategy="no")
    # a text-only model's SFT: one record per micro-batch, the answer's logits only (training.answer_loss)
    answer_only = stage == "sft" and not planner.vision
    per_batch = dict(per_device_train_batch_size=1, gradient_accumulation_steps=batch) if answer_only \
        else dict(per_device_train_batch_size=batch)
    common = dict(output_dir=str(out / "checkpoints"), max_steps=steps, **per_batch,
                  learning_rate=lr or (5e-4 if stage == "sft" else 5e-6), logging_steps=1, **saving, report_to=[],
                  remove_unused_columns=False, seed=seed, data_seed=seed, dataloader_num_workers=0,
                  use_cpu=not torch.cuda.is_available(), disable_tqdm=True, gradient_checkpointing=False,
                  # TRL turns bf16 autocast on by default: on a CPU without bf16 units that is some 15 times slower
                  bf16=bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported()), fp16=False)
    batches = _ChatBatches(planner, torch)
    progress = Progress(steps, budget_min * 60 if budget_min else None)
    first = ds[0]
    if stage == "sft":
        fmt = _answer_format({m["role"]: m["content"] for m in first["messages"]}["assistant"])
        args = trl.SFTConfig(**common, dataset_kwargs={"skip_prepare_dataset": True})
        if answer_only:
            from homiebot.training.answer_loss import answer_only_trainer

            trainer_cls = answer_only_trainer(trl, torch)
        else:
            trainer_cls = trl.SFTTrainer
        trainer = trainer_cls(model=planner.model, args=args, train_dataset=ds, data_collator=_Counted(batches.sft, progress),
                              peft_config=lora, processing_class=planner.processor)
    else:
        from homiebot.training.dpo_train import dpo_trainer

        fmt = _answer_format(first["chosen"][0]["content"])
        trainer = dpo_trainer(trl, planner, ds, batches, lora, common, beta, progress)
    trainer.add_callback(progress)
    from transformers import PrinterCallback

    trainer.remove_callback(PrinterCallback)  # the progress line says it once, shorter
    result = trainer.train(resume_from_checkpoint=True if resume else None)
    trainer.model.save_pretrained(str(out / "adapter"))
    losses = [round(float(h["loss"]), 4) for h in trainer.state.log_history if "loss" in h]
    manifest = {"recipe": "vlm_lora", "stage": stage, "base": str(base_path), "adapter": "adapter", "output_format": fmt,
                "image_size": image_size if planner.vision else None, "vision": planner.vision, "steps": trainer.state.global_step,
                "steps_planned": steps, "stopped_by_budget": progress.stopped_by_budget, "records": len(ds),
                "records_left_out": left_out, "template": prompt if prompt != "default" else None, "batch": batch,
                "tokens": progress.tokens, "train_s": round(progress.elapsed(), 1), "data": str(data.resolve()), "lora_r": r,
                "lora_alpha": alpha, "losses": losses, "train_loss": round(float(result.training_loss), 4)}
    atomic_write_text(out / MANIFEST, json.dumps(manifest, indent=2) + "\n")
    return manifest
