"""Planner prompts: the instructions (system text) and the per-round message, in homiebot's words.

``PromptBuilder`` writes both from the installed models (name and what each is good at), in one of
two output formats: ``json`` (default) or ``text`` (the EMMOE ``Analysis: / Subtask: / Model:`` form).
A template file can replace either part, to match the prompt a fine-tuned model was trained on; it is
YAML with ``system`` and/or ``user`` keys whose ``$placeholders`` are filled in:
``$actions $models $model_names $format`` (system) and ``$task $inventory $history $feedback $round`` (user).
``template: compact`` names the built-in short prompt instead of a file (``COMPACT``): a few lines of
system text and terse headings, about a third of the default's tokens, for small models fine-tuned on it.

For a model without vision (``vision=False``) the role speaks of a description of the four views
instead of images, and the user text carries that description (``$views``), written from perception's
detections by ``homiebot.planners.view_text``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from string import Template
from typing import Literal

from homiebot.core.contracts import Feedback, offered_actions
from homiebot.core.yamlio import read_yaml

OutputFormat = Literal["json", "text"]

ROLE = """You control a one-armed household robot and decide, one step at a time, what it does next.
Each round you receive:
- $seeing
- the task to accomplish;
- the inventory: what the robot holds. It has one hand: it cannot Pick, Open or Close while holding something, and it can only Put when holding something;
- the history of earlier subtasks, each marked success or fail;
- feedback explaining why the last subtask failed (None if it succeeded)."""

FORMATS = {
    "json": ('Answer with the single next subtask, never a whole plan, as one JSON object:\n'
             '{"analysis": "<what you see, what happened so far, and why this step comes next>", '
             '"subtask": ["<action>", "<target>"], "model": "<model>"}\n'
             'Put takes an object and a place: ["Put", "<object>", "<place>"]. When the task is complete answer '
             '{"analysis": "...", "subtask": ["End"], "model": null}.$ask'),
    "text": ("Answer with the single next subtask, never a whole plan, in exactly three lines:\n"
             "Analysis: <what you see, what happened so far, and why this step comes next>\n"
             "Subtask: [<action>, <target>]   (Put takes an object and a place: [Put, <object>, <place>])\n"
             "Model: <model>\n"
             "When the task is complete answer Subtask: [End] and Model: None.$ask"),
}

SEEING = {True: "four camera images taken from the robot, in the order front, left, back, right;",
          False: ("what the robot's four cameras (front, left, back, right) detect: each thing's name, its distance, and "
                  "the room it is in or what it rests on;")}

RULES = """Only refer to things you can see or have seen. Go next to something before handling it, open a container
before you pick up what goes inside it, and pay attention to the feedback: it says what to fix."""

ASK = {"json": ('\nWhen the task is ambiguous (which of several things, where to, what the person prefers), ask before acting: '
               '{"analysis": "...", "subtask": ["Ask", "<one short question>"], "model": null}. Asking costs a round; the '
               'answer comes back as the feedback. Ask only what you need.'),
       "text": ("\nWhen the task is ambiguous (which of several things, where to, what the person prefers), ask before "
                "acting: Subtask: [Ask, <one short question>] and Model: None. Asking costs a round; the answer comes back "
                "as the feedback. Ask only what you need.")}

DEFAULT_SYSTEM = "$role\n\nActions: $actions.\nModels: $models.\n\n$format\n\n$rules"
DEFAULT_USER = "Task: $task\nInventory: $inventory\nHistorical Execution:\n$history\nFeedback: $feedback\n" \
               "Now output the analysis, the next subtask and the model."
DEFAULT_USER_TEXT = "Task: $task\nWhat the cameras see:\n$views\nInventory: $inventory\nHistorical Execution:\n$history\n" \
                    "Feedback: $feedback\nNow output the analysis, the next subtask and the model."

# the built-in short prompt (``template: compact``): a fine-tuned model learns the rules from its data, so
# its system text only names what it may answer; the per-round text keeps every field, with short headings
COMPACT_FORMATS = {
    "json": ('Answer the next step as JSON: {"analysis": "...", "subtask": ["<action>", "<target>"], "model": "<model>"}. '
             'Put: ["Put", "<object>", "<place>"]. Done: ["End"], model null.$ask'),
    "text": "Answer the next step as: Analysis: ... / Subtask: [<action>, <target>] / Model: <model>. "
            "Put: [Put, <object>, <place>]. Done: [End], Model: None.$ask",
}
COMPACT_ASK = {"json": ' Unclear request: ["Ask", "<question>"], model null.', "text": " Unclear request: [Ask, <question>], Model: None."}
COMPACT_SYSTEM = "You plan a one-armed home robot's next step.\nActions: $actions.\nModels: $model_names.\n$compact_format"
COMPACT_USER = "Task: $task\nHolding: $inventory\nDone:\n$history\nFeedback: $feedback"
COMPACT_USER_TEXT = "Task: $task\nSeen:\n$views\nHolding: $inventory\nDone:\n$history\nFeedback: $feedback"
COMPACT = "compact"


class PromptError(ValueError):
    """A prompt template file that cannot be used."""


def history_line(index: int, subtask_text: str, model: str | None, success: bool) -> str:
    """One line of execution history, e.g. ``(3) [Pick, green_can] (RT-1-X) (success)``."""
    return f"({index}) {subtask_text} ({model or 'None'}) ({'success' if success else 'fail'})"


class PromptBuilder:
    """Builds the system text and the per-round user text for one set of models."""

    def __init__(self, models: Sequence[tuple[str, str]], output_format: OutputFormat = "json",
                 template_file: str | Path | None = None, actions: Sequence[str] | None = None, vision: bool = True) -> None:
        """``actions``: what the planner may choose (default: the EMMOE actions); ``vision``: False for a model
        that is told what the views show in words instead of seeing them."""
        if output_format not in FORMATS:
            raise PromptError(f"unknown output format '{output_format}'; choose json or text")
        self.models = list(models)
        self.actions = list(actions) if actions is not None else offered_actions([])
        self.output_format = output_format
        self.vision = vision
        self.system_template, self.user_template = DEFAULT_SYSTEM, DEFAULT_USER if vision else DEFAULT_USER_TEXT
        if template_file is not None and str(template_file) == COMPACT:
            self.system_template, self.user_template = COMPACT_SYSTEM, COMPACT_USER if vision else COMPACT_USER_TEXT
        elif template_file is not None:
            self._load(Path(template_file))

    def _load(self, path: Path) -> None:
        data = read_yaml(path, "prompt template", PromptError)
        if not isinstance(data, dict) or not ({"system", "user"} & set(data)) or set(data) - {"system", "user"}:
            raise PromptError(f"{path}: a prompt template is a mapping with 'system' and/or 'user' text")
        for key in ("system", "user"):
            if key in data:
                if not isinstance(data[key], str):
                    raise PromptError(f"{path}: '{key}' must be text")
                setattr(self, f"{key}_template", data[key])

    def system(self) -> str:
        """The instructions: role, views, one-hand rule, actions, models, output format."""
        listed = "; ".join(f"{name} ({desc})" if desc else name for name, desc in self.models)
        ask = ASK[self.output_format] if "Ask" in self.actions else ""
        fmt = Template(FORMATS[self.output_format]).safe_substitute(ask=ask)
        compact_ask = COMPACT_ASK[self.output_format] if "Ask" in self.actions else ""
        return Template(self.system_template).safe_substitute(
            role=Template(ROLE).safe_substitute(seeing=SEEING[self.vision]), actions=", ".join(self.actions), models=listed,
            model_names=", ".join(name for name, _ in self.models), format=fmt, rules=RULES,
            compact_format=Template(COMPACT_FORMATS[self.output_format]).safe_substitute(ask=compact_ask))

    def user(self, instruction: str, inventory: Sequence[str], history: Sequence[str], feedback: Feedback | None,
             round_index: int = 0, views: str | None = None, memories: Sequence[str] = ()) -> str:
        """The message that accompanies the four images in one round (``views``: their description, for a model
        without vision; ``memories``: captions of demonstration segments recalled for the task, best first,
        put where the template says ``$memories`` or else after the task line)."""
        shown = memory_section(memories)
        text = self.render_user({
            "task": instruction, "views": views if views is not None else "not described",
            "inventory": ", ".join(inventory) if inventory else "None", "history": "\n".join(history) if history else "None",
            "feedback": "None" if feedback is None or (feedback.success and "answer" not in feedback.details) else feedback.message,
            "round": str(round_index), "memories": shown})
        if not shown or "$memories" in self.user_template:
            return text
        first, _, rest = text.partition("\n")
        return f"{first}\n{shown}\n{rest}" if rest else f"{first}\n{shown}"

    def render_user(self, fields: dict[str, str]) -> str:
        """The user template filled with already written fields (``task``, ``views``, ``inventory``,
        ``history``, ``feedback``, ``round``, ``memories``): how a recorded round is rewritten in another template."""
        return Template(self.user_template).safe_substitute(fields)


def memory_section(captions: Sequence[str]) -> str:
    """The prompt's "What you were shown before" section: one line per recalled demonstration segment
    (empty without any)."""
    if not captions:
        return ""
    return "What you were shown before (recalled demonstrations, closest to the task first):\n" + \
        "\n".join(f"- {c}" for c in captions)
