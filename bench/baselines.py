"""Baseline check timing and quality: ``python -m bench.baselines [--size small|full]``.

Workloads:
- ``baseline_<task>``: a synthetic release (``exports.baselines.synthetic``) of 10,000 items (full) or
  1,000 (small), split 80/10/10, written in the KLUE layout; timed is the release check's baseline
  (train + predict dev and test). Target: ≤ 60 s per task on the 2-core machine.
- ``baseline_<task>_klue_dev`` (only with ``KLUE_DATA_DIR``): the real KLUE dev file of NER, DP, NLI and
  STS re-split by the platform's splitter (80/10/10, seed 13, grouped by premise for NLI), baseline vs
  trivial on the new dev split. These figures are the ones recorded in docs/baselines.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SIZES = {"small": 1_000, "full": 10_000}
TARGET_SECONDS = 60.0
TASKS = ("tc", "sts", "nli", "ner", "re", "dp", "mrc", "dst")
REAL = {"ner": "klue-ner-v1.1_dev.tsv", "dp": "klue-dp-v1.1_dev.tsv", "nli": "klue-nli-v1.1_dev.json",
        "sts": "klue-sts-v1.1_dev.json"}


def _setup() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()


def _peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _rounded(metrics: dict[str, float | None] | None) -> dict[str, float | None] | None:
    """Two decimals; an undefined metric (None from ``release_check``, NaN from ``train_and_evaluate``) as None."""
    if metrics is None:
        return None
    return {k: None if v is None or v != v else round(v, 2) for k, v in metrics.items()}


def synthetic_workload(task: str, size: str) -> dict[str, Any]:
    from exports.baselines.synthetic import write_synthetic_release
    from exports.release_check import release_check

    n = SIZES[size]
    with tempfile.TemporaryDirectory() as tmp:
        release = write_synthetic_release(Path(tmp) / task, task, n)
        started = time.perf_counter()
        check = release_check(release, task, margin=5.0, leakage_clean=True, seed=13)
        total = time.perf_counter() - started
    return {"name": f"baseline_{task}", "size": size, "items": n, "seconds": check["seconds"],
            "check_seconds": round(total, 3), "items_per_s": round(n / max(check["seconds"], 1e-9), 1),
            "peak_rss_mb": _peak_rss_mb(), "target_seconds": TARGET_SECONDS,
            "met": check["seconds"] <= TARGET_SECONDS, "passed": check["passed"],
            "metrics": _rounded(check["metrics"]), "trivial": _rounded(check["trivial"]),
            "load_average": round(os.getloadavg()[0], 2)}


def resplit(task: str, records: list[dict[str, Any]], seed: int = 13) -> dict[str, list[dict[str, Any]]]:
    """Split real records the way a release does: the platform's grouped, stratified splitter."""
    from annotation.task_types import get_task_type
    from datasets_build.splits import SplitUnits, assign_splits
    from exports.writers.flat import flat_schema

    task_type, schema = get_task_type(task), flat_schema(task)
    units = SplitUnits()
    for i, record in enumerate(records):
        # Stratified and grouped as the release builder does: the flat schema's label, the task's group key.
        group = task_type.parse_record(record).group_key or record["guid"]
        units.add(i + 1, label=schema.label(record), group_key=group, content_hash=record["guid"])
    ratios = {"train": 0.8, "dev": 0.1, "test": 0.1}
    codes = assign_splits(units.freeze(), ratios, seed)
    names = list(ratios)
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    for record, code in zip(records, codes, strict=True):
        out[names[int(code)]].append(record)
    return out


def real_workload(task: str, klue_dir: Path) -> dict[str, Any]:
    from datasets_build.klue_formats import iter_klue_records
    from exports.baselines import train_and_evaluate

    records = [r for _, r in iter_klue_records(klue_dir / REAL[task], task)]
    splits = resplit(task, records)
    result = train_and_evaluate((splits["train"], splits["dev"]), task, seed=13)
    return {"name": f"baseline_{task}_klue_dev", "size": "full", "items": len(records),
            "splits": {k: len(v) for k, v in splits.items()}, "seconds": result.seconds,
            "items_per_s": round(len(splits["train"]) / max(result.seconds, 1e-9), 1), "peak_rss_mb": _peak_rss_mb(),
            "target_seconds": TARGET_SECONDS, "met": result.seconds <= TARGET_SECONDS, "primary": result.primary,
            "metrics": _rounded(result.metrics), "trivial": _rounded(result.trivial)}


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.baselines", description=__doc__)
    parser.add_argument("--size", choices=tuple(SIZES), default="small")
    parser.add_argument("--only", nargs="*", default=None, help="task slugs")
    args = parser.parse_args()
    _setup()
    tasks = args.only or TASKS
    for task in tasks:
        print(json.dumps(synthetic_workload(task, args.size), ensure_ascii=False), flush=True)
    klue_dir = os.environ.get("KLUE_DATA_DIR")
    if klue_dir:
        for task in (t for t in tasks if t in REAL):
            print(json.dumps(real_workload(task, Path(klue_dir)), ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
