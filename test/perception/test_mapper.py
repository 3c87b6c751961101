"""The semantic map on a generated home: mapping quality, grounding, moving objects, belief, exports.

Evaluation: map instances are matched to the simulator's objects and receptacles by category and
nearest x-y position within 0.5 m (objects: pose centre; receptacles: footprint centre).
"""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

from homiebot.core.contracts import Observation
from homiebot.core.errors import ErrorDetector
from homiebot.perception.detectors import NoisyDetector, SimTruthDetector, detect_views
from homiebot.perception.exploration import next_frontier_goal
from homiebot.perception.map_belief import MapBelief
from homiebot.perception.map_grounding import MapGrounder
from homiebot.perception.semantic_map import MapError, SemanticMap
from homiebot.worlds.home.generate import generate_scene
from homiebot.worlds.home.mapping import bind_to_truth, evaluate_map, explore_sweep, map_for_home, observe_into, rig_from_home
from homiebot.worlds.home.world import EmbeddedHome

SEED = 0


@pytest.fixture(scope="module")
def home():
    world = EmbeddedHome(generate_scene(SEED), width=256, height=256)
    yield world
    world.close()


@pytest.fixture(scope="module")
def truth_map(home):
    home.reset()
    smap = map_for_home(home)
    result = explore_sweep(home, smap, SimTruthDetector())
    assert not result.failed
    return smap


@pytest.fixture(scope="module")
def noisy_map(home):
    home.reset()
    smap = map_for_home(home)
    explore_sweep(home, smap, NoisyDetector(SimTruthDetector(), miss_rate=0.2, false_positive_rate=0.05,
                                            confusion_rate=0.05, erosion_px=1, seed=7))
    return smap


def test_sweep_with_sim_truth_matches_the_simulator(truth_map, home) -> None:
    ev = evaluate_map(truth_map, home.state)
    assert ev["precision"] >= 0.95, ev["false_positives"]
    assert ev["recall"] >= 0.95, ev["missed"]
    assert ev["median_error"] <= 0.15
    # objects in closed containers were seen with the door open and keep their "in" relation
    for iid, name in ev["binding"].items():
        loc = home.state.locations.get(name)
        inst = truth_map.get(iid)
        if loc is not None and loc.receptacle is not None:
            assert inst.relation == loc.relation, (iid, name, inst.relation, loc)
            assert ev["binding"].get(inst.support) == loc.receptacle
            assert inst.room == loc.room


def test_container_states_and_belief(truth_map, home) -> None:
    bound = bind_to_truth(truth_map, home.state)
    belief = MapBelief(truth_map)
    for iid, name in bound.items():
        ent = belief.lookup(iid)
        assert ent is not None and ent.kind == ("receptacle" if name in home.state.layout.receptacles else "object")
        if ent.kind == "receptacle" and ent.articulated:
            assert ent.is_open == home.state.is_open[name]
        if ent.kind == "object" and home.state.enclosing_container(name):
            assert bound.get(belief.enclosing_container(iid)) == home.state.enclosing_container(name)
    assert set(home.state.layout.rooms) <= set(belief.names())
    assert belief.lookup("unicorn_1") is None and belief.held_object() is None
    assert all(belief.distance_to(n) >= 0 for n in belief.names())
    # the error detector runs on the map belief as it does on simulator truth
    detector = ErrorDetector(belief, {})
    assert detector.ground(next(iter(bound))) == next(iter(bound))


def test_grounding_on_a_noisy_map(noisy_map, home) -> None:
    state = home.state
    bound = {name: iid for iid, name in bind_to_truth(noisy_map, state).items()}
    grounder = MapGrounder(noisy_map)
    phrases = {}
    for name, info in state.layout.objects.items():
        phrases[name] = f"{info.color_name} {info.cls.name.replace('_', ' ')}"
    for name, rec in state.layout.receptacles.items():
        phrases[name] = f"{rec.type.name.replace('_', ' ')} in the {rec.room}"
    hits = sum(1 for name, phrase in phrases.items() if grounder.ground(phrase).target == bound.get(name))
    assert hits / len(phrases) >= 0.8, hits
    unknown = grounder.ground("purple spaceship")
    assert unknown.status == "unknown" and 1 <= len(unknown.candidates) <= 5
    assert unknown.message.startswith("'purple spaceship' matches no object seen so far; seen: ")
    assert grounder.ground("kitchen").target == "kitchen"
    assert grounder.ground("").status == "unknown"


