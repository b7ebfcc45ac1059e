"""The agreement report of a project: coefficients, exclusions, annotator quality, timeline and plots' data.

:func:`agreement_report` is pure computation over the database (no writes); caching and background
execution live in :mod:`annotation.agreement.services`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from django.utils import timezone

from ..models import Annotation, GoldLabel, GoldStatus, Project
from . import coefficients as co
from .assisted import assist_split
from .data import ProjectData, complete_items, load
from .measures import Headline, Measure, MeasureResult, measure_for

#: An annotator whose removal raises the headline coefficient by more than this is flagged.
ALPHA_GAIN_THRESHOLD = 0.02
#: An annotator whose median time per item is below this share of the project's median is flagged.
FAST_SHARE = 0.25
#: Below this accuracy on at least MIN_GOLD_CHECKS gold items, an annotator is flagged.
GOLD_ACCURACY_THRESHOLD = 0.6
MIN_GOLD_CHECKS = 5
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
    data.frame = measure.prepare(data.frame, schema)
    data.all_rows = measure.prepare(data.all_rows, schema)
    progress(25, "computing coefficients")
    # decoded once for the timeline, coefficients, leave-one-out and the assisted split (a measure may reuse it in
    # compute)
    everything, headline = measure.headlines(data.all_rows, data.frame, data.counted, schema)
    result = measure.compute(data.frame, schema, seed=seed, n_boot=n_boot)
    progress(60, "scoring annotators")
    primary = next((c for c in result.coefficients if c.name == result.primary), None)
    quality = annotator_quality(data, measure, result, primary.value if primary else None, headline)
    progress(80, "building the timeline")
    timeline = _timeline(data, everything, seed)
    progress(90, "splitting assisted and unassisted annotations")
    assist = assist_split(data, measure, headline, seed)
    annotator_ids = sorted(int(a) for a in data.frame["annotator"].unique())
    report = {
        "project": project.slug,
        "task_type": project.task_type,
        "annotators": len(annotator_ids),
        "items_counted": data.items_counted,
        "items_excluded": data.excluded,
        "coefficients": [c.as_dict() for c in result.coefficients],
        "items_total": data.items_total,
        "annotations_counted": len(data.frame),
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
        "computed_at": timezone.now().isoformat(),
        "seconds": round(time.perf_counter() - started, 3),
    }
    progress(100, "done")
    return report


def _disagreement_summary(result: MeasureResult) -> dict[str, Any]:
    scores = result.item_disagreement.dropna()
    if scores.empty:
        return {"name": result.disagreement_name, "items": 0}
    histogram, edges = np.histogram(scores.to_numpy(), bins=10)
    return {"name": result.disagreement_name, "items": len(scores), "mean": float(scores.mean()),
            "unanimous": int((scores <= 1e-12).sum()), "histogram": histogram.tolist(),
            "edges": [float(e) for e in edges]}


def annotator_quality(data: ProjectData, measure: Measure, result: MeasureResult, alpha: float | None,
                      headline: Headline) -> list[dict[str, Any]]:
    """Per annotator: volume, speed, agreement with the others, the project's alpha without them,
    label distribution against the project's, gold-item accuracy, and flags."""
    rows = data.all_rows
    if rows.empty:
        return []
    done = rows.groupby("annotator").size()
    median_seconds = rows.groupby("annotator")["seconds"].median()
    project_median = rows["seconds"].median()
    gold = _gold_scores(data, measure)
    leave_one_out = set(done.sort_values(ascending=False).index[:MAX_LEAVE_ONE_OUT].tolist())
    frame_annotators = data.frame["annotator"].to_numpy()
    distribution = result.distribution or {}
    project_dist = np.asarray(distribution.get("project") or [], dtype=np.float64)
    out = []
    for annotator, n in done.sort_values(ascending=False).items():
        annotator = int(annotator)
        entry: dict[str, Any] = {
            "annotator": annotator, "username": data.annotators.get(annotator, str(annotator)), "items_done": int(n),
            "median_seconds": _float(median_seconds.get(annotator)),
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
        if (entry.get("alpha_change_if_removed") or 0) > ALPHA_GAIN_THRESHOLD:
            flags.append("removal_raises_alpha")
        if (entry["median_seconds"] is not None and project_median and not math.isnan(project_median)
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


def _timeline(data: ProjectData, headline: Headline, seed: int) -> list[dict[str, Any]]:
    """The headline coefficient (with its interval) and progress at checkpoints: per day when the work spans
    days, else every so many annotations (at least 1,000). ``headline``: that of ``data.all_rows``."""
    rows = data.all_rows.sort_values("created_at", kind="stable")
    order = rows.index.to_numpy()  # all_rows has a fresh index
    if rows.empty:
        return []
    times = rows["created_at"]
    if (times.iloc[-1] - times.iloc[0]) >= pd.Timedelta(days=2):
        days = times.dt.tz_convert(timezone.get_current_timezone()).dt.normalize()
        ends = rows.groupby(days.to_numpy()).size().cumsum().to_numpy()
        unit = "day"
    else:
        # every 1,000 annotations (or a multiple, for at most TIMELINE_POINTS points); small projects get
        # TIMELINE_POINTS evenly spaced points instead of a single one
        step = (math.ceil(len(rows) / TIMELINE_POINTS / 1000) * 1000 if len(rows) >= 2000
                else max(1, math.ceil(len(rows) / TIMELINE_POINTS)))
        ends = np.append(np.arange(step, len(rows), step), len(rows))
        unit = "annotations"
    if len(ends) > TIMELINE_POINTS:
        ends = ends[np.linspace(0, len(ends) - 1, TIMELINE_POINTS).round().astype(int)]
    project = data.project
    item_codes, item_index = pd.factorize(rows["item"])
    stages = rows["stage"].to_numpy()
    position = np.arange(len(rows))
    points = []
    for end in ends:
        per_item = np.bincount(item_codes[:end], minlength=len(item_index))
        counted = (position < end) & (per_item >= 2)[item_codes]
        in_rows = np.empty_like(counted)  # the mask over data.all_rows, whose order the headline has
        in_rows[order] = counted
        coefficient = headline(in_rows, seed=seed, n_boot=TIMELINE_BOOT) if counted.any() else None
        points.append({
            "at": times.iloc[end - 1].isoformat(), "unit": unit, "annotations": int(end),
            "items_with_2": int((per_item >= 2).sum()),
            "items_complete": int(complete_items(project, item_codes[:end], stages[:end], len(item_index)).sum()),
            "value": coefficient.as_dict()["value"] if coefficient else None,
            "ci95": coefficient.as_dict()["ci95"] if coefficient else [None, None],
        })
    return points
