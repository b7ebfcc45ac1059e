"""CPU baselines that check a release: train on its train split, score dev (and a labelled test) with the
KLUE metrics, beside a trivial baseline (majority / mean / all-O / attach-to-next / empty answer / empty state).

``train_and_evaluate(release_dir or (train_records, dev_records) or ReleaseData, task_slug, seed)`` ->
``BaselineResult``.
Each task type names its ``TaskBaseline`` (``TaskType.baseline``); a new baseline is a module here.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from dataclasses import asdict, dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from annotation.task_types import MissingLayer, PayloadError, get_task_type
from exports.metrics import get_task_metrics, score

from ._base import Records, TaskBaseline
from .bootstrap import difference_interval
from .release_files import ReleaseData, ReleaseError, load_release

__all__ = ["BaselineResult", "ReleaseData", "ReleaseError", "environment", "get_baseline",
           "train_and_evaluate"]


@dataclass
class BaselineResult:
    task: str
    #: Dev metrics of the baseline and of the trivial baseline (0-100, names as ``exports.metrics``).
    metrics: dict[str, float]
    trivial: dict[str, float]
    #: Training plus prediction time of the baseline, wall clock.
    seconds: float
    seed: int
    primary: str
    n_train: int
    n_dev: int
    description: str
    trivial_description: str
    #: Metrics on the test split when the release has a labelled one.
    test_metrics: dict[str, float] | None = None
    test_trivial: dict[str, float] | None = None
    #: Records per split in the release when a split was larger than the check reads (it then used a
    #: seeded sample of ``n_train`` / ``n_dev``); None when every split was read whole.
    sampled_from: dict[str, int] | None = None
    environment: dict[str, Any] = field(default_factory=dict)
    #: Bootstrap interval of (baseline − trivial) on the primary metric of dev: {"low", "high", …}.
    interval: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def environment() -> dict[str, Any]:
    """Where the numbers were produced (they depend on library versions and the CPU)."""
    packages = {}
    for name in ("numpy", "scipy", "scikit-learn", "sklearn-crfsuite"):
        try:
            packages[name] = version(name)
        except PackageNotFoundError:
            packages[name] = None
    return {"python": sys.version.split()[0], "platform": platform.platform(), "cpus": os.cpu_count(),
            "packages": packages}


def get_baseline(task_slug: str) -> TaskBaseline:
    """The baseline the task type names (``TaskType.baseline``)."""
    try:
        return get_task_type(task_slug).baseline()
    except (PayloadError, MissingLayer) as exc:
        raise ReleaseError(f"no baseline for task {task_slug!r}: {exc}") from None


def _labelled(task_slug: str, records: Records) -> bool:
    """Whether a split carries gold labels the metrics can use (a KLUE-style unlabelled test does not)."""
    if not records:
        return False
    try:
        empty = {records[0]["guid"]: ""} if get_task_metrics(task_slug).answer_map else records[:1]
        score(task_slug, records[:1], empty)
    except (KeyError, TypeError, ValueError):
        return False
    return True


def train_and_evaluate(source: Path | str | tuple[Records, Records] | ReleaseData, task_slug: str,
                       seed: int = 13) -> BaselineResult:
    """Train the task's baseline on train, score it and the trivial baseline on dev (and a labelled test)."""
    if isinstance(source, ReleaseData):
        data = source
    elif isinstance(source, tuple):
        data = ReleaseData(task_slug=task_slug, version="", splits={"train": list(source[0]), "dev": list(source[1])})
    else:
        data = load_release(Path(source), seed=seed)
        if data.task_slug != task_slug:
            raise ReleaseError(f"{source}: the release is {data.task_slug}, not {task_slug}")
    baseline = get_baseline(task_slug)
    train, dev = data.splits["train"], data.splits["dev"]
    if not train or not dev:
        raise ReleaseError("the train and dev splits must both have records")

    started = time.perf_counter()
    predictor = baseline.train(train, seed, data.ontology)
    predicted = predictor(dev)
    metrics = score(task_slug, dev, predicted)
    test = data.splits.get("test")
    test_metrics = score(task_slug, test, predictor(test)) if test and _labelled(task_slug, test) else None
    seconds = time.perf_counter() - started

    trivial = baseline.trivial(train)
    trivial_predicted = trivial(dev)
    primary = get_task_metrics(task_slug).primary
    interval = difference_interval(task_slug, dev, predicted, trivial_predicted, seed)
    return BaselineResult(
        task=task_slug, metrics=metrics, trivial=score(task_slug, dev, trivial_predicted), seconds=round(seconds, 3),
        seed=seed, primary=primary, n_train=len(train), n_dev=len(dev), interval=interval.to_dict(),
        description=baseline.description, trivial_description=baseline.trivial_description,
        test_metrics=test_metrics,
        test_trivial=score(task_slug, test, trivial(test)) if test_metrics is not None else None,
        sampled_from={split: total for split, total in data.totals.items() if total > len(data.splits[split])}
        or None,
        environment=environment(),
    )
