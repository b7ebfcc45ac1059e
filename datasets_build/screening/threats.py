"""Threats and calls for violence, found with patterns over Kiwi's morphological analysis.

A lexicon cannot tell ``다 죽어야 한다`` (a call for death) from ``배가 고파 죽겠다`` (an intensifier) or
``죽을 만큼 힘들다``: the word is the same, the grammar around it is not. So the sentences that contain a
killing or hurting verb stem are analysed with Kiwi (the analyser the DP import already uses,
:mod:`datasets_build.morph`), and a hit needs the verb as a main verb (``VV``; ``웃겨 죽겠네`` has it as an
auxiliary) followed, after an optional ``-어 버리-``, by one of these constructions:

* ``must``: ``-어야 하/되-`` (죽어야 한다, 죽여야 돼) — killing and dying verbs;
* ``imperative``: a sentence-final ``-어라/-거라`` (죽어라, 뒈져라; ``죽어라 공부했다`` has a connective ending);
* ``wish``: ``-었으면 좋겠-`` or ``-기(를) 바라-`` (죽었으면 좋겠다, 죽길 바란다);
* ``deserve``: ``-어 마땅하-`` (죽어 마땅한);
* ``intent``: a transitive hurting verb with ``-겠-``, ``-ㄹ 거/것``, ``-ㄹ게`` or, after ``버리-``, a
  present ending (죽여 버리겠다, 죽일 거야, 찔러 버릴 거야) — never ``죽-`` itself (배고파 죽겠다).

Killing weeds, insects, germs, an engine or the mood is no threat: a killing verb whose object (the noun
before it, with or without ``을/를``) is one of :data:`NOT_A_PERSON` is skipped. Most texts contain no such
stem at all; they are passed over by one regular-expression search, without the analyser.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from functools import lru_cache
from sys import intern

from . import ScreenHit

NAME = "ko-threats"
VERSION = "2026.12-1"

#: Dying or killing: a call for someone's death.
DEATH = frozenset({"죽", "죽이", "뒈지", "처죽이", "쳐죽이", "때려죽이", "패죽이", "쏴죽이"})
#: Hurting someone: a threat when the speaker announces it.
HARM = frozenset({"죽이", "처죽이", "쳐죽이", "때려죽이", "패죽이", "쏴죽이", "찌르", "패", "때리", "쏘",
                  "묻", "불태우", "조지", "담그"})
#: Objects that make a killing verb harmless.
NOT_A_PERSON = frozenset({"잡초", "풀", "벌레", "모기", "파리", "바퀴벌레", "해충", "세균", "균", "바이러스",
                          "곰팡이", "엔진", "시동", "불", "불씨", "소리", "음량", "볼륨", "시간", "기세", "숨",
                          "분위기", "맛", "화", "기", "캐릭터", "몬스터", "좀비", "보스", "프로세스", "서버"})
#: Surface stems of DEATH and HARM verbs in their usual conjugations: a sentence without any is not analysed.
_CANDIDATE = re.compile(r"죽|뒈|찌르|찔러|찌를|패 ?버|패 ?줄|때려|때릴|쏴|쏠|묻어|묻을|불태|조져|조질|담가|담글")
_SENTENCE = re.compile(r"[^.!?\n]+[.!?\n]*")
_JOSA_OBJECT = frozenset({"JKO"})
#: Analysed sentences kept per process: a corpus repeats sentences (the near copies the import also finds,
#: a sentence shared by several records), and the analyser costs far more than the rest of the screening.
ANALYSED_SENTENCES = 1024
_WORD_END = re.compile(r"[^\s.!?,]*")


@dataclass(frozen=True)
class _Morph:
    form: str
    tag: str
    start: int
    end: int


class ThreatScreener:
    """Screens Korean text for threats and calls for violence (kind ``toxic``, category ``threat``)."""

    name = NAME
    version = VERSION

    def __init__(self) -> None:
        self._rule = f"{NAME}@{VERSION}"

    def screen(self, text: str) -> list[ScreenHit]:
        if not self.might_hit(text):
            return []
        hits: list[ScreenHit] = []
        for sentence in _SENTENCE.finditer(text):
            if not _CANDIDATE.search(sentence.group(0)):
                continue
            morphs = _analyse(sentence.group(0), sentence.start())
            hits.extend(self._sentence_hits(text, morphs))
        return hits

    def might_hit(self, text: str) -> bool:
        return _CANDIDATE.search(text) is not None

    def load(self) -> None:
        """Kiwi's model loaded now (see screening)."""
        from datasets_build.morph import load_analyser

        load_analyser()

    def let_go(self) -> AbstractContextManager[None]:
        """Kiwi's model, if the block loads it, let go when the block ends (see screening)."""
        from datasets_build.morph import analyser_let_go

        return _forgetting(analyser_let_go())

    def _sentence_hits(self, text: str, morphs: list[_Morph]) -> list[ScreenHit]:
        hits = []
        for i, verb in enumerate(morphs):
            if verb.tag != "VV" or (verb.form not in DEATH and verb.form not in HARM):
                continue
            if _object_of(morphs, i) in NOT_A_PERSON:
                continue
            found = _construction(morphs, i)
            if found is not None:
                rule, last = found
                end = _WORD_END.match(text, morphs[last].end).end()  # to the end of the eojeol
                hits.append(ScreenHit("toxic", "threat", verb.start, end, f"{self._rule}:{rule}"))
        return hits


