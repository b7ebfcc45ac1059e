"""Releases: immutable, versioned snapshots of a project's gold data with their files.

A release is built once (``building → checking → passed | inconclusive | unchecked | failed``, or
``error``), may then be published (``passed``, or ``inconclusive`` with a recorded override), and from
then on never changes: the model refuses to save or delete a published row, its queryset refuses bulk
updates and deletes that touch one, and a ``pre_delete`` signal stops cascades (deleting the project)
from removing it. The services lock the row before every change, so a publish racing a rebuild cannot
slip through either.
"""

from __future__ import annotations

import re
import zlib
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import models
from django.db.models.signals import pre_delete
from django.dispatch import receiver
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from annotation.models import Project

if TYPE_CHECKING:
    import numpy as np  # imported where used: every process loads the models, not every one needs numpy

#: Semantic version (https://semver.org): MAJOR.MINOR.PATCH with optional pre-release and build parts.
SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)


class ReleaseStatus(models.TextChoices):
    BUILDING = "building", _("Building")
    CHECKING = "checking", _("Running the baseline check")
    PASSED = "passed", _("Passed")
    #: The baseline check ran but its evidence (dev size, confidence interval) allows no verdict.
    INCONCLUSIVE = "inconclusive", _("Inconclusive")
    #: The baseline check could not run (e.g. no KLUE train and dev files to train on).
    UNCHECKED = "unchecked", _("Not checked")
    FAILED = "failed", _("Failed the checks")
    PUBLISHED = "published", pgettext_lazy("release status", "Published")
    ERROR = "error", _("Build error")


#: Statuses in which a build is over (the job has nothing left to do).
FINISHED = (ReleaseStatus.PASSED, ReleaseStatus.INCONCLUSIVE, ReleaseStatus.UNCHECKED, ReleaseStatus.FAILED,
            ReleaseStatus.PUBLISHED, ReleaseStatus.ERROR)
#: Statuses whose files are complete (they may be downloaded).
BUILT = (ReleaseStatus.PASSED, ReleaseStatus.INCONCLUSIVE, ReleaseStatus.UNCHECKED, ReleaseStatus.FAILED,
         ReleaseStatus.PUBLISHED)


class ImmutableReleaseError(Exception):
    """A change to a published release (or one of its files) was attempted."""


class ReleaseQuerySet(models.QuerySet):
    """Bulk updates and deletes must not reach published releases either."""

    def update(self, **kwargs: Any) -> int:
        if self.filter(status=ReleaseStatus.PUBLISHED).exists():
            raise ImmutableReleaseError("a published release cannot be changed")
        return super().update(**kwargs)

    def delete(self) -> tuple[int, dict[str, int]]:
        if self.filter(status=ReleaseStatus.PUBLISHED).exists():
            raise ImmutableReleaseError("a published release cannot be deleted")
        return super().delete()


