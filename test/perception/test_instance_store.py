"""The semantic map's records, settings and instance store, on their own."""

from __future__ import annotations

import numpy as np
import pytest

from homiebot.perception.map_instance import MapError, pack_voxels, unpack_voxels
from homiebot.perception.map_settings import MapSettings
from homiebot.perception.semantic_map import SemanticMap

from .map_samples import place, store


def test_voxel_keys_round_trip_negative_and_large_indices() -> None:
    keys = np.array([[0, 0, 0], [-5, 7, -1_000_000], [1_000_000, -1, 3]])
    assert np.array_equal(unpack_voxels(pack_voxels(keys)), keys)


def test_fit_box_uses_robust_percentiles_of_the_voxels() -> None:
    s = store()
    inst = place(s, "mug", (0, 0, 0), (1, 1, 1))
    inst.voxels = pack_voxels(np.array([[i, 0, 0] for i in range(101)]))
    inst.fit_box()
    assert inst.lo[0] == pytest.approx((5 + 0.5) * inst.voxel) and inst.hi[0] == pytest.approx((95 + 0.5) * inst.voxel)
    assert inst.position[0] == pytest.approx(0.5 * (inst.lo[0] + inst.hi[0]))


def test_ids_count_per_label_and_are_never_reused() -> None:
    s = store()
    a = place(s, "mug", (0, 0, 0), (0.1, 0.1, 0.1))
    b = place(s, "mug", (1, 0, 0), (1.1, 0.1, 0.1))
    assert (a.id, b.id) == ("mug_1", "mug_2")
    s.remove(a.id)
    assert s.new_id("mug") == "mug_3" and "mug_1" not in s


def test_a_relabelled_instance_gets_a_fresh_id_and_moves_to_the_end() -> None:
    s = store()
    lemon = place(s, "lemon", (0, 0, 0), (0.1, 0.1, 0.1))
    place(s, "orange", (1, 0, 0), (1.1, 0.1, 0.1))
    s.relabel(lemon, "orange")
    assert [i.id for i in s] == ["orange_1", "orange_2"] and lemon.label == "orange" and s.get("orange_2") is lemon


def test_confirmation_follows_the_shared_settings() -> None:
    s = store(min_sightings=3)
    seen_twice = place(s, "mug", (0, 0, 0), (0.1, 0.1, 0.1), times_seen=2)
    stale = place(s, "cup", (0, 0, 0), (0.1, 0.1, 0.1), times_seen=5, stale=True)
    assert s.instances() == [] and s.instances(confirmed=False) == [seen_twice]
    assert s.instances(include_stale=True) == [stale]
    s.settings.min_sightings = 2
    assert s.instances() == [seen_twice]
    seen_twice.held = True
    assert s.held() is seen_twice


def test_get_names_the_known_ids() -> None:
    s = store()
    place(s, "mug", (0, 0, 0), (0.1, 0.1, 0.1))
    with pytest.raises(MapError, match="no map instance 'can_9'; known instances: mug_1"):
        s.get("can_9")
    with pytest.raises(MapError, match="none yet"):
        store().get("can_9")


def test_settings_are_checked_and_shared_by_the_maps_parts() -> None:
    with pytest.raises(MapError, match="min_sightings and stale_after must be >= 1"):
        MapSettings.checked(0, 3, 400, 4, 4.0, 0.2, 0.35, 60.0)
    smap = SemanticMap(bounds=(0.0, 0.0, 4.0, 4.0), max_range=5)
    assert isinstance(smap.max_range, float) and smap.miss_check.settings.max_range == 5.0
    smap.max_range = 2.5
    assert smap.lifter.settings.max_range == 2.5 and smap.miss_check.settings.max_range == 2.5
    smap.min_sightings = 1
    assert smap.store.settings.min_sightings == 1
