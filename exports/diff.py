"""What changed between two releases of a project, and the changelog a release ships.

Every build records what its release held (``ReleaseItems``: item ids with their split, label, gold digest and
text code, and the items it left out with the reason). Two such records give, item by item:

- ``added``: held by B, not by A (with A's reason for leaving it out, or ``new``);
- ``dropped``: held by A, not by B (with B's reason: screened out, flagged, gold discarded…, or ``deleted``);
- ``relabelled``: held by both with another label or gold, with the adjudication or rule behind it;
- ``moved``: held by both in different splits;
- ``text_changed``: held by both with another content hash (a re-import, PII re-screening);

and per split the change in label counts, and the change in agreement. The reads of the database (external
ids, adjudications, audit events) are made for the changed items only.

The changelog (``CHANGES.md``, English, and ``changes.jsonl``, ids and kinds only, never text) compares a release
with the previous version of its project and is written into the release folder by the build, so it is made
only of what the two records hold and comes out byte for byte the same when the release is built again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from annotation.models import Adjudication, AuditEvent, AuditObject, GoldLabel, Item
from annotation.services import ServiceError

from .models import BUILT, SEMVER, Release, ReleaseItems

CHANGES_MD = "CHANGES.md"
CHANGES_JSONL = "changes.jsonl"

#: The kinds of change, in the order the reports list them.
KINDS = ("added", "dropped", "relabelled", "moved", "text_changed")
KIND_NAMES = {
    "added": _("Added"),
    "dropped": _("Dropped"),
    "relabelled": _("Relabelled"),
    "moved": _("Moved between splits"),
    "text_changed": _("Text changed"),
}
#: Why an item was left out of a release (``release_exclusion``'s reasons, the build's and the diff's own).
REASON_NAMES = {
    "screening_needs_review": _("screened out: waiting for screening review"),
    "screening_dropped": _("screened out: dropped in screening review"),
    "screening_pending": _("not screened yet"),
    "screening_unknown": _("screened out"),
    "open_flag": _("flagged (an open flag)"),
    "gold_discarded": _("gold discarded by the gold rule"),
    "gold_needs_adjudication": _("gold needs adjudication"),
    "gold_incomplete": _("gold incomplete: waiting for annotations"),
    "unlabelled": _("no label"),
    "no_split": _("no split (the release kept each item's split)"),
    "deleted": _("deleted from the project"),
    "absent": _("not yet in the project"),
    "new": _("new in the project"),
}
#: The agreement coefficients a report may name as its primary one, in words (the pages show these).
COEFFICIENT_NAMES = {
    "krippendorff_alpha": pgettext_lazy("agreement coefficient", "Krippendorff's alpha"),
    "krippendorff_alpha_answerable": pgettext_lazy("agreement coefficient",
                                                   "Krippendorff's alpha over answerable questions"),
    "fleiss_kappa": pgettext_lazy("agreement coefficient", "Fleiss' kappa"),
    "pairwise_cohen_kappa": pgettext_lazy("agreement coefficient", "pairwise Cohen's kappa"),
}
#: How many changes of one kind CHANGES.md lists by id (changes.jsonl lists them all).
_MD_LIMIT = 1000


class DiffError(ServiceError):
    """Two releases cannot be compared (``conflict``), or the request is malformed (``invalid``): the message
    says why, in one line."""


def gold_digest(gold: Any) -> int:
    """A 64-bit digest of a gold payload (0 for none): equal payloads, equal digests, whatever their key order."""
    if gold is None:
        return 0
    data = orjson.dumps(gold, option=orjson.OPT_SORT_KEYS)
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little") or 1


@dataclass
class Held:
    """What one release held, as arrays in item-id order."""

    version: str
    ids: np.ndarray
    splits: np.ndarray
    split_names: list[str]
    labels: np.ndarray
    label_names: list[str]
    golds: np.ndarray
    texts: np.ndarray
    excluded: dict[int, str]
    label_counts: dict[str, dict[str, int]]
    agreement: dict[str, Any]

    @classmethod
    def of(cls, release: Release, row: ReleaseItems) -> Held:
        columns = row.unpacked()
        reasons = row.reason_names
        return cls(version=release.version, ids=columns["ids"], splits=columns["splits"], split_names=row.split_names,
                   labels=columns["labels"], label_names=row.label_names, golds=columns["golds"],
                   texts=columns["texts"],
                   excluded={int(i): reasons[c] for i, c in zip(columns["excluded_ids"].tolist(),
                                                                columns["excluded_reasons"].tolist(), strict=True)},
                   label_counts=release.label_counts or {}, agreement=release.agreement or {})

    def record(self) -> dict[str, Any]:
        """The ``ReleaseItems`` fields of this record."""
        reasons = list(dict.fromkeys(self.excluded.values()))
        excluded = sorted(self.excluded.items())
        return {"split_names": self.split_names, "label_names": self.label_names, "reason_names": reasons,
                **ReleaseItems.packed(
                    ids=self.ids, splits=self.splits, labels=self.labels, golds=self.golds, texts=self.texts,
                    excluded_ids=np.array([i for i, _r in excluded], dtype=np.int64),
                    excluded_reasons=np.array([reasons.index(r) for _i, r in excluded], dtype=np.uint8))}

    def split_of(self, positions: np.ndarray) -> list[str]:
        names = self.split_names
        return [names[c] for c in self.splits[positions].tolist()]

    def label_of(self, positions: np.ndarray) -> list[str | None]:
        names = self.label_names
        return [None if c < 0 else names[c] for c in self.labels[positions].tolist()]


def held_of(release: Release) -> Held:
    """What ``release`` held; :class:`DiffError` when its build recorded nothing (unfinished, failed, or built
    before releases recorded their items)."""
    if release.status not in BUILT:
        raise DiffError(f"release {release.version} is {release.status}: only built releases can be compared",
                        code="conflict")
    row = ReleaseItems.objects.filter(release=release).first()
    if row is None:
        raise DiffError(f"release {release.version} has no record of its items (built before releases recorded "
                        "them); build it again under a new version to compare it", code="conflict")
    return Held.of(release, row)


def version_key(version: str) -> tuple[Any, ...]:
    """Semantic-version order (a pre-release sorts before its release; build metadata is ignored)."""
    match = SEMVER.match(version)
    if match is None:
        return (0, 0, 0, 0, version)
    major, minor, patch, pre, _build = match.groups()
    parts = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in (pre or "").split(".") if p)
    return (int(major), int(minor), int(patch), 0 if pre else 1, parts)


def previous_release(release: Release) -> Release | None:
    """The project's built release of the highest version below ``release``'s that recorded its items (what
    the changelog compares with), if any."""
    key = version_key(release.version)
    earlier = [r for r in Release.objects.filter(project_id=release.project_id, status__in=BUILT,
                                                 held_items__isnull=False).exclude(pk=release.pk)
               if version_key(r.version) < key]
    return max(earlier, key=lambda r: version_key(r.version), default=None)


# -- comparing ------------------------------------------------------------------------------------


@dataclass
class Changes:
    """The item changes from ``a`` to ``b``: per kind, rows of plain values in item-id order."""

    a: Held
    b: Held
    rows: dict[str, list[dict[str, Any]]]

    def counts(self) -> dict[str, int]:
        return {kind: len(self.rows[kind]) for kind in KINDS}

    def by_item(self) -> list[tuple[int, list[str]]]:
        kinds: dict[int, list[str]] = {}
        for kind in KINDS:
            for row in self.rows[kind]:
                kinds.setdefault(row["item"], []).append(kind)
        return sorted(kinds.items())

    def label_distribution(self) -> dict[str, dict[str, dict[str, int]]]:
        """Per split (B's then A's order) and label: the count in A, in B and the change."""
        splits = list(dict.fromkeys([*self.b.label_counts, *self.a.label_counts]))
        out: dict[str, dict[str, dict[str, int]]] = {}
        for split in splits:
            before, after = self.a.label_counts.get(split, {}), self.b.label_counts.get(split, {})
            out[split] = {label: {"a": before.get(label, 0), "b": after.get(label, 0),
                                  "change": after.get(label, 0) - before.get(label, 0)}
                          for label in sorted({*before, *after})}
        return out

    def agreement(self) -> dict[str, Any]:
        """The primary agreement coefficient in A and B and its change (``None`` where one was not computed)."""
        first, second = (self.a.agreement.get("primary") or {}), (self.b.agreement.get("primary") or {})
        a_value, b_value = first.get("value"), second.get("value")
        change = None if a_value is None or b_value is None else round(b_value - a_value, 6)
        return {"name": second.get("name") or first.get("name"), "a": a_value, "b": b_value, "change": change,
                "a_items": self.a.agreement.get("items_counted"), "b_items": self.b.agreement.get("items_counted")}


def compare(a: Held, b: Held) -> Changes:
    """The item changes from ``a`` to ``b`` (both in item-id order), vectorised over the items."""
    rows: dict[str, list[dict[str, Any]]] = {kind: [] for kind in KINDS}
    _common, ia, ib = np.intersect1d(a.ids, b.ids, assume_unique=True, return_indices=True)
    added = np.flatnonzero(~np.isin(b.ids, a.ids, assume_unique=True))
    dropped = np.flatnonzero(~np.isin(a.ids, b.ids, assume_unique=True))
    for item, split in zip(b.ids[added].tolist(), b.split_of(added), strict=True):
        rows["added"].append({"item": item, "split": split, "before": a.excluded.get(item, "new")})
    for item, split in zip(a.ids[dropped].tolist(), a.split_of(dropped), strict=True):
        rows["dropped"].append({"item": item, "split": split, "reason": b.excluded.get(item)})

    a_split, b_split = a.split_of(ia), b.split_of(ib)
    a_label, b_label = a.label_of(ia), b.label_of(ib)
    a_gold, b_gold = a.golds[ia], b.golds[ib]
    gold_changed = ((a_gold != 0) & (b_gold != 0) & (a_gold != b_gold)).tolist()
    text_changed = (a.texts[ia] != b.texts[ib]).tolist()
    for n, item in enumerate(a.ids[ia].tolist()):
        if a_label[n] != b_label[n] or gold_changed[n]:
            rows["relabelled"].append({"item": item, "split": b_split[n], "old": a_label[n], "new": b_label[n]})
        if a_split[n] != b_split[n]:
            rows["moved"].append({"item": item, "from": a_split[n], "to": b_split[n]})
        if text_changed[n]:
            rows["text_changed"].append({"item": item, "split": b_split[n]})
    return Changes(a=a, b=b, rows=rows)


# -- the report (API, page, command) ------------------------------------------------------------------


def _chunks(ids: list[int], size: int = 5000) -> Iterable[list[int]]:
    for start in range(0, len(ids), size):
        yield ids[start:start + size]


def _why_relabelled(project_id: int, ids: list[int], since: Any, until: Any) -> dict[int, dict[str, Any]]:
    """Per item, what decided its new gold between the two builds: the latest adjudication (who, when, why),
    else the latest gold decision of the audit trail (a known answer set or cleared), else the gold rule."""
    why: dict[int, dict[str, Any]] = {}
    for chunk in _chunks(ids):
        for adj in (Adjudication.objects.filter(item_id__in=chunk, decided_at__gt=since, decided_at__lte=until)
                    .select_related("decided_by").order_by("item_id", "decided_at", "id")):
            why[adj.item_id] = {"how": "adjudication", "by": adj.decided_by.username if adj.decided_by else None,
                                "at": adj.decided_at.isoformat(), "reason": adj.reason,
                                "previous_status": adj.previous_status}
        for event in (AuditEvent.objects.filter(project_id=project_id, object_type=AuditObject.GOLD,
                                                object_id__in=chunk, at__gt=since, at__lte=until)
                      .exclude(action="adjudicate").select_related("actor").order_by("object_id", "at", "id")):
            why.setdefault(int(event.object_id), {"how": event.action,
                                                  "by": event.actor.username if event.actor else None,
                                                  "at": event.at.isoformat(), "reason": ""})
        for gold in GoldLabel.objects.filter(item_id__in=chunk).values("item_id", "rule", "annotation_count"):
            why.setdefault(gold["item_id"], {"how": "rule", "rule": gold["rule"],
                                             "annotations": gold["annotation_count"], "by": None, "at": None,
                                             "reason": ""})
    return why


def release_diff(a: Release, b: Release, *, kind: str | None = None) -> dict[str, Any]:
    """The comparison of two releases of one project: counts per kind, label distribution and agreement, and
    the changed items (of ``kind`` only, if given) with their external ids, the reasons items were dropped
    and what relabelled them. :class:`DiffError` for releases that cannot be compared."""
    if a.project_id != b.project_id:
        raise DiffError("the two releases belong to different projects", field="release")
    if kind is not None and kind not in KINDS:
        raise DiffError(f"unknown kind of change {kind!r}: use one of {', '.join(KINDS)}", field="kind")
    changes = compare(held_of(a), held_of(b))
    kinds = [kind] if kind else list(KINDS)
    items = [row for k in kinds for row in changes.rows[k]]
    ids = sorted({row["item"] for row in items})
    existing: dict[int, str] = {}
    for chunk in _chunks(ids):
        existing.update(Item.objects.filter(id__in=chunk).values_list("id", "external_id"))
    older, newer = sorted((a, b), key=lambda r: (r.created_at, r.pk))
    why = _why_relabelled(a.project_id, [r["item"] for r in changes.rows["relabelled"]], older.created_at,
                          newer.finished_at or newer.created_at) if "relabelled" in kinds else {}
    listed: dict[str, list[dict[str, Any]]] = {}
    for k in kinds:
        out = []
        for row in changes.rows[k]:
            row = {**row, "external_id": existing.get(row["item"], ""), "exists": row["item"] in existing}
            if k == "dropped" and row["reason"] is None:
                row["reason"] = "absent" if row["exists"] else "deleted"
            if k == "relabelled":
                row["why"] = why.get(row["item"], {"how": "rule", "rule": None, "by": None, "at": None,
                                                   "reason": ""})
            out.append(row)
        listed[k] = out
    return {"project": a.project_id, "a": {"id": a.pk, "version": a.version},
            "b": {"id": b.pk, "version": b.version}, "counts": changes.counts(),
            "label_distribution": changes.label_distribution(), "agreement": changes.agreement(),
            "changes": listed}


# -- the changelog in the release -------------------------------------------------------------------


def _guid(item: int, guids: dict[int, str]) -> str:
    return guids.get(item) or f"item {item}"


def changelog(changes: Changes, guids: dict[int, str]) -> tuple[bytes, bytes]:
    """``CHANGES.md`` and ``changes.jsonl`` for ``changes`` (A the previous release, B the one being built);
    ``guids`` gives the record ids (``guid``) of the items that still exist. Nothing in them depends on the
    time or on who built the release."""
    why = {r["item"]: r["before"] for r in changes.rows["added"]}
    why.update({r["item"]: r["reason"] or ("absent" if r["item"] in guids else "deleted")
                for r in changes.rows["dropped"]})
    lines = []
    for item, kinds in changes.by_item():
        line: dict[str, Any] = {"item": item, "guid": guids.get(item), "changes": kinds}
        if "added" in kinds or "dropped" in kinds:
            line["reason"] = why[item]
        lines.append(line)
    jsonl = b"".join(orjson.dumps(line) + b"\n" for line in lines)
    return _markdown(changes, guids).encode("utf-8"), jsonl


def _markdown(changes: Changes, guids: dict[int, str]) -> str:
    a, b = changes.a.version, changes.b.version
    counts = changes.counts()
    out = [f"# Changes in {b} since {a}", "",
           f"Item changes from release {a} to release {b}. `changes.jsonl` lists every changed item by id "
           "(`item`: the Goldset item number; `guid`: the record id in the files).", "",
           "| Change | Items |", "|---|---:|"]
    titles = {"added": "Added", "dropped": "Dropped", "relabelled": "Relabelled",
              "moved": "Moved between splits", "text_changed": "Text changed"}
    out += [f"| {titles[kind]} | {counts[kind]} |" for kind in KINDS]
    out += ["", "## Label distribution per split", "", f"| Split | Label | {a} | {b} | Change |",
            "|---|---|---:|---:|---:|"]
    for split, labels in changes.label_distribution().items():
        out += [f"| {split} | {label} | {n['a']} | {n['b']} | {n['change']:+d} |" for label, n in labels.items()]
    agreement = changes.agreement()
    out += ["", "## Agreement", ""]
    if agreement["change"] is None:
        out.append("Not compared: the agreement was not computed for both releases.")
    else:
        out.append(f"{agreement['name']}: {agreement['a']:.4f} → {agreement['b']:.4f} "
                   f"({agreement['change']:+.4f}).")
    for kind in KINDS:
        rows = changes.rows[kind]
        if not rows:
            continue
        out += ["", f"## {titles[kind]} ({len(rows)})", ""]
        for row in rows[:_MD_LIMIT]:
            out.append("- " + _md_row(kind, row, guids))
        if len(rows) > _MD_LIMIT:
            out.append(f"- … and {len(rows) - _MD_LIMIT} more (see changes.jsonl)")
    return "\n".join(out) + "\n"


def _md_row(kind: str, row: dict[str, Any], guids: dict[int, str]) -> str:
    guid = _guid(row["item"], guids)
    if kind == "added":
        return f"{guid} ({row['split']}; before: {row['before']})"
    if kind == "dropped":
        reason = row["reason"] or ("deleted" if row["item"] not in guids else "absent")
        return f"{guid} (was {row['split']}; {reason})"
    if kind == "relabelled":
        return f"{guid} ({row['split']}): {row['old'] or '—'} → {row['new'] or '—'}"
    if kind == "moved":
        return f"{guid}: {row['from']} → {row['to']}"
    return f"{guid} ({row['split']})"


def write_changelog(folder: Path, changes: Changes, guids: dict[int, str]) -> None:
    md, jsonl = changelog(changes, guids)
    (folder / CHANGES_MD).write_bytes(md)
    (folder / CHANGES_JSONL).write_bytes(jsonl)


def record_ids(project_id: int, slug: str, ids: list[int]) -> dict[int, str]:
    """The record id (``guid``) of each of ``ids`` that still exists: its external id, or the one the build
    gives an item without (``<slug>_<number>``)."""
    guids: dict[int, str] = {}
    for chunk in _chunks(sorted(ids)):
        for item, external in Item.objects.filter(project_id=project_id, id__in=chunk).values_list("id",
                                                                                                    "external_id"):
            guids[item] = external or f"{slug}_{item:08d}"
    return guids


def build_changelog(release: Release, held: Held, folder: Path) -> dict[str, Any] | None:
    """Write the changelog of ``release`` (being built, holding ``held``) against the previous version into
    ``folder``; its summary for the manifest, or ``None`` for a project's first release."""
    previous = previous_release(release)
    if previous is None:
        return None
    changes = compare(held_of(previous), held)
    guids = record_ids(release.project_id, release.project.slug, [item for item, _kinds in changes.by_item()])
    write_changelog(folder, changes, guids)
    return {"previous": previous.version, "counts": changes.counts(), "files": [CHANGES_MD, CHANGES_JSONL]}


