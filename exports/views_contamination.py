"""The contamination pages: the project's references (upload a file, name another project, remove one), a
contamination check run from the release page, and an item's provenance timeline. Managers and maintainers
only, like the release pages."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST

from annotation import selectors as annotation_selectors
from annotation.display import display_choice, display_name
from annotation.models import FlagResolution
from annotation.permissions import CURATE
from annotation.services import ServiceError
from annotation.views import project_for
from datasets_build.names import span_name
from datasets_build.pipeline import FORMATS

from . import contamination_services, selectors
from .diff import REASON_NAMES
from .names import split_name
from .provenance import item_provenance
from .views import _context

#: The import's formats by name (the form shows these, files and the API keep the identifiers).
FORMAT_NAMES = {"klue": gettext_lazy("KLUE file"), "jsonl": gettext_lazy("JSON Lines"), "csv": "CSV",
                "doccano": gettext_lazy("doccano export"), "labelstudio": gettext_lazy("Label Studio export")}


class ReferenceFileForm(forms.Form):
    file = forms.FileField(label=gettext_lazy("Reference file"))
    format = forms.ChoiceField(label=gettext_lazy("Format"))
    name = forms.CharField(label=gettext_lazy("Name"), max_length=120, required=False,
                           help_text=gettext_lazy("Empty: the file's name."))
    training = forms.BooleanField(label=gettext_lazy("This is training data"), required=False, initial=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["format"].choices = [(f, FORMAT_NAMES.get(f, f)) for f in FORMATS]


class ReferenceProjectForm(forms.Form):
    other = forms.ChoiceField(label=gettext_lazy("Project"))
    name = forms.CharField(label=gettext_lazy("Name"), max_length=120, required=False,
                           help_text=gettext_lazy("Empty: the project's short name."))
    training = forms.BooleanField(label=gettext_lazy("This is training data"), required=False, initial=True)

    def __init__(self, *args: Any, choices: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["other"].choices = choices


@login_required
@require_http_methods(["GET", "POST"])
def references(request: HttpRequest, project_id: int) -> HttpResponse:
    project, role = project_for(request, project_id, CURATE)
    lendable = selectors.lendable_projects(project, request.user)
    choices = [(str(p.pk), p.name) for p in lendable]
    file_form = ReferenceFileForm()
    project_form = ReferenceProjectForm(choices=choices)
    status = 200
    if request.method == "POST":
        action = request.POST.get("action", "")
        try:
            if action == "delete":
                reference = get_object_or_404(selectors.contamination_references(project),
                                              pk=request.POST.get("reference") or 0)
                contamination_services.reference_delete(reference=reference, by=request.user)
                messages.success(request, _("Reference %(name)s removed.") % {"name": reference.name})
                return redirect("exports:contamination-references", project.pk)
            if action == "file":
                file_form = ReferenceFileForm(request.POST, request.FILES)
                if file_form.is_valid():
                    data = file_form.cleaned_data
                    reference = contamination_services.reference_add_file(
                        project=project, upload=data["file"], file_name=data["file"].name, fmt=data["format"],
                        by=request.user, name=data["name"], training=data["training"])
                    messages.success(request, _("Reference %(name)s added: %(n)s records.")
                                     % {"name": reference.name, "n": reference.records})
                    return redirect("exports:contamination-references", project.pk)
            elif action == "project":
                project_form = ReferenceProjectForm(request.POST, choices=choices)
                if project_form.is_valid():
                    data = project_form.cleaned_data
                    other = get_object_or_404(lendable, pk=data["other"])
                    reference = contamination_services.reference_add_project(
                        project=project, other=other, by=request.user, name=data["name"], training=data["training"])
                    messages.success(request, _("Reference %(name)s added: %(n)s items.")
                                     % {"name": reference.name, "n": reference.records})
                    return redirect("exports:contamination-references", project.pk)
            status = 400
        except ServiceError as error:
            messages.error(request, error.message)
            status = 400
    context = _context(project, role)
    context.update({"references": selectors.contamination_references(project), "file_form": file_form,
                    "project_form": project_form, "has_lendable": bool(choices),
                    "format_names": FORMAT_NAMES})
    return render(request, "exports/contamination_references.html", context, status=status)


@login_required
@require_POST
def check(request: HttpRequest, project_id: int, release_id: int) -> HttpResponse:
    project, _role = project_for(request, project_id, CURATE)
    release = get_object_or_404(selectors.releases_of(project), pk=release_id)
    try:
        contamination_services.check_request(release=release, by=request.user)
        messages.success(request, _("The contamination check was started."))
    except ServiceError as error:
        messages.error(request, error.message)
    return redirect("exports:release-detail", project.pk, release.pk)


def _event_rows(timeline: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for event in timeline["events"]:
        row = {**event, "when": datetime.fromisoformat(event["at"]) if event["at"] else None}
        if "split" in event:
            row["split_name"] = split_name(event["split"])
        if "reason" in event and event["kind"] == "left_out":
            row["reason_name"] = str(REASON_NAMES.get(event["reason"], event["reason"]))
        if event["kind"] == "screened":
            row["pii_names"] = [span_name(pii_type) for pii_type in event["pii_types"]]
        if event["kind"] in ("screened", "screening_review") and event.get("status"):
            row["status_name"] = display_name("screening_status", event["status"])
        if event["kind"] == "gold":
            row["status_name"] = display_name("gold_status", event["status"])
            row["rule_name"] = display_name("rule", event["rule"])
        if event["kind"] == "flagged":
            row["flag_name"] = display_name("flag_kind", event["flag"])
            row["resolution_name"] = display_choice(FlagResolution, event["resolution"])
        if event["kind"] == "annotated":
            row["stage_name"] = display_name("stage", event["stage"])
        if event["kind"] in ("screening_review", "gold_decision"):
            row["action_name"] = display_name("action", event["action"])
        rows.append(row)
    return rows


@login_required
@require_http_methods(["GET"])
def provenance(request: HttpRequest, project_id: int, item_id: int) -> HttpResponse:
    project, role = project_for(request, project_id, CURATE)
    item = get_object_or_404(annotation_selectors.items_in(project).select_related("source"), pk=item_id)
    timeline = item_provenance(item)
    context = _context(project, role)
    context.update({"item": item, "timeline": timeline, "rows": _event_rows(timeline)})
    return render(request, "exports/item_provenance.html", context)
