"""Reads for releases: the items a release takes, their annotations and gold, streamed in id order.

Nothing here loads a project whole: items, annotations and gold rows are each streamed ``CHUNK`` at a
time in item-id order and merged, so memory stays flat however big the project is.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson
from django.core.files import File
from django.db.models import Count, Exists, OuterRef, Q, QuerySet, TextField
from django.db.models.functions import Cast
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from annotation import models as annotation_models
from annotation.display import CORPUS_ANNOTATOR, display_message
from annotation.gold.selectors import DECIDING_GOLD, RELEASABLE_SCREENING
from annotation.models import Annotation, Flag, FlagResolution, Item, Project, ScreeningStatus, Source
from annotation.task_types import RecordAnnotation
from config.storage import StoredFolder

from .ahead import ReadAhead
from .card import CARD_NAME
from .models import (
    SEMVER,
    ContaminationCheck,
    ContaminationReference,
    Release,
    ReleaseFile,
    ReleaseStatus,
    SuggesterRun,
)

CHUNK = 5000

#: Where the gold of a release came from (recorded in the release and its card).
GOLD_TABLE = "gold_labels"
GOLD_FALLBACK = "fallback"
#: How task types name that label in a record (``annotation.task_types._records.CORPUS``).
CORPUS = ""


@dataclass(slots=True)
class ItemRow:
    """One item with what its KLUE record and the release bookkeeping need."""

    id: int
    external_id: str
    payload: dict[str, Any]
    meta: dict[str, Any]
    group_key: str
    content_hash: str
    split: str
    source_id: int | None
    pii_findings: list[dict[str, Any]]
    screening_status: str
    annotations: list[RecordAnnotation] = field(default_factory=list)
    guideline_versions: set[int] = field(default_factory=set)
    #: Distinct annotators per stage (corpus labels without an annotator do not count).
    annotators: dict[str, int] = field(default_factory=dict)
    gold: dict[str, Any] | None = None
    #: One of ``DECIDING_GOLD``, else ``None`` (no gold row, or one that decides nothing yet).
    gold_status: str | None = None
    #: Every annotation came with the corpus (its own labels, e.g. KLUE's), none from Goldset's annotators.
    corpus_only: bool = True
    #: Goldset annotations (not imported), those made with a model's suggestion shown, and those that kept
    #: the suggestion unchanged: the dataset card states how much of the gold was assisted.
    own_annotations: int = 0
    suggestions_shown: int = 0
    suggestions_accepted: int = 0


def releases_of(project: Project) -> QuerySet[Release]:
    return Release.objects.filter(project=project).select_related("created_by", "published_by").order_by(
        "-created_at", "-id")


def release_by_version(project: Project, version: str) -> Release | None:
    return Release.objects.filter(project=project, version=version).first()


def next_free_version(project: Project) -> str:
    """The patch after the project's highest version (1.0.1 after 1.0.0, 2.1.1 after 2.1.0-rc.1), or 1.0.0 for a
    first release: what the release form proposes, never a version that exists."""
    cores = [tuple(int(part) for part in match.groups()[:3])
             for match in map(SEMVER.match, Release.objects.filter(project=project).values_list("version", flat=True))
             if match]
    if not cores:
        return "1.0.0"
    major, minor, patch = max(cores)
    return f"{major}.{minor}.{patch + 1}"


def contamination_references(project: Project) -> QuerySet[ContaminationReference]:
    """The project's contamination references, by name."""
    return ContaminationReference.objects.filter(project=project).select_related("other", "created_by")


def contamination_checks(release: Release) -> QuerySet[ContaminationCheck]:
    """The checks of ``release`` run on demand, newest first."""
    return ContaminationCheck.objects.filter(release=release).select_related("requested_by")


def lendable_projects(project: Project, user: Any) -> QuerySet[Project]:
    """The other projects ``user`` may name as references of ``project``: those they manage or maintain
    (every project for a superuser)."""
    others = Project.objects.exclude(pk=project.pk).order_by("name")
    if getattr(user, "is_superuser", False):
        return others
    return others.filter(memberships__user=user, memberships__role__in=["manager", "maintainer"]).distinct()


def release_files(release: Release) -> QuerySet[ReleaseFile]:
    return ReleaseFile.objects.filter(release=release).order_by("path")


def suggester_runs(project: Project) -> QuerySet[SuggesterRun]:
    """The project's suggester runs, newest first, with who asked for each."""
    return SuggesterRun.objects.filter(project=project).select_related("requested_by")


def release_folder(release: Release) -> StoredFolder:
    """Where the release's files are: a folder on disk, or its prefix in the ``releases`` bucket."""
    return StoredFolder.of(release.out_dir)