class Release(models.Model):
    """One versioned snapshot of a project: split specification, counts, provenance, checks, files."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="releases")
    version = models.CharField(max_length=64, help_text=_("Semantic version, unique per project (1.0.0)."))
    status = models.CharField(max_length=20, choices=ReleaseStatus.choices, default=ReleaseStatus.BUILDING)
    #: {"mode": "ratios", "ratios": {"train": 0.8, …}, "seed": 13} or {"mode": "keep"}.
    split_spec = models.JSONField(default=dict)
    seed = models.IntegerField(null=True, blank=True)
    formats = models.JSONField(default=list)
    #: Build options ({"agreement": true, "check_margin": …}).
    options = models.JSONField(default=dict, blank=True)
    #: Where the release folder lives: a folder on disk (``<out>/<project-slug>-<version>``, an absolute path), or
    #: ``<project-slug>-<version>`` in the ``releases`` bucket (config/storage.py).
    out_dir = models.CharField(max_length=1000, blank=True)
    #: The gold source and rule(s) used, and how many items each status excluded.
    gold = models.JSONField(default=dict, blank=True)
    guideline_versions = models.JSONField(default=list, blank=True)
    #: {split: n} and {split: {label: n}}.
    split_counts = models.JSONField(default=dict, blank=True)
    label_counts = models.JSONField(default=dict, blank=True)
    #: Items left out and why (``release_exclusion``'s reasons: {"screening_needs_review": 3, "open_flag": 1, …}).
    excluded = models.JSONField(default=dict, blank=True)
    leakage = models.JSONField(default=dict, blank=True)
    #: Dev and test items found in the training split of an earlier release (``exports.diff.contamination``):
    #: {"against": [versions], "exact": {split: n}, "near": {split: n}, "hits": [...], "clean": bool}.
    contamination = models.JSONField(default=dict, blank=True)
    agreement = models.JSONField(default=dict, blank=True)
    #: PII findings by type, screening statuses and flags: what the card reports.
    screening = models.JSONField(default=dict, blank=True)
    annotators = models.JSONField(default=dict, blank=True)
    sources = models.JSONField(default=list, blank=True)
    #: The baseline check: {"verdict", "passed": bool | None, "metrics", "trivial", "interval", "reasons", …}.
    baseline_check = models.JSONField(default=dict, blank=True)
    #: {"phase": "items", "done": n, "total": m} while building.
    progress = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    published_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="+")
    published_at = models.DateTimeField(null=True, blank=True)
    #: Why an ``inconclusive`` release was published all the same (also in the audit trail).
    publish_override = models.TextField(blank=True)

    objects = ReleaseQuerySet.as_manager()

    class Meta:
        ordering = ["project", "-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "version"], name="release_unique_version"),
            models.CheckConstraint(condition=~models.Q(status="published") | models.Q(published_at__isnull=False),
                                   name="release_published_has_date"),
        ]

    def __str__(self) -> str:
        return f"{self.project.slug} {self.version} ({self.status})"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None and Release.objects.filter(pk=self.pk, status=ReleaseStatus.PUBLISHED).exists():
            raise ImmutableReleaseError(f"release {self.version} is published and cannot be changed")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        if Release.objects.filter(pk=self.pk, status=ReleaseStatus.PUBLISHED).exists():
            raise ImmutableReleaseError(f"release {self.version} is published and cannot be deleted")
        return super().delete(*args, **kwargs)

    @property
    def is_published(self) -> bool:
        return self.status == ReleaseStatus.PUBLISHED


class ReleaseFile(models.Model):
    """One file of a release folder with its checksum (``path`` is relative to the folder)."""

    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="files")
    path = models.CharField(max_length=500)
    #: klue, jsonl, csv, parquet, card, manifest, checksums.
    kind = models.CharField(max_length=20)
    split = models.CharField(max_length=10, blank=True)
    records = models.PositiveIntegerField(null=True, blank=True)
    size = models.PositiveBigIntegerField()
    sha256 = models.CharField(max_length=64)

    class Meta:
        ordering = ["release", "path"]
        constraints = [models.UniqueConstraint(fields=["release", "path"], name="release_file_unique_path")]

    def __str__(self) -> str:
        return f"{self.release} / {self.path}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if Release.objects.filter(pk=self.release_id, status=ReleaseStatus.PUBLISHED).exists():
            raise ImmutableReleaseError("the files of a published release cannot be changed")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        if Release.objects.filter(pk=self.release_id, status=ReleaseStatus.PUBLISHED).exists():
            raise ImmutableReleaseError("the files of a published release cannot be deleted")
        return super().delete(*args, **kwargs)


@receiver(pre_delete, sender=Release)
def _refuse_published_release_delete(sender: type[Release], instance: Release, **kwargs: Any) -> None:
    # Cascades (deleting the project) bypass Model.delete but still send pre_delete.
    if instance.status == ReleaseStatus.PUBLISHED:
        raise ImmutableReleaseError(f"release {instance.version} of {instance.project_id} is published")


@receiver(pre_delete, sender=ReleaseFile)
def _refuse_published_file_delete(sender: type[ReleaseFile], instance: ReleaseFile, **kwargs: Any) -> None:
    if Release.objects.filter(pk=instance.release_id, status=ReleaseStatus.PUBLISHED).exists():
        raise ImmutableReleaseError("the files of a published release cannot be deleted")


class RaterId(models.Model):
    """The opaque id (``r01``, ``r02``, …) under which one annotator appears in a project's releases.

    Given in the order annotators are first seen by a release build (by their first annotation in the
    project) and never changed or reused afterwards, so an id means the same person in every release of the
    project. Imported corpus annotators get one too. Only managers see the mapping to accounts.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="rater_ids")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    number = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "number"]
        constraints = [
            models.UniqueConstraint(fields=["project", "user"], name="rater_id_unique_user"),
            models.UniqueConstraint(fields=["project", "number"], name="rater_id_unique_number"),
        ]

    def __str__(self) -> str:
        return f"{self.project_id} {self.code}"

    @property
    def code(self) -> str:
        return rater_code(self.number)


def rater_code(number: int) -> str:
    """``r01`` … ``r99``, ``r100`` …"""
    return f"r{number:02d}"


