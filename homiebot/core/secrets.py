"""Redaction of secrets by their pieces.

A server that echoes an API key rarely echoes it whole: a tail in an error body, the key without its
``sk-`` prefix, the key with a space or a line break inside. ``Redactor`` replaces every run of
``MIN_RUN`` or more consecutive characters of a secret, whitespace inside the run ignored, so that no
such piece reaches a record, a log, a bag or the terminal. Runs shorter than ``MIN_RUN`` are left: a
random key shares short runs with ordinary text by chance, and eight characters of a 40-character key
are worth nothing to whoever reads them.
"""

from __future__ import annotations

from collections.abc import Iterable

MIN_RUN = 8  # characters of a secret, in a row, that count as a piece of it
MARK = "[redacted]"
SCAN_LIMIT = 1 << 20  # characters of one text scanned; a longer one is cut there first (the piece it cuts is found, or too short)

SECRET_HEADER_WORDS = ("auth", "key", "token", "secret", "password", "cookie")


def header_secrets(headers: dict[str, str]) -> list[str]:
    """The values of headers whose names say they carry a credential (``Authorization``, ``api-key``,
    ``X-Auth-Token``...), the scheme word (``Bearer``, ``Basic``) dropped."""
    found = []
    for name, value in headers.items():
        if any(word in name.lower() for word in SECRET_HEADER_WORDS):
            parts = value.split(None, 1)
            found.append(parts[1] if len(parts) == 2 and parts[0].lower() in ("bearer", "basic", "token") else value)
    return found


class Redactor:
    """Replaces the pieces of a fixed set of secrets in any text with ``[redacted]``."""

    def __init__(self, secrets: Iterable[str | None], min_run: int = MIN_RUN) -> None:
        self.min_run = min_run
        self._grams: dict[int, set[str]] = {}  # piece length -> every piece of that length of some secret
        for secret in secrets:
            flat = "".join((secret or "").split())
            if not flat:
                continue
            n = min(min_run, len(flat))  # a secret shorter than a piece is redacted whole
            self._grams.setdefault(n, set()).update(flat[i:i + n] for i in range(len(flat) - n + 1))

    def __bool__(self) -> bool:
        return bool(self._grams)

    def __call__(self, text: str) -> str:
        """``text`` with every piece of a secret, and the whitespace inside it, replaced by one mark each."""
        if not self._grams or not text:
            return text
        if len(text) > SCAN_LIMIT:
            text = text[:SCAN_LIMIT]
        where = [i for i, c in enumerate(text) if not c.isspace()]  # pieces may straddle inserted whitespace
        flat = "".join(text[i] for i in where)
        hit = bytearray(len(flat))
        for n, grams in self._grams.items():
            for i in range(len(flat) - n + 1):
                if flat[i:i + n] in grams:
                    hit[i:i + n] = b"\x01" * n
        if not any(hit):
            return text
        out, kept_to, i = [], 0, 0
        while i < len(flat):
            if not hit[i]:
                i += 1
                continue
            j = i
            while j + 1 < len(flat) and hit[j + 1]:
                j += 1
            out += [text[kept_to:where[i]], MARK]
            kept_to, i = where[j] + 1, j + 1
        out.append(text[kept_to:])
        return "".join(out)


__all__ = ["MARK", "MIN_RUN", "Redactor", "header_secrets"]
