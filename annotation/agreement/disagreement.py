"""Per-item disagreement: items sorted by how much their annotators disagree, with filters, and the
side-by-side comparison of one item's annotations (reads only)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q, QuerySet
from django.db.models.fields.json import KT

from ..models import Annotation, GoldLabel, Item, Project, User
from ..selectors import items_matching
from . import slips
from .data import load
from .lazy import pd
from .measures import Measure, measure_for


@dataclass
class DisagreementPage:
    rows: list[dict[str, Any]]
    total: int
    measure: str
    #: What the filters offer: the labels chosen, the project's sources and the annotators who labelled.
    choices: DisagreementChoices = field(default_factory=lambda: DisagreementChoices([], [], []))


@dataclass
class DisagreementChoices:
    labels: list[str]
    sources: list[str]
    #: Usernames (the filter takes a username, or an id through the API).
    annotators: list[str]
    #: Pairs of usernames of annotators who share items (the filter takes "a,b", usernames or ids).
    pairs: list[tuple[str, str]] = field(default_factory=list)
    #: Kinds of span disagreement found (span tasks only: boundary slip, type mismatch, missed span).
    kinds: list[str] = field(default_factory=list)


class FilterError(ValueError):
    """A filter names something the project cannot have (an unknown kind, a pair that is not two annotators)."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(message)
        self.field = field_name


def _user(value: str) -> User | None:
    """A username, or an id given as digits."""
    return User.objects.filter(Q(username=value) | Q(pk=int(value) if value.isdigit() else -1)).first()


def _pair(value: str) -> tuple[int, int]:
    parts = [part.strip() for part in value.split(",")]
    first, second = (_user(part) if part else None for part in parts) if len(parts) == 2 else (None, None)
    if first is None or second is None or first == second:
        raise FilterError("pair", "a pair is two different annotators, as 'a,b' (usernames or ids)")
    return first.pk, second.pk


def _pairs_sharing(frame: pd.DataFrame, names: dict[int, str]) -> list[tuple[str, str]]:
    """The pairs of annotators who labelled at least one item in common, by username."""
    who = frame[["item", "annotator"]].drop_duplicates()
    pairs = who.merge(who, on="item")
    pairs = pairs.loc[pairs["annotator_x"] < pairs["annotator_y"], ["annotator_x", "annotator_y"]].drop_duplicates()
    named = sorted(tuple(sorted((names.get(a, str(a)), names.get(b, str(b)))))
                   for a, b in zip(pairs["annotator_x"].tolist(), pairs["annotator_y"].tolist(), strict=True))
    return named[:PAIR_CHOICES_MAX]


