"""Browser pages: thin views over selectors and services.

Every project page resolves the project and the caller's role through :func:`project_for`, so the
rule is the same everywhere (and the same as the API's): outsiders get 404, so project ids do not
leak, and members whose role does not allow the page get 403.
"""

from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db import IntegrityError, transaction
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.templatetags.static import static
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_http_methods, require_POST

from . import display, selectors, services
from .api.parsers import JsonInputError, loads_checked
from .forms import (
    GuidelineForm,
    GuidelinePreviewForm,
    ItemFilterForm,
    ItemsAssignForm,
    MemberAddForm,
    MemberRoleForm,
    ProjectCreateForm,
    ProjectSettingsForm,
)
from .models import AuditObject, FlagKind, Guideline, Project, Role, ScreeningStatus
from .permissions import ANNOTATE, CURATE, MANAGE, MEMBERS, can_create_projects
from .rendering import render_markdown
from .workspace_strings import label_display, stage_title, task_title, workspace_strings

ITEMS_PER_PAGE = 50
GUIDELINE_SECTIONS = ("instructions", "ethics", "pii")


def project_for(request: HttpRequest, project_id: int, allowed: frozenset[str]) -> tuple[Project, str]:
    """The project and the caller's role in it, or 404 for outsiders and 403 for the wrong role."""
    project = selectors.project_by_id(project_id)
    role = None if project is None else selectors.role_in_project(request.user, project)
    if project is None or role is None:
        raise Http404("No such project.")
    if role not in allowed:
        raise PermissionDenied
    return project, role


def _posted_id(request: HttpRequest, name: str) -> int:
    """A row id from a form button; junk becomes 0, which matches nothing (404 rather than 500)."""
    value = request.POST.get(name, "")
    return int(value) if value.isdigit() else 0


def role_label(role: str) -> str:
    """The role as people read it, in their language (superusers hold no membership role)."""
    return _("Superuser") if role == "superuser" else str(dict(Role.choices).get(role, role))


def _project_context(project: Project, role: str, tab: str) -> dict[str, object]:
    """What the shared project header and tabs need."""
    return {"project": project, "role": role, "role_label": role_label(role), "tab": tab,
            "can_manage": role in MANAGE, "can_curate": role in CURATE}


@login_required
def home(request: HttpRequest) -> HttpResponse:
    rows = [
        # Annotators see their own numbers only, never the project's totals.
        {"project": p, "role": role, "role_label": role_label(role),
         "mine": selectors.annotator_progress(p, request.user) if role == Role.ANNOTATOR else None}
        for p, role in selectors.projects_with_roles(request.user)
    ]
    return render(request, "annotation/home.html",
                  {"rows": rows, "can_create": can_create_projects(request.user)})


@login_required
@require_http_methods(["GET", "POST"])
def project_new(request: HttpRequest) -> HttpResponse:
    if not can_create_projects(request.user):
        raise PermissionDenied
    form = ProjectCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            project = services.project_create(
                name=data["name"], slug=data["slug"], task_type=data["task_type"], created_by=request.user,
                annotators_per_item=data["annotators_per_item"],
            )
        except IntegrityError:  # the slug was taken between the form check and the insert
            form.add_error("slug", _("A project with this slug already exists."))
        else:
            messages.success(request, _("Project created with the task's template guideline as version 1."))
            return redirect("annotation:project-detail", project.pk)
    return render(request, "annotation/project_new.html", {"form": form})


