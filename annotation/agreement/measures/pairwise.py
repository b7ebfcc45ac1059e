"""Pairwise agreement between annotators over structured answers (spans, trees, answers, states): per pair
Σnum / Σden over their shared items with an item bootstrap, and :class:`StructuredMeasure`, the base of
the measures built on it."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import coefficients as co
from ..coefficients import Coefficient
from ..lazy import pd
from .base import MAX_BOOT_DIMS, MIN_SHARED, Measure, MeasureResult, nanmean, pair_matrix


@dataclass
class PairAgreement:
    """A pairwise coefficient: per annotator pair Σnum / Σden over their shared items (1.0 when den is 0: two
    annotators who both marked nothing agree), averaged over the pairs with enough shared items."""

    pairs: list[tuple[int, int]]
    values: list[float | None]
    mean: float | None
    ci95: tuple[float | None, float | None]
    #: annotator id -> Σnum / Σden over every pair the annotator is in
    by_annotator: dict[int, dict[str, Any]]
    #: item id -> Σnum / Σden over the pairs on that item
    by_item: pd.Series
    annotators: np.ndarray


def pair_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """(item, a, b) for every pair of annotators on an item, a < b, with the frame's row positions."""
    left = frame[["item", "annotator"]].reset_index(names="row")
    pairs = left.merge(left, on="item", suffixes=("_a", "_b"))
    pairs = pairs[pairs["annotator_a"] < pairs["annotator_b"]]
    return pairs.rename(columns={"annotator_a": "a", "annotator_b": "b"}).reset_index(drop=True)


def pair_agreement(rows: pd.DataFrame, *, seed: int, n_boot: int) -> PairAgreement:
    """Aggregate per-(item, a, b) ``num``/``den`` rows into the pairwise coefficient with its item bootstrap."""
    if rows.empty:
        return PairAgreement([], [], None, (None, None), {}, pd.Series(dtype=float), np.array([]))
    annotators = np.unique(np.concatenate([rows["a"].to_numpy(), rows["b"].to_numpy()]))
    index = {a: i for i, a in enumerate(annotators)}
    shared = rows.groupby(["a", "b"])["item"].nunique()
    kept = shared[shared >= MIN_SHARED].index.tolist()
    sums = rows.groupby(["a", "b"])[["num", "den"]].sum()
    values = [ratio(sums.loc[pair, "num"], sums.loc[pair, "den"]) for pair in kept]
    pairs = [(index[a], index[b]) for a, b in kept]
    ci: tuple[float | None, float | None] = (None, None)
    if kept and n_boot and 3 * len(kept) <= MAX_BOOT_DIMS:
        codes = pd.MultiIndex.from_tuples(kept).get_indexer(pd.MultiIndex.from_arrays([rows["a"], rows["b"]]))
        sub = rows[codes >= 0]
        codes = codes[codes >= 0].astype(np.int64)
        item_codes, _ = pd.factorize(sub["item"])
        width = 3 * len(kept)
        cells = item_codes.astype(np.int64) * width + 3 * codes
        size = (int(item_codes.max()) + 1) * width
        # bincount adds in row order, as np.add.at did, at a fraction of the cost
        per_item = (np.bincount(cells, weights=sub["num"].to_numpy(dtype=np.float64), minlength=size)
                    + np.bincount(cells + 1, weights=sub["den"].to_numpy(dtype=np.float64), minlength=size)
                    + np.bincount(cells + 2, minlength=size)).reshape(-1, width)

        def statistic(s: np.ndarray) -> np.ndarray:
            s = s.reshape(len(s), len(kept), 3)
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(s[..., 1] > 0, s[..., 0] / s[..., 1], 1.0)
            ratio = np.where(s[..., 2] > 0, ratio, np.nan)
            with np.errstate(invalid="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                return np.nanmean(ratio, axis=1)

        ci = co.bootstrap_sums(per_item, statistic, seed=seed, n_boot=n_boot)
    long = pd.concat([rows[["a", "num", "den", "item"]].rename(columns={"a": "annotator"}),
                      rows[["b", "num", "den", "item"]].rename(columns={"b": "annotator"})])
    per_annotator = long.groupby("annotator").agg(num=("num", "sum"), den=("den", "sum"), n=("item", "nunique"))
    by_annotator = {int(a): {"agreement": ratio(r.num, r.den), "items": int(r.n),
                             "against": "each other annotator"} for a, r in per_annotator.iterrows()}
    per_item = rows.groupby("item")[["num", "den"]].sum()
    num, den = per_item["num"].to_numpy(dtype=np.float64), per_item["den"].to_numpy(dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        by_item = pd.Series(np.where(den > 0, num / den, 1.0), index=per_item.index)  # as ratio, per item
    return PairAgreement(pairs, values, nanmean(values), ci, by_annotator, by_item, annotators)


def ratio(num: float, den: float) -> float:
    return float(num / den) if den > 0 else 1.0


def pair_coefficient(name: str, level: str, agreement: PairAgreement, unit: str, **extra: Any) -> Coefficient:
    return Coefficient(name, level, agreement.mean, agreement.ci95, units=int(agreement.by_item.size), unit=unit,
                       extra={"pairs": len(agreement.pairs), "min_shared_items": MIN_SHARED, **extra})


def units_alpha(name: str, row_units: np.ndarray, row_values: np.ndarray, unit_item: np.ndarray, n_items: int,
                 *, seed: int, n_boot: int, unit: str, level: str = "nominal") -> Coefficient:
    """Alpha over sub-item units (eojeol, slots): ``row_units[r]`` is the unit of value ``row_values[r]`` and
    ``unit_item[u]`` the item of unit u; the bootstrap resamples whole items."""
    codes, domain = pd.factorize(pd.Series(row_values, dtype=object), sort=True)
    counts = co.value_counts(row_units, codes, len(unit_item), max(len(domain), 1))
    pairable = counts.sum(axis=1) >= 2
    value, ci = co.alpha_with_ci(counts, unit_item, n_items, np.arange(len(domain)), level, seed=seed,
                                 n_boot=n_boot)
    return Coefficient(name, level, value, ci, units=int(pairable.sum()), unit=unit)


class StructuredMeasure(Measure):
    """Shared plumbing of the tasks whose answers are structures (spans, trees, states)."""

    fields = {"payload": "payload"}

    def primary(self, frame: pd.DataFrame, schema: dict[str, Any], *, seed: int = co.SEED,
                n_boot: int = 0) -> Coefficient:
        return self._primary(frame, schema, seed=seed, n_boot=n_boot)

    def _primary(self, frame: pd.DataFrame, schema: dict[str, Any], *, seed: int, n_boot: int) -> Coefficient:
        raise NotImplementedError

    def _result(self, coefficients: list[Coefficient], primary: str, agreement: PairAgreement, metric: str,
                disagreement_name: str, distribution: dict[str, Any] | None = None) -> MeasureResult:
        return MeasureResult(
            coefficients=coefficients, primary=primary,
            pairs=pair_matrix(metric, agreement.annotators, agreement.pairs, agreement.values),
            distribution=distribution, annotator_agreement=agreement.by_annotator,
            item_disagreement=1.0 - agreement.by_item, disagreement_name=disagreement_name,
        )

