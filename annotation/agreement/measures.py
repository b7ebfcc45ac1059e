"""Per-task agreement measures: which coefficients a task reports, and how payloads become units.

Each task type names its measure (``TaskType.agreement_measure``, one of the classes below or its own);
:func:`measure_for` finds it, so nothing here branches on task slugs.

Every measure works on the frame of :mod:`.data` (one row per item × annotator, with the payload keys
it declared in ``fields``) and returns a :class:`MeasureResult`: the coefficients with bootstrap
intervals, an annotator × annotator agreement matrix, each annotator's agreement with the others,
and a disagreement score per item.
"""

from __future__ import annotations

import warnings
import weakref
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from ..task_types import MissingLayer, PayloadError, get_task_type
from . import coefficients as co
from .coefficients import Coefficient

#: Pairs of annotators need this many shared items before their pairwise coefficient is reported.
MIN_SHARED = 10
#: Above this many per-item dimensions, pairwise bootstrap intervals are skipped (too many pairs).
MAX_BOOT_DIMS = 4096
#: Pairwise kappa's bootstrap draws over the distinct combinations of all pairs' label cells; beyond this many
#: (large projects with many labels) it would cost more than the whole report, and the interval is left out.
MAX_BOOT_DISTINCT = 2000


#: ``measure.headline(frame, schema)``: (row mask, *, seed, n_boot) → the headline coefficient of those rows.
Headline = Callable[..., Coefficient]


@dataclass
class MeasureResult:
    coefficients: list[Coefficient]
    #: Name of the headline coefficient (used for the timeline and the leave-one-out alpha).
    primary: str
    #: Annotator × annotator agreement for the heatmap: metric name, annotator ids, matrix (None = too few shared).
    pairs: dict[str, Any] = field(default_factory=dict)
    #: Label × label coincidences between annotators (categorical and score tasks).
    confusion: dict[str, Any] | None = None
    #: Label counts, project-wide and per annotator.
    distribution: dict[str, Any] | None = None
    #: annotator id -> {"agreement": float, "items": n} against the others (leave-one-out).
    annotator_agreement: dict[int, dict[str, Any]] = field(default_factory=dict)
    #: item id -> disagreement (0 = everyone agrees; larger = more disagreement).
    item_disagreement: pd.Series = field(default_factory=lambda: pd.Series(dtype=float))
    #: What the disagreement score is, for the per-item page.
    disagreement_name: str = ""


class Measure:
    """Base class: ``fields`` to fetch, :meth:`compute` for the report, :meth:`primary` for one number."""

    fields: ClassVar[dict[str, str]]
    primary_name: ClassVar[str]
    primary_level: ClassVar[str]

    def prepare(self, frame: pd.DataFrame, schema: dict[str, Any]) -> pd.DataFrame:
        """Decode the fetched columns once (timelines and leave-one-out reuse the prepared frame)."""
        return frame

    def compute(self, frame: pd.DataFrame, schema: dict[str, Any], *, seed: int = co.SEED,
                n_boot: int = co.N_BOOT) -> MeasureResult:
        raise NotImplementedError

    def primary(self, frame: pd.DataFrame, schema: dict[str, Any], *, seed: int = co.SEED,
                n_boot: int = 0) -> Coefficient:
        """The headline coefficient alone (cheaper: used for timelines and leave-one-out; alpha from the
        coincidences, ``package=False``, where the measure supports it)."""
        raise NotImplementedError

    def headline(self, frame: pd.DataFrame, schema: dict[str, Any]) -> Headline:
        """:meth:`primary` of subsets of ``frame``'s rows, as a function of a boolean row mask: the timeline and
        leave-one-out ask for a dozen subsets, so measures that can decode the frame once here, not per subset."""

        def of(rows: np.ndarray, *, seed: int = co.SEED, n_boot: int = 0) -> Coefficient:
            return self.primary(frame[rows], schema, seed=seed, n_boot=n_boot)

        return of

    def headlines(self, all_rows: pd.DataFrame, frame: pd.DataFrame, counted: np.ndarray, schema: dict[str, Any]
                  ) -> tuple[Headline, Headline]:
        """:meth:`headline` of ``all_rows`` (the timeline) and of ``frame``, which is ``all_rows[counted]`` with a
        fresh index (the coefficients, leave-one-out, the assisted split). Measures whose decoding is costly
        decode ``all_rows`` once and take the frame's part of it."""
        return self.headline(all_rows, schema), self.headline(frame, schema)

    def score(self, payload: dict[str, Any], gold: dict[str, Any]) -> float:
        """How well one annotation matches a known answer, 0..1 (gold / attention items)."""
        raise NotImplementedError

    def item_labels(self, frame: pd.DataFrame) -> pd.Series:
        """Labels per row for the per-item label filter (empty where labels do not apply)."""
        return pd.Series([""] * len(frame), index=frame.index, dtype=object)

    def describe(self, payload: dict[str, Any]) -> str:
        """A one-line human summary of a payload (per-item lists)."""
        return ", ".join(f"{k}={v}" for k, v in payload.items())

    def render(self, payload: dict[str, Any], item: dict[str, Any]) -> SafeString:
        """The payload as HTML for the side-by-side comparison (spans marked, trees tabulated, never raw JSON)."""
        return format_html('<span class="chip">{}</span>', self.describe(payload))


# -- helpers ----------------------------------------------------------------------------------------------


