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

import numpy as np

from .coefficients import Coefficient, _clean
from .lazy import pd


@dataclass
class UnitizingResult:
    """αu over all categories, and per category (observed and expected disagreement, units)."""

    value: float | None
    observed: float
    expected: float
    per_category: dict[str, dict[str, float | int | None]]
    items: int
    length: int


def _ratio(observed: float, expected: float) -> float | None:
    return 1.0 - observed / expected if expected > 0 else None


def unitizing_alpha(units: pd.DataFrame, lengths: np.ndarray, observers: int) -> UnitizingResult:
    """αu of ``units`` (columns ``item`` 0..len(lengths)-1, ``observer`` 0..observers-1, ``begin``, ``end``,
    ``category``; one observer's units of one category do not overlap) over items of the given lengths, each
    annotated by the same number of ``observers``."""
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    m = observers
    per_category: dict[str, dict[str, float | int | None]] = {}
    observed_sum = expected_sum = 0.0
    if total == 0 or m < 2:
        return UnitizingResult(None, 0.0, 0.0, {}, len(lengths), total)
    for category, group in units.groupby("category", sort=True):
        d_o = _observed(group, lengths, m) / (m * (m - 1) * float(total) ** 2)
        d_e = _expected(group, lengths, m, total)
        per_category[str(category)] = {"alpha": _ratio(d_o, d_e), "observed": d_o, "expected": d_e,
                                       "units": len(group)}
        observed_sum += d_o
        expected_sum += d_e
    return UnitizingResult(_ratio(observed_sum, expected_sum), observed_sum, expected_sum, per_category,
                           len(lengths), total)


def _observed(units: pd.DataFrame, lengths: np.ndarray, m: int) -> float:
    """Σ over ordered pairs of observers of δ² between their overlapping segments (units of the category and gaps)."""
    item = units["item"].to_numpy(dtype=np.int64)
    observer = units["observer"].to_numpy(dtype=np.int64)
    begin = units["begin"].to_numpy(dtype=np.int64)
    end = units["end"].to_numpy(dtype=np.int64)
    frame = pd.DataFrame({"item": item, "observer": observer, "begin": begin, "end": end, "row": np.arange(len(item))})
    pairs = frame.merge(frame, on="item", suffixes=("_g", "_h"))
    pairs = pairs[pairs["observer_g"] != pairs["observer_h"]]
    overlap = (pairs["begin_g"] < pairs["end_h"]) & (pairs["begin_h"] < pairs["end_g"])
    both = pairs[overlap]
    unit_unit = float((((both["begin_g"] - both["begin_h"]) ** 2) + ((both["end_g"] - both["end_h"]) ** 2)).sum())
    # a unit lies inside one of another observer's gaps when that observer has no unit overlapping it: δ² = l²,
    # once as (unit, gap) and once as (gap, unit) in the ordered sum
    overlapped = np.zeros((len(item), m), dtype=bool)
    overlapped[both["row_g"].to_numpy(dtype=np.int64), both["observer_h"].to_numpy(dtype=np.int64)] = True
    others_without = (~overlapped).sum(axis=1) - 1  # the unit's own observer is never "overlapped"
    unit_gap = float(2 * ((end - begin).astype(np.float64) ** 2 * others_without).sum())
    return unit_unit + unit_gap


def _gap_lengths(units: pd.DataFrame, lengths: np.ndarray, m: int) -> np.ndarray:
    """The lengths of every observer's gaps on every item (the complement of their units of the category; an
    observer without a unit on an item marked one gap, the whole item)."""
    gaps = []
    ordered = units.sort_values(["item", "observer", "begin"])
    item = ordered["item"].to_numpy(dtype=np.int64)
    observer = ordered["observer"].to_numpy(dtype=np.int64)
    begin = ordered["begin"].to_numpy(dtype=np.int64)
    end = ordered["end"].to_numpy(dtype=np.int64)
    key = item * m + observer
    first = np.r_[True, key[1:] != key[:-1]] if len(key) else np.zeros(0, dtype=bool)
    last = np.r_[key[1:] != key[:-1], True] if len(key) else np.zeros(0, dtype=bool)
    previous_end = np.where(first, 0, np.r_[0, end[:-1]])
    gaps.append(begin - previous_end)  # before each unit
    gaps.append((lengths[item] - end)[last])  # after each observer's last unit on an item
    # observers who marked nothing on an item: the whole item is one gap
    with_units = np.zeros(len(lengths) * m, dtype=bool)
    with_units[key] = True
    gaps.append(np.repeat(lengths, m)[~with_units])
    gaps = np.concatenate(gaps)
    return gaps[gaps > 0]


