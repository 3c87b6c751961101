"""Redaction of a secret's pieces: any run of 8 or more of its characters, across inserted whitespace."""

from __future__ import annotations

import pytest

from homiebot.core.secrets import MARK, Redactor, header_secrets

KEY = "sk-proj-Q7vX2mLp9RtY4wZa8NcB3dKf6HsJ1gUe5oIyTr0q"


def pieces_left(text: str, secret: str = KEY, run: int = 8) -> list[str]:
    flat = "".join(text.split())
    return [secret[i:i + run] for i in range(len(secret) - run + 1) if secret[i:i + run] in flat]


@pytest.mark.parametrize("echo", [
    KEY,  # whole
    KEY[-20:],  # a tail
    KEY[3:],  # without its prefix
    KEY[:17] + " " + KEY[17:],  # a space inserted
    KEY[:10] + "\n\t" + KEY[10:30],  # broken over lines
    KEY[5:13],  # exactly eight characters
    KEY[-16:],  # a tail inside an error body
])
def test_every_piece_of_eight_or_more_is_redacted(echo: str) -> None:
    said = Redactor([KEY])(f"error: invalid token '{echo}' (see docs)")
    assert MARK in said and not pieces_left(said), said
    assert said.startswith("error: invalid token '") and said.endswith("' (see docs)")


def test_shorter_runs_and_other_text_are_left_alone() -> None:
    redact = Redactor([KEY])
    text = f"the analysis names {KEY[-7:]} and the fridge"
    assert redact(text) == text
    assert redact("") == "" and Redactor([None, "", "  "])("anything") == "anything"
    assert not Redactor([None])


def test_two_pieces_become_two_marks_and_a_short_secret_is_redacted_whole() -> None:
    said = Redactor([KEY, "abc12"])(f"{KEY[:9]} then {KEY[20:40]} and abc12!")
    assert said == f"{MARK} then {MARK} and {MARK}!"


def test_credential_headers_are_secrets_and_others_are_not() -> None:
    found = header_secrets({"Authorization": "Bearer tok-123456789", "api-key": "azure-key-987654321",
                            "X-Trace": "trace-id-00000000", "X-Auth-Token": "raw-token-value"})
    assert found == ["tok-123456789", "azure-key-987654321", "raw-token-value"]
