"""Turning episodes into SFT records and DPO pairs (definitions in docs/training.md).

SFT: one record per kept round: the system text, the four views (front, left, back, right), the
round's user text, and the decision in the run's output format. Sources (a round can have both):
``success`` (a successful step of a successful episode) and ``replan`` (a successful step right
after a failed one, in any episode). Rounds naming something the planner could not have known yet
(``Episode.known_names``) are left out and counted as ``unseen``; with ``search`` such a round is
kept instead with a search label (source ``search``, see ``search_label``).

DPO: ``replan`` pairs (prompt and views of a failed round, rejected its output, chosen the next
round's successful output), and three augmentations of every kept non-End SFT round: ``order_change``
(rejected: the next kept round's decision of the same episode), ``action_change`` (the action
replaced by a name outside the action list) and ``model_change`` (the model replaced by the next
model of the same kind).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from homiebot.core.contracts import VIEW_NAMES, Action, PlannerOutput, StepRecord, Subtask
from homiebot.training.episodes import Episode, target_names
from homiebot.training.render import OFF_LIST_ACTIONS, output_format, render, same_kind_models, skill_specs, system_text

SFT_SOURCES = ("success", "replan")
DPO_SOURCES = ("replan", "order_change", "action_change", "model_change")


@dataclass
class Built:
    """Records of one format plus the counts the data card reports."""

    records: list[dict[str, Any]] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)  # per source, and the reasons rounds were left out
    images: dict[str, tuple[Episode, str]] = field(default_factory=dict)  # export path -> (episode, path in its folder)


def _images(ep: Episode, step: StepRecord, built: Built) -> list[str] | None:
    if any(v not in step.images for v in VIEW_NAMES):
        return None
    paths = []
    for view in VIEW_NAMES:
        rel = f"images/{ep.key}/round_{step.round:02d}_{view}.png"
        built.images[rel] = (ep, step.images[view])
        paths.append(rel)
    return paths


def _visible(ep: Episode, i: int, check: bool) -> bool | None:
    """Whether step i names only things the planner could know (None: the views' contents were not recorded)."""
    if not check:
        return True
    known = ep.known_names(i)
    if known is None:
        return None
    return all(n in known for n in target_names(ep.record.steps[i]))


def where(scene: dict[str, Any], name: str) -> tuple[str | None, str | None]:
    """(room, receptacle) of ``name`` in an episode's initial scene: a receptacle's own room, an object's
    receptacle (``on`` or ``in``) and that receptacle's room; None where the scene does not say."""
    recs = {str(r.get("name")): r for r in scene.get("receptacles", []) if isinstance(r, dict)}
    if name in recs:
        room = recs[name].get("room")
        return (str(room) if room else None), None
    obj = next((o for o in scene.get("objects", []) if isinstance(o, dict) and o.get("name") == name), None)
    if obj is None:
        return None, None
    holder = obj.get("on") or obj.get("in")
    room = recs.get(str(holder), {}).get("room") if holder else None
    return (str(room) if room else None), (str(holder) if holder else None)


def search_label(ep: Episode, i: int) -> tuple[str, str] | None:
    """For step i naming something not known yet: (the first such name, where to look for it), else None.

    Where to look is the room that held it when the episode began, while no earlier subtask reached that
    room with a successful Go to; then the receptacle it lay on or in, when that name is known and was
    not reached either; None when both were reached or neither is known (the round stays left out).
    Only names the planner knew at step i are ever returned as the place to look."""
    known = ep.known_names(i)
    if known is None:
        return None
    unseen = [n for n in target_names(ep.record.steps[i]) if n not in known]
    if not unseen:
        return None
    reached = {s.output.subtask.target for s in ep.record.steps[:i]
               if s.output is not None and s.feedback.success and s.output.subtask.action is Action.GO_TO}
    room, holder = where(ep.record.scene, unseen[0])
    for place in (room, holder):
        if place and place in known and place not in reached:
            return unseen[0], place
    return None


def _search_model(ep: Episode) -> str | None:
    """The run's navigation model for looking around: one described as good for rooms, else any Go to model."""
    specs = skill_specs(ep.record)
    nav = [s for s in specs
           if (s.get("actions") is None and "navigation" in str(s.get("name", ""))) or "Go to" in (s.get("actions") or [])]
    return next((str(s["model"]) for s in nav if "room" in str(s.get("description", "")).lower()),
                next((str(s["model"]) for s in nav), None))


def _meta(ep: Episode, step: StepRecord) -> dict[str, Any]:
    r = ep.record
    return {"episode": ep.key, "task_id": r.task_id or "", "round": step.round, "split": ep.split, "planner": r.planner,
            "profile": ep.profile, "seed": r.seed}


def _sft_sources(ep: Episode, i: int) -> list[str]:
    step = ep.record.steps[i]
    if step.output is None or not step.feedback.success:
        return []
    sources = []
    if ep.successful:
        sources.append("success")
    if i > 0 and not ep.record.steps[i - 1].feedback.success:
        sources.append("replan")
    return sources


def kept_rounds(ep: Episode, sources: tuple[str, ...], check_visible: bool, counts: Counter,
                search: bool = False) -> list[tuple[int, list[str]]]:
    """(step index, its SFT sources) for the rounds an SFT export keeps, counting why others were left out.
    With ``search``, a round naming something not known yet is kept with the sources ``["search"]`` when
    ``search_label`` gives it a place to look."""
    kept = []
    for i, step in enumerate(ep.record.steps):
        found = [s for s in _sft_sources(ep, i) if s in sources]
        if not found:
            continue
        visible = _visible(ep, i, check_visible)
        if visible is False and search and search_label(ep, i) is not None and step.images:
            kept.append((i, ["search"]))
            continue
        if visible is False:
            counts["left_out_unseen"] += 1
            continue
        if visible is None:
            counts["left_out_views_not_recorded"] += 1
            continue
        if not step.images:
            counts["left_out_no_images"] += 1
            continue
        kept.append((i, found))
    return kept


def _user(step: StepRecord) -> str:
    return step.prompt


def build_sft(episodes: list[Episode], sources: tuple[str, ...] = SFT_SOURCES, check_visible: bool = True,
              search: bool = False) -> Built:
    """SFT conversation records (TRL ``messages`` + ``images``; LLaVA ``conversations`` + ``image``).
    ``search``: rounds naming something not known yet get a search label instead of being left out."""
    built = Built()
    for ep in episodes:
        for i, found in kept_rounds(ep, sources, check_visible, built.counts, search):
            step = ep.record.steps[i]
            images = _images(ep, step, built)
            if images is None:
                built.counts["left_out_no_images"] += 1
                continue
            assert step.output is not None
            fmt = output_format(step.raw_output)
            output, extra = step.output, {}
            if found == ["search"]:
                label = search_label(ep, i)
                assert label is not None
                output = PlannerOutput(analysis=f"the {label[0]} is not in view yet; I look for it at the {label[1]}",
                                       subtask=Subtask(action=Action.GO_TO, target=label[1]), model=_search_model(ep))
                extra = {"searched_for": label[0], "original": render(step.output, fmt)}
            answer = render(output, fmt)
            system = system_text(ep.record, fmt)
            built.records.append({
                "id": f"{ep.key}/round_{step.round:02d}", **_meta(ep, step), "source": found, **extra,
                "known": sorted(ep.known_names(i) or []),  # names the planner could know this round (candidates)
                "rooms": sorted(ep.rooms()),
                "messages": [{"role": "system", "content": system}, {"role": "user", "content": _user(step)},
                             {"role": "assistant", "content": answer}],
                "images": images,
                "conversations": [{"from": "human", "value": "<image>\n" * len(images) + _user(step)},
                                  {"from": "gpt", "value": answer}],
            })
            for s in found:
                built.counts[s] += 1
    return built


def _pair(ep: Episode, step: StepRecord, images: list[str], source: str, chosen: str, rejected: str, built: Built,
          chosen_round: int) -> None:
    fmt = output_format(step.raw_output) if step.output is not None else output_format(chosen)
    built.records.append({
        "id": f"{ep.key}/round_{step.round:02d}/{source}", **_meta(ep, step), "source": source, "chosen_round": chosen_round,
        "prompt": [{"role": "system", "content": system_text(ep.record, fmt)}, {"role": "user", "content": _user(step)}],
        "chosen": [{"role": "assistant", "content": chosen}], "rejected": [{"role": "assistant", "content": rejected}],
        "images": images,
    })
    built.counts[source] += 1


def build_dpo(episodes: list[Episode], sources: tuple[str, ...] = DPO_SOURCES, check_visible: bool = True) -> Built:
    """DPO preference pairs (TRL conversational ``prompt`` / ``chosen`` / ``rejected`` + ``images``)."""
    built = Built()
    for ep in episodes:
        steps = ep.record.steps
        if "replan" in sources:
            for i in range(len(steps) - 1):
                failed, fixed = steps[i], steps[i + 1]
                if failed.feedback.success or fixed.output is None or not fixed.feedback.success:
                    continue
                visible = _visible(ep, i + 1, check_visible)
                if not visible:
                    built.counts["left_out_unseen" if visible is False else "left_out_views_not_recorded"] += 1
                    continue
                images = _images(ep, failed, built)
                if images is None:
                    built.counts["left_out_no_images"] += 1
                    continue
                fmt = output_format(fixed.raw_output)
                rejected = render(failed.output, fmt) if failed.output is not None else failed.raw_output
                _pair(ep, failed, images, "replan", render(fixed.output, fmt), rejected, built, fixed.round)
        augment = [s for s in ("order_change", "action_change", "model_change") if s in sources]
        if not augment:
            continue
        kept = [i for i, _ in kept_rounds(ep, SFT_SOURCES, check_visible, Counter())]
        for k, i in enumerate(kept):
            step = steps[i]
            out = step.output
            assert out is not None
            if out.subtask.action is Action.END:
                continue  # End is only ever rejected, never chosen
            images = _images(ep, step, built)
            if images is None:
                continue
            fmt = output_format(step.raw_output)
            chosen = render(out, fmt)
            if "order_change" in augment and k + 1 < len(kept):
                nxt = steps[kept[k + 1]].output
                assert nxt is not None
                if nxt.subtask != out.subtask:
                    _pair(ep, step, images, "order_change", chosen, render(nxt, fmt), built, step.round)
            if "action_change" in augment:
                _pair(ep, step, images, "action_change", chosen,
                      render(out, fmt, action=OFF_LIST_ACTIONS[out.subtask.action.value]), built, step.round)
            if "model_change" in augment and out.model:
                others = same_kind_models(ep.record, out.model, out.subtask.action.value)
                if others:
                    _pair(ep, step, images, "model_change", chosen, render(out, fmt, model=others[0]), built, step.round)
    return built
