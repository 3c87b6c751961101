"""A llama.cpp grammar (GBNF) for one decision, built from the round's actions, models and names.

llama.cpp's servers (``llama-server`` and ``python -m llama_cpp.server``) accept a ``grammar`` field in a
chat-completions request and only let the model write text the grammar allows. The grammar here is
tighter than the JSON schema the ``openai`` planner sends elsewhere: each action has its own arity
(``[End]``, ``[Go to, x]``, ``[Put, x, y]``), the model is one of those able to run that action (``null``
for End and Ask), the analysis and the targets are bounded in length so a small model cannot ramble
past ``max_tokens``, and, given ``names``, targets are chosen among them. Every answer is then one JSON
object that ``homiebot.core.parsing`` reads.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from homiebot.core.contracts import NO_MODEL_ACTIONS, Action

ANALYSIS_CHARS = 240  # a few sentences
TARGET_CHARS = 40  # object, place and room names are short
QUESTION_CHARS = 120


def literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def json_literal(value: str | None) -> str:
    """The JSON encoding of ``value`` (a string, or null), as a GBNF literal."""
    return literal(json.dumps(value))


def _arity(action: str) -> int:
    if action == Action.END.value:
        return 0
    return 2 if action == Action.PUT.value else 1


def subtask_grammar(actions: Sequence[str], models: Mapping[str, Sequence[str]], names: Sequence[str] = (),
                    analysis_chars: int = ANALYSIS_CHARS, target_chars: int = TARGET_CHARS) -> str:
    """The GBNF grammar of ``{"analysis": "...", "subtask": [...], "model": ...}``.

    ``models`` maps each action to the model names able to run it (an action no model runs, other than
    End and Ask, is left out); ``names``: what targets may be (free text when empty).
    """
    no_model = {a.value for a in NO_MODEL_ACTIONS}
    rules = [
        'root ::= "{" ws "\\"analysis\\":" ws "\\"" analysis "\\"," ws "\\"subtask\\":" ws decision ws "}"',
        "ws ::= \" \"?",
        f"analysis ::= char{{0,{analysis_chars}}}",
        'char ::= [^"\\\\\\x00-\\x1f]',
        f'free ::= "\\"" [^"\\\\\\x00-\\x1f,\\[\\]]{{1,{target_chars}}} "\\""',
        f'question ::= "\\"" char{{1,{QUESTION_CHARS}}} "\\""',
        "target ::= " + (" | ".join(json_literal(n) for n in sorted(set(names))) if names else "free"),
    ]
    choices = []
    for action in actions:
        runners = list(models.get(action, ()))
        if action not in no_model and not runners:
            continue
        if action == Action.ASK.value:
            args = ["question"]
        else:
            args = ["target"] * _arity(action)
        parts = [literal("[") + " " + json_literal(action)] + [f'"," ws {a}' for a in args]
        model = json_literal(None) if action in no_model else "(" + " | ".join(json_literal(m) for m in runners) + ")"
        choices.append(" ".join(parts) + ' "]," ws "\\"model\\":" ws ' + model)
    rules.insert(1, "decision ::= " + " | ".join(f"( {c} )" for c in choices))
    return "\n".join(rules) + "\n"
