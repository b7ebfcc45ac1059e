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
from collections.abc import Iterator
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
#: The 300 most frequent characters of folded Korean text (KLUE dev sets), most frequent first, and the space.
#: Only speed depends on it: a presence scan looks for each form from its rarest character (see ``_Scan``).
_COMMON = (" 이다에는지을가의로고한하은서기사도1시니를0대인리아일해정어2수스으전부있나자보만장했원라화주국영들상과소요"
           "제게습3그구오위년마5진것면공연동경중비었안무여와조내분신우4트개성명모미간선거재회적치방터관용실행데입등드생씨유문할"
           "당된세9점후음역난되까작교운월6려발계87업통말최합러단없호차남예체학던건현두야금았르감좋편청민출바산결타반식각배매집"
           "때물본속추며더날않천강버번같함심포처프였설표달네불히파김울임알숙받박저직너근크따린토올평양피레노준판법약디열래찰절됐"
           "외ᄏ살력랑카루메품른독억초격종송광승북친태군권록온석람별코걸느든께형망졌총급참확복환앞료침특병족티밝투또목잘많베택항"
           "새a머변질애못s능곳담워")
_RANK = {c: i for i, c in enumerate(_COMMON)}


@cache
def _fold(ch: str) -> tuple[str, str]:
    """A character's folded form as seen by the two views: (keeping digits, dropping digits)."""
    folded = unicodedata.normalize("NFKC", ch).lower()
    kept = "".join(c for c in folded if not _is_separator(c))
    return kept, "".join(c for c in kept if not c.isdigit())


class _KeptChars(dict[str, str]):
    """Each character's part of the view that keeps digits (``_fold``), for ``map`` to look up in C; a digit that
    is no decimal (❶) becomes ``0``, a digit the presence patterns may skip, as the view without digits drops it."""

    def __missing__(self, ch: str) -> str:
        self[ch] = kept = "".join("0" if c.isdigit() and not c.isdecimal() else c for c in _fold(ch)[0])
        return kept


_KEPT = _KeptChars()


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
    # A character at a time; each character's part of a view maps back to it.
    parts = list(map(_fold, text))
    kept = "".join([part[0] for part in parts])
    without_digits = "".join([part[1] for part in parts])
    return (_View(kept, [i for i, part in enumerate(parts) for _ in part[0]]),
            _View(without_digits, [i for i, part in enumerate(parts) for _ in part[1]]))


def _squeeze(text: str, *, digits: bool) -> _View:
    return _squeeze_both(text)[1 if digits else 0]


def _trie(strings: list[str], gap: str = "", *, longest: bool = False) -> str:
    """A pattern matching any of ``strings`` with ``gap`` between their characters, its alternatives merged on
    common prefixes: ``re`` tries every alternative of a branch in turn, so fewer of them means fewer tries.
    ``longest``: the match at a position is the longest string there (else the pattern stops at the shortest)."""
    tree: dict[str, Any] = {}
    for string in strings:
        node = tree
        for c in string:
            node = node.setdefault(c, {})
        node[""] = {}

    def alternation(node: dict[str, Any], first: bool) -> str:
        ends = "" in node
        children = [(c, child) for c, child in sorted(node.items()) if c]
        if ends and not (longest and children):
            return ""  # a string ends here (and, for "is any present", whatever follows cannot matter)
        alternatives = [("" if first else gap) + re.escape(c) + alternation(child, False) for c, child in children]
        if ends:
            return f"(?:{'|'.join(alternatives)})?"  # greedy: a longer string first, this one when none follows
        return alternatives[0] if len(alternatives) == 1 else f"(?:{'|'.join(alternatives)})"

    return alternation(tree, True) if strings else "(?!)"


class _Scan:
    """Whether a text may hold one of ``strings`` (``gap`` characters allowed between their characters): never
    false when one is there, rarely true when none is.

    ``re`` stops at each position holding a first character of the alternation and tries the alternatives there;
    with the strings' own first characters (시, 지, 한…) that is several times per ordinary sentence. So each string
    is cut at its rarest character: the part from it on is looked for in the text, or, when it is the last
    character, the part up to it is looked for reversed in the reversed text.
    """

    def __init__(self, strings: list[str], gap: str) -> None:
        forward: list[str] = []
        backward: list[str] = []
        for string in strings:
            # Rarest first; among equally rare, the earliest (the longest part after it).
            at = min(range(len(string)), key=lambda i: (-_RANK.get(string[i], len(_RANK)), i), default=0)
            if at < len(string) - 1 or len(string) <= 1:
                forward.append(string[at:])
            else:
                backward.append(string[::-1])
        self._forward = re.compile(_trie(forward, gap)) if forward else None
        self._backward = re.compile(_trie(backward, gap)) if backward else None

    def __call__(self, text: str) -> bool:
        if self._forward is not None and self._forward.search(text):
            return True
        return self._backward is not None and self._backward.search(text[::-1]) is not None


