"""A number per item (sts): alpha at the interval and ordinal levels, pairwise Pearson and Spearman."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import coefficients as co
from ..coefficients import Coefficient
from ..lazy import pd
from .base import MIN_SHARED, Categories, Measure, MeasureResult, pair_matrix, pairs_with_overlap, pivot

#: Score bands of the per-band breakdown: [0, 1), [1, 2), [2, 3), [3, 4), [4, 5] on KLUE STS's 0–5 scale (the top
#: band closed, so that 5 is in it); band 3–4 and above is what KLUE's binary label calls similar (score ≥ 3).
SCORE_BANDS = np.array([1.0, 2.0, 3.0, 4.0])
BAND_LABELS = ["0–1", "1–2", "2–3", "3–4", "4–5"]


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

        items, annotators, matrix = pivot(frame, "score", np.nan)
        present = np.isfinite(matrix)
        pairs = pairs_with_overlap(present)
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
        size = counts.shape[1]  # one column even when no item has a score, as value_counts needs
        confusion = co.coincidences(*co.item_rows(counts, None, n_items)).reshape(size, size)
        confusion = confusion[:len(domain), :len(domain)]
        labels = [f"{d:g}" for d in domain]
        by_annotator = {}
        for j, annotator in enumerate(annotators):
            values = matrix[present[:, j], j]
            by_annotator[int(annotator)] = [int((values == d).sum()) for d in domain]
        return MeasureResult(
            coefficients=result, primary="krippendorff_alpha",
            pairs=pair_matrix("pearson_r", annotators, pairs, pearsons),
            confusion={"labels": labels, "matrix": confusion.round(6).tolist()},
            distribution={"labels": labels, "project": counts.sum(axis=0).tolist(), "by_annotator": by_annotator},
            annotator_agreement=agreement,
            item_disagreement=pd.Series(spread, index=items),
            disagreement_name="standard deviation of the scores (points)",
        )

    def categories(self, frame: pd.DataFrame, schema: dict[str, Any]) -> Categories:
        scores = pd.to_numeric(frame["score"], errors="coerce").to_numpy(dtype=np.float64)
        codes = np.where(np.isfinite(scores), np.searchsorted(SCORE_BANDS, scores, side="right"), -1)
        item_codes, item_index = pd.factorize(frame["item"], sort=True)
        return Categories(list(BAND_LABELS), codes.astype(np.int64), item_codes.astype(np.int64), len(item_index),
                          frame["annotator"].to_numpy(), kind="score band")

    def score(self, payload: dict[str, Any], gold: dict[str, Any]) -> float:
        # Within one point of the known score counts as right, as on KLUE's 0–5 scale.
        return float(abs(float(payload.get("score", 0)) - float(gold.get("score", 0))) <= 1.0)

    def item_labels(self, frame: pd.DataFrame) -> pd.Series:
        return pd.to_numeric(frame["score"], errors="coerce").map(lambda s: f"{s:g}")

    def describe(self, payload: dict[str, Any]) -> str:
        score = payload.get("score")
        return f"{round(float(score), 2):g}" if isinstance(score, int | float) else f"{score}"

