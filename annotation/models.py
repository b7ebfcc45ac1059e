"""The data model of annotation work.

Invariants that matter for correctness live in the database (unique constraints, partial unique
indexes), so that concurrent requests and background jobs cannot break them.
"""

from __future__ import annotations

import hashlib
import unicodedata
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.db import models
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce
from django.utils.translation import gettext_lazy as _

from .task_types import TaskType, get_task_type, slugs


def task_type_choices() -> list[tuple[str, str]]:
    from .task_types import all_task_types

    return [(t.slug, f"{t.slug} — {t.klue_name}") for t in all_task_types()]


def content_hash(text: str) -> str:
    """Hash of the normalised text (NFKC, collapsed whitespace): equal for exact duplicates."""
    normalised = " ".join(unicodedata.normalize("NFKC", text).split())
    return hashlib.sha256(normalised.encode("utf-8")).hexdigest()


class User(AbstractUser):
    """A person (or an imported original annotator, who can never log in)."""

    is_imported = models.BooleanField(
        default=False, help_text=_("Created by an import to hold a corpus's original annotator; cannot log in.")
    )
    #: WCAG 2.1.4: keys without a modifier (digits, letters) can be turned off; buttons and Alt/Ctrl keys stay.
    single_key_shortcuts = models.BooleanField(
        default=True, help_text=_("Widget shortcuts on single keys (digits, letters) in the workspace.")
    )

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.is_imported:
            self.set_unusable_password()
            self.is_active = False
        super().save(*args, **kwargs)


class Role(models.TextChoices):
    ANNOTATOR = "annotator", _("Annotator")
    MANAGER = "manager", _("Project manager")
    MAINTAINER = "maintainer", _("Dataset maintainer")


class Project(models.Model):
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    task_type = models.CharField(max_length=20, choices=task_type_choices)
    #: Labels, ontology, score range…: starts as the task type's default schema, editable.
    label_schema = models.JSONField(default=dict, blank=True)
    annotators_per_item = models.PositiveSmallIntegerField(default=3)
    #: Project options (e.g. ``pii`` policy, ``lease_minutes``, STS score ``step``).
    options = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=Q(annotators_per_item__gte=1), name="project_k_at_least_one"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def task(self) -> TaskType:
        return get_task_type(self.task_type)

    @property
    def stage_names(self) -> list[str]:
        return [s.name for s in self.task.stages]

    def annotations_needed(self, stage: str) -> int:
        """How many annotations each item needs in a stage (k, unless the stage fixes it)."""
        return self.task.stage(stage).annotators or self.annotators_per_item

    def clean(self) -> None:
        from django.core.exceptions import ValidationError

        if self.task_type not in slugs():
            raise ValidationError({"task_type": f"unknown task type {self.task_type!r}"})


class Membership(models.Model):
    """A user's role in one project (a user can hold different roles in different projects)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=20, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "role", "user__username"]
        constraints = [models.UniqueConstraint(fields=["project", "user"], name="membership_unique_user")]

    def __str__(self) -> str:
        return f"{self.user} — {self.role} in {self.project}"


class Guideline(models.Model):
    """One version of a project's annotation guideline (Markdown sections)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="guidelines")
    version = models.PositiveIntegerField()
    instructions = models.TextField(help_text=_("Task instructions (Markdown)."))
    ethics = models.TextField(help_text=_("Ethics section (Markdown)."))
    pii = models.TextField(help_text=_("PII handling section (Markdown)."))
    change_note = models.CharField(max_length=300, blank=True)
    published_at = models.DateTimeField(null=True, blank=True)
    #: Exactly one published version per project is current (partial unique index below).
    is_current = models.BooleanField(default=False)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["project", "version"], name="guideline_unique_version"),
            models.UniqueConstraint(fields=["project"], condition=Q(is_current=True),
                                    name="guideline_one_current_per_project"),
            models.CheckConstraint(condition=Q(is_current=False) | Q(published_at__isnull=False),
                                   name="guideline_current_is_published"),
        ]

    def __str__(self) -> str:
        return f"{self.project} guideline v{self.version}"

    @property
    def is_published(self) -> bool:
        return self.published_at is not None