def items_by_disagreement(project: Project, *, label: str = "", source: str = "", annotator: str = "",
                          text: str = "", gold_status: str = "", pair: str = "", kind: str = "", offset: int = 0,
                          limit: int = 50) -> DisagreementPage:
    """Counted items, most disagreement first; ``label`` keeps items where someone chose that label,
    ``source`` items from that source (the Source's name or the item's ``source`` field), ``annotator`` items
    that annotator (username or id) labelled, ``text`` items whose text contains it (``items_matching``),
    ``gold_status`` items whose gold has that status, ``pair`` ("a,b", usernames or ids) items both annotators
    answered differently, ``kind`` items showing that kind of span disagreement (:mod:`.slips`; span tasks).
    Raises :class:`FilterError` for a kind the task cannot have or a pair that is not two annotators."""
    measure = measure_for(project.task_type)
    schema = project.label_schema or {}
    span_task = measure.spans(None) is not None
    if kind and (not span_task or kind not in slips.KINDS):
        raise FilterError("kind", f"unknown kind of disagreement {kind!r} for {project.task_type}: "
                          + (", ".join(slips.KINDS) if span_task else "this task's answers are not spans"))
    pair_ids = _pair(pair) if pair else None
    data = load(project, measure.fields)
    frame = measure.prepare(data.frame, schema)
    if frame.empty:
        return DisagreementPage([], 0, "")
    result = measure.compute(frame, schema, n_boot=0)
    scores = result.item_disagreement.dropna()
    labels = measure.item_labels(frame)
    label_parts = labels.astype(str).str.split(",")
    names = dict(User.objects.filter(pk__in=frame["annotator"].unique().tolist()).values_list("pk", "username"))
    kinds = _span_kinds(measure, frame) if span_task else {}
    choices = DisagreementChoices(
        labels=sorted({part for parts in label_parts for part in parts if part and part != "nan"}),
        sources=_sources_of(Item.objects.filter(project=project)),
        annotators=sorted(names.values()), pairs=_pairs_sharing(frame, names),
        kinds=[k for k in slips.KINDS if any(k in found for found in kinds.values())])
    keep = pd.Series(True, index=scores.index)
    if label:
        with_label = frame.loc[label_parts.map(lambda parts: label in parts), "item"]
        keep &= keep.index.isin(with_label.unique())
    if source:
        ids = Item.objects.filter(project=project).filter(Q(source__name=source) | Q(payload__source=source))
        keep &= keep.index.isin(list(ids.values_list("id", flat=True)))
    if annotator:
        user = _user(annotator)
        mine = frame.loc[frame["annotator"] == (user.pk if user else -1), "item"]
        keep &= keep.index.isin(mine.unique())
    if pair_ids:
        answers = frame.assign(_key=measure.answer_keys(frame))
        answers = answers[answers["annotator"].isin(pair_ids)]
        differ = answers.groupby("item")["_key"].agg(lambda keys: len(keys) == 2 and keys.nunique() == 2)
        keep &= keep.index.isin(differ.index[differ.to_numpy(dtype=bool)])
    if kind:
        keep &= keep.index.isin([item for item, found in kinds.items() if kind in found])
    if text:
        found = items_matching(Item.objects.filter(project=project), project, text)
        keep &= keep.index.isin(list(found.values_list("id", flat=True)))
    if gold_status:
        with_status = GoldLabel.objects.filter(item__project=project, status=gold_status)
        keep &= keep.index.isin(list(with_status.values_list("item_id", flat=True)))
    scores = scores[keep].sort_values(ascending=False, kind="stable")
    page = scores.iloc[offset:offset + limit]
    per_item = frame.assign(_label=labels).groupby("item")["_label"].agg(lambda s: s.value_counts().to_dict())
    counts = frame.groupby("item").size()
    items = {i.pk: i for i in Item.objects.filter(pk__in=page.index.tolist()).select_related("source")}
    gold = dict(GoldLabel.objects.filter(item_id__in=page.index.tolist()).values_list("item_id", "status"))
    rows = [{
        "item": int(item_id), "external_id": items[item_id].external_id,
        "source": items[item_id].source.name if items[item_id].source else items[item_id].payload.get("source", ""),
        "disagreement": float(score), "annotations": int(counts.get(item_id, 0)),
        "labels": {str(k): int(v) for k, v in per_item.get(item_id, {}).items() if k},
        "gold_status": gold.get(item_id, ""),
        "kinds": [k for k in slips.KINDS if k in kinds.get(item_id, ())],
    } for item_id, score in page.items() if item_id in items]
    return DisagreementPage(rows, len(scores), result.disagreement_name, choices)


#: At most this many sources are offered; a project with more is filtered through the API.
SOURCE_CHOICES_MAX = 200
#: At most this many annotator pairs are offered; any other pair is filtered through the URL or the API.
PAIR_CHOICES_MAX = 200


def _span_kinds(measure: Measure, frame: pd.DataFrame) -> dict[int, set[str]]:
    """Per item, the kinds of span disagreement between its annotations (:mod:`.slips`)."""
    spans = frame["payload"].map(measure.spans)
    return {int(item): slips.item_kinds(group.tolist()) for item, group in spans.groupby(frame["item"])}


def _sources_of(items: QuerySet[Item]) -> list[str]:
    """The sources of the items: their Source's name, or the ``source`` field KLUE records carry."""
    named = set(items.exclude(source=None).values_list("source__name", flat=True).distinct()[:SOURCE_CHOICES_MAX])
    carried = items.filter(source=None).annotate(carried=KT("payload__source")).exclude(carried=None)
    named.update(carried.values_list("carried", flat=True).distinct()[:SOURCE_CHOICES_MAX])
    return sorted(name for name in named if name)[:SOURCE_CHOICES_MAX]


def item_comparison(item: Item) -> dict[str, Any]:
    """All annotations of one item side by side, each with a one-line summary, plus its gold label."""
    measure = measure_for(item.project.task_type)
    annotations = (Annotation.objects.filter(item=item).select_related("annotator")
                   .order_by("stage", "created_at"))
    gold = GoldLabel.objects.filter(item=item).first()
    return {
        "item": item,
        "annotations": [{"annotation": a, "summary": measure.describe(a.payload)} for a in annotations],
        "gold": gold,
        "gold_summary": measure.describe(gold.payload) if gold and gold.payload else "",
    }