@login_required
def project_detail(request: HttpRequest, project_id: int) -> HttpResponse:
    project, role = project_for(request, project_id, MEMBERS)
    context = _project_context(project, role, "overview")
    context["guideline"] = selectors.current_guideline(project)
    if role in CURATE:
        progress = selectors.project_progress(project)
        titles = {s.name: s.title for s in project.task.stages}
        for stage in progress["stages"]:
            stage["title"] = titles.get(stage["stage"], stage["stage"])
        labels = dict(ScreeningStatus.choices)
        context["progress"] = progress
        context["screening"] = [(labels.get(k, k), n) for k, n in sorted(progress["screening"].items())]
        context["members_count"] = selectors.project_members(project).count()
    else:
        # Annotators see their own numbers only: never other annotators' counts or the project totals.
        context["mine"] = selectors.annotator_progress(project, request.user)
        context["can_annotate"] = role in ANNOTATE
    return render(request, "annotation/project_detail.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def project_guideline(request: HttpRequest, project_id: int) -> HttpResponse:
    project, role = project_for(request, project_id, CURATE)
    editing = selectors.guideline_for_editing(project)
    form = confirming = None
    if role in MANAGE:
        initial = {f: getattr(editing, f) for f in GUIDELINE_SECTIONS} if editing else {}
        form = GuidelineForm(request.POST or None, initial=initial)
    if request.method == "POST":
        if form is None:
            raise PermissionDenied
        action = request.POST.get("action")
        # Publishing makes every annotator stop and acknowledge, and a published version never changes: the
        # first POST only asks (the edits stay in the form); the confirmation's POST carries ``confirm``.
        confirmed = request.POST.get("confirm") == "publish"
        if action == "publish-draft" and confirmed:
            return _publish_draft(request, project)
        if action == "publish-draft":
            draft = get_object_or_404(selectors.guideline_versions(project), pk=_posted_id(request, "guideline"))
            confirming = {"version": draft.version, "draft": draft}
        elif action == "publish" and not confirmed and form.is_valid():
            latest = selectors.guideline_versions(project).first()
            confirming = {"version": (latest.version if latest else 0) + 1, "draft": None}
        elif action in {"draft", "publish"} and form.is_valid():
            try:
                with transaction.atomic():  # a version is published whole or not created at all
                    guideline = services.guideline_create(project=project, created_by=request.user,
                                                          **form.cleaned_data)
                    if action == "publish":
                        services.guideline_publish(guideline=guideline, by=request.user)
            except services.ServiceError as error:
                form.add_error(error.field if error.field in form.fields else None, error.message)
            else:
                if action == "publish":
                    messages.success(request, _("Version %(v)s published; annotators will be asked to "
                                                "acknowledge it.") % {"v": guideline.version})
                else:
                    messages.success(request, _("Draft version %(v)s saved.") % {"v": guideline.version})
                return redirect("annotation:project-guideline", project.pk)
        elif action not in {"draft", "publish"}:
            messages.error(request, _("Unknown action."))
    context = _project_context(project, role, "guideline")
    context["confirming"] = confirming
    current = selectors.current_guideline(project)
    context.update({
        "form": form,
        "editing": editing,
        "current": current,
        "versions": selectors.guideline_versions(project),
        # Read-only viewers (maintainers) see what annotators see: the current version.
        "sections": [(name, getattr(current, name)) for name in GUIDELINE_SECTIONS] if current else [],
    })
    return render(request, "annotation/project_guideline.html", context)


def _publish_draft(request: HttpRequest, project: Project) -> HttpResponse:
    guideline = get_object_or_404(selectors.guideline_versions(project), pk=_posted_id(request, "guideline"))
    try:
        services.guideline_publish(guideline=guideline, by=request.user)
    except services.ServiceError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, _("Version %(v)s published.") % {"v": guideline.version})
    return redirect("annotation:project-guideline", project.pk)


@login_required
@require_POST
def project_guideline_preview(request: HttpRequest, project_id: int) -> JsonResponse:
    project_for(request, project_id, MANAGE)
    form = GuidelinePreviewForm(request.POST)
    if not form.is_valid():
        return JsonResponse({"errors": form.errors}, status=400)
    return JsonResponse({name: str(render_markdown(form.cleaned_data[name])) for name in GUIDELINE_SECTIONS})


@login_required
@require_http_methods(["GET", "POST"])
def project_members(request: HttpRequest, project_id: int) -> HttpResponse:
    project, role = project_for(request, project_id, CURATE)
    action = request.POST.get("action")
    add_form = MemberAddForm(request.POST if action == "add" else None)
    confirming = None
    if request.method == "POST":
        if role not in MANAGE:
            raise PermissionDenied
        if action == "remove" and request.POST.get("confirm") != "remove":
            # Removing takes two steps: the first shows what it does; only the confirmation's POST removes.
            confirming = get_object_or_404(selectors.project_members(project), pk=_posted_id(request, "membership"))
        elif action != "add" or add_form.is_valid():  # an invalid add form is shown again with its errors
            try:
                messages.success(request, _member_change(request, project, action, add_form))
            except services.ServiceError as error:
                messages.error(request, error.message)
            return redirect("annotation:project-members", project.pk)
    context = _project_context(project, role, "members")
    context.update({"members": selectors.project_members(project), "add_form": add_form,
                    "roles": MemberRoleForm.base_fields["role"].choices, "confirming": confirming})
    return render(request, "annotation/project_members.html", context)


