"""The DPO stage: TRL's DPOTrainer over the planner's chat, chosen and rejected answers sharing the
prompt and the four views; the reference model is the base with the adapter switched off."""

from __future__ import annotations

from typing import Any


class _PairBatches:
    """Batch of pairs -> [chosen ..., rejected ...] rows with a mask over the answer tokens."""

    def __init__(self, batches: Any, torch: Any, progress: Any = None) -> None:
        self.batches, self.torch, self.progress = batches, torch, progress

    def __call__(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        torch = self.torch
        encoded = []
        for side in ("chosen", "rejected"):
            for row in rows:
                msgs = {m["role"]: m["content"] for m in row["prompt"]}
                encoded.append(self.batches.encode(msgs["system"], msgs["user"], self.batches._images(row), row[side][0]["content"]))
        batch = self.batches._stack(encoded, torch)
        labels = batch.pop("labels")
        batch["completion_mask"] = (labels != -100).long()
        if self.progress is not None:
            self.progress.count(int(batch["attention_mask"].sum()))
        return batch


def dpo_trainer(trl: Any, planner: Any, ds: Any, batches: Any, lora: Any, common: dict[str, Any], beta: float,
                progress: Any = None) -> Any:
    """A DPOTrainer training a LoRA adapter on ``planner.model`` with pairs from ``ds`` (``progress`` counts the tokens)."""
    import torch

    args = trl.DPOConfig(**common, beta=beta, precompute_ref_log_probs=False)
    return trl.DPOTrainer(model=planner.model, args=args, train_dataset=ds, data_collator=_PairBatches(batches, torch, progress),
                          peft_config=lora, processing_class=planner.processor)
