"""Browser pages: the import page (upload, progress, errors, screening summary), the review queue of
screened and flagged items, and the project's sources with their licences. Managers only (maintainers
read the sources page)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_http_methods

from annotation import selectors as annotation_selectors
from annotation.models import FlagKind, Project, ScreeningStatus
from annotation.permissions import CURATE, MANAGE
from annotation.services import ServiceError
from annotation.views import _project_context, project_for

from . import names, selectors, services
from .forms import BulkReviewForm, ImportForm, ReviewForm
from .screening.highlight import item_spans, snippets

REVIEW_PER_PAGE = 25


@login_required
@require_http_methods(["GET", "POST"])
def project_import(request: HttpRequest, project_id: int) -> HttpResponse:
    project, role = project_for(request, project_id, MANAGE)
    form = ImportForm(request.POST or None, request.FILES or None)
    if not project.task.klue_file.ontology:  # only WoS dialogues come with an ontology
        del form.fields["ontology"]
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            job = services.import_job_create(
                project=project, upload=data["file"], file_name=data["file"].name, fmt=data["format"],
                user=request.user, source=data["source"], license=data["license"], pii=data["pii"] or None,
                encoding=data["encoding"], duplicates=data["duplicates"], approved_only=data["approved_only"],
                ontology=data.get("ontology"),
                ontology_file_name=data["ontology"].name if data.get("ontology") else "",
            )
        except ServiceError as error:
            form.add_error(error.field if error.field in ("file", "ontology") else None, error.message)
        else:
            return redirect(f"{reverse('datasets_build:project-import', args=[project.pk])}?job={job.pk}")
    job = None
    job_id = request.GET.get("job", "")
    if job_id.isdigit():
        job = get_object_or_404(selectors.import_jobs(project), pk=int(job_id))
    context = _project_context(project, role, "import")
    if job is not None:
        context.update(job=job, progress=selectors.import_job_progress(job), outcome=names.job_outcome(job),
                       summary=names.summary_rows(job.summary or {}))
    if job is not None and request.GET.get("part") == "live":
        # The job's part alone: the page fetches it again while the import runs (annotation/static/annotation/
        # live_region.js), as the release page does while a release is built.
        return render(request, "datasets_build/_import_job.html", context)
    screening = selectors.screening_summary(project)
    context.update(form=form, jobs=selectors.import_jobs(project)[:20],
                   statuses=[(ScreeningStatus(status).label if status in ScreeningStatus.values else status, n)
                             for status, n in screening["statuses"].items()])
    return render(request, "datasets_build/import.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def project_review(request: HttpRequest, project_id: int) -> HttpResponse:
    project, role = project_for(request, project_id, MANAGE)
    kind = request.GET.get("kind", "")
    kind = kind if kind in FlagKind.values else ""
    here = (f"{reverse('datasets_build:project-review', args=[project.pk])}"
            f"?kind={kind}&page={request.GET.get('page', '1')}")
    if request.method == "POST" and "scope" in request.POST:
        return _review_bulk(request, project, role, here)
    if request.method == "POST":
        form = ReviewForm(request.POST)
        item_id = request.POST.get("item", "")
        item = get_object_or_404(annotation_selectors.items_in(project), pk=int(item_id) if item_id.isdigit() else 0)
        if form.is_valid():
            try:
                services.screening_review(item=item, decision=form.cleaned_data["decision"],
                                          reason=form.cleaned_data["reason"], by=request.user)
            except ServiceError as error:
                messages.error(request, error.message)
            else:
                messages.success(request, _("Item %(id)s kept.") % {"id": item.external_id or item.pk}
                                 if form.cleaned_data["decision"] == "keep"
                                 else _("Item %(id)s dropped.") % {"id": item.external_id or item.pk})
        else:
            messages.error(request, _("Choose keep or drop and give a reason."))
        return redirect(here)
    page = Paginator(selectors.review_queue(project, kind=kind or None), REVIEW_PER_PAGE).get_page(
        request.GET.get("page"))
    task = project.task
    rows = []
    for item in page:
        text, spans = item_spans(task, item.payload, item.pii_findings or [])
        rows.append({"item": item, "text": text, "snippets": snippets(text, spans),
                     "flags": [(flag, names.screener_note(flag, item, spans)) for flag in item.open_flags]})
    context = _project_context(project, role, "review")
    context.update(page=page, rows=rows, kind=kind, kinds=FlagKind.choices, here=here,
                   total=page.paginator.count)
    return render(request, "datasets_build/review.html", context)


def _review_bulk(request: HttpRequest, project: Project, role: str, here: str) -> HttpResponse:
    form = BulkReviewForm(request.POST)
    if not form.is_valid():
        messages.error(request, " ".join(str(e) for errors in form.errors.values() for e in errors))
        return redirect(here)
    data = form.cleaned_data
    if data["decision"] == "drop" and request.POST.get("confirm") != "drop":
        # A dropped item leaves the queue and every release for good: the first POST only says how many items
        # would go; only the confirmation's POST (the same fields and ``confirm``) drops them.
        chosen = selectors.review_queue_items(project, kind=data["kind"] or None)
        if data["scope"] == "chosen":
            chosen = chosen.filter(pk__in=data["items"])
        context = _project_context(project, role, "review")
        context.update(here=here, data=data, n=chosen.count())
        return render(request, "datasets_build/review_confirm.html", context)
    try:
        n = services.screening_review_bulk(
            project=project, decision=data["decision"], reason=data["reason"], by=request.user,
            item_ids=data["items"] if data["scope"] == "chosen" else None, kind=data["kind"] or None)
    except ServiceError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, (ngettext("%(n)s item kept.", "%(n)s items kept.", n) if data["decision"] == "keep"
                                   else ngettext("%(n)s item dropped.", "%(n)s items dropped.", n)) % {"n": n})
    return redirect(here)


@login_required
def project_sources(request: HttpRequest, project_id: int) -> HttpResponse:
    project, role = project_for(request, project_id, CURATE)
    context = _project_context(project, role, "sources")
    pii = selectors.pii_report(project)
    context.update(sources=selectors.sources_report(project), pii=pii,
                   pii_types=[(names.span_name(pii_type), counts) for pii_type, counts in pii["types"].items()],
                   near_duplicates=selectors.near_duplicate_counts(project))
    return render(request, "datasets_build/sources.html", context)