def _member_change(
    request: HttpRequest, project: Project, action: str | None, add_form: MemberAddForm
) -> str:
    """Carry out one change from the members page and say what was done (raises ``ServiceError``)."""
    if action == "add":
        user = add_form.cleaned_data["username"]
        membership = services.membership_set(project=project, user=user, role=add_form.cleaned_data["role"])
        return _("%(user)s added as %(role)s.") % {"user": user.username,
                                                   "role": membership.get_role_display()}
    if action not in {"role", "remove"}:
        raise services.ServiceError(_("Unknown action."))
    membership = get_object_or_404(selectors.project_members(project), pk=_posted_id(request, "membership"))
    if action == "remove":
        services.membership_remove(membership=membership)
        return _("%(user)s removed from the project.") % {"user": membership.user.username}
    role_form = MemberRoleForm(request.POST)
    if not role_form.is_valid():
        raise services.ServiceError(_("Choose a valid role."))
    membership = services.membership_set(project=project, user=membership.user,
                                         role=role_form.cleaned_data["role"])
    return _("%(user)s is now %(role)s.") % {"user": membership.user.username,
                                             "role": membership.get_role_display()}


@login_required
def project_items(request: HttpRequest, project_id: int) -> HttpResponse:
    project, role = project_for(request, project_id, CURATE)
    filters = ItemFilterForm(request.GET or None)
    valid = filters.is_valid() if request.GET else False
    items = selectors.project_items(
        project,
        split=filters.split_value() if valid else None,
        screening_status=(filters.cleaned_data.get("screening_status") or None) if valid else None,
        text=filters.cleaned_data.get("q", "") if valid else "",
    )
    if request.GET and not valid:  # the form shows the error; an unfiltered list would look like an answer
        items = items.none()
    page = Paginator(items, ITEMS_PER_PAGE).get_page(request.GET.get("page"))
    task = project.task
    stage_keys = [f"stage_{i}" for i in range(len(project.stage_names))]
    rows = [{"item": item, "text": task.item_text(item.payload),
             "counts": [getattr(item, key) for key in stage_keys]} for item in page.object_list]
    query = request.GET.copy()
    query.pop("page", None)
    context = _project_context(project, role, "items")
    context.update({"filters": filters, "page": page, "rows": rows, "stages": project.task.stages,
                    "query": query.urlencode()})
    return render(request, "annotation/project_items.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def project_settings(request: HttpRequest, project_id: int) -> HttpResponse:
    """The manager's settings: every option that may change, through the service the API's PATCH uses;
    what annotation has locked is shown with the reason."""
    project, role = project_for(request, project_id, MANAGE)
    locks = services.project_locks(project)
    form = ProjectSettingsForm(request.POST or None, project=project, locks=locks)
    if request.method == "POST" and form.is_valid():
        try:
            services.project_update(project=project, changes=form.changes(), by=request.user)
        except services.ServiceError as error:
            form.add_service_error(error)
        else:
            messages.success(request, _("Settings saved."))
            return redirect("annotation:project-settings", project.pk)
    return _settings_page(request, project, role, form)


@login_required
@require_http_methods(["POST"])
def project_items_assign(request: HttpRequest, project_id: int) -> HttpResponse:
    """The settings page's assignment form: items chosen by conditions go to the ticked annotators alone."""
    project, role = project_for(request, project_id, MANAGE)
    form = ItemsAssignForm(request.POST, project=project)
    if form.is_valid():
        try:
            count = services.items_assign(project=project, items=services.items_chosen(project, where=form.where()),
                                          annotators=form.cleaned_data["annotators"], by=request.user)
        except services.ServiceError as error:
            form.add_service_error(error)
        else:
            messages.success(request, ngettext("%(n)d item assigned.", "%(n)d items assigned.", count) % {"n": count})
            return redirect("annotation:project-settings", project.pk)
    return _settings_page(request, project, role, ProjectSettingsForm(project=project,
                                                                      locks=services.project_locks(project)), form)


def _settings_page(request: HttpRequest, project: Project, role: str, form: ProjectSettingsForm,
                   assign: ItemsAssignForm | None = None) -> HttpResponse:
    context = _project_context(project, role, "settings")
    context.update({"form": form, "locks": form.locks, "task_title": task_title(project.task.title),
                    "budget": selectors.budget_summary(project),
                    "assign": assign or ItemsAssignForm(project=project)})
    return render(request, "annotation/project_settings.html", context)


@login_required
@require_http_methods(["GET"])
def project_audit(request: HttpRequest, project_id: int) -> HttpResponse:
    """The audit trail: every recorded change to annotations, gold, guidelines, releases and imports."""
    project, role = project_for(request, project_id, MANAGE)
    object_type = request.GET.get("object_type") or ""
    events = selectors.audit_events(project, object_type=object_type or None)
    page = Paginator(events, ITEMS_PER_PAGE).get_page(request.GET.get("page"))
    from .agreement.measures import measure_for

    summary = measure_for(project.task_type).describe
    rows = [{"event": event, "action": display.display_name("action", event.action),
             "before": "" if event.before is None else display.value_text(event.before, summary=summary),
             "after": "" if event.after is None else display.value_text(event.after, summary=summary)}
            for event in page.object_list]
    context = _project_context(project, role, "audit")
    context.update({"page": page, "rows": rows, "object_type": object_type, "object_types": AuditObject.choices})
    return render(request, "annotation/project_audit.html", context)


# -- the annotator's workspace --------------------------------------------------------------------


def _safe_next(request: HttpRequest, fallback: str) -> str:
    target = request.POST.get("next") or request.GET.get("next") or ""
    if url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                       require_https=request.is_secure()):
        return target
    return fallback


