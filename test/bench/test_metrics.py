"""Hand-computed checks of the EMMOE metrics in homiebot.bench.metrics."""

from __future__ import annotations

import pytest

from homiebot.bench import metrics as m
from homiebot.bench.results import ATTRIBUTES, RunResult, StepSummary


def st(text: str) -> StepSummary:
    """'[Put, can, fridge]:ok' -> a successful step; ':E1' etc. -> a failed step with that code; '[]:F1' unusable."""
    node, _, outcome = text.rpartition(":")
    parts = [p.strip() for p in node.strip().lstrip("[").rstrip("]").split(",")]
    parts += [""] * (3 - len(parts))
    ok = outcome == "ok"
    return StepSummary(action=parts[0], target=parts[1] or None, place=parts[2] or None,
                       success=ok, code=None if ok else outcome)


def run(steps: list[str], keypaths: list[list[str]], *, task_id: str = "t", n: int = 0,
        aliases: dict[str, str] | None = None, expert_length: int | None = None,
        attributes: list[str] | None = None) -> RunResult:
    return RunResult(task_id=task_id, run=n, seed=n, steps=[st(s) for s in steps], keypaths=keypaths,
                     aliases=aliases or {}, expert_length=expert_length, attributes=attributes or [],
                     ended=bool(steps) and steps[-1].startswith("[End"))


# ----------------------------------------------------------------------------- helpers


def test_parse_node() -> None:
    assert m.parse_node("[Go to, fridge]") == ("Go to", "fridge", None)
    assert m.parse_node("[Put, green_can, fridge]") == ("Put", "green_can", "fridge")
    assert m.parse_node("[End]") == ("End", None, None)
    assert m.parse_node("  [ Pick ,  brown table ] ") == ("Pick", "brown table", None)
    with pytest.raises(ValueError):
        m.parse_node("[]")
    with pytest.raises(ValueError):
        m.parse_node("[Put, a, b, c]")


def test_normalise() -> None:
    aliases = {"Table": "brown_table", "kitchen-drawer": "Kitchen Drawer"}
    assert m.normalise(None, aliases) is None
    assert m.normalise("  ", aliases) is None
    assert m.normalise("table", aliases) == "brown_table"
    assert m.normalise("TABLE", aliases) == "brown_table"
    assert m.normalise("kitchen drawer", aliases) == "kitchen_drawer"  # key normalised, value normalised
    assert m.normalise("Green-Can", aliases) == "green_can"  # no alias: just normalised
    assert m.normalise("brown_table", aliases) == "brown_table"


def test_action_key() -> None:
    assert m.action_key("Go to") == m.action_key("go to") == m.action_key("GO_TO") == m.action_key("goto") == "goto"
    assert m.canonical_action("go_to") == "Go to"
    assert m.canonical_action("Fly") is None
    assert m.canonical_action("") is None


# ----------------------------------------------------------------------------- task progress


def test_best_keypath_wins() -> None:
    kp_long = ["[Go to, fridge]", "[Open, fridge]", "[Put, green_can, fridge]", "[End]"]
    kp_short = ["[Pick, green_can]", "[Put, green_can, fridge]", "[End]"]
    r = run(["[Go to, table]:ok", "[Pick, green_can]:ok", "[Go to, fridge]:ok",
             "[Put, green_can, fridge]:L3", "[Open, fridge]:ok"], [kp_short, kp_long])
    # kp_short: Pick ok, Put only failed -> 1/3; kp_long: Go to fridge, Open fridge -> 2/4 = 0.5
    assert m.matched_nodes(r.steps, kp_short, {}) == 1
    assert m.matched_nodes(r.steps, kp_long, {}) == 2
    assert m.task_progress(r) == 0.5
    assert not m.is_success(r)


