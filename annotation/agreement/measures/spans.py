"""Character spans (ner): alpha over character-level BIO tags and pairwise entity F1, the frame's entities
decoded once into arrays (:class:`Spans`) that the timeline and leave-one-out take subsets of."""

from __future__ import annotations

import warnings
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import coefficients as co
from ..coefficients import Coefficient
from ..lazy import pd
from ..unitizing import SpanRows, rows_unitizing_alpha, unitizing_coefficient
from .base import MAX_BOOT_DIMS, MIN_SHARED, Headline, MeasureResult, labels_in_order, nanmean
from .pairwise import StructuredMeasure, pair_agreement, pair_coefficient, pair_rows, ratio


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


class SpanMeasure(StructuredMeasure):
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
        types = labels_in_order(pd.Series(sorted(set(names)), dtype=object), schema.get("labels"))
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
        return [nanmean([ratio(sums[0][p, t], sums[1][p, t]) for p in kept]) for t in range(num.shape[1])]

    @staticmethod
    def _type_intervals(pairs: pd.DataFrame, num: np.ndarray, den: np.ndarray, *, seed: int, n_boot: int
                        ) -> list[tuple[float | None, float | None]]:
        """Per type, the item-bootstrap interval of :meth:`_type_means`: every type from the same resamples, one
        draw for all (per item: each kept pair's numerator and denominator per type, and whether it is there)."""
        n_types = num.shape[1]
        if pairs.empty or not n_boot:
            return [(None, None)] * n_types
        shared = pairs.groupby(["a", "b"])["item"].nunique()
        kept = shared[shared >= MIN_SHARED].index
        codes = kept.get_indexer(pd.MultiIndex.from_arrays([pairs["a"], pairs["b"]])) if len(kept) else None
        width = len(kept) * (2 * n_types + 1)
        if codes is None or width > MAX_BOOT_DIMS:
            return [(None, None)] * n_types
        rows = codes >= 0
        item_codes, _ = pd.factorize(pairs["item"][rows])
        n_items, base = int(item_codes.max()) + 1, item_codes.astype(np.int64) * width
        cells = base[:, None] + codes[rows][:, None] * (2 * n_types) + np.arange(n_types)[None, :]
        size = n_items * width
        per_item = (np.bincount(cells.ravel(), weights=num[rows].ravel(), minlength=size)
                    + np.bincount((cells + n_types).ravel(), weights=den[rows].ravel(), minlength=size)
                    + np.bincount(base + len(kept) * 2 * n_types + codes[rows], minlength=size)).reshape(n_items, width)
        sums = co.resampled_sums(per_item, seed=seed, n_boot=n_boot)
        if sums is None:
            return [(None, None)] * n_types
        parts = sums[:, :len(kept) * 2 * n_types].reshape(len(sums), len(kept), 2, n_types)
        with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # resamples without a kept pair give NaN, dropped
            ratios = np.where(parts[:, :, 1] > 0, parts[:, :, 0] / parts[:, :, 1], 1.0)
            ratios = np.where(sums[:, len(kept) * 2 * n_types:, None] > 0, ratios, np.nan)
            return co.column_percentiles(np.nanmean(ratios, axis=1))

    @staticmethod
    def _span_rows(spans: Spans) -> SpanRows:
        return SpanRows(spans.row_item, spans.n_items, np.bincount(spans.unit_item, minlength=spans.n_items),
                        spans.entity_row, spans.entity_start, spans.entity_end,
                        np.asarray(spans.types, dtype=object)[spans.entity_type])

    def span_rows(self, frame: pd.DataFrame, schema: dict[str, Any]) -> SpanRows:
        return self._span_rows(self.decode(frame, schema))

    @classmethod
    def _unitizing(cls, spans: Spans, *, seed: int, n_boot: int) -> Coefficient:
        """Krippendorff's αu over the entities (:mod:`..unitizing`), per type and overall."""
        result, m, items, left_out = rows_unitizing_alpha(cls._span_rows(spans), seed=seed, n_boot=n_boot)
        return unitizing_coefficient(result, m, items, left_out, "per_type")

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
        intervals = self._type_intervals(pairs, 2.0 * tp, marked.astype(np.float64), seed=seed, n_boot=n_boot)
        annotator_codes, annotators = pd.factorize(frame["annotator"], sort=True)
        by_type = np.bincount(annotator_codes[spans.entity_row] * len(types) + spans.entity_type,
                              minlength=len(annotators) * len(types)).reshape(len(annotators), len(types))
        by_annotator = {int(a): by_type[j].tolist() for j, a in enumerate(annotators)}
        f1 = pair_coefficient("pairwise_entity_f1", "nominal", overall, "item",
                               per_type={t: co._clean(v) for t, v in per_type.items()},
                               per_type_ci95={t: [co._clean(intervals[k][0]), co._clean(intervals[k][1])]
                                              for k, t in enumerate(types) if counts[k]},
                               match="exact span and type")
        unitizing = self._unitizing(spans, seed=seed, n_boot=n_boot)
        return self._result([alpha, f1, unitizing], "krippendorff_alpha", overall, "entity_f1",
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

    def spans(self, payload: dict[str, Any] | None) -> list[tuple[int, int, str]]:
        return sorted({(int(e["start"]), int(e["end"]), str(e["type"])) for e in (payload or {}).get("entities") or []})

    def answer_keys(self, frame: pd.DataFrame) -> pd.Series:
        return frame["payload"].map(lambda p: repr(self.spans(p)))

