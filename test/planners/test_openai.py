"""The OpenAI-compatible planner against a real HTTP server on the loopback interface.

The server is started inside each test (ephemeral port), records every request and answers from a
script: first any queued faults, then like an oracle for the demo task (the next step is chosen by
counting the successes in the history the planner sends). No real network is ever used.
"""

from __future__ import annotations

import base64
import io
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from homiebot.config import RunConfig
from homiebot.core.chat_client import ChatClient
from homiebot.core.contracts import ErrorCode
from homiebot.planners.base import PlannerConfigError, PlannerError, PlannerRequest
from homiebot.planners.openai_compat import OpenAIPlanner
from homiebot.runtime import build_planner, run_episode

from ..chat_server import FakeServer, Reply, closed_port, completion, error, fake_server
from ..conftest import small_render

KEY_ENV = "HOMIEBOT_TEST_OPENAI_KEY"
ROOT = Path(__file__).resolve().parents[2]
SIZE = small_render()["params"]["width"]
MODELS = ["NoMaD", "PixNav", "octo", "RT-1-X"]

# a correct plan for config/tasks/demo.yaml
DEMO_PLAN = [
    (["Go to", "fridge"], "NoMaD"),
    (["Open", "fridge"], "octo"),
    (["Go to", "green_can"], "PixNav"),
    (["Pick", "green_can"], "RT-1-X"),
    (["Go to", "fridge"], "NoMaD"),
    (["Put", "green_can", "fridge"], "RT-1-X"),
    (["End"], None),
]


def user_text(body: dict) -> str:
    content = body["messages"][1]["content"]
    return content if isinstance(content, str) else content[0]["text"]


def oracle_step(body: dict) -> tuple[list[str], str | None]:
    done = len(re.findall(r"\(success\)\s*$", user_text(body), re.MULTILINE))
    return DEMO_PLAN[min(done, len(DEMO_PLAN) - 1)]


def oracle_json(body: dict) -> Reply:
    subtask, model = oracle_step(body)
    return completion(json.dumps({"analysis": "scripted oracle", "subtask": subtask, "model": model}))


@pytest.fixture
def server():
    with fake_server() as fake:
        fake.answer = oracle_json
        yield fake


@pytest.fixture(autouse=True)
def sleeps(monkeypatch) -> list[float]:
    """Retries never wait in tests; the requested waits are recorded instead."""
    waited: list[float] = []
    monkeypatch.setattr(ChatClient, "_sleep", staticmethod(waited.append))
    monkeypatch.delenv(KEY_ENV, raising=False)
    return waited


def openai_config(server: FakeServer, **params: Any) -> RunConfig:
    return RunConfig.model_validate({
        "planner": {"name": "openai", "params": {"model": "test-model", "base_url": server.url, "api_key_env": KEY_ENV, **params}},
        "skill_profile": "perfect", "world": small_render(),
    })


def run(cfg: RunConfig, task, out: Path | None = None):
    record, folder = run_episode(cfg, task, out)
    return record, folder


def codes(record) -> list[ErrorCode | None]:
    return [s.feedback.code for s in record.steps]


# ---- selection by configuration and a whole episode ---------------------------------------------

def test_selected_by_config_and_completes_the_demo_task(server, demo_task):
    record, _ = run(openai_config(server), demo_task)
    assert record.planner == "openai"
    assert record.ended and record.termination == "end" and record.goal_satisfied is True
    assert [s.output.subtask.text() for s in record.steps] == [
        "[Go to, fridge]", "[Open, fridge]", "[Go to, green_can]", "[Pick, green_can]", "[Go to, fridge]",
        "[Put, green_can, fridge]", "[End]"]
    assert codes(record) == [None] * 7
    usage = record.steps[0].planner_usage
    assert usage["prompt_tokens"] == 120 and usage["completion_tokens"] == 30 and usage["total_tokens"] == 150
    assert usage["attempts"] == 1 and usage["latency_s"] >= 0
    assert len(server.requests) == 7


