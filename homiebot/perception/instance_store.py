"""``InstanceStore``: the semantic map's instances by id, in creation order, and the ids they get.

Ids are ``<label>_<n>`` with ``n`` counting per label over the map's life, so an id is never reused
for another thing after its instance was dropped. Order matters: prompts, summaries and the
episode records list instances in this order (a relabelled instance moves to the end).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from homiebot.perception.map_instance import MapError, MapInstance
from homiebot.perception.map_settings import MapSettings


class InstanceStore:
    """The instances of one map; ``settings.min_sightings`` decides which are confirmed."""

    def __init__(self, settings: MapSettings) -> None:
        self.settings = settings
        self._instances: dict[str, MapInstance] = {}
        self._counters: Counter = Counter()

    def __contains__(self, instance_id: object) -> bool:
        return instance_id in self._instances

    def __iter__(self) -> Iterator[MapInstance]:
        return iter(self._instances.values())

    def all(self) -> list[MapInstance]:
        """Every instance, stale and unconfirmed ones too (a copy: safe to drop instances while walking it)."""
        return list(self._instances.values())

    def find(self, instance_id: str) -> MapInstance | None:
        """The instance with this id, or None."""
        return self._instances.get(instance_id)

    def is_confirmed(self, inst: MapInstance) -> bool:
        """Seen in enough updates to count (or in the gripper)."""
        return inst.times_seen >= self.settings.min_sightings or inst.held

    def instances(self, confirmed: bool = True, include_stale: bool = False) -> list[MapInstance]:
        """Instances in creation order; by default only confirmed, non-stale ones."""
        return [i for i in self._instances.values()
                if (not confirmed or self.is_confirmed(i)) and (include_stale or not i.stale)]

    def get(self, instance_id: str) -> MapInstance:
        """The instance with this id (MapError listing the known ids otherwise)."""
        inst = self._instances.get(instance_id)
        if inst is None:
            known = ", ".join(i.id for i in self.instances()) or "none yet"
            raise MapError(f"no map instance '{instance_id}'; known instances: {known}")
        return inst

    def held(self) -> MapInstance | None:
        """The instance the robot holds, if any."""
        return next((i for i in self._instances.values() if i.held), None)

    def new_id(self, label: str) -> str:
        """The next unused id for ``label``."""
        self._counters[label] += 1
        iid = f"{label}_{self._counters[label]}"
        while iid in self._instances:
            self._counters[label] += 1
            iid = f"{label}_{self._counters[label]}"
        return iid

    def add(self, inst: MapInstance) -> None:
        """Keep a new instance (its id from ``new_id``)."""
        self._instances[inst.id] = inst

    def remove(self, instance_id: str) -> None:
        """Forget an instance."""
        del self._instances[instance_id]

    def relabel(self, inst: MapInstance, label: str) -> None:
        """An instance takes another label (a detector confused it at first) and a matching id."""
        del self._instances[inst.id]
        inst.label, inst.id = label, self.new_id(label)
        self._instances[inst.id] = inst
