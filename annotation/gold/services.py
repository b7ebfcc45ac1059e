"""Writes of gold labels: apply the project's gold rule, adjudicate, mark gold/attention items.

Every write locks the project row first, so a recomputation never overwrites an adjudication that is being
saved, and two managers adjudicating the same item are serialised: the first wins, the second sees that
the gold label changed under it (``version``) and gets a conflict instead of silently overwriting.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson
from django.db import transaction
from django.db.models import TextField
from django.db.models.functions import Cast
from django.utils import timezone
from django.utils.translation import gettext

from ..audit import audit_record
from ..budget import budget_of, item_k
from ..models import (
    ANNOTATABLE_SCREENING,
    MANUAL_GOLD,
    Adjudication,
    Annotation,
    AuditObject,
    Flag,
    FlagResolution,
    GoldLabel,
    GoldState,
    GoldStatus,
    Item,
    Project,
    User,
)
from ..services import ServiceError
from ..task_types import PayloadError
from ..webhooks import services as webhooks
from . import selectors
from .rules import MACE, MODEL_RULES, RULES_VERSION, GoldDecision, GoldRule, rule_for

#: New gold rows written at a time while the rule streams over the items.
_WRITE_BATCH = 5000
#: Posteriors of an annotator model (Dawid–Skene, MACE) below this leave the item to a person.
MODEL_MIN_POSTERIOR = 0.5


def gold_settings(project: Project) -> dict[str, Any]:
    """The rule's settings: the label schema's defaults (e.g. NLI ``gold_min_votes``) overridden by options."""
    return {**(project.label_schema or {}), **(project.options or {})}


@dataclass(frozen=True)
class NeededTotals:
    """Annotations a complete item has over all stages (NLI: the writer's label plus the validators'): the
    project's ``default``, and the items the budget (``annotation.budget``) gives another k."""

    default: int
    other: dict[int, int]

    def of(self, item_id: int) -> int:
        return self.other.get(item_id, self.default)

    def digest(self) -> str:
        return hashlib.sha256(orjson.dumps(sorted(self.other.items()))).hexdigest() + f":{self.default}"


def annotations_needed_total(project: Project, item_ids: list[int] | None = None) -> NeededTotals:
    """:class:`NeededTotals` of the project's items (of ``item_ids`` only, when given)."""
    budget = budget_of(project)
    fixed = [stage.annotators for stage in project.task.stages if stage.annotators is not None]
    budgeted = len(project.task.stages) - len(fixed)
    default = sum(fixed) + budgeted * budget.default
    if budget.uniform or not budgeted:
        return NeededTotals(default, {})
    items = Item.objects.filter(project=project)
    if item_ids is not None:
        items = items.filter(pk__in=item_ids)
    ks = items.annotate(k=item_k(budget)).exclude(k=budget.default).values_list("id", "k")
    return NeededTotals(default, {item_id: sum(fixed) + budgeted * k for item_id, k in ks.iterator(chunk_size=5000)})


def _excluded_ids(project: Project) -> set[int]:
    flagged = Flag.objects.filter(item__project=project, resolution=FlagResolution.OPEN).values_list("item_id",
                                                                                                   flat=True)
    dropped = Item.objects.filter(project=project).exclude(screening_status__in=ANNOTATABLE_SCREENING).values_list(
        "id", flat=True)
    return set(flagged) | set(dropped)


def _payload_groups(project: Project, item_ids: list[int] | None = None
                    ) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """The project's annotation payloads grouped by item, in item id order (creation order within an item),
    streamed: a release refreshes the gold of every item without holding every annotation."""
    qs = Annotation.objects.filter(item__project=project)
    if item_ids is not None:
        qs = qs.filter(item_id__in=item_ids)
    current, group = None, []
    # The payload as text decoded by orjson: Django's json.loads per value cost more than the query.
    for item_id, payload in (qs.order_by("item_id", "created_at").annotate(t_payload=Cast("payload", TextField()))
                             .values_list("item_id", "t_payload").iterator(chunk_size=5000)):
        if item_id != current:
            if current is not None:
                yield current, group
            current, group = item_id, []
        group.append(orjson.loads(payload))
    if current is not None:
        yield current, group


