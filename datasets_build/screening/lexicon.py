"""The rule-based Korean screener: a versioned lexicon of abusive forms plus a group-generalisation rule.

Obfuscation: the text is NFKC-normalised, lower-cased and "squeezed" — spaces, punctuation and symbols
removed (and, in a second view, digits used as fillers) — with a map back to the original offsets, so
``씨 발``, ``씨.발`` and ``씨1발`` all match ``씨발``. A match that needed a removed separator must not run
on into another Hangul word (``시 발표`` is not ``시발``), and ``allow`` words (``시발점``) never match.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from . import ScreenHit

LEXICON_PATH = Path(__file__).with_name("lexicons") / "ko.json"
#: Characters that may follow a separator-spanning match without making it part of another word.
_INSULT_TAILS = frozenset("놈년아야들새")
_HANGUL = re.compile(r"[가-힣ㄱ-ㅎㅏ-ㅣ]")
_SENTENCE = re.compile(r"[^.!?\n]+[.!?\n]*")


@cache
def _fold(ch: str) -> tuple[str, str]:
    """A character's folded form as seen by the two views: (keeping digits, dropping digits)."""
    folded = unicodedata.normalize("NFKC", ch).lower()
    kept = "".join(c for c in folded if not _is_separator(c))
    return kept, "".join(c for c in kept if not c.isdigit())


def _is_separator(ch: str) -> bool:
    if ch.isspace():
        return True
    category = unicodedata.category(ch)
    return category[0] in "PSZ" or category == "Cf"


@dataclass
class _View:
    """The squeezed text and, for each of its characters, the offset in the original."""

    text: str
    origin: list[int]


_KEEP_WITH_DIGITS = re.compile(r"[^\W_]")
_KEEP_WITHOUT_DIGITS = re.compile(r"[^\W\d_]")
#: What the two views drop (the complements of the above), to build a view's text alone with one ``sub``.
_DROP_WITH_DIGITS = re.compile(r"[\W_]+")
_DROP_WITHOUT_DIGITS = re.compile(r"[\W\d_]+")


def _squeeze_both(text: str) -> tuple[_View, _View]:
    """Two squeezed views of ``text``: without separators, and without separators or digits."""
    folded = unicodedata.normalize("NFKC", text).lower()
    if len(folded) == len(text):
        # The usual case: folding kept every offset, so the whole string can be filtered at once.
        views = []
        for pattern in (_KEEP_WITH_DIGITS, _KEEP_WITHOUT_DIGITS):
            origin = [m.start() for m in pattern.finditer(folded)]
            views.append(_View("".join(folded[i] for i in origin), origin))
        return views[0], views[1]
    chars: tuple[list[str], list[int], list[str], list[int]] = ([], [], [], [])
    for i, ch in enumerate(text):
        for view, part in enumerate(_fold(ch)):
            for c in part:
                chars[2 * view].append(c)
                chars[2 * view + 1].append(i)
    return _View("".join(chars[0]), chars[1]), _View("".join(chars[2]), chars[3])


def _squeeze(text: str, *, digits: bool) -> _View:
    return _squeeze_both(text)[1 if digits else 0]


@dataclass(frozen=True)
class _Term:
    rule: str
    kind: str
    category: str
    form: str
    allow: tuple[str, ...]


