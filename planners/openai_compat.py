"""A planner backed by any server that speaks the OpenAI chat-completions protocol.

The same wire format is offered by the OpenAI API itself and by most self-hosted inference servers,
so one backend covers them all; only ``base_url`` (and perhaps ``api_key_env``) changes:

* OpenAI: the defaults; export ``OPENAI_API_KEY``.
* vLLM (``vllm serve Qwen/Qwen2.5-VL-7B-Instruct``): ``base_url: http://localhost:8000/v1``.
* Ollama (``ollama serve``, then ``ollama pull llava``): ``base_url: http://localhost:11434/v1``.
* llama.cpp (``llama-server -m model.gguf --mmproj mmproj.gguf``): ``base_url: http://localhost:8080/v1``.
* LM Studio's local server: ``base_url: http://localhost:1234/v1``.

For example, in a run configuration::

    planner:
      name: openai
      params: {model: llava, base_url: "http://localhost:11434/v1"}

Local servers usually need no key: when the variable named by ``api_key_env`` is unset, no
``Authorization`` header is sent. The key is read when a request is made and never written to
errors, usage figures or episode records.

Each round sends the system text and the round's user text built by ``PromptBuilder``, followed by
the four camera views (front, left, back, right) as PNG data URLs. With the JSON output format the
reply is constrained, where the server supports it, by a JSON schema built from the available
actions and model names; servers that reject that are asked for plain JSON mode, then for nothing,
and the first mode that works is kept. Only the standard library is used for HTTP.
"""

from __future__ import annotations

import base64
import http.client
import io
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

import numpy as np
from PIL import Image

from homiebot.contracts import VIEW_NAMES, Observation, offered_actions
from homiebot.planners.base import EpisodeContext, Planner, PlannerConfigError, PlannerError, PlannerReply, PlannerRequest
from homiebot.prompting import FORMATS, PromptBuilder, PromptError

RESPONSE_FORMATS = ("auto", "json_schema", "json_object", "none")
IMAGE_DETAILS = ("auto", "low", "high")
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
FALLBACK_STATUS = frozenset({400, 422})
FALLBACK_WORDS = ("response_format", "json_schema", "json_object")
NEXT_MODE = {"json_schema": "json_object", "json_object": "none"}
BACKOFF_CAP = 30.0  # seconds: the longest wait between two attempts
MESSAGE_LIMIT = 300  # characters of a server's error message kept in feedback
LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})


def subtask_schema(model_names: list[str], actions: list[str] | None = None) -> dict[str, Any]:
    """The JSON schema of one decision: the analysis, ``[action, target(, place)]`` and the model (or null)."""
    return {
        "type": "object",
        "properties": {
            "analysis": {"type": "string"},
            "subtask": {
                "type": "array",
                "minItems": 1,
                "maxItems": 3,
                "prefixItems": [{"type": "string", "enum": actions if actions is not None else offered_actions([])}],
                "items": {"type": "string"},
            },
            "model": {"type": ["string", "null"], "enum": [*model_names, None]},
        },
        "required": ["analysis", "subtask", "model"],
        "additionalProperties": False,
    }


def png_data_url(rgb: np.ndarray) -> str:
    """An HxWx3 uint8 image as a ``data:image/png;base64,...`` URL."""
    buffer = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(rgb, dtype=np.uint8)).save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


class _Transient(Exception):
    """A failure worth trying again (rate limit, server overload, timeout, dropped connection)."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


class _Rejected(Exception):
    """The server refused the request; trying the same request again will not help."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message


