"""Reading a project's annotations into one pandas frame: one query, no per-row Python objects.

The annotation query is compiled by the ORM (so it stays portable between SQLite and PostgreSQL) and
executed on a plain cursor: at 500,000 rows, building model instances or letting the ORM decode every
JSON payload would cost more than the statistics themselves. Only the payload keys a measure needs
are selected, as text, by the database (``payload->>'label'`` on PostgreSQL). The same rows carry what
the assisted/unassisted split needs, so a report reads the annotation table once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import orjson
import pandas as pd
from django.db import connection
from django.db.models import F, FloatField, Func, TextField
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast

from ..models import (
    ANNOTATABLE_SCREENING,
    Annotation,
    Assignment,
    AssignmentStatus,
    Flag,
    FlagResolution,
    Item,
    Project,
    User,
)
from ..selectors import stage_complete

#: Why an item did not count, in the order the reasons are checked.
EXCLUDED_FLAGGED = "flagged"
EXCLUDED_SKIPPED = "skipped"
EXCLUDED_FEW = "fewer_than_2_annotations"
EXCLUSION_REASONS = (EXCLUDED_FLAGGED, EXCLUDED_SKIPPED, EXCLUDED_FEW)

#: Every frame has these columns (``shown``: a model suggestion was shown to a non-imported annotation's
#: annotator), then one per field of the measure; :func:`load`'s frames add ``complete`` (see there).
BASE_COLUMNS = ["item", "annotator", "created_at", "seconds", "shown", "stage"]
#: How the base columns travel from PostgreSQL: big-endian binary, fixed width (see ``_read_rows``).
_WIRE = {"item": ("int8send", ">i8"), "annotator": ("int8send", ">i8"), "created_at": ("float8send", ">f8"),
         "seconds": ("float8send", ">f8"), "shown": ("boolsend", "?"), "imported": ("boolsend", "?")}


@dataclass
class ProjectData:
    """What every measure works on: the counted annotations plus the bookkeeping of the report."""

    project: Project
    #: One row per (item, annotator) on a counted item: BASE_COLUMNS + the measure's fields.
    frame: pd.DataFrame
    #: Every annotation row of the project (annotatable items), for progress and per-annotator counts.
    all_rows: pd.DataFrame
    #: Which rows of ``all_rows`` make ``frame`` (``frame`` is ``all_rows[counted]`` with a fresh index).
    counted: np.ndarray
    annotators: dict[int, str]
    items_total: int
    items_counted: int
    excluded: dict[str, int] = field(default_factory=dict)
    #: Annotations of the project made by (non-imported) annotators, and how many of them saw a suggestion.
    annotations_made: int = 0
    annotations_assisted: int = 0


def _expression(path: str):
    """``payload.label`` → the annotation payload's key as text; ``item.sentence`` → the item's; ``payload`` →
    the whole payload (JSON text)."""
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


def _empty(columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})


def _read_rows(sql: str, params: tuple[Any, ...], fixed: list[str], text: list[str]) -> pd.DataFrame:
    """Run the query (its columns: ``fixed`` then ``text``) into a frame.

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
                return _empty(columns)
            records = np.frombuffer(row[0], dtype=[(name, _WIRE[name][1]) for name in fixed])
            frame = pd.DataFrame({name: records[name].astype(records[name].dtype.newbyteorder("="))
                                  for name in fixed})
            for name, values in zip(text, row[1:], strict=True):
                frame[name] = np.asarray(values, dtype=object)
            return frame
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    if not rows:
        return _empty(columns)
    frame = pd.DataFrame.from_records(rows, columns=columns, coerce_float=True)
    for name in fixed:
        frame[name] = frame[name].astype(_WIRE[name][1].lstrip(">"))
    return frame


def fetch_annotations(project: Project, fields: Mapping[str, str]) -> pd.DataFrame:
    """All annotations of the project's items as a frame: ``BASE_COLUMNS``, ``imported``, one column per field."""
    names = {column: f"f_{column}" for column in fields}
    fixed = ["item", "annotator", "created_at", "seconds", "shown", "imported"]
    qs = (Annotation.objects.filter(item__project=project)
          .annotate(f_created=Epoch("created_at"), **{names[c]: _expression(p) for c, p in fields.items()})
          .values_list("item_id", "annotator_id", "f_created", "seconds_spent", "suggestion_shown", "imported",
                       "stage", *names.values())
          .order_by())
    sql, params = qs.query.sql_with_params()
    frame = _read_rows(sql, params, fixed, ["stage", *fields])
    frame["created_at"] = pd.to_datetime(frame["created_at"].astype(np.float64), unit="s", utc=True)
    frame["shown"] = frame["shown"].astype(bool) & ~frame["imported"].astype(bool)
    for column, path in fields.items():
        if "." not in path:  # whole payloads come back as JSON text
            frame[column] = [orjson.loads(v) if isinstance(v, str | bytes) else v for v in frame[column]]
    return frame