def release_file_open(release: Release, path: str) -> File:
    """One file of the release (``path`` relative to its folder) opened for reading through its storage, to be
    streamed; ``FileNotFoundError`` when it is not there or would lie outside the folder."""
    return release_folder(release).open(path)


def release_card(release: Release) -> str:
    """The release's dataset card (Markdown with a YAML header), or "" when it has none."""
    # Where its build put it: README.md, or dataset_card.md before the card took the name ``datasets`` reads.
    path = release.files.filter(kind="card").values_list("path", flat=True).first() or CARD_NAME
    try:
        with release_file_open(release, path) as stream:
            return stream.read().decode("utf-8")
    except FileNotFoundError:
        return ""


def release_candidates(project: Project) -> QuerySet[Item]:
    """Every item a release may take: all but those a manager dropped (screening or a flag)."""
    return Item.objects.filter(project=project).exclude(screening_status=ScreeningStatus.DROPPED)


def _gold_model() -> type | None:
    # The gold table belongs to the agreement work; releases read it when the project has gold rows.
    return getattr(annotation_models, "GoldLabel", None)


def gold_source(project: Project) -> str:
    """``gold_labels`` when the project's gold has been computed, else ``fallback``: each task type's own
    rule over the annotations (a single annotation, the corpus's imported label)."""
    model = _gold_model()
    if model is not None and model.objects.filter(item__project=project).exists():
        return GOLD_TABLE
    return GOLD_FALLBACK


def may_release(project: Project, *, keep: bool) -> bool:
    """Whether a build could find a record to release: an item screening cleared or a person kept, with no open
    flag, with a usable gold label or annotations the gold rule may still resolve (and a split when the build
    keeps the items' splits). The build applies the exact rule (``release_exclusion``) after refreshing gold."""
    qs = (Item.objects.filter(project=project, screening_status__in=RELEASABLE_SCREENING)
          .exclude(Exists(Flag.objects.filter(item=OuterRef("pk"), resolution=FlagResolution.OPEN)))
          .filter(Q(gold__status__in=annotation_models.USABLE_GOLD)
                  | Q(Exists(Annotation.objects.filter(item=OuterRef("pk"))))))
    if keep:
        qs = qs.exclude(split="")
    return qs.exists()


def annotator_name(username: str, is_imported: bool) -> str:
    """The name an annotator carries in a KLUE record: a Goldset user's username; for a corpus's own
    annotator (imported users are named ``<source>:<original id>``) the original id, and ``""`` for the
    corpus's anonymous label (``<source>:corpus``), as ``TaskType.build_record`` expects."""
    if not is_imported:
        return username
    original = username.rpartition(":")[2]
    return CORPUS if original == CORPUS_ANNOTATOR else original


def _json(text: str | None) -> Any:
    return None if text is None else orjson.loads(text)


def _as_text(field: str) -> Cast:
    """A JSON column as text, decoded by orjson below: Django's ``json.loads`` per value cost more than the
    queries at 100,000 items."""
    return Cast(field, TextField())


@dataclass
class ItemStreams:
    """The three queries :func:`merge_item_rows` merges, each in item-id order: the release candidates, their
    annotations (creation order) and their gold."""

    items: Iterable[tuple[Any, ...]]
    annotations: Iterable[tuple[Any, ...]]
    golds: Iterable[tuple[Any, ...]]

    def close(self) -> None:
        """Stop the queries read ahead (nothing to do for the others)."""
        for stream in (self.items, self.annotations, self.golds):
            if isinstance(stream, ReadAhead):
                stream.close()


def item_streams(project: Project, *, with_gold: bool, chunk: int = CHUNK, ahead: bool = False) -> ItemStreams:
    """The queries of :func:`iter_item_rows`, each streamed ``chunk`` rows at a time (server-side cursors on
    PostgreSQL). With ``ahead`` they are read
    ahead (:class:`~exports.ahead.ReadAhead`) where the database allows: the three start at once, now, each on
    a connection of its own; close them when done."""
    model = _gold_model() if with_gold else None
    items = (release_candidates(project).order_by("id")
             .annotate(t_payload=_as_text("payload"), t_meta=_as_text("meta"), t_pii=_as_text("pii_findings"))
             .values_list("id", "external_id", "t_payload", "t_meta", "group_key", "content_hash", "split",
                          "source_id", "t_pii", "screening_status"))
    # Annotations of dropped items come too (the filter stays a plain join) and are skipped in the merge.
    annotations = (Annotation.objects.filter(item__project=project).order_by("item_id", "id")
                   .annotate(t_payload=_as_text("payload"))
                   .values_list("item_id", "stage", "t_payload", "annotator_id", "annotator__username",
                                "annotator__is_imported",
                                "imported", "guideline__version", "suggestion_shown", "suggestion_accepted"))
    # Only the gold rows that decide something (DECIDING_GOLD): an incomplete one reads as no row.
    golds = None if model is None else (
        model.objects.filter(item__project=project, status__in=DECIDING_GOLD).order_by("item_id")
        .annotate(t_payload=_as_text("payload")).values_list("item_id", "t_payload", "status"))

    def stream(qs: QuerySet[Any] | None) -> Iterable[tuple[Any, ...]]:
        if qs is None:
            return ()
        if ahead:
            return ReadAhead(lambda: qs.iterator(chunk_size=chunk), name="release-rows")
        return qs.iterator(chunk_size=chunk)

    return ItemStreams(stream(items), stream(annotations), stream(golds))


