"""The release diff page: what changed from another release of the project to this one, filterable by kind."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.dateparse import parse_datetime
from django.utils.formats import date_format
from django.utils.translation import gettext as _

from annotation.permissions import CURATE
from annotation.views import project_for

from . import diff, selectors
from .models import BUILT, Release

#: Changed items listed on the page (the API and ``release_diff`` list them all).
PAGE_ITEMS = 500


def _reason(code: str | None) -> str:
    return str(diff.REASON_NAMES.get(code or "", code or "—"))


def _why(why: dict[str, Any]) -> str:
    """What relabelled an item, in words."""
    when = parse_datetime(why["at"]) if why.get("at") else None
    facts = {"by": why.get("by") or _("someone"), "at": date_format(when, "Y-m-d H:i") if when else "",
             "reason": why.get("reason") or "", "rule": why.get("rule") or _("the gold rule")}
    if why["how"] == "adjudication":
        return _("adjudicated by %(by)s, %(at)s: %(reason)s") % facts
    if why["how"] == "set_known_answer":
        return _("known answer set by %(by)s, %(at)s") % facts
    if why["how"] == "clear_known_answer":
        return _("known answer cleared by %(by)s, %(at)s") % facts
    return _("gold rule: %(rule)s") % facts


def _detail(kind: str, row: dict[str, Any]) -> str:
    if kind == "added":
        return _("in %(split)s; before: %(reason)s") % {"split": row["split"], "reason": _reason(row["before"])}
    if kind == "dropped":
        return _("was in %(split)s; %(reason)s") % {"split": row["split"], "reason": _reason(row["reason"])}
    if kind == "moved":
        return f"{row['from']} → {row['to']}"
    return row["split"]


@login_required
def release_diff(request: HttpRequest, project_id: int, release_id: int) -> HttpResponse:
    project, role = project_for(request, project_id, CURATE)
    release = get_object_or_404(selectors.releases_of(project), pk=release_id)
    others = [r for r in selectors.releases_of(project) if r.pk != release.pk and r.status in BUILT]
    against_id = request.GET.get("against")
    if against_id and against_id.isdigit():
        against: Release | None = get_object_or_404(selectors.releases_of(project), pk=int(against_id))
    else:
        against = diff.previous_release(release) or (others[0] if others else None)
    kind = request.GET.get("kind") if request.GET.get("kind") in diff.KINDS else None
    context: dict[str, Any] = {"project": project, "role": role, "tab": "releases", "release": release,
                               "others": others, "against": against, "kind": kind, "error": None,
                               "kinds": [(k, diff.KIND_NAMES[k]) for k in diff.KINDS]}
    if against is not None:
        try:
            result = diff.release_diff(against, release, kind=kind)
        except diff.DiffError:
            context["error"] = _("These two releases cannot be compared: one of them has not finished building, or "
                                 "was built before releases recorded their items.")
        else:
            rows = [{"kind": k, "kind_name": diff.KIND_NAMES[k], **row,
                     "detail": _detail(k, row), "why": _why(row["why"]) if k == "relabelled" else ""}
                    for k, listed in result["changes"].items() for row in listed]
            total = len(rows)
            name = result["agreement"]["name"] or ""
            context.update(result=result, coefficient=diff.COEFFICIENT_NAMES.get(name, name.replace("_", " ")),
                           rows=rows[:PAGE_ITEMS], total=total, shown=min(total, PAGE_ITEMS),
                           counts=[(k, diff.KIND_NAMES[k], result["counts"][k]) for k in diff.KINDS])
    return render(request, "exports/release_diff.html", context)
