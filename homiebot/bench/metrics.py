"""EMMOE metrics (paper section 2.3 and appendix C), computed from :class:`RunResult` objects.

Every function here is pure: no I/O, no global state, no randomness. Rates are returned in percent
(0-100). Whenever a rate's denominator is zero (no runs, no run that ends with End, no re-plan at all,
...) the rate is ``0.0``; no function raises ``ZeroDivisionError``.

Notation: ``M`` is the set of runs (trajectories), ``N = |M|``, ``S`` the successful runs.

Matching a step to a keypath node
    A keypath is an ordered list of nodes such as ``"[Go to, fridge]"``, ``"[Put, green_can, fridge]"``
    or ``"[End]"``. A step matches a node when the step SUCCEEDED, its action equals the node's action
    (compared case-, space-, hyphen- and underscore-insensitively: ``"Go to" == "go_to" == "GOTO"``) and,
    unless the node is ``[End]``, target and place are equal after :func:`normalise` (lower-casing,
    spaces/hyphens to underscores, then the task's alias map, e.g. ``"Table" -> "brown_table"``). A
    failed step never matches, nor does an unusable step (empty action).

Task Progress (TP)
    ``TP = max_{k in K_T} len(k_check) / len(k)`` where ``k_check`` is the longest prefix of keypath
    ``k`` that appears, in order, as a subsequence of the run's successful steps (greedy left-to-right
    matching, which is optimal for this). A run without keypaths (or with only empty ones) has TP 0.

Success
    A run is successful iff ``TP = 1``, i.e. some non-empty keypath is matched completely (tested on the
    integer counts, not on the float ratio). As in SIF, a run of a clear S_hum task (the person said
    where they would be) is not successful when it followed the person for more than
    ``FOLLOW_LIMIT_M`` metres (SIF: 50 timesteps of 0.17 m): probing that the words made needless.

Success Rate (SR)
    ``SR = |S| / N``.

Path Length Weighted SR (PLWSR)
    ``PLWSR = (1/N) * sum_{t in S} L_expert(t) / max(L_expert(t), L_agent(t))`` where ``L_agent`` is the
    number of planner turns including End (= the number of steps) and ``L_expert`` the task's expert
    length (the shortest keypath's length when the task has none). This is SPL-style, as in the
    official evaluation code; the paper's prose puts the agent's length in the numerator, which would
    reward paths longer than the expert's, so its prose is not followed.

Success End Rate (SER)
    ``SER = |S| / |{t in M : the final step of t is End}|``. Successful runs count in the numerator
    only if they end with End; since matching a keypath requires its ``[End]`` node, in practice they
    always do.

Success Re-plan Rate (SRR)
    ``SRR = sum_{t in S} replans(t) / sum_{t in M} replans(t)``; a re-plan is a step that directly
    follows a failed step, so ``replans(t)`` is the number of failed steps other than the last step.

SPL (situated tasks, SIF)
    ``SPL = (1/N) * sum_i S_i * L*_i / max(L*_i, L_i)`` over runs of tasks with a shortest path: ``L*`` the
    metres the oracle planner drives with perfect skills, ``L_i`` the metres the run drove; reported per
    SIF kind (PnP, S_obj, S_hum) and hint (clear, ambiguous) by :func:`sif_table`.

Also: error-code counts over failed steps split by run success (paper Fig. 3, appendix H.2),
per-action execution success (paper Table 4) and SR per task attribute (the five attributes of
EMMOE-100 tasks).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence

from homiebot.bench.results import ATTRIBUTES, RunResult, StepSummary

ACTIONS: tuple[str, ...] = ("Go to", "Pick", "Put", "Open", "Close", "End")
"""The planner's actions in canonical spelling: Go to, Pick, Put, Open, Close, End."""

ERROR_CODES: tuple[str, ...] = ("F1", "F2", "L1", "L2", "L3", "L4", "D1", "D2", "E1", "E2")
"""The error taxonomy: F1 F2 L1 L2 L3 L4 D1 D2 E1 E2."""

EXECUTION_ERROR_CODES: frozenset[str] = frozenset({"E1", "E2"})
"""Failures that happen while the skill runs; every other code rejects the subtask before execution."""


