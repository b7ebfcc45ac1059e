"""Writes for releases: create, build (the job), publish, verify, delete (the suggester's runs are
``exports.suggester_services``).

Building streams the project twice, never holding it whole:

1. items in id-ordered chunks → each item's KLUE record (``TaskType.build_record`` with its
   annotations and gold) goes to a work file, one line each (a JSONL-only release: its JSONL line up to
   the split, ``writers.jsonl.line_head``), while the split columns (label, group, content hash: 8 bytes
   apiece) and the card's counts accumulate. On PostgreSQL (outside a transaction) the pass's queries are
   read ahead on threads (``exports.ahead``), and the gold's refresh runs beside the pass, which is run again
   only if it changed;
2. the splits are assigned (``datasets_build.splits``), then for each split the work file is read once
   more and its records stream through every writer (KLUE, JSONL, CSV, Parquet).

Everything is written into a hidden temporary folder next to the final one; the manifest, card and
``SHA256SUMS`` come last, the baseline check runs there, and only then is the folder renamed into
place in one step. A crash leaves at most a hidden ``.…partial`` folder, never a half release. The release's
final state is recorded with the splits a ratio release chose (``ReleaseSplits``), which are copied onto the
items only after that (``release_splits_apply``): the release is downloadable meanwhile.
When releases live in a bucket (``config/storage.py``), the temporary folder is on the worker's disk and
the finished folder is uploaded file by file, ``SHA256SUMS`` last; a retry replaces an upload that was cut
short.
"""

from __future__ import annotations

import importlib
import logging
import math
import shutil
import threading
import time
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np
import orjson
from django.core.files.storage import storages
from django.db import DatabaseError, connection, connections, transaction
from django.db.models import Count, Min
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation import services as annotation_services
from annotation.agreement.reliability import REPORT_KEYS as RELIABILITY_KEYS
from annotation.audit import audit_record
from annotation.budget import budget_of
from annotation.gold import selectors as gold_selectors
from annotation.gold.services import gold_compute
from annotation.models import (
    USABLE_GOLD,
    Annotation,
    AuditObject,
    Guideline,
    Item,
    Project,
    User,
    WebhookEvent,
)
from annotation.selectors import budget_ks, stage_complete
from annotation.services import ServiceError
from annotation.webhooks import services as webhooks
from config.jobs import DATABASE_LOST, drop_connection, error_summary
from config.storage import RELEASES, SUMS_NAME, StoredFolder, record
from datasets_build import splits as split_lib
from datasets_build.selectors import near_duplicate_links

from . import diff, selectors
from .ahead import may_read_ahead
from .card import CARD_NAME, folder_loadable, render_card
from .contamination import release_contamination
from .integrity import make_read_only, sha256_file, verify_folder, write_sums
from .models import (
    SEMVER,
    RaterId,
    Release,
    ReleaseFile,
    ReleaseItems,
    ReleaseSplits,
    ReleaseStatus,
    rater_code,
)
from .soft_labels import POSTERIORS, VOTES, SoftLabels, check_soft_labels
from .writers import (
    DEFAULT_FORMATS,
    FORMATS,
    KLUE_FORMAT_VERSION,
    WrittenFile,
    fitting_tasks,
    flat_schema,
    jsonl_heads_fit,
    line_head,
    unfit_formats,
    write_extras,
    write_jsonl_heads,
    write_klue_extras,
    write_split,
)

logger = logging.getLogger(__name__)

MANIFEST_NAME = "manifest.json"
_PROGRESS_EVERY = 5000
_PROGRESS_SECONDS = 0.5
#: First key of the advisory locks that keep two workers from building one release (second: its id).
_BUILD_LOCK = 0x601D5E7

Progress = Callable[[dict[str, Any]], None]


class EmptyReleaseError(ServiceError):
    """The build found no releasable record: a release is never made of nothing."""


def _empty_message(project: Project, keep: bool) -> str:
    where = " with a split (build with ratios instead of keeping splits)" if keep else ""
    return (f"nothing to release: {project.slug} has no releasable item{where} — each needs screening cleared "
            "or kept, no open flag and a usable gold label")


# -- creating -------------------------------------------------------------------------------------


def _check_formats(formats: Any, task_slug: str) -> list[str]:
    if isinstance(formats, str):
        formats = [f.strip() for f in formats.split(",") if f.strip()]
    formats = list(dict.fromkeys(formats or []))
    unknown = [f for f in formats if f not in FORMATS]
    if not formats or unknown:
        raise ServiceError(f"formats must be some of {', '.join(FORMATS)}; got {', '.join(formats) or 'none'}",
                           field="formats")
    unfit = unfit_formats(task_slug, formats)
    if unfit:
        raise ServiceError("; ".join(
            _("format %(format)s is for %(tasks)s projects, not %(task)s") % {
                "format": f, "tasks": ", ".join(fitting_tasks(f)), "task": task_slug} for f in unfit),
            field="formats")
    if not any(folder_loadable(f, task_slug) for f in formats):
        # Every release folder loads with ``datasets.load_dataset(folder)`` as is: when no chosen layout is one
        # a folder's builder reads (KLUE's TSVs and CoNLL are not), the records go in JSONL beside them.
        formats.append("jsonl")
    return [f for f in FORMATS if f in formats]


@transaction.atomic
def release_create(
    *,
    project: Project,
    version: str,
    splits: str | list[float] | None = None,
    seed: int | None = None,
    keep_splits: bool = False,
    formats: Any = DEFAULT_FORMATS,
    out: str | Path | None = None,
    user: User | None = None,
    agreement: bool = True,
    check_margin: float | None = None,
    refresh_gold: bool = True,
    soft_labels: bool = False,
) -> Release:
    """Record a release to build (status ``building``); :func:`release_run` builds it."""
    if not SEMVER.match(version or ""):
        raise ServiceError(f"version {version!r} is not a semantic version like 1.0.0", field="version")
    if keep_splits and splits:
        raise ServiceError("give either split ratios or --keep-splits, not both", field="splits")
    if keep_splits:
        spec: dict[str, Any] = {"mode": "keep"}
        seed = None
    else:
        try:
            ratios = split_lib.parse_ratios(splits or "0.8,0.1,0.1")
        except split_lib.SplitSpecError as error:
            raise ServiceError(str(error), field="splits") from None
        seed = 0 if seed is None else int(seed)
        spec = {"mode": "ratios", "ratios": ratios, "seed": seed}
    chosen = _check_formats(formats, project.task_type)
    if soft_labels:
        check_soft_labels(project)
    if keep_splits:
        release_splits_apply(project)
    if not selectors.may_release(project, keep=keep_splits):
        raise EmptyReleaseError(_empty_message(project, keep_splits), field="splits" if keep_splits else "")
    Project.objects.select_for_update().get(pk=project.pk)  # serialise the version check
    if Release.objects.filter(project=project, version=version).exists():
        raise ServiceError(f"{project.slug} already has a release {version}; versions are never reused",
                           code="conflict", field="version")
    name = f"{project.slug}-{version}"
    # Without ``out`` (the browser, the API, the command's default) the release goes to the ``releases`` storage.
    location = str(Path(out).resolve() / name) if out else record(storages[RELEASES], name)
    if StoredFolder.of(location).exists():
        raise ServiceError(f"{StoredFolder.of(location)} already exists", code="conflict", field="out")
    release = Release.objects.create(
        project=project, version=version, split_spec=spec, seed=seed, formats=chosen, out_dir=location,
        options={"agreement": agreement, "check_margin": check_margin, "refresh_gold": refresh_gold,
                 "soft_labels": bool(soft_labels)},
        created_by=user,
        progress={"phase": "queued"},
    )
    audit_record(project=project, actor=user, object_type=AuditObject.RELEASE, object_id=release.pk,
                 action="create", after={"version": version, "formats": chosen, "splits": spec})
    return release


