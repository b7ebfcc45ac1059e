"""The baseline check of a written release, and its evidence rule.

The task's baseline is trained on train and scored on dev beside the trivial baseline; a seeded bootstrap
gives the 95 % interval of (baseline − trivial) on the primary metric. The verdict:

- ``passed``: dev has at least ``min_dev`` records, the interval's lower bound is above 0, the baseline
  beats the trivial baseline by ``margin`` points, and the split leakage check is clean;
- ``failed``: splits leak, or dev has at least ``min_dev`` records and the interval's upper bound is at
  most 0 (the baseline is no better than trivial);
- ``inconclusive``: anything else — too few dev records (no verdict either way), or an interval that
  includes 0, or a gain below the margin: the evidence allows no verdict.

Called by the release builder after the files are written (inside its Celery task) and by
``train_baseline``; it reads the folder only, so it also runs on an exported copy.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from django.conf import settings

from annotation.task_types import JSON_ARRAY
from datasets_build.klue_formats import klue_spec
from exports.baselines import BaselineResult, release_files, train_and_evaluate
from exports.baselines.release_files import Reservoir, sampled_release
from exports.metrics import finite_or_zero

#: Points (0-100 scale) by which the baseline must beat the trivial baseline on the primary metric.
DEFAULT_MARGIN = 5.0
DEFAULT_SEED = 13


def min_dev_records() -> int:
    """Dev records below which no verdict is given (``GOLDSET_RELEASE_CHECK_MIN_DEV``)."""
    return int(settings.GOLDSET_RELEASE_CHECK_MIN_DEV)


#: The splits the check reads (a KLUE-style unlabelled test is skipped when scoring).
SPLITS = ("train", "dev", "test")


def check_samples(task_slug: str, formats: list[str], splits: list[str], seed: int = DEFAULT_SEED
                  ) -> dict[str, Reservoir]:
    """Reservoirs the release builder fills as it writes each split, so that :func:`release_check` need not
    read the files back: the same seeded sample ``load_release`` would draw from the files. Empty (the check
    reads the folder) unless the release has KLUE files that are JSON arrays of exactly the written records."""
    if "klue" not in formats or klue_spec(task_slug).layout != JSON_ARRAY:
        return {}
    return {split: Reservoir(release_files.MAX_SPLIT_RECORDS, seed) for split in splits if split in SPLITS}


def _json_ready(metrics: dict[str, float] | None) -> dict[str, float | None] | None:
    """Plain floats, an undefined metric (NaN) as None: the verdict goes into JSON columns and files."""
    if metrics is None:
        return None
    return {name: None if math.isnan(value) else float(value) for name, value in metrics.items()}


def check_result(result: BaselineResult, *, margin: float, leakage_clean: bool, min_dev: int | None = None
                 ) -> dict[str, Any]:
    """The verdict on a baseline run (JSON-ready); an undefined metric (NaN) counts as 0 and is reported None."""
    min_dev = min_dev_records() if min_dev is None else min_dev
    baseline = finite_or_zero(result.metrics[result.primary])
    trivial = finite_or_zero(result.trivial[result.primary])
    interval = result.interval or {}
    low, high = interval.get("low", 0.0), interval.get("high", 0.0)
    beats = baseline - trivial >= margin
    reasons = []
    if not leakage_clean:
        reasons.append("the leakage check is not clean")
    enough = result.n_dev >= min_dev
    if enough and high <= 0:
        reasons.append(f"the baseline is no better than the trivial baseline: the 95 % interval of the "
                       f"difference in {result.primary} is [{low:.2f}, {high:.2f}] points")
    if reasons:
        verdict = "failed"
    else:
        if not enough:
            reasons.append(f"dev has {result.n_dev} records, fewer than the {min_dev} a verdict needs")
        if low <= 0:
            reasons.append(f"the 95 % interval of the difference in {result.primary}, [{low:.2f}, {high:.2f}] "
                           "points, includes 0")
        if not beats:
            reasons.append(f"baseline {result.primary} {baseline:.2f} does not beat the trivial baseline "
                           f"{trivial:.2f} by {margin:g} points")
        verdict = "inconclusive" if reasons else "passed"
    return {
        "verdict": verdict,
        "passed": verdict == "passed",
        "task": result.task,
        "metrics": _json_ready(result.metrics),
        "trivial": _json_ready(result.trivial),
        "seconds": result.seconds,
        "primary": result.primary,
        "margin": margin,
        "improvement": float(baseline - trivial),
        "interval": interval,
        "min_dev": min_dev,
        "leakage_clean": leakage_clean,
        "reasons": reasons,
        "seed": result.seed,
        "n_train": result.n_train,
        "n_dev": result.n_dev,
        "sampled_from": result.sampled_from,
        "test_metrics": _json_ready(result.test_metrics),
        "test_trivial": _json_ready(result.test_trivial),
        "baseline": result.description,
        "trivial_baseline": result.trivial_description,
        "environment": result.environment,
    }


def release_check(release_dir: Path, task_slug: str, *, margin: float = DEFAULT_MARGIN, leakage_clean: bool,
                  seed: int = DEFAULT_SEED, samples: dict[str, Reservoir] | None = None,
                  min_dev: int | None = None) -> dict[str, Any]:
    """Train and score the baseline on ``release_dir`` and return the verdict (a JSON-ready dict); with
    ``samples`` (:func:`check_samples`, filled while the files were written) on those records instead of
    reading the split files.

    Raises ``exports.baselines.ReleaseError`` when the folder has no manifest or no train/dev file.
    """
    source = sampled_release(Path(release_dir), task_slug, samples) if samples else Path(release_dir)
    result = train_and_evaluate(source, task_slug, seed)
    return check_result(result, margin=margin, leakage_clean=leakage_clean, min_dev=min_dev)