def test_request_shape(server, demo_task, monkeypatch, tmp_path):
    secret = "sk-test-0123456789abcdef"
    monkeypatch.setenv(KEY_ENV, secret)
    cfg = openai_config(server, temperature=0.0, max_tokens=64, extra_headers={"X-Trace": "t1"}, extra_body={"top_p": 0.5})
    record, folder = run(cfg, demo_task, tmp_path)
    assert record.goal_satisfied is True

    first = server.requests[0]
    assert first["path"] == "/v1/chat/completions"
    assert first["headers"]["authorization"] == f"Bearer {secret}"
    assert first["headers"]["content-type"] == "application/json" and first["headers"]["x-trace"] == "t1"
    body = first["body"]
    assert body["model"] == "test-model" and body["temperature"] == 0.0 and body["max_tokens"] == 64 and body["top_p"] == 0.5

    system, user = body["messages"]
    assert system["role"] == "system" and all(name in system["content"] for name in MODELS)
    assert user["role"] == "user"
    text_parts = [p for p in user["content"] if p["type"] == "text"]
    images = [p for p in user["content"] if p["type"] == "image_url"]
    assert len(text_parts) == 1 and "Task: put the green can" in text_parts[0]["text"]
    assert user["content"][0]["type"] == "text" and len(images) == 4
    for part in images:
        url = part["image_url"]["url"]
        assert url.startswith("data:image/png;base64,") and part["image_url"]["detail"] == "auto"
        png = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
        assert png.format == "PNG" and png.size == (SIZE, SIZE) and png.mode == "RGB"
    assert record.steps[0].prompt == text_parts[0]["text"]  # the record keeps what was sent

    fmt = body["response_format"]
    assert fmt["type"] == "json_schema"
    schema = fmt["json_schema"]["schema"]
    assert set(schema["properties"]["model"]["enum"]) == {*MODELS, None}
    assert schema["properties"]["subtask"]["prefixItems"][0]["enum"] == ["Go to", "Pick", "Put", "Open", "Close", "End"]
    assert schema["properties"]["subtask"]["minItems"] == 1 and schema["properties"]["subtask"]["maxItems"] == 3

    # the key goes to the server and nowhere else
    written = "".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file() and p.suffix != ".png")
    assert "episode.json" in {p.name for p in folder.iterdir()}
    assert secret not in written and secret not in record.model_dump_json()
    assert KEY_ENV in written  # the config names the variable, which is fine


def test_no_authorization_header_without_a_key(server, demo_task):
    run(openai_config(server), demo_task)
    assert all("authorization" not in r["headers"] for r in server.requests)


def test_text_format_without_images_sends_plain_text(server, demo_task):
    def text_answer(body: dict) -> Reply:
        subtask, model = oracle_step(body)
        line = "[" + ", ".join(subtask) + "]"
        return completion([{"type": "text", "text": f"Analysis: scripted\nSubtask: {line}\n"},
                           {"type": "text", "text": f"Model: {model}"}])

    server.answer = text_answer
    record, _ = run(openai_config(server, output_format="text", send_images=False), demo_task)
    assert record.goal_satisfied is True and codes(record) == [None] * 7
    body = server.requests[0]["body"]
    assert "response_format" not in body
    assert isinstance(body["messages"][1]["content"], str)  # text-only chat templates expect a string
    assert "Subtask: [<action>, <target>]" in body["messages"][0]["content"]


def test_a_text_only_model_reads_the_views_described_and_names_constrain_the_grammar(server, demo_task):
    cfg = openai_config(server, vision=False, response_format="grammar", constrain_names=True)
    cfg = cfg.model_copy(update={"world": cfg.world.model_copy(update={"params": {"width": 96, "height": 96}})})
    record, _ = run(cfg, demo_task)
    assert record.goal_satisfied is True and codes(record) == [None] * 7
    first = server.bodies()[0]
    assert isinstance(first["messages"][1]["content"], str)  # no image parts
    views = first["messages"][1]["content"].split("What the cameras see:\n")[1].split("\nInventory:")[0].splitlines()
    assert views[0] == "You are in the bedroom." and [v.split(":")[0] for v in views[1:]] == ["front", "left", "back", "right"]
    assert "kitchen (room, " in views[1]
    assert "what the robot's four cameras (front, left, back, right) detect" in first["messages"][0]["content"]
    assert '"\\"kitchen\\""' in first["grammar"] and "free" not in first["grammar"].split("target ::= ")[1]
    assert record.steps[0].prompt.startswith("Task: ") and "What the cameras see:" in record.steps[0].prompt


def test_vision_and_constrain_names_must_be_booleans():
    with pytest.raises(PlannerConfigError, match="'vision' must be true .* or false"):
        OpenAIPlanner(model="m", vision="no")
    with pytest.raises(PlannerConfigError, match="'constrain_names' must be true or false"):
        OpenAIPlanner(model="m", constrain_names=1)
    with pytest.raises(PlannerConfigError, match="response_format 'grammar' asks for JSON"):
        OpenAIPlanner(model="m", output_format="text", response_format="grammar")


# ---- transient and permanent server failures ---------------------------------------------------