# -- contamination: the dev and test splits against the training data of earlier releases ----------------


#: The splits checked, and the split of an earlier release they must not share text with.
CHECKED_SPLITS = ("dev", "test")
TRAINING_SPLIT = "train"


def _groups_of(ids: np.ndarray, links: np.ndarray) -> np.ndarray:
    """Each of ``ids``'s near-duplicate group (``links``: ``(m, 2)`` item → group, the import's MinHash
    groups), -1 for an item in none."""
    if not len(links):
        return np.full(len(ids), -1, dtype=np.int64)
    order = np.argsort(links[:, 0], kind="stable")
    items, groups = links[order, 0], links[order, 1]
    at = np.searchsorted(items, ids).clip(0, len(items) - 1)
    return np.where(items[at] == ids, groups[at], -1)


def contamination(release: Release, held: Held, links: np.ndarray) -> dict[str, Any]:
    """Which dev and test items of ``release`` (holding ``held``) sit in the training split of an earlier
    release of the project: the same item or the same text (``exact``: its id or content hash), or a near
    duplicate of a training item (``near``: one MinHash group, as the import found them). Earlier: a lower
    semantic version that recorded its items. A model trained on an earlier release has seen these texts."""
    key = version_key(release.version)
    earlier = sorted((r for r in Release.objects.filter(project_id=release.project_id, status__in=BUILT,
                                                          held_items__isnull=False).exclude(pk=release.pk)
                      if version_key(r.version) < key), key=lambda r: version_key(r.version), reverse=True)
    result: dict[str, Any] = {"against": [r.version for r in earlier], "exact": {}, "near": {}, "hits": [],
                              "clean": True}
    checked = [(name, code) for code, name in enumerate(held.split_names) if name in CHECKED_SPLITS]
    if not earlier or not checked:
        return result
    groups = _groups_of(held.ids, links)
    found: dict[int, tuple[str, str, str]] = {}
    for other in earlier:
        past = held_of(other)
        if TRAINING_SPLIT not in past.split_names:
            continue
        train = past.splits == past.split_names.index(TRAINING_SPLIT)
        train_ids, train_texts = past.ids[train], past.texts[train]
        train_groups = _groups_of(train_ids, links)
        train_groups = train_groups[train_groups >= 0]
        for name, code in checked:
            at = np.flatnonzero(held.splits == code)
            exact = np.isin(held.ids[at], train_ids) | np.isin(held.texts[at], train_texts)
            near = ~exact & (groups[at] >= 0) & np.isin(groups[at], train_groups)
            for kind, mask in (("exact", exact), ("near", near)):
                for item in held.ids[at][mask].tolist():
                    previous = found.get(item)
                    if previous is None or (previous[1] == "near" and kind == "exact"):
                        found[item] = (name, kind, other.version)
    for item, (name, kind, version) in sorted(found.items()):
        bucket = result[kind]
        bucket[name] = bucket.get(name, 0) + 1
        result["hits"].append({"item": item, "split": name, "kind": kind, "release": version})
    result["by_split"] = [{"split": name, "exact": result["exact"].get(name, 0), "near": result["near"].get(name, 0)}
                          for name, _code in checked]
    result["clean"] = not found
    return result
