"""Run every command of the ```bash blocks of README.md and docs/*.md, as shown.

Each document gets a fresh temporary folder that looks like a checkout to its commands (``config/``
linked in, ``homiebot`` and ``python`` from the virtualenv first on PATH); its commands run there in
order, each through ``bash -c``. A command passes when it exits 0 (or with a status its annotation
allows). Commands that cannot run here, long campaigns, servers and commands that read a campaign's
output are listed in ``tools/docs_check.yaml`` under their exact text (see that file).

    python tools/docs_check.py                 # run everything (make docs-check)
    python tools/docs_check.py --list          # only extract and show what would run
    python tools/docs_check.py README.md:44    # only the commands of the block at that line (or a file)
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
ANNOTATIONS = Path(__file__).with_suffix(".yaml")
LINKED = ("config",)  # what the documented commands read from a checkout
DEFAULT_LIMIT = 300.0  # s for an ordinary command: more means it hangs
READY_TIMEOUT = 120.0  # s for a server to print its ready line
TAIL_LINES = 25
# A campaign stopped at its limit passes only if its output shows none of these.
ERROR_SIGNS = re.compile(r"Traceback \(most recent call last\)|^\w*(Error|Exception): ", re.M)
FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")
# every process group started and not yet stopped, so that an interrupted check leaves nothing running
RUNNING: set[subprocess.Popen] = set()


@dataclass
class Block:
    path: str  # relative to ROOT
    line: int  # of the opening fence
    lang: str
    lines: list[str]


@dataclass
class Command:
    path: str
    line: int  # of its first line
    text: str  # as shown, heredoc body included
    key: str  # the annotation key: first line without its trailing comment, spaces collapsed
    block: int  # the block's fence line


@dataclass
class Result:
    status: str  # PASS, FAIL or SKIP
    note: str = ""
    seconds: float = 0.0
    stopped: bool = False  # a campaign stopped at its limit: its output is incomplete
    tail: str = ""


@dataclass
class Server:
    command: Command
    proc: subprocess.Popen
    log: Path


@dataclass
class Annotation:
    skip: str | None = None
    limit: float | None = None
    needs: list[str] = field(default_factory=list)
    ready: list[str] = field(default_factory=list)  # a server: regexes of its ready lines, all must show; a group named url is fetched
    exit: list[int] = field(default_factory=lambda: [0])
    why: str = ""


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks(path: Path) -> list[Block]:
    """Every fenced block of a Markdown file, labelled or not."""
    out: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    rel = str(path.relative_to(ROOT))
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, lang, body = i, m.group(2), []
        i += 1
        while i < len(lines) and not FENCE.match(lines[i]):
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise ValueError(f"{rel}:{start + 1}: code block never closed")
        out.append(Block(rel, start + 1, lang, body))
        i += 1
    return out


def strip_comment(line: str) -> str:
    """The line without a trailing shell comment (a # after a blank, outside quotes)."""
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def command_key(line: str) -> str:
    return " ".join(strip_comment(line).split())


def commands(block: Block) -> list[Command]:
    """The commands of a bash block: one per line, with backslash continuations and heredoc bodies
    joined to their line; blank and comment lines are not commands."""
    out: list[Command] = []
    lines = block.lines
    i = 0
    while i < len(lines):
        first = lines[i]
        line_no = block.line + 1 + i
        i += 1
        if not first.strip() or first.lstrip().startswith("#"):
            continue
        text = [first]
        while strip_comment(text[-1]).endswith("\\") and i < len(lines):
            text.append(lines[i])
            i += 1
        here = HEREDOC.search(strip_comment(first))
        if here:
            while i < len(lines) and lines[i].strip() != here.group(2):
                text.append(lines[i])
                i += 1
            if i == len(lines):
                raise ValueError(f"{block.path}:{line_no}: heredoc {here.group(2)} never ends")
            text.append(lines[i])
            i += 1
        out.append(Command(block.path, line_no, "\n".join(text), command_key(first), block.line))
    return out


def all_blocks() -> list[Block]:
    return [b for doc in documents() for b in blocks(doc)]


def all_commands() -> list[Command]:
    return [c for b in all_blocks() if b.lang == "bash" for c in commands(b)]


def program_names(cmds: list[Command]) -> set[str]:
    return {c.key.split()[0] for c in cmds if c.key}


def unlabelled_command_blocks() -> list[Block]:
    """Unlabelled blocks with a line that starts like a documented command (output samples and
    diagrams do not)."""
    names = program_names(all_commands())
    return [b for b in all_blocks() if not b.lang
            and any(line.split()[0] in names for line in b.lines if line.strip() and len(line.split()) > 1)]


def load_annotations(path: Path = ANNOTATIONS) -> dict[str, Annotation]:
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of command -> annotation")
    out: dict[str, Annotation] = {}
    for key, spec in data.items():
        if not isinstance(spec, dict):
            raise ValueError(f"{path}: {key!r}: expected a mapping (skip, limit, needs, ready, exit, why)")
        unknown = set(spec) - {"skip", "limit", "needs", "ready", "exit", "why"}
        if unknown:
            raise ValueError(f"{path}: {key!r}: unknown fields {sorted(unknown)}")
        needs = spec.get("needs", [])
        exits = spec.get("exit", [0])
        ready = spec.get("ready", [])
        ann = Annotation(skip=spec.get("skip"), limit=spec.get("limit"), needs=[needs] if isinstance(needs, str) else list(needs),
                         ready=[ready] if isinstance(ready, str) else list(ready), exit=[exits] if isinstance(exits, int) else list(exits), why=spec.get("why", ""))
        if ann.skip is not None and (not isinstance(ann.skip, str) or not ann.skip.strip()):
            raise ValueError(f"{path}: {key!r}: a skip needs its reason")
        if ann.limit is not None and not ann.why:
            raise ValueError(f"{path}: {key!r}: a limited campaign needs a 'why'")
        out[" ".join(str(key).split())] = ann
    return out


def annotation_problems(cmds: list[Command], notes: dict[str, Annotation]) -> list[str]:
    """Annotations for commands no document shows any more, and dependencies on such commands."""
    keys = {c.key for c in cmds}
    problems = [f"stale annotation: no document has the command {k!r}" for k in notes if k not in keys]
    for k, ann in notes.items():
        problems += [f"{k!r} needs {n!r}, which no document has" for n in ann.needs if n not in keys]
    return problems


class Runner:
    """Runs one document's commands; documents may run side by side, each with its own Runner."""

    def __init__(self, notes: dict[str, Annotation], env: dict[str, str], default_limit: float,
                 results: list[tuple[Command, Result]], lock: threading.Lock) -> None:
        self.notes = notes
        self.env = env
        self.default_limit = default_limit
        self.results = results
        self.lock = lock
        self.leftovers: list[subprocess.Popen] = []

    def run_document(self, cmds: list[Command], keep: bool) -> None:
        work = Path(tempfile.mkdtemp(prefix="docs-check-"))
        for name in LINKED:
            (work / name).symlink_to(ROOT / name)
        home = work.parent / f"{work.name}.home"  # what commands write under ~ (e.g. ~/.ray) stays out of the real one
        home.mkdir()
        self.env = {**self.env, "HOME": str(home)}
        done: dict[str, tuple[Command, Result]] = {}  # by key: the latest run of that command in this document
        servers: list[Server] = []
        block = None
        try:
            for cmd in cmds:
                if cmd.block != block or self.notes.get(cmd.key, Annotation()).ready:
                    self.stop_servers(servers)  # a block's next server replaces the one before
                    block = cmd.block
                result = self.run_command(cmd, work, done, servers)
                done[cmd.key] = (cmd, result)
                self.report(cmd, result)
            self.stop_servers(servers)
        finally:
            for server in servers:
                self.stop(server.proc)
            for proc in self.leftovers:  # daemons a command started and left running (a Ray head)
                self.stop(proc)
            if keep:
                print(f"  (kept {work})")
            else:
                shutil.rmtree(work, ignore_errors=True)
                shutil.rmtree(home, ignore_errors=True)

    def run_command(self, cmd: Command, work: Path, done: dict[str, tuple[Command, Result]], servers: list[Server]) -> Result:
        ann = self.notes.get(cmd.key, Annotation())
        if ann.skip:
            return Result("SKIP", ann.skip)
        present = [n for n in ann.needs if n in done]  # a list may name the lines of several documents
        if ann.needs and not present:
            return Result("SKIP", f"needs the output of {ann.needs[0]!r}, which no earlier line of {cmd.path} runs")
        for need in present:
            dep, res = done[need]
            if res.status != "PASS" or res.stopped:
                how = "stopped at its time limit" if res.stopped else {"SKIP": "skipped", "FAIL": "failed"}[res.status]
                return Result("SKIP", f"needs the output of {dep.path}:{dep.line} ({how})")
        if ann.ready:
            return self.start_server(cmd, ann, work, servers)
        if cmd.key.startswith("export "):
            return self.export(cmd, work)
        return self.run_plain(cmd, ann, work)

    def export(self, cmd: Command, work: Path) -> Result:
        """`export` lines set the environment of the document's next commands, as in one shell."""
        started = time.monotonic()
        proc = subprocess.run(["bash", "-c", f"{cmd.text}\nenv -0"], cwd=work, env=self.env, capture_output=True, timeout=60)
        if proc.returncode != 0:
            return Result("FAIL", f"exit {proc.returncode}", time.monotonic() - started, tail=tail(proc.stderr.decode(errors="replace")))
        pairs = (item.partition("=") for item in proc.stdout.decode(errors="replace").split("\0") if "=" in item)
        self.env = {k: v for k, _, v in pairs}
        return Result("PASS", "sets the environment of the next commands", time.monotonic() - started)

    def popen(self, cmd: Command, work: Path, log: Path) -> subprocess.Popen:
        with log.open("wb") as out:
            # a session of its own: the command and everything it starts are stopped together
            proc = subprocess.Popen(["bash", "-c", cmd.text], cwd=work, env=self.env, stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        RUNNING.add(proc)
        return proc

    def run_plain(self, cmd: Command, ann: Annotation, work: Path) -> Result:
        log = work.parent / f"{work.name}.log"
        started = time.monotonic()
        proc = self.popen(cmd, work, log)
        limit = ann.limit if ann.limit is not None else self.default_limit
        try:
            code = proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            output = read(log)  # as it was when the limit hit: what a stopped command prints after is not its progress
            self.stop(proc, signal.SIGINT)
            seconds = time.monotonic() - started
            if ann.limit is None:
                return Result("FAIL", f"did not finish within {limit:.0f} s (stopped)", seconds, tail=tail(output))
            if ERROR_SIGNS.search(output):
                return Result("FAIL", f"an error while running (stopped at its {limit:.0f} s limit)", seconds, tail=tail(output))
            last = next((ln.strip() for ln in reversed(re.split(r"[\r\n]", output)) if ln.strip()), "no output yet")
            return Result("PASS", f"still running without an error at its {limit:.0f} s limit, stopped; last: {last[:90]}",
                          seconds, stopped=True)
        finally:
            output = read(log)
            log.unlink(missing_ok=True)
        if group_alive(proc.pid):
            self.leftovers.append(proc)
        else:
            RUNNING.discard(proc)
        seconds = time.monotonic() - started
        if code in ann.exit:
            return Result("PASS", "" if code == 0 else f"exit {code}, as documented", seconds)
        return Result("FAIL", f"exit {code}", seconds, tail=tail(output))

    def start_server(self, cmd: Command, ann: Annotation, work: Path, servers: list[Server]) -> Result:
        """Start a long-running command in the background; it passes once its ready line shows (and
        the URL in it answers HTTP) and stays up for the block's following commands."""
        log = work.parent / f"{work.name}.server{len(servers)}.log"
        started = time.monotonic()
        proc = self.popen(cmd, work, log)
        patterns = [re.compile(r, re.M) for r in ann.ready]
        url = None
        while True:
            output = read(log)
            matches = [p.search(output) for p in patterns]
            if all(matches):
                url = next((m.group("url") for m in matches if m is not None and "url" in m.re.groupindex), None)
                break
            if proc.poll() is not None:
                return Result("FAIL", f"exit {proc.returncode} before its ready line", time.monotonic() - started, tail=tail(output))
            if time.monotonic() - started > READY_TIMEOUT:
                self.stop(proc)
                missing = [p.pattern for p, m in zip(patterns, matches) if m is None]
                return Result("FAIL", f"no ready line {missing} within {READY_TIMEOUT:.0f} s", time.monotonic() - started,
                              tail=tail(output))
            time.sleep(0.2)
        note = "ready; stays up for the block's next commands"
        if url is not None:
            problem = http_problem(url)
            if problem:
                self.stop(proc)
                return Result("FAIL", f"{url}: {problem}", time.monotonic() - started, tail=tail(read(log)))
            note = f"{url} answers HTTP; stays up for the block's next commands"
        servers.append(Server(cmd, proc, log))
        return Result("PASS", note, time.monotonic() - started)

    def stop_servers(self, servers: list[Server]) -> None:
        """Stop the block's servers as Ctrl-C would; one that died on its own meanwhile fails."""
        while servers:
            server = servers.pop()
            died = server.proc.poll()
            self.stop(server.proc, signal.SIGINT)
            output = read(server.log)
            server.log.unlink(missing_ok=True)
            if died is not None:  # it passed when it became ready: that result becomes this failure
                with self.lock:
                    self.results[:] = [(c, r) for c, r in self.results if c is not server.command]
                self.report(server.command, Result("FAIL", f"exit {died} while its block's next commands ran", tail=tail(output)),
                            "(server) ")

    @staticmethod
    def stop(proc: subprocess.Popen, sig: signal.Signals = signal.SIGTERM) -> None:
        """Stop a command we started and what it started (its process group, named by its PID)."""
        for s, grace in ((sig, 10.0), (signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(proc.pid, s)
            except ProcessLookupError:
                pass
            deadline = time.monotonic() + grace
            while time.monotonic() < deadline:
                if proc.poll() is not None and not group_alive(proc.pid):
                    RUNNING.discard(proc)
                    return
                time.sleep(0.2)

    def report(self, cmd: Command, result: Result, prefix: str = "") -> None:
        shown = cmd.key if "\n" not in cmd.text else cmd.key + " ..."
        note = f"  ({result.note})" if result.note else ""
        text = f"{cmd.path}:{cmd.line}  {result.status}  {result.seconds:6.1f}s  {prefix}{shown}{note}"
        if result.status == "FAIL" and result.tail:
            text += "\n" + "\n".join("    | " + ln for ln in result.tail.splitlines())
        with self.lock:
            self.results.append((cmd, result))
            print(text, flush=True)


def group_alive(pgid: int) -> bool:
    """Whether a process of that group still runs (zombies left to a non-reaping init do not count)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            return True
    return False


def read(log: Path) -> str:
    try:
        return log.read_bytes().decode("utf-8", "replace")
    except FileNotFoundError:
        return ""


def tail(output: str, lines: int = TAIL_LINES) -> str:
    # progress bars redraw with \r: keep what the last redraw shows
    shown = [ln.rsplit("\r", 1)[-1] for ln in output.rstrip().splitlines()]
    return "\n".join(shown[-lines:])


def http_problem(url: str) -> str | None:
    if not re.match(r"https?://127\.0\.0\.1[:/]", url):
        return "not an address on 127.0.0.1"
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(url, timeout=10) as reply:
                return None if reply.status < 500 else f"HTTP {reply.status}"
        except urllib.error.HTTPError as err:
            return None if err.code < 500 else f"HTTP {err.code}"
        except OSError as err:
            if time.monotonic() > deadline:
                return f"no HTTP answer ({err})"
            time.sleep(0.5)


def environment(domain_id: int) -> dict[str, str]:
    env = dict(os.environ)
    venv = ROOT / ".venv"
    if (venv / "bin").is_dir():
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env["VIRTUAL_ENV"] = str(venv)
    env.setdefault("MUJOCO_GL", "osmesa")
    env.setdefault("PYOPENGL_PLATFORM", "osmesa")
    env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"  # a graph started here never reaches another machine
    env["ROS_DOMAIN_ID"] = str(domain_id)  # one per document: graphs of documents run side by side never meet
    env["PYTHONUNBUFFERED"] = "1"  # campaigns' progress shows before their limit
    env.pop("RAY_ADDRESS", None)
    return env


def select(cmds: list[Command], wanted: list[str]) -> list[Command]:
    if not wanted:
        return cmds
    out = []
    for c in cmds:
        for w in wanted:
            path, _, line = w.partition(":")
            if c.path == path and (not line or int(line) in (c.line, c.block)):
                out.append(c)
                break
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run every command of the docs' bash blocks, as shown.")
    parser.add_argument("only", nargs="*", help="FILE or FILE:LINE (a command's or its block's line) to run only those")
    parser.add_argument("--list", action="store_true", help="show the commands and their annotations; run nothing")
    parser.add_argument("--keep", action="store_true", help="keep each document's temporary folder")
    parser.add_argument("--limit", type=float, default=DEFAULT_LIMIT, help="seconds before an ordinary command fails as hung")
    parser.add_argument("--jobs", type=int, default=2, help="documents run side by side (default 2)")
    parser.add_argument("--domain-id", type=int, default=170,
                        help="ROS_DOMAIN_ID of the first document's graphs; the next documents take the next ones (default 170)")
    args = parser.parse_args(argv)

    cmds = all_commands()
    notes = load_annotations()
    problems = annotation_problems(cmds, notes)
    problems += [f"{b.path}:{b.line}: a block of commands without the bash label" for b in unlabelled_command_blocks()]
    chosen = select(cmds, args.only)
    if args.list:
        for c in chosen:
            ann = notes.get(c.key)
            print(f"{c.path}:{c.line}  {c.key}" + (f"   [{describe(ann)}]" if ann else ""))
    for p in problems:
        print(f"docs-check: {p}")
    if args.list or problems:
        return 1 if problems else 0

    started = time.monotonic()
    docs = [str(d.relative_to(ROOT)) for d in documents()]
    by_doc: dict[str, list[Command]] = {}
    for c in chosen:
        by_doc.setdefault(c.path, []).append(c)
    results: list[tuple[Command, Result]] = []
    lock = threading.Lock()
    # the longest documents first, so that the short ones fill the other lanes
    queue = sorted(by_doc, key=lambda d: -len(by_doc[d]))

    def lane() -> None:
        while True:
            with lock:
                if not queue:
                    return
                doc = queue.pop(0)
            runner = Runner(notes, environment(args.domain_id + docs.index(doc)), args.limit, results, lock)
            runner.run_document(by_doc[doc], args.keep)

    signal.signal(signal.SIGTERM, _interrupt)  # a CI timeout stops the check as Ctrl-C does
    lanes = [threading.Thread(target=lane, daemon=True) for _ in range(max(1, args.jobs))]
    for t in lanes:
        t.start()
    try:
        for t in lanes:
            while t.is_alive():
                t.join(0.5)
    except KeyboardInterrupt:
        print("docs-check: interrupted; stopping what it started")
        for proc in list(RUNNING):
            Runner.stop(proc, signal.SIGINT)
        return 130
    counts = {s: sum(1 for _, r in results if r.status == s) for s in ("PASS", "FAIL", "SKIP")}
    print(f"\ndocs-check: {counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped, "
          f"{len(results)} commands in {len(by_doc)} documents, {time.monotonic() - started:.0f} s")
    failed = [(c, r) for c, r in results if r.status == "FAIL"]
    for c, r in failed:
        print(f"  FAIL {c.path}:{c.line}  {c.key}  ({r.note})")
    return 1 if failed else 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def describe(ann: Annotation) -> str:
    parts: list[Any] = []
    if ann.skip:
        parts.append(f"skip: {ann.skip}")
    if ann.limit is not None:
        parts.append(f"limit {ann.limit:.0f} s: {ann.why}")
    if ann.needs:
        parts.append("needs " + ", ".join(ann.needs))
    if ann.ready:
        parts.append(f"server, ready at {ann.ready}")
    if ann.exit != [0]:
        parts.append(f"exit {ann.exit}")
    return "; ".join(parts)


if __name__ == "__main__":
    sys.exit(main())