def _payloads(project: Project, item_ids: list[int] | None = None) -> dict[int, list[dict[str, Any]]]:
    return dict(_payload_groups(project, item_ids))


def _model_decisions(model: str, rule: GoldRule, grouped: dict[int, list[dict[str, Any]]],
                     annotators: dict[int, list[int]], needed: NeededTotals) -> dict[int, GoldDecision]:
    """Fit an annotator model (Dawid–Skene or MACE) to every item at once; each item's detail keeps the
    posterior of every label (a release's soft labels) and the model's estimate of each of its annotators."""
    import numpy as np  # only these rules need it; keeps the URL configuration light

    field = getattr(rule, "field", "label")
    item_ids = sorted(grouped)
    people = sorted({a for ids in annotators.values() for a in ids})
    column = {a: j for j, a in enumerate(people)}
    classes = sorted({str(p.get(field)) for ps in grouped.values() for p in ps if p.get(field) is not None})
    code = {c: k for k, c in enumerate(classes)}
    matrix = np.full((len(item_ids), len(people)), -1, dtype=np.int64)
    for i, item_id in enumerate(item_ids):
        for annotator, payload in zip(annotators[item_id], grouped[item_id], strict=True):
            if payload.get(field) is not None:
                matrix[i, column[annotator]] = code[str(payload[field])]
    if not len(item_ids) or len(classes) < 2:
        return {}
    if model == MACE:
        from .mace import mace

        fit = mace(matrix, len(classes))
        posteriors, estimate_key, estimates = fit.posteriors, "annotator_competence", fit.competence
    else:
        from .dawid_skene import dawid_skene

        ds = dawid_skene(matrix, len(classes))
        posteriors, estimate_key, estimates = ds.posteriors, "annotator_accuracy", ds.accuracy()
    by_person = dict(zip(people, estimates.round(4).tolist(), strict=True))
    rounded = posteriors.round(6).tolist()
    decisions = {}
    for i, item_id in enumerate(item_ids):
        best = int(posteriors[i].argmax())
        posterior = float(posteriors[i, best])
        detail = {"posterior": round(posterior, 6), "annotations": len(grouped[item_id]),
                  "posteriors": dict(zip(classes, rounded[i], strict=True)),
                  estimate_key: {str(a): by_person[a] for a in annotators[item_id]}}
        if len(grouped[item_id]) < needed.of(item_id):
            decisions[item_id] = GoldDecision(None, GoldStatus.INCOMPLETE, model, detail)
        elif posterior < MODEL_MIN_POSTERIOR:
            detail["reason"] = f"posterior {posterior:.2f} below {MODEL_MIN_POSTERIOR}"
            decisions[item_id] = GoldDecision(None, GoldStatus.NEEDS_ADJUDICATION, model, detail)
        else:
            decisions[item_id] = GoldDecision({field: classes[best]}, GoldStatus.RESOLVED, model, detail)
    return decisions


def _fingerprint(project: Project, rule: GoldRule, settings: dict[str, Any], needed: NeededTotals,
                 digests: tuple[str, str]) -> str:
    """The gold's state: the rule with its settings, and the digests of its inputs and of the gold rows."""
    described = {"rules": RULES_VERSION, "task": project.task_type, "rule": type(rule).__qualname__,
                 "settings": settings, "needed": needed.digest(), "inputs": digests[0], "gold": digests[1]}
    return hashlib.sha256(orjson.dumps(described, option=orjson.OPT_SORT_KEYS, default=str)).hexdigest()


