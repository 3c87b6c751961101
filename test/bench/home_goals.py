"""A check the hand-written suites share: a task's goal names what its inline home has."""

from __future__ import annotations

from homiebot.core.tasks import ContainerState, ObjectAt, Task, check_goal_names
from homiebot.core.vocabulary import RECEPTACLE_TYPES
from homiebot.worlds.home.scene import parse_scene


def assert_goal_fits_home(task: Task, fewest: int = 1) -> None:
    """Every name of the goal is in the home, an "any X" goal leaves at least ``fewest`` Xs to choose from,
    and a container to open or shut has a door."""
    scene = parse_scene(task.scene, task.id)
    recs = {r.name: r for r in scene.receptacles}
    objs = {o.name: o for o in scene.objects}
    check_goal_names(task, set(recs) | set(objs) | {r.name for r in scene.rooms})
    for cond in task.goal or []:
        if isinstance(cond, ObjectAt) and cond.object_class is not None:
            members = [o for o in objs.values() if o.object_class == cond.object_class]
            assert len(members) >= fewest, f"{task.id}: fewer than {fewest} {cond.object_class} in the home"
        if isinstance(cond, ContainerState):
            assert RECEPTACLE_TYPES[recs[cond.receptacle].type].articulated, f"{task.id}: {cond.receptacle} has no door"
