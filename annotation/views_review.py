"""Manager pages of agreement, gold and adjudication: the dashboard with plots, items by disagreement,
the side-by-side comparison and the adjudication form. Thin views over the agreement and gold packages;
annotators get 403 (they never see agreement, other people's labels or gold)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.templatetags.static import static
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from . import display, review_breakdowns, selectors
from .agreement import plots
from .agreement import selectors as agreement_selectors
from .agreement import services as agreement_services
from .api.parsers import JsonInputError, loads_checked
from .budget import budget_of
from .gold import selectors as gold_selectors
from .gold import services as gold_services
from .models import GoldStatus, Item, JobStatus, Project
from .permissions import CURATE, MANAGE
from .services import ServiceError
from .tabs import item_links
from .views import project_for
from .workspace_strings import label_display, workspace_strings

PER_PAGE = 50
# The per-item pages import the measures (numpy/pandas) inside the views: loading the URL configuration
# must stay fast for every other page.


def _context(project: Project, role: str, **extra: Any) -> dict[str, Any]:
    return {"project": project, "role": role, "tab": "agreement", "can_manage": role in MANAGE,
            "can_curate": role in CURATE, **extra}


def _name(report: dict[str, Any], annotator: int | str) -> str:
    return display.annotator_name(report.get("annotator_names", {}).get(str(annotator), str(annotator)))


def dashboard_plots(report: dict[str, Any], label_names: dict[str, str] | None = None) -> dict[str, Any]:
    """The dashboard's SVG charts from a report (empty charts are left out); labels by their display names
    (``label_names``: ``workspace_strings.label_display``)."""
    label_names = label_names or {}
    charts: dict[str, Any] = {}
    primary = report.get("primary") or {}
    name = display.display_name("coefficient", primary.get("name", ""))
    measured = f"{name} ({display.display_name('level', primary.get('level', ''))})"
    timeline = report.get("timeline") or []
    if timeline:
        unit = timeline[0]["unit"]
        x_labels = [p["at"][:10] if unit == "day" else f"{p['annotations']:,}" for p in timeline]
        x_label = _("day") if unit == "day" else _("annotations received")
        charts["progress"] = plots.line_chart(
            x_labels, [plots.Series(_("annotations"), [p["annotations"] for p in timeline], fmt=".0f"),
                       plots.Series(_("items complete"), [p["items_complete"] for p in timeline], color="#e67e22",
                                    fmt=".0f")],
            title=_("Progress over time"), x_label=x_label, y_label=_("count"))
        charts["alpha"] = plots.line_chart(
            x_labels, [plots.Series(name, [p["value"] for p in timeline],
                                    [p["ci95"][0] for p in timeline], [p["ci95"][1] for p in timeline])],
            title=_("%(name)s over time, with its 95%% bootstrap interval") % {"name": name},
            x_label=x_label, y_label=measured)
    quality = report.get("annotator_quality") or []
    if quality:
        charts["annotators"] = plots.bar_chart(
            [display.annotator_name(q["username"]) for q in quality], [q.get("agreement") for q in quality],
            title=_("Agreement of each annotator with the others"),
            value_label=_("agreement (share or correlation, 1 = always agrees)"),
            value_range=(min([0.0, *[q["agreement"] for q in quality if q.get("agreement") is not None]]), 1.0),
            highlight=[bool(q["flags"]) for q in quality])
    pairs = report.get("pairs") or {}
    # the per-pair kappas with intervals (review/_breakdowns.html) have their own heatmap; score tasks keep this one
    # (Pearson's r), beside the kappas of their score bands
    if pairs.get("annotators") and not (report.get("pair_kappa") and pairs.get("metric") == "cohen_kappa"):
        names = [_name(report, a) for a in pairs["annotators"]]
        metric = display.display_name("coefficient", pairs.get("metric", ""))
        charts["pairs"] = plots.heatmap(names, names, pairs["values"], title=_("Annotator × annotator agreement "
                                                                                 "(%(metric)s)") % {"metric": metric},
                                        x_label=_("annotator"), y_label=_("annotator"), value_range=(0.0, 1.0))
    confusion = report.get("confusion")
    # Before any two annotators met on an item, an all-zero matrix and empty bars would say nothing.
    if confusion and confusion.get("labels") and any(any(row) for row in confusion["matrix"]):
        shown = [label_names.get(str(label)) or display.display_name("measure_label", label)
                 for label in confusion["labels"]]
        charts["confusion"] = plots.heatmap(shown, shown, confusion["matrix"],
                                            title=_("Label confusion between annotators (coincidences)"),
                                            x_label=_("label given by one annotator"),
                                            y_label=_("label given by another"), fmt=".0f")
    distribution = report.get("distribution")
    if distribution and distribution.get("labels") and sum(distribution["project"]):
        total = sum(distribution["project"])
        charts["distribution"] = plots.bar_chart(
            [label_names.get(str(label)) or display.display_name("measure_label", label)
             for label in distribution["labels"]],
            [100 * n / total for n in distribution["project"]],
            title=_("Label distribution"), value_label=_("share of all labels (%)"), fmt=".1f")
    alpha = (report.get("assist") or {}).get("alpha")
    if alpha:
        # Anchoring on a suggestion inflates agreement; the two bars side by side make the gap visible.
        values = [alpha["assisted"]["value"], alpha["unassisted"]["value"]]
        charts["assist"] = plots.bar_chart(
            [_("assisted"), _("unassisted")], values,
            title=_("%(name)s of assisted vs unassisted annotations") % {"name": name},
            value_label=measured, fmt=".3f",
            value_range=(min([0.0, *[v for v in values if v is not None]]), 1.0))
    return charts


def annotator_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The annotators table: each row with its flags in words and the α change signed (+ raises α)."""
    words = {"removal_raises_alpha": _("agreement rises without them"),
             "too_fast": _("much faster than the others"),
             "low_gold_accuracy": _("low accuracy on gold items")}
    rows = []
    for q in report.get("annotator_quality") or []:
        change = q.get("alpha_change_if_removed")
        rows.append({**q, "flag_words": [words.get(flag, flag) for flag in q.get("flags") or []],
                     "alpha_change": None if change is None else f"{change:+.3f}"})
    return rows