@transaction.atomic
def gold_compute(project: Project, *, when_stale: bool = False) -> dict[str, int] | None:
    """Apply the project's gold rule to every item; adjudicated and known answers are kept as they are.

    Returns how many items ended in each status. With ``when_stale`` (a release) nothing is computed, and
    ``None`` returned, when neither the rule's settings, nor an item, its screening, annotations or open
    flags, nor a gold row changed since the last computation (:class:`~annotation.models.GoldState`; on
    PostgreSQL — elsewhere every call computes).
    """
    Project.objects.select_for_update().get(pk=project.pk)
    rule = rule_for(project.task_type)
    settings = gold_settings(project)
    needed = annotations_needed_total(project)
    # Read before the rule reads anything: a change committed meanwhile then shows as a difference, never
    # as gold that looks current.
    before = selectors.gold_digests(project)
    if when_stale and before is not None and GoldState.objects.filter(
            project=project, fingerprint=_fingerprint(project, rule, settings, needed, before)).exists():
        return None
    statuses = _decide_all(project, rule, settings, needed)
    after = selectors.gold_digests(project)
    if after is not None and before is not None and after[0] == before[0]:
        GoldState.objects.update_or_create(project=project, defaults={
            "fingerprint": _fingerprint(project, rule, settings, needed, after)})
    else:  # the inputs changed while the rule read them: the next release computes again
        GoldState.objects.filter(project=project).delete()
    webhooks.adjudication_queue_check(project, statuses.get(GoldStatus.NEEDS_ADJUDICATION, 0))
    return statuses


def _decide_all(project: Project, rule: GoldRule, settings: dict[str, Any], needed: NeededTotals
                ) -> dict[str, int]:
    # Plain rows, not model instances: a release refreshes the gold of every item, and building 100,000
    # instances cost more than deciding them; only the changed ones become instances (for bulk_update).
    existing = {row[1]: row for row in GoldLabel.objects.filter(item__project=project).annotate(
        t_payload=Cast("payload", TextField()), t_detail=Cast("detail", TextField())).values_list(
        "id", "item_id", "t_payload", "status", "rule", "t_detail", "annotation_count", "version").iterator(
        chunk_size=5000)}
    excluded = _excluded_ids(project)
    decisions: dict[int, GoldDecision] = {}
    groups = _payload_groups(project)
    model = settings.get("gold_rule")
    if model in MODEL_RULES:
        grouped = dict(groups)  # the model is fitted on every item at once
        groups = iter(grouped.items())
        if not rule.categorical:
            raise ServiceError(f"{MODEL_RULES[model]} applies to categorical tasks, not {project.task_type}",
                               field="gold_rule")
        annotators: dict[int, list[int]] = defaultdict(list)
        for item_id, annotator in (Annotation.objects.filter(item__project=project)
                                   .order_by("item_id", "created_at").values_list("item_id", "annotator_id")):
            annotators[item_id].append(annotator)
        decisions = _model_decisions(model, rule, {i: p for i, p in grouped.items() if i not in excluded},
                                     annotators, needed)
    # COPY on PostgreSQL (executemany on SQLite), a batch at a time: bulk_create quoted every value into the
    # SQL on the client, which cost more than the rest of a first release's gold. (numpy comes with it:
    # imported here, not with the URL configuration.)
    from ..bulk import insert_values

    statuses: Counter[str] = Counter()
    to_create: list[dict[str, Any]] = []
    to_update: list[GoldLabel] = []
    now = timezone.now()
    group = next(groups, None)
    for item_id in Item.objects.filter(project=project).order_by("id").values_list("id", flat=True):
        while group is not None and group[0] < item_id:
            group = next(groups, None)
        payloads = group[1] if group is not None and group[0] == item_id else []
        gold = existing.get(item_id)
        if gold is not None and gold[3] in MANUAL_GOLD:
            statuses[gold[3]] += 1
            continue
        if item_id in excluded:
            decision = GoldDecision(None, GoldStatus.EXCLUDED, rule.name, {"reason": "flagged or dropped in screening"})
        else:
            decision = decisions.get(item_id) or rule.decide(payloads, needed=needed.of(item_id), settings=settings)
        statuses[decision.status] += 1
        count = len(payloads)
        if gold is None:
            to_create.append({"item_id": item_id, "payload": decision.payload, "status": decision.status,
                              "rule": decision.rule, "detail": decision.detail, "annotation_count": count})
            if len(to_create) >= _WRITE_BATCH:
                insert_values(GoldLabel, to_create)
                to_create = []
            continue
        gold_id, _, payload, status, rule_name, detail, annotation_count, version = gold
        if (status, rule_name, annotation_count) != (decision.status, decision.rule, count) or (
                _json(payload), _json(detail)) != (decision.payload, decision.detail):
            to_update.append(GoldLabel(id=gold_id, item_id=item_id, payload=decision.payload, status=decision.status,
                                       rule=decision.rule, detail=decision.detail, annotation_count=count,
                                       version=version + 1, updated_at=now))
    insert_values(GoldLabel, to_create)
    GoldLabel.objects.bulk_update(to_update, ["payload", "status", "rule", "detail", "annotation_count", "version",
                                              "updated_at"], batch_size=2000)
    return dict(statuses)