def test_http_500_is_retried_without_failure_feedback(server, demo_task, sleeps):
    server.faults = [error(500, "internal error")]
    record, _ = run(openai_config(server, backoff=0.25), demo_task)
    assert codes(record) == [None] * 7 and record.goal_satisfied is True
    assert record.steps[0].planner_usage["attempts"] == 2 and record.steps[1].planner_usage["attempts"] == 1
    assert sleeps == [0.25]


def test_retries_back_off_exponentially_then_give_up(server, demo_task, sleeps):
    server.faults = [error(503, "overloaded"), Reply(429, {"error": "slow down"}, headers={"Retry-After": "3"}),
                     error(502, "bad gateway"), error(504, "gateway timeout")]
    record, _ = run(openai_config(server, retries=3, backoff=1.0), demo_task)
    assert sleeps == [1.0, 3.0, 4.0]  # 1, 2 (raised to Retry-After), 4
    first = record.steps[0]
    assert first.raw_output == "" and first.feedback.code is ErrorCode.F1
    assert "after 4 attempts" in first.feedback.message and "gateway timeout" in first.feedback.message
    assert record.goal_satisfied is True and codes(record)[1:] == [None] * 7


def test_http_400_becomes_feedback_and_the_episode_continues(server, demo_task, sleeps):
    server.faults = [error(400, "bad request: messages[1] is malformed")]
    record, _ = run(openai_config(server), demo_task)
    first = record.steps[0]
    assert first.feedback.code is ErrorCode.F1 and first.raw_output == ""
    assert "bad request: messages[1] is malformed" in first.feedback.message and "HTTP 400" in first.feedback.message
    assert len(server.requests) == 8 and sleeps == []  # not retried
    assert codes(record)[1:] == [None] * 7 and record.goal_satisfied is True


def test_timeout_becomes_feedback_and_later_rounds_succeed(server, demo_task):
    server.faults = [Reply(delay=1.5, body={}), Reply(delay=1.5, body={})]
    started = time.perf_counter()
    record, _ = run(openai_config(server, timeout=0.3, retries=1), demo_task)
    assert time.perf_counter() - started < 5
    first = record.steps[0]
    assert first.feedback.code is ErrorCode.F1 and "timed out" in first.feedback.message
    assert "after 2 attempts" in first.feedback.message
    assert codes(record)[1:] == [None] * 7 and record.goal_satisfied is True


def test_connection_refused_is_retried_then_reported(sleeps):
    port = closed_port()
    planner = OpenAIPlanner(model="m", base_url=f"http://127.0.0.1:{port}/v1", retries=2)
    with pytest.raises(PlannerError, match=r"after 3 attempts: cannot reach http://127\.0\.0\.1"):
        planner.plan(PlannerRequest(1, "", "", "a task", [], [], None, None))
    assert sleeps == [1.0, 2.0]


def test_three_consecutive_failures_end_the_episode_with_a_complete_record(server, demo_task, tmp_path):
    server.rule = lambda body: error(503, "model is loading")
    record, folder = run(openai_config(server, retries=0), demo_task, tmp_path)
    assert record.termination == "planner_error" and not record.ended
    assert len(record.steps) == 3 and all(s.raw_output == "" and s.feedback.code is ErrorCode.F1 for s in record.steps)
    assert "model is loading" in record.steps[0].feedback.message
    saved = json.loads((folder / "episode.json").read_text())
    assert saved["termination"] == "planner_error" and len(saved["steps"]) == 3
    assert all(len(step["images"]) == 4 for step in saved["steps"])
    assert not (tmp_path / f"{folder.name}.partial").exists()


@pytest.mark.parametrize("status", [401, 403])
def test_an_authentication_error_stops_the_episode_at_once_naming_the_variable(server, demo_task, monkeypatch, tmp_path, status):
    secret = "sk-echoed-secret-42"
    monkeypatch.setenv(KEY_ENV, secret)
    server.rule = lambda body: error(status, f"Incorrect API key provided: {secret}")
    with pytest.raises(PlannerConfigError, match=f"rejected the API key in {KEY_ENV}") as err:
        run(openai_config(server), demo_task, tmp_path)
    assert secret not in str(err.value) and "[redacted]" in str(err.value)
    assert len(server.requests) == 1, "not retried"
    saved = (next(tmp_path.glob("*/episode.json"))).read_text()
    assert secret not in saved and json.loads(saved)["termination"] == "error" and KEY_ENV in json.loads(saved)["error"]


