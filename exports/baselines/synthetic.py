"""Seeded synthetic KLUE records with a learnable signal, for benchmarks and self-tests of the baselines.

Not corpus data: small templated Korean sentences, each task type's own (``TaskType.synthetic_record`` and
``synthetic_ontology``). ``synthetic_records(task, n, seed)`` returns ``n`` records in the shape
``iter_klue_records`` yields; ``write_synthetic_release`` writes a release folder.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from annotation.task_types import get_task_type
from datasets_build.klue_formats import klue_file_name, klue_spec, write_klue_file


def synthetic_records(task_slug: str, n: int, seed: int = 13) -> list[dict[str, Any]]:
    """``n`` records of the task type's ``synthetic_record`` (``MissingLayer`` when it declares none)."""
    task = get_task_type(task_slug)
    rng = random.Random(f"{task_slug}:{seed}")
    return [task.synthetic_record(rng, i) for i in range(n)]


def write_release(release_dir: Path, task_slug: str, splits: dict[str, list[dict[str, Any]]],
                  version: str = "1.1", ontology: dict[str, list[str]] | None = None) -> Path:
    """A release folder as the release builder lays it out: manifest.json and KLUE-named split files."""
    release_dir = Path(release_dir)
    release_dir.mkdir(parents=True, exist_ok=True)
    for split, records in splits.items():
        write_klue_file(release_dir / klue_file_name(task_slug, version, split), task_slug, records, version=version)
    if ontology is not None:
        side_file = release_dir / f"{klue_spec(task_slug).name}-v{version}_ontology.json"
        side_file.write_text(json.dumps(ontology, ensure_ascii=False), encoding="utf-8")
    manifest = {"task_type": task_slug, "version": version, "splits": {s: len(r) for s, r in splits.items()}}
    (release_dir / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=2), encoding="utf-8")
    return release_dir


def write_synthetic_release(release_dir: Path, task_slug: str, n: int, seed: int = 13) -> Path:
    """``n`` synthetic records split 80/10/10 in order (the generator is already random)."""
    records = synthetic_records(task_slug, n, seed)
    cut1, cut2 = int(n * 0.8), int(n * 0.9)
    splits = {"train": records[:cut1], "dev": records[cut1:cut2], "test": records[cut2:]}
    for split, rows in splits.items():
        for i, row in enumerate(rows):
            row["guid"] = row["guid"].replace("_train_", f"_{split}_").rsplit("_", 1)[0] + f"_{i:05d}"
    ontology = get_task_type(task_slug).synthetic_ontology()
    return write_release(release_dir, task_slug, splits, ontology=ontology)