def _pivot(frame: pd.DataFrame, column: str, fill: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sorted items, sorted annotators, items × annotators matrix) with ``fill`` where an annotator did not
    label an item (a numpy scatter: ``DataFrame.pivot`` is far slower on a large project, docs/performance.md)."""
    item_codes, items = pd.factorize(frame["item"], sort=True)
    annotator_codes, annotators = pd.factorize(frame["annotator"], sort=True)
    matrix = np.full((len(items), len(annotators)), fill, dtype=np.float64)
    values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    matrix[item_codes, annotator_codes] = values
    return np.asarray(items), np.asarray(annotators), matrix


def _pairs_with_overlap(present: np.ndarray) -> list[tuple[int, int]]:
    shared = present.T.astype(np.int64) @ present.astype(np.int64)
    a, b = np.nonzero(np.triu(shared >= MIN_SHARED, k=1))
    return list(zip(a.tolist(), b.tolist(), strict=True))


def _pair_matrix(metric: str, annotators: np.ndarray, pairs: list[tuple[int, int]], values: list[float | None]
                 ) -> dict[str, Any]:
    n = len(annotators)
    matrix: list[list[float | None]] = [[None] * n for _ in range(n)]
    for (i, j), value in zip(pairs, values, strict=True):
        clean = co._clean(value)
        matrix[i][j] = matrix[j][i] = clean
    for i in range(n):
        matrix[i][i] = 1.0
    return {"metric": metric, "annotators": [int(a) for a in annotators], "values": matrix}


def _nanmean(values: list[float | None]) -> float | None:
    clean = [v for v in values if v is not None and np.isfinite(v)]
    return float(np.mean(clean)) if clean else None


def _labels_in_order(observed: pd.Series, schema_labels: list[str] | None) -> list[str]:
    seen = sorted({str(v) for v in observed.dropna().unique()})
    ordered = [str(label) for label in (schema_labels or [])]
    return ordered + [label for label in seen if label not in ordered]


# -- categorical tasks: tc, nli, re ------------------------------------------------------------------------


class CategoricalMeasure(Measure):
    """One label per item: Krippendorff's alpha (nominal), Fleiss' kappa, pairwise Cohen's kappa."""

    fields = {"label": "payload.label"}
    primary_name = "krippendorff_alpha"
    primary_level = "nominal"

    def prepare(self, frame: pd.DataFrame, schema: dict[str, Any]) -> pd.DataFrame:
        labels = _labels_in_order(frame["label"], schema.get("labels"))
        # factorize, then map the few distinct labels to their category: far cheaper than matching every string
        codes, uniques = pd.factorize(frame["label"])
        position = {label: i for i, label in enumerate(labels)}
        lookup = np.array([position[str(u)] for u in uniques] + [-1], dtype=np.int64)
        return frame.assign(label=pd.Categorical.from_codes(lookup[codes], categories=labels))

    def _counts(self, frame: pd.DataFrame, schema: dict[str, Any]) -> tuple[list[str], np.ndarray, np.ndarray]:
        labels, codes, item_codes, n_items = self._codes(frame, schema)
        ok = codes >= 0
        return labels, co.value_counts(item_codes[ok], codes[ok], n_items, max(len(labels), 1)), item_codes

    def _codes(self, frame: pd.DataFrame, schema: dict[str, Any]) -> tuple[list[str], np.ndarray, np.ndarray, int]:
        """(labels, each row's label code or -1, each row's item code, items)."""
        if not isinstance(frame["label"].dtype, pd.CategoricalDtype):
            frame = self.prepare(frame, schema)
        labels = [str(label) for label in frame["label"].cat.categories]
        item_codes, item_index = pd.factorize(frame["item"], sort=True)
        return labels, frame["label"].cat.codes.to_numpy().astype(np.int64), item_codes, len(item_index)

    def _fleiss(self, frame: pd.DataFrame, schema: dict[str, Any], *, seed: int, n_boot: int) -> Coefficient:
        """Fleiss' kappa over the complete items (the ``complete`` rows of :func:`.data.load`: k raters each);
        a frame without that column counts all its items, which then need the same number of raters."""
        if "complete" in frame:
            frame = frame[frame["complete"].to_numpy(dtype=bool)]
        _, counts, _ = self._counts(frame, schema)
        raters = counts.sum(axis=1)
        if len(counts) and (raters == raters[0]).all() and raters[0] >= 2:
            kappa, kappa_ci = co.fleiss_with_ci(counts, seed=seed, n_boot=n_boot)
            return Coefficient("fleiss_kappa", "nominal", kappa, kappa_ci, units=len(counts),
                               extra={"raters_per_item": int(raters[0])})
        reason = ("items have different numbers of raters; Fleiss' kappa needs the same number" if len(counts)
                  else "no item is complete yet (k annotations in every stage)")
        return Coefficient("fleiss_kappa", "nominal", None, units=0, extra={"skipped": reason})

    def headline(self, frame: pd.DataFrame, schema: dict[str, Any]) -> Headline:
        labels, codes, item_codes, n_items = self._codes(frame, schema)
        domain = np.arange(len(labels))

        def of(rows: np.ndarray, *, seed: int = co.SEED, n_boot: int = 0) -> Coefficient:
            ok = rows & (codes >= 0)
            # items outside the subset keep all-zero rows, which are not pairable and count nowhere
            counts = co.value_counts(item_codes[ok], codes[ok], n_items, max(len(labels), 1))
            if n_boot:
                value, ci = co.alpha_with_ci(counts, None, n_items, domain, "nominal", seed=seed, n_boot=n_boot,
                                             package=False)
            else:
                value, ci = co.coincidence_alpha(counts, domain, "nominal"), (None, None)
            return Coefficient("krippendorff_alpha", "nominal", value, ci, units=int((counts.sum(1) >= 2).sum()))

        return of

    def primary(self, frame: pd.DataFrame, schema: dict[str, Any], *, seed: int = co.SEED,
                n_boot: int = 0) -> Coefficient:
        return self.headline(frame, schema)(np.ones(len(frame), dtype=bool), seed=seed, n_boot=n_boot)

    def compute(self, frame: pd.DataFrame, schema: dict[str, Any], *, seed: int = co.SEED,
                n_boot: int = co.N_BOOT) -> MeasureResult:
        labels, counts, _ = self._counts(frame, schema)
        v = len(labels)
        domain = np.arange(v)
        n_items = len(counts)
        alpha, alpha_ci = co.alpha_with_ci(counts, None, n_items, domain, "nominal", seed=seed, n_boot=n_boot)
        result = [Coefficient("krippendorff_alpha", "nominal", alpha, alpha_ci, units=n_items)]

        result.append(self._fleiss(frame, schema, seed=seed, n_boot=n_boot))

        frame = frame.assign(code=frame["label"].cat.codes if isinstance(frame["label"].dtype, pd.CategoricalDtype)
                             else pd.Categorical(frame["label"].astype("string"), categories=labels).codes)
        items, annotators, matrix = _pivot(frame, "code", -1)
        matrix = matrix.astype(np.int64)
        present = matrix >= 0
        pairs = _pairs_with_overlap(present)
        kappas = []
        for i, j in pairs:
            both = present[:, i] & present[:, j]
            kappas.append(co.cohen_kappa(matrix[both, i], matrix[both, j], v))
        cohen_ci = self._cohen_ci(matrix, present, pairs, v, seed, n_boot)
        cohen_extra: dict[str, Any] = {"pairs": len(pairs), "min_shared_items": MIN_SHARED}
        if pairs and n_boot and cohen_ci == (None, None):
            cohen_extra["ci_skipped"] = "too many distinct label combinations across pairs for the bootstrap"
        result.append(Coefficient("pairwise_cohen_kappa", "nominal", _nanmean(kappas), cohen_ci, units=n_items,
                                  extra=cohen_extra))

        # Coincidences between annotators: o[c, k] counts pairs of values (c, k) within items.
        confusion = co.coincidences(*co.item_rows(counts, None, n_items)).reshape(v, v)
        dist_all = counts.sum(axis=0)
        by_annotator = {
            int(a): np.bincount(matrix[present[:, j], j], minlength=v).tolist() for j, a in enumerate(annotators)
        }
        return MeasureResult(
            coefficients=result, primary="krippendorff_alpha",
            pairs=_pair_matrix("cohen_kappa", annotators, pairs, kappas),
            confusion={"labels": labels, "matrix": confusion.round(6).tolist()},
            distribution={"labels": labels, "project": dist_all.tolist(), "by_annotator": by_annotator},
            annotator_agreement=self._leave_one_out(counts, matrix, present, annotators),
            item_disagreement=pd.Series(_normalised_entropy(counts), index=items),
            disagreement_name="entropy of the labels (0 = unanimous, 1 = uniform)",
        )

    def _cohen_ci(self, matrix: np.ndarray, present: np.ndarray, pairs: list[tuple[int, int]], v: int, seed: int,
                  n_boot: int) -> tuple[float | None, float | None]:
        if not pairs or len(pairs) * v * v > MAX_BOOT_DIMS or not n_boot:
            return (None, None)
        # Per item, each pair's cell code (or -1): distinct rows are few, so expand only those to one-hot sums.
        codes = np.full((len(matrix), len(pairs)), -1, dtype=np.int64)
        for p, (i, j) in enumerate(pairs):
            both = present[:, i] & present[:, j]
            codes[both, p] = matrix[both, i] * v + matrix[both, j]
        distinct, _, counts = co.distinct_rows(codes)
        if len(distinct) > MAX_BOOT_DISTINCT:
            return (None, None)
        onehot = np.zeros((len(distinct), len(pairs) * v * v))
        rows, cols = np.nonzero(distinct >= 0)
        onehot[rows, cols * v * v + distinct[rows, cols]] = 1
        n = len(matrix)
        rng = np.random.default_rng(seed)
        draws = rng.multinomial(n, counts / n, size=n_boot).astype(np.float64)
        tables = (draws @ onehot).reshape(n_boot, len(pairs), v, v)
        kappas = co._kappa_from_tables(tables)
        with warnings.catch_warnings():  # resamples where every pair's kappa is undefined are dropped
            warnings.simplefilter("ignore", RuntimeWarning)
            return co._percentiles(np.nanmean(kappas, axis=1))

    def _leave_one_out(self, counts: np.ndarray, matrix: np.ndarray, present: np.ndarray, annotators: np.ndarray
                       ) -> dict[int, dict[str, Any]]:
        """Share of an annotator's items where they chose the others' (unique) majority label."""
        out: dict[int, dict[str, Any]] = {}
        for j, annotator in enumerate(annotators):
            rows = np.flatnonzero(present[:, j])
            own = matrix[rows, j]
            others = counts[rows].copy()
            others[np.arange(len(rows)), own] -= 1
            top = others.max(axis=1)
            unique_top = (others == top[:, None]).sum(axis=1) == 1
            decided = unique_top & (top > 0)
            agree = others[np.arange(len(rows)), own] == top
            n = int(decided.sum())
            out[int(annotator)] = {"agreement": float((agree & decided).sum() / n) if n else None, "items": n,
                                   "against": "majority of the others"}
        return out

    def score(self, payload: dict[str, Any], gold: dict[str, Any]) -> float:
        return float(payload.get("label") == gold.get("label"))

    def item_labels(self, frame: pd.DataFrame) -> pd.Series:
        return frame["label"].astype(str)

    def describe(self, payload: dict[str, Any]) -> str:
        return str(payload.get("label", ""))


