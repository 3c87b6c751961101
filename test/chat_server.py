"""A chat-completions server on the loopback interface for tests (ephemeral port, no real network).

It records every request and answers from a script: first ``rule`` (consulted for every request),
then any queued ``faults`` (one per request), then ``answer``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer: an HTTP status and JSON body (bytes: sent as they are), optionally after a delay."""

    status: int = 200
    body: Any = None
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


def completion(content: Any) -> Reply:
    """A chat completion whose first choice says ``content``."""
    return Reply(200, {"id": "cmpl-test", "object": "chat.completion", "model": "test-model",
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                       "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}})


def error(status: int, message: str) -> Reply:
    """An OpenAI-style error body with ``status``."""
    return Reply(status, {"error": {"message": message, "type": "invalid_request_error"}})


@dataclass
class FakeServer:
    """State shared with the handler threads."""

    url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)
    faults: list[Reply] = field(default_factory=list)  # consumed one per request, before `answer`
    rule: Callable[[dict], Reply | None] | None = None  # consulted for every request, before the faults
    answer: Callable[[dict], Reply] = lambda body: completion("ok")
    lock: threading.Lock = field(default_factory=threading.Lock)

    def respond(self, path: str, headers: dict[str, str], body: dict) -> Reply:
        with self.lock:
            self.requests.append({"path": path, "headers": headers, "body": body})
            if self.rule is not None and (reply := self.rule(body)) is not None:
                return reply
            if self.faults:
                return self.faults.pop(0)
        return self.answer(body)

    def bodies(self) -> list[dict]:
        return [r["body"] for r in self.requests]


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        fake: FakeServer = self.server.fake  # type: ignore[attr-defined]
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        reply = fake.respond(self.path, {k.lower(): v for k, v in self.headers.items()}, json.loads(raw))
        if reply.delay:
            time.sleep(reply.delay)
        data = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            pass  # the client gave up waiting (timeout tests)

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        """Recorded with an empty body (a client that followed a redirect would arrive here), answered 404."""
        fake: FakeServer = self.server.fake  # type: ignore[attr-defined]
        with fake.lock:
            fake.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": {}})
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (signature of the base class)
        pass


@contextmanager
def fake_server() -> Iterator[FakeServer]:
    """A running fake server; ``.url`` is its ``/v1`` root."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    fake = FakeServer(url=f"http://127.0.0.1:{httpd.server_address[1]}/v1")
    httpd.fake = fake  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def closed_port() -> int:
    """A loopback port that was bound, then closed: nothing listens there any more."""
    with ThreadingHTTPServer(("127.0.0.1", 0), _Handler) as closed:
        return closed.server_address[1]