# --------------------------------------------------------------------------- normalisation, parsing


def _canon(name: str) -> str:
    return name.strip().lower().replace(" ", "_").replace("-", "_")


def normalise(name: str | None, aliases: Mapping[str, str]) -> str | None:
    """Canonical form of an object or place name, for comparison.

    The name is stripped, lower-cased, and spaces and hyphens become underscores; then it is looked up
    in ``aliases`` (whose keys are normalised the same way) and replaced by the normalised alias value
    when present. ``None`` and empty or blank names give ``None``. Aliases are applied once (not
    transitively).
    """
    if name is None:
        return None
    key = _canon(name)
    if not key:
        return None
    for alias, canonical in aliases.items():
        if _canon(alias) == key:
            return _canon(canonical) or None
    return key


def action_key(action: str | None) -> str:
    """Comparison key of an action: lower case with spaces, underscores and hyphens removed.

    ``"Go to"``, ``"go to"``, ``"GO_TO"`` and ``"goto"`` all give ``"goto"``. ``None`` gives ``""``.
    """
    if not action:
        return ""
    return "".join(ch for ch in action.lower() if ch not in " _-\t")


_ACTION_BY_KEY: dict[str, str] = {action_key(a): a for a in ACTIONS}
_END_KEY = action_key("End")


def canonical_action(action: str | None) -> str | None:
    """The canonical spelling (one of :data:`ACTIONS`) of an action, or ``None`` if it is not one."""
    return _ACTION_BY_KEY.get(action_key(action))


def parse_node(text: str) -> tuple[str, str | None, str | None]:
    """Split a keypath node such as ``"[Put, green_can, fridge]"`` into ``(action, target, place)``.

    Surrounding whitespace and brackets are removed and the parts are split on commas and stripped;
    missing or empty parts are ``None``: ``"[Go to, fridge]" -> ("Go to", "fridge", None)``,
    ``"[End]" -> ("End", None, None)``. Names are returned as written (matching normalises them).
    Raises ``ValueError`` for a node without an action or with more than three parts.
    """
    inner = text.strip()
    if inner.startswith("["):
        inner = inner[1:]
    if inner.endswith("]"):
        inner = inner[:-1]
    parts = [p.strip() for p in inner.split(",")]
    if len(parts) > 3:
        raise ValueError(f"keypath node has more than three parts: {text!r}")
    parts += [""] * (3 - len(parts))
    action, target, place = parts
    if not action:
        raise ValueError(f"keypath node without an action: {text!r}")
    return action, target or None, place or None


# --------------------------------------------------------------------------- per-run quantities


def step_matches(step: StepSummary, node: tuple[str, str | None, str | None], aliases: Mapping[str, str]) -> bool:
    """Whether ``step`` fulfils the keypath ``node`` (a :func:`parse_node` triple).

    Only a successful step with a usable (non-empty) action can match. Actions are compared with
    :func:`action_key`; an ``End`` node matches any successful End step; other nodes also need equal
    target and equal place after :func:`normalise` with the task's ``aliases`` (``None`` equals only
    ``None``).
    """
    if not step.success or not step.action:
        return False
    action, target, place = node
    key = action_key(action)
    if action_key(step.action) != key:
        return False
    if key == _END_KEY:
        return True
    return (normalise(step.target, aliases) == normalise(target, aliases)
            and normalise(step.place, aliases) == normalise(place, aliases))


def matched_nodes(steps: Sequence[StepSummary], keypath: Sequence[str], aliases: Mapping[str, str]) -> int:
    """Number of nodes of ``keypath`` matched by ``steps`` strictly in order.

    Greedy: walk the steps once, advancing to the next node whenever the current step matches the
    current node. The result is the length of the longest prefix of the keypath that is a subsequence
    of the matching steps (greedy earliest matching is optimal for that).
    """
    nodes = [parse_node(n) for n in keypath]
    i = 0
    for step in steps:
        if i == len(nodes):
            break
        if action_key(step.action) == _ASK_KEY:  # questions are never keypath nodes: skipped
            continue
        if step_matches(step, nodes[i], aliases):
            i += 1
    return i