def _normalised_entropy(counts: np.ndarray) -> np.ndarray:
    totals = counts.sum(axis=1, keepdims=True).astype(np.float64)
    p = np.divide(counts, totals, out=np.zeros(counts.shape), where=totals > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -(np.where(p > 0, p * np.log(p), 0.0)).sum(axis=1)
    k = np.minimum(totals[:, 0], counts.shape[1])
    return np.where(k > 1, h / np.log(np.maximum(k, 2)), 0.0)


# -- scores: sts ----------------------------------------------------------------------------------------------


class ScoreMeasure(Measure):
    """A number per item: alpha interval (and ordinal), mean pairwise Pearson and Spearman."""

    fields = {"score": "payload.score"}
    primary_name = "krippendorff_alpha"
    primary_level = "interval"

    def _counts(self, frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        scores = pd.to_numeric(frame["score"], errors="coerce").to_numpy(dtype=np.float64)
        ok = np.isfinite(scores)
        domain, value_codes = np.unique(scores[ok], return_inverse=True)
        item_codes, item_index = pd.factorize(frame["item"], sort=True)
        counts = co.value_counts(item_codes[ok], value_codes.ravel(), len(item_index), max(len(domain), 1))
        return domain, counts, item_index.to_numpy()

    def primary(self, frame: pd.DataFrame, schema: dict[str, Any], *, seed: int = co.SEED,
                n_boot: int = 0) -> Coefficient:
        domain, counts, _ = self._counts(frame)
        if n_boot:
            value, ci = co.alpha_with_ci(counts, None, len(counts), domain, "interval", seed=seed,
                                         n_boot=n_boot, package=False)
        else:
            value, ci = co.coincidence_alpha(counts, domain, "interval"), (None, None)
        return Coefficient("krippendorff_alpha", "interval", value, ci, units=int((counts.sum(1) >= 2).sum()))

    def compute(self, frame: pd.DataFrame, schema: dict[str, Any], *, seed: int = co.SEED,
                n_boot: int = co.N_BOOT) -> MeasureResult:
        frame = frame.assign(score=pd.to_numeric(frame["score"], errors="coerce"))
        domain, counts, _ = self._counts(frame)
        n_items = len(counts)
        result = []
        for level in ("interval", "ordinal"):
            value, ci = co.alpha_with_ci(counts, None, n_items, domain, level, seed=seed, n_boot=n_boot)
            result.append(Coefficient("krippendorff_alpha", level, value, ci, units=n_items))

        items, annotators, matrix = _pivot(frame, "score", np.nan)
        present = np.isfinite(matrix)
        pairs = _pairs_with_overlap(present)
        pearsons: list[float | None] = []
        for method, level, rank in (("pearson", "interval", False), ("spearman", "ordinal", True)):
            values, mean, ci = co.pairwise_correlations(matrix, present, pairs, rank=rank, seed=seed, n_boot=n_boot)
            pearsons = pearsons or values
            result.append(Coefficient(f"pairwise_{method}", level, mean, ci, units=len(items),
                                      extra={"pairs": len(pairs), "min_shared_items": MIN_SHARED}))

        agreement: dict[int, dict[str, Any]] = {}
        sums = np.nansum(matrix, axis=1)
        n = present.sum(axis=1)
        for j, annotator in enumerate(annotators):
            rows = present[:, j] & (n >= 2)
            own = matrix[rows, j]
            others = (sums[rows] - own) / (n[rows] - 1)
            agreement[int(annotator)] = {
                "agreement": co.pearson(own, others), "items": int(rows.sum()), "against": "mean of the others",
                "mean_abs_difference": float(np.abs(own - others).mean()) if rows.any() else None,
            }
        spread = np.nanstd(np.where(present, matrix, np.nan), axis=1)
        confusion = co.coincidences(*co.item_rows(counts, None, n_items)).reshape(len(domain), len(domain))
        labels = [f"{d:g}" for d in domain]
        by_annotator = {}
        for j, annotator in enumerate(annotators):
            values = matrix[present[:, j], j]
            by_annotator[int(annotator)] = [int((values == d).sum()) for d in domain]
        return MeasureResult(
            coefficients=result, primary="krippendorff_alpha",
            pairs=_pair_matrix("pearson_r", annotators, pairs, pearsons),
            confusion={"labels": labels, "matrix": confusion.round(6).tolist()},
            distribution={"labels": labels, "project": counts.sum(axis=0).tolist(), "by_annotator": by_annotator},
            annotator_agreement=agreement,
            item_disagreement=pd.Series(spread, index=items),
            disagreement_name="standard deviation of the scores (points)",
        )

    def score(self, payload: dict[str, Any], gold: dict[str, Any]) -> float:
        # Within one point of the known score counts as right, as on KLUE's 0–5 scale.
        return float(abs(float(payload.get("score", 0)) - float(gold.get("score", 0))) <= 1.0)

    def item_labels(self, frame: pd.DataFrame) -> pd.Series:
        return pd.to_numeric(frame["score"], errors="coerce").map(lambda s: f"{s:g}")

    def describe(self, payload: dict[str, Any]) -> str:
        return f"{payload.get('score')}"

    def render(self, payload: dict[str, Any], item: dict[str, Any]) -> SafeString:
        return format_html('<span class="chip score">{}</span> / 5', payload.get("score"))


# -- pairwise agreement between annotators over structured answers -----------------------------------------------


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
    values = [_ratio(sums.loc[pair, "num"], sums.loc[pair, "den"]) for pair in kept]
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
    by_annotator = {int(a): {"agreement": _ratio(r.num, r.den), "items": int(r.n),
                             "against": "each other annotator"} for a, r in per_annotator.iterrows()}
    per_item = rows.groupby("item")[["num", "den"]].sum()
    num, den = per_item["num"].to_numpy(dtype=np.float64), per_item["den"].to_numpy(dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        by_item = pd.Series(np.where(den > 0, num / den, 1.0), index=per_item.index)  # as _ratio, per item
    return PairAgreement(pairs, values, _nanmean(values), ci, by_annotator, by_item, annotators)


def _ratio(num: float, den: float) -> float:
    return float(num / den) if den > 0 else 1.0


def _pair_coefficient(name: str, level: str, agreement: PairAgreement, unit: str, **extra: Any) -> Coefficient:
    return Coefficient(name, level, agreement.mean, agreement.ci95, units=int(agreement.by_item.size), unit=unit,
                       extra={"pairs": len(agreement.pairs), "min_shared_items": MIN_SHARED, **extra})


def _units_alpha(name: str, row_units: np.ndarray, row_values: np.ndarray, unit_item: np.ndarray, n_items: int,
                 *, seed: int, n_boot: int, unit: str, level: str = "nominal") -> Coefficient:
    """Alpha over sub-item units (eojeol, slots): ``row_units[r]`` is the unit of value ``row_values[r]`` and
    ``unit_item[u]`` the item of unit u; the bootstrap resamples whole items."""
    codes, domain = pd.factorize(pd.Series(row_values, dtype=object), sort=True)
    counts = co.value_counts(row_units, codes, len(unit_item), max(len(domain), 1))
    pairable = counts.sum(axis=1) >= 2
    value, ci = co.alpha_with_ci(counts, unit_item, n_items, np.arange(len(domain)), level, seed=seed,
                                 n_boot=n_boot)
    return Coefficient(name, level, value, ci, units=int(pairable.sum()), unit=unit)


class _Structured(Measure):
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
            pairs=_pair_matrix(metric, agreement.annotators, agreement.pairs, agreement.values),
            distribution=distribution, annotator_agreement=agreement.by_annotator,
            item_disagreement=1.0 - agreement.by_item, disagreement_name=disagreement_name,
        )


# -- ner ----------------------------------------------------------------------------------------------------------


@dataclass
class Spans:
    """A frame's entities and character tags, decoded once (:meth:`SpanMeasure.decode`)."""

    frame: pd.DataFrame
    #: Every entity type of the frame: the schema's first (always counted), then the others, sorted.
    types: list[str]
    schema_types: int
    #: Per entity: its row in ``frame``, offsets as annotated, and type (index into ``types``).
    entity_row: np.ndarray
    entity_start: np.ndarray
    entity_end: np.ndarray
    entity_type: np.ndarray
    #: Per (row, character): the row, the tag (0 = O, 1 + 2k = B-type k, 2 + 2k = I-type k) and the unit (the
    #: item's character, numbered over all items).
    tag_row: np.ndarray
    tag: np.ndarray
    tag_unit: np.ndarray
    #: Per unit: its item (index into the frame's sorted items).
    unit_item: np.ndarray
    n_items: int
    #: Per row: its item (index into the frame's sorted items).
    row_item: np.ndarray

    def take(self, rows: np.ndarray, frame: pd.DataFrame) -> Spans:
        """The decoding of ``frame`` = ``self.frame[rows]`` (boolean mask), from these arrays: the same arrays
        :meth:`SpanMeasure.decode` gives for that frame, without reading its payloads again."""
        position = np.cumsum(rows) - 1
        kept_entity = rows[self.entity_row]
        # types: the schema's, then the others the rows use, in this decoding's order
        keep_type = np.zeros(len(self.types), dtype=bool)
        keep_type[:self.schema_types] = True
        keep_type[self.entity_type[kept_entity]] = True
        type_code = np.cumsum(keep_type) - 1
        tag_code = np.zeros(1 + 2 * len(self.types), dtype=np.int64)
        tag_code[1::2], tag_code[2::2] = 1 + 2 * type_code, 2 + 2 * type_code
        keep_item = np.bincount(self.row_item[rows], minlength=self.n_items) > 0
        keep_unit = keep_item[self.unit_item]
        unit_code = np.cumsum(keep_unit) - 1
        kept_tag = rows[self.tag_row]
        return Spans(
            frame=frame.reset_index(drop=True), types=[t for t, k in zip(self.types, keep_type, strict=True) if k],
            schema_types=self.schema_types, entity_row=position[self.entity_row[kept_entity]],
            entity_start=self.entity_start[kept_entity], entity_end=self.entity_end[kept_entity],
            entity_type=type_code[self.entity_type[kept_entity]], tag_row=position[self.tag_row[kept_tag]],
            tag=tag_code[self.tag[kept_tag]], tag_unit=unit_code[self.tag_unit[kept_tag]],
            unit_item=(np.cumsum(keep_item) - 1)[self.unit_item[keep_unit]], n_items=int(keep_item.sum()),
            row_item=(np.cumsum(keep_item) - 1)[self.row_item[rows]])


class SpanMeasure(_Structured):
    """Character spans: alpha over character-level BIO tags and pairwise entity F1 (exact span and type)."""

    fields = {"payload": "payload", "sentence": "item.sentence"}
    primary_name = "krippendorff_alpha"
    primary_level = "nominal"

    def __init__(self) -> None:
        # (frame, schema, decoded) of the last decode, all weak but the schema: see :meth:`decode`
        self._decoded: tuple[weakref.ref[pd.DataFrame], dict[str, Any], weakref.ref[Spans]] | None = None

    def decode(self, frame: pd.DataFrame, schema: dict[str, Any]) -> Spans:
        """Every entity of the frame and every (row, character) tag, once (the timeline and leave-one-out take
        subsets of these arrays instead of reading the payloads again). While the decoded arrays of this very
        frame are in use (a report's headline holds them), asking again returns them."""
        last = self._decoded
        if last is not None and last[0]() is frame and last[1] is schema and last[2]() is not None:
            return last[2]()
        spans = self._decode(frame, schema)
        self._decoded = (weakref.ref(frame), schema, weakref.ref(spans))
        return spans

    def _decode(self, frame: pd.DataFrame, schema: dict[str, Any]) -> Spans:
        frame = frame.reset_index(drop=True)
        found = [(r, e["start"], e["end"], e["type"]) for r, payload in enumerate(frame["payload"]) if payload
                 for e in payload.get("entities") or ()]
        rows, starts, ends, names = (list(column) for column in zip(*found, strict=True)) if found else ([], [], [], [])
        types = _labels_in_order(pd.Series(sorted(set(names)), dtype=object), schema.get("labels"))
        type_code = {t: k for k, t in enumerate(types)}
        entity_row = np.array(rows, dtype=np.int64)
        entity_type = np.array([type_code[t] for t in names], dtype=np.int64)
        item_codes, item_index = pd.factorize(frame["item"], sort=True)
        # the first sentence given for each item (every row of an item carries the item's sentence)
        first = frame["sentence"].str.len().groupby(frame["item"]).first().reindex(item_index)
        lengths = first.fillna(0).to_numpy(dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        # One tag per (row, character of the row's item), laid out row after row; entities are scattered in
        # with numpy instead of a Python loop per payload.
        row_lengths = lengths[item_codes]
        row_start = np.concatenate([[0], np.cumsum(row_lengths)[:-1]]).astype(np.int64)
        starts_a, ends_a = np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64)
        limit = row_lengths[entity_row]
        clipped = np.minimum(starts_a, limit)
        span_lengths = np.minimum(np.maximum(ends_a, clipped), limit) - clipped
        tags = np.zeros(int(row_lengths.sum()), dtype=np.int64)
        covered = np.repeat(row_start[entity_row] + clipped - np.cumsum(span_lengths) + span_lengths, span_lengths)
        tags[covered + np.arange(len(covered))] = np.repeat(2 + 2 * entity_type, span_lengths)
        begins = clipped < limit
        tags[row_start[entity_row[begins]] + clipped[begins]] = 1 + 2 * entity_type[begins]
        return Spans(
            frame=frame, types=types, schema_types=len(schema.get("labels") or []), entity_row=entity_row,
            entity_start=starts_a, entity_end=ends_a, entity_type=entity_type,
            tag_row=np.repeat(np.arange(len(frame)), row_lengths), tag=tags,
            tag_unit=np.repeat(offsets[item_codes] - row_start, row_lengths) + np.arange(len(tags)),
            unit_item=np.repeat(np.arange(len(lengths)), lengths), n_items=len(lengths),
            row_item=item_codes.astype(np.int64))

    def _char_alpha(self, spans: Spans, rows: np.ndarray, *, seed: int, n_boot: int,
                    package: bool = True, whole_items: dict[str, np.ndarray] | None = None) -> Coefficient:
        """Units are the characters of the items of the ``rows``; each annotator's tag is O, B-type or I-type,
        over the types of those rows (the schema's first).

        ``whole_items``: a cache for the coincidence rows of items with all their rows chosen, when every type is
        (the timeline's prefixes: then only the items a prefix cuts through are counted again)."""
        present = np.zeros(len(spans.types), dtype=bool)
        present[:spans.schema_types] = True
        present[spans.entity_type[rows[spans.entity_row]]] = True
        code = np.cumsum(present) - 1
        tag_code = np.zeros(1 + 2 * len(spans.types), dtype=np.int64)
        tag_code[1::2], tag_code[2::2] = 1 + 2 * code, 2 + 2 * code
        chosen = rows[spans.tag_row]
        v = 1 + 2 * int(present.sum())
        if whole_items is not None and not package and present.all():
            return self._char_alpha_reusing(spans, rows, chosen, v, whole_items, seed=seed, n_boot=n_boot)
        # only the units of the chosen rows' items (numbered in the same order), so a small subset stays cheap
        item_in = np.zeros(spans.n_items, dtype=bool)
        item_in[spans.unit_item[spans.tag_unit[chosen]]] = True
        unit_in = item_in[spans.unit_item]
        unit_code = np.cumsum(unit_in) - 1
        counts = co.value_counts(unit_code[spans.tag_unit[chosen]], tag_code[spans.tag[chosen]], int(unit_in.sum()), v)
        value, ci = co.alpha_with_ci(counts, spans.unit_item[unit_in], spans.n_items, np.arange(v), "nominal",
                                     seed=seed, n_boot=n_boot, package=package)
        return self._char_coefficient(value, ci, int((counts.sum(1) >= 2).sum()))

    @staticmethod
    def _char_coefficient(value: float | None, ci: tuple[float | None, float | None], units: int) -> Coefficient:
        return Coefficient("krippendorff_alpha", "nominal", value, ci, units=units, unit="character",
                           extra={"tags": "O, B-type, I-type"})

    @staticmethod
    def _item_coincidences(spans: Spans, items: np.ndarray, chosen: np.ndarray, v: int) -> np.ndarray:
        """The coincidence rows (V² each) of the ``items`` (mask), from their chosen tags, tags coded as they are
        (every type present)."""
        unit_in = items[spans.unit_item]
        unit_code = np.cumsum(unit_in) - 1
        tags = chosen & unit_in[spans.tag_unit]
        counts = co.value_counts(unit_code[spans.tag_unit[tags]], spans.tag[tags], int(unit_in.sum()), v)
        return co.item_coincidences(counts, (np.cumsum(items) - 1)[spans.unit_item[unit_in]], int(items.sum()))

    def _char_alpha_reusing(self, spans: Spans, rows: np.ndarray, chosen: np.ndarray, v: int,
                            whole_items: dict[str, np.ndarray], *, seed: int, n_boot: int) -> Coefficient:
        """:meth:`_char_alpha` (coincidences, every type present) with the rows of whole items from the cache: an
        item's coincidence row is a function of its tag counts alone, summed in the same order either way."""
        if not whole_items:
            everything = np.ones(len(spans.tag), dtype=bool)
            whole_items["rows"] = self._item_coincidences(spans, np.ones(spans.n_items, dtype=bool), everything, v)
            whole_items["annotations"] = np.bincount(spans.row_item, minlength=spans.n_items)
        taken = np.bincount(spans.row_item[rows], minlength=spans.n_items)
        whole = taken == whole_items["annotations"]
        cut = (taken > 0) & ~whole
        per_item = np.zeros((spans.n_items, v * v))
        per_item[whole] = whole_items["rows"][whole]
        if cut.any():
            per_item[cut] = self._item_coincidences(spans, cut, chosen, v)
        per_item = per_item[per_item.sum(axis=1) > 0]
        value, ci = co.rows_alpha_with_ci(per_item, np.ones(len(per_item), dtype=np.int64), np.arange(v), "nominal",
                                          seed=seed, n_boot=n_boot)
        per_unit = np.bincount(spans.tag_unit[chosen], minlength=len(spans.unit_item))
        return self._char_coefficient(value, ci, int((per_unit >= 2).sum()))

    def headline(self, frame: pd.DataFrame, schema: dict[str, Any]) -> Headline:
        return self._headline(self.decode(frame, schema))

    def _headline(self, spans: Spans, *, prefixes: bool = False) -> Headline:
        """``prefixes``: most asks will take whole items (the timeline), so whole items' coincidences are kept."""
        whole_items: dict[str, np.ndarray] | None = {} if prefixes else None

        def of(rows: np.ndarray, *, seed: int = co.SEED, n_boot: int = 0) -> Coefficient:
            return self._char_alpha(spans, rows, seed=seed, n_boot=n_boot, package=False, whole_items=whole_items)

        return of

    def headlines(self, all_rows: pd.DataFrame, frame: pd.DataFrame, counted: np.ndarray, schema: dict[str, Any]
                  ) -> tuple[Headline, Headline]:
        everything = self.decode(all_rows, schema)
        spans = everything.take(counted, frame)
        # while the frame's headline holds them, compute(frame) finds these arrays (see decode)
        self._decoded = (weakref.ref(frame), schema, weakref.ref(spans))
        return self._headline(everything, prefixes=True), self._headline(spans)

    def _primary(self, frame: pd.DataFrame, schema: dict[str, Any], *, seed: int, n_boot: int) -> Coefficient:
        return self.headline(frame, schema)(np.ones(len(frame), dtype=bool), seed=seed, n_boot=n_boot)

    @staticmethod
    def _entity_counts(spans: Spans, pairs: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """Per pair row and entity type, in one pass: matched entities (exact span and type) and the two rows'
        entities, each (pair rows × types)."""
        n_types = max(len(spans.types), 1)
        entities = pd.DataFrame({"row": spans.entity_row, "item": spans.frame["item"].to_numpy()[spans.entity_row],
                                 "start": spans.entity_start, "end": spans.entity_end, "type": spans.entity_type})
        matched = entities.merge(entities, on=["item", "start", "end", "type"], suffixes=("_a", "_b"))
        n_rows = len(spans.frame)
        pair_keys = pd.Index(pairs["row_a"].to_numpy(dtype=np.int64) * n_rows + pairs["row_b"].to_numpy(dtype=np.int64))
        pair = pair_keys.get_indexer(matched["row_a"].to_numpy(dtype=np.int64) * n_rows
                                     + matched["row_b"].to_numpy(dtype=np.int64))
        found = pair >= 0
        tp = np.bincount(pair[found] * n_types + matched["type"].to_numpy()[found],
                         minlength=len(pairs) * n_types).reshape(len(pairs), n_types)
        per_row = np.bincount(spans.entity_row * n_types + spans.entity_type,
                              minlength=n_rows * n_types).reshape(n_rows, n_types)
        marked = per_row[pairs["row_a"].to_numpy(dtype=np.int64)] + per_row[pairs["row_b"].to_numpy(dtype=np.int64)]
        return tp, marked

    @staticmethod
    def _type_means(pairs: pd.DataFrame, num: np.ndarray, den: np.ndarray) -> list[float | None]:
        """Per type (columns of ``num``/``den``): :func:`pair_agreement`'s mean over the annotator pairs with
        enough shared items, for every type at once."""
        if pairs.empty:
            return [None] * num.shape[1]
        shared = pairs.groupby(["a", "b"])["item"].nunique()
        pair_codes, pair_index = pd.factorize(pd.MultiIndex.from_arrays([pairs["a"], pairs["b"]]), sort=True)
        kept = pair_index.get_indexer(shared[shared >= MIN_SHARED].index)
        sums = [np.stack([np.bincount(pair_codes, weights=column, minlength=len(pair_index))
                          for column in part.T], axis=1) for part in (num, den)]
        return [_nanmean([_ratio(sums[0][p, t], sums[1][p, t]) for p in kept]) for t in range(num.shape[1])]

    def compute(self, frame: pd.DataFrame, schema: dict[str, Any], *, seed: int = co.SEED,
                n_boot: int = co.N_BOOT) -> MeasureResult:
        spans = self.decode(frame, schema)
        frame, types = spans.frame, spans.types
        alpha = self._char_alpha(spans, np.ones(len(frame), dtype=bool), seed=seed, n_boot=n_boot)
        pairs = pair_rows(frame)
        tp, marked = self._entity_counts(spans, pairs)
        rows = pairs[["item", "a", "b"]].copy()
        rows["num"], rows["den"] = 2.0 * tp.sum(axis=1), marked.sum(axis=1).astype(np.float64)
        overall = pair_agreement(rows, seed=seed, n_boot=n_boot)
        counts = np.bincount(spans.entity_type, minlength=len(types))
        means = self._type_means(pairs, 2.0 * tp, marked.astype(np.float64))
        per_type = {t: means[k] for k, t in enumerate(types) if counts[k]}
        annotator_codes, annotators = pd.factorize(frame["annotator"], sort=True)
        by_type = np.bincount(annotator_codes[spans.entity_row] * len(types) + spans.entity_type,
                              minlength=len(annotators) * len(types)).reshape(len(annotators), len(types))
        by_annotator = {int(a): by_type[j].tolist() for j, a in enumerate(annotators)}
        f1 = _pair_coefficient("pairwise_entity_f1", "nominal", overall, "item",
                               per_type={t: co._clean(v) for t, v in per_type.items()},
                               match="exact span and type")
        return self._result([alpha, f1], "krippendorff_alpha", overall, "entity_f1",
                            "1 − entity F1 between the annotators' spans",
                            {"labels": types, "project": counts.tolist(), "by_annotator": by_annotator})

    def score(self, payload: dict[str, Any], gold: dict[str, Any]) -> float:
        mine = {(e["start"], e["end"], e["type"]) for e in payload.get("entities") or []}
        known = {(e["start"], e["end"], e["type"]) for e in gold.get("entities") or []}
        return float(co.f1_from_counts(len(mine & known), len(mine), len(known)))

    def item_labels(self, frame: pd.DataFrame) -> pd.Series:
        return frame["payload"].map(lambda p: ",".join(sorted({e["type"] for e in (p or {}).get("entities") or []})))

    def describe(self, payload: dict[str, Any]) -> str:
        return ", ".join(f"[{e['start']},{e['end']}) {e['type']}" for e in payload.get("entities") or []) or "—"

    def render(self, payload: dict[str, Any], item: dict[str, Any]) -> SafeString:
        sentence = str(item.get("sentence", ""))
        parts, cursor = [], 0
        for e in sorted(payload.get("entities") or [], key=lambda e: (e["start"], e["end"])):
            parts.append(format_html("{}", sentence[cursor:e["start"]]))
            parts.append(format_html('<mark class="ent ent-{}" title="{}">{}<sub>{}</sub></mark>', e["type"],
                                     e["type"], sentence[e["start"]:e["end"]], e["type"]))
            cursor = e["end"]
        parts.append(format_html("{}", sentence[cursor:]))
        # every part went through format_html, so the joined string is safe
        return format_html('<p class="spans">{}</p>', mark_safe("".join(parts)))


# -- dp -----------------------------------------------------------------------------------------------------------


class TreeMeasure(_Structured):
    """Dependency trees: pairwise UAS and LAS, alpha (nominal) on heads and on labels; units are eojeol."""

    primary_name = "krippendorff_alpha_heads"
    primary_level = "nominal"

    def _tokens(self, frame: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame(
            [(row, item, annotator, i, head, deprel)
             for row, item, annotator, p in zip(frame.index, frame["item"], frame["annotator"], frame["payload"],
                                                strict=True)
             for i, (head, deprel) in enumerate(zip(p.get("heads") or [], p.get("deprels") or [], strict=False))],
            columns=["row", "item", "annotator", "index", "head", "deprel"])

    def _alphas(self, tokens: pd.DataFrame, *, seed: int, n_boot: int, which: tuple[str, ...]) -> list[Coefficient]:
        item_codes, _ = pd.factorize(tokens["item"], sort=True)
        unit_codes, units = pd.factorize(pd.MultiIndex.from_arrays([tokens["item"], tokens["index"]]))
        unit_item = np.zeros(len(units), dtype=np.int64)
        unit_item[unit_codes] = item_codes
        n_items = int(item_codes.max()) + 1 if len(item_codes) else 0
        out = []
        for column in which:
            out.append(_units_alpha(f"krippendorff_alpha_{column}s", unit_codes, tokens[column].astype(str).to_numpy(),
                                    unit_item, n_items, seed=seed, n_boot=n_boot, unit="eojeol"))
        return out

    def _primary(self, frame: pd.DataFrame, schema: dict[str, Any], *, seed: int, n_boot: int) -> Coefficient:
        return self._alphas(self._tokens(frame), seed=seed, n_boot=n_boot, which=("head",))[0]

    def compute(self, frame: pd.DataFrame, schema: dict[str, Any], *, seed: int = co.SEED,
                n_boot: int = co.N_BOOT) -> MeasureResult:
        frame = frame.reset_index(drop=True)
        tokens = self._tokens(frame)
        alphas = self._alphas(tokens, seed=seed, n_boot=n_boot, which=("head", "deprel"))
        merged = tokens.merge(tokens, on=["item", "index"], suffixes=("_a", "_b"))
        merged = merged[merged["annotator_a"] < merged["annotator_b"]]
        same_head = (merged["head_a"] == merged["head_b"]).to_numpy()
        same_both = same_head & (merged["deprel_a"] == merged["deprel_b"]).to_numpy()
        base = merged[["item"]].assign(a=merged["annotator_a"], b=merged["annotator_b"], den=1.0)
        uas = pair_agreement(base.assign(num=same_head.astype(float)).groupby(["item", "a", "b"], as_index=False)
                             [["num", "den"]].sum(), seed=seed, n_boot=n_boot)
        las = pair_agreement(base.assign(num=same_both.astype(float)).groupby(["item", "a", "b"], as_index=False)
                             [["num", "den"]].sum(), seed=seed, n_boot=n_boot)
        coefficients = [*alphas, _pair_coefficient("pairwise_uas", "nominal", uas, "item"),
                        _pair_coefficient("pairwise_las", "nominal", las, "item")]
        deprels = tokens["deprel"].astype(str)
        labels = sorted(deprels.unique().tolist())
        counts = deprels.value_counts()
        by_annotator = {int(a): [int((group == label).sum()) for label in labels]
                        for a, group in deprels.groupby(tokens["annotator"])}
        return self._result(coefficients, "krippendorff_alpha_heads", las, "las", "1 − LAS between the annotators",
                            {"labels": labels, "project": [int(counts.get(label, 0)) for label in labels],
                             "by_annotator": by_annotator})

    def score(self, payload: dict[str, Any], gold: dict[str, Any]) -> float:
        pairs = list(zip(payload.get("heads") or [], payload.get("deprels") or [], gold.get("heads") or [],
                         gold.get("deprels") or [], strict=False))
        return float(np.mean([h == gh and d == gd for h, d, gh, gd in pairs])) if pairs else 0.0

    def describe(self, payload: dict[str, Any]) -> str:
        return " ".join(f"{i + 1}→{h}:{d}" for i, (h, d) in enumerate(zip(payload.get("heads") or [],
                                                                         payload.get("deprels") or [], strict=False)))

    def render(self, payload: dict[str, Any], item: dict[str, Any]) -> SafeString:
        forms = [str(t.get("form", "")) for t in item.get("tokens") or []]
        rows = format_html_join("", "<tr><td>{}</td><td>{}</td><td>→ {} {}</td><td>{}</td></tr>", (
            (i + 1, forms[i] if i < len(forms) else "", head, f"({forms[head - 1]})" if 0 < head <= len(forms)
             else "(root)", deprel)
            for i, (head, deprel) in enumerate(zip(payload.get("heads") or [], payload.get("deprels") or [],
                                                   strict=False))))
        return format_html('<table class="tree"><thead><tr><th>#</th><th>eojeol</th><th>head</th><th>DEPREL</th>'
                           "</tr></thead><tbody>{}</tbody></table>", rows)
# -- mrc ----------------------------------------------------------------------------------------------------------

_ASCII_PUNCTUATION = str.maketrans("", "", "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def normalise_answer(text: str) -> str:
    """As KLUE's MRC scorer: lower-case, drop ASCII punctuation (not Korean brackets), collapse whitespace."""
    return " ".join(text.lower().translate(_ASCII_PUNCTUATION).split())


def char_f1(a: str, b: str) -> float:
    """F1 over the characters (spaces ignored) of two normalised answers; two empty answers agree."""
    x, y = Counter(normalise_answer(a).replace(" ", "")), Counter(normalise_answer(b).replace(" ", ""))
    if not x and not y:
        return 1.0
    common = sum((x & y).values())
    return 0.0 if common == 0 else 2 * common / (sum(x.values()) + sum(y.values()))


class AnswerMeasure(_Structured):
    """Answer spans: pairwise exact match and character F1, alpha (nominal) on answerability; per question type."""

    fields = {"payload": "payload", "question_type": "item.question_type"}
    primary_name = "pairwise_char_f1"
    primary_level = "nominal"

    @staticmethod
    def _answer(payload: dict[str, Any] | None) -> str | None:
        answer = (payload or {}).get("answer")
        return None if answer is None else str(answer.get("text", ""))

    def _pairs(self, frame: pd.DataFrame) -> pd.DataFrame:
        answers = [self._answer(p) for p in frame["payload"]]
        pairs = pair_rows(frame)
        a = [answers[r] for r in pairs["row_a"]]
        b = [answers[r] for r in pairs["row_b"]]
        return pairs.assign(
            exact=[float(normalise_answer(x or "") == normalise_answer(y or "") and (x is None) == (y is None))
                   for x, y in zip(a, b, strict=True)],
            f1=[char_f1(x or "", y or "") if (x is None) == (y is None) else 0.0 for x, y in zip(a, b, strict=True)],
            den=1.0)

    def _question_types(self, frame: pd.DataFrame) -> dict[int, str]:
        """The type the writer chose (their payload), else the item's (imported questions)."""
        types: dict[int, str] = {}
        for item, payload, item_type in zip(frame["item"], frame["payload"], frame["question_type"], strict=True):
            qtype = (payload or {}).get("question_type") or item_type
            if qtype not in (None, ""):
                types[int(item)] = str(qtype)
        return types

    def _primary(self, frame: pd.DataFrame, schema: dict[str, Any], *, seed: int, n_boot: int) -> Coefficient:
        frame = frame.reset_index(drop=True)
        f1 = pair_agreement(self._pairs(frame).rename(columns={"f1": "num"}), seed=seed, n_boot=n_boot)
        return _pair_coefficient("pairwise_char_f1", "nominal", f1, "item")

    def compute(self, frame: pd.DataFrame, schema: dict[str, Any], *, seed: int = co.SEED,
                n_boot: int = co.N_BOOT) -> MeasureResult:
        frame = frame.reset_index(drop=True)
        pairs = self._pairs(frame)
        exact = pair_agreement(pairs.rename(columns={"exact": "num"}), seed=seed, n_boot=n_boot)
        f1 = pair_agreement(pairs.rename(columns={"f1": "num"}), seed=seed, n_boot=n_boot)
        qtypes = self._question_types(frame)
        pairs["qtype"] = pairs["item"].map(qtypes).fillna("unknown")
        per_type = {str(t): {"exact_match": float(g["exact"].mean()), "char_f1": float(g["f1"].mean()),
                             "items": int(g["item"].nunique())} for t, g in pairs.groupby("qtype")}
        item_codes, item_index = pd.factorize(frame["item"], sort=True)
        answerable = np.array([self._answer(p) is not None for p in frame["payload"]], dtype=np.int64)
        counts = co.value_counts(item_codes, answerable, len(item_index), 2)
        value, ci = co.alpha_with_ci(counts, None, len(item_index), np.arange(2), "nominal",
                                     seed=seed, n_boot=n_boot)
        coefficients = [
            _pair_coefficient("pairwise_exact_match", "nominal", exact, "item", per_question_type={
                t: v["exact_match"] for t, v in per_type.items()}),
            _pair_coefficient("pairwise_char_f1", "nominal", f1, "item", per_question_type={
                t: v["char_f1"] for t, v in per_type.items()}),
            Coefficient("krippendorff_alpha_answerable", "nominal", value, ci, units=int((counts.sum(1) >= 2).sum()),
                        extra={"values": "answerable / unanswerable"}),
        ]
        labels = ["answerable", "unanswerable"]
        by_annotator = {int(a): [int(g.sum()), int(len(g) - g.sum())]
                        for a, g in pd.Series(answerable).groupby(frame["annotator"].to_numpy())}
        project_counts = [int(answerable.sum()), int(len(answerable) - answerable.sum())]
        result = self._result(coefficients, "pairwise_char_f1", f1, "char_f1",
                              "1 − character F1 between the annotators' answers",
                              {"labels": labels, "project": project_counts, "by_annotator": by_annotator})
        result.coefficients[0].extra["question_types"] = per_type
        return result

    def score(self, payload: dict[str, Any], gold: dict[str, Any]) -> float:
        mine, known = self._answer(payload), self._answer(gold)
        if (mine is None) != (known is None):
            return 0.0
        return char_f1(mine or "", known or "")

    def item_labels(self, frame: pd.DataFrame) -> pd.Series:
        return frame["payload"].map(lambda p: "unanswerable" if self._answer(p) is None else "answerable")

    def describe(self, payload: dict[str, Any]) -> str:
        answer = self._answer(payload)
        return "(unanswerable)" if answer is None else answer

    def render(self, payload: dict[str, Any], item: dict[str, Any]) -> SafeString:
        answer = (payload or {}).get("answer")
        question = format_html('<p class="question">{}</p>', payload["question"]) if payload.get("question") else ""
        if answer is None:
            return format_html('{}<p class="unanswerable">unanswerable</p>', question)
        context, start = str(item.get("context", "")), int(answer.get("start", 0))
        end = start + len(str(answer.get("text", "")))
        before, after = context[max(0, start - 40):start], context[end:end + 40]
        return format_html('{}<p class="answer">…{}<mark>{}</mark>{}… <span class="muted">(offset {})</span></p>',
                           question, before, context[start:end], after, start)


# -- dst ----------------------------------------------------------------------------------------------------------


class StateMeasure(_Structured):
    """Dialogue states: pairwise joint-goal agreement per user turn, alpha (nominal) per slot."""

    primary_name = "krippendorff_alpha_slots"
    primary_level = "nominal"

    @staticmethod
    def _slot_values(state: list[str]) -> dict[str, str]:
        values = {}
        for entry in state:
            domain, slot, value = [*entry.split("-", 2), "", ""][:3]
            values[f"{domain}-{slot}"] = value
        return values

    def _slot_units(self, frame: pd.DataFrame) -> pd.DataFrame:
        """(item, turn, slot, annotator, value) for every slot any annotator of the item filled; 'none' when empty."""
        rows = []
        item_slots: dict[int, set[str]] = {}
        parsed = []
        for item, annotator, payload in zip(frame["item"], frame["annotator"], frame["payload"], strict=True):
            turns = [self._slot_values(state) for state in (payload or {}).get("states") or []]
            parsed.append((item, annotator, turns))
            item_slots.setdefault(item, set()).update(slot for turn in turns for slot in turn)
        for item, annotator, turns in parsed:
            for t, turn in enumerate(turns):
                for slot in item_slots[item]:
                    rows.append((item, t, slot, annotator, turn.get(slot, "none")))
        return pd.DataFrame(rows, columns=["item", "turn", "slot", "annotator", "value"])

    def _slot_alpha(self, units: pd.DataFrame, name: str, *, seed: int, n_boot: int) -> Coefficient:
        item_codes, _ = pd.factorize(units["item"], sort=True)
        unit_codes, index = pd.factorize(pd.MultiIndex.from_arrays([units["item"], units["turn"], units["slot"]]))
        unit_item = np.zeros(len(index), dtype=np.int64)
        unit_item[unit_codes] = item_codes
        n_items = int(item_codes.max()) + 1 if len(item_codes) else 0
        return _units_alpha(name, unit_codes, units["value"].to_numpy(), unit_item, n_items, seed=seed,
                            n_boot=n_boot, unit="turn × slot")

    def _primary(self, frame: pd.DataFrame, schema: dict[str, Any], *, seed: int, n_boot: int) -> Coefficient:
        return self._slot_alpha(self._slot_units(frame), "krippendorff_alpha_slots", seed=seed, n_boot=n_boot)

    def compute(self, frame: pd.DataFrame, schema: dict[str, Any], *, seed: int = co.SEED,
                n_boot: int = co.N_BOOT) -> MeasureResult:
        frame = frame.reset_index(drop=True)
        units = self._slot_units(frame)
        alpha = self._slot_alpha(units, "krippendorff_alpha_slots", seed=seed, n_boot=n_boot)
        per_slot = {}
        for slot, group in units.groupby("slot"):
            coefficient = self._slot_alpha(group, slot, seed=seed, n_boot=0)
            per_slot[str(slot)] = {"alpha": co._clean(coefficient.value), "units": coefficient.units}
        alpha.extra["per_slot"] = per_slot
        states = [[frozenset(state) for state in (p or {}).get("states") or []] for p in frame["payload"]]
        pairs = pair_rows(frame)
        num, den = [], []
        for ra, rb in zip(pairs["row_a"], pairs["row_b"], strict=True):
            a, b = states[ra], states[rb]
            num.append(float(sum(x == y for x, y in zip(a, b, strict=False))))
            den.append(float(max(len(a), len(b))))
        joint = pair_agreement(pairs.assign(num=num, den=den), seed=seed, n_boot=n_boot)
        filled = units[units["value"] != "none"]
        slots = sorted(filled["slot"].unique().tolist())
        counts = filled["slot"].value_counts()
        by_annotator = {int(a): [int((g == slot).sum()) for slot in slots]
                        for a, g in filled["slot"].groupby(filled["annotator"])}
        joint_goal = _pair_coefficient("pairwise_joint_goal", "nominal", joint, "item", ratio_of="user turns")
        return self._result([joint_goal, alpha], "krippendorff_alpha_slots", joint, "joint_goal",
                            "1 − share of user turns with identical states",
                            {"labels": slots, "project": [int(counts.get(s, 0)) for s in slots],
                             "by_annotator": by_annotator})

    def score(self, payload: dict[str, Any], gold: dict[str, Any]) -> float:
        mine, known = payload.get("states") or [], gold.get("states") or []
        turns = max(len(mine), len(known))
        return float(sum(set(a) == set(b) for a, b in zip(mine, known, strict=False)) / turns) if turns else 1.0

    def describe(self, payload: dict[str, Any]) -> str:
        states = payload.get("states") or []
        return " | ".join(", ".join(state) or "—" for state in states)

    def render(self, payload: dict[str, Any], item: dict[str, Any]) -> SafeString:
        turns = [str(t.get("text", "")) for t in item.get("dialogue") or [] if t.get("role") == "user"]
        rows = format_html_join("", '<li><span class="muted">{}</span><br>{}</li>', (
            (turns[t] if t < len(turns) else "", ", ".join(state) or "—")
            for t, state in enumerate(payload.get("states") or [])))
        return format_html('<ol class="states">{}</ol>', rows)


def measure_for(slug: str) -> Measure:
    """The measure the task type names (``TaskType.agreement_measure``)."""
    try:
        return get_task_type(slug).agreement_measure()
    except (PayloadError, MissingLayer) as exc:
        raise LookupError(f"no agreement measure for task type {slug!r}") from exc