class GuidelineAcknowledgement(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="acknowledgements")
    guideline = models.ForeignKey(Guideline, on_delete=models.CASCADE, related_name="acknowledgements")
    acknowledged_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-acknowledged_at"]
        constraints = [models.UniqueConstraint(fields=["user", "guideline"], name="acknowledgement_unique")]

    def __str__(self) -> str:
        return f"{self.user} read {self.guideline}"


class Source(models.Model):
    """Where items come from, with the licence that decides whether they can be redistributed.

    Sources belong to the project that imported them: another project importing under the same name gets its
    own, so no project learns another's source names, licences or provenance.
    """

    project = models.ForeignKey("Project", null=True, blank=True, on_delete=models.CASCADE, related_name="sources")
    name = models.CharField(max_length=200)
    license = models.CharField(max_length=100, help_text=_("SPDX licence identifier, e.g. CC-BY-SA-4.0."))
    url = models.URLField(blank=True)
    provenance = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="source_unique_per_project")]

    def __str__(self) -> str:
        return f"{self.name} ({self.license})"


class Split(models.TextChoices):
    NONE = "", _("Unassigned")
    TRAIN = "train", _("Train")
    DEV = "dev", _("Dev")
    TEST = "test", _("Test")


class ScreeningStatus(models.TextChoices):
    PENDING = "pending", _("Not screened")
    CLEAR = "clear", _("Clear")
    NEEDS_REVIEW = "needs_review", _("Needs review")
    KEPT = "kept", _("Reviewed and kept")
    DROPPED = "dropped", _("Dropped")


#: Items with these statuses may be shown to annotators.
ANNOTATABLE_SCREENING = (ScreeningStatus.CLEAR, ScreeningStatus.KEPT)


class Item(models.Model):
    """One unit of annotation work: a headline, a sentence pair, a passage, a dialogue…"""

    #: Indexed by ``item_project_screening`` (project first); a second index would only slow imports.
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="items", db_index=False)
    # RESTRICT, not PROTECT: a source cannot be deleted while items use it, except with its project (both go).
    source = models.ForeignKey(Source, null=True, blank=True, on_delete=models.RESTRICT, related_name="items")
    external_id = models.CharField(max_length=200, blank=True, help_text=_("E.g. the KLUE guid."))
    payload = models.JSONField(help_text=_("The task's unit, validated by the task type."))
    #: Original fields kept for a faithful export but not shown to annotators (url, date, …).
    meta = models.JSONField(default=dict, blank=True)
    content_hash = models.CharField(max_length=64)
    group_key = models.CharField(max_length=200, blank=True,
                                 help_text=_("Items sharing a group (passage, premise, dialogue) stay in one split."))
    split = models.CharField(max_length=10, choices=Split.choices, blank=True, default=Split.NONE)
    screening_status = models.CharField(max_length=20, choices=ScreeningStatus.choices,
                                        default=ScreeningStatus.CLEAR)
    #: Findings of the PII screener: type, offsets and a salted hash — never the raw value.
    pii_findings = models.JSONField(default=list, blank=True)
    #: Gold / attention item: has a known answer and is scored per annotator.
    is_gold_check = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "external_id"], condition=~Q(external_id=""),
                                    name="item_unique_external_id"),
        ]
        indexes = [
            models.Index(fields=["project", "screening_status"], name="item_project_screening"),
            # Equality lookups only: no second, pattern-matching index as ``db_index=True`` adds on PostgreSQL.
            models.Index(fields=["content_hash"], name="item_content_hash"),
        ]

    def __str__(self) -> str:
        return self.external_id or f"item {self.pk}"


