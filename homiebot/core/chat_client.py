"""A small client for servers that speak the OpenAI chat-completions protocol.

One request, one reply text: ``ChatClient.complete(messages, **body_fields)``. The client owns the
transport: settings validated up front (``ChatConfigError``), retries with exponential backoff for
rate limits, server overload, timeouts and dropped connections, classification of everything else
into typed errors, and redaction of the API key from every text it hands back. It knows nothing of
what the messages mean; the OpenAI planner and the LLM-backed persona build those.

The key is read from the environment variable ``api_key_env`` names when a request is made; with the
variable unset (local servers) no ``Authorization`` header is sent. Servers on the loopback interface
are reached directly, whatever proxy the environment names. Only the standard library is used.
"""

from __future__ import annotations

import http.client
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from homiebot.core.secrets import Redactor, header_secrets

RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
AUTH_STATUS = (401, 403)  # the key is missing, wrong or not allowed: no retry can help
BACKOFF_CAP = 30.0  # seconds: the longest wait between two attempts
MESSAGE_LIMIT = 300  # characters of a server's error message kept in errors
LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})
VALIDATION_WORDS = "validation error"


class ChatConfigError(ValueError):
    """A client setting is invalid; the message names the setting (e.g. ``'timeout' must be ...``)."""


class ChatError(Exception):
    """No usable reply. ``reason`` is a short cause (``HTTP 500: overloaded``, ``timed out after 5 s``),
    ``attempts`` the number of requests made; ``str()`` is the full, key-free message."""

    def __init__(self, message: str, reason: str, attempts: int) -> None:
        super().__init__(message)
        self.reason = reason
        self.attempts = attempts


class ChatUnavailable(ChatError):
    """Every attempt failed transiently (rate limit, overload, timeout, connection refused or dropped)."""


class ChatRejected(ChatError):
    """The server refused the request (HTTP ``status``); sending it again unchanged will not help."""

    def __init__(self, message: str, reason: str, attempts: int, status: int, server_message: str) -> None:
        super().__init__(message, reason, attempts)
        self.status = status
        self.server_message = server_message


class ChatAuthError(ChatRejected):
    """HTTP 401/403: the key is missing, wrong or not allowed; the message says which variable to set."""


class ChatBadReply(ChatError):
    """The server answered, but not with text: not JSON, an error object, no choices, empty or refused content."""


@dataclass(frozen=True)
class ChatReply:
    """The assistant's text, the server's token counts (``prompt_tokens``, ``completion_tokens``,
    ``total_tokens`` where reported), the number of requests made and the seconds they took."""

    text: str
    usage: dict[str, float] = field(default_factory=dict)
    attempts: int = 1
    latency_s: float = 0.0