def _json(text: str | None) -> Any:
    return None if text is None else orjson.loads(text)


def gold_for_item(item: Item) -> GoldLabel:
    """The item's gold label, (re)computed by the rule unless a person decided it."""
    project = item.project
    if gold_settings(project).get("gold_rule") in MODEL_RULES:
        gold_compute(project)  # the model is fitted on the whole project
        return GoldLabel.objects.get(item=item)
    with transaction.atomic():
        Project.objects.select_for_update().get(pk=project.pk)
        gold = GoldLabel.objects.filter(item=item).first()
        if gold is not None and gold.status in MANUAL_GOLD:
            return gold
        rule = rule_for(project.task_type)
        payloads = _payloads(project, [item.pk]).get(item.pk, [])
        if item.pk in _excluded_ids(project):
            decision = GoldDecision(None, GoldStatus.EXCLUDED, rule.name, {"reason": "flagged or dropped in screening"})
        else:
            decision = rule.decide(payloads, needed=annotations_needed_total(project, [item.pk]).of(item.pk),
                                   settings=gold_settings(project))
        if gold is None:
            return GoldLabel.objects.create(item=item, payload=decision.payload, status=decision.status,
                                            rule=decision.rule, detail=decision.detail, annotation_count=len(payloads))
        if (gold.payload, gold.status, gold.detail) != (decision.payload, decision.status, decision.detail):
            gold.payload, gold.status, gold.rule, gold.detail = (decision.payload, decision.status, decision.rule,
                                                                 decision.detail)
            gold.annotation_count = len(payloads)
            gold.version += 1
            gold.save()
        return gold


def _validated_gold(item: Item, payload: Any) -> dict[str, Any]:
    """Check a manager's payload with the task's own validator (the last stage's shape) and shape it as gold."""
    project = item.project
    task = project.task
    try:
        normalised = task.validate_annotation(payload, item=item.payload, schema=project.label_schema,
                                              stage=project.stage_names[-1])
    except PayloadError as error:
        raise ServiceError(error.message, field=f"payload.{error.field}" if error.field else "payload") from None
    return rule_for(project.task_type).from_annotation(normalised)