class ReleaseSplits(models.Model):
    """The splits a ratio release chose for its items, in one row: the item ids and each one's split as a byte
    indexing ``names``, packed by :meth:`packed`. Recorded with the release's final state, then copied onto the
    items' ``split`` (``applied``), so a later ``--keep-splits`` build reproduces the release; this row keeps
    which release chose them. One row per release rather than one per item: a 100,000-item release wrote
    100,000 rows (and their foreign-key checks) for a record nothing reads row by row (docs/performance.md)."""

    release = models.OneToOneField(Release, on_delete=models.CASCADE, primary_key=True, related_name="chosen_splits")
    names = models.JSONField()
    item_ids = models.BinaryField()
    codes = models.BinaryField()
    #: Whether the items' ``split`` holds these (or a newer release's) splits (``services.release_splits_apply``).
    applied = models.BooleanField(default=False)

    def __str__(self) -> str:
        return f"{self.release_id}: {', '.join(self.names)}"

    @staticmethod
    def packed(ids: np.ndarray, codes: np.ndarray) -> dict[str, bytes]:
        """``item_ids`` and ``codes`` for ``ids`` (ascending) and their codes: the gaps between the ids (the first
        id itself first) as 64-bit little-endian numbers and the codes as bytes, each compressed by zlib. 100,000
        items' 0.9 MB took 60 ms to write as the release became final, 7 ms packed (their ids are mostly
        consecutive)."""
        import numpy as np

        return {"item_ids": zlib.compress(np.diff(ids, prepend=0).astype("<i8").tobytes(), 1),
                "codes": zlib.compress(np.asarray(codes, dtype=np.uint8).tobytes(), 1)}

    def unpacked(self) -> tuple[np.ndarray, np.ndarray]:
        """The item ids (ascending) and their codes, as :meth:`packed` stored them."""
        import numpy as np

        return (np.cumsum(np.frombuffer(zlib.decompress(bytes(self.item_ids)), dtype="<i8")),
                np.frombuffer(zlib.decompress(bytes(self.codes)), dtype=np.uint8))

    def as_dict(self) -> dict[int, str]:
        """Item id → the split this release chose for it."""
        ids, codes = self.unpacked()
        return {item_id: self.names[code] for item_id, code in zip(ids.tolist(), codes.tolist(), strict=True)}


class SuggesterRunKind(models.TextChoices):
    TRAIN = "train", _("Retrain the baseline on the current gold")
    UPLOAD = "upload", _("Uploaded predictions file")


class SuggesterRunStatus(models.TextChoices):
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    DONE = "done", _("Done")
    FAILED = "failed", _("Failed")


