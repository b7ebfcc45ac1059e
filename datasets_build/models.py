"""Import jobs and the near-duplicate index of imported items (LSH bands, near-duplicate groups)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from annotation.models import Item, Project


class ImportFormat(models.TextChoices):
    KLUE = "klue", _("KLUE native file")
    JSONL = "jsonl", _("JSON Lines")
    CSV = "csv", _("CSV")
    DOCCANO = "doccano", _("doccano export (JSONL or ZIP)")
    LABELSTUDIO = "labelstudio", _("Label Studio export (JSON)")


class ImportStatus(models.TextChoices):
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    SUCCEEDED = "succeeded", _("Imported")
    FAILED = "failed", _("Failed; nothing was imported")


class ImportJob(models.Model):
    """One file going through the import pipeline; all of it is imported, or none of it."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="import_jobs")
    #: The name the uploader gave the file (shown); where it is stored is random and never served (an absolute
    #: path, or a name in the ``uploads`` bucket: config/storage.py).
    file_name = models.CharField(max_length=255)
    stored_path = models.CharField(max_length=500)
    format = models.CharField(max_length=20, choices=ImportFormat.choices)
    #: source, license, pii override, encoding, duplicates…, as given.
    options = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=20, choices=ImportStatus.choices, default=ImportStatus.QUEUED)
    records_read = models.PositiveIntegerField(default=0)
    records_screened = models.PositiveIntegerField(default=0)
    items_written = models.PositiveIntegerField(default=0)
    annotations_written = models.PositiveIntegerField(default=0)
    #: Every problem found (up to the cap) as {record, field, message}.
    errors = models.JSONField(default=list, blank=True)
    #: The screening summary: PII by type, toxic/bias hits, duplicates, near duplicates.
    summary = models.JSONField(default=dict, blank=True)
    message = models.CharField(max_length=500, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    celery_task_id = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"import {self.pk} of {self.file_name} into {self.project} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in (ImportStatus.SUCCEEDED, ImportStatus.FAILED)


class MinHashBand(models.Model):
    """One LSH band key of an item's MinHash signature.

    Keeping the bands in the database (not an in-memory LSH index) is what lets imports find near
    duplicates against the whole project with memory that does not grow with the corpus.

    Ten rows per imported item, so each row costs the server as little as it can: no database foreign keys
    (their deferred checks at commit and their indexes cost more than the rest of the import), and the
    primary key is the lookup's own ``(project, key)`` with the item, so one index serves both (a separate
    id and its index wrote a third of the import's WAL; docs/performance.md). Deleting a project or an item
    still deletes its bands — Django's deletion collector cascades through these relations (the project's
    by the primary key's prefix, an item's by a scan) — and the importer only writes bands for the items it
    has just inserted in the same transaction.
    """

    pk = models.CompositePrimaryKey("project", "key", "item")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+", db_constraint=False,
                                db_index=False)  # the primary key's prefix serves it
    key = models.BigIntegerField()
    #: Not indexed: deleting items (the admin, or a project with its items) scans the bands once per deletion;
    #: an index would cost every import ten entries per item.
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False)

    def __str__(self) -> str:
        return f"band {self.key} of item {self.item_id}"


class NearDuplicate(models.Model):
    """An item's membership of a near-duplicate group: items whose texts are nearly the same (estimated
    Jaccard similarity of character shingles), directly or through one another.

    One row per item that has a near duplicate, whatever the number of pairs (a sentence with ten near
    copies is ten rows, not forty-five pairs): the import joins groups as it finds links (union-find over
    the band candidates), so the table grows with the items. Like the bands, the rows have no database
    foreign keys (the import writes one per item; their checks at commit cost more than the rows), and
    Django's deletion collector still cascades from the project and the item.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="near_duplicates",
                                db_constraint=False, db_index=False)  # the group index's prefix serves it
    item = models.OneToOneField(Item, on_delete=models.CASCADE, related_name="near_duplicate", db_constraint=False)
    #: The group, named by the id of its first item (kept if that item is deleted: the others stay together).
    group = models.BigIntegerField()
    #: The earlier item this one was found most similar to when it was imported, and their estimated
    #: similarity; empty for an item that only later items were found similar to.
    duplicate_of = models.ForeignKey(Item, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
                                     db_constraint=False, db_index=False)
    similarity = models.FloatField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["project", "group"], name="near_duplicate_group")]

    def __str__(self) -> str:
        return f"{self.item_id} in near-duplicate group {self.group}"
