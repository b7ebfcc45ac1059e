"""Finding and reading the KLUE files of a release folder (the layout the release builder writes).

``<release-dir>/manifest.json`` holds at least ``{"task_type", "version", "splits": {split: n}}``; the
split files are named like KLUE's own (``klue-nli-v1.1_dev.json``, ``wos-v1.1_train.json``, ...).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annotation.task_types import slugs
from datasets_build.klue_formats import iter_klue_records, klue_file_name, klue_spec

#: Records per split the baseline reads at most: a larger split is sampled (seeded, file order kept), so the
#: check's memory and time stop growing with the release. Normal-size releases are read whole.
MAX_SPLIT_RECORDS = 50_000


class ReleaseError(ValueError):
    """A release folder the baseline cannot use (no manifest, no train/dev file, unknown task)."""


@dataclass
class ReleaseData:
    task_slug: str
    version: str
    splits: dict[str, list[dict[str, Any]]]
    #: WoS ontology ``{"domain-slot": [values]}`` when the release ships one (DST only).
    ontology: dict[str, list[str]] | None = None
    files: dict[str, Path] = field(default_factory=dict)
    #: Records in each split file, read or not (differs from ``len(splits[s])`` when it was sampled).
    totals: dict[str, int] = field(default_factory=dict)


class Reservoir:
    """At most ``cap`` records by seeded reservoir sampling, fed one at a time; ``records`` keeps their order."""

    def __init__(self, cap: int, seed: int) -> None:
        self.cap = cap
        self.rng = random.Random(seed)
        self.kept: list[tuple[int, dict[str, Any]]] = []
        self.total = 0

    def add(self, record: dict[str, Any]) -> None:
        self.total += 1
        if self.total <= self.cap:
            self.kept.append((self.total, record))
        elif (slot := self.rng.randrange(self.total)) < self.cap:
            self.kept[slot] = (self.total, record)

    def feed(self, records: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """Pass ``records`` through, sampling them on the way (the release builder, as it writes a split)."""
        for record in records:
            self.add(record)
            yield record

    def records(self) -> list[dict[str, Any]]:
        return [record for _, record in sorted(self.kept, key=lambda pair: pair[0])]


def sample_records(records: Iterable[dict[str, Any]], cap: int, seed: int) -> tuple[list[dict[str, Any]], int]:
    """At most ``cap`` records by seeded reservoir sampling in one pass, in their original order, and the total."""
    reservoir = Reservoir(cap, seed)
    for record in records:
        reservoir.add(record)
    return reservoir.records(), reservoir.total


def read_manifest(release_dir: Path) -> dict[str, Any]:
    path = Path(release_dir) / "manifest.json"
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReleaseError(f"{release_dir}: no manifest.json") from None
    except ValueError as exc:
        raise ReleaseError(f"{path}: not JSON ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("task_type") not in slugs():
        raise ReleaseError(f"{path}: task_type must be one of {', '.join(slugs())}")
    return manifest


def split_file(release_dir: Path, task_slug: str, version: str | None, split: str) -> Path | None:
    """The file of one split: the name ``klue_file_name`` gives for the release version, else any KLUE version."""
    release_dir = Path(release_dir)
    if version:
        exact = release_dir / klue_file_name(task_slug, str(version), split)
        if exact.is_file():
            return exact
    spec = klue_spec(task_slug)
    matches = sorted(release_dir.glob(f"{spec.name}-v*_{split}.{spec.extension}"))
    return matches[0] if matches else None


def ontology_file(release_dir: Path, task_slug: str) -> Path | None:
    """The ontology the release ships beside its splits, for a task type whose KLUE files have one (WoS)."""
    spec = klue_spec(task_slug)
    matches = sorted(Path(release_dir).glob(f"{spec.name}-v*_ontology.json")) if spec.ontology else []
    return matches[0] if matches else None


def load_release(release_dir: Path, splits: tuple[str, ...] = ("train", "dev", "test"), *, seed: int = 13,
                 cap: int | None = None) -> ReleaseData:
    """Read a release folder; train and dev are required, other splits are read when present, each sampled
    down to ``cap`` (default ``MAX_SPLIT_RECORDS``) records when larger (see ``sample_records``)."""
    cap = MAX_SPLIT_RECORDS if cap is None else cap
    manifest = read_manifest(release_dir)
    task_slug, version = manifest["task_type"], str(manifest.get("version") or "")
    data = ReleaseData(task_slug=task_slug, version=version, splits={})
    for split in splits:
        path = split_file(release_dir, task_slug, version, split)
        if path is None:
            if split in ("train", "dev"):
                raise ReleaseError(f"{release_dir}: no {split} file for {task_slug}")
            continue
        try:
            records = (record for _, record in iter_klue_records(path, task_slug))
            data.splits[split], data.totals[split] = sample_records(records, cap, seed)
        except ValueError as exc:
            raise ReleaseError(f"{path}: {exc}") from exc
        data.files[split] = path
    if (path := ontology_file(release_dir, task_slug)) is not None:
        data.ontology = json.loads(path.read_text(encoding="utf-8"))
    return data


def sampled_release(release_dir: Path, task_slug: str, samples: dict[str, Reservoir]) -> ReleaseData:
    """What :func:`load_release` reads, from reservoirs filled while the split files were written (the
    release builder's path: it saves reading the files back). Only for tasks whose KLUE file is a JSON array
    of exactly the records written, so the records are those the files give back; train and dev required."""
    missing = [split for split in ("train", "dev") if split not in samples]
    if missing:
        raise ReleaseError(f"{release_dir}: no {missing[0]} file for {task_slug}")
    data = ReleaseData(task_slug=task_slug, version="", splits={}, totals={})
    for split, reservoir in samples.items():
        data.splits[split], data.totals[split] = reservoir.records(), reservoir.total
    if (path := ontology_file(release_dir, task_slug)) is not None:
        data.ontology = json.loads(path.read_text(encoding="utf-8"))
    return data