AUTH_STATUS = (401, 403)  # the key is missing, wrong or not allowed: no retry can help


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _trim(text: str, limit: int = MESSAGE_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _server_message(raw: bytes) -> str:
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


def _content_text(content: Any) -> str | None:
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


class OpenAIPlanner(Planner):
    """Asks a chat-completions endpoint for the next subtask, one request per round.

    ``base_url`` is the API root that ends in ``/v1``: ``https://api.openai.com/v1`` (default),
    ``http://localhost:8000/v1`` for vLLM, ``http://localhost:11434/v1`` for Ollama,
    ``http://localhost:8080/v1`` for llama.cpp's server. ``model`` is the name that server serves.

    Rate limits (429), server errors (500/502/503/504), timeouts and broken connections are tried
    again up to ``retries`` more times, waiting ``backoff`` seconds and doubling (capped at 30 s, or
    the server's ``Retry-After``). Any other refusal, or a reply without text, raises
    ``PlannerError``, which the agent turns into F1 feedback before asking again next round.

    ``response_format``: ``auto`` asks for schema-constrained JSON when ``output_format`` is json
    (nothing for text), stepping down to ``json_object`` and then to no constraint when the server
    answers 400 about it; ``json_schema``, ``json_object`` and ``none`` force one mode.
    ``extra_body`` is merged into every request (e.g. ``{"top_p": 0.9}`` or server-specific options),
    ``extra_headers`` is added to its headers. For models that refuse ``max_tokens`` or a temperature,
    set them to null and pass what the server wants through ``extra_body`` (``max_completion_tokens``).
    """

    needs_views = ("image",)

    def __init__(self, model: str | None = None, base_url: str = "https://api.openai.com/v1",
                 api_key_env: str | None = "OPENAI_API_KEY", output_format: str = "json", template: str | None = None,
                 temperature: float | None = 0.2, max_tokens: int | None = 512, timeout: float = 60.0, retries: int = 3,
                 backoff: float = 1.0, response_format: str = "auto", send_images: bool = True,
                 image_detail: str | None = "auto", extra_headers: Mapping[str, str] | None = None,
                 extra_body: Mapping[str, Any] | None = None) -> None:
        def bad(message: str) -> PlannerConfigError:
            return PlannerConfigError(f"openai planner: {message}")

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
        if output_format not in FORMATS:
            raise bad(f"unknown output_format '{output_format}'; choose {' or '.join(FORMATS)}")
        if response_format not in RESPONSE_FORMATS:
            raise bad(f"unknown response_format '{response_format}'; choose one of {', '.join(RESPONSE_FORMATS)}")
        if output_format != "json" and response_format in ("json_schema", "json_object"):
            raise bad(f"response_format '{response_format}' asks for JSON but output_format is '{output_format}'")
        if temperature is not None and (not _is_number(temperature) or temperature < 0):
            raise bad(f"'temperature' must be a number >= 0 (or null to leave it to the server), got {temperature!r}")
        if max_tokens is not None and (not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1):
            raise bad(f"'max_tokens' must be a positive integer (or null), got {max_tokens!r}")
        if not _is_number(timeout) or timeout <= 0:
            raise bad(f"'timeout' must be a positive number of seconds, got {timeout!r}")
        if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
            raise bad(f"'retries' must be an integer >= 0, got {retries!r}")
        if not _is_number(backoff) or backoff < 0:
            raise bad(f"'backoff' must be a number of seconds >= 0, got {backoff!r}")
        if not isinstance(send_images, bool):
            raise bad(f"'send_images' must be true or false, got {send_images!r}")
        if image_detail is not None and image_detail not in IMAGE_DETAILS:
            raise bad(f"unknown image_detail '{image_detail}'; choose one of {', '.join(IMAGE_DETAILS)} (or null)")
        if extra_headers is not None and (not isinstance(extra_headers, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in extra_headers.items())):
            raise bad("'extra_headers' must map header names to text values")
        if extra_body is not None and (not isinstance(extra_body, Mapping) or not all(isinstance(k, str) for k in extra_body)):
            raise bad("'extra_body' must be a mapping of request fields")
        try:
            PromptBuilder([], output_format, template)  # type: ignore[arg-type]  # checked against FORMATS above; surface template problems now, not mid-episode
        except PromptError as err:
            raise bad(str(err)) from None

        self.model = model.strip()
        self.base_url = base_url.strip().rstrip("/")
        self.endpoint = f"{self.base_url}/chat/completions"
        self.api_key_env = api_key_env.strip() if api_key_env else None
        self.output_format = output_format
        self.template = template
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout = float(timeout)
        self.retries = retries
        self.backoff = float(backoff)
        self.response_format = response_format
        self.send_images = send_images
        self.image_detail = image_detail
        self.extra_headers = dict(extra_headers or {})
        self.extra_body = dict(extra_body or {})
        if response_format == "auto":
            self._mode = "json_schema" if output_format == "json" else "none"
        else:
            self._mode = response_format
        self._prompts = PromptBuilder([], output_format, template)  # type: ignore[arg-type]
        self._schema = subtask_schema([])
        direct = url.hostname in LOOPBACK or (url.hostname or "").startswith("127.")
        # a local server is reached directly, whatever proxy the environment names
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({})) if direct else urllib.request.build_opener()

    # ---- episode ---------------------------------------------------------------------------
    def reset(self, context: EpisodeContext) -> None:
        try:
            self._prompts = PromptBuilder([(m.name, m.description) for m in context.models], self.output_format,  # type: ignore[arg-type]
                                          self.template)
        except PromptError as err:
            raise PlannerConfigError(f"openai planner: {err}") from None
        self._schema = subtask_schema([m.name for m in context.models], offered_actions((m.actions for m in context.models), ask=context.ask))

    def plan(self, request: PlannerRequest) -> PlannerReply:
        user_text = self._prompts.user(request.instruction, request.inventory, request.history, request.feedback, request.round)
        content: list[dict[str, Any]] = [{"type": "text", "text": user_text}]
        if self.send_images and request.observation is not None:
            content += self._image_parts(request.observation)
        messages: list[dict[str, Any]] = [{"role": "system", "content": self._prompts.system()}, {"role": "user", "content": content}]

        started = time.perf_counter()
        attempts, failures = 0, 0
        while True:
            attempts += 1
            try:
                data = self._post(self._body(messages))
                break
            except _Transient as err:
                if failures >= self.retries:
                    raise PlannerError(self._redact(f"{self._where()}: no answer after {attempts} attempt{'s' if attempts > 1 else ''}: {err}")) from None
                self._sleep(self._delay(failures, err.retry_after))
                failures += 1
            except _Rejected as err:
                if err.status in AUTH_STATUS:  # another round would fail the same way: stop the episode now
                    raise PlannerConfigError(self._redact(self._auth_problem(err))) from None
                if self._fall_back(err):
                    continue
                raise PlannerError(self._redact(f"{self._where()} refused the request ({err})")) from None
        latency = time.perf_counter() - started

        text = self._redact(self._reply_text(data))  # a server that echoes the key must not get it into records or bags
        usage: dict[str, float] = {}
        reported = data.get("usage")
        if isinstance(reported, dict):
            for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
                if _is_number(reported.get(key)):
                    usage[key] = reported[key]
        usage["latency_s"] = round(latency, 4)
        usage["attempts"] = attempts
        return PlannerReply(text=text, usage=usage, prompt=user_text)

    # ---- request ---------------------------------------------------------------------------
    def _image_parts(self, observation: Observation) -> list[dict[str, Any]]:
        parts = []
        for view in VIEW_NAMES:
            image: dict[str, Any] = {"url": png_data_url(observation.views[view].rgb)}
            if self.image_detail is not None:
                image["detail"] = self.image_detail
            parts.append({"type": "image_url", "image_url": image})
        return parts

    def _body(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": messages, "stream": False}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if self._mode == "json_schema":
            body["response_format"] = {"type": "json_schema",
                                       "json_schema": {"name": "next_subtask", "strict": True, "schema": self._schema}}
        elif self._mode == "json_object":
            body["response_format"] = {"type": "json_object"}
        body.update(self.extra_body)
        return body

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json", "User-Agent": "homiebot-openai-planner"}
        key = self._key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        headers.update(self.extra_headers)
        return headers

    def _key(self) -> str | None:
        if not self.api_key_env:
            return None
        return os.environ.get(self.api_key_env, "").strip() or None

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        """One HTTP exchange; raises _Transient, _Rejected or PlannerError."""
        payload = json.dumps(body).encode("utf-8")
        req = urllib.request.Request(self.endpoint, data=payload, headers=self._headers(), method="POST")
        try:
            with self._opener.open(req, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as err:
            try:
                message = _trim(_server_message(err.read()))
            except (OSError, http.client.HTTPException):
                message = err.reason if isinstance(err.reason, str) else "(no body)"
            finally:
                err.close()
            if err.code in RETRY_STATUS:
                retry_after = _retry_after(err.headers.get("Retry-After") if err.headers else None)
                raise _Transient(f"HTTP {err.code}: {message}", retry_after) from None
            raise _Rejected(err.code, message) from None
        except urllib.error.URLError as err:
            reason = err.reason
            if isinstance(reason, TimeoutError):
                raise _Transient(f"timed out after {self.timeout:g} s") from None
            raise _Transient(f"cannot reach {self.base_url}: {reason}") from None
        except TimeoutError:
            raise _Transient(f"timed out after {self.timeout:g} s") from None
        except (ConnectionError, http.client.HTTPException, OSError) as err:
            raise _Transient(f"connection to {self.base_url} failed: {type(err).__name__}: {err}") from None
        try:
            data = json.loads(raw)
        except ValueError:
            raise PlannerError(self._redact(f"{self._where()} answered with something that is not JSON: "
                                            f"{_trim(raw.decode('utf-8', errors='replace'), 120)!r}")) from None
        if not isinstance(data, dict):
            raise PlannerError(f"{self._where()} answered with JSON that is not an object")
        return data

    def _fall_back(self, err: _Rejected) -> bool:
        """Step down to a weaker response_format if the server objected to ours (auto mode only)."""
        if self.response_format != "auto" or self._mode not in NEXT_MODE or err.status not in FALLBACK_STATUS:
            return False
        if not any(word in err.message.lower() for word in FALLBACK_WORDS):
            return False
        self._mode = NEXT_MODE[self._mode]  # remembered for the following rounds
        return True

    def _delay(self, failures: int, retry_after: float | None) -> float:
        delay = min(self.backoff * (2 ** failures), BACKOFF_CAP)
        if retry_after is not None:
            delay = max(delay, min(retry_after, BACKOFF_CAP))
        return delay

    _sleep = staticmethod(time.sleep)  # replaced in tests so retries do not wait

    # ---- reply -----------------------------------------------------------------------------
    def _reply_text(self, data: dict[str, Any]) -> str:
        if "error" in data and not data.get("choices"):
            raise PlannerError(self._redact(f"{self._where()} reported an error: {_trim(_server_message(json.dumps(data).encode()))}"))
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise PlannerError(f"{self._where()} answered without any choices")
        message = choices[0].get("message")
        text = _content_text(message.get("content")) if isinstance(message, dict) else None
        if text is None or not text.strip():
            refusal = message.get("refusal") if isinstance(message, dict) else None
            if isinstance(refusal, str) and refusal.strip():
                raise PlannerError(self._redact(f"the model refused: {_trim(refusal)}"))
            reason = choices[0].get("finish_reason")
            extra = f" (finish_reason: {reason})" if isinstance(reason, str) else ""
            raise PlannerError(f"{self._where()} answered with empty content{extra}")
        return text

    def _auth_problem(self, err: _Rejected) -> str:
        if not self.api_key_env:
            return f"{self._where()} wants an API key (HTTP {err.status}: {err.message}); set api_key_env to the variable that holds it"
        if self._key() is None:
            return f"{self._where()} wants an API key (HTTP {err.status}): set the environment variable {self.api_key_env}"
        return (f"{self._where()} rejected the API key in {self.api_key_env} (HTTP {err.status}: {err.message}); "
                f"set {self.api_key_env} to a valid key")

    def _where(self) -> str:
        return f"the server at {self.base_url} (model {self.model})"

    def _redact(self, text: str) -> str:
        """Belt and braces: a server that echoes the key must not get it into feedback or records."""
        key = self._key()
        return text.replace(key, "[redacted]") if key else text


def _retry_after(value: str | None) -> float | None:
    """Seconds from a numeric Retry-After header (HTTP dates are ignored)."""
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and seconds >= 0 else None