_ASK_KEY = "ask"


def questions(result: RunResult) -> tuple[int, int]:
    """(relevant, irrelevant) questions of a run, by the simulated user's judgement of its Ask steps. A
    relevant Ask step counts as many relevant questions as open things its answer settled or narrowed
    (``StepSummary.resolved``: two for "which sponge, and where should it go?"; one when unrecorded); an
    irrelevant one counts one irrelevant question, and so does a question nobody judged (a person
    answered, or nobody did)."""
    relevant = irrelevant = 0
    for s in result.steps:
        if action_key(s.action) != _ASK_KEY:
            continue
        if s.relevant:
            relevant += max(1, s.resolved or 0)
        else:
            irrelevant += 1
    return relevant, irrelevant


def asked(result: RunResult) -> int:
    """The questions a run asked: its Ask steps."""
    return sum(1 for s in result.steps if action_key(s.action) == _ASK_KEY)


def is_ambiguous(result: RunResult) -> bool:
    """Whether the run's task leaves something open (K > 0): the runs ARS and QR are about."""
    return bool(result.min_questions)


def is_clear(result: RunResult) -> bool:
    """Whether the run's task was measured for asking and leaves nothing open (K = 0)."""
    return result.min_questions == 0


def ask_run_score(result: RunResult) -> float | None:
    """ARS of one run (Ask-to-Act, section 5): ``success / (1 + |q_relevant - K| + q_irrelevant)`` in
    [0, 1]; None when the task has no K."""
    if result.min_questions is None:
        return None
    rel, irr = questions(result)
    return (1.0 if is_success(result) else 0.0) / (1 + abs(rel - result.min_questions) + irr)


def ars(results: Iterable[RunResult]) -> float:
    """Ask run score x100: the mean of :func:`ask_run_score` over ambiguous runs (K > 0) only; clear
    tasks (K = 0) are reported apart (:func:`clear_sr`, :func:`unnecessary_questions`). 0.0 for none."""
    scores = [x for x in (ask_run_score(r) for r in results if is_ambiguous(r)) if x is not None]
    return 100.0 * sum(scores) / len(scores) if scores else 0.0


def qr(results: Iterable[RunResult]) -> float:
    """Question ratio: the mean over ambiguous runs (K > 0) of ``(q_relevant + q_irrelevant) / K``, in the
    units of :func:`questions` (1.0: exactly the questions needed); 0.0 for none."""
    ratios = [sum(questions(r)) / r.min_questions for r in results if is_ambiguous(r) and r.min_questions]
    return sum(ratios) / len(ratios) if ratios else 0.0


def clear_sr(results: Iterable[RunResult]) -> float:
    """SR in percent over the clear runs (K = 0); 0.0 for none."""
    return sr(r for r in results if is_clear(r))


def unnecessary_questions(results: Iterable[RunResult]) -> int:
    """Questions asked on clear tasks (K = 0): every one was unnecessary."""
    return sum(asked(r) for r in results if is_clear(r))


def _best_match(result: RunResult) -> tuple[int, int]:
    """(matched, length) of the keypath with the highest matched/length ratio; (0, 0) without keypaths.

    Ties in the ratio are broken by the first keypath in order.
    """
    best = (0, 0)
    for keypath in result.keypaths:
        if not keypath:
            continue
        m = matched_nodes(result.steps, keypath, result.aliases)
        if best[1] == 0 or m * best[1] > best[0] * len(keypath):
            best = (m, len(keypath))
    return best


def task_progress(result: RunResult) -> float:
    """TP of one run, a fraction in [0, 1]: ``max`` over keypaths of matched nodes / keypath length.

    Nodes are matched by :func:`matched_nodes` (successful steps only, strictly in order, with alias
    normalisation). Empty keypaths are ignored; a run with no (non-empty) keypath has TP ``0.0``.
    """
    matched, length = _best_match(result)
    return matched / length if length else 0.0


FOLLOW_LIMIT_M = 50 * 0.17  # SIF: a clear S_hum task fails after 50 timesteps of following (0.17 m forward each)