def test_grounding_relations_and_ambiguity(truth_map, home) -> None:
    grounder = MapGrounder(truth_map)
    # "the <object> on/in the <receptacle>" narrows by support
    obj = next(i for i in truth_map.instances() if i.kind == "object" and i.support)
    sup = truth_map.get(obj.support)
    res = grounder.ground(f"the {obj.label.replace('_', ' ')} {obj.relation} the {sup.label.replace('_', ' ')} in the {sup.room}")
    assert res.ok and res.target == obj.id, res
    # two of a kind without a distinguishing word is ambiguous, with candidates
    labels = [i.label for i in truth_map.instances()]
    twice = next(lab for lab in labels if labels.count(lab) > 1)
    amb = grounder.ground(twice.replace("_", " "))
    assert amb.status == "ambiguous" and len(amb.candidates) >= 2 and "matches" in amb.message
    assert grounder.ground(obj.id).target == obj.id


def test_summary_describe_and_occupancy(truth_map) -> None:
    summary = truth_map.summary()
    json.dumps(summary)
    assert summary["instances"] and summary["explored_m2"] > 20
    text = truth_map.describe()
    assert "kitchen:" in text and len(text) < 3000
    msg = truth_map.to_occupancy_msg_fields()
    info = msg["info"]
    assert len(msg["data"]) == info["width"] * info["height"]
    data = np.array(msg["data"])
    assert (data == 0).sum() > 1000 and (data == 100).sum() > 500
    # solid furniture (no legs with floor visible beneath) is occupied or unknown at its centre, never free
    for inst in truth_map.instances():
        if inst.label in ("fridge", "cabinet", "kitchen_counter", "drawer", "sink", "bed", "sofa", "tv_stand"):
            assert truth_map.occupancy.state_at(inst.position[0], inst.position[1]) != 0, inst.id


def test_moving_an_object_makes_the_old_belief_stale_and_relocates_it() -> None:
    world = EmbeddedHome(generate_scene(SEED), width=256, height=256)
    try:
        state = world.state
        obj = next(n for n, loc in state.locations.items() if loc.relation == "on")
        src = state.locations[obj].receptacle
        dst = next(n for n, r in state.layout.receptacles.items() if r.type.relation == "on" and n != src
                   and r.room != state.layout.receptacles[src].room)
        smap = map_for_home(world)
        det = SimTruthDetector()
        assert state.navigate(src).ok
        for k in range(2):
            observe_into(world, smap, det, k)
        iid = bind_to_truth(smap, state)
        iid = next(i for i, n in iid.items() if n == obj)
        assert smap.is_confirmed(smap.get(iid))
        # the object moves while the robot is not looking
        assert state.grasp(obj).ok and state.navigate(dst).ok and state.place(obj, dst, random.Random(0)).ok
        assert state.navigate(src).ok
        for k in range(2, 5):
            report = observe_into(world, smap, det, k)
        assert smap.get(iid).stale
        assert iid not in MapBelief(smap).names()
        assert state.navigate(dst).ok
        report = observe_into(world, smap, det, 5)
        assert iid in report.relocated
        moved = smap.get(iid)
        x, y, _, _ = state.object_poses[obj]
        assert not moved.stale and math.hypot(moved.position[0] - x, moved.position[1] - y) < 0.15
        observe_into(world, smap, det, 6)
        support = moved.support
        assert bind_to_truth(smap, state).get(support) == dst
        # robot-side bookkeeping: pick and place through the map
        smap.mark_held(iid)
        assert MapBelief(smap).held_object() == iid and smap.get(iid).relation == "held"
        smap.mark_placed(iid, support)
        assert smap.get(iid).support == support and not smap.get(iid).held
        with pytest.raises(MapError, match="not an object"):
            smap.mark_held(support)
        # frontier exploration offers a free, reachable-looking goal while the home is half seen
        goal = next_frontier_goal(smap)
        assert goal is not None and smap.occupancy.state_at(*goal) == 0
    finally:
        world.close()


def test_update_rejects_bad_input(home) -> None:
    smap = map_for_home(home)
    obs = home.observe(0)
    with pytest.raises(MapError, match="Observation"):
        smap.update({"views": {}}, {}, rig_from_home(home))
    with pytest.raises(MapError, match="views \\['top'\\]"):
        smap.update(obs, {"top": []}, rig_from_home(home))
    with pytest.raises(MapError, match="rooms .* or explicit bounds"):
        SemanticMap()
    with pytest.raises(MapError, match="no map instance 'can_9'"):
        smap.get("can_9")
    dets = detect_views(SimTruthDetector(), obs)
    assert isinstance(obs, Observation) and set(dets) == set(obs.views)