def iter_item_rows(project: Project, *, with_gold: bool, raters: dict[int, str] | None = None,
                   chunk: int = CHUNK) -> Iterator[ItemRow]:
    """Every release candidate in id order, with its annotations (creation order) and gold; with ``raters``
    (user id → opaque rater id) the annotations carry those ids instead of account names.

    Three queries — items, their annotations, their gold (:func:`item_streams`) — each ordered by item id and
    streamed ``chunk`` rows at a time, merged on the item id: one pass per table, however big the project.
    (Paging by ``id > last … LIMIT`` made PostgreSQL re-sort the rest of the project for every page when its
    statistics were stale, as right after an import.)
    """
    return merge_item_rows(item_streams(project, with_gold=with_gold, chunk=chunk), raters)


def merge_item_rows(streams: ItemStreams, raters: dict[int, str] | None = None) -> Iterator[ItemRow]:
    """The rows of :func:`iter_item_rows` from its queries; ``streams`` are closed once the rows end."""
    try:
        yield from _merged(iter(streams.items), iter(streams.annotations), iter(streams.golds), raters)
    finally:
        streams.close()


def _merged(items: Iterator[tuple[Any, ...]], annotations: Iterator[tuple[Any, ...]],
            golds: Iterator[tuple[Any, ...]], raters: dict[int, str] | None) -> Iterator[ItemRow]:
    loads = orjson.loads  # payloads, metas and findings are never SQL NULL
    # An annotator's name in the records, by user id: the same for each of their annotations.
    names: dict[int, str] = {}
    annotation = next(annotations, None)
    gold = next(golds, None)
    for row in items:
        item_id = row[0]
        item = ItemRow(item_id, row[1], loads(row[2]), loads(row[3]), *row[4:8], loads(row[8]), row[9])
        while annotation is not None and annotation[0] < item_id:
            annotation = next(annotations, None)
        seen: dict[str, set[str]] = {}
        while annotation is not None and annotation[0] == item_id:
            _, stage, payload, user_id, username, is_imported, imported, guideline, shown, accepted = annotation
            name = names.get(user_id)
            if name is None:
                name = annotator_name(username, is_imported)
                if raters is not None and name != CORPUS:
                    name = raters[user_id]
                names[user_id] = name
            item.annotations.append(RecordAnnotation(name, stage, loads(payload)))
            if not imported:
                item.corpus_only = False
                item.own_annotations += 1
                item.suggestions_shown += shown
                item.suggestions_accepted += accepted is True
                if guideline is not None:
                    item.guideline_versions.add(guideline)
            names_in_stage = seen.get(stage)
            if names_in_stage is None:
                names_in_stage = seen[stage] = set()
            names_in_stage.add(name)
            annotation = next(annotations, None)
        item.annotators = {stage: len(names_in) for stage, names_in in seen.items()}
        while gold is not None and gold[0] < item_id:
            gold = next(golds, None)
        if gold is not None and gold[0] == item_id:
            item.gold, item.gold_status = _json(gold[1]), gold[2]
        yield item


def screening_counts(project: Project) -> dict[str, Any]:
    """Screening statuses of all the project's items, and flags by kind and resolution."""
    statuses = dict(Item.objects.filter(project=project).values_list("screening_status")
                    .annotate(n=Count("id")).order_by())
    flags: dict[str, dict[str, int]] = {}
    for kind, resolution, n in (Flag.objects.filter(item__project=project).values_list("kind", "resolution")
                                .annotate(n=Count("id")).order_by("kind", "resolution")):
        flags.setdefault(kind, {})[resolution] = n
    return {"items_by_status": dict(sorted(statuses.items())), "flags": flags}


