"""Turn a planner's raw text into a PlannerOutput, or explain precisely why it cannot be used.

Accepted forms (case and spacing are forgiven, code fences and surrounding prose are ignored):

* JSON: ``{"analysis": "...", "subtask": ["Put", "green_can", "fridge"], "model": "RT-1-X"}``;
  ``subtask`` may also be a string ``"[Put, green_can, fridge]"`` or an object
  ``{"action": ..., "target": ..., "place": ...}``.
* The EMMOE text form: ``Analysis: ...`` / ``Subtask: [Put, green_can, fridge]`` / ``Model: RT-1-X``,
  including ``Subtask: [Go to, sofa] (PixNav)`` with the model in parentheses.
* ``[Ask, <question>]`` (a question may hold commas) and ``[End]`` need no model.

Failures raise ``FormatError`` whose message is written for the planner to read and fix.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from pydantic import ValidationError

from homiebot.core.contracts import (  # the bracket form is the Subtask contract's own
    _BRACKET,
    ACTION_LIST,
    NO_MODEL_ACTIONS,
    FormatError,
    PlannerOutput,
    Subtask,
    _key,
    parse_action,
    parse_subtask_text,
    subtask_from_parts,
)

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
_LABEL = re.compile(r"^\W*(analysis|subtask|model)\s*\d*\s*[:：]", re.IGNORECASE | re.MULTILINE)


def match_model(name: str | None, models: Sequence[str]) -> str | None:
    """Find the configured model a planner meant ('rt-1-x', 'RT1X' -> 'RT-1-X'); None if no match."""
    if not name:
        return None
    wanted = _key(name)
    for model in models:
        if _key(model) == wanted:
            return model
    return None


def _strip_fences(raw: str) -> str:
    blocks = _FENCE.findall(raw)
    return "\n".join(blocks) if blocks else raw


def _json_candidates(text: str) -> Iterator[dict[str, Any]]:
    decoder = json.JSONDecoder()
    for start in [m.start() for m in re.finditer(r"\{", text)]:
        try:
            value, _ = decoder.raw_decode(text[start:])
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            yield value


def _from_json(obj: dict[str, Any]) -> tuple[str, Subtask, str | None] | None:
    fields = {_key(k): v for k, v in obj.items()}
    if "subtask" not in fields:
        return None
    sub = fields["subtask"]
    if isinstance(sub, str):
        subtask = parse_subtask_text(sub)
    elif isinstance(sub, list):
        subtask = subtask_from_parts(sub)
    elif isinstance(sub, dict):
        inner = {_key(k): v for k, v in sub.items()}
        subtask = subtask_from_parts([inner.get("action"), inner.get("target") or inner.get("object"), inner.get("place")])
    else:
        raise FormatError("'subtask' must be a list like [\"Go to\", \"fridge\"].")
    model = fields.get("model")
    return (str(fields.get("analysis") or ""), subtask, None if model is None else str(model))


def _from_text(text: str) -> tuple[str, Subtask, str | None] | None:
    labels = list(_LABEL.finditer(text))
    sections: dict[str, str] = {}
    for i, m in enumerate(labels):
        end = labels[i + 1].start() if i + 1 < len(labels) else len(text)
        sections.setdefault(m.group(1).lower(), text[m.end():end].strip())
    if "subtask" not in sections:
        return None
    sub_text = sections["subtask"]
    match = _BRACKET.search(sub_text)
    if match is None:
        first_line = sub_text.splitlines()[0] if sub_text else ""
        subtask = subtask_from_parts(first_line.split(","))
        trailing = ""
    else:
        subtask = subtask_from_parts(match.group(1).split(","))
        trailing = sub_text[match.end():]
    model = sections.get("model")
    if model is not None:
        model = model.splitlines()[0].strip() if model.strip() else ""
        model = model.strip(" .*`'\"")
    else:
        paren = re.search(r"\(([^()]*)\)", trailing)
        model = paren.group(1).strip() if paren else None
    return (sections.get("analysis", "").strip(), subtask, model)


def parse_planner_output(raw: str, models: Sequence[str]) -> PlannerOutput:
    """Parse raw planner text; ``models`` are the low-level model names currently available."""
    if not raw or not raw.strip():
        raise FormatError("Your answer was empty. Give an analysis, the next subtask and the model to run it.")
    text = _strip_fences(raw)
    parsed = None
    try:
        for candidate in _json_candidates(text):
            parsed = _from_json(candidate)
            if parsed:
                break
        if parsed is None:
            parsed = _from_text(text)
    except ValidationError as err:
        raise FormatError(f"The subtask is not valid: {err.errors()[0]['msg'].removeprefix('Value error, ')}.") from None
    if parsed is None:
        raise FormatError(
            "No subtask found in your answer. Reply with 'Analysis: ...', 'Subtask: [action, target]' and "
            f"'Model: ...', choosing the action from {ACTION_LIST} and the model from [{', '.join(models)}]."
        )
    analysis, subtask, model_text = parsed
    if subtask.action in NO_MODEL_ACTIONS:
        return PlannerOutput(analysis=analysis, subtask=subtask, model=None)
    if not model_text or _key(model_text) == "none":
        raise FormatError(f"No model was chosen for {subtask.text()}. Choose one from the model list [{', '.join(models)}].")
    model = match_model(model_text, models)
    if model is None:
        raise FormatError(f"'{model_text}' is not in the model list! Choose a model from [{', '.join(models)}].")
    return PlannerOutput(analysis=analysis, subtask=subtask, model=model)


__all__ = ["ACTION_LIST", "FormatError", "parse_action", "parse_planner_output", "parse_subtask_text", "subtask_from_parts"]