@login_required
@require_http_methods(["GET", "POST"])
def guideline_read(request: HttpRequest, project_id: int) -> HttpResponse:
    """The guideline gate: read the current version (instructions, ethics, PII) and acknowledge it."""
    project, role = project_for(request, project_id, MEMBERS)
    guideline = selectors.current_guideline(project)
    if request.method == "POST":
        if guideline is None:
            raise Http404("No guideline published yet.")
        if request.POST.get("confirm") != "yes":
            messages.error(request, _("Tick the box to confirm that you have read the guideline."))
            return redirect(f"{reverse('annotation:guideline-read', args=[project.pk])}?next={_safe_next(request, '')}")
        services.guideline_acknowledge(user=request.user, project=project)
        messages.success(request, _("Guideline version %(v)s acknowledged.") % {"v": guideline.version})
        fallback = (reverse("annotation:annotate", args=[project.pk]) if role in ANNOTATE
                    else reverse("annotation:project-detail", args=[project.pk]))
        return redirect(_safe_next(request, fallback))
    context = _project_context(project, role, "read")
    context.update({
        "guideline": guideline,
        "acknowledgement": selectors.acknowledgement_of_current(request.user, project),
        "sections": _guideline_sections(guideline),
        "next": _safe_next(request, ""),
        "can_annotate": role in ANNOTATE,
    })
    return render(request, "annotation/guideline_read.html", context)


def _guideline_sections(guideline: Guideline | None) -> list[tuple[str, str, str]]:
    if guideline is None:
        return []
    titles = {"instructions": _("Task instructions"), "ethics": _("Ethics"), "pii": _("Personal information (PII)")}
    return [(name, titles[name], getattr(guideline, name)) for name in GUIDELINE_SECTIONS]


@login_required
def annotate(request: HttpRequest, project_id: int) -> HttpResponse:
    """The workspace: the widget of the project's task type, fed by the queue API."""
    project, role = project_for(request, project_id, ANNOTATE)
    if not selectors.has_acknowledged_current(request.user, project):
        gate = reverse("annotation:guideline-read", args=[project.pk])
        return redirect(f"{gate}?next={reverse('annotation:annotate', args=[project.pk])}")
    guideline = selectors.current_guideline(project)
    scoped = {"project_pk": project.pk}
    config = {
        "project": project.pk,
        "task": project.task_type,
        "widget": static(project.task.widget),
        # The project's own labels, ontology and score range: what the widget offers, nothing about others' work.
        "schema": project.label_schema,
        "label_names": label_display(project),
        "stages": {stage.name: stage_title(stage.title) for stage in project.task.stages},
        "api": {
            "next": reverse("api:next-item", kwargs=scoped),
            "annotations": reverse("api:annotation-list", kwargs=scoped),
            "flags": reverse("api:flag-list", kwargs=scoped),
            "progress": reverse("api:project-progress", args=[project.pk]),
            "assignment": reverse("api:assignment-list", kwargs=scoped),
        },
        "gate": (f"{reverse('annotation:guideline-read', args=[project.pk])}"
                 f"?next={reverse('annotation:annotate', args=[project.pk])}"),
        "user": request.user.pk,
        "home": reverse("annotation:home"),
        "single_keys": request.user.single_key_shortcuts,
        "strings": workspace_strings(project.task),
    }
    context = _project_context(project, role, "annotate")
    context.update({
        "config": config,
        "guideline": guideline,
        "sections": _guideline_sections(guideline),
        "mine": selectors.annotator_progress(project, request.user),
        "flag_kinds": FlagKind.choices,
    })
    return render(request, "annotation/workspace.html", context)


