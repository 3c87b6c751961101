"""Records rewritten in the built-in short prompt (``template: compact``) before training.

An export holds each round's prompt in the default template (text-only records: the text planner's
system text, and the user text with ``What the cameras see:``). ``train --prompt compact`` reads the
fields back out of that text and writes them again with ``PromptBuilder(template="compact")``, the
same code the ``trained`` planner prompts with, so the words trained on are the words planned with,
at about a third of the tokens (faster training and planning on a CPU).
"""

from __future__ import annotations

import re
from typing import Any

from homiebot.core.prompting import COMPACT, DEFAULT_USER_TEXT, PromptBuilder

PROMPTS = ("default", COMPACT)

# DEFAULT_USER_TEXT read backwards: each $field between its fixed neighbours
_USER = re.compile("^" + re.escape(DEFAULT_USER_TEXT).replace(r"\$task", "(?P<task>[^\n]*)").replace(
    r"\$views", "(?P<views>.*?)").replace(r"\$inventory", "(?P<inventory>[^\n]*)").replace(
    r"\$history", "(?P<history>.*?)").replace(r"\$feedback", "(?P<feedback>.*)") + "$", re.DOTALL)


def read_text_user(user: str) -> dict[str, str] | None:
    """The fields of a user text written with the default text-only template (None for any other text)."""
    found = _USER.match(user)
    return found.groupdict() if found else None


def read_system(system: str) -> tuple[list[str], list[str]] | None:
    """(actions, model names) listed by a default system text (None when it lists neither)."""
    lines = {line.split(": ", 1)[0]: line.split(": ", 1)[1] for line in system.splitlines() if ": " in line}
    if "Actions" not in lines or "Models" not in lines:
        return None
    actions = [a.strip() for a in lines["Actions"].rstrip(".").split(",") if a.strip()]
    models = [m.split(" (", 1)[0].strip() for m in lines["Models"].rstrip(".").split("; ") if m.strip()]
    return actions, models


def compact_turns(system: str, user: str, output_format: str) -> tuple[str, str] | None:
    """A record's system and user text in the compact template (None when either is not in the default one)."""
    listed, fields = read_system(system), read_text_user(user)
    if listed is None or fields is None:
        return None
    actions, models = listed
    builder = PromptBuilder([(m, "") for m in models], "json" if output_format == "json" else "text", COMPACT,
                            actions=actions, vision=False)
    return builder.system(), builder.render_user(fields)


def to_compact(rows: list[dict[str, Any]], stage: str, output_format: str) -> tuple[list[dict[str, Any]], int]:
    """The rows with their prompt turns rewritten; returns (rows kept, rows left out as not in the default template)."""
    key = "messages" if stage == "sft" else "prompt"
    kept: list[dict[str, Any]] = []
    for row in rows:
        turns = list(row[key])
        roles = [t["role"] for t in turns]
        if roles[:2] != ["system", "user"]:
            continue
        rewritten = compact_turns(turns[0]["content"], turns[1]["content"], output_format)
        if rewritten is None:
            continue
        turns[0] = {"role": "system", "content": rewritten[0]}
        turns[1] = {"role": "user", "content": rewritten[1]}
        kept.append({**row, key: turns})
    return kept, len(rows) - len(kept)
