"""Krippendorff's unitizing alpha (αu): agreement on where units begin and end in a continuum (characters of a
sentence or passage), with partial credit for overlapping units, per category and overall.

Krippendorff (1995), "On the reliability of unitizing contiguous data", Sociological Methodology 25:47–76, and
Krippendorff (2004), "Measuring the reliability of qualitative text analysis data", Quality & Quantity 38:787–800.
For one category c, every observer cuts each item into units of c and gaps (everything else). Two overlapping
segments of different observers disagree by δ² = (b_g − b_h)² + (e_g − e_h)² when both are units, by l_g² when
a unit g lies wholly inside a gap h, and not at all otherwise. With m observers and a continuum of length L (the
items' lengths added, each item's gaps ending at its boundaries):

- observed  D_o = Σ_i Σ_{j≠i} Σ_g Σ_h δ²(g, h) / (m (m − 1) L²)
- expected  D_e = (2 / L) · Σ_units [ (n_c − 1)/3 · (2l³ − 3l² + l) + l² Σ_{gaps h, l_h ≥ l} (l_h − l + 1) ]
                  / (mL (mL − 1) − Σ_units l (l − 1))

with n_c the number of units of c (all observers). αu_c = 1 − D_o / D_e; over all categories 1 − ΣD_o / ΣD_e.
The gap term counts the positions a unit could take inside each gap at least as long (the "+ 1" where
Krippendorff 1995 prints l_h + l + 1; DKPro Statistics reads it the same way). Checked against DKPro Statistics'
unitizing test cases (tests/agreement/test_unitizing.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import coefficients as co
from .coefficients import Coefficient, _clean
from .lazy import pd


@dataclass
class UnitizingResult:
    """αu over all categories, and per category (observed and expected disagreement, units, interval)."""

    value: float | None
    observed: float
    expected: float
    per_category: dict[str, dict[str, Any]]
    items: int
    length: int
    ci95: tuple[float | None, float | None] = (None, None)


@dataclass
class _Parts:
    """Per-item sums from which D_o and D_e of the items, or of any resample of them, follow: column 0 is the
    item's length, then per category (``spans``) the observed δ² sum, the number of units, Σ (2l³ − 3l² + l),
    Σ l(l − 1), and for each distinct unit length λ_k of the category (``domains``) the item's units of length
    λ_k, its gaps at least λ_k long and their summed lengths. D_e's unit × gap term is bilinear in those sums:
    Σ_k λ_k² U_k (T1_k − (λ_k − 1) T0_k), so a resample needs only the summed columns."""

    columns: np.ndarray
    categories: list[str]
    spans: list[slice]
    domains: list[np.ndarray]
    units: list[int]


def _ratio(observed: float, expected: float) -> float | None:
    return 1.0 - observed / expected if expected > 0 else None


def unitizing_alpha(units: pd.DataFrame, lengths: np.ndarray, observers: int, *, seed: int = co.SEED,
                    n_boot: int = 0) -> UnitizingResult:
    """αu of ``units`` (columns ``item`` 0..len(lengths)-1, ``observer`` 0..observers-1, ``begin``, ``end``,
    ``category``; one observer's units of one category do not overlap) over items of the given lengths, each
    annotated by the same number of ``observers``; with ``n_boot`` a 95 % interval from that many item resamples
    (all drawn at once, :func:`.coefficients.resampled_sums`), overall and per category."""
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    m = observers
    if total == 0 or m < 2:
        return UnitizingResult(None, 0.0, 0.0, {}, len(lengths), total)
    parts = _parts(units, lengths, m)
    observed, expected = _disagreements(parts.columns.sum(axis=0)[None, :], parts, m)
    per_category: dict[str, dict[str, Any]] = {
        category: {"alpha": _ratio(float(observed[0, c]), float(expected[0, c])), "observed": float(observed[0, c]),
                   "expected": float(expected[0, c]), "units": parts.units[c], "ci95": (None, None)}
        for c, category in enumerate(parts.categories)}
    result = UnitizingResult(_ratio(float(observed.sum()), float(expected.sum())), float(observed.sum()),
                             float(expected.sum()), per_category, len(lengths), total)
    sums = co.resampled_sums(parts.columns, seed=seed, n_boot=n_boot) if n_boot and parts.categories else None
    if sums is not None:
        observed, expected = _disagreements(sums, parts, m)
        with np.errstate(divide="ignore", invalid="ignore"):
            per = 1.0 - observed / np.where(expected > 0, expected, np.nan)
            overall = 1.0 - observed.sum(axis=1) / np.where(expected.sum(axis=1) > 0, expected.sum(axis=1), np.nan)
        result.ci95 = co._percentiles(overall)
        for entry, ci in zip(per_category.values(), co.column_percentiles(per), strict=True):
            entry["ci95"] = ci
    return result


def _parts(units: pd.DataFrame, lengths: np.ndarray, m: int) -> _Parts:
    n_items = len(lengths)
    blocks = [lengths.astype(np.float64)[:, None]]
    categories, spans, domains, counts = [], [], [], []
    at = 1
    for category, group in units.groupby("category", sort=True):
        item = group["item"].to_numpy(dtype=np.int64)
        unit_lengths = (group["end"] - group["begin"]).to_numpy(dtype=np.int64)
        domain, k = np.unique(unit_lengths, return_inverse=True)
        size = len(domain)
        block = np.zeros((n_items, 4 + 3 * size))
        block[:, 0] = _observed(group, n_items, m)
        block[:, 1] = np.bincount(item, minlength=n_items)
        f = unit_lengths.astype(np.float64)
        block[:, 2] = np.bincount(item, weights=2 * f ** 3 - 3 * f ** 2 + f, minlength=n_items)
        block[:, 3] = np.bincount(item, weights=f * (f - 1), minlength=n_items)
        np.add.at(block, (item, 4 + k.ravel()), 1.0)
        gap_item, gap_length = _gaps(group, lengths, m)
        # a gap counts for every unit length up to its own: the tail sums over the domain's indices
        longest = np.searchsorted(domain, gap_length, side="right")
        for offset, weights in ((4 + size, np.ones(len(gap_length))), (4 + 2 * size, gap_length.astype(np.float64))):
            below = np.zeros((n_items, size + 1))
            np.add.at(below, (gap_item, longest), weights)
            block[:, offset:offset + size] = np.cumsum(below[:, ::-1], axis=1)[:, ::-1][:, 1:]
        blocks.append(block)
        categories.append(str(category))
        spans.append(slice(at, at + block.shape[1]))
        domains.append(domain.astype(np.float64))
        counts.append(len(group))
        at += block.shape[1]
    return _Parts(np.hstack(blocks), categories, spans, domains, counts)


def _disagreements(sums: np.ndarray, parts: _Parts, m: int) -> tuple[np.ndarray, np.ndarray]:
    """D_o and D_e of each category (B × C) from summed :class:`_Parts` columns (B × d)."""
    total = sums[:, 0]
    observed = np.zeros((len(sums), len(parts.categories)))
    expected = np.zeros_like(observed)
    with np.errstate(divide="ignore", invalid="ignore"):
        for c, (span, domain) in enumerate(zip(parts.spans, parts.domains, strict=True)):
            block, size = sums[:, span], len(domain)
            n_c, within, pairs = block[:, 1], block[:, 2], block[:, 3]
            counts, at_least, summed = (block[:, 4 + i * size:4 + (i + 1) * size] for i in range(3))
            fits = (counts * domain ** 2 * (summed - (domain - 1) * at_least)).sum(axis=1)
            numerator = (n_c - 1) / 3 * within + fits
            denominator = m * total * (m * total - 1) - pairs
            observed[:, c] = block[:, 0] / (m * (m - 1) * total ** 2)
            expected[:, c] = np.where(denominator > 0, 2.0 / total * numerator / denominator, 0.0)
    return observed, expected


def _observed(units: pd.DataFrame, n_items: int, m: int) -> np.ndarray:
    """Per item, Σ over ordered pairs of observers of δ² between their overlapping segments (units of the category
    and gaps)."""
    item = units["item"].to_numpy(dtype=np.int64)
    observer = units["observer"].to_numpy(dtype=np.int64)
    begin = units["begin"].to_numpy(dtype=np.int64)
    end = units["end"].to_numpy(dtype=np.int64)
    frame = pd.DataFrame({"item": item, "observer": observer, "begin": begin, "end": end, "row": np.arange(len(item))})
    pairs = frame.merge(frame, on="item", suffixes=("_g", "_h"))
    pairs = pairs[pairs["observer_g"] != pairs["observer_h"]]
    overlap = (pairs["begin_g"] < pairs["end_h"]) & (pairs["begin_h"] < pairs["end_g"])
    both = pairs[overlap]
    unit_unit = (((both["begin_g"] - both["begin_h"]) ** 2) + ((both["end_g"] - both["end_h"]) ** 2)).to_numpy(
        dtype=np.float64)
    # a unit lies inside one of another observer's gaps when that observer has no unit overlapping it: δ² = l²,
    # once as (unit, gap) and once as (gap, unit) in the ordered sum
    overlapped = np.zeros((len(item), m), dtype=bool)
    overlapped[both["row_g"].to_numpy(dtype=np.int64), both["observer_h"].to_numpy(dtype=np.int64)] = True
    others_without = (~overlapped).sum(axis=1) - 1  # the unit's own observer is never "overlapped"
    unit_gap = 2 * (end - begin).astype(np.float64) ** 2 * others_without
    return (np.bincount(both["item"].to_numpy(dtype=np.int64), weights=unit_unit, minlength=n_items)
            + np.bincount(item, weights=unit_gap, minlength=n_items))


def _gaps(units: pd.DataFrame, lengths: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """The item and length of every observer's gaps on every item (the complement of their units of the category;
    an observer without a unit on an item marked one gap, the whole item)."""
    ordered = units.sort_values(["item", "observer", "begin"])
    item = ordered["item"].to_numpy(dtype=np.int64)
    observer = ordered["observer"].to_numpy(dtype=np.int64)
    begin = ordered["begin"].to_numpy(dtype=np.int64)
    end = ordered["end"].to_numpy(dtype=np.int64)
    key = item * m + observer
    first = np.r_[True, key[1:] != key[:-1]] if len(key) else np.zeros(0, dtype=bool)
    last = np.r_[key[1:] != key[:-1], True] if len(key) else np.zeros(0, dtype=bool)
    previous_end = np.where(first, 0, np.r_[0, end[:-1]])
    # observers who marked nothing on an item: the whole item is one gap
    with_units = np.zeros(len(lengths) * m, dtype=bool)
    with_units[key] = True
    empty = ~with_units
    items = np.concatenate([item, item[last], np.repeat(np.arange(len(lengths)), m)[empty]])
    gaps = np.concatenate([begin - previous_end, (lengths[item] - end)[last], np.repeat(lengths, m)[empty]])
    return items[gaps > 0], gaps[gaps > 0]


@dataclass
class SpanRows:
    """Annotation rows and the spans they mark: ``row_item[r]`` is row r's item (0..n_items-1), ``lengths`` the
    items' lengths, and span u (``begin``, ``end``, ``category``) belongs to row ``unit_row[u]``."""

    row_item: np.ndarray
    n_items: int
    lengths: np.ndarray
    unit_row: np.ndarray
    begin: np.ndarray
    end: np.ndarray
    category: np.ndarray