class Suggestion(models.Model):
    """A model's answer for one item in one stage, offered to annotators as a pre-filled starting point.

    Rows come from the project's suggester (its baseline retrained on the current gold, or an uploaded
    predictions file); each training run or upload writes a new ``model_version`` and makes it current.
    Rows that an assignment or annotation refers to are kept when superseded (so the record of what an
    annotator saw survives); the others are deleted.
    """

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="suggestions")
    stage = models.CharField(max_length=30)
    payload = models.JSONField(help_text=_("An annotation payload of the task, validated like an annotator's."))
    #: 0..1: how sure the model is of this answer (None when an uploaded file gives none).
    confidence = models.FloatField(null=True, blank=True)
    #: 0..1, larger = less sure (1 − margin, or normalised entropy): the uncertainty-first queue order.
    uncertainty = models.FloatField(null=True, blank=True)
    #: Margin, entropy and per-part confidences, as the suggester computed them.
    detail = models.JSONField(default=dict, blank=True)
    model_version = models.CharField(max_length=120)
    #: ``baseline`` (trained on the project's gold) or ``upload`` (a predictions file).
    source = models.CharField(max_length=20)
    is_current = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["item_id", "stage", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["item", "stage", "model_version"], name="suggestion_unique_version"),
            models.UniqueConstraint(fields=["item", "stage"], condition=Q(is_current=True),
                                    name="suggestion_one_current"),
        ]
        indexes = [models.Index(fields=["item", "stage", "is_current"], name="suggestion_current")]

    def __str__(self) -> str:
        return f"suggestion for {self.item} ({self.stage}, {self.model_version})"


class AssignmentStatus(models.TextChoices):
    LEASED = "leased", _("In progress")
    SUBMITTED = "submitted", _("Submitted")
    SKIPPED = "skipped", _("Skipped")
    FLAGGED = "flagged", _("Flagged")
    EXPIRED = "expired", _("Lease expired")


class SuggestionArm(models.TextChoices):
    UNDECIDED = "", _("Not decided yet")
    #: A suggestion was shown.
    ASSISTED = "assisted", _("Suggestion shown")
    #: Eligible, but the fraction put it in the unassisted (control) share.
    CONTROL = "control", _("Control: no suggestion")
    #: Never eligible: suggestions off, a gold / attention item, a writing stage, or no suggestion for the item.
    NONE = "none", _("No suggestion available")