def adjudicate(*, item: Item, by: User, reason: str, payload: Any = None, annotation: Annotation | None = None,
               base_version: int | None = None) -> GoldLabel:
    """Resolve an item: accept one annotator's ``annotation`` or a new ``payload``; the decision is kept.

    ``base_version`` is the gold version the manager looked at. When someone else changed the gold label
    since (or, without a version, when the item is already adjudicated) this raises a conflict, so the
    second of two managers deciding at once never overwrites the first without seeing it.
    """
    if not (reason or "").strip():
        raise ServiceError(gettext("say why you decided this way: the reason is kept with the decision"),
                           field="reason")
    if (payload is None) == (annotation is None):
        raise ServiceError(gettext("give either an annotation to accept or a new payload, not both"), field="payload")
    if annotation is not None:
        if annotation.item_id != item.pk:
            raise ServiceError(gettext("annotation %(id)s belongs to another item") % {"id": annotation.pk},
                               field="annotation")
        gold_payload = rule_for(item.project.task_type).from_annotation(annotation.payload)
    else:
        gold_payload = _validated_gold(item, payload)
    with transaction.atomic():
        Project.objects.select_for_update().get(pk=item.project_id)
        gold = GoldLabel.objects.filter(item=item).first()
        if gold is not None and base_version is not None and gold.version != base_version:
            raise ServiceError(gettext("the gold label of this item changed (version %(seen)s → %(now)s) while you "
                                       "were deciding; reload and decide again") % {"seen": base_version,
                                                                                    "now": gold.version},
                               code="conflict")
        if gold is not None and base_version is None and gold.status == GoldStatus.ADJUDICATED:
            raise ServiceError(gettext("this item is already adjudicated; send the version you saw to replace the "
                                       "decision"), code="conflict")
        if gold is None and base_version not in (None, 0):
            raise ServiceError("this item has no gold label yet; send version 0 or none", code="conflict")
        count = Annotation.objects.filter(item=item).count()
        decision = Adjudication.objects.create(
            item=item, payload=gold_payload, source_annotation=annotation, decided_by=by, reason=reason.strip(),
            previous_status=gold.status if gold else "", previous_payload=gold.payload if gold else None,
            annotation_count=count,
        )
        detail = {"adjudication": decision.pk, "by": by.username, "reason": decision.reason,
                  "accepted_annotation": annotation.pk if annotation else None}
        audit_record(project=item.project_id, actor=by, object_type=AuditObject.GOLD, object_id=item.pk,
                     action="adjudicate",
                     before={"status": gold.status, "payload": gold.payload, "version": gold.version} if gold else None,
                     after={"status": GoldStatus.ADJUDICATED, "payload": gold_payload, "reason": decision.reason,
                            "accepted_annotation": annotation.pk if annotation else None})
        if gold is None:
            return GoldLabel.objects.create(item=item, payload=gold_payload, status=GoldStatus.ADJUDICATED,
                                            rule="adjudication", detail=detail, annotation_count=count)
        gold.payload, gold.status, gold.rule, gold.detail = gold_payload, GoldStatus.ADJUDICATED, "adjudication", detail
        gold.annotation_count = count
        gold.version += 1
        gold.save()
        return gold


@transaction.atomic
def gold_check_set(*, item: Item, payload: Any, by: User) -> GoldLabel:
    """Make the item a gold / attention item with this known answer; it stays in annotators' queues
    like any other item and their answers are scored against it."""
    gold_payload = _validated_gold(item, payload)
    Project.objects.select_for_update().get(pk=item.project_id)
    Item.objects.filter(pk=item.pk).update(is_gold_check=True)
    gold, created = GoldLabel.objects.get_or_create(
        item=item, defaults={"payload": gold_payload, "status": GoldStatus.KNOWN, "rule": "known_answer",
                             "detail": {"by": by.username}})
    audit_record(project=item.project_id, actor=by, object_type=AuditObject.GOLD, object_id=item.pk,
                 action="set_known_answer",
                 before=None if created else {"status": gold.status, "payload": gold.payload},
                 after={"status": GoldStatus.KNOWN, "payload": gold_payload})
    if not created:
        gold.payload, gold.status, gold.rule, gold.detail = gold_payload, GoldStatus.KNOWN, "known_answer", {
            "by": by.username}
        gold.version += 1
        gold.save()
    return gold


@transaction.atomic
def gold_check_clear(*, item: Item, by: User | None = None) -> None:
    """Turn a gold / attention item back into an ordinary one (its gold is recomputed by the rule)."""
    Project.objects.select_for_update().get(pk=item.project_id)
    Item.objects.filter(pk=item.pk).update(is_gold_check=False)
    known = GoldLabel.objects.filter(item=item, status=GoldStatus.KNOWN).values_list("payload", flat=True).first()
    GoldLabel.objects.filter(item=item, status=GoldStatus.KNOWN).delete()
    audit_record(project=item.project_id, actor=by, object_type=AuditObject.GOLD, object_id=item.pk,
                 action="clear_known_answer", before={"status": GoldStatus.KNOWN, "payload": known}, after=None)