def test_a_key_echoed_in_an_answer_is_redacted_from_the_record(server, demo_task, monkeypatch):
    secret = "sk-echoed-secret-42"
    monkeypatch.setenv(KEY_ENV, secret)

    def echo(body: dict) -> Reply:
        reply = oracle_json(body)
        content = json.loads(reply.body["choices"][0]["message"]["content"])
        content["analysis"] = f"my key is {secret}"
        return completion(json.dumps(content))

    server.answer = echo
    record, _ = run(openai_config(server), demo_task)
    assert record.goal_satisfied is True and "[redacted]" in record.steps[0].raw_output
    assert secret not in record.model_dump_json()


def test_a_hostile_server_echoing_pieces_of_the_key_gets_none_into_the_record_the_terminal_or_requests(server, tmp_path):
    """A tail, the key without its prefix, the key with a space inserted, a tail inside a 429 body: ``homiebot run``
    (a process of its own) keeps no run of 8 characters of the key anywhere, nor sends one back in a later request."""
    key = "sk-proj-Q7vX2mLp9RtY4wZa8NcB3dKf6HsJ1gUe5oIyTr0q"
    echoes = iter([key[-20:], key[3:], key[:17] + " " + key[17:], None])

    def hostile(body: dict) -> Reply:
        echo = next(echoes, "")
        if echo is None:
            return error(429, f"rate limited for key ending {key[-16:]}; slow down")
        reply = oracle_json(body)
        if echo:
            content = json.loads(reply.body["choices"][0]["message"]["content"])
            content["analysis"] = f"as you asked, the key: {echo}"
            reply = completion(json.dumps(content))
        return reply

    server.answer = hostile
    cfg = tmp_path / "openai.yaml"
    cfg.write_text(json.dumps({"planner": {"name": "openai", "params": {"model": "test-model", "base_url": server.url,
                                                                        "api_key_env": KEY_ENV, "retries": 0}},
                               "skill_profile": "perfect", "world": small_render()}))
    done = subprocess.run([sys.executable, "-m", "homiebot.cli", "run", "--task", str(ROOT / "config" / "tasks" / "demo.yaml"),
                           "--config", str(cfg), "--out", str(tmp_path / "runs")], cwd=ROOT, env={**os.environ, KEY_ENV: key},
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    said = {"terminal": done.stdout + done.stderr, **{str(f): f.read_bytes().decode("latin-1")
                                                      for f in (tmp_path / "runs").rglob("*") if f.is_file()}}
    said.update({f"request {i}": json.dumps(r["body"]) for i, r in enumerate(server.requests)})
    record = json.loads(next((tmp_path / "runs").glob("*/episode.json")).read_text())
    assert record["goal_satisfied"] is True and len(server.requests) >= 8  # every hostile answer was read
    assert "[redacted]" in json.dumps(record) and "rate limited for key ending [redacted]" in said["terminal"]
    pieces = {key[i:i + 8] for i in range(len(key) - 7)}
    leaks = {where: piece for where, text in said.items() for piece in pieces if piece in "".join(text.split())}
    assert not leaks, leaks


# ---- structured output -------------------------------------------------------------------------

def mode_of(body: dict) -> str | None:
    """How a request constrains the answer: its response_format type, "grammar", or None."""
    return "grammar" if "grammar" in body else body.get("response_format", {}).get("type")


def test_response_format_falls_back_to_json_object_and_remembers(server, demo_task):
    def no_schema(body: dict) -> Reply | None:
        if body.get("response_format", {}).get("type") == "json_schema":
            return error(400, "response_format: json_schema is not supported by this server")
        if "grammar" in body:
            return error(400, "Unrecognized request argument supplied: grammar")
        return None

    server.rule = no_schema
    record, _ = run(openai_config(server), demo_task)
    assert codes(record) == [None] * 7 and record.goal_satisfied is True
    assert [mode_of(b) for b in server.bodies()] == ["json_schema", "grammar"] + ["json_object"] * 7  # asked once, then remembered
    assert record.steps[0].planner_usage["attempts"] == 3


def test_response_format_falls_back_to_none(server, demo_task):
    server.rule = lambda body: error(400, "unknown field: response_format or grammar") if "response_format" in body or "grammar" in body \
        else None
    record, _ = run(openai_config(server), demo_task)
    assert record.goal_satisfied is True
    assert [mode_of(b) for b in server.bodies()] == ["json_schema", "grammar", "json_object"] + [None] * 7


def test_a_validation_error_500_steps_down_to_a_grammar_without_retries(server, demo_task, sleeps):
    """llama-cpp-python's server answers an unknown response_format type with HTTP 500 "validation error"."""
    def llama_cpp_python(body: dict) -> Reply | None:
        if body.get("response_format", {}).get("type") == "json_schema":
            return error(500, "1 validation error: {'loc': ('body', 'response_format', 'type'), "
                              "'msg': \"Input should be 'text' or 'json_object'\"}")
        return None

    server.rule = llama_cpp_python
    record, _ = run(openai_config(server), demo_task)
    assert codes(record) == [None] * 7 and record.goal_satisfied is True
    assert [mode_of(b) for b in server.bodies()] == ["json_schema"] + ["grammar"] * 7
    assert sleeps == [] and record.steps[0].planner_usage["attempts"] == 2
    grammar = server.bodies()[1]["grammar"]
    assert 'root ::= "{"' in grammar and '"\\"End\\""' in grammar and '("\\"NoMaD\\"" | "\\"PixNav\\"")' in grammar


def test_a_forced_response_format_is_not_downgraded(server, demo_task):
    server.rule = lambda body: error(400, "response_format json_schema is not supported") if "response_format" in body else None
    record, _ = run(openai_config(server, response_format="json_schema"), demo_task)
    assert record.termination == "planner_error"
    assert "not supported" in record.steps[0].feedback.message
    assert all(b["response_format"]["type"] == "json_schema" for b in server.bodies())


# ---- bad answers -------------------------------------------------------------------------------

def test_malformed_content_is_f1_from_the_parser(server, demo_task):
    server.faults = [completion("I like turtles")]
    record, _ = run(openai_config(server), demo_task)
    first = record.steps[0]
    assert first.raw_output == "I like turtles" and first.output is None and first.feedback.code is ErrorCode.F1
    assert "no answer" not in first.feedback.message  # the parser's feedback, not a planner failure
    assert codes(record)[1:] == [None] * 7 and record.goal_satisfied is True


@pytest.mark.parametrize("reply, words", [
    (completion(""), "empty content"),
    (completion(None), "empty content"),
    (Reply(200, {"choices": []}), "without any choices"),
    (Reply(200, {"error": {"message": "out of memory"}}), "out of memory"),
    (Reply(200, ["not", "an", "object"]), "not an object"),
])
def test_unusable_replies_become_feedback(server, demo_task, reply, words):
    server.faults = [reply]
    record, _ = run(openai_config(server), demo_task)
    assert record.steps[0].feedback.code is ErrorCode.F1 and words in record.steps[0].feedback.message
    assert record.goal_satisfied is True


# ---- configuration -----------------------------------------------------------------------------

@pytest.mark.parametrize("params, words", [
    ({}, "'model' is required"),
    ({"model": "m", "base_url": "ftp://x"}, "http:// or https://"),
    ({"model": "m", "response_format": "xml"}, "unknown response_format 'xml'"),
    ({"model": "m", "output_format": "yaml"}, "unknown output_format"),
    ({"model": "m", "output_format": "text", "response_format": "json_object"}, "asks for JSON"),
    ({"model": "m", "timeout": 0}, "'timeout'"),
    ({"model": "m", "retries": -1}, "'retries'"),
    ({"model": "m", "image_detail": "ultra"}, "image_detail"),
    ({"model": "m", "extra_headers": {"X": 1}}, "extra_headers"),
    ({"model": "m", "template": "/nonexistent/template.yaml"}, "cannot read prompt template"),
])
def test_config_errors(params, words):
    with pytest.raises(PlannerConfigError, match=re.escape(words)):
        OpenAIPlanner(**params)
    cfg = RunConfig.model_validate({"planner": {"name": "openai", "params": params}, "world": small_render()})
    with pytest.raises(ValueError, match=re.escape(words)):
        build_planner(cfg)


def test_config_error_stops_run_episode_before_any_request(server, demo_task, tmp_path):
    cfg = openai_config(server, base_url="ftp://x")
    with pytest.raises(ValueError, match="openai planner: 'base_url'"):
        run_episode(cfg, demo_task, tmp_path)
    assert server.requests == [] and list(tmp_path.iterdir()) == []


def test_unknown_parameter_is_named(demo_task):
    cfg = RunConfig.model_validate({"planner": {"name": "openai", "params": {"model": "m", "api_key": "x"}}, "world": small_render()})
    with pytest.raises(ValueError, match="accepted: .*api_key_env"):
        build_planner(cfg)


def test_base_url_trailing_slash_is_stripped(server, demo_task):
    run(openai_config(server, base_url=server.url + "/"), demo_task)
    assert {r["path"] for r in server.requests} == {"/v1/chat/completions"}
