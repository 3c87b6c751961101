"""Homes and tasks generated from a seed: same seed, same home, on every machine.

Rooms form a 2x2 or 2x3 grid with doorways between neighbours; furniture stands against the walls
facing into the room, keeping doorways and its own front clear; objects are scattered over the
receptacles. ``generate_task`` adds an instruction with a goal that needs the robot to move an
object, often between rooms and often into a closed container.
"""

from __future__ import annotations

import math
import random

from homiebot.core.tasks import Condition, ContainerState, ObjectAt, Task
from homiebot.worlds.home.catalog import DOOR_WIDTH, OBJECT_CLASSES, RECEPTACLE_TYPES, ROOM_TYPES, WALL_THICKNESS
from homiebot.worlds.home.layout import Receptacle, _rects_overlap, build_layout
from homiebot.worlds.home.scene import ObjectSpec, ReceptacleSpec, RobotSpec, RoomSpec, SceneError, SceneSpec, scene_json
from homiebot.worlds.home.state import HomeState

OPTIONAL_ROOMS = ("bedroom", "bathroom", "dining_room", "office")
FRONT_CLEARANCE = 1.0  # free floor in front of furniture so the robot can stand there
CORNER_CLEARANCE = 0.5  # minimum distance from a furniture centre to a side wall
COLOR_NAMED = ("table", "sofa", "desk", "bed", "chair", "shelf")  # named like "brown_table"


def _rooms(rng: random.Random) -> list[RoomSpec]:
    cols = rng.choice((2, 3))
    types = ["kitchen", "living_room"] + rng.sample(OPTIONAL_ROOMS, 2 * cols - 2)
    rng.shuffle(types)
    widths = [round(rng.uniform(4.0, 5.5), 1) for _ in range(cols)]
    depths = [round(rng.uniform(4.0, 5.0), 1) for _ in range(2)]
    rooms = []
    for k, rtype in enumerate(types):
        row, col = divmod(k, cols)
        rooms.append(RoomSpec(name=rtype, type=rtype, origin=(sum(widths[:col]), sum(depths[:row])), size=(widths[col], depths[row])))
    return rooms


def _door_points(rooms: list[RoomSpec]) -> list[tuple[float, float]]:
    spec = SceneSpec(rooms=rooms, receptacles=[], robot=RobotSpec(position=(rooms[0].origin[0] + 1, rooms[0].origin[1] + 1)))
    return [p for _, _, p in build_layout(spec).doors]


def _try_place(rtype: str, room: RoomSpec, placed: list[Receptacle], doors: list[tuple[float, float]], rng: random.Random) -> Receptacle | None:
    depth, width, _ = RECEPTACLE_TYPES[rtype].size
    x0, y0 = room.origin
    x1, y1 = x0 + room.size[0], y0 + room.size[1]
    inset = WALL_THICKNESS / 2 + 0.03 + depth / 2
    for _ in range(40):
        side = rng.choice(("south", "north", "west", "east"))
        edge = max(width / 2 + 0.1, CORNER_CLEARANCE)  # the base must fit in front, beside the side wall
        if side in ("south", "north"):
            along = rng.uniform(x0 + edge, x1 - edge)
            pos = (along, y0 + inset) if side == "south" else (along, y1 - inset)
            yaw = 90.0 if side == "south" else -90.0
        else:
            along = rng.uniform(y0 + edge, y1 - edge)
            pos = (x0 + inset, along) if side == "west" else (x1 - inset, along)
            yaw = 0.0 if side == "west" else 180.0
        rec = Receptacle("candidate", RECEPTACLE_TYPES[rtype], room.name, round(pos[0], 3), round(pos[1], 3), math.radians(yaw), "white")
        # the receptacle plus the floor in front of it must stay clear of other furniture and doorways
        hx, hy, _ = rec.half
        reach = FRONT_CLEARANCE + (0.35 if rec.type.articulated else 0.0)
        zone = Receptacle("zone", rec.type, room.name, *rec.to_world(reach / 2, 0.0), rec.yaw, "white")
        zone_half = (hx + reach / 2, hy + 0.15)
        if any(_overlap_zone(zone, zone_half, other) for other in placed):
            continue
        if any(min(math.dist(c, d) for c in rec.corners() + [rec.front_point(0.5)]) < DOOR_WIDTH / 2 + 0.6 for d in doors):
            continue
        return rec
    return None


def _overlap_zone(zone: Receptacle, half: tuple[float, float], other: Receptacle) -> bool:
    from dataclasses import replace

    grown = replace(zone.type, size=(2 * half[0], 2 * half[1], zone.type.size[2]))
    other_zone = replace(other.type, size=(other.type.size[0] + 0.1, other.type.size[1] + 0.1, other.type.size[2]))
    return _rects_overlap(replace(zone, type=grown), replace(other, type=other_zone))


def _name(rtype: str, color: str, room: str, used: set[str]) -> str:
    options = [f"{color}_{rtype}"] if rtype in COLOR_NAMED else [rtype]
    options += [f"{room}_{rtype}", f"{color}_{room}_{rtype}"] + [f"{rtype}_{k}" for k in range(2, 10)]
    return next(o for o in options if o not in used)


def generate_scene(seed: int) -> SceneSpec:
    """A random but valid home for ``seed`` (deterministic)."""
    for attempt in range(20):
        rng = random.Random(f"home:{seed}:{attempt}")
        try:
            return _generate(seed, rng)
        except SceneError:
            continue
    raise SceneError(f"could not generate a valid home for seed {seed}")