def followed(result: RunResult) -> float:
    """Metres the run drove in its Follow rounds."""
    return sum(s.path_length for s in result.steps if s.action == "Follow")


def is_success(result: RunResult) -> bool:
    """Whether the run is successful (TP = 1): some non-empty keypath is matched completely, and a
    clear S_hum run followed the person no more than ``FOLLOW_LIMIT_M`` metres.

    Decided on integer counts (``matched == len(keypath)``), never by float equality.
    """
    sit = result.situated
    if sit is not None and sit.kind == "S_hum" and sit.hint == "clear" and followed(result) > FOLLOW_LIMIT_M:
        return False
    return any(keypath and matched_nodes(result.steps, keypath, result.aliases) == len(keypath)
               for keypath in result.keypaths)


def agent_length(result: RunResult) -> int:
    """L_agent: the number of planner turns including End, i.e. the number of recorded steps.

    Unusable outputs (empty action) are turns too and count.
    """
    return len(result.steps)


def expert_length(result: RunResult) -> int | None:
    """L_expert: the task's ``expert_length`` if positive, else the shortest non-empty keypath's length.

    ``None`` when neither is available (such a run can never be successful).
    """
    if result.expert_length is not None and result.expert_length > 0:
        return result.expert_length
    lengths = [len(k) for k in result.keypaths if k]
    return min(lengths) if lengths else None


def ends_with_end(result: RunResult) -> bool:
    """Whether the run's final step's action is End (the agent declared the task done).

    In homiebot an End step always succeeds, so its success flag is not looked at. ``RunResult.ended``
    is not consulted: the steps are the source of truth.
    """
    return bool(result.steps) and action_key(result.steps[-1].action) == _END_KEY


def replan_count(result: RunResult) -> int:
    """Number of re-plans in the run: steps that directly follow a failed step.

    Equivalently, the failed steps other than the last step (a failure at the last round, after
    which the run stopped, is not followed by a re-plan). Unusable outputs are failed steps too.
    """
    steps = result.steps
    return sum(1 for prev in steps[:-1] if not prev.success)


# --------------------------------------------------------------------------- aggregate metrics


def _pct(num: float, den: float) -> float:
    return 100.0 * num / den if den else 0.0


def sr(results: Iterable[RunResult]) -> float:
    """Success Rate in percent: ``100 * |S| / N``. ``0.0`` for no runs."""
    runs = list(results)
    return _pct(sum(1 for r in runs if is_success(r)), len(runs))


def plwsr(results: Iterable[RunResult]) -> float:
    """Path Length Weighted SR in percent: ``100/N * sum_{t in S} L_expert / max(L_expert, L_agent)``.

    SPL-style, following the official evaluation code and the metric's intent: an agent path
    longer than the expert's is penalised, a shorter one scores 1 (never above). The paper's prose
    states the ratio inverted (agent length over the maximum), which is not used. ``L_expert`` comes
    from :func:`expert_length` (the shortest keypath's length when the task gives no expert length);
    ``L_agent`` from :func:`agent_length`. ``0.0`` for no runs.
    """
    runs = list(results)
    total = 0.0
    for r in runs:
        if not is_success(r):
            continue
        expert = expert_length(r)
        if expert is None:
            continue
        total += expert / max(expert, agent_length(r))
    return _pct(total, len(runs))


def mean_tp(results: Iterable[RunResult]) -> float:
    """Mean Task Progress in percent: ``100/N * sum_{t in M} TP(t)``. ``0.0`` for no runs."""
    runs = list(results)
    return _pct(sum(task_progress(r) for r in runs), len(runs))


def ser(results: Iterable[RunResult]) -> float:
    """Success End Rate in percent: successful runs that end with End / runs that end with End.

    ``100 * |{t in S : ends(t)}| / |{t in M : ends(t)}|`` with ``ends`` = :func:`ends_with_end` (the
    final step's action is End). A successful run necessarily matched an ``[End]`` node, so it
    normally ends with End; requiring it in the numerator keeps SER <= 100. Runs that stopped at the
    round limit count in neither term. ``0.0`` when no run ends with End (or there are no runs).
    """
    ended = [r for r in results if ends_with_end(r)]
    return _pct(sum(1 for r in ended if is_success(r)), len(ended))


