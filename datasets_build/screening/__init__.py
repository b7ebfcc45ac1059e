"""Toxicity and social-bias screening behind one pluggable interface.

A screener takes a text and returns :class:`ScreenHit` objects. The import pipeline runs every screener
named in ``settings.GOLDSET_SCREENERS`` (dotted paths; default: the rule-based Korean lexicon screener and
the threat screener over Kiwi's morphological analysis), so a model-based classifier can be added by writing
a class with the same two members and listing it.
Hits never drop an item: they mark it ``needs_review`` and raise a flag for the review queue.
A screener that loads something large on first use (a model) may also offer ``loaded()``, a context manager
that loads it now and lets it go afterwards (see :func:`loaded_for_workers`), and ``let_go()``, one that
lets it go afterwards if the block loaded it (see :func:`let_go_after`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
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


@contextmanager
def _inside_each_screener(context: str) -> Iterator[None]:
    """The block inside each configured screener's ``context`` manager, for those that offer it."""
    with ExitStack() as stack:
        for screener in configured_screeners():
            if manager := getattr(screener, context, None):
                stack.enter_context(manager())
        yield


def let_go_after() -> AbstractContextManager[None]:
    """What the configured screeners load during the block (on first use) is let go when it ends."""
    return _inside_each_screener("let_go")


def loaded_for_workers() -> AbstractContextManager[None]:
    """Load what the configured screeners would load on first use, for processes forked inside: they share
    the loaded memory instead of each loading its own copy. Whatever was loaded here is let go on leaving."""
    return _inside_each_screener("loaded")
