"""The rerun web viewer served on one address (127.0.0.1 by default), by rerun's own command.

The SDK's in-process servers listen on every interface; the ``rerun`` command takes ``--bind``, so
it serves here: a gRPC proxy that the episode streams to and the web viewer that reads from it.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from homiebot.viz import VIZ_EXTRA_HINT, VizUnavailable


def free_port(host: str) -> int:
    """A TCP port nothing listens on at ``host`` now."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def rerun_command() -> str:
    """The ``rerun`` executable shipped in the rerun-sdk wheel (the binary itself, not the Python
    launcher in bin/, so that stopping it stops the server)."""
    try:
        import rerun_cli

        shipped = Path(rerun_cli.__file__).with_name("rerun")
    except ImportError:
        shipped = Path("/nonexistent")
    found = str(shipped) if shipped.exists() else shutil.which("rerun")
    if not found:
        raise VizUnavailable(f"the rerun command is missing (part of rerun-sdk): {VIZ_EXTRA_HINT}")
    return found


class WebViewer:
    """A running ``rerun --serve-web`` process: ``grpc_url`` to stream to, ``url`` to open in a browser."""

    def __init__(self, host: str = "127.0.0.1", grpc_port: int | None = None, web_port: int | None = None,
                 source: str | None = None, memory_limit: str = "1GiB") -> None:
        self.host = host
        self.grpc_port = grpc_port or free_port(host)
        self.web_port = web_port or free_port(host)
        cmd = [rerun_command(), "--serve-web", "--bind", host, "--port", str(self.grpc_port),
               "--web-viewer-port", str(self.web_port), "--server-memory-limit", memory_limit]
        if source:
            cmd.append(source)  # a recording to show instead of a live stream
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     start_new_session=True)  # Ctrl-C in the terminal reaches us, and we stop it
        self._wait_listening()

    @property
    def grpc_url(self) -> str:
        return f"rerun+http://{self._netloc(self.grpc_port)}/proxy"

    @property
    def url(self) -> str:
        """The page to open (it connects itself to the gRPC proxy)."""
        return f"http://{self._netloc(self.web_port)}/?url={self.grpc_url}"

    def _netloc(self, port: int) -> str:
        shown = "127.0.0.1" if self.host in ("0.0.0.0", "::") else self.host  # noqa: S104
        return f"[{shown}]:{port}" if ":" in shown else f"{shown}:{port}"

    def _wait_listening(self, timeout: float = 20.0) -> None:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::") else self.host  # noqa: S104
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = (self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else "").strip().splitlines()
                raise OSError(f"the rerun web viewer did not start on {self.host}: {err[-1] if err else 'exited'}")
            ok = 0
            for port in (self.grpc_port, self.web_port):
                try:
                    with socket.create_connection((host, port), timeout=0.5):
                        ok += 1
                except OSError:
                    pass
            if ok == 2:
                return
            time.sleep(0.1)
        self.close()
        raise OSError(f"the rerun web viewer did not start listening on {self.host} within {timeout:.0f} s")

    def close(self) -> None:
        """Stop the viewer process (and anything it started: it leads its own process group)."""
        if self.proc.poll() is None:
            self._signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                self.proc.wait()

    def _signal(self, sig: int) -> None:
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            pass
