"""Demonstration scripts (what a teleoperator does, step by step), and examples in the demo home (config/tasks/demo.yaml's scene): personal places
for things, each with paraphrased instructions that refer to one of its steps (for retrieval)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from homiebot.core.contracts import Subtask


class ScriptStep(BaseModel):
    """One subtask of a demonstration script and what the operator says with it."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    action: str
    target: str | None = None
    place: str | None = None
    model: str
    say: str | None = None
    remark: str | None = None

    def subtask(self) -> Subtask:
        return Subtask(action=self.action, target=self.target, place=self.place)  # type: ignore[arg-type]


class Script(BaseModel):
    """A scripted demonstration in the home of ``task`` (a task file: its scene is the home)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    task: str
    user: str = "default"
    steps: list[ScriptStep] = Field(min_length=1)
    queries: list[tuple[str, int]] = Field(default_factory=list)  # paraphrased instruction, index of the step it refers to


HOME_TASK = "tasks/demo.yaml"


def _s(action: str, target: str | None, model: str, place: str | None = None, say: str | None = None,
       remark: str | None = None) -> ScriptStep:
    return ScriptStep(action=action, target=target, place=place, model=model, say=say, remark=remark)


SCRIPTS: dict[str, Script] = {s.id: s for s in (
    Script(id="cereal", task=HOME_TASK, steps=[
        _s("Go to", "kitchen_cabinet", "NoMaD", say="let me show you my breakfast routine"),
        _s("Open", "kitchen_cabinet", "octo"),
        _s("Pick", "yellow_cereal_box", "RT-1-X", say="the cereal is kept in the kitchen cabinet"),
        _s("Go to", "kitchen_counter", "NoMaD"),
        _s("Put", "yellow_cereal_box", "RT-1-X", place="kitchen_counter", remark="this is where the cereal goes in the morning"),
    ], queries=[("where does the cereal go for breakfast", 4), ("where do I keep the cereal box", 2),
             ("get the breakfast cereal out like I do every morning", 4)]),
    Script(id="toys", task=HOME_TASK, steps=[
        _s("Go to", "red_toy_block", "PixNav", say="toys never stay on the floor"),
        _s("Pick", "red_toy_block", "RT-1-X"),
        _s("Go to", "drawer", "NoMaD"),
        _s("Open", "drawer", "octo", say="the toy blocks belong in the bedroom drawer"),
        _s("Put", "red_toy_block", "RT-1-X", place="drawer"),
        _s("Close", "drawer", "octo"),
    ], queries=[("put the toy away like I showed you", 4), ("where do the building blocks belong", 4),
             ("pick up the toy lying on the floor", 1)]),
    Script(id="remote", task=HOME_TASK, steps=[
        _s("Go to", "black_remote", "PixNav"),
        _s("Pick", "black_remote", "RT-1-X", say="I always take the remote with me"),
        _s("Go to", "blue_sofa", "NoMaD"),
        _s("Put", "black_remote", "RT-1-X", place="blue_sofa", say="I like the remote on the sofa next to me"),
    ], queries=[("bring the tv remote to where I sit", 3), ("where do I like the remote control", 3)]),
    Script(id="mug", task=HOME_TASK, steps=[
        _s("Go to", "white_mug", "PixNav", say="after working I clear my desk"),
        _s("Pick", "white_mug", "RT-1-X"),
        _s("Go to", "kitchen_sink", "NoMaD"),
        _s("Put", "white_mug", "RT-1-X", place="kitchen_sink", say="dirty mugs go in the kitchen sink"),
    ], queries=[("what should happen to a used cup", 3), ("take the cup off my desk", 1)]),
)}