def test_failed_steps_never_match() -> None:
    kp = [["[Pick, can]", "[Put, can, fridge]", "[End]"]]
    r = run(["[Pick, can]:E1", "[Pick, can]:ok", "[Put, can, fridge]:D1", "[Put, can, fridge]:ok", "[End]:ok"], kp)
    # the failed Pick and Put are skipped, the successful ones match: 3/3
    assert m.task_progress(r) == 1.0
    assert m.is_success(r)
    only_failed = run(["[Pick, can]:E1", "[Put, can, fridge]:E2", "[End]:ok"], kp)
    # Pick never succeeded, so nothing after it can be matched: 0/3
    assert m.task_progress(only_failed) == 0.0
    assert not m.is_success(only_failed)


def test_failed_end_does_not_match() -> None:
    r = run(["[Pick, can]:ok", "[End]:F1"], [["[Pick, can]", "[End]"]])
    assert m.task_progress(r) == 0.5  # 1/2
    assert not m.is_success(r)


def test_out_of_order_does_not_match() -> None:
    kp = [["[Open, fridge]", "[Pick, can]", "[End]"]]
    r = run(["[Pick, can]:ok", "[Open, fridge]:ok", "[End]:ok"], kp)
    # Open matches step 2; no Pick after it, so the End is never reached: 1/3
    assert m.task_progress(r) == pytest.approx(1 / 3)
    assert not m.is_success(r)


def test_unusable_steps_never_match() -> None:
    r = run(["[]:F1", "[Pick, can]:ok", "[]:F1", "[End]:ok"], [["[Pick, can]", "[End]"]])
    assert m.task_progress(r) == 1.0  # 2/2, the unusable outputs are simply skipped
    assert m.agent_length(r) == 4  # but they are planner turns
    assert m.replan_count(r) == 2  # steps 2 and 4 follow a failed step


def test_aliases_and_spelling_variants() -> None:
    aliases = {"table": "brown_table", "Green Can": "green_can"}
    kp = [["[Go to, brown_table]", "[Pick, green_can]", "[Put, green_can, Brown-Table]", "[End]"]]
    r = run(["[go to, Table]:ok", "[PICK, green can]:ok", "[put, Green-Can, TABLE]:ok", "[end]:ok"], kp, aliases=aliases)
    assert m.task_progress(r) == 1.0  # 4/4
    assert m.is_success(r)
    r2 = run(["[GO_TO, brown table]:ok"], kp, aliases=aliases)
    assert m.task_progress(r2) == 0.25  # 1/4
    wrong_place = run(["[Pick, green_can]:ok", "[Put, green_can, fridge]:ok", "[End]:ok"],
                      [["[Pick, green_can]", "[Put, green_can, table]", "[End]"]], aliases=aliases)
    assert m.task_progress(wrong_place) == pytest.approx(1 / 3)  # the place differs: 1/3


def test_run_without_end_is_not_complete() -> None:
    r = run(["[Pick, can]:ok", "[Put, can, fridge]:ok"], [["[Pick, can]", "[Put, can, fridge]", "[End]"]])
    assert m.task_progress(r) == pytest.approx(2 / 3)  # 2/3: the End node is missing
    assert not m.is_success(r)
    assert not m.ends_with_end(r)
    assert m.ser([r]) == 0.0  # no run ends with End: zero denominator


def test_no_keypaths() -> None:
    r = run(["[Pick, can]:ok", "[End]:ok"], [])
    assert m.task_progress(r) == 0.0
    assert not m.is_success(r)
    assert m.expert_length(r) is None
    empty_kp = run(["[End]:ok"], [[]])
    assert m.task_progress(empty_kp) == 0.0
    assert not m.is_success(empty_kp)


