"""Contamination: the dev and test items of a release found, exactly or nearly, in text a model may have seen.

Checked against:

- the train split of every earlier release of the project (``diff.contamination``: the same item or content
  hash, or one of the import's near-duplicate groups);
- the project's references (:class:`~exports.models.ContaminationReference`): other projects on this server
  that a maintainer named, and files a maintainer uploaded (a public benchmark's split, in any format the import
  reads).

A reference is streamed a batch at a time (``datasets_build.references.BATCH`` records, or items of the other
project): each batch's content hashes are looked up among the checked items' (``exact``), and its MinHash
signatures (``datasets_build.dedup``, the import's own method) are cut into the import's LSH bands; a checked
item sharing a band is a candidate, kept when the share of equal signature values reaches the project's
near-duplicate threshold (``near``). Only the checked items are held (their signatures, 256 bytes an item, and
their band keys), so memory does not grow with the reference (``bench/contamination.py``).

The project's policy (``options["contamination_policy"]``) says which hits fail the release: by default a test
item found in training data (an earlier release's train split, or a reference marked as training data); the
others warn.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from annotation.models import Item, Project
from annotation.project_settings import CONTAMINATION_POLICIES as POLICIES
from annotation.task_types import get_task_type
from datasets_build import dedup
from datasets_build.splits import key_code

from .diff import CHECKED_SPLITS, Held
from .diff import contamination as earlier_releases
from .models import ContaminationReference, ReferenceKind, Release

DEFAULT_POLICY = POLICIES[0]
#: Hits listed (every one is counted).
HITS_LIMIT = 1000
#: Items of another project read at a time.
_PROJECT_BATCH = 10_000

Progress = Callable[[str, int], None]


def policy_of(project: Project) -> str:
    policy = (project.options or {}).get("contamination_policy", DEFAULT_POLICY)
    return policy if policy in POLICIES else DEFAULT_POLICY


@dataclass
class Checked:
    """The dev and test items of a release, in item-id order: their split names, content-hash codes, and the
    MinHash signatures and sorted band keys of those whose text is still in the project."""

    ids: np.ndarray
    splits: list[str]
    codes: np.ndarray
    signatures: np.ndarray
    #: Whether the item's text was read (a deleted item is matched by its content hash only).
    has_text: np.ndarray
    band_keys: np.ndarray
    band_rows: np.ndarray

    @classmethod
    def of(cls, held: Held, task_slug: str, *, chunk: int = 5000) -> Checked:
        checked = [code for code, name in enumerate(held.split_names) if name in CHECKED_SPLITS]
        at = np.flatnonzero(np.isin(held.splits, checked))
        ids = held.ids[at]
        task = get_task_type(task_slug)
        signatures = np.zeros((len(ids), dedup.NUM_PERM), dtype=np.uint32)
        has_text = np.zeros(len(ids), dtype=bool)
        for start in range(0, len(ids), chunk):
            part = ids[start:start + chunk].tolist()
            rows = dict(Item.objects.filter(id__in=part).values_list("id", "payload"))
            found = [n for n, item in enumerate(part) if item in rows]
            if found:
                texts = [task.item_text(rows[part[n]]) for n in found]
                positions = start + np.array(found)
                signatures[positions] = dedup.signatures(texts)
                has_text[positions] = True
        keys = np.array(dedup.batch_band_keys(signatures), dtype=np.int64).reshape(-1, dedup.BANDS)
        rows = np.repeat(np.arange(len(ids)), dedup.BANDS)
        keep = np.repeat(has_text, dedup.BANDS)
        keys, rows = keys.ravel()[keep], rows[keep]
        order = np.argsort(keys, kind="stable")
        return cls(ids=ids, splits=held.split_of(at), codes=held.texts[at], signatures=signatures,
                   has_text=has_text, band_keys=keys[order], band_rows=rows[order])


@dataclass
class Batch:
    """Reference records: an id each (the other project's item id, or the file's record number), its guid,
    its content-hash code and its text."""

    refs: list[int]
    guids: list[str]
    codes: np.ndarray
    texts: list[str]


@dataclass
class Matches:
    """Per checked item, its best match in one reference: exact (the reference id) or near (id, similarity)."""

    exact: np.ndarray
    exact_guid: dict[int, str]
    near: np.ndarray
    near_similarity: np.ndarray
    near_guid: dict[int, str]

    @classmethod
    def empty(cls, n: int) -> Matches:
        return cls(exact=np.full(n, -1, dtype=np.int64), exact_guid={}, near=np.full(n, -1, dtype=np.int64),
                   near_similarity=np.zeros(n, dtype=np.float32), near_guid={})


def scan(checked: Checked, batches: Iterable[Batch], threshold: float,
         progress: Callable[[int], None] | None = None) -> Matches:
    """The best match of every checked item in the reference ``batches``."""
    found = Matches.empty(len(checked.ids))
    order = np.argsort(checked.codes, kind="stable")
    codes = checked.codes[order]
    seen = 0
    for batch in batches:
        _exact(found, order, codes, batch)
        _near(found, checked, batch, threshold)
        seen += len(batch.refs)
        if progress is not None:
            progress(seen)
    return found


def _exact(found: Matches, order: np.ndarray, codes: np.ndarray, batch: Batch) -> None:
    left = np.searchsorted(codes, batch.codes, side="left")
    right = np.searchsorted(codes, batch.codes, side="right")
    for row in np.flatnonzero(right > left).tolist():
        for position in order[left[row]:right[row]].tolist():
            if found.exact[position] < 0:
                found.exact[position] = batch.refs[row]
                found.exact_guid[position] = batch.guids[row]


def _near(found: Matches, checked: Checked, batch: Batch, threshold: float) -> None:
    if not len(checked.band_keys) or not batch.texts:
        return
    signatures = dedup.signatures(batch.texts)
    keys = np.array(dedup.batch_band_keys(signatures), dtype=np.int64).reshape(-1, dedup.BANDS)
    flat = keys.ravel()
    left = np.searchsorted(checked.band_keys, flat, side="left")
    counts = np.searchsorted(checked.band_keys, flat, side="right") - left
    if not counts.any():
        return
    ref_rows = np.repeat(np.repeat(np.arange(len(batch.texts)), dedup.BANDS), counts)
    starts = np.repeat(left - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))
    item_rows = checked.band_rows[starts]
    pairs = np.unique(np.stack([item_rows, ref_rows], axis=1), axis=0)
    equal = (checked.signatures[pairs[:, 0]] == signatures[pairs[:, 1]]).sum(axis=1) / dedup.NUM_PERM
    for (item_row, ref_row), value in zip(pairs.tolist(), equal.tolist(), strict=True):
        if value >= threshold and value > found.near_similarity[item_row]:
            found.near_similarity[item_row] = value
            found.near[item_row] = batch.refs[ref_row]
            found.near_guid[item_row] = batch.guids[ref_row]


# -- the references' batches ------------------------------------------------------------------------


def project_batches(other: Project, *, batch: int = _PROJECT_BATCH) -> Iterator[Batch]:
    """Every item of another project (any split: whatever it holds may have been trained on), read in id
    order a batch at a time."""
    task = other.task
    last = 0
    while True:
        rows = list(Item.objects.filter(project=other, id__gt=last).order_by("id")
                    .values_list("id", "external_id", "content_hash", "payload")[:batch])
        if not rows:
            return
        last = rows[-1][0]
        yield Batch(refs=[r[0] for r in rows], guids=[r[1] for r in rows],
                    codes=np.array([key_code(r[2]) for r in rows], dtype=np.int64),
                    texts=[task.item_text(r[3]) for r in rows])


def file_batches(reference: ContaminationReference, task_slug: str) -> Iterator[Batch]:
    """The records of an uploaded reference file, read as the import reads them."""
    from config.storage import upload_local
    from datasets_build.references import ReadOutcome, reference_batches

    outcome = ReadOutcome()
    with upload_local(reference.stored_path) as path:
        for part in reference_batches(path, reference.format, get_task_type(task_slug), outcome):
            yield Batch(refs=part.records, guids=part.guids,
                        codes=np.array([key_code(h) for h in part.hashes], dtype=np.int64), texts=part.texts)


def reference_batches(reference: ContaminationReference, task_slug: str) -> Iterator[Batch]:
    if reference.kind == ReferenceKind.PROJECT:
        assert reference.other is not None
        return project_batches(reference.other)
    return file_batches(reference, task_slug)


# -- the report ---------------------------------------------------------------------------------------


def _fails(policy: str, split: str, training: bool) -> bool:
    if policy == "any":
        return True
    return policy == "test_training" and split == "test" and training


def release_contamination(release: Release, held: Held, links: np.ndarray, *,
                          references: list[ContaminationReference] | None = None,
                          progress: Progress | None = None) -> dict[str, Any]:
    """The contamination of ``release`` (holding ``held``): against the train split of its earlier releases
    and against ``references`` (the project's, by default). ``fails`` says whether the project's policy
    fails the release for what was found."""
    from datasets_build.dedup import threshold

    project = release.project
    if references is None:
        references = list(ContaminationReference.objects.filter(project=project).select_related("other")
                          .order_by("name", "id"))
    policy = policy_of(project)
    result = earlier_releases(release, held, links)
    # An earlier release's hit is the same item, the same text or one MinHash group with a training item.
    hits: list[dict[str, Any]] = [{**hit, "reference": None, "reference_id": None, "reference_kind": None,
                                   "match": None, "match_guid": "",
                                   "similarity": 1.0 if hit["kind"] == "exact" else None, "training": True}
                                  for hit in result.pop("hits")]
    checked = Checked.of(held, project.task_type) if references else None
    described = []
    for reference in references:
        assert checked is not None
        label = f"reference:{reference.name}"
        # Nothing to look for (no dev or test item): the reference is not read.
        batches = reference_batches(reference, project.task_type) if len(checked.ids) else iter(())
        matches = scan(checked, batches, threshold(),
                       None if progress is None else (lambda n, label=label: progress(label, n)))
        exact = np.flatnonzero(matches.exact >= 0)
        near = np.flatnonzero((matches.exact < 0) & (matches.near >= 0))
        for position in exact.tolist():
            hits.append(_hit(checked, position, "exact", reference, int(matches.exact[position]),
                             matches.exact_guid[position], 1.0))
        for position in near.tolist():
            hits.append(_hit(checked, position, "near", reference, int(matches.near[position]),
                             matches.near_guid[position], round(float(matches.near_similarity[position]), 4)))
        described.append({"id": reference.pk, "name": reference.name, "kind": reference.kind,
                          "training": reference.training, "exact": len(exact), "near": len(near),
                          "other": reference.other.slug if reference.other else None})
    hits.sort(key=lambda h: (h["item"], h["reference"] or "", h["release"] or ""))
    return _summary(result, hits, described, policy, checked)


def _hit(checked: Checked, position: int, kind: str, reference: ContaminationReference, match: int, guid: str,
         similarity: float) -> dict[str, Any]:
    return {"item": int(checked.ids[position]), "split": checked.splits[position], "kind": kind, "release": None,
            "reference": reference.name, "reference_id": reference.pk, "reference_kind": reference.kind,
            "match": match, "match_guid": guid, "similarity": similarity, "training": reference.training}


def _summary(result: dict[str, Any], hits: list[dict[str, Any]], references: list[dict[str, Any]], policy: str,
             checked: Checked | None) -> dict[str, Any]:
    # Per split, each item counts once, as its closest kind of hit.
    best: dict[int, tuple[str, str]] = {}
    for hit in hits:
        if best.get(hit["item"], ("", ""))[1] != "exact":
            best[hit["item"]] = (hit["split"], hit["kind"])
    exact: dict[str, int] = {}
    near: dict[str, int] = {}
    for split, kind in best.values():
        bucket = exact if kind == "exact" else near
        bucket[split] = bucket.get(split, 0) + 1
    splits = list(dict.fromkeys([*(r["split"] for r in result.get("by_split", [])), *CHECKED_SPLITS]))
    failing = sorted({h["item"] for h in hits if _fails(policy, h["split"], h["training"])})
    out = {**result, "references": references, "policy": policy, "exact": exact, "near": near,
           "hits": hits[:HITS_LIMIT], "hit_count": len(hits), "clean": not hits, "fails": bool(failing),
           "failing": len(failing)}
    if hits or result.get("by_split"):
        out["by_split"] = [{"split": s, "exact": exact.get(s, 0), "near": near.get(s, 0)} for s in splits
                           if s in exact or s in near or any(r["split"] == s for r in result.get("by_split", []))]
    if checked is not None:
        out["checked"] = {s: checked.splits.count(s) for s in dict.fromkeys(checked.splits)}
        out["without_text"] = int((~checked.has_text).sum())
    return out
