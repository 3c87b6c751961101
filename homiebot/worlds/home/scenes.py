"""The embedded home's ``SceneSource``: scene YAML files, inline scenes, generated homes, truth mirrors."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from homiebot.core.scenes import NoScene
from homiebot.core.tasks import SceneSource, Task, TaskError, goal_from_instruction
from homiebot.core.yamlio import format_validation_error
from homiebot.worlds.home.generate import generate_scene, generate_task
from homiebot.worlds.home.scene import SceneError, SceneSpec, _unbool_on_keys, load_scene, parse_scene, scene_json
from homiebot.worlds.home.state import HomeState


class HomeScenes(SceneSource):
    """Scenes of the embedded home (``SceneSpec``)."""

    mirrors_truth = True

    def load(self, task: Task) -> SceneSpec:
        spec = self._load_scene(task)
        if task.person is None and task.explore is None:
            return spec
        # the task's person joins (or replaces the one of) its scene, validated against that scene's names;
        # its exploration phase travels with the scene to the world that runs it
        extra = {"person": task.person} if task.person is not None else {}
        if task.explore is not None:
            extra["explore"] = task.explore.model_dump()
        return parse_scene({**scene_json(spec), **extra}, f"task '{task.id}'")

    @staticmethod
    def _load_scene(task: Task) -> SceneSpec:
        if task.scene is not None:
            return parse_scene(task.scene, f"task '{task.id}'")
        if task.scene_file is not None:
            return load_scene(task.scene_file)
        if task.scene_seed is None:
            raise NoScene(f"task '{task.id}' names no scene; the embedded home needs one (scene, scene_file or scene_seed)")
        return generate_scene(task.scene_seed)

    def names(self, scene: SceneSpec) -> set[str]:
        person = [scene.person.name] if scene.person is not None else []
        return {*(r.name for r in scene.rooms), *(r.name for r in scene.receptacles), *(o.name for o in scene.objects), *person}

    def to_json(self, scene: SceneSpec) -> dict[str, Any]:
        return scene_json(scene)

    def from_json(self, data: Any, where: str = "") -> SceneSpec:
        if isinstance(data, SceneSpec):
            return data
        if not isinstance(data, dict):
            raise SceneError(f"{where or 'scene'}: a scene must be a mapping with rooms, receptacles, objects and robot")
        try:
            return SceneSpec.model_validate(_unbool_on_keys(data))
        except ValidationError as err:
            raise SceneError(f"invalid scene\n{format_validation_error(err, where)}") from None

    def task_for(self, instruction: str | None, scene: str) -> Task:
        """A seed gives a generated home (and, without an instruction, its generated task); otherwise
        ``scene`` is a YAML file. The goal is read from the instruction when it has a simple form, so
        that the oracle can plan it and success is checked."""
        if scene.lstrip("-").isdigit():
            seed = int(scene)
            if instruction is None:
                return generate_task(seed)
            spec = generate_scene(seed)
        else:
            spec = load_scene(scene)
            if instruction is None:
                raise TaskError("give an instruction when the scene is a file, e.g. homiebot run \"put the red apple in the fridge\" --scene FILE")
        objects = {o.name: o.object_class for o in spec.objects}
        goal = goal_from_instruction(instruction, objects, {r.name for r in spec.receptacles}, {r.name for r in spec.rooms})
        return Task(id=spec.name, instruction=instruction, scene=scene_json(spec), goal=goal)

    def truth_mirror(self, scene: SceneSpec) -> HomeMirror:
        return HomeMirror(scene)

    def mirror_hints(self, mirror: HomeMirror) -> Any:
        from homiebot.worlds.home.mapping import MirrorHints  # perception modules only when mapping

        return MirrorHints(mirror)


class HomeMirror:
    """The home's state in another process (a privileged planner's), following the world node's
    through ``apply_dynamic``; ``reset`` puts it back to the scene's initial state."""

    def __init__(self, scene: SceneSpec) -> None:
        self.scene = scene
        self.state = HomeState.from_spec(scene)
        self._initial = self.state.dynamic()

    def reset(self) -> None:
        self.state.apply_dynamic(self._initial)  # the mirror only ever changes through apply_dynamic

    def apply_dynamic(self, dynamic: dict) -> None:
        self.state.apply_dynamic(dynamic)


HOME_SCENES = HomeScenes()

__all__ = ["HOME_SCENES", "HomeMirror", "HomeScenes"]