def test_appendix_c1_example() -> None:
    """Paper appendix C.1. Strict in-order matching gives 1/3; the paper prints 0.5, which needs unordered matching."""
    keypaths = [
        ["[Open, kitchen_drawer]", "[Put, short_can, kitchen_drawer]", "[End]"],
        ["[Open, kitchen_drawer]", "[Put, short_can, kitchen_drawer]", "[Close, drawer]", "[End]"],
        ["[Go to, drawer]", "[Open, kitchen_drawer]", "[Put, short_can, kitchen_drawer]", "[End]"],
        ["[Go to, drawer]", "[Open, kitchen_drawer]", "[Put, short_can, kitchen_drawer]", "[Close, drawer]", "[End]"],
    ]
    steps = ["[Go to, kitchen]:ok", "[Open, drawer]:ok", "[Put, short_can, drawer]:E1"]
    for _ in range(4):
        steps += ["[Go to, kitchen_counter]:ok", "[Put, short_can, kitchen_counter]:E1",
                  "[Go to, drawer]:ok", "[Put, short_can, drawer]:E1"]
    steps.append("[Go to, kitchen_counter]:ok")
    assert len(steps) == 20
    r = run(steps, keypaths, aliases={"drawer": "kitchen_drawer"})
    # keypath 1: Open (step 2) -> 1/3; keypath 2: 1/4; keypath 3: Go to drawer (step 6), no Open after -> 1/4;
    # keypath 4: 1/5.  max = 1/3
    assert [m.matched_nodes(r.steps, k, r.aliases) for k in keypaths] == [1, 1, 1, 1]
    assert m.task_progress(r) == pytest.approx(1 / 3)


def test_appendix_c2_c3_example() -> None:
    """Paper appendix C.2/C.3: a successful run that ends with End and has two re-plans (after steps 5 and 6)."""
    steps = ["[Go to, kitchen_counter]:ok", "[Go to, yellow_box]:ok", "[Pick, yellow_box]:ok", "[Go to, fridge]:ok",
             "[Put, yellow_box, fridge]:L3", "[Open, fridge]:L1", "[Go to, kitchen_counter]:ok",
             "[Put, yellow_box, kitchen_counter]:ok", "[Go to, fridge]:ok", "[Open, fridge]:ok",
             "[Go to, kitchen_counter]:ok", "[Pick, yellow_box]:ok", "[Go to, fridge]:ok",
             "[Put, yellow_box, fridge]:ok", "[Close, fridge]:ok", "[End]:ok"]
    r = run(steps, [["[Open, fridge]", "[Pick, yellow_box]", "[Put, yellow_box, fridge]", "[End]"]], expert_length=6)
    assert m.is_success(r)
    assert m.ends_with_end(r)
    assert m.agent_length(r) == 16
    assert m.replan_count(r) == 2  # step 6 follows failed 5, step 7 follows failed 6
    assert m.ser([r]) == 100.0  # 1/1
    assert m.srr([r]) == 100.0  # 2/2
    assert m.plwsr([r]) == pytest.approx(37.5)  # 100 * 6 / max(6, 16) = 37.5


# ----------------------------------------------------------------------------- aggregate metrics

KP_CAN = [["[Pick, can]", "[Put, can, fridge]", "[End]"]]
KP_BOWL = [["[Go to, sink]", "[Put, bowl, sink]", "[End]"], ["[Put, bowl, sink]", "[End]"]]


@pytest.fixture
def suite() -> list[RunResult]:
    return [
        # r1: success (3/3), L_agent 5, L_expert 3, 1 re-plan (after the L3), ends with End
        run(["[Pick, can]:ok", "[Put, can, fridge]:L3", "[Open, fridge]:ok", "[Put, can, fridge]:ok", "[End]:ok"],
            KP_CAN, task_id="t1", n=0, expert_length=3, attributes=["short-horizon", "logical"]),
        # r2: fail (Pick only: 1/3), ends with End, 1 re-plan (after the D1)
        run(["[Pick, can]:D1", "[Go to, can]:ok", "[Pick, can]:ok", "[End]:ok"],
            KP_CAN, task_id="t1", n=1, expert_length=3, attributes=["short-horizon", "logical"]),
        # r3: success via the first bowl keypath (3/3), L_agent 5, no expert length -> shortest keypath 2,
        #     1 re-plan (after the E2), ends with End
        run(["[Go to, sink]:ok", "[Put, bowl, sink]:E2", "[Pick, bowl]:ok", "[Put, bowl, sink]:ok", "[End]:ok"],
            KP_BOWL, task_id="t2", n=0, attributes=["long-horizon", "human style", "logical"]),
        # r4: fail (first keypath 1/3, second 0/2), no End, two E1 of which only the first is followed by a step
        run(["[Go to, sink]:ok", "[Put, bowl, sink]:E1", "[Put, bowl, sink]:E1"],
            KP_BOWL, task_id="t2", n=1, attributes=["long-horizon", "human-style"]),
    ]