class Assignment(models.Model):
    """An item handed to one annotator for one stage, reserved until ``lease_expires_at``."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments")
    stage = models.CharField(max_length=30)
    status = models.CharField(max_length=20, choices=AssignmentStatus.choices, default=AssignmentStatus.LEASED)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    skip_reason = models.CharField(max_length=300, blank=True)
    #: Whether this assignment shows a model's suggestion, decided once when it is first handed out.
    suggestion_arm = models.CharField(max_length=12, choices=SuggestionArm.choices, blank=True,
                                      default=SuggestionArm.UNDECIDED)
    #: The suggestion shown (arm ``assisted``); submit compares the annotation with exactly this one.
    suggestion = models.ForeignKey("Suggestion", null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="assignments")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["item", "annotator", "stage"], name="assignment_unique"),
            models.CheckConstraint(condition=Q(suggestion__isnull=True) | Q(suggestion_arm="assisted"),
                                   name="assignment_suggestion_only_when_assisted"),
        ]
        indexes = [
            models.Index(fields=["item", "stage", "status"], name="assignment_item_stage_status"),
            models.Index(fields=["annotator", "status"], name="assignment_annotator_status"),
            # The take's lazy expiry looks for open leases that ran out.
            models.Index(fields=["lease_expires_at"], condition=Q(status="leased"), name="assignment_open_lease"),
        ]

    def __str__(self) -> str:
        return f"{self.item} → {self.annotator} ({self.stage}, {self.status})"


#: Assignment statuses that hold a place for their item in the queue counter (``QueueSlot.live``).
SLOT_HOLDING = (AssignmentStatus.LEASED, AssignmentStatus.SUBMITTED)


#: The "uncertainty" queue order's sort key: priority, unset last. An expression rather than ``NULLS LAST``,
#: which SQLite does not allow in an index.
UNSET_PRIORITY_LAST = Coalesce(F("priority"), Value(-1e308))


class QueueSlot(models.Model):
    """The queue's per-(item, stage) counter: how many assignments hold a place (leased or submitted).

    Maintained in the same transaction as every assignment status change, so the take is an index range
    scan instead of a count per item. A lease past its expiry still counts until it is marked expired
    (by ``annotation.expire_leases`` or lazily by the take). ``priority`` orders the queue when the
    project's ``options["queue_order"]`` is ``"uncertainty"`` (highest first, unset last).
    """

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="queue_slots")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="queue_slots")
    stage = models.CharField(max_length=30)
    live = models.PositiveIntegerField(default=0)
    #: The item's k in this stage: the stage's fixed number, else the project's budget for the item
    #: (``annotation.budget``), written when the slot is made and whenever the budget or the item's split changes.
    needed = models.PositiveSmallIntegerField(default=1)
    priority = models.FloatField(null=True, blank=True)

    class Meta:
        #: (project, stage, item) rather than (item, stage): the same uniqueness, and it finds the newest slot.
        constraints = [models.UniqueConstraint(fields=["project", "stage", "item"], name="queueslot_unique"),
                       models.CheckConstraint(condition=Q(needed__gte=1), name="queueslot_needed_at_least_one")]
        indexes = [
            models.Index(fields=["project", "stage", "-live", "item"], name="queueslot_take"),
            models.Index(F("project"), F("stage"), UNSET_PRIORITY_LAST.desc(), F("item"),
                         name="queueslot_take_priority"),
        ]

    def __str__(self) -> str:
        return f"{self.item_id} {self.stage}: {self.live}"


class ItemAssignee(models.Model):
    """An annotator a manager chose for an item: an item with assignees is offered to them alone (every stage),
    still to k of them; items without any go to every annotator of the project."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="assignees", db_index=False)
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    assigned_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["item_id", "annotator_id"]
        # (item, annotator): the take's probe of an item's assignees, and one row per pair.
        constraints = [models.UniqueConstraint(fields=["item", "annotator"], name="itemassignee_unique")]

    def __str__(self) -> str:
        return f"{self.item_id} → {self.annotator_id}"


class Annotation(models.Model):
    #: Indexed by ``annotation_item_stage`` and ``annotation_unique`` (item first).
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="annotations", db_index=False)
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="annotations")
    stage = models.CharField(max_length=30)
    payload = models.JSONField()
    guideline = models.ForeignKey(Guideline, null=True, blank=True, on_delete=models.PROTECT, db_index=False,
                                  related_name="annotations", help_text=_("The guideline version in force."))
    seconds_spent = models.FloatField(null=True, blank=True)
    imported = models.BooleanField(default=False, help_text=_("Came with the corpus (e.g. KLUE's own annotators)."))
    #: Model-assisted annotation: the suggestion the annotator saw (recorded at submit from the assignment).
    suggestion = models.ForeignKey("Suggestion", null=True, blank=True, on_delete=models.PROTECT, db_index=False,
                                   related_name="annotations")
    suggestion_shown = models.BooleanField(default=False)
    #: True when the submitted payload equals the suggestion; None when none was shown.
    suggestion_accepted = models.BooleanField(null=True, blank=True)
    #: Part by part (spans, arcs, turns…): accepted, changed, added — see ``TaskType.suggestion_parts``.
    suggestion_parts = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["item_id", "stage", "created_at"]
        constraints = [
            models.UniqueConstraint(fields=["item", "annotator", "stage"], name="annotation_unique"),
        ]
        indexes = [
            models.Index(fields=["item", "stage"], name="annotation_item_stage"),
            # Imported labels have neither: partial indexes keep their NULLs out (imports write many).
            models.Index(fields=["guideline"], condition=Q(guideline__isnull=False), name="annotation_guideline_given"),
            models.Index(fields=["suggestion"], condition=Q(suggestion__isnull=False),
                         name="annotation_suggestion_given"),
        ]

    def __str__(self) -> str:
        return f"{self.annotator} on {self.item} ({self.stage})"


