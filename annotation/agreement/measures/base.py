"""What every measure is: the :class:`Measure` interface, its :class:`MeasureResult`, and the helpers the
categorical and score measures share (pivoting the frame, pairs with enough shared items)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .. import coefficients as co
from ..coefficients import Coefficient
from ..lazy import pd
from ..unitizing import SpanRows

#: Pairs of annotators need this many shared items before their pairwise coefficient is reported.
MIN_SHARED = 10
#: Above this many per-item dimensions, pairwise bootstrap intervals are skipped (too many pairs).
MAX_BOOT_DIMS = 4096
#: Pairwise kappa's bootstrap draws over the distinct combinations of all pairs' label cells; beyond this many
#: (large projects with many labels) it would cost more than the whole report, and the interval is left out.
MAX_BOOT_DISTINCT = 2000


@dataclass
class Categories:
    """Each counted annotation as one category, for the per-label and per-pair breakdowns: the label of a
    categorical task, the score band of a score task."""

    labels: list[str]
    #: Per row of the frame: the label's position in ``labels`` (-1: none), the item's code (0..n_items-1) and the
    #: annotator's id.
    codes: np.ndarray
    item_codes: np.ndarray
    n_items: int
    annotators: np.ndarray
    #: What a category is ("label" or "score band"), for the report's readers.
    kind: str = "label"


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
    #: item id -> disagreement (0 = everyone agrees; larger = more disagreement); None: no item counted
    #: (:meth:`Measure.empty_result`).
    item_disagreement: pd.Series | None = None
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

    def empty_result(self, schema: dict[str, Any]) -> MeasureResult | None:
        """What :meth:`compute` gives when no item counts, without a frame (so without pandas: a project whose items
        have one annotation each is reported without importing it); ``None`` where the measure has no such
        shortcut, and the report computes on the empty frame."""
        return None

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

    def categories(self, frame: pd.DataFrame, schema: dict[str, Any]) -> Categories | None:
        """The annotations as categories (per-label and per-pair breakdowns); ``None`` where answers are structures
        with figures of their own (per entity type, relation, slot)."""
        return None

    def score(self, payload: dict[str, Any], gold: dict[str, Any]) -> float:
        """How well one annotation matches a known answer, 0..1 (gold / attention items)."""
        raise NotImplementedError

    def item_labels(self, frame: pd.DataFrame) -> pd.Series:
        """Labels per row for the per-item label filter (empty where labels do not apply)."""
        return pd.Series([""] * len(frame), index=frame.index, dtype=object)

    def describe(self, payload: dict[str, Any]) -> str:
        """A one-line human summary of a payload (per-item lists)."""
        return ", ".join(f"{k}={v}" for k, v in payload.items())

    def spans(self, payload: dict[str, Any] | None) -> list[tuple[int, int, str]] | None:
        """The spans an answer marks, (start, end, type), for the disagreement list's kinds of span disagreement
        (:mod:`..slips`); ``None`` where answers are not spans."""
        return None

    def span_rows(self, frame: pd.DataFrame, schema: dict[str, Any]) -> SpanRows | None:
        """The prepared frame's spans for the span coefficients (αu, γ); ``None`` where answers are not spans."""
        return None

    def answer_keys(self, frame: pd.DataFrame) -> pd.Series:
        """Per row, a string equal for two rows exactly when they give the same answer (the disagreement list's
        pair filter keeps the items a pair answered differently)."""
        keys = pd.Series("", index=frame.index, dtype=object)
        for column in (c for c in self.fields if c in frame):
            values = frame[column]
            text = (values.map(lambda v: json.dumps(v, sort_keys=True, default=str)) if values.dtype == object
                    else values.astype(str))
            keys = keys + "\x1f" + text
        return keys


# -- helpers ----------------------------------------------------------------------------------------------


def pivot(frame: pd.DataFrame, column: str, fill: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sorted items, sorted annotators, items × annotators matrix) with ``fill`` where an annotator did not
    label an item (a numpy scatter: ``DataFrame.pivot`` is far slower on a large project, docs/performance.md)."""
    item_codes, items = pd.factorize(frame["item"], sort=True)
    annotator_codes, annotators = pd.factorize(frame["annotator"], sort=True)
    matrix = np.full((len(items), len(annotators)), fill, dtype=np.float64)
    values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    matrix[item_codes, annotator_codes] = values
    return np.asarray(items), np.asarray(annotators), matrix


def pairs_with_overlap(present: np.ndarray) -> list[tuple[int, int]]:
    shared = present.T.astype(np.int64) @ present.astype(np.int64)
    a, b = np.nonzero(np.triu(shared >= MIN_SHARED, k=1))
    return list(zip(a.tolist(), b.tolist(), strict=True))


def pair_matrix(metric: str, annotators: np.ndarray, pairs: list[tuple[int, int]], values: list[float | None]
                 ) -> dict[str, Any]:
    n = len(annotators)
    matrix: list[list[float | None]] = [[None] * n for _ in range(n)]
    for (i, j), value in zip(pairs, values, strict=True):
        clean = co._clean(value)
        matrix[i][j] = matrix[j][i] = clean
    for i in range(n):
        matrix[i][i] = 1.0
    return {"metric": metric, "annotators": [int(a) for a in annotators], "values": matrix}


def nanmean(values: list[float | None]) -> float | None:
    clean = [v for v in values if v is not None and np.isfinite(v)]
    return float(np.mean(clean)) if clean else None


def labels_in_order(observed: pd.Series, schema_labels: list[str] | None) -> list[str]:
    seen = sorted({str(v) for v in observed.dropna().unique()})
    ordered = [str(label) for label in (schema_labels or [])]
    return ordered + [label for label in seen if label not in ordered]

