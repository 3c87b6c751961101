"""Writing an export folder: image files, ``data.jsonl``, ``data.parquet``, a ``datasets`` folder
(``save_to_disk``, images embedded), ``stats.json`` and a data card (``README.md``).

Everything written depends only on the records, never on time or paths, so the same episodes give
byte-identical files."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

from homiebot.core.records import atomic_write_text
from homiebot.training.build import Built
from homiebot.training.episodes import ExportError

FORMAT_VERSION = 1


def _datasets() -> Any:
    try:
        import datasets
    except ImportError:
        raise ExportError("the export needs the 'datasets' package: pip install 'homiebot[train]'") from None
    datasets.disable_progress_bars()
    return datasets


def _card(fmt: str, built: Built, episodes: list[dict[str, Any]], split: str) -> str:
    by = {k: Counter(str(r[k]) for r in built.records) for k in ("split", "planner", "profile")}
    tasks = sorted({r["task_id"] for r in built.records})
    lines = [f"# homiebot {fmt.upper()} data", "",
             f"{len(built.records)} records from {len(episodes)} episodes of {len(tasks)} tasks (split filter: {split}).",
             "Formats and definitions: docs/training.md of homiebot.", "",
             "| counted | n |", "| --- | ---: |"]
    lines += [f"| {k} | {v} |" for k, v in sorted(built.counts.items())]
    for key, counter in by.items():
        lines += ["", f"| {key} | records |", "| --- | ---: |"] + [f"| {k} | {v} |" for k, v in sorted(counter.items())]
    lines += ["", "Files: `data.jsonl` and `data.parquet` (image paths relative to this folder), `images/`, "
              "`hf/` (`datasets.load_from_disk`, images embedded), `stats.json`.", ""]
    return "\n".join(lines)


def write_export(built: Built, fmt: str, out: Path, episodes: list[dict[str, Any]], split: str,
                 views: str = "images") -> dict[str, Any]:
    """Write the export of ``built`` into ``out`` (which must be empty or absent); returns the stats.
    ``views``: how the records give the views (``images``, or ``text`` for text-only models)."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ExportError(f"--out {out}: exists and is not an empty folder; choose a new one")
    datasets = _datasets()
    out.mkdir(parents=True, exist_ok=True)
    for rel in sorted(built.images):
        ep, src = built.images[rel]
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copyfile(ep.folder / src, target)
        except OSError as err:
            raise ExportError(f"{ep.folder / src}: cannot copy the view ({err.strerror}); is the episode folder complete?") from None
    lines = "".join(json.dumps(r, sort_keys=True) + "\n" for r in built.records)
    atomic_write_text(out / "data.jsonl", lines)
    stats = {"format": fmt, "format_version": FORMAT_VERSION, "records": len(built.records), "counts": dict(sorted(built.counts.items())),
             "episodes": len(episodes), "split": split, **({"views": views} if views != "images" else {})}
    atomic_write_text(out / "stats.json", json.dumps(stats, indent=2, sort_keys=True) + "\n")
    atomic_write_text(out / "README.md", _card(fmt, built, episodes, split))
    if not built.records:
        return stats
    rows = [json.loads(line) for line in lines.splitlines()]
    ds = datasets.Dataset.from_list(rows)
    ds.to_parquet(str(out / "data.parquet"))
    fingerprint = hashlib.sha256(lines.encode()).hexdigest()[:16]  # a content hash: state.json stays byte-identical
    local = ds.map(lambda r: {"images": [str(out / p) for p in r["images"]]}, new_fingerprint=fingerprint + "p")
    embedded = local.cast_column("images", datasets.Sequence(datasets.Image()), new_fingerprint=fingerprint)
    embedded.save_to_disk(str(out / "hf"))
    return stats