class _Transient(Exception):
    """A failure worth trying again."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


class _Refused(Exception):
    """An HTTP error status that retrying will not fix."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """Redirects are refused, never followed: urllib would forward the ``Authorization`` header to
    wherever the server points (another host included), and would turn the POST into a bodiless GET."""

    def redirect_request(self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any,
                         newurl: str) -> urllib.request.Request | None:
        fp.close()
        target = urlparse(newurl)
        where = f"{target.scheme}://{target.netloc}{target.path}" if target.netloc else target.path
        raise _Refused(code, f"the server redirects to {where}; redirects are not followed (the API key would go with "
                             "them): set base_url to the address the server names")


def is_number(value: Any) -> bool:
    """A real int or float (booleans are not numbers here)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def trim(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def server_message(raw: bytes) -> str:
    """The human-readable part of an error body, whichever server convention it follows."""
    text = raw.decode("utf-8", errors="replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return text or "(empty body)"
    if not isinstance(data, dict):
        return text
    for candidate in (data.get("error"), data.get("detail"), data.get("message")):
        if isinstance(candidate, dict) and candidate.get("message"):
            return str(candidate["message"])
        if isinstance(candidate, str) and candidate:
            return candidate
        if isinstance(candidate, list) and candidate:  # FastAPI validation errors
            return json.dumps(candidate)
    return text


def is_validation_error(status: int, message: str) -> bool:
    """A 500 that reports a request the server's schema refused (llama-cpp-python answers an unknown
    ``response_format`` so): the same request would be refused again, so it is not retried."""
    return status == 500 and VALIDATION_WORDS in message.lower()


def content_text(content: Any) -> str | None:
    """``message.content`` as text, whether a string or a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        pieces = []
        for part in content:
            if isinstance(part, str):
                pieces.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                pieces.append(part["text"])
        return "".join(pieces)
    return None


def retry_after(value: str | None) -> float | None:
    """Seconds from a numeric Retry-After header (HTTP dates are ignored)."""
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and seconds >= 0 else None


class ChatClient:
    """Sends chat-completions requests to one model on one server.

    ``base_url`` is the API root ending in ``/v1`` (``https://api.openai.com/v1``, Ollama's
    ``http://localhost:11434/v1``, vLLM's ``http://localhost:8000/v1``...). ``temperature`` and
    ``max_tokens`` go into every request unless None; ``extra_body`` is merged last into every request
    and ``extra_headers`` into its headers. Transient failures are tried again up to ``retries`` more
    times, waiting ``backoff`` seconds and doubling (capped at 30 s, or the server's ``Retry-After``).
    """

    def __init__(self, model: str | None = None, base_url: str = "https://api.openai.com/v1",
                 api_key_env: str | None = "OPENAI_API_KEY", temperature: float | None = None,
                 max_tokens: int | None = None, timeout: float = 60.0, retries: int = 3, backoff: float = 1.0,
                 extra_headers: Mapping[str, str] | None = None, extra_body: Mapping[str, Any] | None = None,
                 user_agent: str = "homiebot") -> None:
        bad = ChatConfigError
        if not isinstance(model, str) or not model.strip():
            raise bad("'model' is required: the model name the server serves, e.g. gpt-4o-mini, or llava for Ollama")
        if not isinstance(base_url, str) or not base_url.strip():
            raise bad("'base_url' must be a URL such as http://localhost:8000/v1")
        url = urlparse(base_url.strip())
        if url.scheme not in ("http", "https") or not url.netloc:
            raise bad(f"'base_url' must start with http:// or https:// and name a host, got '{base_url}' "
                      "(e.g. https://api.openai.com/v1, http://localhost:11434/v1)")
        if api_key_env is not None and (not isinstance(api_key_env, str) or not api_key_env.strip()):
            raise bad("'api_key_env' must name an environment variable (or be null for no key)")
        if temperature is not None and (not is_number(temperature) or temperature < 0):
            raise bad(f"'temperature' must be a number >= 0 (or null to leave it to the server), got {temperature!r}")
        if max_tokens is not None and (not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1):
            raise bad(f"'max_tokens' must be a positive integer (or null), got {max_tokens!r}")
        if not is_number(timeout) or timeout <= 0:
            raise bad(f"'timeout' must be a positive number of seconds, got {timeout!r}")
        if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
            raise bad(f"'retries' must be an integer >= 0, got {retries!r}")
        if not is_number(backoff) or backoff < 0:
            raise bad(f"'backoff' must be a number of seconds >= 0, got {backoff!r}")
        if extra_headers is not None and (not isinstance(extra_headers, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in extra_headers.items())):
            raise bad("'extra_headers' must map header names to text values")
        if extra_body is not None and (not isinstance(extra_body, Mapping) or not all(isinstance(k, str) for k in extra_body)):
            raise bad("'extra_body' must be a mapping of request fields")
        try:
            json.dumps(dict(extra_body or {}))
        except (TypeError, ValueError) as err:
            raise bad(f"'extra_body' must hold JSON values (text, numbers, lists, mappings): {err}") from None

        self.model = model.strip()
        self.base_url = base_url.strip().rstrip("/")
        self.endpoint = f"{self.base_url}/chat/completions"
        self.api_key_env = api_key_env.strip() if api_key_env else None
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout = float(timeout)
        self.retries = retries
        self.backoff = float(backoff)
        self.extra_headers = dict(extra_headers or {})
        self.extra_body = dict(extra_body or {})
        self.user_agent = user_agent
        self._redactor = Redactor(())
        self._redactor_for: tuple[str | None, ...] = ()  # the secrets it was built for: rebuilt when the key changes
        direct = url.hostname in LOOPBACK or (url.hostname or "").startswith("127.")
        # a local server is reached directly, whatever proxy the environment names
        handlers: list[urllib.request.BaseHandler] = [_NoRedirects()] + ([urllib.request.ProxyHandler({})] if direct else [])
        self._opener = urllib.request.build_opener(*handlers)

    # ---- one completion --------------------------------------------------------------------
    def complete(self, messages: Sequence[Mapping[str, Any]], **body_fields: Any) -> ChatReply:
        """The assistant's reply to ``messages``. ``body_fields`` (``seed``, ``response_format``...) go
        into the request after the client's own fields and before ``extra_body``. Raises
        ``ChatUnavailable``, ``ChatAuthError``, ``ChatRejected`` or ``ChatBadReply``; never retries a refusal."""
        body = self.body(messages, **body_fields)
        started = time.perf_counter()
        attempts, failures = 0, 0
        while True:
            attempts += 1
            try:
                data = self._post(body, attempts)
                break
            except _Transient as err:
                if failures >= self.retries:
                    plural = "s" if attempts > 1 else ""
                    raise ChatUnavailable(self.redact(f"{self.where()}: no answer after {attempts} attempt{plural}: {err}"),
                                          self.redact(str(err)), attempts) from None
                self._sleep(self._delay(failures, err.retry_after))
                failures += 1
            except _Refused as err:
                reason = self.redact(str(err))
                if err.status in AUTH_STATUS:
                    raise ChatAuthError(self.redact(self._auth_problem(err)), reason, attempts, err.status,
                                        self.redact(err.message)) from None
                raise ChatRejected(self.redact(f"{self.where()} refused the request ({err})"), reason, attempts, err.status,
                                   self.redact(err.message)) from None
        latency = time.perf_counter() - started
        text = self.redact(self._reply_text(data, attempts))  # a server that echoes the key must not get it into records
        usage: dict[str, float] = {}
        reported = data.get("usage")
        if isinstance(reported, dict):
            for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
                if is_number(reported.get(key)):
                    usage[key] = reported[key]
        return ChatReply(text=text, usage=usage, attempts=attempts, latency_s=round(latency, 4))

    def body(self, messages: Sequence[Mapping[str, Any]], **body_fields: Any) -> dict[str, Any]:
        """The request body ``complete`` sends."""
        body: dict[str, Any] = {"model": self.model, "messages": list(messages), "stream": False}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        body.update(body_fields)
        body.update(self.extra_body)
        return body

    def where(self) -> str:
        """The server and model, for messages."""
        return f"the server at {self.base_url} (model {self.model})"

    def redact(self, text: str) -> str:
        """Belt and braces: a server that echoes the key, or any piece of 8 characters of it (of a credential
        header's value too), must not get it into feedback, records or logs."""
        secrets = (self._key(), *header_secrets(self.extra_headers))
        if secrets != self._redactor_for:
            self._redactor, self._redactor_for = Redactor(secrets), secrets
        return self._redactor(text)

    def _clean(self, text: str, limit: int = MESSAGE_LIMIT) -> str:
        """Server text made fit for messages: the key redacted first, then cut (cut first, a key that
        straddles the cut would keep most of its characters)."""
        return trim(self.redact(text), limit)

    # ---- transport -------------------------------------------------------------------------
    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json", "User-Agent": self.user_agent}
        key = self._key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        headers.update(self.extra_headers)
        return headers

    def _key(self) -> str | None:
        if not self.api_key_env:
            return None
        return os.environ.get(self.api_key_env, "").strip() or None

    def _post(self, body: dict[str, Any], attempts: int) -> dict[str, Any]:
        """One HTTP exchange; raises _Transient, _Refused or ChatBadReply."""
        payload = json.dumps(body).encode("utf-8")
        req = urllib.request.Request(self.endpoint, data=payload, headers=self._headers(), method="POST")
        try:
            with self._opener.open(req, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as err:
            try:
                message = self._clean(server_message(err.read()))
            except (OSError, http.client.HTTPException):
                message = self._clean(err.reason) if isinstance(err.reason, str) else "(no body)"
            finally:
                err.close()
            if err.code in RETRY_STATUS and not is_validation_error(err.code, message):
                raise _Transient(f"HTTP {err.code}: {message}", retry_after(err.headers.get("Retry-After") if err.headers else None)) from None
            raise _Refused(err.code, message) from None
        except urllib.error.URLError as err:
            if isinstance(err.reason, TimeoutError):
                raise _Transient(f"timed out after {self.timeout:g} s") from None
            raise _Transient(f"cannot reach {self.base_url}: {err.reason}") from None
        except TimeoutError:
            raise _Transient(f"timed out after {self.timeout:g} s") from None
        except (ConnectionError, http.client.HTTPException, OSError) as err:
            raise _Transient(f"connection to {self.base_url} failed: {type(err).__name__}: {err}") from None
        try:
            data = json.loads(raw)
        except ValueError:
            snippet = self._clean(raw.decode("utf-8", errors="replace"), 120)
            raise ChatBadReply(f"{self.where()} answered with something that is not JSON: {snippet!r}",
                               "reply is not JSON", attempts) from None
        if not isinstance(data, dict):
            raise ChatBadReply(f"{self.where()} answered with JSON that is not an object", "reply is not a JSON object", attempts)
        return data

    def _delay(self, failures: int, wait: float | None) -> float:
        delay = min(self.backoff * (2 ** failures), BACKOFF_CAP)
        if wait is not None:
            delay = max(delay, min(wait, BACKOFF_CAP))
        return delay

    _sleep = staticmethod(time.sleep)  # replaced in tests so retries do not wait

    # ---- reply -----------------------------------------------------------------------------
    def _reply_text(self, data: dict[str, Any], attempts: int) -> str:
        if "error" in data and not data.get("choices"):
            detail = self._clean(server_message(json.dumps(data).encode()))
            raise ChatBadReply(f"{self.where()} reported an error: {detail}", f"error: {detail}", attempts)
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise ChatBadReply(f"{self.where()} answered without any choices", "no choices", attempts)
        message = choices[0].get("message")
        text = content_text(message.get("content")) if isinstance(message, dict) else None
        if text is None or not text.strip():
            refusal = message.get("refusal") if isinstance(message, dict) else None
            if isinstance(refusal, str) and refusal.strip():
                raise ChatBadReply(f"the model refused: {self._clean(refusal)}", f"refused: {self._clean(refusal, 80)}", attempts)
            finish = choices[0].get("finish_reason")
            extra = f" (finish_reason: {self._clean(finish, 40)})" if isinstance(finish, str) else ""
            raise ChatBadReply(f"{self.where()} answered with empty content{extra}", f"empty content{extra}", attempts)
        return text

    def _auth_problem(self, err: _Refused) -> str:
        if not self.api_key_env:
            return f"{self.where()} wants an API key (HTTP {err.status}: {err.message}); set api_key_env to the variable that holds it"
        if self._key() is None:
            return f"{self.where()} wants an API key (HTTP {err.status}): set the environment variable {self.api_key_env}"
        return (f"{self.where()} rejected the API key in {self.api_key_env} (HTTP {err.status}: {err.message}); "
                f"set {self.api_key_env} to a valid key")