@dataclass(frozen=True)
class _Term:
    rule: str
    kind: str
    category: str
    form: str
    allow: tuple[str, ...]


class LexiconScreener:
    """Screens Korean text with the lexicon in ``lexicons/ko.json`` (name and version from the file)."""

    def __init__(self, path: Path = LEXICON_PATH, *, shortcuts: bool = True) -> None:
        #: ``False``: every text through the full matching, every form found by the lookahead at every position,
        #: as before the shortcuts (what the tests compare them against).
        self._shortcuts = shortcuts
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
        #: Whether a view holds any of its forms, searched in the folded text with the view's dropped characters
        #: allowed between a form's characters (so no view has to be built): a pattern that starts with a
        #: lookahead is tried at every position, one that starts with a character is not.
        self._present: list[re.Pattern[str]] = []
        #: The forms again, found where each starts (the longest there) by searching from one start to the next:
        #: the search skips to a form's first character, the lookahead tries every position.
        self._longest: list[re.Pattern[str]] = []
        for with_digits, gap in ((True, r"[\W_]*"), (False, r"[\W\d_]*")):
            terms: dict[str, list[_Term]] = {}
            for term in self._terms:
                if any(c.isdigit() for c in term.form) == with_digits:
                    terms.setdefault(term.form, []).append(term)
            alternation = "|".join(re.escape(f) for f in sorted(terms, key=len, reverse=True))
            self._patterns.append((re.compile(f"(?=({alternation}))"), terms))
            self._longest.append(re.compile(_trie(list(terms), longest=True)))
            self._present.append(re.compile(_trie(list(terms), gap)))
        #: Before those, a cheaper scan for all forms at once; its gap also drops digits, which only widens it.
        self._any_form = _Scan(sorted({term.form for term in self._terms}), r"[\W\d_]*")
        #: ``_KEPT`` turns a digit that is no decimal (❶) into ``0``: a form spelled with one would be missed.
        self._kept_per_char = not any(c.isdigit() and not c.isdecimal() for term in self._terms for c in term.form)
        bias = data["bias"]
        self._groups = [(category, term) for category, terms in bias["groups"].items() for term in terms]
        self._cues = tuple(bias["cues"])
        self._negatives = tuple(bias["negatives"])
        self._any_negative = re.compile("|".join(re.escape(n) for n in self._negatives)) if self._negatives else None
        self._maybe_negative = _Scan(list(self._negatives), "")
        self._bias_rule = f"{tag}:bias"

    def screen(self, text: str) -> list[ScreenHit]:
        hits = self._lexicon_hits(text) + self._bias_hits(text)
        hits.sort(key=lambda h: (h.start, h.end))
        return hits

    def _lexicon_hits(self, text: str) -> list[ScreenHit]:
        # Most texts contain no form at all. When folding kept every offset, a view is the folded text without
        # the characters its pattern drops, so searching the folded text with those allowed inside a form shows
        # it without building the views and their offset lists. When it did not (… → ...), the views are folded
        # a character at a time, and so is the text scanned; only the first scan runs then, as folding this way
        # already costs more than the second would save a text that passes the first.
        if self._shortcuts:
            folded = unicodedata.normalize("NFKC", text).lower()
            if len(folded) == len(text):
                if not (self._any_form(folded) and any(present.search(folded) for present in self._present)):
                    return []
            elif self._kept_per_char and not self._any_form("".join(map(_KEPT.__getitem__, text))):
                return []
        found: dict[tuple[int, int], ScreenHit] = {}
        for view, (pattern, terms), longest in zip(_squeeze_both(text), self._patterns, self._longest, strict=True):
            # Every start is seen, so overlapping forms (씨발, 씨발놈) all are.
            for start, form in self._starts(view.text, pattern, longest):
                end = start + len(form)
                for term in terms[form]:
                    if self._counts(view, text, start, end, term):
                        span = (view.origin[start], view.origin[end - 1] + 1)
                        found.setdefault(span, ScreenHit(term.kind, term.category, span[0], span[1], term.rule))
                        break
        return list(found.values())

    def _starts(self, text: str, lookahead: re.Pattern[str], longest: re.Pattern[str]) -> Iterator[tuple[int, str]]:
        """Where a form starts in ``text``, in order, and the longest form there."""
        if not self._shortcuts:
            for match in lookahead.finditer(text):
                yield match.start(), match.group(1)
            return
        match = longest.search(text)
        while match:
            yield match.start(), match.group()
            match = longest.search(text, match.start() + 1)

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
        if self._any_negative is None or (self._shortcuts and not (
                self._maybe_negative(text) and self._any_negative.search(text))):
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
