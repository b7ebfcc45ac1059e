"""The agreement report of a project: coefficients, exclusions, annotator quality, timeline and plots' data.

:func:`agreement_report` is pure computation over the database (no writes); caching and background
execution live in :mod:`annotation.agreement.services`. The report's own parts (annotator quality, the timeline)
are numpy over :attr:`.data.ProjectData.rows`; the measure gets frames only when an item counts, so a project
whose items have one annotation each (an imported corpus) is reported without pandas (see :mod:`.lazy`).
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

import numpy as np
from django.utils import timezone

from ..models import Annotation, GoldLabel, GoldStatus, Project
from . import coefficients as co
from .assisted import assist_split
from .breakdowns import report_sections
from .coefficients import Coefficient
from .data import ProjectData, complete_items, load, stage_codes
from .gamma import MAX_ITEMS as MAX_GAMMA_ITEMS
from .gamma import rows_gamma
from .lazy import pd
from .measures import Headline, Measure, MeasureResult, measure_for

#: An annotator whose removal raises the headline coefficient by more than this is flagged.
ALPHA_GAIN_THRESHOLD = 0.02
#: An annotator whose median time per item is below this share of the project's median is flagged.
FAST_SHARE = 0.25
#: Below this accuracy on at least MIN_GOLD_CHECKS gold items, an annotator is flagged.
GOLD_ACCURACY_THRESHOLD = 0.6
MIN_GOLD_CHECKS = 5
#: An annotator is flagged as faster than the others or as lowering agreement only after this many items: one or
#: two quick answers are no evidence about a person (docs/agreement.md states the minimum).
MIN_ITEMS_FOR_FLAGS = 10
#: Leave-one-out alpha is computed for at most this many annotators (the most active ones).
MAX_LEAVE_ONE_OUT = 60
TIMELINE_POINTS = 10
TIMELINE_BOOT = 200

Progress = Callable[[int, str], None]


def _no_progress(percent: int, note: str) -> None:
    return None


def agreement_report(project: Project, *, seed: int = co.SEED, n_boot: int = co.N_BOOT,
                     progress: Progress = _no_progress) -> dict[str, Any]:
    """Compute the full report. Keys of the ``agreement --json`` contract come first."""
    started = time.perf_counter()
    measure = measure_for(project.task_type)
    schema = project.label_schema or {}
    progress(5, "reading annotations")
    data = load(project, measure.fields)
    progress(25, "computing coefficients")

    @cache
    def frame() -> pd.DataFrame:
        return measure.prepare(data.frame, schema)

    @cache
    def headlines() -> tuple[Headline, Headline]:
        # decoded once for the timeline, coefficients, leave-one-out and the assisted split (a measure may reuse it
        # in compute); when no item counts none of them asks, and nothing is decoded
        return measure.headlines(measure.prepare(data.all_rows, schema), frame(), data.counted, schema)

    def everything(rows: np.ndarray, **options: Any) -> Coefficient:
        return headlines()[0](rows, **options)

    def headline(rows: np.ndarray, **options: Any) -> Coefficient:
        return headlines()[1](rows, **options)

    result = None if data.items_counted else measure.empty_result(schema)
    if result is None:
        headlines()  # before compute, which may reuse what they decoded
        result = measure.compute(frame(), schema, seed=seed, n_boot=n_boot)
    progress(60, "scoring annotators")
    primary = next((c for c in result.coefficients if c.name == result.primary), None)
    quality = annotator_quality(data, measure, result, primary.value if primary else None, headline)
    progress(80, "building the timeline")
    timeline = _timeline(data, everything, seed)
    progress(90, "splitting assisted and unassisted annotations")
    assist = assist_split(data, measure, headline, seed)
    progress(95, "breaking agreement down by label, pair and guideline version")
    counted = data.items_counted > 0
    breakdowns = report_sections(
        measure.categories(frame(), schema) if counted else None, data.rows["guideline_version"][data.counted],
        data.rows["item"][data.counted], headline if counted else None, seed=seed, n_boot=n_boot)
    annotator_ids = np.unique(data.rows["annotator"][data.counted]).tolist()
    report = {
        "project": project.slug,
        "task_type": project.task_type,
        "annotators": len(annotator_ids),
        "items_counted": data.items_counted,
        "items_excluded": data.excluded,
        "coefficients": [c.as_dict() for c in result.coefficients],
        "items_total": data.items_total,
        "annotations_counted": int(data.counted.sum()),
        "primary": {"name": result.primary, "level": primary.level if primary else None,
                    "value": primary.as_dict()["value"] if primary else None},
        "bootstrap": {"resamples": n_boot, "seed": seed, "resampled": "items", "interval": "percentile 95%"},
        "annotator_names": {str(a): data.annotators.get(a, str(a)) for a in sorted(data.annotators)},
        "annotator_quality": quality,
        "pairs": result.pairs,
        "confusion": result.confusion,
        "distribution": result.distribution,
        "disagreement": _disagreement_summary(result),
        "timeline": timeline,
        "assist": assist,
        **breakdowns,
        "computed_at": timezone.now().isoformat(),
        "seconds": round(time.perf_counter() - started, 3),
    }
    progress(100, "done")
    return report


def span_gamma(project: Project, *, max_items: int = MAX_GAMMA_ITEMS, seed: int = co.SEED) -> dict[str, Any]:
    """Mathet et al.'s γ of the project's spans (:mod:`.gamma`) on the counted items, at most ``max_items`` of them;
    ``LookupError`` for a task whose answers are not spans."""
    measure = measure_for(project.task_type)
    schema = project.label_schema or {}
    rows = measure.span_rows(measure.prepare(load(project, measure.fields).frame, schema), schema)
    if rows is None:
        raise LookupError(f"gamma compares spans; {project.task_type} answers are not spans")
    return rows_gamma(rows, seed=seed, max_items=max_items)


def _disagreement_summary(result: MeasureResult) -> dict[str, Any]:
    scores = result.item_disagreement
    if scores is not None:
        scores = scores.dropna()
    if scores is None or scores.empty:
        return {"name": result.disagreement_name, "items": 0}
    # Differences below 1e-9 are floating-point noise (0.05 against 0.05000000000000002): ten bins across
    # them would be narrower than a float can tell apart.
    values = np.round(scores.to_numpy(dtype=np.float64), 9)
    histogram, edges = np.histogram(values, bins=10)
    return {"name": result.disagreement_name, "items": len(scores), "mean": float(values.mean()),
            "unanimous": int((values <= 1e-12).sum()), "histogram": histogram.tolist(),
            "edges": [float(e) for e in edges]}


def _descending(values: np.ndarray) -> np.ndarray:
    """The order ``pandas.Series.sort_values(ascending=False)`` gives (its quicksort of the reversed values, ties
    included), so that the annotators keep the order, and the leave-one-out its annotators, they always had."""
    backwards = np.arange(len(values))[::-1]
    return backwards[values[::-1].argsort(kind="quicksort")][::-1]


def _medians(groups: np.ndarray, values: np.ndarray, n_groups: int) -> list[float]:
    """Per group (codes 0..n_groups-1), the median of its values that are not NaN (NaN when none is), as pandas'
    grouped median computes it: the middle value, or the mean of the two middle ones."""
    timed = ~np.isnan(values)
    order = np.argsort(groups[timed], kind="stable")
    ordered = values[timed][order]
    bounds = np.searchsorted(groups[timed][order], np.arange(n_groups + 1))
    medians = []
    for start, end in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        n = end - start
        if not n:
            medians.append(math.nan)
            continue
        part = np.partition(ordered[start:end], [n // 2 - 1, n // 2] if n % 2 == 0 else [n // 2])
        medians.append(float(part[n // 2]) if n % 2 else float((part[n // 2 - 1] + part[n // 2]) / 2))
    return medians


def annotator_quality(data: ProjectData, measure: Measure, result: MeasureResult, alpha: float | None,
                      headline: Headline) -> list[dict[str, Any]]:
    """Per annotator: volume, speed, agreement with the others, the project's alpha without them,
    label distribution against the project's, gold-item accuracy, and flags."""
    annotators = data.rows["annotator"]
    if not len(annotators):
        return []
    seconds = data.rows["seconds"]
    ids, codes, done = np.unique(annotators, return_inverse=True, return_counts=True)
    median_seconds = _medians(codes, seconds, len(ids))
    with warnings.catch_warnings():  # no annotation timed: NaN, as pandas' median gives
        warnings.simplefilter("ignore", RuntimeWarning)
        project_median = float(np.nanmedian(seconds))
    gold = _gold_scores(data, measure)
    order = _descending(done)
    leave_one_out = set(ids[order[:MAX_LEAVE_ONE_OUT]].tolist())
    frame_annotators = annotators[data.counted]
    distribution = result.distribution or {}
    project_dist = np.asarray(distribution.get("project") or [], dtype=np.float64)
    out = []
    for annotator, n, median in zip(ids[order].tolist(), done[order].tolist(),
                                    [median_seconds[i] for i in order], strict=True):
        entry: dict[str, Any] = {
            "annotator": annotator, "username": data.annotators.get(annotator, str(annotator)), "items_done": n,
            "median_seconds": _float(median),
            **{k: v for k, v in (result.annotator_agreement.get(annotator) or {"agreement": None}).items()},
        }
        if annotator in leave_one_out and alpha is not None:
            without = headline(frame_annotators != annotator).value
            entry["alpha_without"] = without
            entry["alpha_change_if_removed"] = None if without is None else without - alpha
        mine = np.asarray((distribution.get("by_annotator") or {}).get(annotator) or [], dtype=np.float64)
        if mine.sum() and project_dist.sum():
            # Total variation distance: half the L1 distance between the two label distributions.
            entry["label_distribution"] = mine.astype(int).tolist()
            entry["distribution_distance"] = float(np.abs(mine / mine.sum() - project_dist / project_dist.sum()).sum()
                                                   / 2)
        checks = gold.get(annotator)
        if checks:
            entry["gold_checks"] = {"items": len(checks), "accuracy": float(np.mean(checks))}
        flags = []
        enough = n >= MIN_ITEMS_FOR_FLAGS
        if enough and (entry.get("alpha_change_if_removed") or 0) > ALPHA_GAIN_THRESHOLD:
            flags.append("removal_raises_alpha")
        if (enough and entry["median_seconds"] is not None and project_median and not math.isnan(project_median)
                and entry["median_seconds"] < FAST_SHARE * project_median):
            flags.append("too_fast")
        if checks and len(checks) >= MIN_GOLD_CHECKS and np.mean(checks) < GOLD_ACCURACY_THRESHOLD:
            flags.append("low_gold_accuracy")
        entry["flags"] = flags
        out.append(entry)
    return out