def _expected(units: pd.DataFrame, lengths: np.ndarray, m: int, total: int) -> float:
    unit_lengths = (units["end"] - units["begin"]).to_numpy(dtype=np.float64)
    n_c = len(unit_lengths)
    gaps = np.sort(_gap_lengths(units, lengths, m).astype(np.float64))
    # Σ over gaps at least as long as l of (l_h − l + 1), for every unit length l at once
    suffix = np.r_[np.cumsum(gaps[::-1])[::-1], 0.0]
    start = np.searchsorted(gaps, unit_lengths, side="left")
    fits = suffix[start] - (len(gaps) - start) * (unit_lengths - 1)
    within = (n_c - 1) / 3 * (2 * unit_lengths ** 3 - 3 * unit_lengths ** 2 + unit_lengths)
    numerator = float((within + unit_lengths ** 2 * fits).sum())
    denominator = m * total * (m * total - 1) - float((unit_lengths * (unit_lengths - 1)).sum())
    return 2.0 / total * numerator / denominator if denominator > 0 else 0.0


def rows_unitizing_alpha(row_item: np.ndarray, n_items: int, lengths: np.ndarray, unit_row: np.ndarray,
                         begin: np.ndarray, end: np.ndarray, category: np.ndarray
                         ) -> tuple[UnitizingResult, int, int, int]:
    """:func:`unitizing_alpha` of annotation rows: ``row_item[r]`` is row r's item (0..n_items-1), ``lengths`` the
    items' lengths, and unit u (``begin``, ``end``, ``category``) belongs to row ``unit_row[u]``. αu takes the same
    number of observers throughout, so it counts the items with the most common number of rows (a row's place
    among its item's rows is its observer number). Returns (result, observers, items counted, items left out)."""
    per_item = np.bincount(row_item, minlength=n_items)
    m = int(np.bincount(per_item[per_item > 0]).argmax()) if per_item.any() else 0
    kept_item = per_item == m
    order = np.argsort(row_item, kind="stable")
    observer = np.empty(len(order), dtype=np.int64)
    observer[order] = np.arange(len(order)) - np.searchsorted(row_item[order], row_item[order])
    item = row_item[unit_row]
    keep = kept_item[item]
    start = np.minimum(begin[keep], lengths[item[keep]])
    stop = np.clip(end[keep], start, lengths[item[keep]])
    units = pd.DataFrame({"item": (np.cumsum(kept_item) - 1)[item[keep]], "observer": observer[unit_row[keep]],
                          "begin": start, "end": stop, "category": np.asarray(category, dtype=object)[keep]})
    units = units[units["end"] > units["begin"]]
    result = unitizing_alpha(units, np.asarray(lengths)[kept_item], m)
    return result, m, int(kept_item.sum()), int(((per_item >= 2) & ~kept_item).sum())


def unitizing_coefficient(result: UnitizingResult, observers: int, items: int, left_out: int, per: str
                          ) -> Coefficient:
    """The report's ``krippendorff_alpha_unitizing`` (``per``: the key of the per-category values)."""
    return Coefficient("krippendorff_alpha_unitizing", "nominal", result.value, units=items, unit="item", extra={
        per: {c: _clean(v["alpha"]) for c, v in result.per_category.items()}, "observers": observers,
        "characters": result.length, "items_left_out": left_out,
        "ci_skipped": "no bootstrap interval for the unitizing alpha"})
