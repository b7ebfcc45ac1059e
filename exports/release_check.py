"""The baseline check of a written release: it passes only if the task's baseline beats the trivial
baseline on dev by ``margin`` points of the primary metric and the split leakage check is clean.

Called by the release builder after the files are written (inside its Celery task) and by
``train_baseline``; it reads the folder only, so it also runs on an exported copy.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from exports.baselines import BaselineResult, release_files, train_and_evaluate
from exports.baselines.release_files import Reservoir, sampled_release
from exports.metrics import finite_or_zero
from exports.writers.klue import JSON_ARRAY_TASKS

#: Points (0-100 scale) by which the baseline must beat the trivial baseline on the primary metric.
DEFAULT_MARGIN = 5.0
DEFAULT_SEED = 13
#: The splits the check reads (a KLUE-style unlabelled test is skipped when scoring).
SPLITS = ("train", "dev", "test")


def check_samples(task_slug: str, formats: list[str], splits: list[str], seed: int = DEFAULT_SEED
                  ) -> dict[str, Reservoir]:
    """Reservoirs the release builder fills as it writes each split, so that :func:`release_check` need not
    read the files back: the same seeded sample ``load_release`` would draw from the files. Empty (the check
    reads the folder) unless the release has KLUE files that are JSON arrays of exactly the written records."""
    if "klue" not in formats or task_slug not in JSON_ARRAY_TASKS:
        return {}
    return {split: Reservoir(release_files.MAX_SPLIT_RECORDS, seed) for split in splits if split in SPLITS}


def _json_ready(metrics: dict[str, float] | None) -> dict[str, float | None] | None:
    """Plain floats, an undefined metric (NaN) as None: the verdict goes into JSON columns and files."""
    if metrics is None:
        return None
    return {name: None if math.isnan(value) else float(value) for name, value in metrics.items()}


def check_result(result: BaselineResult, *, margin: float, leakage_clean: bool) -> dict[str, Any]:
    """The verdict on a baseline run (JSON-ready); an undefined metric (NaN) counts as 0 and is reported None."""
    baseline = finite_or_zero(result.metrics[result.primary])
    trivial = finite_or_zero(result.trivial[result.primary])
    beats = baseline - trivial >= margin
    reasons = []
    if not beats:
        reasons.append(f"baseline {result.primary} {baseline:.2f} does not beat the trivial baseline "
                       f"{trivial:.2f} by {margin:g} points")
    if not leakage_clean:
        reasons.append("the leakage check is not clean")
    return {
        "passed": beats and leakage_clean,
        "task": result.task,
        "metrics": _json_ready(result.metrics),
        "trivial": _json_ready(result.trivial),
        "seconds": result.seconds,
        "primary": result.primary,
        "margin": margin,
        "improvement": float(baseline - trivial),
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
                  seed: int = DEFAULT_SEED, samples: dict[str, Reservoir] | None = None) -> dict[str, Any]:
    """Train and score the baseline on ``release_dir`` and return the verdict (a JSON-ready dict); with
    ``samples`` (:func:`check_samples`, filled while the files were written) on those records instead of
    reading the split files.

    Raises ``exports.baselines.ReleaseError`` when the folder has no manifest or no train/dev file.
    """
    source = sampled_release(Path(release_dir), task_slug, samples) if samples else Path(release_dir)
    result = train_and_evaluate(source, task_slug, seed)
    return check_result(result, margin=margin, leakage_clean=leakage_clean)
