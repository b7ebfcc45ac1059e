"""Toxicity and social-bias screening behind one pluggable interface.

A screener takes a text and returns :class:`ScreenHit` objects. The import pipeline runs every screener
named in ``settings.GOLDSET_SCREENERS`` (dotted paths; default: the rule-based Korean lexicon screener and
the threat screener over Kiwi's morphological analysis), so a model-based classifier can be added by writing
a class with the same two members and listing it.
Hits never drop an item: they mark it ``needs_review`` and raise a flag for the review queue.
A screener with a model, loaded on first use, also offers ``load()``, which loads it now, and ``let_go()``, a
context manager that lets it go afterwards if the block loaded it (see :func:`let_go_after`); it may offer
``might_hit(text)``, false when ``screen`` is sure to find nothing in the text, told without the model. A large
import runs such screeners in a process of their own, on the texts they might hit (see
``datasets_build.processes.ModelScreening``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import cache
from typing import Protocol

from django.conf import settings
from django.utils.module_loading import import_string


@dataclass(frozen=True)
class ScreenHit:
    #: ``toxic`` or ``bias`` (the flag kind raised for the item).
    kind: str
    #: What kind of harm: profanity, slur, gender, region, religion, age, disability, nationality, sexuality…
    category: str
    start: int
    end: int
    #: The rule that fired, e.g. ``ko-lexicon@2026.12-1:p03``, so a reviewer can see why.
    rule: str


class Screener(Protocol):
    #: Name and version, stored with every hit so results stay explainable when the lexicon changes.
    name: str
    version: str

    def screen(self, text: str) -> list[ScreenHit]: ...


@cache
def configured_screeners() -> tuple[Screener, ...]:
    paths = settings.GOLDSET_SCREENERS
    return tuple(import_string(path)() for path in paths)


def screen_text(text: str) -> list[ScreenHit]:
    return [hit for screener in configured_screeners() for hit in screener.screen(text)]


def _has_model(screener: Screener) -> bool:
    return hasattr(screener, "load")


def model_screeners_configured() -> bool:
    return any(map(_has_model, configured_screeners()))


def screen_without_models(text: str) -> tuple[list[ScreenHit], bool]:
    """The hits of the screeners without a model, and whether those with one must still look at the text."""
    hits: list[ScreenHit] = []
    later = False
    for screener in configured_screeners():
        if not _has_model(screener):
            hits += screener.screen(text)
        elif not later:
            might_hit = getattr(screener, "might_hit", None)
            later = might_hit is None or might_hit(text)
    return hits, later


def screen_with_models(text: str) -> list[ScreenHit]:
    """The hits of the screeners with a model (loaded now if they were not)."""
    return [hit for screener in configured_screeners() if _has_model(screener) for hit in screener.screen(text)]


def load_models() -> None:
    """Load the screeners' models now (a process about to screen many texts)."""
    for screener in configured_screeners():
        if _has_model(screener):
            screener.load()  # type: ignore[attr-defined]


@contextmanager
def let_go_after() -> Iterator[None]:
    """What the configured screeners load during the block (on first use) is let go when it ends."""
    with ExitStack() as stack:
        for screener in configured_screeners():
            if _has_model(screener):
                stack.enter_context(screener.let_go())  # type: ignore[attr-defined]
        yield