class SuggesterRun(models.Model):
    """One refresh of a project's suggestions: the baseline retrained on the current gold (a background job
    with progress), or an uploaded predictions file read into suggestions. ``metrics`` keeps the held-out
    score and the learning curve the expected-effect estimate is fitted on."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="suggester_runs")
    kind = models.CharField(max_length=10, choices=SuggesterRunKind.choices)
    status = models.CharField(max_length=10, choices=SuggesterRunStatus.choices, default=SuggesterRunStatus.QUEUED)
    #: 0–100, and what the job is doing now.
    progress = models.PositiveSmallIntegerField(default=0)
    progress_note = models.CharField(max_length=200, blank=True)
    #: Why the run was started: ``manual``, ``every_n_gold`` (the project's retrain_every), ``upload``.
    trigger = models.CharField(max_length=20, default="manual")
    model_version = models.CharField(max_length=120, blank=True)
    #: Gold items trained on (train) and items given a suggestion.
    gold_items = models.PositiveIntegerField(default=0)
    suggestions = models.PositiveIntegerField(default=0)
    #: {"primary", "holdout": {...}, "learning_curve": [{"n", "score"}], "stored": …}.
    metrics = models.JSONField(default=dict, blank=True)
    #: Uploads: the file name given, where it is stored (random, never served: an absolute path, or a name in the
    #: ``uploads`` bucket) and its format.
    file_name = models.CharField(max_length=255, blank=True)
    stored_path = models.CharField(max_length=500, blank=True)
    format = models.CharField(max_length=10, blank=True)
    error = models.TextField(blank=True)
    task_id = models.CharField(max_length=100, blank=True)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "-created_at"], name="suggester_run_latest")]

    def __str__(self) -> str:
        return f"suggester {self.kind} of {self.project} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in (SuggesterRunStatus.DONE, SuggesterRunStatus.FAILED)


def _pack_ids(ids: np.ndarray) -> bytes:
    """Ascending ids as their gaps (the first id itself first), 64-bit little-endian, compressed."""
    import numpy as np

    return zlib.compress(np.diff(np.asarray(ids, dtype=np.int64), prepend=0).astype("<i8").tobytes(), 1)


def _unpack_ids(data: bytes) -> np.ndarray:
    import numpy as np

    return np.cumsum(np.frombuffer(zlib.decompress(bytes(data)), dtype="<i8"))


def _pack_column(values: np.ndarray, dtype: str) -> bytes:
    import numpy as np

    return zlib.compress(np.asarray(values).astype(dtype).tobytes(), 1)


def _unpack_column(data: bytes, dtype: str) -> np.ndarray:
    import numpy as np

    return np.frombuffer(zlib.decompress(bytes(data)), dtype=dtype)


class ReleaseItems(models.Model):
    """What one release held, in one row (like :class:`ReleaseSplits`, for every release, ratio or kept
    splits): its items' ids (ascending) with, per item, its split, its label, a digest of its gold and a code
    of its text's content hash; and the items its build left out with the reason each was left out. The
    release diff (``exports/diff.py``) compares two of these; the columns are packed numpy arrays (at most 21
    bytes an item before zlib, whose ids compress to little more than nothing)."""

    release = models.OneToOneField(Release, on_delete=models.CASCADE, primary_key=True, related_name="held_items")
    #: The names the codes index: splits (``train``…), labels (the task's stratification label) and exclusion
    #: reasons (``release_exclusion``'s, and ``no_split``).
    split_names = models.JSONField()
    label_names = models.JSONField()
    reason_names = models.JSONField()
    item_ids = models.BinaryField()
    #: uint8 per item into ``split_names``.
    splits = models.BinaryField()
    #: int32 per item into ``label_names`` (-1: the record has no label).
    labels = models.BinaryField()
    #: uint64 per item: the first 8 bytes of BLAKE2b over the gold payload (0: the record's label came from the
    #: corpus or the annotations, not a gold decision).
    golds = models.BinaryField()
    #: int64 per item: ``datasets_build.splits.key_code`` of its content hash.
    texts = models.BinaryField()
    excluded_ids = models.BinaryField()
    #: uint8 per excluded item into ``reason_names``.
    excluded_reasons = models.BinaryField()

    def __str__(self) -> str:
        return f"items of release {self.release_id}"

    @staticmethod
    def packed(*, ids: np.ndarray, splits: np.ndarray, labels: np.ndarray, golds: np.ndarray, texts: np.ndarray,
               excluded_ids: np.ndarray, excluded_reasons: np.ndarray) -> dict[str, bytes]:
        """The binary columns for arrays in item-id order (``excluded_ids`` ascending too)."""
        return {"item_ids": _pack_ids(ids), "splits": _pack_column(splits, "u1"),
                "labels": _pack_column(labels, "<i4"), "golds": _pack_column(golds, "<u8"),
                "texts": _pack_column(texts, "<i8"), "excluded_ids": _pack_ids(excluded_ids),
                "excluded_reasons": _pack_column(excluded_reasons, "u1")}

    def unpacked(self) -> dict[str, np.ndarray]:
        return {"ids": _unpack_ids(self.item_ids), "splits": _unpack_column(self.splits, "u1"),
                "labels": _unpack_column(self.labels, "<i4"), "golds": _unpack_column(self.golds, "<u8"),
                "texts": _unpack_column(self.texts, "<i8"), "excluded_ids": _unpack_ids(self.excluded_ids),
                "excluded_reasons": _unpack_column(self.excluded_reasons, "u1")}


class ReferenceKind(models.TextChoices):
    FILE = "file", _("Uploaded file")
    PROJECT = "project", _("Another project")


class ContaminationReference(models.Model):
    """What a project's dev and test items are checked against besides its own releases: a file a maintainer
    uploaded (a public benchmark's split, in any format the import reads) or another project on this server
    that the maintainer named. ``training`` says whether it is training data: the default contamination policy
    fails a release whose test items are found in training data."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="contamination_references")
    kind = models.CharField(max_length=10, choices=ReferenceKind.choices)
    name = models.CharField(max_length=120)
    training = models.BooleanField(default=True)
    #: The named project (``project`` references); deleting it deletes the reference.
    other = models.ForeignKey(Project, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    #: Files: the name given, where it is stored (random, never served) and its format.
    file_name = models.CharField(max_length=255, blank=True)
    stored_path = models.CharField(max_length=500, blank=True)
    format = models.CharField(max_length=20, blank=True)
    #: Records the file held that the task type reads, and those it refused (checked on upload).
    records = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="contamination_reference_unique_name"),
            models.CheckConstraint(condition=(models.Q(kind="project") & models.Q(other__isnull=False))
                                   | (models.Q(kind="file") & models.Q(other__isnull=True)),
                                   name="contamination_reference_kind"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind}) for {self.project}"


class ContaminationCheck(models.Model):
    """A contamination check of a built release run on demand (the build's own is ``Release.contamination``,
    which a published release keeps as it was): the references it ran against and what it found, in the
    same shape."""

    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="contamination_checks")
    status = models.CharField(max_length=10, choices=SuggesterRunStatus.choices, default=SuggesterRunStatus.QUEUED)
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"contamination check of {self.release} ({self.status})"