@login_required
@require_http_methods(["GET"])
def agreement_csv(request: HttpRequest, project_id: int) -> HttpResponse:
    """The dashboard's report as CSV (the one the page shows: the latest finished report)."""
    from .agreement.report_csv import csv_response, report_csv

    project, _role = project_for(request, project_id, CURATE)
    shown = agreement_selectors.report_latest_done(project)
    if shown is None:
        raise Http404(_("No agreement report has been computed yet."))
    return csv_response(report_csv(shown.data), project.slug)


@login_required
def dashboard(request: HttpRequest, project_id: int) -> HttpResponse:
    """Numbers and plots; while a fresh report computes the page shows its progress and reloads itself."""
    project, role = project_for(request, project_id, CURATE)
    job, _queued = agreement_services.report_request(project=project, by=request.user)
    job.refresh_from_db()
    shown = job if job.status == JobStatus.DONE else agreement_selectors.report_latest_done(project)
    report = shown.data if shown else None
    return render(request, "review/dashboard.html", _context(
        project, role, job=job, report=report, stale=shown is not None and shown.pk != job.pk,
        charts=dashboard_plots(report, label_display(project)) if report else {},
        annotators=annotator_rows(report) if report else [],
        breakdowns=review_breakdowns.breakdowns(report) if report else None,
        refresh=job.status in (JobStatus.PENDING, JobStatus.RUNNING), budgeted=not budget_of(project).uniform))