def test_per_run_quantities(suite: list[RunResult]) -> None:
    assert [m.is_success(r) for r in suite] == [True, False, True, False]
    assert [m.task_progress(r) for r in suite] == pytest.approx([1.0, 1 / 3, 1.0, 1 / 3])
    assert [m.agent_length(r) for r in suite] == [5, 4, 5, 3]
    assert [m.expert_length(r) for r in suite] == [3, 3, 2, 2]
    assert [m.replan_count(r) for r in suite] == [1, 1, 1, 1]
    assert [m.ends_with_end(r) for r in suite] == [True, True, True, False]


def test_sr(suite: list[RunResult]) -> None:
    assert m.sr(suite) == 50.0  # 100 * 2/4


def test_plwsr(suite: list[RunResult]) -> None:
    # r1: 3/max(3,5) = 0.6; r3: 2/max(2,5) = 0.4; failed runs add 0 -> 100 * (0.6 + 0.4) / 4 = 25.0
    assert m.plwsr(suite) == pytest.approx(25.0)


def test_plwsr_agent_shorter_and_longer_than_expert() -> None:
    kp = [["[Pick, can]", "[End]"]]
    shorter = run(["[Pick, can]:ok", "[End]:ok"], kp, expert_length=5)  # 5/max(5,2) = 1 (never above 1)
    longer = run(["[Go to, can]:ok", "[Pick, can]:E1", "[Pick, can]:ok", "[End]:ok"], kp, expert_length=2)  # 2/4
    failed = run(["[End]:ok"], kp, expert_length=2)  # not successful: 0
    assert m.plwsr([shorter]) == 100.0
    assert m.plwsr([longer]) == 50.0
    assert m.plwsr([shorter, longer, failed]) == pytest.approx(50.0)  # 100 * (1 + 0.5 + 0) / 3
    # no expert length: the shortest keypath (2 nodes) is used -> 2/max(2,4) = 0.5
    no_expert = run(["[Go to, can]:ok", "[Pick, can]:E1", "[Pick, can]:ok", "[End]:ok"],
                    [["[Go to, can]", "[Pick, can]", "[End]"], *kp])
    assert m.plwsr([no_expert]) == 50.0


def test_mean_tp(suite: list[RunResult]) -> None:
    assert m.mean_tp(suite) == pytest.approx(200 / 3)  # 100 * (1 + 1/3 + 1 + 1/3) / 4 = 66.67


def test_ser(suite: list[RunResult]) -> None:
    # runs ending with End: r1, r2, r3 (r2 ended without success); successful among them: r1, r3
    assert m.ser(suite) == pytest.approx(200 / 3)  # 100 * 2/3


def test_srr(suite: list[RunResult]) -> None:
    # re-plans: r1 1, r2 1, r3 1, r4 1 (the final E1 is not followed by a step) -> 100 * (1 + 1) / 4
    assert m.srr(suite) == 50.0


def test_srr_uneven() -> None:
    kp = [["[Pick, can]", "[End]"]]
    ok = run(["[Pick, can]:E1", "[Pick, can]:D1", "[Pick, can]:ok", "[End]:ok"], kp)  # 2 re-plans
    bad = run(["[Pick, can]:L1", "[Go to, can]:ok", "[Pick, can]:E1", "[]:F1", "[Pick, can]:E1", "[Pick, can]:E1"], kp)
    # bad: failures at steps 1, 3, 4, 5, 6; step 6 is last -> 4 re-plans
    assert m.replan_count(ok) == 2
    assert m.replan_count(bad) == 4
    assert m.srr([ok, bad]) == pytest.approx(100 * 2 / 6)  # 33.33
    assert m.srr([bad]) == 0.0  # 0/4


