"""One label per item (tc, nli, re and any task naming :class:`CategoricalMeasure`): Krippendorff's alpha
(nominal), Fleiss' kappa and pairwise Cohen's kappa."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import coefficients as co
from ..coefficients import Coefficient
from ..lazy import pd
from .base import (
    MAX_BOOT_DIMS,
    MAX_BOOT_DISTINCT,
    MIN_SHARED,
    Categories,
    Headline,
    Measure,
    MeasureResult,
    labels_in_order,
    nanmean,
    pair_matrix,
    pairs_with_overlap,
    pivot,
)

NOT_COMPLETE = "no item is complete yet (k annotations in every stage)"
DISAGREEMENT_NAME = "entropy of the labels (0 = unanimous, 1 = uniform)"


class CategoricalMeasure(Measure):
    """One label per item: Krippendorff's alpha (nominal), Fleiss' kappa, pairwise Cohen's kappa."""

    fields = {"label": "payload.label"}
    primary_name = "krippendorff_alpha"
    primary_level = "nominal"

    def prepare(self, frame: pd.DataFrame, schema: dict[str, Any]) -> pd.DataFrame:
        labels = labels_in_order(frame["label"], schema.get("labels"))
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

    def categories(self, frame: pd.DataFrame, schema: dict[str, Any]) -> Categories:
        labels, codes, item_codes, n_items = self._codes(frame, schema)
        return Categories(labels, codes, item_codes.astype(np.int64), n_items, frame["annotator"].to_numpy())

    def empty_result(self, schema: dict[str, Any]) -> MeasureResult:
        labels = [str(label) for label in schema.get("labels") or []]  # labels_in_order of no rows
        v = len(labels)
        return MeasureResult(
            coefficients=[
                Coefficient("krippendorff_alpha", "nominal", None, units=0),
                Coefficient("fleiss_kappa", "nominal", None, units=0, extra={"skipped": NOT_COMPLETE}),
                Coefficient("pairwise_cohen_kappa", "nominal", None, units=0,
                            extra={"pairs": 0, "min_shared_items": MIN_SHARED}),
            ],
            primary="krippendorff_alpha", pairs=pair_matrix("cohen_kappa", np.zeros(0, dtype=np.int64), [], []),
            confusion={"labels": labels, "matrix": [[0.0] * v for _ in range(v)]},
            distribution={"labels": labels, "project": [0] * v, "by_annotator": {}},
            disagreement_name=DISAGREEMENT_NAME,
        )

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
                  else NOT_COMPLETE)
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
        items, annotators, matrix = pivot(frame, "code", -1)
        matrix = matrix.astype(np.int64)
        present = matrix >= 0
        pairs = pairs_with_overlap(present)
        kappas = []
        for i, j in pairs:
            both = present[:, i] & present[:, j]
            kappas.append(co.cohen_kappa(matrix[both, i], matrix[both, j], v))
        cohen_ci = self._cohen_ci(matrix, present, pairs, v, seed, n_boot)
        cohen_extra: dict[str, Any] = {"pairs": len(pairs), "min_shared_items": MIN_SHARED}
        if pairs and n_boot and cohen_ci == (None, None):
            cohen_extra["ci_skipped"] = "too many distinct label combinations across pairs for the bootstrap"
        result.append(Coefficient("pairwise_cohen_kappa", "nominal", nanmean(kappas), cohen_ci, units=n_items,
                                  extra=cohen_extra))

        # Coincidences between annotators: o[c, k] counts pairs of values (c, k) within items.
        confusion = co.coincidences(*co.item_rows(counts, None, n_items)).reshape(v, v)
        dist_all = counts.sum(axis=0)
        by_annotator = {
            int(a): np.bincount(matrix[present[:, j], j], minlength=v).tolist() for j, a in enumerate(annotators)
        }
        return MeasureResult(
            coefficients=result, primary="krippendorff_alpha",
            pairs=pair_matrix("cohen_kappa", annotators, pairs, kappas),
            confusion={"labels": labels, "matrix": confusion.round(6).tolist()},
            distribution={"labels": labels, "project": dist_all.tolist(), "by_annotator": by_annotator},
            annotator_agreement=self._leave_one_out(counts, matrix, present, annotators),
            item_disagreement=pd.Series(_normalised_entropy(counts), index=items),
            disagreement_name=DISAGREEMENT_NAME,
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