def complete_items(project: Project, item_codes: np.ndarray, stages: np.ndarray, n_items: int) -> np.ndarray:
    """Per item (codes 0..n_items-1), whether it is complete, from one entry per annotation (its item's code and
    its stage): every stage complete by ``selectors.stage_complete`` (k annotations, imported corpus labels
    included). A writing stage the item has no annotation in does not apply when the item has annotations in a
    later stage: its text (an imported hypothesis or question) came with the item."""
    done = np.ones(n_items, dtype=bool)
    later = np.zeros(n_items, dtype=bool)
    for stage in reversed(project.task.stages):
        counts = np.bincount(item_codes[stages == stage.name], minlength=n_items)
        complete = stage_complete(project, stage.name, counts)
        if stage.done_marker:
            complete |= (counts == 0) & later
        done &= complete
        later |= counts > 0
    return done


def _complete_rows(project: Project, frame: pd.DataFrame) -> np.ndarray:
    """Which rows make complete items (:func:`complete_items`), of a stage only the first k annotations made,
    so that every complete item has the same number of raters (Fleiss' kappa needs it) even where a stage got
    more."""
    if frame.empty:
        return np.zeros(0, dtype=bool)
    item_codes, items = pd.factorize(frame["item"])
    stage = frame["stage"].to_numpy()
    rank = frame.groupby(["item", "stage"], sort=False).cumcount().to_numpy()  # in the order they were made
    first_k = np.zeros(len(frame), dtype=bool)
    for name in project.stage_names:
        rows = stage == name
        first_k[rows] = rank[rows] < project.annotations_needed(name)
    return complete_items(project, item_codes, stage, len(items))[item_codes] & first_k


def load(project: Project, fields: Mapping[str, str]) -> ProjectData:
    """The annotations that count for agreement and the counts of the items that do not, with reasons."""
    fetched = fetch_annotations(project, fields)
    made = int((~fetched["imported"].astype(bool)).sum())
    assisted = int(fetched["shown"].sum())
    # Only one annotation per coder and item counts (a writer cannot also validate, but be safe).
    frame = (fetched.drop(columns="imported").sort_values("created_at", kind="stable")
             .drop_duplicates(["item", "annotator"], keep="last"))

    # Items that cannot count: screened out or with an open flag (few; the rest need no per-item row).
    items_total = Item.objects.filter(project=project).count()
    flagged_ids = set(Item.objects.filter(project=project).exclude(screening_status__in=ANNOTATABLE_SCREENING)
                      .values_list("id", flat=True))
    flagged_ids |= set(Flag.objects.filter(item__project=project, resolution=FlagResolution.OPEN)
                       .values_list("item_id", flat=True))
    flagged = np.fromiter(flagged_ids, dtype=np.int64, count=len(flagged_ids))
    per_item = frame.groupby("item").size()
    per_item = per_item[~per_item.index.isin(flagged)]
    counted_ids = per_item.index[per_item >= 2].to_numpy()
    skipped_ids = set(Assignment.objects.filter(item__project=project, status=AssignmentStatus.SKIPPED)
                      .values_list("item_id", flat=True)) - flagged_ids
    skipped = sum(1 for i in skipped_ids if per_item.get(i, 0) < 2)
    excluded = {
        EXCLUDED_FLAGGED: len(flagged_ids),
        EXCLUDED_SKIPPED: skipped,
        EXCLUDED_FEW: items_total - len(flagged_ids) - len(counted_ids) - skipped,
    }
    frame = frame.assign(complete=_complete_rows(project, frame))
    all_rows = frame[~frame["item"].isin(flagged)].reset_index(drop=True)
    in_counted = all_rows["item"].isin(counted_ids).to_numpy()
    counted = all_rows[in_counted].reset_index(drop=True)
    annotator_ids = np.unique(all_rows["annotator"].to_numpy()) if len(all_rows) else []
    names = dict(User.objects.filter(pk__in=[int(a) for a in annotator_ids]).values_list("id", "username"))
    return ProjectData(project=project, frame=counted, all_rows=all_rows, counted=in_counted,
                       annotators=names,
                       items_total=items_total, items_counted=len(counted_ids), excluded=excluded,
                       annotations_made=made, annotations_assisted=assisted)
