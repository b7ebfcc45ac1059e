"""Kinds of span disagreement between two annotators (NER entities, MRC answer spans), for the disagreement list:
a *boundary slip* (the two mark overlapping spans whose start or end differ: a particle taken in or left out), a
*type mismatch* (overlapping spans of different types) and a *missed span* (one marks a span the other has nothing
overlapping). An item can show several kinds; spans marked identically by both show none."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

BOUNDARY_SLIP = "boundary_slip"
TYPE_MISMATCH = "type_mismatch"
MISSED_SPAN = "missed_span"
KINDS = (BOUNDARY_SLIP, TYPE_MISMATCH, MISSED_SPAN)

Span = tuple[int, int, str]


def _one_way(mine: Sequence[Span], theirs: Sequence[Span]) -> set[str]:
    kinds: set[str] = set()
    exact = set(theirs)
    for span in mine:
        if span in exact:
            continue
        start, end, kind = span
        overlapping = [other for other in theirs if other[0] < end and start < other[1]]
        if not overlapping:
            kinds.add(MISSED_SPAN)
        for other in overlapping:
            if (other[0], other[1]) != (start, end):
                kinds.add(BOUNDARY_SLIP)
            if other[2] != kind:
                kinds.add(TYPE_MISMATCH)
    return kinds


def pair_kinds(a: Sequence[Span], b: Sequence[Span]) -> set[str]:
    """The kinds of disagreement between two annotators' spans of one item."""
    return _one_way(a, b) | _one_way(b, a)


def item_kinds(annotations: Sequence[Sequence[Span]]) -> set[str]:
    """The kinds of disagreement between any two of an item's annotations."""
    kinds: set[str] = set()
    for a, b in combinations(annotations, 2):
        kinds |= pair_kinds(a, b)
    return kinds
