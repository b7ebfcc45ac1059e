"""Reading a project's annotations into one pandas frame: one query, no per-row Python objects.

The annotation query is compiled by the ORM (so it stays portable between SQLite and PostgreSQL) and
executed on a plain cursor: at 500,000 rows, building model instances or letting the ORM decode every
JSON payload would cost more than the statistics themselves. Only the payload keys a measure needs
are selected, as text, by the database (``payload->>'label'`` on PostgreSQL).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import orjson
import pandas as pd
from django.db import connection
from django.db.models import F, FloatField, Func
from django.db.models.fields.json import KeyTextTransform

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

#: Why an item did not count, in the order the reasons are checked.
EXCLUDED_FLAGGED = "flagged"
EXCLUDED_SKIPPED = "skipped"
EXCLUDED_FEW = "fewer_than_2_annotations"
EXCLUSION_REASONS = (EXCLUDED_FLAGGED, EXCLUDED_SKIPPED, EXCLUDED_FEW)

BASE_COLUMNS = ["item", "annotator", "stage", "created_at", "seconds"]


@dataclass
class ProjectData:
    """What every measure works on: the counted annotations plus the bookkeeping of the report."""

    project: Project
    #: One row per (item, annotator) on a counted item: BASE_COLUMNS + the measure's fields.
    frame: pd.DataFrame
    #: Every annotation row of the project (annotatable items), for progress and per-annotator counts.
    all_rows: pd.DataFrame
    annotators: dict[int, str]
    items_total: int
    items_counted: int
    excluded: dict[str, int] = field(default_factory=dict)
    #: item id -> source name (for filters and the per-item view)
    item_source: dict[int, str] = field(default_factory=dict)


def _expression(path: str):
    """``payload.label`` → the annotation payload's key as text; ``item.sentence`` → the item's; ``payload`` →
    the whole payload (JSON text)."""
    source, _, key = path.partition(".")
    base = {"payload": "payload", "item": "item__payload"}[source]
    return KeyTextTransform(key, base) if key else F(base)


class Epoch(Func):
    """Seconds since 1970 as a float: numbers load far faster than per-row datetime objects."""

    output_field = FloatField()
    template = "EXTRACT(EPOCH FROM %(expressions)s)::float8"

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:
        return self.as_sql(compiler, connection, template="((julianday(%(expressions)s) - 2440587.5) * 86400.0)",
                           **extra)


def _read_rows(sql: str, params: tuple[Any, ...], columns: list[str]) -> pd.DataFrame:
    """Run the query into a frame. On PostgreSQL the server folds each column into one array
    (``array_agg``), so half a million rows arrive as a single row the driver decodes in C, instead of
    half a million Python tuples."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            aliases = [f"c{i}" for i in range(len(columns))]
            # ``sql`` is the ORM's compiled query, its values still bound as parameters.
            cursor.execute(f"SELECT {', '.join(f'array_agg({a})' for a in aliases)} "
                           f"FROM ({sql}) AS rows ({', '.join(aliases)})", params)
            arrays = cursor.fetchone()
            if arrays is None or arrays[0] is None:
                return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
            return pd.DataFrame(dict(zip(columns, arrays, strict=True)))
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    if not rows:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    return pd.DataFrame.from_records(rows, columns=columns, coerce_float=True)


def fetch_annotations(project: Project, fields: Mapping[str, str]) -> pd.DataFrame:
    """All annotations of the project's items as a frame (``BASE_COLUMNS`` + one column per field)."""
    names = {column: f"f_{column}" for column in fields}
    qs = (Annotation.objects.filter(item__project=project)
          .annotate(f_created=Epoch("created_at"), **{names[c]: _expression(p) for c, p in fields.items()})
          .values_list("item_id", "annotator_id", "stage", "f_created", "seconds_spent", *names.values())
          .order_by())
    sql, params = qs.query.sql_with_params()
    frame = _read_rows(sql, params, [*BASE_COLUMNS, *fields])
    frame["created_at"] = pd.to_datetime(pd.to_numeric(frame["created_at"]), unit="s", utc=True)
    frame["seconds"] = pd.to_numeric(frame["seconds"], errors="coerce")
    for column, path in fields.items():
        if "." not in path:  # whole payloads come back as JSON text (or already decoded by some drivers)
            frame[column] = [orjson.loads(v) if isinstance(v, str | bytes) else v for v in frame[column]]
    return frame


def load(project: Project, fields: Mapping[str, str]) -> ProjectData:
    """The annotations that count for agreement and the counts of the items that do not, with reasons."""
    frame = fetch_annotations(project, fields)
    # Only one annotation per coder and item counts (a writer cannot also validate, but be safe).
    frame = frame.sort_values("created_at", kind="stable").drop_duplicates(["item", "annotator"], keep="last")

    items = pd.DataFrame.from_records(
        Item.objects.filter(project=project).values_list("id", "screening_status", "source__name").order_by(),
        columns=["item", "screening", "source"],
    )
    flagged_ids = set(Flag.objects.filter(item__project=project, resolution=FlagResolution.OPEN)
                      .values_list("item_id", flat=True))
    skipped_ids = set(Assignment.objects.filter(item__project=project, status=AssignmentStatus.SKIPPED)
                      .values_list("item_id", flat=True))
    annotatable = items["screening"].isin([str(s) for s in ANNOTATABLE_SCREENING]) & ~items["item"].isin(flagged_ids)
    per_item = frame.groupby("item").size()
    n_annotations = items["item"].map(per_item).fillna(0).to_numpy()
    flagged = ~annotatable.to_numpy()
    few = ~flagged & (n_annotations < 2)
    skipped = few & items["item"].isin(skipped_ids).to_numpy()
    excluded = {
        EXCLUDED_FLAGGED: int(flagged.sum()),
        EXCLUDED_SKIPPED: int(skipped.sum()),
        EXCLUDED_FEW: int((few & ~skipped).sum()),
    }
    counted_ids = items["item"].to_numpy()[~flagged & ~few]
    all_rows = frame[frame["item"].isin(items["item"].to_numpy()[~flagged])]
    counted = all_rows[all_rows["item"].isin(counted_ids)].reset_index(drop=True)
    annotator_ids = np.unique(all_rows["annotator"].to_numpy()) if len(all_rows) else []
    names = dict(User.objects.filter(pk__in=[int(a) for a in annotator_ids]).values_list("id", "username"))
    sources = {int(i): s for i, s in zip(items["item"], items["source"], strict=True) if s}
    return ProjectData(project=project, frame=counted, all_rows=all_rows.reset_index(drop=True), annotators=names,
                       items_total=len(items), items_counted=len(counted_ids), excluded=excluded, item_source=sources)