def release_request(**kwargs: Any) -> Release:
    """Create a release and queue its build as a background job (browser and API)."""
    from .tasks import release_build_task

    with transaction.atomic():
        release = release_create(**kwargs)
        transaction.on_commit(lambda: release_build_task.delay(release.pk))
    return release


def release_build(project: Project, *, version: str, splits: str | list[float] | None = None,
                  seed: int | None = None, keep_splits: bool = False, formats: Any = DEFAULT_FORMATS,
                  out: str | Path | None = None, user: User | None = None, agreement: bool = True,
                  check_margin: float | None = None, refresh_gold: bool = True, soft_labels: bool = False,
                  progress: Progress | None = None) -> Release:
    """Create and build a release in this process (the command's and the demo's path)."""
    release = release_create(project=project, version=version, splits=splits, seed=seed, keep_splits=keep_splits,
                             formats=formats, out=out, user=user, agreement=agreement, check_margin=check_margin,
                             refresh_gold=refresh_gold, soft_labels=soft_labels)
    try:
        release = release_run(release.pk, progress=progress)
    except DATABASE_LOST as error:
        release_abandon(release.pk, error)
        raise
    if release.status == ReleaseStatus.ERROR and release.progress.get("phase") == "empty":
        # Refused, not failed: no release row or folder stays behind for a build of nothing.
        message = release.error
        release_delete(release=release, by=user)
        raise EmptyReleaseError(message)
    return release


def release_abandon(release_id: int, error: Exception) -> None:
    """Record a build that the database's loss stopped (retries spent) as a build error, if the database is
    back; otherwise it can only be logged, and the release stays ``building``."""
    drop_connection()
    message = f"the database was lost during the build ({error_summary(error)}); build it again under a new version"
    try:
        Release.objects.filter(pk=release_id, status__in=(ReleaseStatus.BUILDING, ReleaseStatus.CHECKING)).update(
            status=ReleaseStatus.ERROR, error=message[:4000], finished_at=timezone.now(), progress={"phase": "error"})
    except DATABASE_LOST:
        logger.error("release %s: %s; the database is still unavailable, so it stays building", release_id, message)


# -- building -------------------------------------------------------------------------------------


def _set(release: Release, **fields: Any) -> None:
    for name, value in fields.items():
        setattr(release, name, value)
    release.save(update_fields=list(fields))


def release_run(release_id: int, *, progress: Progress | None = None) -> Release:
    """Build a release that is ``building`` (the job). Idempotent: a finished release is returned as is, a
    second delivery while another worker builds waits for it and then finds it finished, and a retried job
    starts over from a clean temporary folder — or, when its first run died after moving the checked
    folder into place, only records that; one that died after recording the release's splits copies them onto
    the items."""
    with _build_lock(release_id):
        release = Release.objects.select_related("project", "created_by").get(pk=release_id)
        if release.status not in (ReleaseStatus.BUILDING, ReleaseStatus.CHECKING):
            # A redelivery after a worker died copying the release's splits onto its items copies them.
            release_splits_apply(release.project)
            return release
        _run(release, progress)
    webhooks.emit(release.project, WebhookEvent.RELEASE_BUILT, {
        "release": release.pk, "version": release.version, "status": release.status})
    return release


@contextmanager
def _build_lock(release_id: int) -> Iterator[None]:
    """Hold the release's build lock. On PostgreSQL a session advisory lock: a message redelivered while its
    first worker still builds (a job outliving the broker's visibility timeout) waits here; the lock goes
    with the connection of a worker that dies, so a redelivery waits only until PostgreSQL notices. SQLite
    runs jobs in the one process that wrote the release, so there is nothing to exclude."""
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s::int, %s::int)", [_BUILD_LOCK, release_id])
    try:
        yield
    finally:
        with suppress(DatabaseError), connection.cursor() as cursor:  # a lost connection took the lock along
            cursor.execute("SELECT pg_advisory_unlock(%s::int, %s::int)", [_BUILD_LOCK, release_id])


