"""The project's suggester: its baseline retrained on the current gold, or an uploaded predictions file.

Both end in ``annotation.services.suggestions_replace`` (the annotation app owns the Suggestion rows; this
module owns training and file parsing, since the baselines and the KLUE readers live on this side). A run is
requested, and its status and results recorded, by ``exports.suggester_services`` (``suggester_request``,
``predictions_upload``, ``suggester_run_update``); this module writes nothing itself.

Retraining (``suggester_services.suggester_request`` → Celery ``exports.suggester_run`` → :func:`suggester_run`):

1. every item with a usable gold label becomes a KLUE record (``TaskType.build_record``, as a release
   builds it); at least ``MIN_GOLD`` are needed;
2. a learning curve: a fixed ~20 % of the gold (by a hash of the item's text) is held out, the baseline is
   trained on growing shares of the rest and scored on it with the task's KLUE metric;
3. the baseline is trained on all the gold and predicts, with a confidence, every item that still needs
   work (no usable gold, not a gold / attention item, its writing stage done);
4. the predictions become suggestions of a new model version, written in one transaction — annotators
   keep working meanwhile (the job runs on a worker; readers never wait for it).

An upload (``suggester_services.predictions_upload``) is a KLUE file of the task (records matched to items by
guid) or JSONL with one ``{"external_id" | "item", "payload", "confidence"?, "uncertainty"?}`` per line, the
payload in the task's annotation shape.
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation import assist
from annotation import services as annotation_services
from annotation.assist import SuggestionRow
from annotation.gold.selectors import open_flag_items, release_exclusion
from annotation.gold.services import gold_compute
from annotation.models import USABLE_GOLD, GoldLabel, GoldStatus, Item, Project, ScreeningStatus
from annotation.services import ServiceError
from annotation.task_types import PayloadError, TaskType
from config.storage import upload_delete, upload_local

from . import selectors, suggester_services
from .models import SuggesterRun, SuggesterRunKind, SuggesterRunStatus

logger = logging.getLogger(__name__)

#: Fewer gold items than this and the baseline is not trained (its suggestions would be noise).
MIN_GOLD = 10
#: With at least this many gold items a share is held out for the learning curve.
MIN_GOLD_FOR_CURVE = 20
HOLDOUT_SHARE = 5  # one item in five (by hash)
CURVE_SHARES = (0.25, 0.5, 1.0)
PREDICT_CHUNK = 500
SEED = 13
UPLOAD_FORMATS = ("klue", "jsonl")

Progress = Callable[[int, str], None]


# -- records in, payloads out ---------------------------------------------------------------------------


def prediction_input(task: TaskType, item: Item) -> dict[str, Any]:
    """The KLUE record of an item still to be annotated, in the shape the baseline reads."""
    record = task.build_record(external_id=item.external_id or f"item-{item.pk}", payload=item.payload,
                               meta=item.meta or {}, annotations=[], gold=None)
    return task.prediction_record(record, item.payload)


def _held_out(content_hash: str) -> bool:
    # By the text, not the item id: the same gold gives the same curve on any database, and exact duplicates
    # never sit on both sides.
    return int(hashlib.sha256(f"suggester-holdout:{content_hash}".encode()).hexdigest()[:8], 16) % HOLDOUT_SHARE == 0


def _gold_records(project: Project) -> list[tuple[str, dict[str, Any]]]:
    """(content hash, KLUE record with the gold label) of every releasable item with a usable gold label, as a
    release builds them: the suggester never learns from what a release would leave out."""
    task = project.task
    flagged = open_flag_items(project)
    out = []
    for row in selectors.iter_item_rows(project, with_gold=True):
        if row.gold_status in USABLE_GOLD and row.gold is not None and release_exclusion(
                screening_status=row.screening_status, open_flag=row.id in flagged, gold_status=row.gold_status,
                has_annotations=bool(row.annotations), corpus_only=row.corpus_only, gold_table=True) is None:
            out.append((row.content_hash, task.build_record(external_id=row.external_id or f"item-{row.id}",
                                                  payload=row.payload, meta=row.meta, annotations=row.annotations,
                                                  gold=row.gold)))
    return out


def suggestion_candidates(project: Project) -> Iterator[Item]:
    """Items that still need work and may show a suggestion: no usable gold, not a gold / attention item,
    not dropped, and (two-stage tasks) their writing stage done."""
    task = project.task
    qs = (Item.objects.filter(project=project, is_gold_check=False)
          .exclude(screening_status=ScreeningStatus.DROPPED)
          .exclude(id__in=GoldLabel.objects.filter(item__project=project, status__in=[*USABLE_GOLD, GoldStatus.KNOWN])
                   .values("item_id")))
    stage = task.stage(task.suggestion_stages[0])
    index = list(task.stages).index(stage)
    if index > 0 and task.stages[index - 1].done_marker:
        qs = qs.filter(payload__has_key=task.stages[index - 1].done_marker)
    yield from qs.order_by("id").iterator(chunk_size=2000)


# -- scoring ---------------------------------------------------------------------------------------------


def _primary_score(slug: str, model: Any, dev: list[dict[str, Any]]) -> float | None:
    from .metrics import get_task_metrics, score

    try:
        value = score(slug, dev, model(dev)).get(get_task_metrics(slug).primary)
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return None
    return None if value is None or not math.isfinite(value) else float(value)


def learning_curve(slug: str, gold: list[tuple[str, dict[str, Any]]], ontology: Any,
                   report: Progress) -> dict[str, Any]:
    """Scores of the baseline trained on growing shares of the non-held-out gold, on the held-out share."""
    from .baselines import get_baseline
    from .metrics import get_task_metrics

    primary = get_task_metrics(slug).primary
    if len(gold) < MIN_GOLD_FOR_CURVE:
        return {"primary": primary, "points": [], "reason": f"fewer than {MIN_GOLD_FOR_CURVE} gold items"}
    dev = [r for key, r in gold if _held_out(key)]
    train = [r for key, r in gold if not _held_out(key)]
    if len(dev) < 2 or len(train) < MIN_GOLD // 2:
        return {"primary": primary, "points": [], "reason": "too few items on one side of the held-out split"}
    baseline = get_baseline(slug)
    points = []
    for k, share in enumerate(CURVE_SHARES):
        n = max(MIN_GOLD // 2, round(len(train) * share))
        report(10 + 10 * k, f"learning curve: training on {n} of {len(train)} gold items")
        subset = train[:n]
        try:
            model = baseline.train(subset, SEED, ontology)
        except ValueError as error:  # e.g. a single class in a small share
            points.append({"n": n, "score": None, "reason": str(error)[:200]})
            continue
        points.append({"n": n, "score": _primary_score(slug, model, dev)})
    return {"primary": primary, "held_out": len(dev), "points": points}


def _uncertainty(scored: Any, measure: str) -> float:
    return float(scored.entropy) if measure == "entropy" else float(1 - scored.margin)


def _rows(project: Project, model: Any, report: Progress) -> Iterator[SuggestionRow]:
    task = project.task
    stage = task.suggestion_stages[0]
    schema = project.label_schema or {}
    measure = assist.assist_settings(project).uncertainty
    chunk: list[Item] = []
    done = 0

    def flush() -> Iterator[SuggestionRow]:
        records = [prediction_input(task, item) for item in chunk]
        for item, scored in zip(chunk, model.scored(records), strict=True):
            try:
                payload = task.suggestion_payload(scored.record, item.payload, schema)
            except (KeyError, TypeError, ValueError):
                continue
            yield SuggestionRow(item.pk, stage, payload, confidence=float(scored.confidence),
                                uncertainty=_uncertainty(scored, measure),
                                detail={"margin": float(scored.margin), "entropy": float(scored.entropy),
                                        **({"parts": [round(float(p), 4) for p in scored.parts]}
                                           if scored.parts is not None else {})})

    for item in suggestion_candidates(project):
        chunk.append(item)
        if len(chunk) >= PREDICT_CHUNK:
            yield from flush()
            done += len(chunk)
            report(min(90, 60 + done // PREDICT_CHUNK), f"predicted {done} items")
            chunk = []
    if chunk:
        yield from flush()


# -- the job -----------------------------------------------------------------------------------------------


def suggester_run(run_id: int, *, progress: Progress | None = None) -> SuggesterRun:
    """Run a queued retraining or upload (the Celery task). A finished run is returned as is; a run whose
    worker died is started over (writing the same model version again replaces it)."""
    run = SuggesterRun.objects.select_related("project").get(pk=run_id)
    if run.is_finished:
        return run
    suggester_services.suggester_run_update(run, status=SuggesterRunStatus.RUNNING, started_at=timezone.now(),
                                            progress=1, progress_note="starting")

    def report(percent: int, note: str) -> None:
        suggester_services.suggester_run_update(run, progress=max(1, min(99, int(percent))), progress_note=note[:200])
        if progress is not None:
            progress(percent, note)

    try:
        if run.kind == SuggesterRunKind.TRAIN:
            _train(run, report)
        else:
            _read_upload(run, report)
    except Exception as error:
        logger.exception("suggester run %s of %s failed", run.pk, run.project.slug)
        message = error.message if isinstance(error, ServiceError | assist.AssistError) else (
            f"{type(error).__name__}: {error}")
        suggester_services.suggester_run_update(run, status=SuggesterRunStatus.FAILED, error=message[:4000],
                                                finished_at=timezone.now())
        return run
    finally:
        upload_delete(run.stored_path)
    suggester_services.suggester_run_update(run, status=SuggesterRunStatus.DONE, progress=100, progress_note="done",
                                            finished_at=timezone.now())
    if progress is not None:
        progress(100, "done")
    return run


def _train(run: SuggesterRun, report: Progress) -> None:
    from .baselines import get_baseline

    project = run.project
    slug = project.task_type
    report(3, "computing gold")
    gold_compute(project, when_stale=True)
    gold = _gold_records(project)
    if len(gold) < MIN_GOLD:
        raise ServiceError(f"the baseline needs at least {MIN_GOLD} gold items to suggest anything; the project "
                           f"has {len(gold)}", code="conflict")
    ontology = (project.label_schema or {}).get("ontology")
    curve = learning_curve(slug, gold, ontology, report)
    report(45, f"training on all {len(gold)} gold items")
    model = get_baseline(slug).train([r for _, r in gold], SEED, ontology)
    version = f"{slug}-baseline-r{run.pk}-{len(gold)}gold"
    report(60, "predicting the items still to annotate")
    stored = annotation_services.suggestions_replace(project=project, rows=_rows(project, model, report),
                                                     model_version=version, source="baseline", trained_on=len(gold))
    report(95, f"stored {stored['stored']} suggestions")
    scores = [p["score"] for p in curve["points"] if p.get("score") is not None]
    suggester_services.suggester_run_update(run, model_version=version, gold_items=len(gold),
                                            suggestions=stored["stored"],
                                            metrics={"primary": curve["primary"], "learning_curve": curve,
                                                     "holdout_score": scores[-1] if scores else None,
                                                     "stored": stored})


# -- uploads -------------------------------------------------------------------------------------------------


def _upload_payload(task: TaskType, record: dict[str, Any], stage: str) -> dict[str, Any] | None:
    """The label a KLUE record carries for the suggestion stage (a writer's label or answer when that is all)."""
    parsed = task.parse_record(record)
    for annotation in parsed.annotations:
        if annotation.stage == stage:
            return annotation.payload
    for annotation in parsed.annotations:
        picked = {k: annotation.payload[k] for k in ("label", "answer") if k in annotation.payload}
        if picked:
            return picked
    return None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _upload_rows(run: SuggesterRun, path: Path, errors: list[str]) -> Iterator[SuggestionRow]:
    from datasets_build.klue_formats import iter_klue_records

    project = run.project
    task = project.task
    stage = task.suggestion_stages[0]
    by_external = dict(Item.objects.filter(project=project).exclude(external_id="").values_list("external_id", "id"))

    def note(message: str) -> None:
        if len(errors) < 50:
            errors.append(message)

    if run.format == "klue":
        for line, record in iter_klue_records(path, project.task_type):
            item_id = by_external.get(str(record.get("guid", "")))
            if item_id is None:
                note(f"record {line}: no item with guid {record.get('guid')!r}")
                continue
            try:
                payload = _upload_payload(task, record, stage)
            except PayloadError as error:
                note(f"record {line}: {error}")
                continue
            if payload is not None:
                yield SuggestionRow(item_id, stage, payload, _number(record.get("confidence")),
                                    _number(record.get("uncertainty")))
        return
    with path.open("rb") as lines:
        for n, raw in enumerate(lines, 1):
            if not raw.strip():
                continue
            try:
                row = orjson.loads(raw)
            except orjson.JSONDecodeError as error:
                note(f"line {n}: not JSON ({error})")
                continue
            if not isinstance(row, dict) or not isinstance(row.get("payload"), dict):
                note(f"line {n}: expected an object with a payload object")
                continue
            item_id = row.get("item") if isinstance(row.get("item"), int) else by_external.get(
                str(row.get("external_id", "")))
            if item_id is None:
                note(f"line {n}: no item {row.get('item') or row.get('external_id')!r} in this project")
                continue
            yield SuggestionRow(int(item_id), str(row.get("stage") or stage), row["payload"],
                                _number(row.get("confidence")), _number(row.get("uncertainty")))


def _read_upload(run: SuggesterRun, report: Progress) -> None:
    report(10, f"reading {run.file_name}")
    name = (run.metrics or {}).get("model") or Path(run.file_name).stem
    version = f"upload-r{run.pk}-{name}"[:120]
    errors: list[str] = []
    try:
        with upload_local(run.stored_path) as path:
            stored = annotation_services.suggestions_replace(project=run.project,
                                                             rows=_upload_rows(run, path, errors),
                                                             model_version=version, source="upload")
    except ValueError as error:  # the KLUE reader's FormatError
        raise ServiceError(f"{run.file_name}: {error}", field="file") from None
    stored["errors"] = errors + stored["errors"]
    suggester_services.suggester_run_update(run, model_version=version, suggestions=stored["stored"],
                                            metrics={**run.metrics, "stored": stored})


# -- retraining every N gold items, and the expected effect -----------------------------------------------------


def usable_gold_count(project: Project) -> int:
    return GoldLabel.objects.filter(item__project=project, status__in=USABLE_GOLD).count()


def retrain_due(project: Project) -> bool:
    """Whether the project's ``retrain_every`` new gold items have accumulated since the last training."""
    settings_ = assist.assist_settings(project)
    if settings_.retrain_every <= 0:
        return False
    return usable_gold_count(project) - settings_.trained_on >= settings_.retrain_every


def retrain_due_projects() -> list[int]:
    """Queue a retraining for every project whose gold grew by its ``retrain_every`` (the periodic job)."""
    queued = []
    for project in Project.objects.filter(options__assist__retrain_every__gt=0):
        if retrain_due(project):
            suggester_services.suggester_request(project=project, trigger="every_n_gold")
            queued.append(project.pk)
    return queued


def expected_effect(project: Project) -> dict[str, Any]:
    """Gold items needed for the target baseline score, from a fitted learning curve.

    The points are this project's learning curves (the newest training's, plus the held-out score of every
    earlier training at its gold count); the fit is ``score = a + b·ln(n)``. Extrapolation beyond the data is
    a rough guide, and says so.
    """
    target = assist.assist_settings(project).target_score
    runs = list(SuggesterRun.objects.filter(project=project, kind=SuggesterRunKind.TRAIN,
                                            status=SuggesterRunStatus.DONE).order_by("created_at"))
    points: list[dict[str, Any]] = []
    for k, run in enumerate(runs):
        curve = (run.metrics or {}).get("learning_curve") or {}
        good = [p for p in curve.get("points") or [] if p.get("score") is not None]
        chosen = good if k == len(runs) - 1 else good[-1:]
        points += [{"n": p["n"], "score": p["score"], "at": run.created_at.isoformat(), "run": run.pk}
                   for p in chosen]
    primary = ((runs[-1].metrics or {}).get("primary") if runs else None)
    out: dict[str, Any] = {"target": target, "primary": primary, "points": points,
                           "gold_now": usable_gold_count(project), "fit": None, "gold_needed": None,
                           "more_needed": None}
    distinct = {p["n"] for p in points}
    if len(distinct) < 2:
        out["reason"] = _("needs a learning curve with two or more sizes (train with at least 20 gold items)")
        return out
    import numpy as np

    x = np.log([p["n"] for p in points])
    y = np.asarray([p["score"] for p in points], dtype=float)
    b, a = np.polyfit(x, y, 1)
    out["fit"] = {"a": float(a), "b": float(b), "form": "score = a + b·ln(gold items)"}
    if target is None:
        out["reason"] = _("set a target score to see how many gold items it needs")
        return out
    if float(y.max()) >= target:
        out.update(gold_needed=int(min(p["n"] for p in points if p["score"] >= target)), more_needed=0)
        return out
    if b <= 1e-9:
        out["reason"] = _("the score is not rising with more gold; more of the same will not reach the target")
        return out
    needed = math.exp((target - a) / b)
    if needed > 1e9:
        out["reason"] = _("the target is far beyond the fitted curve")
        return out
    out.update(gold_needed=math.ceil(needed), more_needed=max(0, math.ceil(needed) - out["gold_now"]),
               extrapolated=needed > max(distinct))
    return out