def srr(results: Iterable[RunResult]) -> float:
    """Success Re-plan Rate in percent: re-plans in successful runs / re-plans in all runs.

    ``100 * sum_{t in S} replans(t) / sum_{t in M} replans(t)`` with ``replans`` =
    :func:`replan_count` (steps directly after a failed step). The official notebook counts "failed
    steps excluding the final entry" of the parsed history; that is the same quantity except at the
    end of a trajectory, where its history omits the End turn and appends a placeholder to runs that
    hit the round limit, so it can differ by one per run. ``0.0`` when there is no re-plan at all.
    """
    runs = list(results)
    in_success = sum(replan_count(r) for r in runs if is_success(r))
    return _pct(in_success, sum(replan_count(r) for r in runs))


def error_counts(results: Iterable[RunResult]) -> dict[str, dict[str, int]]:
    """Error codes over failed steps, separately for successful and failed runs.

    Returns ``{"success": {code: n, ...}, "failed": {code: n, ...}}``; every code of
    :data:`ERROR_CODES` is present (zero included), in taxonomy order. A failed step with a code
    outside the taxonomy (e.g. a time-out category) is counted under its own key, appended after the
    standard ones; a failed step without a code is not counted. Codes are compared upper-cased.
    """
    out: dict[str, dict[str, int]] = {"success": dict.fromkeys(ERROR_CODES, 0), "failed": dict.fromkeys(ERROR_CODES, 0)}
    for r in results:
        group = out["success" if is_success(r) else "failed"]
        for s in r.steps:
            if s.success or not s.code:
                continue
            code = s.code.strip().upper()
            group[code] = group.get(code, 0) + 1
    return out


def error_proportions(results: Iterable[RunResult]) -> dict[str, dict[str, float]]:
    """:func:`error_counts` as fractions of the group's total (each group sums to 1, or is all 0.0).

    A group without any counted error has every proportion ``0.0``.
    """
    counts = error_counts(results)
    out: dict[str, dict[str, float]] = {}
    for group, by_code in counts.items():
        total = sum(by_code.values())
        out[group] = {code: (n / total if total else 0.0) for code, n in by_code.items()}
    return out


def _executed(step: StepSummary) -> bool:
    if step.success:
        return True
    return (step.code or "").strip().upper() in EXECUTION_ERROR_CODES


def action_success(results: Iterable[RunResult]) -> dict[str, tuple[int, int]]:
    """Per action (each of :data:`ACTIONS`): ``(successful executions, executions)``.

    Execution success as in the paper's Table 4: a step counts as executed when it succeeded or
    failed during execution (code E1 or E2). Steps rejected before execution (F1, F2, L1-L4, D1, D2,
    or a failure without a code) never reached the skill and are not counted, nor are unusable
    outputs. Actions are recognised with :func:`canonical_action`; End steps count like any other.
    The unit is one executed subtask (the skill's internal retries are not counted separately; the
    paper's Table 4 averages over the up-to-three attempts of each execution).
    """
    out = {a: [0, 0] for a in ACTIONS}
    for r in results:
        for s in r.steps:
            action = canonical_action(s.action)
            if action is None or not _executed(s):
                continue
            out[action][1] += 1
            if s.success:
                out[action][0] += 1
    return {a: (ok, n) for a, (ok, n) in out.items()}


def action_success_rate(results: Iterable[RunResult]) -> dict[str, float]:
    """Per action: execution success rate in percent (see :func:`action_success`); ``0.0`` if never executed."""
    return {a: _pct(ok, n) for a, (ok, n) in action_success(results).items()}


def _attr_key(attribute: str) -> str:
    return attribute.strip().lower().replace("_", "-").replace(" ", "-")


