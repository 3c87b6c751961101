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
the four camera views (front, left, back, right) as PNG data URLs. A model without vision
(``vision: false``) gets no images; the user text then describes the four views in words, from
perception's detections (``homiebot.planners.view_text``). With the JSON output format the
reply is constrained, where the server supports it, by a JSON schema built from the available
actions and model names; servers that reject that (llama.cpp's Python server does) are sent a
llama.cpp grammar instead (``homiebot.planners.grammar``: each action with its own arity and only the
models able to run it), then asked for plain JSON mode, then for nothing, and the first mode that works
is kept. The transport (retries, backoff, error classification, key
redaction) is the shared ``homiebot.core.chat_client.ChatClient``.
"""

from __future__ import annotations

import base64
import io
import os
import time
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np
from PIL import Image
from pydantic import BaseModel, ConfigDict, Field

from homiebot.core.chat_client import ChatAuthError, ChatClient, ChatConfigError, ChatError, ChatRejected
from homiebot.core.contracts import VIEW_NAMES, Observation, offered_actions
from homiebot.core.prompting import FORMATS, PromptBuilder, PromptError
from homiebot.perception.visible import sightings
from homiebot.planners.base import EpisodeContext, Planner, PlannerConfigError, PlannerError, PlannerReply, PlannerRequest
from homiebot.planners.grammar import subtask_grammar
from homiebot.planners.view_text import describe_views

RESPONSE_FORMATS = ("auto", "json_schema", "grammar", "json_object", "none")
IMAGE_DETAILS = ("auto", "low", "high")
FALLBACK_STATUS = frozenset({400, 422, 500})  # 500: llama-cpp-python's answer to a request it cannot validate
FALLBACK_WORDS = ("response_format", "json_schema", "json_object", "grammar")
NEXT_MODE = {"json_schema": "grammar", "grammar": "json_object", "json_object": "none"}


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


def _key_frame_url(path: str) -> str | None:
    """A key frame's file as a PNG data URL, read again only when the file changed (an episode sends the
    same ones every round); None when it cannot be read."""
    try:
        return _encoded_file(path, os.stat(path).st_mtime_ns)
    except OSError:
        return None


@lru_cache(maxsize=64)
def _encoded_file(path: str, mtime_ns: int) -> str:
    with Image.open(path) as im:
        return png_data_url(np.asarray(im.convert("RGB")))


class OpenAIParams(BaseModel):
    """The ``planner.params`` of the ``openai`` planner (values are checked further when it is built)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    model: str | None = Field(None, description="required: the model name the server serves (gpt-4o-mini, llava, ...)")
    base_url: str = Field("https://api.openai.com/v1", description="the API root ending in /v1")
    api_key_env: str | None = Field("OPENAI_API_KEY", description="the environment variable holding the key (null: no key)")
    output_format: str = Field("json", description=f"the reply format: {' or '.join(FORMATS)}")
    template: str | None = Field(None, description="a prompt template YAML file (system:/user: texts)")
    temperature: float | None = Field(0.2, description="sampling temperature >= 0 (null: the server's)")
    max_tokens: int | None = Field(512, description="reply length limit (null: the server's)")
    timeout: float = Field(60.0, description="seconds per request")
    retries: int = Field(3, description="further tries after a rate limit, server error or timeout")
    backoff: float = Field(1.0, description="seconds before the first retry, doubled each time")
    response_format: str = Field("auto", description=f"how the reply is constrained: {', '.join(RESPONSE_FORMATS)}")
    send_images: bool = Field(True, description="send the four views as images")
    image_detail: str | None = Field("auto", description=f"the images' detail: {', '.join(IMAGE_DETAILS)} (or null)")
    extra_headers: dict[str, str] | None = Field(None, description="added to every request's headers")
    extra_body: dict[str, Any] | None = Field(None, description="merged into every request (e.g. {top_p: 0.9})")
    vision: bool = Field(True, description="false: a text-only model, the views described in words")
    constrain_names: bool = Field(False, description="grammar mode: targets only among the names perception reported")


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
    (nothing for text), stepping down to a llama.cpp ``grammar``, to ``json_object`` and then to no
    constraint when the server refuses each (HTTP 400, 422, or a 500 reporting a validation error);
    ``json_schema``, ``grammar``, ``json_object`` and ``none`` force one mode. ``constrain_names: true``
    (grammar mode) lets targets be only names perception has reported so far this episode.
    ``vision: false`` is for a text-only model: no images are sent, and the views are described in the
    user text from the detections (names, distances, rooms) instead.
    ``extra_body`` is merged into every request (e.g. ``{"top_p": 0.9}`` or server-specific options),
    ``extra_headers`` is added to its headers. For models that refuse ``max_tokens`` or a temperature,
    set them to null and pass what the server wants through ``extra_body`` (``max_completion_tokens``).
    """

    needs_views: tuple[str, ...] = ("image",)
    Params: ClassVar[type[BaseModel] | None] = OpenAIParams

    def __init__(self, model: str | None = None, base_url: str = "https://api.openai.com/v1",
                 api_key_env: str | None = "OPENAI_API_KEY", output_format: str = "json", template: str | None = None,
                 temperature: float | None = 0.2, max_tokens: int | None = 512, timeout: float = 60.0, retries: int = 3,
                 backoff: float = 1.0, response_format: str = "auto", send_images: bool = True,
                 image_detail: str | None = "auto", extra_headers: Mapping[str, str] | None = None,
                 extra_body: Mapping[str, Any] | None = None, vision: bool = True, constrain_names: bool = False) -> None:
        def bad(message: str) -> PlannerConfigError:
            return PlannerConfigError(f"openai planner: {message}")

        try:
            self.client = ChatClient(model=model, base_url=base_url, api_key_env=api_key_env, temperature=temperature,
                                     max_tokens=max_tokens, timeout=timeout, retries=retries, backoff=backoff,
                                     extra_headers=extra_headers, extra_body=extra_body, user_agent="homiebot-openai-planner")
        except ChatConfigError as err:
            raise bad(str(err)) from None
        if output_format not in FORMATS:
            raise bad(f"unknown output_format '{output_format}'; choose {' or '.join(FORMATS)}")
        if response_format not in RESPONSE_FORMATS:
            raise bad(f"unknown response_format '{response_format}'; choose one of {', '.join(RESPONSE_FORMATS)}")
        if output_format != "json" and response_format in ("json_schema", "grammar", "json_object"):
            raise bad(f"response_format '{response_format}' asks for JSON but output_format is '{output_format}'")
        if not isinstance(send_images, bool):
            raise bad(f"'send_images' must be true or false, got {send_images!r}")
        if not isinstance(vision, bool):
            raise bad(f"'vision' must be true (the model sees the four images) or false (it reads them described in words), "
                      f"got {vision!r}")
        if not isinstance(constrain_names, bool):
            raise bad(f"'constrain_names' must be true or false, got {constrain_names!r}")
        if image_detail is not None and image_detail not in IMAGE_DETAILS:
            raise bad(f"unknown image_detail '{image_detail}'; choose one of {', '.join(IMAGE_DETAILS)} (or null)")
        try:
            PromptBuilder([], output_format, template)  # type: ignore[arg-type]  # checked against FORMATS above; surface template problems now, not mid-episode
        except PromptError as err:
            raise bad(str(err)) from None

        self.model = self.client.model
        self.base_url = self.client.base_url
        self.output_format = output_format
        self.template = template
        self.response_format = response_format
        self.vision = vision
        self.constrain_names = constrain_names
        self._runners: dict[str, list[str]] = {}  # action -> the models able to run it
        self._actions: list[str] = offered_actions([])
        self._names: set[str] = set()  # what perception has reported this episode
        self.send_images = send_images and vision
        if not vision:  # the description is written from the detections
            self.needs_views = ("depth", "segmentation")
        self.image_detail = image_detail
        if response_format == "auto":
            self._mode = "json_schema" if output_format == "json" else "none"
        else:
            self._mode = response_format
        self._prompts = PromptBuilder([], output_format, template)  # type: ignore[arg-type]
        self._schema = subtask_schema([])

    # ---- episode ---------------------------------------------------------------------------
    def reset(self, context: EpisodeContext) -> None:
        actions = offered_actions((m.actions for m in context.models), ask=context.ask)
        try:
            self._prompts = PromptBuilder([(m.name, m.description) for m in context.models], self.output_format,  # type: ignore[arg-type]
                                          self.template, actions=actions, vision=self.vision)
        except PromptError as err:
            raise PlannerConfigError(f"openai planner: {err}") from None
        self._schema = subtask_schema([m.name for m in context.models], actions)
        self._actions = actions
        self._runners = {a: [m.name for m in context.models if a in m.actions] for a in actions}
        self._names = set()

    def plan(self, request: PlannerRequest) -> PlannerReply:
        if self.constrain_names and request.observation is not None:
            self._names.update(sightings(request.observation))
        views = None if self.vision else describe_views(request.observation)
        user_text = self._prompts.user(request.instruction, request.inventory, request.history, request.feedback, request.round,
                                       views=views, memories=[m.caption for m in request.memories])
        content: str | list[dict[str, Any]] = user_text  # plain text: what text-only chat templates expect
        if self.send_images and request.observation is not None:
            content = [{"type": "text", "text": user_text}, *self._image_parts(request.observation),
                       *self._key_frame_parts(request)]
        messages: list[dict[str, Any]] = [{"role": "system", "content": self._prompts.system()}, {"role": "user", "content": content}]

        started = time.perf_counter()
        attempts = 0
        while True:
            try:
                reply = self.client.complete(messages, **self._format_field())
                attempts += reply.attempts
                break
            except ChatAuthError as err:  # another round would fail the same way: stop the episode now
                raise PlannerConfigError(str(err)) from None
            except ChatRejected as err:
                attempts += err.attempts
                if self._fall_back(err):
                    continue
                raise PlannerError(str(err)) from None
            except ChatError as err:
                raise PlannerError(str(err)) from None
        usage: dict[str, float] = dict(reply.usage)
        usage["latency_s"] = round(time.perf_counter() - started, 4)
        usage["attempts"] = attempts
        return PlannerReply(text=reply.text, usage=usage, prompt=user_text)

    # ---- request ---------------------------------------------------------------------------
    def _image_parts(self, observation: Observation) -> list[dict[str, Any]]:
        return [self._image_part(png_data_url(observation.views[view].rgb)) for view in VIEW_NAMES]

    def _key_frame_parts(self, request: PlannerRequest) -> list[dict[str, Any]]:
        """The recalled demonstrations' key frames, after the four views (files that cannot be read are left out)."""
        urls = (_key_frame_url(path) for m in request.memories for path in m.key_frames)
        return [self._image_part(url) for url in urls if url is not None]

    def _image_part(self, url: str) -> dict[str, Any]:
        image: dict[str, Any] = {"url": url}
        if self.image_detail is not None:
            image["detail"] = self.image_detail
        return {"type": "image_url", "image_url": image}

    def _format_field(self) -> dict[str, Any]:
        """The ``response_format`` field of this round's request (none in mode ``none``)."""
        if self._mode == "json_schema":
            return {"response_format": {"type": "json_schema",
                                        "json_schema": {"name": "next_subtask", "strict": True, "schema": self._schema}}}
        if self._mode == "grammar":
            return {"grammar": subtask_grammar(self._actions, self._runners, sorted(self._names) if self.constrain_names else ())}
        if self._mode == "json_object":
            return {"response_format": {"type": "json_object"}}
        return {}

    def _fall_back(self, err: ChatRejected) -> bool:
        """Step down to a weaker response_format if the server objected to ours (auto mode only)."""
        if self.response_format != "auto" or self._mode not in NEXT_MODE or err.status not in FALLBACK_STATUS:
            return False
        if not any(word in err.server_message.lower() for word in FALLBACK_WORDS):
            return False
        self._mode = NEXT_MODE[self._mode]  # remembered for the following rounds
        return True