@login_required
def items(request: HttpRequest, project_id: int) -> HttpResponse:
    from .agreement.disagreement import DisagreementPage, FilterError, items_by_disagreement

    project, role = project_for(request, project_id, CURATE)
    filters = {k: request.GET.get(k, "").strip() for k in ("q", "label", "source", "annotator", "gold_status", "pair",
                                                           "kind")}
    filters["q"] = filters["q"][:selectors.SEARCH_MAX_CHARS]
    offset = int(request.GET["offset"]) if request.GET.get("offset", "").isdigit() else 0
    filter_error = ""
    try:
        page = items_by_disagreement(project, offset=offset, limit=PER_PAGE, text=filters["q"],
                                     label=filters["label"], source=filters["source"],
                                     annotator=filters["annotator"], gold_status=filters["gold_status"],
                                     pair=filters["pair"], kind=filters["kind"])
    except FilterError as error:
        page = DisagreementPage([], 0, "")
        filter_error = (_("Choose a pair of two different annotators.") if error.field == "pair"
                        else _("This task has no such kind of disagreement."))
    counts = gold_selectors.gold_counts(project)
    gold_statuses = [(value, label) for value, label in GoldStatus.choices if counts.get(value)]
    return render(request, "review/items.html", _context(
        project, role, page=page, filters=filters, names=label_display(project), offset=offset,
        gold_statuses=gold_statuses, query=urlencode({k: v for k, v in filters.items() if v}),
        filter_error=filter_error, pair_choices=[(",".join(pair), " – ".join(map(display.annotator_name, pair)))
                                            for pair in page.choices.pairs],
        previous=max(offset - PER_PAGE, 0) if offset else None,
        next=offset + PER_PAGE if offset + PER_PAGE < page.total else None))


def _comparison(project: Project, item_id: int) -> tuple[Item, dict[str, Any]]:
    from .agreement.disagreement import item_comparison
    from .agreement.measures import measure_for
    from .agreement.rendering import payload_html, payload_summary

    item = get_object_or_404(selectors.items_in(project), pk=item_id)
    comparison = item_comparison(item)
    measure = measure_for(project.task_type)
    schema = project.label_schema or {}
    names = label_display(project)
    for row in comparison["annotations"]:
        row["html"] = payload_html(measure, row["annotation"].payload, item.payload, schema, names)
        row["summary"] = payload_summary(measure, row["annotation"].payload, names)
    gold = comparison["gold"]
    comparison["gold_html"] = (payload_html(measure, gold.payload, item.payload, schema, names)
                               if gold and gold.payload else "")
    comparison["adjudications"] = gold_selectors.adjudications_of(item)
    comparison["facts"] = display.item_facts(item.payload)
    return item, comparison


@login_required
def item_detail(request: HttpRequest, project_id: int, item_id: int) -> HttpResponse:
    project, role = project_for(request, project_id, CURATE)
    item, comparison = _comparison(project, item_id)
    return render(request, "review/item.html", _context(project, role, **comparison,
                                                        item_links=item_links(project.pk, item.pk, role)))


def _adjudication_widget(project: Project, item: Item, rows: list[dict[str, Any]],
                         initial: dict[str, Any]) -> dict[str, Any]:
    """What the adjudication page mounts: the annotators' widget of the task's last stage (the shape gold has),
    the item as that stage shows it, and the payloads a manager can start from (the gold so far or one
    annotation of the last stage)."""
    stage = project.task.stages[-1]
    return {
        "task": project.task_type,
        "widget": static(project.task.widget),
        "stage": stage.name,
        "item": {"id": item.pk, **project.task.annotator_view(item.payload, stage.name)},
        "schema": project.label_schema,
        "label_names": label_display(project),
        "strings": workspace_strings(project.task),
        "initial": initial,
        "annotations": {str(row["annotation"].pk): row["annotation"].payload for row in rows
                        if row["annotation"].stage == stage.name},
    }


