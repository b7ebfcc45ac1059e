"""Raw sentences → KLUE-DP eojeol rows (WORD_FORM, LEMMA, POS) with the Kiwi morphological analyser.

KLUE-DP's LEMMA column is the eojeol's morphemes separated by spaces and POS their Sejong tags joined
by ``+``. Kiwi (kiwipiepy; its model ships in the kiwipiepy-model package, nothing is downloaded) uses the
Sejong tag set with a few extensions; :data:`KIWI_TO_SEJONG` maps those back (docs/import.md lists it).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

from . import heap

#: Kiwi tags that are not Sejong tags, and the Sejong tag KLUE-DP would use. Every other Kiwi tag is a
#: Sejong tag already (NNG, VV, JKS, MMD, …); irregular-conjugation marks (VV-I, VA-R…) are dropped.
KIWI_TO_SEJONG: dict[str, str] = {
    "SSO": "SS",  # opening bracket/quote
    "SSC": "SS",  # closing bracket/quote
    "SB": "SW",  # list bullet such as "가." or "1)"
    "W_URL": "SL",
    "W_EMAIL": "SL",
    "W_HASHTAG": "SW",
    "W_MENTION": "SW",
    "W_SERIAL": "SN",  # dates, times, serial numbers
    "W_EMOJI": "SW",
    "Z_CODA": "NA",  # a coda added for effect (먹었어욥 → ㅂ)
    "Z_SIWA": "NA",
    "XSM": "XSA",  # adverb-deriving suffix: Sejong has none; the closest is the adjective suffix
    "UN": "NA",
    "MM": "MMD",
    "USER0": "NNP",
    "USER1": "NNP",
    "USER2": "NNP",
    "USER3": "NNP",
    "USER4": "NNP",
}
_EOJEOL = re.compile(r"\S+")


@cache
def _kiwi() -> Any:
    # MIMALLOC_PURGE_DELAY (config/settings.py) makes Kiwi hand back the memory it frees.
    from kiwipiepy import Kiwi

    # One thread: an analysis of one sentence at a time gains nothing from the thread pool of Kiwi's default,
    # whose threads cost CPU (docs/performance.md). The analyses are the same.
    # Without the multi-word dictionary: it makes names of several words ("해리 포터와 마법사의 돌") one
    # morpheme across eojeol, which the eojeol columns cannot hold, and it is most of the model's loading
    # (less than half the CPU and 190 MB less without it; the threat screener's hits are the same).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # kiwipiepy: 0 no longer means "every core"
        return Kiwi(num_workers=0, load_multi_dict=False)


def load_analyser() -> None:
    """Kiwi loaded, model and all: building the analyser and its first analysis (which loads the rest of the
    model) take a second of CPU and hundreds of MB."""
    _kiwi().tokenize("가", compatible_jamo=True)


@contextmanager
def analyser_let_go() -> Iterator[None]:
    """If the block loads Kiwi (on the first sentence that needs it), it is let go when the block ends: a
    worker that screened one small import does not keep the analyser's memory for good."""
    loaded_before = _kiwi.cache_info().currsize
    try:
        yield
    finally:
        if not loaded_before and _kiwi.cache_info().currsize:
            _kiwi.cache_clear()  # the last reference: freed now (a full collection here cost more than it found)
            heap.trim()


def sejong_tag(kiwi_tag: str) -> str:
    base = kiwi_tag.split("-", 1)[0] if kiwi_tag[-2:] in ("-I", "-R") else kiwi_tag
    return KIWI_TO_SEJONG.get(base, base)


def analyse_sentence(sentence: str) -> dict[str, list[Any]]:
    """The KLUE-DP columns for one raw sentence (Hugging Face ``klue/dp`` layout, without head/deprel)."""
    eojeols = [(m.start(), m.end(), m.group(0)) for m in _EOJEOL.finditer(sentence)]
    lemmas: list[list[str]] = [[] for _ in eojeols]
    tags: list[list[str]] = [[] for _ in eojeols]
    position = 0
    for token in _kiwi().tokenize(sentence, compatible_jamo=True):
        # A morpheme belongs to the eojeol its first character is in (Kiwi never splits one across two).
        while position < len(eojeols) - 1 and token.start >= eojeols[position][1]:
            position += 1
        lemmas[position].append(token.form)
        tags[position].append(sejong_tag(token.tag))
    for i, (_, _, form) in enumerate(eojeols):
        if not lemmas[i]:  # Kiwi dropped it (rare symbols): keep the eojeol as one unknown morpheme
            lemmas[i], tags[i] = [form], ["NA"]
    return {
        "index": list(range(1, len(eojeols) + 1)),
        "word_form": [form for _, _, form in eojeols],
        "lemma": [" ".join(parts) for parts in lemmas],
        "pos": ["+".join(parts) for parts in tags],
    }