def _run(release: Release, progress: Progress | None) -> None:
    place = selectors.release_folder(release)
    partial, work, scratch = place.staging()

    last = {"phase": "", "at": 0.0}

    def report(phase: str, done: int = 0, total: int | None = None) -> None:
        # A new phase is always written; within one, at most every _PROGRESS_SECONDS (a write is two
        # statements: the release's guard against changing a published release, then the update).
        now = time.monotonic()
        if phase == last["phase"] and now - last["at"] < _PROGRESS_SECONDS:
            return
        last.update(phase=phase, at=now)
        state = {"phase": phase, "done": done, "total": total}
        Release.objects.filter(pk=release.pk).update(progress=state)
        if progress is not None:
            progress(state)

    beside: list[_Beside] = []
    chosen: _Chosen | None = None
    held: diff.Held | None = None
    try:
        if place.local is None and place.exists() and not place.has(SUMS_NAME):
            place.delete()  # an upload to the bucket that a crash cut short: this run uploads it again
        if not place.exists():
            partial.parent.mkdir(parents=True, exist_ok=True)
            shutil.rmtree(partial, ignore_errors=True)
            partial.mkdir()
            with _sort_memory():
                chosen, held = _build(release, partial, work, report, beside)
            place.publish(partial)
        elif not (release.files.exists() and release_verify(release).get("ok")):
            raise ServiceError(f"{place} already exists", code="conflict")
        if place.local is not None:
            for path in place.local.rglob("*"):
                if path.is_file():
                    path.chmod(0o444)
        with transaction.atomic():  # the splits a ratio release chose are recorded with its final state
            if chosen is not None:
                ids, codes, names = chosen
                ReleaseSplits.objects.update_or_create(release=release, defaults={
                    "names": names, **ReleaseSplits.packed(ids, codes), "applied": False})
            if held is not None:
                ReleaseItems.objects.update_or_create(release=release, defaults=held.record())
            _set(release, status=release_status(release), finished_at=timezone.now(), progress={"phase": "done"})
    except DATABASE_LOST:
        # Nothing can be recorded over a lost connection: the task retries (a redelivery rebuilds).
        shutil.rmtree(partial, ignore_errors=True)
        raise
    except EmptyReleaseError as error:
        shutil.rmtree(partial, ignore_errors=True)
        _set(release, status=ReleaseStatus.ERROR, error=error.message, finished_at=timezone.now(),
             progress={"phase": "empty"})
    except Exception as error:
        if isinstance(error, OSError) and error.strerror:
            # Full disk, read-only or missing folder: the cause and the place say it all, no traceback.
            message = f"{error.strerror.lower()} while writing {place}"
            logger.error("release %s of %s failed: %s", release.version, release.project.slug, message)
        else:
            logger.exception("release %s of %s failed", release.version, release.project.slug)
            message = error.message if isinstance(error, ServiceError) else f"{type(error).__name__}: {error}"
        shutil.rmtree(partial, ignore_errors=True)
        _set(release, status=ReleaseStatus.ERROR, error=message[:4000], finished_at=timezone.now(),
             progress={"phase": "error"})
    finally:
        for side in beside:  # waited for however the build ends (a failed build's report is not needed)
            side.finish(run=False)
        if work.exists():  # not unlink(missing_ok=True): on a read-only file system that fails too
            work.unlink()
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    if chosen is not None and release.status != ReleaseStatus.ERROR:
        # After the release shows as built: it is downloadable while its items' rows are rewritten.
        release_splits_apply(release.project)


#: PostgreSQL's memory per sort of this build's connection (``work_mem``), if its own is less: the streams sort
#: (and a server-side cursor outside a transaction materialises) 100,000 items' rows in tens of MB, which the
#: default of 4 MB sent to temporary files, as it did when the planner had no statistics after an import.
_SORT_MEMORY = "64MB"


@contextmanager
def _sort_memory() -> Iterator[None]:
    """Raise ``work_mem`` to :data:`_SORT_MEMORY` for the build on PostgreSQL (a raise only), and reset it after."""
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('work_mem', %s, false) WHERE pg_size_bytes(current_setting('work_mem')) "
                       "< pg_size_bytes(%s)", [_SORT_MEMORY, _SORT_MEMORY])
        raised = cursor.fetchone() is not None
    try:
        yield
    finally:
        if raised:
            with suppress(DatabaseError), connection.cursor() as cursor:  # a lost connection took it along
                cursor.execute("RESET work_mem")


def release_status(release: Release) -> str:
    """The state a built release ends in: ``failed`` when splits leak, the project's contamination policy fails
    what the contamination check found, or the baseline check failed, ``unchecked`` when the check could not run,
    ``inconclusive`` when its evidence allows no verdict, else ``passed``."""
    verdict = release.baseline_check.get("verdict")
    if not release.leakage.get("clean") or release.contamination.get("fails") or verdict == "failed":
        return ReleaseStatus.FAILED
    if verdict == "passed":
        return ReleaseStatus.PASSED
    if verdict == "inconclusive":
        return ReleaseStatus.INCONCLUSIVE
    return ReleaseStatus.UNCHECKED


@transaction.atomic
def rater_ids_assign(project: Project) -> dict[int, str]:
    """The project's opaque rater ids by user id, giving the next numbers to annotators who have none yet (in
    the order of their first annotation in the project). Ids once given never change. The corpus's anonymous
    label (an imported label without an annotator id) gets none: its records carry no rater."""
    return _rater_ids_assign(project, _first_seen(project))


def _first_seen(project: Project) -> list[dict[str, Any]]:
    """Every annotator of the project (a Goldset user or a corpus's), in the order of their first annotation."""
    return list(Annotation.objects.filter(item__project=project).values("annotator_id", "annotator__username",
                                                                        "annotator__is_imported")
                .annotate(first=Min("id")).order_by("first"))


@transaction.atomic
def _rater_ids_assign(project: Project, first_seen: list[dict[str, Any]]) -> dict[int, str]:
    Project.objects.select_for_update().get(pk=project.pk)  # two builds must not hand out one number twice
    given = dict(RaterId.objects.filter(project=project).values_list("user_id", "number"))
    new = []
    number = max(given.values(), default=0)
    for row in first_seen:
        user_id = row["annotator_id"]
        if user_id in given or selectors.annotator_name(row["annotator__username"],
                                                        row["annotator__is_imported"]) == selectors.CORPUS:
            continue
        number += 1
        given[user_id] = number
        new.append(RaterId(project=project, user_id=user_id, number=number))
    RaterId.objects.bulk_create(new)
    return {user_id: rater_code(n) for user_id, n in given.items()}


class _RaterIds(dict[int, str]):
    """The project's rater ids; an annotator first seen during the build (a new annotation while it streams)
    gets the next id then, so no record ever falls back to an account name. The project's annotators are read
    beside the build from when it is made; the ids are read (and the missing ones given) when first asked for:
    that waits for the project's lock, which the gold's refresh beside the items pass may hold."""

    def __init__(self, project: Project) -> None:
        super().__init__()
        self.project = project
        #: The project's annotators, read beside the build from now on.
        self.first_seen = _Beside(lambda: _first_seen(project))
        self._people: list[dict[str, Any]] | None = None

    def load(self) -> list[dict[str, Any]]:
        """Read the ids (once); the project's annotators then."""
        if self._people is None:
            self._people = self.first_seen.outcome()
            self.update(_rater_ids_assign(self.project, self._people))
        return self._people

    @property
    def people(self) -> list[dict[str, Any]]:
        """The project's annotators when the ids were first read (the card counts them)."""
        return self.load()

    def __missing__(self, user_id: int) -> str:
        if self._people is None:
            self.load()
        else:
            self.update(rater_ids_assign(self.project))
        if user_id not in self:  # the annotation's author has no annotation in the project: cannot happen
            raise KeyError(user_id)
        return super().__getitem__(user_id)


