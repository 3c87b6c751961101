"""Reading YAML files with errors that say which file and what went wrong."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def read_yaml(path: str | Path, noun: str, error: type[Exception]) -> Any:
    """Parse a YAML file; ``error(message)`` names the file when it cannot be read or parsed."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise error(f"cannot read {noun} {path}: {err.strerror}") from None
    except UnicodeDecodeError:
        raise error(f"{path}: not a text file (the {noun} must be UTF-8 YAML)") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise error(f"{path}: not valid YAML: {err}") from None