def _float(value: Any) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def _gold_scores(data: ProjectData, measure: Measure) -> dict[int, list[float]]:
    """Each annotator's scores on items with a known answer (gold / attention items)."""
    known = dict(GoldLabel.objects.filter(item__project=data.project, status=GoldStatus.KNOWN)
                 .values_list("item_id", "payload"))
    if not known:
        return {}
    scores: dict[int, list[float]] = {}
    for item_id, annotator_id, payload in Annotation.objects.filter(item_id__in=known).values_list(
            "item_id", "annotator_id", "payload"):
        if known[item_id] is not None:
            scores.setdefault(annotator_id, []).append(measure.score(payload, known[item_id]))
    return scores


def _day_ends(times: np.ndarray) -> np.ndarray:
    """How many of the (sorted) times fall on or before each local day that has any, in the current time zone: the
    groups of pandas' ``tz_convert(zone).normalize()``, from the zone's UTC offsets (looked up once a day of the
    span, and to the second around a change: zones change their offset at most once a day)."""
    zone = timezone.get_current_timezone()

    def offset(second: int) -> int:
        return int(datetime.fromtimestamp(second, zone).utcoffset().total_seconds())

    seconds = times // 1_000_000_000
    changes, offsets = [int(seconds[0])], [offset(int(seconds[0]))]
    for day in range(int(seconds[0]) + 86_400, int(seconds[-1]) + 86_400, 86_400):
        if offset(day) != offsets[-1]:
            before, after = day - 86_400, day  # the offset changes in (before, after]
            while after - before > 1:
                middle = (before + after) // 2
                before, after = (middle, after) if offset(middle) == offsets[-1] else (before, middle)
            changes.append(after)
            offsets.append(offset(after))
    local = seconds + np.asarray(offsets)[np.searchsorted(np.asarray(changes), seconds, side="right") - 1]
    return np.cumsum(np.unique(local // 86_400, return_counts=True)[1])


def _isoformat(nanoseconds: int) -> str:
    """A UTC time in nanoseconds since 1970 as ``pandas.Timestamp.isoformat`` writes it: microseconds when there
    are any, and nanoseconds after them when there are any."""
    seconds, rest = divmod(nanoseconds, 1_000_000_000)
    micro, nano = divmod(rest, 1000)
    text = (datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=seconds, microseconds=micro)).isoformat()
    if nano:
        text = text[:-6] + (f"{nano:03d}" if micro else f".{nano:09d}") + text[-6:]
    return text


def _timeline(data: ProjectData, headline: Headline, seed: int) -> list[dict[str, Any]]:
    """The headline coefficient (with its interval) and progress at checkpoints: per day when the work spans
    days, else every so many annotations (at least 1,000). ``headline``: that of ``data.all_rows``."""
    order = np.argsort(data.rows["created_at"], kind="stable")
    if not len(order):
        return []
    times = data.rows["created_at"][order]
    if times[-1] - times[0] >= 2 * 86_400 * 1_000_000_000:
        ends = _day_ends(times)
        unit = "day"
    else:
        # every 1,000 annotations (or a multiple, for at most TIMELINE_POINTS points); small projects get
        # TIMELINE_POINTS evenly spaced points instead of a single one
        step = (math.ceil(len(order) / TIMELINE_POINTS / 1000) * 1000 if len(order) >= 2000
                else max(1, math.ceil(len(order) / TIMELINE_POINTS)))
        ends = np.append(np.arange(step, len(order), step), len(order))
        unit = "annotations"
    if len(ends) > TIMELINE_POINTS:
        ends = ends[np.linspace(0, len(ends) - 1, TIMELINE_POINTS).round().astype(int)]
    project = data.project
    item_index, item_codes = np.unique(data.rows["item"][order], return_inverse=True)
    stages = stage_codes(project, data.rows["stage"][order])
    position = np.arange(len(order))
    points = []
    for end in ends:
        per_item = np.bincount(item_codes[:end], minlength=len(item_index))
        counted = (position < end) & (per_item >= 2)[item_codes]
        in_rows = np.empty_like(counted)  # the mask over data.rows, whose order the headline has
        in_rows[order] = counted
        coefficient = headline(in_rows, seed=seed, n_boot=TIMELINE_BOOT) if counted.any() else None
        points.append({
            "at": _isoformat(int(times[end - 1])), "unit": unit, "annotations": int(end),
            "items_with_2": int((per_item >= 2).sum()),
            "items_complete": int(complete_items(project, item_codes[:end], stages[:end], len(item_index),
                                                 item_index).sum()),
            "value": coefficient.as_dict()["value"] if coefficient else None,
            "ci95": coefficient.as_dict()["ci95"] if coefficient else [None, None],
        })
    return points