class FlagKind(models.TextChoices):
    PII = "pii", _("Personal information")
    TOXIC = "toxic", _("Toxic or hateful")
    BIAS = "bias", _("Social bias")
    COPYRIGHT = "copyright", _("Copyright")
    # The TC guideline asks for it when a headline fits no topic clearly.
    AMBIGUOUS = "ambiguous", _("Ambiguous")
    OTHER = "other", _("Other")


class FlagResolution(models.TextChoices):
    OPEN = "open", _("Open")
    KEPT = "kept", _("Kept the item")
    FIXED = "fixed", _("Fixed the item")
    DROPPED = "dropped", _("Dropped the item")


class Flag(models.Model):
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="flags")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                             related_name="flags", help_text=_("Empty when raised by a screener."))
    kind = models.CharField(max_length=20, choices=FlagKind.choices)
    note = models.TextField(blank=True)
    resolution = models.CharField(max_length=20, choices=FlagResolution.choices, default=FlagResolution.OPEN)
    resolution_note = models.TextField(blank=True)
    resolved_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="+")
    resolved_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["item", "resolution"], name="flag_item_resolution")]

    def __str__(self) -> str:
        return f"{self.kind} flag on {self.item}"


# -- workspace drafts ---------------------------------------------------------------------------


class Draft(models.Model):
    """The annotator's unfinished work on one assignment, saved as they go so a reload loses nothing.

    The browser also keeps a copy in local storage; whichever is newer wins when the item is reopened.
    """

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="draft")
    payload = models.JSONField(default=dict, blank=True, help_text=_("The widget's state, not yet validated."))
    #: Active seconds spent so far, carried over a reload and sent with the submission.
    seconds_spent = models.FloatField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"draft of {self.assignment}"


# -- agreement, gold and adjudication --------------------------------------------------------------


class JobStatus(models.TextChoices):
    PENDING = "pending", _("Queued")
    RUNNING = "running", _("Running")
    DONE = "done", _("Done")
    FAILED = "failed", _("Failed")