class _Beside(threading.Thread):
    """``work`` on a thread of its own, with its own database connection, while the build goes on: its
    database work (PostgreSQL's CPU, not this process's) then overlaps the build's. Only where a second
    connection sees what this one committed — PostgreSQL outside a transaction; a test's transaction, or
    SQLite's one writer, would hide it; elsewhere ``work`` runs in the calling thread when its outcome is
    asked for, as it did before it ran beside."""

    def __init__(self, work: Callable[[], Any]) -> None:
        super().__init__(name="release-beside", daemon=True)
        self._work = work
        self._result: Any = None
        self._error: BaseException | None = None
        self._beside = may_read_ahead()
        self._ran = False
        if self._beside:
            self.start()

    def run(self) -> None:
        try:
            self._result = self._work()
        except BaseException as error:  # handed to the build's thread by outcome()
            self._error = error
        finally:
            if self._beside:
                connections.close_all()  # this thread's connections

    def outcome(self) -> Any:
        """``work``'s result, once it ended (its error raised here)."""
        self.finish(run=True)
        if self._error is not None:
            raise self._error
        return self._result

    def finish(self, *, run: bool) -> None:
        """Wait for the thread to end; in the calling thread, run ``work`` now if ``run``."""
        if self._beside:
            self.join()
        elif run and not self._ran:
            self._ran = True
            self.run()


#: The splits a ratio build chose: item ids (ascending), a code per item, the split names the codes index.
_Chosen = tuple[np.ndarray, np.ndarray, list[str]]


def release_splits_apply(project: Project) -> None:
    """Copy the splits the project's newest ratio release chose onto its items' ``split`` (which the Items tab
    and a ``--keep-splits`` build read), if not done yet. A build records its choice (``ReleaseSplits``) with its
    final state and copies it after, so the release is downloadable while 100,000 item rows are rewritten; a
    keep-splits build copies what is still pending first. An older release's splits never overwrite a newer
    one's. A failure is logged and leaves the copy pending."""
    try:
        with transaction.atomic():
            pending = list(ReleaseSplits.objects.select_for_update(of=("self",))
                           .filter(release__project=project, applied=False)
                           .order_by("-release_id").values_list("release_id", flat=True))
            if not pending:
                return
            if not ReleaseSplits.objects.filter(release__project=project, applied=True,
                                                release_id__gt=pending[0]).exists():
                row = ReleaseSplits.objects.get(release_id=pending[0])
                _items_split_write(*row.unpacked(), row.names)
                if not budget_of(project).uniform:  # a k by split follows the item's new split
                    annotation_services.queue_needed_refresh(project)
            ReleaseSplits.objects.filter(release_id__in=pending).update(applied=True)
    except DATABASE_LOST:
        raise
    except DatabaseError:
        logger.exception("the splits of %s's release could not be copied onto its items", project.slug)


def _items_split_write(ids: np.ndarray, codes: np.ndarray, names: list[str]) -> None:
    """``Item.split`` of each of ``ids`` set to ``names[code]``, where it differs."""
    if connection.vendor == "postgresql":
        _items_split_copy(ids, codes, names)
        return
    chunk = selectors.CHUNK
    for index, name in enumerate(names):
        chosen = ids[codes == index].tolist()
        for start in range(0, len(chosen), chunk):
            Item.objects.filter(id__in=chosen[start:start + chunk]).exclude(split=name).update(split=name)