def sources_by_id(ids: set[int]) -> list[dict[str, Any]]:
    return [{"name": s.name, "license": s.license, "url": s.url, "provenance": s.provenance}
            for s in Source.objects.filter(id__in=ids).order_by("name")]


def _points(value: Any) -> str:
    return "—" if value is None else f"{value:.2f}"


def check_reason(check: dict[str, Any]) -> str:
    """Why the baseline check did not run, in the reader's language when it is a reason the build gives (an
    error's own text is shown as it came)."""
    reason = check.get("reason") or ""
    if reason == "pending":
        return _("the build has not reached it yet")
    if reason.endswith("the release has no KLUE files to train and score on"):
        return _("the release has no KLUE files to train and score on")
    return reason


def status_reasons(release: Release) -> list[str]:
    """Why a release is not ``passed``, one sentence per cause, in the request's language (the release page
    and the API show them)."""
    check = release.baseline_check or {}
    interval = check.get("interval") or {}
    figures = {"metric": check.get("primary") or "", "low": _points(interval.get("low")),
               "high": _points(interval.get("high"))}
    reasons: list[str] = []
    if release.status == ReleaseStatus.ERROR:
        return [_("The build stopped with an error: %(error)s") % {"error": display_message(release.error)}]
    if release.status in (ReleaseStatus.BUILDING, ReleaseStatus.CHECKING):
        return []
    if release.status == ReleaseStatus.PUBLISHED:
        if release.publish_override:
            reasons.append(_("Published without a verdict of the baseline check; the reason given: %(reason)s")
                           % {"reason": release.publish_override})
        return reasons
    leakage = release.leakage or {}
    if not leakage.get("clean", True):
        reasons.append(_("Items cross splits: %(exact)s exact duplicates, %(groups)s shared groups and %(near)s "
                         "near duplicates are in more than one split.")
                       % {"exact": leakage.get("exact_duplicates_across_splits", 0),
                          "groups": leakage.get("groups_across_splits", 0),
                          "near": leakage.get("near_duplicates_across_splits", 0)})
    contamination = release.contamination or {}
    if contamination.get("fails"):
        reasons.append(ngettext("%(n)s dev or test item was found in other data, which the project's contamination "
                                "policy does not allow.",
                                "%(n)s dev or test items were found in other data, which the project's "
                                "contamination policy does not allow.", contamination["failing"])
                       % {"n": contamination["failing"]})
    if check.get("passed") is None:
        reasons.append(_("The baseline check did not run, so nothing shows the labels are learnable: %(reason)s. "
                         "Build with the klue format to have it checked.") % {"reason": check_reason(check)})
        return reasons
    if check.get("verdict") == "failed" and interval.get("high") is not None and interval["high"] <= 0:
        reasons.append(_("The baseline is no better than the trivial baseline: the 95%% interval of the difference "
                         "in %(metric)s is [%(low)s, %(high)s] points.") % figures)
        return reasons
    if release.status != ReleaseStatus.INCONCLUSIVE:
        return reasons
    if (check.get("n_dev") or 0) < (check.get("min_dev") or 0):
        reasons.append(_("Dev has %(n)s records; a verdict needs at least %(min)s.")
                       % {"n": check.get("n_dev"), "min": check.get("min_dev")})
    if interval.get("low") is not None and interval["low"] <= 0:
        reasons.append(_("The 95%% interval of baseline minus trivial baseline on %(metric)s, [%(low)s, %(high)s] "
                         "points, includes 0.") % figures)
    improvement, margin = check.get("improvement"), check.get("margin")
    if improvement is not None and margin is not None and improvement < margin:
        reasons.append(_("The baseline beats the trivial baseline by %(gain)s points, less than the margin of "
                         "%(margin)s.") % {"gain": _points(improvement), "margin": f"{margin:g}"})
    return reasons


def rater_ids(project: Project) -> list[dict[str, Any]]:
    """The project's opaque rater ids with the account behind each (managers only)."""
    from .models import RaterId

    return [{"rater": row.code, "username": row.user.username, "imported": row.user.is_imported,
             "since": row.created_at.isoformat()}
            for row in RaterId.objects.filter(project=project).select_related("user").order_by("number")]


def item_release_refusal(item: Item) -> str | None:
    """Why ``item`` must not be deleted: a published release built after it was created may hold it, and that
    release must stay reproducible from the project (``annotation.services.item_delete``)."""
    release = (Release.objects.filter(project_id=item.project_id, status=ReleaseStatus.PUBLISHED,
                                      created_at__gte=item.created_at).order_by("created_at").first())
    if release is None:
        return None
    return _("published release %(version)s may hold this item, and a published release must stay reproducible; "
             "exclude the item with a flag or a screening decision instead") % {"version": release.version}