def sr_by_attribute(results: Iterable[RunResult]) -> dict[str, tuple[float, int]]:
    """For each attribute of :data:`ATTRIBUTES`: ``(SR in percent among runs of tasks with it, runs)``.

    A run belongs to every attribute its task carries (attributes overlap). Attribute names are
    compared case-insensitively with spaces/underscores read as hyphens (``"human style"`` is
    ``"human-style"``). An attribute without runs gives ``(0.0, 0)``.
    """
    runs = list(results)
    out: dict[str, tuple[float, int]] = {}
    for attribute in ATTRIBUTES:
        key = _attr_key(attribute)
        group = [r for r in runs if any(_attr_key(a) == key for a in r.attributes)]
        out[attribute] = (sr(group), len(group))
    return out


def spl(results: Iterable[RunResult]) -> float:
    """Success weighted by Path Length in percent, as SIF reports it: ``100/N * sum_i S_i * L*_i / max(L*_i, L_i)``
    over the runs whose task gives a shortest path ``L*`` (``situated.shortest_path``, metres the oracle drives
    with perfect skills); ``L_i`` is the run's path length in metres and ``S_i`` its success (:func:`is_success`).
    ``0.0`` for no such runs."""
    paths = [(r, r.situated.shortest_path) for r in results if r.situated is not None and r.situated.shortest_path]
    total = sum(best / max(best, r.path_length) for r, best in paths if best is not None and is_success(r))
    return _pct(total, len(paths))


SIF_GROUPS = ("PnP", "S_obj clear", "S_obj ambiguous", "S_hum clear", "S_hum ambiguous")


def sif_table(results: Iterable[RunResult]) -> dict[str, dict[str, float | int]]:
    """Per SIF group (:data:`SIF_GROUPS`, those with runs): ``{"runs", "SR", "SPL"}`` over its runs."""
    runs = [r for r in results if r.situated is not None]
    out: dict[str, dict[str, float | int]] = {}
    for group in SIF_GROUPS:
        members = [r for r in runs if r.situated is not None and r.situated.group == group]
        if members:
            out[group] = {"runs": len(members), "SR": sr(members), "SPL": spl(members)}
    return out


def summary(results: Iterable[RunResult]) -> dict[str, float | int]:
    """The paper's Table 2 row: ``{"runs", "tasks", "SR", "PLWSR", "TP", "SRR", "SER"}``; plus, when some run's
    task leaves things open (K > 0), ``ARS``, ``QR``, ``ambiguous`` (those runs), ``ambiguous SR`` and
    ``questions`` (the questions they asked), all over those runs only; and when some run's task was
    measured for asking but leaves nothing open (K = 0), ``clear`` (those runs), ``clear SR`` and
    ``unnecessary questions`` (every question asked on them).

    ``runs`` is the number of results, ``tasks`` the number of distinct task ids; the rates are in
    percent as computed by :func:`sr`, :func:`plwsr`, :func:`mean_tp`, :func:`srr` and :func:`ser`.
    """
    runs = list(results)
    out: dict[str, float | int] = {
        "runs": len(runs),
        "tasks": len({r.task_id for r in runs}),
        "SR": sr(runs),
        "PLWSR": plwsr(runs),
        "TP": mean_tp(runs),
        "SRR": srr(runs),
        "SER": ser(runs),
    }
    ambiguous = [r for r in runs if is_ambiguous(r)]
    clear = [r for r in runs if is_clear(r)]
    if ambiguous:  # tasks that leave things open: the asking metrics
        out.update(ARS=ars(ambiguous), QR=qr(ambiguous), ambiguous=len(ambiguous), **{"ambiguous SR": sr(ambiguous)},
                   questions=sum(asked(r) for r in ambiguous))
    if clear:  # tasks measured for asking that leave nothing open: reported apart
        out.update(clear=len(clear), **{"clear SR": clear_sr(clear), "unnecessary questions": unnecessary_questions(clear)})
    if any(r.situated is not None for r in runs):  # situated (SIF) tasks: SPL against the oracle's path
        out["SPL"] = spl(runs)
    return out


T95 = {1: 12.71, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}  # Student t, two-sided 95 %


def mean_interval(values: Sequence[float]) -> str:
    """'mean ± half-width' of the 95 % t-interval over per-run figures (the mean alone for one run)."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return f"{mean:.1f}"
    half = T95.get(len(values) - 1, 1.96) * statistics.stdev(values) / len(values) ** 0.5
    return f"{mean:.1f} ± {half:.1f}"