def test_error_counts_split_by_success(suite: list[RunResult]) -> None:
    counts = m.error_counts(suite)
    assert set(counts) == {"success", "failed"}
    zeros = dict.fromkeys(["F1", "F2", "L1", "L2", "L3", "L4", "D1", "D2", "E1", "E2"], 0)
    assert counts["success"] == {**zeros, "L3": 1, "E2": 1}  # r1 L3, r3 E2
    assert counts["failed"] == {**zeros, "D1": 1, "E1": 2}  # r2 D1, r4 E1 x2
    props = m.error_proportions(suite)
    assert props["success"]["L3"] == 0.5 and props["success"]["E2"] == 0.5  # 1/2 each
    assert props["failed"]["D1"] == pytest.approx(1 / 3) and props["failed"]["E1"] == pytest.approx(2 / 3)
    assert props["failed"]["F1"] == 0.0


def test_error_proportions_without_errors() -> None:
    r = run(["[Pick, can]:ok", "[End]:ok"], KP_CAN)
    props = m.error_proportions([r])
    assert all(v == 0.0 for group in props.values() for v in group.values())
    assert m.error_counts([])["success"]["F1"] == 0


def test_action_success_excludes_pre_execution_rejections(suite: list[RunResult]) -> None:
    # executed = succeeded or failed with E1/E2; L3 (r1) and D1 (r2) were never executed.
    # Go to: r2, r3, r4 ok -> (3, 3); Pick: r1, r2, r3 ok -> (3, 3); Put: r1 ok, r3 E2 + ok, r4 E1 x2 -> (2, 5)
    # Open: r1 -> (1, 1); Close: none -> (0, 0); End: r1, r2, r3 -> (3, 3)
    assert m.action_success(suite) == {"Go to": (3, 3), "Pick": (3, 3), "Put": (2, 5), "Open": (1, 1),
                                       "Close": (0, 0), "End": (3, 3)}
    rates = m.action_success_rate(suite)
    assert rates == {"Go to": 100.0, "Pick": 100.0, "Put": 40.0, "Open": 100.0, "Close": 0.0, "End": 100.0}


def test_action_success_spelling_and_unusable() -> None:
    r = run(["[go_to, can]:E1", "[]:F1", "[GO TO, can]:ok", "[Fly, can]:E1", "[Open, table]:L4"], KP_CAN)
    # Go to: E1 + ok -> (1, 2); the unusable, unknown and L4 steps are not counted
    assert m.action_success([r])["Go to"] == (1, 2)
    assert m.action_success([r])["Open"] == (0, 0)
    assert m.action_success_rate([r])["Go to"] == 50.0


def test_sr_by_attribute(suite: list[RunResult]) -> None:
    by_attr = m.sr_by_attribute(suite)
    assert set(by_attr) == set(ATTRIBUTES)
    assert by_attr["short-horizon"] == (50.0, 2)  # r1 ok, r2 fail
    assert by_attr["long-horizon"] == (50.0, 2)  # r3 ok, r4 fail
    assert by_attr["logical"][1] == 3 and by_attr["logical"][0] == pytest.approx(200 / 3)  # r1, r3 of r1-r3
    assert by_attr["human-style"] == (50.0, 2)  # "human style" and "human-style" both count
    assert by_attr["open-ended"] == (0.0, 0)


def test_summary(suite: list[RunResult]) -> None:
    s = m.summary(suite)
    assert set(s) == {"runs", "tasks", "SR", "PLWSR", "TP", "SRR", "SER"}
    assert s["runs"] == 4 and s["tasks"] == 2
    assert s["SR"] == 50.0
    assert s["PLWSR"] == pytest.approx(25.0)
    assert s["TP"] == pytest.approx(200 / 3)
    assert s["SRR"] == 50.0
    assert s["SER"] == pytest.approx(200 / 3)


# ----------------------------------------------------------------------------- zero denominators


