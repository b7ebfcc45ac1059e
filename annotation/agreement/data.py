"""Reading a project's annotations into numpy columns: one query, no per-row Python objects.

The annotation query is compiled by the ORM (so it stays portable between SQLite and PostgreSQL) and
executed on a plain cursor: at 500,000 rows, building model instances or letting the ORM decode every
JSON payload would cost more than the statistics themselves. Only the payload keys a measure needs
are selected, as text, by the database (``payload->>'label'`` on PostgreSQL). The same rows carry what
the assisted/unassisted split needs, so a report reads the annotation table once.

The bookkeeping (one annotation per annotator and item, which items count, why the others do not) is numpy over
those columns; pandas frames are built from them only when a measure asks (:attr:`ProjectData.frame`), so a
project where no item has two annotators is reported without importing pandas (see :mod:`.lazy`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import orjson
from django.db import connection
from django.db.models import F, FloatField, Func, TextField
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast, Length

from ..models import (
    ANNOTATABLE_SCREENING,
    Annotation,
    Assignment,
    AssignmentStatus,
    Flag,
    FlagResolution,
    Guideline,
    Item,
    Project,
    User,
)
from ..selectors import stage_complete, stage_needed
from .lazy import pd

#: Why an item did not count, in the order the reasons are checked.
EXCLUDED_FLAGGED = "flagged"
EXCLUDED_SKIPPED = "skipped"
EXCLUDED_FEW = "fewer_than_2_annotations"
EXCLUSION_REASONS = (EXCLUDED_FLAGGED, EXCLUDED_SKIPPED, EXCLUDED_FEW)

#: Every frame has these columns (``shown``: a model suggestion was shown to a non-imported annotation's
#: annotator), then one per field of the measure; :attr:`ProjectData.frame` adds ``complete`` (see there).
BASE_COLUMNS = ["item", "annotator", "created_at", "seconds", "shown", "guideline_version", "stage"]
#: How the base columns travel from PostgreSQL: big-endian binary, fixed width (see ``_read_rows``).
_WIRE = {"item": ("int8send", ">i8"), "annotator": ("int8send", ">i8"), "created_at": ("float8send", ">f8"),
         "seconds": ("float8send", ">f8"), "shown": ("boolsend", "?"), "imported": ("boolsend", "?"),
         "guideline": ("float8send", ">f8")}


#: Columns of annotation rows by name, all of one length (see :func:`fetch_annotations`).
Rows = dict[str, np.ndarray]


@dataclass
class ProjectData:
    """What every measure works on: the counted annotations plus the bookkeeping of the report."""

    project: Project
    #: Every annotation row of the project's annotatable items, the latest per (item, annotator), in the order they
    #: were made (for progress and per-annotator counts): BASE_COLUMNS + the measure's fields as numpy arrays.
    rows: Rows
    #: Which of ``rows`` are on counted items (``frame``).
    counted: np.ndarray
    annotators: dict[int, str]
    items_total: int
    items_counted: int
    excluded: dict[str, int] = field(default_factory=dict)
    #: Annotations of the project made by (non-imported) annotators, and how many of them saw a suggestion.
    annotations_made: int = 0
    annotations_assisted: int = 0

    @cached_property
    def all_rows(self) -> pd.DataFrame:
        """``rows`` as a frame (``created_at`` as UTC datetimes)."""
        return _frame(self.rows)

    @cached_property
    def frame(self) -> pd.DataFrame:
        """One row per (item, annotator) on a counted item: ``all_rows[counted]`` with a fresh index, and
        ``complete`` (:func:`_complete_rows`)."""
        counted = {name: values[self.counted] for name, values in self.rows.items()}
        return (self.all_rows[self.counted].reset_index(drop=True)
                .assign(complete=_complete_rows(self.project, counted)))


def _expression(path: str):
    """``payload.label`` → the annotation payload's key as text; ``item.sentence`` → the item's; ``payload`` →
    the whole payload (JSON text); ``length(item.context)`` → the length in characters of the item's text (counted
    by the database: the text itself never travels)."""
    if path.startswith("length(") and path.endswith(")"):
        return Length(_expression(path[len("length("):-1]))
    source, _, key = path.partition(".")
    base = {"payload": "payload", "item": "item__payload"}[source]
    return KeyTextTransform(key, base) if key else Cast(F(base), TextField())


class Epoch(Func):
    """Seconds since 1970 as a float: numbers load far faster than per-row datetime objects. (``date_part``
    returns the double directly; ``EXTRACT`` would go through numeric, the same value at twice the cost.)"""

    output_field = FloatField()
    template = "date_part('epoch', %(expressions)s)"

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:
        return self.as_sql(compiler, connection, template="((julianday(%(expressions)s) - 2440587.5) * 86400.0)",
                           **extra)


def _empty(fixed: list[str], text: list[str]) -> Rows:
    return {**{name: np.zeros(0, dtype=_WIRE[name][1].lstrip(">")) for name in fixed},
            **{name: np.zeros(0, dtype=object) for name in text}}


def _objects(values: Any, count: int) -> np.ndarray:
    """A 1-D object array of ``values`` (``np.asarray`` would make a 2-D one of equal-length lists)."""
    return np.fromiter(values, dtype=object, count=count)


def _interned(values: list[str | None]) -> np.ndarray:
    """A text column as an object array holding one string object per distinct value: the driver makes one per
    row, and the columns live as long as the report (beside the frames' own copies), which at 500,000 rows made
    the report's peak memory 70 MB larger (labels and stages are a handful of distinct strings)."""
    first: dict[str | None, str | None] = {}
    return _objects(map(first.setdefault, values, values), len(values))


def _read_rows(sql: str, params: tuple[Any, ...], fixed: list[str], text: list[str]) -> Rows:
    """Run the query (its columns: ``fixed`` then ``text``) into numpy columns.

    On PostgreSQL the server packs the fixed-width columns of all rows into one binary string (``int8send``
    and friends, concatenated by ``string_agg``) that numpy reads in place, and folds each text column into
    one array (``array_agg``): half a million rows arrive as a single row, without a Python object per
    number. Both aggregates see the rows in the same order.
    """
    columns = [*fixed, *text]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            aliases = [f"c{i}" for i in range(len(columns))]
            # a NULL would break the fixed width: numbers become NaN
            packed = " || ".join(f"{_WIRE[name][0]}(coalesce({alias}, 'NaN'))" if _WIRE[name][1] == ">f8"
                                 else f"{_WIRE[name][0]}({alias})" for name, alias in zip(fixed, aliases, strict=False))
            arrays = "".join(f", array_agg({alias})" for alias in aliases[len(fixed):])
            # ``sql`` is the ORM's compiled query, its values still bound as parameters.
            cursor.execute(f"SELECT string_agg({packed}, ''::bytea){arrays} "
                           f"FROM ({sql}) AS rows ({', '.join(aliases)})", params)
            row = cursor.fetchone()
            if row is None or row[0] is None:
                return _empty(fixed, text)
            records = np.frombuffer(row[0], dtype=[(name, _WIRE[name][1]) for name in fixed])
            out = {name: records[name].astype(records[name].dtype.newbyteorder("=")) for name in fixed}
            for name, values in zip(text, row[1:], strict=True):
                out[name] = _interned(values)
            return out
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    if not rows:
        return _empty(fixed, text)
    # SQLite: NULL seconds become NaN, booleans arrive as 0 / 1
    return {name: (np.array(values, dtype=_WIRE[name][1].lstrip(">")) if name in fixed else _interned(values))
            for name, values in zip(columns, zip(*rows, strict=True), strict=True)}


def _epoch_ns(seconds: np.ndarray) -> np.ndarray:
    """Seconds since 1970 → nanoseconds, rounded as ``pandas.to_datetime(unit="s")`` rounds them (the whole seconds
    apart, the fraction rounded to 9 places): the timeline's times and order are those pandas would give."""
    whole = seconds.astype(np.int64)
    return whole * 1_000_000_000 + (np.round(seconds - whole, 9) * 1e9).astype(np.int64)


def fetch_annotations(project: Project, fields: Mapping[str, str]) -> Rows:
    """All annotations of the project's items as columns: ``BASE_COLUMNS``, ``imported``, ``guideline`` (the
    guideline's id as a float, NaN when none was in force), one per field (``created_at`` in nanoseconds since
    1970, UTC)."""
    names = {column: f"f_{column}" for column in fields}
    fixed = ["item", "annotator", "created_at", "seconds", "shown", "imported", "guideline"]
    qs = (Annotation.objects.filter(item__project=project)
          .annotate(f_created=Epoch("created_at"), f_guideline=Cast("guideline_id", FloatField()),
                    **{names[c]: _expression(p) for c, p in fields.items()})
          .values_list("item_id", "annotator_id", "f_created", "seconds_spent", "suggestion_shown", "imported",
                       "f_guideline", "stage", *names.values())
          .order_by())
    sql, params = qs.query.sql_with_params()
    rows = _read_rows(sql, params, fixed, ["stage", *fields])
    rows["created_at"] = _epoch_ns(rows["created_at"])
    rows["shown"] = rows["shown"] & ~rows["imported"]
    for column, path in fields.items():
        if "." not in path:  # whole payloads come back as JSON text
            rows[column] = _objects((orjson.loads(v) if isinstance(v, str | bytes) else v for v in rows[column]),
                                    len(rows[column]))
    return rows


def _frame(rows: Rows) -> pd.DataFrame:
    return pd.DataFrame({**rows, "created_at": pd.to_datetime(rows["created_at"], unit="ns", utc=True)})


def stage_codes(project: Project, stages: np.ndarray) -> np.ndarray:
    """Each annotation's stage as its position in ``project.task.stages`` (-1: not a stage of the task), so that
    :func:`complete_items` compares integers, not strings, at every point of the timeline."""
    codes = np.full(len(stages), -1, dtype=np.int64)
    for code, name in enumerate(project.stage_names):
        codes[stages == name] = code
    return codes


def complete_items(project: Project, item_codes: np.ndarray, stages: np.ndarray, n_items: int,
                   item_ids: np.ndarray) -> np.ndarray:
    """Per item (codes 0..n_items-1), whether it is complete, from one entry per annotation (its item's code and
    its stage's :func:`stage_codes`; ``item_ids[code]`` is its id, for its k): every stage complete by
    ``selectors.stage_complete`` (k annotations, imported corpus labels included). A writing stage the item has no
    annotation in does not apply when the item has annotations in a later stage: its text (an imported hypothesis
    or question) came with the item."""
    done = np.ones(n_items, dtype=bool)
    later = np.zeros(n_items, dtype=bool)
    for code, stage in reversed(list(enumerate(project.task.stages))):
        counts = np.bincount(item_codes[stages == code], minlength=n_items)
        complete = stage_complete(project, stage.name, counts, item_ids)
        if stage.done_marker:
            complete |= (counts == 0) & later
        done &= complete
        later |= counts > 0
    return done


def _cumcount(codes: np.ndarray) -> np.ndarray:
    """Each entry's rank among the earlier entries of its code (0, 1, 2… in array order)."""
    order = np.argsort(codes, kind="stable")
    ordered = codes[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    rank = np.empty(len(codes), dtype=np.int64)
    rank[order] = np.arange(len(codes)) - np.repeat(starts, np.diff(np.r_[starts, len(codes)]))
    return rank


def _complete_rows(project: Project, rows: Rows) -> np.ndarray:
    """Which rows make complete items (:func:`complete_items`), of a stage only the first k annotations made,
    so that every complete item has the same number of raters (Fleiss' kappa needs it) even where a stage got
    more. Whether an item is complete depends on its rows alone: ``rows`` may be those of some items only."""
    item_ids, item_codes = np.unique(rows["item"], return_inverse=True)
    stages = stage_codes(project, rows["stage"])
    first_k = np.zeros(len(item_codes), dtype=bool)
    for code, name in enumerate(project.stage_names):
        of_stage = np.flatnonzero(stages == code)
        needed = stage_needed(project, name, item_ids)
        # in the order they were made; each item's own k under the budget
        first_k[of_stage] = _cumcount(item_codes[of_stage]) < (
            needed if np.ndim(needed) == 0 else needed[item_codes[of_stage]])
    return complete_items(project, item_codes, stages, len(item_ids), item_ids)[item_codes] & first_k


def _latest_per_annotator(items: np.ndarray, annotators: np.ndarray) -> np.ndarray:
    """Positions (ascending) of the last row of each (item, annotator) pair."""
    _, annotator_codes = np.unique(annotators, return_inverse=True)
    pairs = items * (int(annotator_codes.max()) + 1 if len(items) else 1) + annotator_codes
    # the first of each pair from the end (``return_index`` sorts stably)
    _, from_end = np.unique(pairs[::-1], return_index=True)
    return np.sort(len(pairs) - 1 - from_end)


def _guideline_versions(project: Project, guideline_ids: np.ndarray) -> np.ndarray:
    """Guideline ids (NaN: none) → the versions they are (NaN: none), from the project's few guidelines."""
    versions = np.full(len(guideline_ids), np.nan)
    for guideline_id, version in Guideline.objects.filter(project=project).values_list("id", "version"):
        versions[guideline_ids == guideline_id] = version
    return versions


def load(project: Project, fields: Mapping[str, str]) -> ProjectData:
    """The annotations that count for agreement and the counts of the items that do not, with reasons."""
    fetched = fetch_annotations(project, fields)
    imported = fetched.pop("imported")
    fetched["guideline_version"] = _guideline_versions(project, fetched.pop("guideline"))
    made = int((~imported).sum())
    assisted = int(fetched["shown"].sum())
    # Only one annotation per coder and item counts, the latest (a writer cannot also validate, but be safe).
    made_order = np.argsort(fetched["created_at"], kind="stable")
    keep = made_order[_latest_per_annotator(fetched["item"][made_order], fetched["annotator"][made_order])]
    rows = {name: values[keep] for name, values in fetched.items()}

    # Items that cannot count: screened out or with an open flag (few; the rest need no per-item row).
    items_total = Item.objects.filter(project=project).count()
    flagged_ids = set(Item.objects.filter(project=project).exclude(screening_status__in=ANNOTATABLE_SCREENING)
                      .values_list("id", flat=True))
    flagged_ids |= set(Flag.objects.filter(item__project=project, resolution=FlagResolution.OPEN)
                       .values_list("item_id", flat=True))
    flagged = np.fromiter(flagged_ids, dtype=np.int64, count=len(flagged_ids))
    if len(flagged):
        annotatable = ~np.isin(rows["item"], flagged)
        rows = {name: values[annotatable] for name, values in rows.items()}
    item_ids, per_item = np.unique(rows["item"], return_counts=True)
    counted_ids = item_ids[per_item >= 2]
    skipped_ids = set(Assignment.objects.filter(item__project=project, status=AssignmentStatus.SKIPPED)
                      .values_list("item_id", flat=True)) - flagged_ids
    # skipped and not counted (fewer than two annotations)
    skipped = int(np.isin(np.fromiter(skipped_ids, dtype=np.int64, count=len(skipped_ids)), counted_ids,
                          invert=True).sum())
    excluded = {
        EXCLUDED_FLAGGED: len(flagged_ids),
        EXCLUDED_SKIPPED: skipped,
        EXCLUDED_FEW: items_total - len(flagged_ids) - len(counted_ids) - skipped,
    }
    annotator_ids = np.unique(rows["annotator"])
    names = dict(User.objects.filter(pk__in=annotator_ids.tolist()).values_list("id", "username"))
    return ProjectData(project=project, rows=rows, counted=np.isin(rows["item"], counted_ids), annotators=names,
                       items_total=items_total, items_counted=len(counted_ids), excluded=excluded,
                       annotations_made=made, annotations_assisted=assisted)