class LexiconScreener:
    """Screens Korean text with the lexicon in ``lexicons/ko.json`` (name and version from the file)."""

    def __init__(self, path: Path = LEXICON_PATH) -> None:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        self.name = str(data["name"])
        self.version = str(data["version"])
        tag = f"{self.name}@{self.version}"
        self._terms: list[_Term] = []
        for entry in data["terms"]:
            allow = tuple(_squeeze(a, digits=False).text for a in entry.get("allow", []))
            for form in entry["forms"]:
                folded = _squeeze(form, digits=False).text
                self._terms.append(_Term(f"{tag}:{entry['id']}", entry["kind"], entry["category"], folded, allow))
        # Forms spelled with digits ("18놈") are looked up in the view that keeps digits.
        self._patterns = []
        #: The same forms without the lookahead, only to see whether a view holds any: a pattern that starts
        #: with a lookahead is tried at every position, one that starts with a character is not.
        self._present: list[re.Pattern[str]] = []
        for with_digits in (True, False):
            terms: dict[str, list[_Term]] = {}
            for term in self._terms:
                if any(c.isdigit() for c in term.form) == with_digits:
                    terms.setdefault(term.form, []).append(term)
            alternation = "|".join(re.escape(f) for f in sorted(terms, key=len, reverse=True))
            self._patterns.append((re.compile(f"(?=({alternation}))"), terms))
            self._present.append(re.compile(alternation))
        bias = data["bias"]
        self._groups = [(category, term) for category, terms in bias["groups"].items() for term in terms]
        self._cues = tuple(bias["cues"])
        self._negatives = tuple(bias["negatives"])
        self._any_negative = re.compile("|".join(re.escape(n) for n in self._negatives)) if self._negatives else None
        self._bias_rule = f"{tag}:bias"

    def screen(self, text: str) -> list[ScreenHit]:
        hits = self._lexicon_hits(text) + self._bias_hits(text)
        hits.sort(key=lambda h: (h.start, h.end))
        return hits

    def _lexicon_hits(self, text: str) -> list[ScreenHit]:
        folded = unicodedata.normalize("NFKC", text).lower()
        if len(folded) == len(text) and not any(
                present.search(drop.sub("", folded))
                for drop, present in zip((_DROP_WITH_DIGITS, _DROP_WITHOUT_DIGITS), self._present, strict=True)):
            # Most texts contain no form at all: the views without their offset lists (built in C) show it.
            return []
        found: dict[tuple[int, int], ScreenHit] = {}
        for view, (pattern, terms) in zip(_squeeze_both(text), self._patterns, strict=True):
            # A lookahead finds every start, so overlapping forms (씨발, 씨발놈) are all seen.
            for match in pattern.finditer(view.text):
                form = match.group(1)
                start = match.start()
                end = start + len(form)
                for term in terms[form]:
                    if self._counts(view, text, start, end, term):
                        span = (view.origin[start], view.origin[end - 1] + 1)
                        found.setdefault(span, ScreenHit(term.kind, term.category, span[0], span[1], term.rule))
                        break
        return list(found.values())

    @staticmethod
    def _counts(view: _View, text: str, start: int, end: int, term: _Term) -> bool:
        if term.form[0].isdigit() and start > 0 and view.text[start - 1].isdigit():
            return False  # "18놈" is not inside "2018년"
        for allowed in term.allow:
            # Is the match inside an occurrence of an allowed word?
            lo = max(0, start - len(allowed) + 1)
            position = view.text.find(allowed, lo, end + len(allowed))
            while position != -1 and position <= start:
                if position + len(allowed) >= end:
                    return False
                position = view.text.find(allowed, position + 1, end + len(allowed))
        last = view.origin[end - 1]
        spread = last - view.origin[start] + 1
        if spread > len(term.form):
            # Pieced together across separators: it must end a word (씨 발 진짜), not run into one (시 발표).
            if spread > 3 * len(term.form):
                return False
            following = text[last + 1] if last + 1 < len(text) else " "
            if _HANGUL.match(following) and following not in _INSULT_TAILS:
                return False
        return True

    def _bias_hits(self, text: str) -> list[ScreenHit]:
        hits: list[ScreenHit] = []
        if self._any_negative is None or not self._any_negative.search(text):
            return hits  # a sentence is part of the text: no negative word in it, none in any sentence
        for sentence in _SENTENCE.finditer(text):
            chunk = sentence.group(0)
            if not self._any_negative.search(chunk):
                continue
            for category, group in self._groups:
                at = chunk.find(group)
                if at == -1:
                    continue
                rest = chunk[at:]
                if any(cue in rest for cue in self._cues):
                    start = sentence.start() + at
                    hits.append(ScreenHit("bias", category, start, start + len(group), self._bias_rule))
                    break
        return hits