@dataclass
class Observed:
    """The spans as observers' units on the items every one of the same ``observers`` annotated."""

    units: pd.DataFrame
    lengths: np.ndarray
    observers: int
    items_left_out: int


def observed_units(rows: SpanRows) -> Observed:
    """αu and γ take the same number of observers throughout, so the items with the most common number of rows
    count (a row's place among its item's rows is its observer number); spans are clipped to their item."""
    per_item = np.bincount(rows.row_item, minlength=rows.n_items)
    m = int(np.bincount(per_item[per_item > 0]).argmax()) if per_item.any() else 0
    kept_item = per_item == m
    order = np.argsort(rows.row_item, kind="stable")
    observer = np.empty(len(order), dtype=np.int64)
    observer[order] = np.arange(len(order)) - np.searchsorted(rows.row_item[order], rows.row_item[order])
    item = rows.row_item[rows.unit_row]
    keep = kept_item[item]
    start = np.minimum(rows.begin[keep], rows.lengths[item[keep]])
    stop = np.clip(rows.end[keep], start, rows.lengths[item[keep]])
    units = pd.DataFrame({"item": (np.cumsum(kept_item) - 1)[item[keep]], "observer": observer[rows.unit_row[keep]],
                          "begin": start, "end": stop, "category": np.asarray(rows.category, dtype=object)[keep]})
    return Observed(units[units["end"] > units["begin"]], np.asarray(rows.lengths)[kept_item], m,
                    int(((per_item >= 2) & ~kept_item).sum()))


def rows_unitizing_alpha(rows: SpanRows, *, seed: int = co.SEED, n_boot: int = 0) -> tuple[UnitizingResult, int, int,
                                                                                            int]:
    """:func:`unitizing_alpha` of annotation rows (:func:`observed_units`); ``n_boot``: resamples of the counted
    items for the intervals. Returns (result, observers, items counted, items left out)."""
    observed = observed_units(rows)
    result = unitizing_alpha(observed.units, observed.lengths, observed.observers, seed=seed, n_boot=n_boot)
    return result, observed.observers, len(observed.lengths), observed.items_left_out


def unitizing_coefficient(result: UnitizingResult, observers: int, items: int, left_out: int, per: str
                          ) -> Coefficient:
    """The report's ``krippendorff_alpha_unitizing`` (``per``: the key of the per-category values)."""
    return Coefficient("krippendorff_alpha_unitizing", "nominal", result.value, result.ci95, units=items, unit="item",
                       extra={per: {c: _clean(v["alpha"]) for c, v in result.per_category.items()},
                              f"{per}_ci95": {c: [_clean(v["ci95"][0]), _clean(v["ci95"][1])]
                                              for c, v in result.per_category.items()},
                              "observers": observers, "characters": result.length, "items_left_out": left_out})