class AgreementReport(models.Model):
    """A computed agreement report, valid while the project's annotations are unchanged.

    ``annotation_count`` and ``annotations_changed_at`` are the fingerprint it was computed on: a new or
    resubmitted annotation changes one of them, and the next request computes a fresh report.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="agreement_reports")
    annotation_count = models.PositiveIntegerField()
    annotations_changed_at = models.CharField(max_length=40, blank=True,
                                              help_text=_("Latest annotation change seen (ISO time)."))
    status = models.CharField(max_length=10, choices=JobStatus.choices, default=JobStatus.PENDING)
    #: 0–100, written by the background job as it goes.
    progress = models.PositiveSmallIntegerField(default=0)
    progress_note = models.CharField(max_length=200, blank=True)
    task_id = models.CharField(max_length=64, blank=True)
    data = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    seconds = models.FloatField(null=True, blank=True)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["project", "-created_at"], name="agreement_report_latest")]

    def __str__(self) -> str:
        return f"agreement of {self.project} on {self.annotation_count} annotations ({self.status})"


class GoldStatus(models.TextChoices):
    RESOLVED = "resolved", _("Resolved by the gold rule")
    ADJUDICATED = "adjudicated", _("Adjudicated by a manager")
    KNOWN = "known", _("Known answer (gold / attention item)")
    NEEDS_ADJUDICATION = "needs_adjudication", _("Needs adjudication")
    DISCARDED = "discarded", _("Discarded by the gold rule")
    INCOMPLETE = "incomplete", _("Waiting for annotations")
    EXCLUDED = "excluded", _("Excluded (flagged or dropped)")


#: Statuses whose payload is a gold label a release may use.
USABLE_GOLD = (GoldStatus.RESOLVED, GoldStatus.ADJUDICATED, GoldStatus.KNOWN)
#: Statuses set by a person; recomputing the rule never overwrites them.
MANUAL_GOLD = (GoldStatus.ADJUDICATED, GoldStatus.KNOWN)


class GoldLabel(models.Model):
    """The current gold answer of one item, with the rule (or person) that produced it."""

    item = models.OneToOneField(Item, on_delete=models.CASCADE, related_name="gold")
    payload = models.JSONField(null=True, blank=True)
    status = models.CharField(max_length=20, choices=GoldStatus.choices)
    rule = models.CharField(max_length=30, help_text=_("majority, mean, span_majority, unanimous, dawid_skene, "
                                                       "adjudication, known_answer…"))
    #: Votes, posteriors or the reason a rule gave no answer.
    detail = models.JSONField(default=dict, blank=True)
    annotation_count = models.PositiveIntegerField(default=0)
    #: Bumped on every change; an adjudication names the version it saw, so a stale decision conflicts.
    version = models.PositiveIntegerField(default=1)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["item_id"]
        indexes = [models.Index(fields=["status"], name="gold_status")]

    def __str__(self) -> str:
        return f"gold of {self.item} ({self.status})"


class GoldState(models.Model):
    """What the project's gold table was last computed from: a digest of everything the gold rule reads (the
    items and their screening, the annotations, the open flags, the rule's settings) and of the gold rows the
    computation left. A release recomputes the gold only when today's digest differs
    (``annotation.gold.services.gold_compute`` with ``when_stale``)."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, primary_key=True, related_name="gold_state")
    fingerprint = models.CharField(max_length=64)
    computed_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"gold state of {self.project}"


class Adjudication(models.Model):
    """A manager's decision on an item: the payload chosen, who decided, why, and what the rule said."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="adjudications")
    payload = models.JSONField()
    #: The annotation accepted as gold, when the manager took one annotator's answer as it was.
    source_annotation = models.ForeignKey(Annotation, null=True, blank=True, on_delete=models.SET_NULL,
                                          related_name="+")
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    reason = models.TextField()
    previous_status = models.CharField(max_length=20, blank=True)
    previous_payload = models.JSONField(null=True, blank=True)
    annotation_count = models.PositiveIntegerField(default=0)
    decided_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-decided_at"]

    def __str__(self) -> str:
        return f"adjudication of {self.item} by {self.decided_by}"


class AuditObject(models.TextChoices):
    ANNOTATION = "annotation", _("annotation")
    GOLD = "gold", _("gold decision")
    GUIDELINE = "guideline", _("guideline")
    RELEASE = "release", _("release")
    IMPORT = "import", _("import")
    SCREENING = "screening", _("screening review")
    PROJECT = "project", _("project settings")
    ASSIGNEES = "assignees", _("item assignees")


class AuditEvent(models.Model):
    """One recorded change: who did what to which object of a project, when, and the state before and after.

    Written by the services in the same transaction as the change (so a rolled-back change leaves no
    event); an import is one event, not one per imported item or annotation.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="audit_events")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    at = models.DateTimeField(auto_now_add=True)
    object_type = models.CharField(max_length=20, choices=AuditObject.choices)
    object_id = models.PositiveBigIntegerField(null=True, blank=True)
    action = models.CharField(max_length=30)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["project", "object_type", "-at"], name="audit_project_type_at")]

    def __str__(self) -> str:
        return f"{self.action} {self.object_type} {self.object_id} by {self.actor}"


# The webhook models are the annotation app's too (its lowest layer with events): imported here so the app registry
# and the migrations find them, and the rest of the code reaches them here like every other model.
from .sso.models import SsoIdentity  # noqa: E402, F401
from .webhooks.models import (  # noqa: E402, F401
    DeliveryStatus,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
)