def _generate(seed: int, rng: random.Random) -> SceneSpec:
    rooms = _rooms(rng)
    doors = _door_points(rooms)
    placed: list[Receptacle] = []
    recs: list[ReceptacleSpec] = []
    used: set[str] = set()
    for room in rooms:
        rt = ROOM_TYPES[room.type]
        wanted = list(rt.must) + rng.sample(rt.may, rng.randint(1, min(2, len(rt.may))))
        for rtype in wanted:
            rec = _try_place(rtype, room, placed, doors, rng)
            if rec is None:
                if rtype in rt.must:
                    raise SceneError(f"no room for a {rtype} in the {room.name}")
                continue
            color = rng.choice(RECEPTACLE_TYPES[rtype].colors)
            name = _name(rtype, color, room.type, used)
            used.add(name)
            placed.append(rec)
            is_open = RECEPTACLE_TYPES[rtype].articulated and rng.random() < 0.2
            recs.append(ReceptacleSpec(name=name, type=rtype, room=room.name, position=(rec.x, rec.y),
                                       yaw=round(math.degrees(rec.yaw), 1), color=color, open=is_open))
    objects: list[ObjectSpec] = []
    load = {r.name: 0 for r in recs}
    for _ in range(rng.randint(8, 13)):
        cls = rng.choice(sorted(OBJECT_CLASSES))
        color = rng.choice(OBJECT_CLASSES[cls].colors)
        name = f"{color}_{cls}"
        if name in used:
            continue
        free = [r for r in recs if load[r.name] < min(3, RECEPTACLE_TYPES[r.type].capacity)
                and RECEPTACLE_TYPES[r.type].fits(OBJECT_CLASSES[cls])]
        target = rng.choice(free)
        load[target.name] += 1
        used.add(name)
        where = {"in": target.name} if RECEPTACLE_TYPES[target.type].relation == "in" else {"on": target.name}
        objects.append(ObjectSpec.model_validate({"name": name, "class": cls, "color": color, **where}))
    spec = SceneSpec(name=f"home_{seed}", seed=seed, rooms=rooms, receptacles=recs, objects=objects,
                     robot=RobotSpec(position=rooms[0].origin))
    return _with_robot(spec, rng.choice(rooms), rng)


def _with_robot(spec: SceneSpec, room: RoomSpec, rng: random.Random) -> SceneSpec:
    """Place the robot on a free, reachable spot of ``room`` and validate the whole scene."""
    probe = spec.model_copy(update={"robot": RobotSpec(position=(room.origin[0] + room.size[0] / 2, room.origin[1] + room.size[1] / 2))})
    layout = build_layout(probe)
    from homiebot.worlds.home.navigation import NavigationMap, Pose2D

    nav = NavigationMap(layout)
    poses = nav.free_poses_in_room(layout.rooms[room.name], limit=200)
    if not poses:
        raise SceneError(f"no free floor in the {room.name}")
    pose = rng.choice(poses)
    spec = spec.model_copy(update={"robot": RobotSpec(position=(round(pose.x, 3), round(pose.y, 3)), yaw=float(rng.choice((0, 90, 180, -90))))})
    state = HomeState.from_spec(spec)  # raises SceneError if objects do not fit
    start = Pose2D(state.robot.x, state.robot.y, state.robot.yaw)
    assert state.nav is not None  # from_spec builds the navigation map
    for rec in state.layout.receptacles:
        if state.nav.plan(start, state._goal_poses(rec)) is None:
            raise SceneError(f"the {rec} cannot be reached from the robot's start")
    return spec


def _phrase(name: str) -> str:
    return name.replace("_", " ")


def generate_task(seed: int, scene: SceneSpec | None = None) -> Task:
    """A task in the home of ``seed``: move an object somewhere else, often into a closed container."""
    scene = scene or generate_scene(seed)
    rng = random.Random(f"task:{seed}")
    rooms_of = {r.name: r.room for r in scene.receptacles}
    obj = rng.choice(scene.objects)
    here = obj.receptacle
    options = [r for r in scene.receptacles if r.name != here and RECEPTACLE_TYPES[r.type].fits(OBJECT_CLASSES[obj.object_class])]
    closed = [r for r in options if RECEPTACLE_TYPES[r.type].articulated and not r.open]
    here_room = rooms_of.get(here) if here is not None else None
    other_room = [r for r in options if r.room != here_room]
    pool = closed if closed and rng.random() < 0.5 else (other_room or options)
    dest = rng.choice(pool)
    rel = RECEPTACLE_TYPES[dest.type].relation
    verb = rng.choice(("put", "place", "move", "bring"))
    prep = {"in": rng.choice(("in", "into")), "on": rng.choice(("on", "onto"))}[rel]
    if verb == "bring":
        prep = "to"
    instruction = f"{verb} the {_phrase(obj.name)} {prep} the {_phrase(dest.name)}"
    goal: list[Condition] = [ObjectAt(object=obj.name, receptacle=dest.name)]
    if RECEPTACLE_TYPES[dest.type].articulated and rng.random() < 0.3:
        instruction += " and close it afterwards"
        goal.append(ContainerState(receptacle=dest.name, open=False))
    return Task(id=f"gen{seed}", instruction=instruction, scene=scene_json(scene), goal=goal)
