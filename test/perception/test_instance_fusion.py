"""Fusing sightings into instances and matching sightings to instances, on synthetic point clouds."""

from __future__ import annotations

import numpy as np
import pytest

from homiebot.perception.association import SightingAssociation
from homiebot.perception.instance_fusion import InstanceFusion

from .map_samples import place, sighting, store


@pytest.fixture
def parts() -> tuple[SightingAssociation, InstanceFusion]:
    fusion = InstanceFusion(store())
    return SightingAssociation(fusion.store, fusion), fusion


def test_a_sighting_counts_once_per_update(parts) -> None:
    assoc, fusion = parts
    mug = assoc.new_instance(sighting("mug", (1.0, 1.0, 0.8)), 0)
    assert (mug.id, mug.times_seen, mug.first_seen, mug.colour) == ("mug_1", 1, 0, "white")
    fusion.fuse(mug, sighting("mug", (1.0, 1.0, 0.8), view="left"), 0)
    assert mug.times_seen == 1
    confidence = mug.confidence
    fusion.fuse(mug, sighting("mug", (1.0, 1.0, 0.8)), 1)
    assert mug.times_seen == 2 and mug.last_seen == 1 and mug.confidence > confidence
    assert np.allclose(mug.position, (1.0, 1.0, 0.8), atol=0.02)


def test_the_majority_label_wins(parts) -> None:
    assoc, fusion = parts
    fruit = assoc.new_instance(sighting("lemon", (1.0, 1.0, 0.8)), 0)
    fusion.fuse(fruit, sighting("orange", (1.0, 1.0, 0.8)), 1)
    assert fruit.id == "lemon_1"  # a tie keeps the label
    fusion.fuse(fruit, sighting("orange", (1.0, 1.0, 0.8)), 2)
    assert (fruit.id, fruit.label) == ("orange_1", "orange") and "lemon_1" not in fusion.store


def test_overlapping_duplicates_merge_into_the_older_one(parts) -> None:
    _, fusion = parts
    s = fusion.store
    old = place(s, "table", (0.0, 0.0, 0.0), (1.0, 1.0, 0.7), first_seen=0, last_seen=0)
    new = place(s, "table", (0.5, 0.2, 0.0), (1.2, 0.8, 0.7), first_seen=3, last_seen=3)
    cup = place(s, "cup", (0.9, 0.4, 0.7), (1.0, 0.5, 0.8), support=new.id)
    far = place(s, "table", (5.0, 5.0, 0.0), (6.0, 6.0, 0.7))
    assert fusion.merge_duplicates({new.id}) == [new.id]
    assert new.id not in s and far.id in s and cup.support == old.id
    assert old.times_seen == 3 and old.last_seen == 3


def test_a_drawers_contents_move_with_it(parts) -> None:
    _, fusion = parts
    s = fusion.store
    drawer = place(s, "drawer", (0.0, 0.0, 0.3), (0.5, 0.5, 0.6),
                   open_lo=np.array([0.0, 0.0, 0.3]), open_hi=np.array([0.9, 0.5, 0.6]))
    sponge = place(s, "sponge", (0.2, 0.2, 0.4), (0.3, 0.3, 0.45), support=drawer.id)
    assert np.allclose(InstanceFusion.slide(drawer), (0.4, 0.0, 0.0))
    fusion.move_contents(drawer, True)
    assert np.allclose(sponge.position, (0.65, 0.25, 0.425)) and sponge.voxels.size == 0
    fusion.move_contents(drawer, False)
    assert np.allclose(sponge.position, (0.25, 0.25, 0.425))
    cabinet = place(s, "cabinet", (0.0, 0.0, 0.0), (0.5, 0.5, 0.6), open_lo=drawer.open_lo, open_hi=drawer.open_hi)
    assert InstanceFusion.slide(cabinet) is None  # doors do not carry what is inside


def test_cost_gates_by_group_distance_and_grip(parts) -> None:
    assoc, _ = parts
    lemon = place(assoc.store, "lemon", (0.95, 0.95, 0.75), (1.05, 1.05, 0.85))
    assert assoc.cost(sighting("lemon", (1.1, 1.0, 0.8)), lemon) == pytest.approx(0.1)
    assert assoc.cost(sighting("orange", (1.05, 1.0, 0.8)), lemon) == pytest.approx(0.55)  # same group, close
    assert assoc.cost(sighting("orange", (1.2, 1.0, 0.8)), lemon) is None  # same group, not inside
    assert assoc.cost(sighting("mug", (1.0, 1.0, 0.8)), lemon) is None
    assert assoc.cost(sighting("lemon", (1.5, 1.0, 0.8)), lemon) is None
    lemon.held = True
    assert assoc.cost(sighting("lemon", (1.0, 1.0, 0.8)), lemon) is None


def test_associate_creates_then_matches(parts) -> None:
    assoc, _ = parts
    first = [sighting("mug", (1.0, 1.0, 0.8)), sighting("mug", (3.0, 1.0, 0.8)), sighting("mug", (1.05, 1.0, 0.8), view="left")]
    seen, created, relocated = assoc.associate(first, (0.0, 0.0, 0.0), 0)
    assert created == ["mug_1", "mug_2"] and seen == {"mug_1", "mug_2"} and relocated == []
    seen, created, _ = assoc.associate([sighting("mug", (3.02, 1.0, 0.8))], (0.0, 0.0, 0.0), 1)
    assert seen == {"mug_2"} and created == [] and assoc.store.get("mug_2").times_seen == 2


def test_a_stale_belief_is_relocated_and_the_held_object_is_not_a_new_one(parts) -> None:
    assoc, _ = parts
    mug = place(assoc.store, "mug", (0.95, 0.95, 0.75), (1.05, 1.05, 0.85), stale=True, colour="white", misses=3)
    seen, created, relocated = assoc.associate([sighting("mug", (4.0, 2.0, 0.8))], (3.0, 2.0, 0.0), 5)
    assert relocated == [mug.id] and created == [] and not mug.stale and mug.misses == 0
    assert np.allclose(mug.position, (4.0, 2.0, 0.8), atol=0.02)
    mug.held = True
    assert assoc.associate([sighting("mug", (3.5, 2.0, 0.8))], (3.0, 2.0, 0.0), 6) == (set(), [], [])
