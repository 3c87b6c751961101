"""SFT of a text-only model with the vocabulary projection run on the answer only.

The loss covers the answer tokens only, yet a plain causal-LM forward projects every position onto the
whole vocabulary (49k words for SmolLM2): on a CPU about a third of a step for a 500-token prompt and a
40-token answer. Each record is its own micro-batch (no padding to waste), the answer is the end of the
sequence, so the logits of the last ``answer + 1`` positions are all the loss needs; ``--batch N``
becomes N micro-batches accumulated into one optimizer step. The loss is the same token-mean cross
entropy as the full projection's.
"""

from __future__ import annotations

from typing import Any


def answer_only_trainer(trl: Any, torch: Any) -> type:
    """An ``SFTTrainer`` whose loss projects only the positions that predict answer tokens."""

    class AnswerOnlySFT(trl.SFTTrainer):  # type: ignore[misc, name-defined]
        """SFTTrainer with ``compute_loss`` on the answer's logits only (batches of one record)."""

        def compute_loss(self, model: Any, inputs: dict[str, Any], return_outputs: bool = False,
                         num_items_in_batch: Any = None) -> Any:
            """Token-mean cross entropy of the answer; divided by ``num_items_in_batch`` (all answer tokens
            of the accumulated step) when the trainer gives it, as its own loss would be."""
            inputs = dict(inputs)
            labels = inputs.pop("labels")
            answer = labels[0] != -100
            first = int(answer.nonzero()[0]) if bool(answer.any()) else labels.shape[1] - 1
            out = model(**inputs, logits_to_keep=labels.shape[1] - first + 1)
            logits = out.logits[0, :-1].float()
            total = torch.nn.functional.cross_entropy(logits, labels[0, first:], ignore_index=-100, reduction="sum")
            count = num_items_in_batch if num_items_in_batch is not None else answer.sum()
            loss = total / torch.as_tensor(count, dtype=total.dtype, device=total.device).clamp(min=1)
            return (loss, out) if return_outputs else loss

    return AnswerOnlySFT