# -- the annotator's own submissions ---------------------------------------------------------------


@login_required
@require_http_methods(["GET"])
def my_submissions(request: HttpRequest, project_id: int) -> HttpResponse:
    """The annotator's own recent submissions, newest change first, each revisable until its gold is decided."""
    from .agreement.measures import measure_for
    from .agreement.rendering import payload_html

    project, role = project_for(request, project_id, ANNOTATE)
    page = Paginator(selectors.own_annotations(request.user, project), ITEMS_PER_PAGE).get_page(
        request.GET.get("page"))
    measure, task = measure_for(project.task_type), project.task
    titles = {stage.name: stage_title(stage.title) for stage in task.stages}
    rows = [{"annotation": annotation, "text": task.item_text(annotation.item.payload),
             "stage": titles.get(annotation.stage, annotation.stage),
             "answer": payload_html(measure, annotation.payload, annotation.item.payload, project.label_schema or {}),
             "revisable": not annotation.gold_decided and not task.stage(annotation.stage).produces}
            for annotation in page.object_list]
    context = _project_context(project, role, "mine")
    context.update({"page": page, "rows": rows})
    return render(request, "annotation/my_submissions.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def my_submission_revise(request: HttpRequest, project_id: int, annotation_id: int) -> HttpResponse:
    """Revise one of the annotator's own submissions with the task's widget (``services.annotation_revise``)."""
    project, role = project_for(request, project_id, ANNOTATE)
    annotation = get_object_or_404(selectors.own_annotations(request.user, project), pk=annotation_id)
    task = project.task
    error, status_code = "", 200
    if request.method == "POST":
        try:
            try:
                payload = loads_checked(request.POST.get("payload", ""))
            except (json.JSONDecodeError, JsonInputError):
                raise services.ServiceError(_("The answer could not be read; reload the page and try again."),
                                            field="payload") from None
            services.annotation_revise(project=project, user=request.user, annotation_id=annotation.pk,
                                       payload=payload)
        except services.ServiceError as failure:
            error, status_code = failure.message, 409 if failure.code == "gold_decided" else 400
            annotation = get_object_or_404(selectors.own_annotations(request.user, project), pk=annotation_id)
        else:
            messages.success(request, _("Your answer on item %(item)s was revised.")
                             % {"item": annotation.item.external_id or annotation.item.pk})
            return redirect("annotation:my-submissions", project.pk)
    stage = task.stage(annotation.stage)
    locked = ""
    if annotation.gold_decided:
        locked = _("The gold answer of this item is decided, so your annotation can no longer be revised. If it "
                   "is wrong, tell the project manager.")
    elif stage.produces:
        locked = _("Text you wrote became part of the item and was labelled by others; it cannot be revised.")
    widget = {
        "task": project.task_type, "widget": static(task.widget), "stage": annotation.stage,
        "item": {"id": annotation.item.pk, **task.annotator_view(annotation.item.payload, annotation.stage)},
        "schema": project.label_schema, "strings": workspace_strings(task), "initial": annotation.payload,
    }
    context = _project_context(project, role, "mine")
    context.update({"annotation": annotation, "stage": stage_title(stage.title), "locked": locked, "error": error,
                    "widget": widget, "text": task.item_text(annotation.item.payload)})
    return render(request, "annotation/my_submission_revise.html", context, status=status_code)


@require_http_methods(["GET", "HEAD"])
def favicon(request: HttpRequest) -> HttpResponse:
    """Browsers ask for /favicon.ico on pages that name no icon (the API, the admin): send them to ours."""
    return redirect(static("annotation/favicon.svg"), permanent=True)


@login_required
@require_POST
def shortcuts_set(request: HttpRequest) -> HttpResponse:
    """Turn single-key shortcuts on or off (``single_keys`` = ``on``/``off``) and go back to ``next``."""
    choice = request.POST.get("single_keys")
    if choice not in ("on", "off"):
        return HttpResponse(_("Choose on or off."), status=400)
    services.user_shortcuts_set(user=request.user, single_keys=choice == "on")
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                           require_https=request.is_secure()):
        target = reverse("annotation:home")
    return redirect(target)
