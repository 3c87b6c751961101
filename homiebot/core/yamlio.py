"""Reading YAML files, and validation errors, with messages that say which file and field went wrong."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

# libyaml's C parser where PyYAML was built with it (several times faster on scene files), else the pure-Python one
_SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_yaml(text: str) -> Any:
    """``yaml.safe_load`` through the fastest safe loader available (raises ``yaml.YAMLError``)."""
    return yaml.load(text, Loader=_SafeLoader)  # noqa: S506 - a safe loader


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
        return parse_yaml(text)
    except yaml.YAMLError as err:
        raise error(f"{path}: not valid YAML: {err}") from None


def format_validation_error(err: ValidationError, prefix: str = "") -> str:
    """One indented line per problem: ``  field.path: message`` (field paths start with ``prefix``)."""
    lines = []
    for item in err.errors():
        loc = ((prefix,) if prefix else ()) + tuple(item["loc"])
        where = ".".join(str(p) for p in loc) or "(top level)"
        msg = item["msg"].removeprefix("Value error, ")
        lines.append(f"  {where}: {msg}")
    return "\n".join(lines)