@login_required
@require_http_methods(["GET", "POST"])
def adjudicate(request: HttpRequest, project_id: int, item_id: int) -> HttpResponse:
    """Accept one annotator's payload or write a new one; the decision and its reason are kept. The form
    carries the gold version it showed, so a decision made meanwhile by someone else is a conflict."""
    project, role = project_for(request, project_id, MANAGE)
    item, comparison = _comparison(project, item_id)
    gold = comparison["gold"] or gold_services.gold_for_item(item)
    error, status_code = "", 200
    if request.method == "POST":
        choice = request.POST.get("choice", "")
        reason = request.POST.get("reason", "")
        version = int(request.POST["version"]) if request.POST.get("version", "").isdigit() else None
        try:
            if choice.isdigit():
                annotation = selectors.item_annotation(item, int(choice))
                if annotation is None:
                    raise Http404("No such annotation on this item.")
                gold_services.adjudicate(item=item, by=request.user, reason=reason, annotation=annotation,
                                         base_version=version)
            else:
                try:
                    payload = loads_checked(request.POST.get("payload", ""))
                except json.JSONDecodeError as bad:
                    raise ServiceError(_("the gold answer is not valid JSON (line %(line)s, column %(column)s)")
                                       % {"line": bad.lineno, "column": bad.colno}, field="payload") from None
                except JsonInputError as bad:
                    raise ServiceError(_("the gold answer is not accepted: %(error)s") % {"error": bad},
                                       field="payload") from None
                gold_services.adjudicate(item=item, by=request.user, reason=reason, payload=payload,
                                         base_version=version)
        except ServiceError as failure:
            error, status_code = failure.message, 409 if failure.code == "conflict" else 400
            if failure.code == "conflict":  # show what the other manager decided
                gold = gold_selectors.gold_of(item)
        else:
            messages.success(request, _("Decision saved."))
            return redirect(reverse("annotation:review-item", args=[project.pk, item.pk]))
    initial = gold.payload if gold and gold.payload else (
        comparison["annotations"][0]["annotation"].payload if comparison["annotations"] else {})
    comparison["gold"] = gold
    return render(request, "review/adjudicate.html", _context(
        project, role, **comparison, error=error, version=gold.version if gold else 0,
        widget=_adjudication_widget(project, item, comparison["annotations"], initial),
        initial_json=json.dumps(initial, ensure_ascii=False, indent=1),
        posted_reason=request.POST.get("reason", ""), posted_payload=request.POST.get("payload", "")),
        status=status_code)


@login_required
@require_http_methods(["GET"])
def next_to_adjudicate(request: HttpRequest, project_id: int) -> HttpResponse:
    """The adjudication page of the next open disagreement after ``?after=`` (item-number order); the gold page
    of the items waiting, saying none is left, when there is none."""
    project, _role = project_for(request, project_id, MANAGE)
    after = request.GET.get("after", "")
    item_id = gold_selectors.next_to_adjudicate(project, after=int(after) if after.isdigit() else 0)
    if item_id is None:
        messages.info(request, _("No open disagreements are left to adjudicate."))
        gold_page = reverse("annotation:review-gold", args=[project.pk])
        return redirect(f"{gold_page}?status={GoldStatus.NEEDS_ADJUDICATION}")
    return redirect(reverse("annotation:review-adjudicate", args=[project.pk, item_id]))


@login_required
def gold(request: HttpRequest, project_id: int) -> HttpResponse:
    project, role = project_for(request, project_id, CURATE)
    counts = gold_selectors.gold_counts(project)
    statuses = [(value, label, counts.get(value, 0)) for value, label in GoldStatus.choices]
    status = request.GET.get("status")
    if status not in GoldStatus.values:
        # Items waiting for adjudication first; otherwise the first status that has any.
        waiting = [GoldStatus.NEEDS_ADJUDICATION] if counts.get(GoldStatus.NEEDS_ADJUDICATION) else []
        status = next(iter(waiting + [v for v, _label, n in statuses if n]), GoldStatus.NEEDS_ADJUDICATION)
    from .agreement.measures import measure_for
    from .agreement.rendering import payload_summary

    rows = list(gold_selectors.gold_list(project, status=status).order_by("item_id")[:200])
    measure, names = measure_for(project.task_type), label_display(project)
    for row in rows:
        row.summary = payload_summary(measure, row.payload, names) if row.payload else ""
    return render(request, "review/gold.html", _context(
        project, role, tab="gold", rows=rows, status=status, status_label=GoldStatus(status).label,
        status_count=counts.get(status, 0), statuses=statuses))


@login_required
@require_POST
def gold_compute(request: HttpRequest, project_id: int) -> HttpResponse:
    project, _role = project_for(request, project_id, MANAGE)
    try:
        statuses = gold_services.gold_compute(project)
    except ServiceError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, _("Gold labels recomputed: %(counts)s") % {
            "counts": ", ".join(f"{display.display_name('gold_status', k)} {v}" for k, v in sorted(statuses.items()))})
    return redirect(reverse("annotation:review-gold", args=[project.pk]))
