"""Everyday wrapping around a request, removed before it is read: emoji and emoticons, dashes used as
commas, sign-offs ("— thanks", "thx", "cheers", "ta"), chat spellings ("pls", "u", "n", "smth", "->" and "+") and the robot
addressed by name ("hey robot, ..."). None of these change what is asked, so they must not change
how it is read; the words of the request itself are left as they are.
"""

from __future__ import annotations

import re
import unicodedata

# emoticons as typed: :) :-) ;) :D :P :( <3 xD ^^ (after a space or at the end, never inside words)
_EMOTICON = re.compile(r"(?:(?<=\s)|^)(?:[:;=][-'^]?[)(\]\[dpo/\\|*3]+|<3+|x-?d+|\^_*\^|\(:|o_o)(?=\s|[.,!?]|$)", re.I)
_SIGN_OFF = (r"(?:many |a million |so many )?thanks?(?: (?:you|u|ya))?(?: (?:so|very) much| a lot| in advance| a bunch| heaps| mate| buddy)?"
             r"|thx|tx|ty(?:sm|vm)?|tysm|cheers(?: mate| buddy)?|ta(?: very much)?|much appreciated|appreciated|appreciate it"
             r"|(?:you'?re|you are|ur) (?:a |the )?(?:star|legend|best|hero)|(?:love|lots of love|xo+|x+)|lol|haha+|hehe+")
_TRAILING = re.compile(rf"(?:^|[\s,.;!?]+)(?:{_SIGN_OFF})(?:[\s,.;!?]+(?:{_SIGN_OFF}))*[\s,.;!?]*$", re.I)
_ROBOT = r"(?:robot|robo|homiebot|bot|buddy|mate|pal)"
_ADDRESS = re.compile(rf"^(?:(?:hey|hi|hello|yo|ok|okay|oi|excuse me)[\s,!.]+)*(?:(?:hey|hi|hello|yo|ok|okay|oi)\s+)?{_ROBOT}\b[\s,!.:;]*"
                      rf"|^(?:hey|hi|hello|yo|oi)\b[\s,!.]*", re.I)
_CHAT = [(r"\bpl[sz]e?\b|\bplox\b", "please"), (r"\bu\b", "you"), (r"\bur\b", "your"), (r"\bya\b", "you"),
         (r"\bcud\b", "could"), (r"\bwud\b", "would"), (r"\s*(?:-+|=+)>\s*", " to "), (r"(?<=\w)\s*\+\s*(?=\w)", " and "),
         (r"(?<=\w) n (?=\w)|^n (?=\w)|(?<=[.,;]) n (?=\w)", " and "), (r"\b(?:smth|sth|smthg|somethin)\b", "something"),
         (r"\bim\b", "i am"), (r"\bem\b", "them"), (r"\bnvm\b", "never mind"), (r"\btheres\b", "there is"),
         (r"\bdont\b", "do not")]


def _drop_symbols(text: str) -> str:
    """Emoji, pictographs and their joiners and selectors become spaces (letters, digits and ordinary
    punctuation stay)."""
    out = []
    for ch in text:
        cat = unicodedata.category(ch)
        if cat in ("So", "Sk", "Cs", "Co") or ch in "\u200d\ufe0f\ufe0e\u20e3" or 0x1F000 <= ord(ch) <= 0x1FAFF:
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out)


def tidy(text: str) -> str:
    """The request without its wrapping (see the module text); an unchanged plain request stays as it was."""
    t = _drop_symbols(text)
    t = t.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    t = re.sub(r"\s*[—–―]+\s*|\s+-{1,2}\s+|\s*--+\s*", ", ", t)  # a dash between words is a pause, not a hyphen
    t = _EMOTICON.sub(" ", t)
    t = re.sub(r"[\"*~]+", " ", t)
    for pat, rep in _CHAT:
        t = re.sub(pat, rep, t, flags=re.I)
    for _ in range(2):  # "hey robot, thanks" runs
        t = _TRAILING.sub("", t.strip())
        t = _ADDRESS.sub("", t.strip())
    t = re.sub(r"\s*,(?:\s*,)+", ",", t)
    t = re.sub(r"\s+([,.!?])", r"\1", t)
    return re.sub(r"\s+", " ", t).strip(" ,;")
