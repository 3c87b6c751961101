"""Checks of a ``RunTask`` goal before anything runs: what a hostile or careless client can send.

A goal must ask for something (an empty goal is refused, never the scene-0 task); a ``task_file`` must be
a regular, readable file of at most ``MAX_TASK_BYTES`` (``/dev/zero`` or a FIFO would fill the task
manager's memory or block its queue: the file is ``stat``-ed first, opened without blocking and read
``MAX_TASK_BYTES + 1`` bytes at most); a task (from ``task_yaml`` or the file) is YAML of at most
``MAX_TASK_DEPTH`` levels and ``MAX_TASK_NODES`` values (deeper text raised RecursionError); its instruction is
not blank; a scene seed is a whole number below 2**32. Every check raises ``GoalError`` with the reason,
which the task manager turns into ``INVALID_TASK`` and a ``failed`` status event.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import Any

import yaml

from homiebot.core.yamlio import parse_yaml

MAX_TASK_BYTES = 1 << 20  # a task file or task_yaml (a scene inline included) is far smaller
MAX_TASK_DEPTH = 32  # levels of nesting in a task (a scene inline needs about 6)
MAX_TASK_NODES = 200_000  # values in a task, aliases counted each time they are used
MAX_SEED = 2**32 - 1  # a scene seed, as a RunTask seed


class GoalError(ValueError):
    """A goal that cannot be read as a submission (its message says which field and why)."""


def check_seed(text: str, what: str = "scene") -> int:
    """A seed given as digits: its value, or GoalError when it is out of range (checked on the digits, so
    that a number of thousands of digits is never converted)."""
    digits = text.strip().lstrip("0") or "0"
    if len(digits) > len(str(MAX_SEED)) or int(digits) > MAX_SEED:
        shown = text.strip() if len(text.strip()) <= 24 else f"{text.strip()[:12]}... ({len(text.strip())} digits)"
        raise GoalError(f"{what} {shown} is not a seed: a seed is a whole number from 0 to {MAX_SEED}")
    return int(digits)


def _depth_and_size(value: Any) -> tuple[int, int]:
    """The nesting depth of parsed YAML and its number of values, counted without recursion; stops counting once
    either passes its limit (aliases may make a small text a huge tree)."""
    deepest, nodes, stack = 0, 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        nodes += 1
        deepest = max(deepest, depth)
        if deepest > MAX_TASK_DEPTH or nodes > MAX_TASK_NODES:
            break
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for pair in item.items() for v in pair)
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return deepest, nodes


def parse_task(text: str, what: str) -> dict[str, Any]:
    """A task's YAML (or JSON) text as a mapping, or GoalError saying why it is not one."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_TASK_BYTES:
        raise GoalError(f"{what} has more than {MAX_TASK_BYTES} bytes: a task is far smaller")
    try:
        data = parse_yaml(text)
    except RecursionError:
        raise GoalError(f"{what} is nested too deeply (at most {MAX_TASK_DEPTH} levels)") from None
    except yaml.YAMLError as err:
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        if "nesting depth" in str(err):
            raise GoalError(f"{what} is nested too deeply (at most {MAX_TASK_DEPTH} levels)") from None
        raise GoalError(f"{what} is not YAML or JSON: {first}") from None
    except ValueError as err:  # e.g. an integer of more digits than Python converts
        raise GoalError(f"{what} is not a task: {str(err).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise GoalError(f"{what} must be a task: a mapping with at least an instruction")
    depth, nodes = _depth_and_size(data)
    if depth > MAX_TASK_DEPTH:
        raise GoalError(f"{what} is nested too deeply (at most {MAX_TASK_DEPTH} levels)")
    if nodes > MAX_TASK_NODES:
        raise GoalError(f"{what} has more than {MAX_TASK_NODES} values: a task is far smaller")
    check_task(data, what)
    return data


def check_task(data: dict[str, Any], what: str) -> None:
    """GoalError for a task whose instruction is blank or whose scene seed is out of range (the rest is the
    task model's to check)."""
    instruction = data.get("instruction")
    if isinstance(instruction, str) and not instruction.strip():
        raise GoalError(f"{what}: the instruction is empty; say what the robot should do")
    seed = data.get("scene_seed")
    if isinstance(seed, int) and not isinstance(seed, bool) and not 0 <= seed <= MAX_SEED:
        raise GoalError(f"{what}: scene_seed {seed if abs(seed) < 10**24 else '(a huge number)'} is not a seed: "
                        f"a seed is a whole number from 0 to {MAX_SEED}")


def read_task_file(path: str) -> str:
    """The text of a task file: a regular, readable UTF-8 file of at most MAX_TASK_BYTES, or GoalError. The path
    is checked with ``stat`` before it is opened, opened without blocking (a FIFO swapped in meanwhile does not
    hang the caller) and checked again on the open file."""
    try:
        info = os.stat(path)
    except OSError as err:
        raise GoalError(f"cannot read task file {path}: {err.strerror or err}") from None
    _check_file(path, info)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        raise GoalError(f"cannot read task file {path}: {err.strerror or err}") from None
    try:
        _check_file(path, os.fstat(fd))
        chunks, left = [], MAX_TASK_BYTES + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as err:
        message = "not a file that can be read now" if err.errno == errno.EAGAIN else err.strerror or str(err)
        raise GoalError(f"cannot read task file {path}: {message}") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > MAX_TASK_BYTES:
        raise GoalError(f"task file {path} has more than {MAX_TASK_BYTES} bytes: a task file is far smaller")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise GoalError(f"{path}: not a text file (the task file must be UTF-8 YAML)") from None


def _check_file(path: str, info: os.stat_result) -> None:
    if not stat.S_ISREG(info.st_mode):
        kind = ("a directory" if stat.S_ISDIR(info.st_mode) else "a FIFO" if stat.S_ISFIFO(info.st_mode)
                else "a device" if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode) else "a socket" if stat.S_ISSOCK(info.st_mode)
                else "not a regular file")
        raise GoalError(f"task file {path} is {kind}: give a regular YAML file")
    if info.st_size > MAX_TASK_BYTES:
        raise GoalError(f"task file {path} has {info.st_size} bytes; at most {MAX_TASK_BYTES} are accepted (a task file is far smaller)")


def task_file_data(path: str) -> dict[str, Any]:
    """A task file read and parsed under the limits above (GoalError otherwise)."""
    return parse_task(read_task_file(path), f"task file {path}")