def test_empty_inputs_give_zero() -> None:
    assert m.sr([]) == 0.0
    assert m.plwsr([]) == 0.0
    assert m.mean_tp([]) == 0.0
    assert m.ser([]) == 0.0
    assert m.srr([]) == 0.0
    assert m.summary([]) == {"runs": 0, "tasks": 0, "SR": 0.0, "PLWSR": 0.0, "TP": 0.0, "SRR": 0.0, "SER": 0.0}
    assert all(v == (0.0, 0) for v in m.sr_by_attribute([]).values())
    assert all(v == 0.0 for v in m.action_success_rate([]).values())
    assert m.error_proportions([])["failed"]["E1"] == 0.0


def test_no_replans_and_no_steps() -> None:
    r = run(["[Pick, can]:ok", "[Put, can, fridge]:ok", "[End]:ok"], KP_CAN)
    assert m.srr([r]) == 0.0  # 0/0 re-plans
    empty = run([], KP_CAN)
    assert m.task_progress(empty) == 0.0
    assert m.agent_length(empty) == 0
    assert m.replan_count(empty) == 0
    assert not m.ends_with_end(empty)
    assert m.summary([empty]) == {"runs": 1, "tasks": 1, "SR": 0.0, "PLWSR": 0.0, "TP": 0.0, "SRR": 0.0, "SER": 0.0}


def test_accepts_any_iterable(suite: list[RunResult]) -> None:
    assert m.sr(iter(suite)) == 50.0
    assert m.summary(r for r in suite)["runs"] == 4


# ----------------------------------------------------------------------------- asking (ARS, QR, clear tasks)


def asking(k: int | None, asks: list[tuple[bool | None, int | None]], success: bool = True, task_id: str = "a") -> RunResult:
    """A run with Ask steps (relevant, resolved), then Pick/Put/End of the one keypath."""
    steps = [StepSummary(action="Ask", target="q", success=True, relevant=rel, resolved=res) for rel, res in asks]
    steps += [st("[Pick, a]:ok"), st(f"[Put, a, b]:{'ok' if success else 'E1'}"), st("[End]:ok")]
    return RunResult(task_id=task_id, run=0, seed=0, steps=steps, keypaths=[["[Pick, a]", "[Put, a, b]", "[End]"]], min_questions=k)


def test_asking_metrics_count_resolved_slots_and_keep_clear_tasks_apart() -> None:
    double = asking(2, [(True, 2)])  # one question settling two things: 2 relevant, 1/(1+0+0)
    old = asking(1, [(True, None)])  # a record from before 'resolved': a relevant question counts once
    off = asking(1, [(False, None), (True, 1)])  # an off-topic question: 1/(1+0+1)
    unjudged = asking(2, [(None, None)], success=False)  # a person answered: irrelevant; failed: 0
    clear = asking(0, [(False, None), (False, None)], task_id="c")  # two needless questions on a clear task
    clear_failed = asking(0, [], success=False, task_id="d")
    assert [m.questions(r) for r in (double, old, off, unjudged)] == [(2, 0), (1, 0), (1, 1), (0, 1)]
    ambiguous = [double, old, off, unjudged]
    assert m.ars(ambiguous) == pytest.approx(100 * (1 + 1 + 0.5 + 0) / 4)
    assert m.ars(ambiguous + [clear, clear_failed]) == pytest.approx(62.5)  # clear runs never enter ARS
    assert m.qr(ambiguous + [clear]) == pytest.approx((1 + 1 + 2 + 0.5) / 4)
    assert m.clear_sr([double, clear, clear_failed]) == 50.0
    assert m.unnecessary_questions([double, clear, clear_failed]) == 2
    s = m.summary(ambiguous + [clear, clear_failed])
    assert (s["ambiguous"], s["ambiguous SR"], s["questions"], s["clear"], s["clear SR"], s["unnecessary questions"]) == (
        4, 75.0, 5, 2, 50.0, 2)
    assert "clear" not in m.summary(ambiguous) and "ARS" not in m.summary([clear])
    assert "ARS" not in m.summary([run(["[End]:ok"], [["[End]"]])])  # no K at all: no asking figures
