"""``MapText``: the semantic map in words, for planner prompts and grounding messages."""

from __future__ import annotations

from homiebot.core.rooms import RoomPrior
from homiebot.perception.instance_store import InstanceStore
from homiebot.perception.map_instance import MapInstance
from homiebot.perception.vocabulary import relation_of


class MapText:
    """Describes the instances of ``store`` and where they are, by the rooms of the floor plan."""

    def __init__(self, store: InstanceStore, rooms: list[RoomPrior]) -> None:
        self.store = store
        self.rooms = rooms

    def where(self, inst: MapInstance) -> str:
        """'on the brown table_1 (kitchen)' / 'in the robot's gripper' / 'in the kitchen'."""
        if inst.held:
            return "in the robot's gripper"
        room = f" ({inst.room})" if inst.room else ""
        sup = self.store.find(inst.support) if inst.support else None
        if sup is not None:
            return f"{inst.relation} the {sup.phrase()} {sup.id}{room}"
        if inst.relation == "floor":
            return f"on the floor{room}"
        return f"in the {inst.room}" if inst.room else "somewhere"

    def description(self, inst: MapInstance) -> str:
        """One line for prompts and grounding messages, e.g. 'white mug mug_1 on the white desk desk_1 (bedroom)'."""
        state = ""
        if inst.articulated and inst.is_open is not None:
            state = ", open" if inst.is_open else ", closed"
        if inst.kind == "receptacle":
            return f"{inst.phrase()} {inst.id}{state}" + (f" ({inst.room})" if inst.room else "")
        stale = f" (last seen in round {inst.last_seen}, not there any more)" if inst.stale else ""
        return f"{inst.phrase()} {inst.id} {self.where(inst)}{stale}"

    def describe(self, max_lines: int = 40) -> str:
        """Short text of what the robot has seen, by room, for planner prompts."""
        lines = []
        by_room: dict[str, list[MapInstance]] = {}
        for inst in self.store.instances(include_stale=True):
            by_room.setdefault(inst.room or "unknown room", []).append(inst)
        for room in [r.name for r in self.rooms] + ["unknown room"]:
            items = by_room.get(room)
            if not items:
                continue
            recs = [i for i in items if i.kind == "receptacle"]
            parts = []
            for rec in recs:
                contents = [o for o in self.store.instances() if o.support == rec.id]
                state = "" if rec.is_open is None or not rec.articulated else (" (open)" if rec.is_open else " (closed)")
                inner = f": {', '.join(f'{o.phrase()} {o.id}' for o in contents)} {relation_of(rec.label) or 'on'} it" if contents else ""
                parts.append(f"{rec.phrase()} {rec.id}{state}{inner}")
            loose = [o for o in items if o.kind == "object" and (o.support is None or o.stale) and not o.held]
            parts += [self.description(o).replace(f" ({room})", "") for o in loose]
            lines.append(f"{room}: " + "; ".join(parts))
        held = self.store.held()
        if held is not None:
            lines.append(f"holding: {held.phrase()} {held.id}")
        if not lines:
            return "Nothing seen yet."
        return "\n".join(lines[:max_lines])