def _analyse(sentence: str, offset: int) -> list[_Morph]:
    return [_Morph(form, tag, offset + start, offset + end) for form, tag, start, end in _morphemes(sentence)]


@lru_cache(maxsize=ANALYSED_SENTENCES)
def _morphemes(sentence: str) -> tuple[tuple[str, str, int, int], ...]:
    """(form, tag, start, end) of each of Kiwi's morphemes of ``sentence``: the same sentence, the same
    analysis (the analyser has no state that one call changes for the next)."""
    from datasets_build.morph import _kiwi

    # Forms and tags recur in every sentence: one copy of each is kept.
    return tuple((intern(t.form), intern(t.tag.split("-", 1)[0] if t.tag[-2:] in ("-I", "-R") else t.tag), t.start,
                  t.start + t.len) for t in _kiwi().tokenize(sentence, compatible_jamo=True))


@contextmanager
def _forgetting(analyser: AbstractContextManager[None]) -> Iterator[None]:
    """``analyser``'s block, after which the analysed sentences are forgotten with the analyser."""
    try:
        with analyser:
            yield
    finally:
        _morphemes.cache_clear()


def _object_of(morphs: list[_Morph], i: int) -> str | None:
    """The noun right before the verb (skipping adverbs such as 다/전부 and an object particle), if any."""
    j = i - 1
    while j >= 0 and morphs[j].tag == "MAG":
        j -= 1
    if j >= 0 and morphs[j].tag in _JOSA_OBJECT:
        j -= 1
    return morphs[j].form if j >= 0 and morphs[j].tag.startswith("NN") else None


def _at(morphs: list[_Morph], j: int) -> tuple[str, str]:
    return (morphs[j].form, morphs[j].tag) if j < len(morphs) else ("", "")


def _construction(morphs: list[_Morph], i: int) -> tuple[str, int] | None:
    """The construction after the verb at ``i`` that makes it a threat or a call, and its last morpheme."""
    verb = morphs[i].form
    j = i + 1
    auxiliary = False
    # An optional "-어 버리-" (죽여 버리겠다, 죽어 버려라).
    if _at(morphs, j)[0] in ("어", "아") and _at(morphs, j + 1) == ("버리", "VX"):
        j += 2
        auxiliary = True
    form, tag = _at(morphs, j)
    if verb in DEATH:
        if tag == "EC" and form in ("어야", "아야") and _at(morphs, j + 1)[0] in ("하", "되"):
            return "must", j + 1
        if tag == "EF" and (form in ("어라", "아라", "거라", "라", "으라") or (auxiliary and form in ("어", "아"))):
            return "imperative", j
        if (tag == "EP" and form in ("었", "았") and _at(morphs, j + 1)[0] in ("으면", "면")
                and _at(morphs, j + 2)[0] == "좋"):
            return "wish", j + 2
        if tag == "ETN" and form == "기":
            k = j + 1 + (_at(morphs, j + 1)[1] == "JKO")
            if _at(morphs, k)[0] == "바라":
                return "wish", k
        if form in ("어", "아") and _at(morphs, j + 1)[0] == "마땅":
            return "deserve", j + 1
    if verb in HARM:
        if tag == "EP" and form == "겠":
            return "intent", j
        if tag == "ETM" and form in ("ㄹ", "ᆯ", "을") and _at(morphs, j + 1)[0] in ("거", "것", "터"):
            return "intent", j + 1
        if tag == "EF" and form in ("ㄹ게", "ᆯ게", "을게", "ㄹ께"):
            return "intent", j
        if auxiliary and tag == "EF" and form in ("ㄴ다", "ᆫ다", "는다", "어", "아"):
            return "intent", j
    return None
