"""The shared chat-completions client on its own: the request it sends, its typed errors and its
settings checks, against a server on the loopback interface (the OpenAI planner's tests cover the
retry schedule and error texts through the planner)."""

from __future__ import annotations

import re

import pytest

from homiebot.core.chat_client import ChatAuthError, ChatBadReply, ChatClient, ChatConfigError, ChatRejected, ChatUnavailable

from .chat_server import Reply, closed_port, completion, error, fake_server

KEY_ENV = "HOMIEBOT_TEST_CHAT_KEY"
MESSAGES = [{"role": "user", "content": "hello"}]


@pytest.fixture
def waits(monkeypatch) -> list[float]:
    waited: list[float] = []
    monkeypatch.setattr(ChatClient, "_sleep", staticmethod(waited.append))
    monkeypatch.delenv(KEY_ENV, raising=False)
    return waited


def test_one_completion_carries_the_fields_and_reports_usage(waits) -> None:
    with fake_server() as server:
        server.answer = lambda body: completion("hi there")
        client = ChatClient(model="m", base_url=server.url, api_key_env=KEY_ENV, temperature=0.5, max_tokens=9,
                            extra_body={"top_p": 0.9}, extra_headers={"X-Trace": "t"}, user_agent="homiebot-test")
        reply = client.complete(MESSAGES, seed=7)
    assert reply.text == "hi there" and reply.attempts == 1 and reply.latency_s >= 0
    assert reply.usage == {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}
    sent = server.requests[0]
    assert sent["path"] == "/v1/chat/completions" and sent["headers"]["user-agent"] == "homiebot-test"
    assert sent["headers"]["x-trace"] == "t" and "authorization" not in sent["headers"]
    assert sent["body"] == {"model": "m", "messages": MESSAGES, "stream": False, "temperature": 0.5, "max_tokens": 9,
                            "seed": 7, "top_p": 0.9}


def test_errors_are_typed_with_a_short_reason_and_the_attempts(waits, monkeypatch) -> None:
    with fake_server() as server:
        client = ChatClient(model="m", base_url=server.url, api_key_env=KEY_ENV, retries=2, backoff=0.5)
        server.faults = [error(503, "busy")] * 3
        with pytest.raises(ChatUnavailable) as down:
            client.complete(MESSAGES)
        assert down.value.reason == "HTTP 503: busy" and down.value.attempts == 3 and waits == [0.5, 1.0]
        assert "no answer after 3 attempts" in str(down.value)

        server.faults = [error(422, "messages: field required")]
        with pytest.raises(ChatRejected) as refused:
            client.complete(MESSAGES)
        assert refused.value.status == 422 and refused.value.server_message == "messages: field required"
        assert not isinstance(refused.value, ChatAuthError)

        monkeypatch.setenv(KEY_ENV, "sk-secret-123")
        server.faults = [error(401, "bad key sk-secret-123")]
        with pytest.raises(ChatAuthError, match=f"rejected the API key in {KEY_ENV}") as auth:
            client.complete(MESSAGES)
        assert "sk-secret-123" not in str(auth.value) + auth.value.reason + auth.value.server_message

        server.faults = [Reply(200, {"choices": [{"message": {"content": " "}, "finish_reason": "length"}]})]
        with pytest.raises(ChatBadReply) as empty:
            client.complete(MESSAGES)
        assert empty.value.reason == "empty content (finish_reason: length)" and len(server.requests) == 6


def test_a_closed_port_is_unavailable_not_a_crash(waits) -> None:
    client = ChatClient(model="m", base_url=f"http://127.0.0.1:{closed_port()}/v1", retries=0)
    with pytest.raises(ChatUnavailable, match="after 1 attempt: cannot reach"):
        client.complete(MESSAGES)


@pytest.mark.parametrize("settings, words", [
    ({}, "'model' is required"),
    ({"model": " "}, "'model' is required"),
    ({"model": "m", "base_url": "localhost:11434"}, "'base_url' must start with http:// or https://"),
    ({"model": "m", "api_key_env": ""}, "'api_key_env'"),
    ({"model": "m", "temperature": -0.1}, "'temperature'"),
    ({"model": "m", "temperature": True}, "'temperature'"),
    ({"model": "m", "max_tokens": 0}, "'max_tokens'"),
    ({"model": "m", "timeout": "5"}, "'timeout'"),
    ({"model": "m", "retries": 1.5}, "'retries'"),
    ({"model": "m", "backoff": -1}, "'backoff'"),
    ({"model": "m", "extra_body": {1: 2}}, "'extra_body'"),
    ({"model": "m", "extra_body": {"when": object()}}, "'extra_body' must hold JSON values"),
])
def test_settings_are_checked_up_front(settings, words) -> None:
    with pytest.raises(ChatConfigError, match=re.escape(words)):
        ChatClient(**settings)


SECRET = "sk-live-" + "0123456789abcdefghijklmnopqrstuvwx"  # 40 characters, as hosted keys are


@pytest.mark.parametrize("reply", [
    Reply(200, f"<html>upstream proxy failure {'.' * 64} token {SECRET} leaked</html>".encode()),  # the key straddles the 120-character cut
    Reply(200, {"choices": [{"message": {"content": ""}, "finish_reason": f"blocked:{SECRET}"}]}),
    Reply(200, {"choices": [{"message": {"content": None, "refusal": f"{'no ' * 90}{SECRET}"}}]}),
    Reply(200, {"error": {"message": f"{'x' * 280}{SECRET}"}}),
    Reply(400, {"error": {"message": f"{'bad request ' * 23}{SECRET}"}}),
    Reply(503, {"error": {"message": f"{'busy ' * 56}{SECRET}"}}),
])
def test_no_part_of_the_key_survives_in_any_error(waits, monkeypatch, reply) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    with fake_server() as server:
        server.faults = [reply]
        client = ChatClient(model="m", base_url=server.url, api_key_env=KEY_ENV, retries=0)
        with pytest.raises((ChatBadReply, ChatRejected, ChatUnavailable)) as failed:
            client.complete(MESSAGES)
    said = " ".join([str(failed.value), failed.value.reason, getattr(failed.value, "server_message", "")])
    # not the key, and not any 6-character piece of it (a key cut before redaction would leave one)
    assert not any(SECRET[i:i + 6] in said for i in range(len(SECRET) - 5)), said


def test_a_redirect_is_refused_and_the_key_never_leaves(waits, monkeypatch) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    with fake_server() as server, fake_server() as elsewhere:
        for status in (301, 302, 303, 307, 308):
            server.faults = [Reply(status, {}, headers={"Location": f"{elsewhere.url}/chat/completions"})]
            client = ChatClient(model="m", base_url=server.url, api_key_env=KEY_ENV, retries=2)
            with pytest.raises(ChatRejected, match="redirects are not followed") as refused:
                client.complete(MESSAGES)
            assert refused.value.status == status and refused.value.attempts == 1
            assert elsewhere.url.removesuffix("/v1") in str(refused.value)
    assert elsewhere.requests == [] and waits == []