def _items_split_copy(ids: np.ndarray, codes: np.ndarray, names: list[str]) -> None:
    """``Item.split`` on PostgreSQL in one statement: the (item, split code) pairs go by binary ``COPY`` into
    a temporary table, from which one ``UPDATE`` sets the splits that change. Per-chunk ``UPDATE … IN (…)``
    quoted every id into the SQL on the client."""
    from annotation.bulk import copy_bigints

    item_table = connection.ops.quote_name(Item._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute("CREATE TEMPORARY TABLE release_split_codes (item_id bigint, code bigint) ON COMMIT DROP")
        copy_bigints("release_split_codes", ["item_id", "code"], [ids.astype(np.int64), codes.astype(np.int64)])
        cursor.execute(f"UPDATE {item_table} AS i SET split = n.name FROM release_split_codes s "
                       "JOIN unnest(%s::text[]) WITH ORDINALITY AS n(name, code) ON n.code = s.code + 1 "
                       "WHERE i.id = s.item_id AND i.split IS DISTINCT FROM n.name", [names])
        # Dropped here too: inside an enclosing transaction (a test's) the commit that drops it is later.
        cursor.execute("DROP TABLE release_split_codes")


#: The work file's write buffer: each flush lets the threads reading ahead take the interpreter, and the pass
#: waits to get it back; with the default 8 KB that was thousands of times per 100,000 items.
_WORK_BUFFER = 1 << 20


@dataclass
class _Gathered:
    """What the items pass gathers beside the records: the split columns and the card's counts."""

    units: split_lib.SplitUnits = field(default_factory=split_lib.SplitUnits)
    kept: array = field(default_factory=lambda: array("B"))
    excluded: Counter[str] = field(default_factory=Counter)
    by_source: Counter[str] = field(default_factory=Counter)
    pii: Counter[str] = field(default_factory=Counter)
    included_status: Counter[str] = field(default_factory=Counter)
    per_item: dict[str, Counter[int]] = field(default_factory=dict)
    assisted: Counter[str] = field(default_factory=Counter)
    items_with_pii: int = 0
    source_ids: set[int] = field(default_factory=set)
    guideline_versions: set[int] = field(default_factory=set)
    #: Per released item, a digest of its gold payload (0 without one): what the release diff compares.
    golds: array = field(default_factory=lambda: array("Q"))
    #: The items left out, each with a code into ``reason_names``.
    excluded_ids: array = field(default_factory=lambda: array("q"))
    excluded_codes: array = field(default_factory=lambda: array("B"))
    reason_names: dict[str, int] = field(default_factory=dict)

    def leave_out(self, item_id: int, reason: str) -> None:
        self.excluded[reason] += 1
        self.excluded_ids.append(item_id)
        self.excluded_codes.append(self.reason_names.setdefault(reason, len(self.reason_names)))


def _gather(rows: Iterable[selectors.ItemRow], out: IO[bytes], progress: Callable[[int], None], *, slug: str,
            task: Any, schema: Any, keep: bool, heads: bool, flagged: set[int], gold_table: bool,
            soft: SoftLabels | None = None) -> _Gathered:
    """The first pass of a build over the items: each releasable item's record (or JSONL line head) to ``out``,
    its split columns and the card's counts to a :class:`_Gathered`."""
    g = _Gathered()
    units, by_source, per_item = g.units, g.by_source, g.per_item
    write, build_record, label_of, fields = out.write, task.build_record, schema.label, schema.fields
    add_unit = units.add
    # Per-item tallies in locals (a Counter update per item and key cost more than the rest of the count).
    items = assisted_items = own = shown = accepted = 0
    for n, row in enumerate(rows, 1):
        if n % _PROGRESS_EVERY == 0:
            progress(n)
        reason = gold_selectors.release_exclusion(
            screening_status=row.screening_status, open_flag=row.id in flagged, gold_status=row.gold_status,
            has_annotations=bool(row.annotations), corpus_only=row.corpus_only, gold_table=gold_table)
        if reason is not None:
            g.leave_out(row.id, reason)
            continue
        gold = None
        if row.gold_status in USABLE_GOLD:
            gold = row.gold
            by_source["gold_labels"] += 1
        else:
            # No gold decision yet: the corpus's own label (an import), or, in a project whose gold
            # was never computed, the task's rule over the annotations.
            by_source["corpus" if row.corpus_only else "annotations"] += 1
        if keep and row.split not in split_lib.SPLIT_NAMES:
            g.leave_out(row.id, "no_split")
            continue
        record = build_record(external_id=row.external_id or f"{slug}_{row.id:08d}", payload=row.payload,
                              meta=row.meta, annotations=row.annotations, gold=gold)
        if soft is not None:
            soft.add(record, row.id, row.annotations)
        write(line_head(fields(record)) + b"\n" if heads else orjson.dumps(record) + b"\n")
        add_unit(row.id, label=label_of(record), group_key=row.group_key, content_hash=row.content_hash)
        g.golds.append(diff.gold_digest(gold))
        if keep:
            g.kept.append(split_lib.SPLIT_NAMES.index(row.split))
        g.included_status[row.screening_status] += 1
        if row.pii_findings:
            g.items_with_pii += 1
            g.pii.update(str(f.get("type", "unknown")) for f in row.pii_findings if isinstance(f, dict))
        if row.source_id is not None:
            g.source_ids.add(row.source_id)
        if row.guideline_versions:
            g.guideline_versions |= row.guideline_versions
        for stage, count in row.annotators.items():
            hist = per_item.get(stage)
            if hist is None:  # not setdefault: that built a Counter for every record
                hist = per_item[stage] = Counter()
            hist[count] += 1
        items += 1
        if row.suggestions_shown:
            assisted_items += 1
            shown += row.suggestions_shown
        own += row.own_annotations
        accepted += row.suggestions_accepted
    if items:
        g.assisted.update({"items": items, "assisted_items": assisted_items, "annotations": own, "shown": shown,
                           "accepted_unchanged": accepted})
    return g


def _build(release: Release, folder: Path, work: Path, report: Callable[..., None],
           beside: list[_Beside]) -> tuple[_Chosen | None, diff.Held]:
    """Write the release into ``folder``; return the splits a ratio release chose and what the release holds
    (the caller records them once the folder is in place). What runs beside the build goes into ``beside``
    (the agreement report, the card's counts)."""
    project = release.project
    task = project.task
    soft = SoftLabels(project) if release.options.get("soft_labels") else None
    schema = flat_schema(project.task_type) if soft is None else soft.schema(flat_schema(project.task_type))
    keep = release.split_spec.get("mode") == "keep"
    refreshed = bool(release.options.get("refresh_gold", True))
    if keep:  # the splits of the latest ratio release, if its build has not copied them yet
        release_splits_apply(project)

    total = selectors.release_candidates(project).count()
    # A JSONL-only release keeps each record's line (without its split) in the work file, not the record.
    heads = jsonl_heads_fit(schema, release.formats)

    wants_agreement = bool(release.options.get("agreement", True))

    def gold_then_agreement() -> tuple[bool, Any]:
        # The agreement report needs the gold current: computed once the gold is known to be.
        if gold_compute(project, when_stale=True) is not None:
            return False, None
        return True, _agreement(project) if wants_agreement else None

    def items_once(check_gold: bool) -> tuple[_Gathered, str, _RaterIds, Callable[[], Any] | None, _Beside] | None:
        """The items pass; with ``check_gold`` the gold's refresh (then the agreement report) runs beside it,
        and ``None`` is returned when it computed the gold again: what was read is then out of date."""
        nonlocal source
        source = selectors.gold_source(project)
        if soft is not None:
            soft.read_posteriors()
        streams = selectors.item_streams(project, with_gold=source == selectors.GOLD_TABLE, ahead=True)
        try:
            gold = _Beside(gold_then_agreement) if check_gold else None
            if gold is not None:
                beside.append(gold)  # waited for however the build ends
            # The near-duplicate links and the annotators' first annotations are read while the items stream.
            links = _Beside(lambda: near_duplicate_links(project))
            beside.append(links)
            raters = _RaterIds(project)
            beside.append(raters.first_seen)
            flagged = gold_selectors.open_flag_items(project)
            # The agreement report needs none of what follows (only the gold): it is computed while the items
            # stream. So are the card's counts of the gold's rules and of the screening (PostgreSQL's scans).
            agreement = None
            if wants_agreement and gold is None:
                agreement = _Beside(lambda: _agreement(project))
                beside.append(agreement)
            card_counts = _Beside(lambda: (_gold_rule(source, project), selectors.screening_counts(project)))
            beside.append(card_counts)
            report("items", 0, total)
            with open(work, "wb", buffering=_WORK_BUFFER) as out:
                gathered = _gather(selectors.merge_item_rows(streams, raters), out, lambda n: report("items", n, total),
                                   slug=project.slug, task=task, schema=schema, keep=keep, heads=heads,
                                   flagged=flagged, gold_table=source == selectors.GOLD_TABLE, soft=soft)
            gathered.units.link(links.outcome())
            if gold is not None:
                current, report_of_agreement = gold.outcome()
                if not current:
                    return None
                return gathered, source, raters, (lambda: report_of_agreement) if wants_agreement else None, card_counts
            return gathered, source, raters, agreement.outcome if agreement is not None else None, card_counts
        finally:
            streams.close()

    source = selectors.gold_source(project)
    # Only what changed since the gold was last computed (an import computes a new project's). On PostgreSQL the
    # digests that tell whether it is current are checked beside the items pass, which is run again only when the
    # gold was computed again; elsewhere first, as the items are read after it.
    check_gold = refreshed and may_read_ahead()
    if refreshed and not check_gold:
        gold_compute(project, when_stale=True)
    done = items_once(check_gold)
    if done is None:  # the gold was computed again meanwhile: the pass reads it as it is now
        done = items_once(False)
    assert done is not None  # without the check the pass always counts
    gathered, source, raters, agreement, card_counts = done

    units = gathered.units
    kept = gathered.kept
    if not len(units):
        raise EmptyReleaseError(_empty_message(project, keep))
    if schema.stratify is not None and not units.label_names:
        # Records without any label would train and score nothing: a benchmark of questions without answers.
        # In English like every build error; the release page shows it in the reader's language (display.py).
        raise EmptyReleaseError(f"nothing to release: none of the {len(units)} releasable records of {project.slug} "
                                f"carries a label ({schema.stratify}); compute or adjudicate the gold first")
    report("splits", 0, len(units))
    units.freeze()
    if keep:
        # The splits the items have, in train/dev/test order, renumbered 0..k-1.
        codes = np.asarray(kept, dtype=np.uint8)
        present = [i for i in range(len(split_lib.SPLIT_NAMES)) if (codes == i).any()]
        names = [split_lib.SPLIT_NAMES[i] for i in present]
        lookup = np.zeros(len(split_lib.SPLIT_NAMES), dtype=np.uint8)
        lookup[present] = np.arange(len(present), dtype=np.uint8)
        codes = lookup[codes]
    else:
        names = list(release.split_spec["ratios"])
        codes = split_lib.assign_splits(units, release.split_spec["ratios"], release.seed or 0)
    counts = {name: int((codes == i).sum()) for i, name in enumerate(names)}
    leakage = split_lib.leakage_report(units, codes, names)
    label_counts = split_lib.split_label_counts(units, codes, names)
    ids = units.ids
    held_columns = {"ids": ids, "splits": codes, "split_names": names, "labels": units.labels,
                    "label_names": list(units.label_names), "texts": units.hashes}
    del units
    chosen = None if keep else (ids, codes, names)

    written: list[WrittenFile] = []
    done = 0
    samples: dict[str, Any] = {}
    if "klue" in release.formats:  # the check trains on KLUE records; without them it cannot run
        # scikit-learn loads with the first build that is checked, not with the web app or another build.
        from .release_check import check_samples

        samples = check_samples(project.task_type, release.formats, [n for n in names if counts[n]],
                                _check_seed(release))
    # A split without records gets no file in any format: an empty file is not what every format's own reader
    # accepts (the official SQuAD v2.0 scorer divides by the number of questions; ``datasets`` refuses a split of
    # an empty file), and the manifest and card still list the split with its 0 records.
    if heads:
        report("files", 0, len(codes))
        written += write_jsonl_heads(folder, schema, names, _line_chunks(work, codes), counts)
    else:
        for index, name in enumerate(names):
            if not counts[name]:
                continue
            report("files", done, len(codes))
            records = _records_of(work, codes, index)
            if name in samples:  # the baseline check's sample, drawn as the split is written
                records = samples[name].feed(records)
            written += write_split(folder, project.task_type, name, records, release.formats,
                                   schema=schema if soft is not None else None)
            done += counts[name]
    if "klue" in release.formats:
        written += write_klue_extras(folder, project.task_type, schema, project.label_schema or {})
    written += write_extras(folder, project.task_type, release.formats, project.label_schema or {})
    budget, budget_files = _budget_record(project, folder, ids, codes, names)
    written += budget_files

    report("card")
    gold_rule, screening = card_counts.outcome()
    stats = {
        "gold": {"source": source, "rule": gold_rule, "refreshed": bool(refreshed),
                 "items_by_source": dict(sorted(gathered.by_source.items())),
                 "excluded": dict(sorted(gathered.excluded.items()))},
        "guideline_versions": sorted(gathered.guideline_versions),
        "split_counts": counts,
        "label_counts": label_counts,
        "excluded": dict(sorted(gathered.excluded.items())),
        "leakage": leakage,
        "agreement": agreement() if agreement is not None else {"reason": "not requested for this build"},
        "screening": {**screening, "pii_by_type": dict(sorted(gathered.pii.items())),
                      "items_with_pii": gathered.items_with_pii,
                      "included_by_status": dict(sorted(gathered.included_status.items()))},
        "annotators": {**_annotators(project, raters.people, gathered.per_item, gathered.assisted, ids),
                       "budget": budget},
        "sources": selectors.sources_by_id(gathered.source_ids),
        "baseline_check": {"passed": None, "reason": "pending"},
    }
    _set(release, **stats)
    reason_names = list(gathered.reason_names)
    held = diff.Held(version=release.version, **held_columns, golds=np.frombuffer(gathered.golds, dtype=np.uint64),
                     excluded={item: reason_names[code] for item, code in zip(gathered.excluded_ids,
                                                                              gathered.excluded_codes, strict=True)},
                     label_counts=label_counts, agreement=release.agreement)
    report("contamination")
    _set(release, contamination=release_contamination(release, held, near_duplicate_links(project),
                                                      progress=lambda _label, n: report("contamination", n)))
    changes = diff.build_changelog(release, held, folder)
    if changes is not None:
        written += [WrittenFile(name, "changes") for name in changes["files"]]
    _write_meta(release, folder, written, changes)

    report("check")
    _set(release, status=ReleaseStatus.CHECKING)
    _set(release, baseline_check=_baseline_check(release, folder, samples))
    _write_meta(release, folder, written, changes)
    sums = write_sums(folder)
    _record_files(release, folder, written, sums)
    return chosen, held


def _records_of(work: Path, codes: Any, index: int) -> Iterator[dict[str, Any]]:
    """The records of one split, in id order, from the work file (line ``i`` is the ``i``-th item)."""
    return map(orjson.loads, _lines_of(work, codes, index))


#: How much of the work file a JSONL-only release's splits are written from at a time (its lines are read whole).
_LINES_CHUNK = 4 << 20


def _line_chunks(work: Path, codes: np.ndarray) -> Iterator[tuple[list[bytes], np.ndarray]]:
    """The work file's lines, with their line ends, a few MB at a time, each chunk with its lines' split codes."""
    done = 0
    with open(work, "rb") as lines:
        while chunk := lines.readlines(_LINES_CHUNK):
            if done + len(chunk) > len(codes):
                raise ValueError("the work file has more lines than the release has items")
            yield chunk, codes[done:done + len(chunk)]
            done += len(chunk)
    if done != len(codes):
        raise ValueError("the work file has fewer lines than the release has items")


def _lines_of(work: Path, codes: Any, index: int) -> Iterator[bytes]:
    """The work file's lines of one split, in id order, without their line ends."""
    with open(work, "rb") as lines:
        for code, line in zip(codes.tolist(), lines, strict=True):
            if code == index:
                yield line[:-1]


def _gold_rule(source: str, project: Project) -> str:
    if source == selectors.GOLD_TABLE:
        from annotation.models import GoldLabel

        rules = (GoldLabel.objects.filter(item__project=project).values_list("rule").annotate(n=Count("id"))
                 .order_by("rule"))
        return "gold table: " + ", ".join(f"{rule or 'none'} ({n})" for rule, n in rules)
    return (f"{project.task.klue_name} record rule over the annotations: the corpus's own gold label when the "
            "item was imported with one, else the task's vote over its annotations, else its single annotation")


def _agreement(project: Project) -> dict[str, Any]:
    try:
        report_now = importlib.import_module("annotation.agreement.services").report_now
    except (ImportError, AttributeError):
        return {"reason": "agreement module not available"}
    try:
        data = report_now(project)
    except LookupError as error:  # no agreement measure for this task type (yet)
        return {"reason": str(error)}
    except Exception as error:  # an agreement failure must not sink the release; the card says why
        logger.exception("agreement for %s failed", project.slug)
        return {"reason": f"agreement failed: {error}"}
    keys = ("annotators", "items_counted", "items_excluded", "coefficients", "primary", "bootstrap",
            *RELIABILITY_KEYS)
    return _finite({key: data.get(key) for key in keys})


def _annotators(project: Project, people: list[dict[str, Any]], per_item: dict[str, Counter[int]],
                assisted: Counter[str], released: np.ndarray) -> dict[str, Any]:
    """Who annotated, how many per item, and (``assisted``) how much of the released items' gold was made with
    a model's suggestion shown: released items, items with at least one assisted annotation, and the released
    items' Goldset annotations, those shown a suggestion and those that kept it unchanged."""
    total = len(people)
    imported = sum(bool(person["annotator__is_imported"]) for person in people)
    if budget_of(project).uniform:
        complete = {stage: {"k": project.annotations_needed(stage),
                            "items": sum(n for count, n in hist.items() if stage_complete(project, stage, count))}
                    for stage, hist in per_item.items()}
    else:  # items have different k: each released item's counts against its own
        complete = {stage: {"k": "budget", "items": _complete_under_budget(project, stage, released)}
                    for stage in per_item}
    return {"total": total, "imported": imported,
            "per_item": {stage: {str(k): v for k, v in sorted(hist.items())} for stage, hist in per_item.items()},
            "complete": complete,
            "assisted": {key: assisted[key] for key in
                         ("items", "assisted_items", "annotations", "shown", "accepted_unchanged")}}


def _complete_under_budget(project: Project, stage: str, released: np.ndarray) -> int:
    """How many of the ``released`` items hold their own k of annotations in ``stage``."""
    counts = np.array(Annotation.objects.filter(item__project=project, stage=stage).values("item_id")
                      .annotate(n=Count("id")).order_by("item_id").values_list("item_id", "n"),
                      dtype=np.int64).reshape(-1, 2)
    counts = counts[np.isin(counts[:, 0], released)]
    return int(np.count_nonzero(stage_complete(project, stage, counts[:, 1], counts[:, 0])))


#: The file of a release whose items had different k: each record's id, split and k.
BUDGET_FILE = "annotators_per_item.csv"


def _budget_record(project: Project, folder: Path, ids: np.ndarray, codes: np.ndarray, names: list[str]
                   ) -> tuple[dict[str, Any], list[WrittenFile]]:
    """The k each released item had under the project's budget: for the manifest, the budget and how many items of
    each split had each k; when they differ, :data:`BUDGET_FILE` lists every record (id, split, k)."""
    budget = budget_of(project)
    ks = budget_ks(project, ids)
    by_split = {name: {str(k): int(n) for k, n in zip(*np.unique(ks[codes == i], return_counts=True), strict=True)}
                for i, name in enumerate(names)}
    record: dict[str, Any] = {
        "default": budget.default, "splits": dict(budget.splits),
        "rules": (project.options or {}).get("budget", {}).get("rules", []), "items_by_k": by_split}
    if len(np.unique(ks)) < 2:
        return record, []
    guids = diff.record_ids(project.pk, project.slug, ids.tolist())
    with open(folder / BUDGET_FILE, "w", encoding="utf-8", newline="") as out:
        out.write("guid,split,k\n")
        for item, code, k in zip(ids.tolist(), codes.tolist(), ks.tolist(), strict=True):
            guid = guids[item].replace('"', '""')
            out.write(f'"{guid}",{names[code]},{k}\n')
    record["file"] = BUDGET_FILE
    return record, [WrittenFile(BUDGET_FILE, "budget", records=len(ids))]


def _check_seed(release: Release) -> int:
    from .release_check import DEFAULT_SEED

    return DEFAULT_SEED if release.seed is None else release.seed


def _baseline_check(release: Release, folder: Path, samples: dict[str, Any]) -> dict[str, Any]:
    """The baseline check on the written folder (on ``samples`` of its splits when the writing filled them);
    its ``verdict`` is ``unchecked`` (``passed`` ``None``) when it cannot run (no KLUE train and dev files to
    train on) and the reason says why."""
    if "klue" not in release.formats:
        return {"verdict": "unchecked", "passed": None, "metrics": {}, "trivial": {},
                "reason": "baseline check could not run: the release has no KLUE files to train and score on"}
    from .release_check import release_check

    options: dict[str, Any] = {"leakage_clean": bool(release.leakage.get("clean")), "seed": _check_seed(release),
                               "samples": samples}
    if release.options.get("check_margin") is not None:
        options["margin"] = float(release.options["check_margin"])
    started = time.perf_counter()
    try:
        result = dict(release_check(folder, release.project.task_type, **options))
    except ValueError as error:  # the folder has nothing the baseline can train and score on
        return {"verdict": "unchecked", "passed": None, "metrics": {}, "trivial": {},
                "reason": f"baseline check could not run: {str(error).replace(str(folder), '<release>')}"}
    result.setdefault("seconds", round(time.perf_counter() - started, 3))
    return _finite(result)


def _finite(value: Any) -> Any:
    """NaN and infinities (an undefined metric) as ``None``: JSON, and the JSON columns, have no NaN."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(v) for key, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _manifest(release: Release, written: list[WrittenFile], changes: dict[str, Any] | None) -> dict[str, Any]:
    project = release.project
    task = project.task
    manifest = {
        "project": project.slug,
        "project_name": project.name,
        "task_type": project.task_type,
        "klue_name": task.klue_name,
        "task_title": task.title,
        "version": release.version,
        "klue_format_version": KLUE_FORMAT_VERSION,
        "split_spec": release.split_spec,
        "seed": release.seed,
        "formats": release.formats,
        "splits": release.split_counts,
        "label_counts": release.label_counts,
        "files": [{"path": f.path, "kind": f.kind, "split": f.split, "records": f.records}
                  for f in [*written, WrittenFile(CARD_NAME, "card")]],
        "gold": release.gold,
        "excluded": release.excluded,
        "leakage": release.leakage,
        "guideline_versions": release.guideline_versions,
        "annotators": release.annotators,
        "agreement": release.agreement,
        "screening": release.screening,
        "sources": release.sources,
        # Wall-clock seconds differ between runs: the database keeps them, the files do not.
        "check": {key: value for key, value in release.baseline_check.items() if key != "seconds"},
        "raters": "opaque per-project ids (r01, r02, …); the mapping to accounts stays in Goldset",
        # Only in a release built with them: one built without stays byte-identical to those before the option.
        **({"soft_labels": {"votes": VOTES, "posteriors": POSTERIORS,
                            "rule": (release.gold or {}).get("rule")}}
           if release.options.get("soft_labels") else {}),
    }
    if changes is not None:  # from a project's second release on: what changed since the previous version
        manifest["changes"] = changes
    if release.contamination:  # counts only: the hits, with item ids, stay in Goldset (the API, the page)
        c = release.contamination
        manifest["contamination"] = {
            "against": c.get("against", []), "policy": c.get("policy"), "exact": c.get("exact", {}),
            "near": c.get("near", {}), "clean": c.get("clean", True), "fails": c.get("fails", False),
            "references": [{key: r[key] for key in ("name", "kind", "training", "exact", "near")}
                           for r in c.get("references", [])]}
    return manifest


def _guidelines(release: Release) -> list[dict[str, Any]]:
    """The guideline versions the annotations were made under (or the current one), with ethics and PII."""
    qs = Guideline.objects.filter(project=release.project)
    chosen = qs.filter(version__in=release.guideline_versions) if release.guideline_versions else qs.filter(
        is_current=True)
    return [{"version": g.version, "ethics": g.ethics, "pii": g.pii} for g in chosen.order_by("version")]


def _write_meta(release: Release, folder: Path, written: list[WrittenFile],
                changes: dict[str, Any] | None) -> None:
    manifest = _manifest(release, written, changes)
    (folder / MANIFEST_NAME).write_bytes(orjson.dumps(manifest, option=orjson.OPT_INDENT_2) + b"\n")
    schema = flat_schema(release.project.task_type)
    if release.options.get("soft_labels"):
        schema = SoftLabels(release.project).schema(schema)
    card = render_card(manifest, schema, _guidelines(release), release.project.description)
    (folder / CARD_NAME).write_text(card, encoding="utf-8")


def _record_files(release: Release, folder: Path, written: list[WrittenFile], sums: dict[str, str]) -> None:
    by_path = {f.path: f for f in written}
    kinds = {CARD_NAME: "card", MANIFEST_NAME: "manifest"}
    rows = []
    for path, digest in sums.items():
        info = by_path.get(path)
        rows.append(ReleaseFile(release=release, path=path, kind=info.kind if info else kinds.get(path, "other"),
                                split=info.split if info else "", records=info.records if info else None,
                                size=(folder / path).stat().st_size, sha256=digest))
    rows.append(ReleaseFile(release=release, path=SUMS_NAME, kind="checksums",
                            size=(folder / SUMS_NAME).stat().st_size, sha256=sha256_file(folder / SUMS_NAME)))
    ReleaseFile.objects.filter(release=release).delete()
    ReleaseFile.objects.bulk_create(rows)


# -- after the build ------------------------------------------------------------------------------


def release_verify(release: Release) -> dict[str, Any]:
    """Re-hash the release folder against ``SHA256SUMS`` and the checksums recorded at build time."""
    place = selectors.release_folder(release)
    result = verify_folder(place)
    recorded = dict(ReleaseFile.objects.filter(release=release).exclude(path=SUMS_NAME)
                    .values_list("path", "sha256"))
    if result.get("ok") or "files" in result:
        from .integrity import read_sums

        listed = read_sums(place)
        differs = sorted(p for p in set(recorded) | set(listed) if recorded.get(p) != listed.get(p))
        result["differs_from_record"] = differs
        result["ok"] = bool(result["ok"]) and not differs
    return result


@transaction.atomic
def release_publish(*, release: Release, user: User | None, override_reason: str = "") -> Release:
    """Publish a release that passed its checks — or an ``inconclusive`` one with ``override_reason`` (why it
    is published without a verdict, kept on the release and in the audit trail): from now on nothing about it
    may change."""
    release = Release.objects.select_for_update().get(pk=release.pk)
    override_reason = (override_reason or "").strip()
    if release.status == ReleaseStatus.PUBLISHED:
        raise ServiceError(f"release {release.version} is already published", code="conflict")
    if release.status == ReleaseStatus.INCONCLUSIVE and not override_reason:
        raise ServiceError(f"release {release.version} is inconclusive: publishing it needs an override reason",
                           code="conflict", field="override_reason")
    if release.status not in (ReleaseStatus.PASSED, ReleaseStatus.INCONCLUSIVE):
        raise ServiceError(f"only a release that passed its checks can be published; {release.version} is "
                           f"{release.get_status_display().lower()}", code="conflict")
    if release.status == ReleaseStatus.PASSED:
        override_reason = ""
    verification = release_verify(release)
    if not verification.get("ok"):
        raise ServiceError(f"the files of {release.version} do not match their checksums; rebuild it",
                           code="conflict")
    before = release.status
    _set(release, status=ReleaseStatus.PUBLISHED, published_at=timezone.now(), published_by=user,
         publish_override=override_reason)
    if (local := selectors.release_folder(release).local) is not None:
        make_read_only(local)
    after = {"version": release.version, "status": ReleaseStatus.PUBLISHED,
             "published_at": release.published_at.isoformat()}
    if override_reason:
        after["override_reason"] = override_reason
    audit_record(project=release.project_id, actor=user, object_type=AuditObject.RELEASE, object_id=release.pk,
                 action="publish", before={"version": release.version, "status": before}, after=after)
    webhooks.emit(release.project_id, WebhookEvent.RELEASE_PUBLISHED, {
        "release": release.pk, "version": release.version, "status": release.status,
        "published_at": release.published_at.isoformat()})
    return release


@transaction.atomic
def release_delete(*, release: Release, by: User | None = None) -> None:
    """Remove an unpublished release (a failed or broken build) and its folder, freeing its version."""
    release = Release.objects.select_for_update().get(pk=release.pk)
    if release.status == ReleaseStatus.PUBLISHED:
        raise ServiceError(f"release {release.version} is published and cannot be deleted", code="conflict")
    if release.status in (ReleaseStatus.BUILDING, ReleaseStatus.CHECKING):
        raise ServiceError(f"release {release.version} is still building", code="conflict")
    selectors.release_folder(release).delete()
    audit_record(project=release.project_id, actor=by, object_type=AuditObject.RELEASE, object_id=release.pk,
                 action="delete", before={"version": release.version, "status": release.status}, after=None)
    release.delete()
