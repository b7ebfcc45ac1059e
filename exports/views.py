"""Release pages: the list with a build form, and one release with its card, files, checks and publish.

The same roles as the API: managers and maintainers see releases (annotators never), maintainers
publish. Builds run as background jobs; a release page refreshes itself while its build runs.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST
from rest_framework.exceptions import NotFound

from annotation import assist as annotation_assist
from annotation import review_breakdowns
from annotation import selectors as annotation_selectors
from annotation import services as annotation_services
from annotation.agreement.plots import Series, bar_chart, line_chart
from annotation.models import Project
from annotation.permissions import CURATE, MANAGE
from annotation.rendering import render_markdown
from annotation.services import ServiceError
from annotation.views import project_for

from . import selectors, services, suggester_services
from .api import DOWNLOADABLE, PUBLISH, file_response
from .api_assist import overview
from .archive import archive_response
from .models import SEMVER, Release, ReleaseStatus, SuggesterRunStatus
from .names import exclusion_name, file_kind_name, gold_source_name, metric_name, phase_name
from .soft_labels import soft_labels_fit
from .writers import DEFAULT_FORMATS, FORMATS, STANDARD_FORMATS, fits


class ReleaseForm(forms.Form):
    version = forms.CharField(label=gettext_lazy("Version"), max_length=64,
                              help_text=gettext_lazy("Semantic version, never reused (1.0.0)."))
    mode = forms.ChoiceField(label=gettext_lazy("Splits"), initial="ratios", widget=forms.RadioSelect, choices=[
        ("ratios", gettext_lazy("New splits by ratio and seed")),
        ("keep", gettext_lazy("Keep each item's split")),
    ])
    splits = forms.CharField(label=gettext_lazy("Ratios (train,dev,test)"), initial="0.8,0.1,0.1", required=False)
    seed = forms.IntegerField(label=gettext_lazy("Seed"), initial=0, required=False)
    formats = forms.MultipleChoiceField(label=gettext_lazy("Formats"), choices=[(f, f) for f in FORMATS],
                                        initial=list(DEFAULT_FORMATS), widget=forms.CheckboxSelectMultiple,
                                        help_text=gettext_lazy(
                                            "When only KLUE's tab-separated files or CoNLL are chosen, the records "
                                            "also come as JSONL, so that the folder loads with the datasets "
                                            "library as it is."))
    soft_labels = forms.BooleanField(
        label=gettext_lazy("Soft labels"), required=False,
        help_text=gettext_lazy("Add each item's label votes, and the annotator model's probabilities where the gold "
                               "rule is Dawid–Skene or MACE, to the JSONL, CSV and Parquet files."))

    def __init__(self, *args: object, project: Project, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.project = project
        if not soft_labels_fit(project):  # a label distribution needs one label out of a fixed set
            del self.fields["soft_labels"]
        self.fields["version"].initial = selectors.next_free_version(project)
        # The standard formats (CoNLL-U, SQuAD…) are offered only to the task types they fit.
        self.fields["formats"].choices = [
            (f, file_kind_name(f) if f not in STANDARD_FORMATS else _(STANDARD_FORMATS[f].description))
            for f in FORMATS if fits(f, project.task_type)]

    def clean_version(self) -> str:
        """The service refuses these too (in English, for the API); the page says it here, by the field."""
        version = self.cleaned_data["version"].strip()
        if not SEMVER.match(version):
            raise forms.ValidationError(_("%(version)s is not a semantic version like 1.0.0.") % {"version": version})
        if selectors.release_by_version(self.project, version) is not None:
            raise forms.ValidationError(
                _("Version %(version)s already exists, and versions are never reused. The next free version is "
                  "%(next)s.") % {"version": version, "next": selectors.next_free_version(self.project)},
                code="taken")
        return version


def _context(project, role: str) -> dict[str, object]:
    return {"project": project, "role": role, "tab": "releases", "can_manage": role in MANAGE,
            "can_curate": role in CURATE, "can_publish": role in PUBLISH}


@login_required
@require_http_methods(["GET", "POST"])
def release_list(request: HttpRequest, project_id: int) -> HttpResponse:
    project, role = project_for(request, project_id, CURATE)
    form = ReleaseForm(request.POST or None, project=project)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        keep = data["mode"] == "keep"
        try:
            release = services.release_request(
                project=project, version=data["version"], splits=None if keep else (data["splits"] or None),
                seed=None if keep else data["seed"], keep_splits=keep, formats=data["formats"], user=request.user,
                soft_labels=bool(data.get("soft_labels")),
            )
        except ServiceError as error:
            form.add_error(error.field if error.field in form.fields else None, error.message)
        else:
            # No message: the release page states the build's progress and outcome as they change.
            return redirect("exports:release-detail", project.pk, release.pk)
    if form.has_error("version", "taken"):
        # The field offers the version the message proposes, so building again takes one click.
        form.data = form.data.copy()
        form.data["version"] = selectors.next_free_version(project)
    context = _context(project, role)
    context.update({"releases": selectors.releases_of(project), "form": form,
                    "raters": selectors.rater_ids(project) if role in MANAGE else None,
                    "has_items": annotation_selectors.items_in(project).exists()})
    return render(request, "exports/release_list.html", context)


def _card_parts(release: Release) -> tuple[str, str]:
    """The card's YAML header and its Markdown body (the header would render as a heading)."""
    if release.status not in DOWNLOADABLE:
        return "", ""
    text = selectors.release_card(release)
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end != -1:
            return text[4:end], text[end + 5:]
    return "", text


@login_required
def release_detail(request: HttpRequest, project_id: int, release_id: int) -> HttpResponse:
    """The release; with ``?part=live``, only its live part (state, checks, files, card), which the page fetches
    again while the build runs (annotation/static/annotation/live_region.js)."""
    project, role = project_for(request, project_id, CURATE)
    release = get_object_or_404(selectors.releases_of(project), pk=release_id)
    header, body = _card_parts(release)
    context = _context(project, role)
    context.update({
        "release": release,
        "folder": str(selectors.release_folder(release)),
        "files": selectors.release_files(release),
        "card_header": header,
        "card_html": render_markdown(body),
        "building": release.status in (ReleaseStatus.BUILDING, ReleaseStatus.CHECKING),
        "phase": phase_name(release.progress.get("phase") or "queued"),
        "publishable": release.status in (ReleaseStatus.PASSED, ReleaseStatus.INCONCLUSIVE),
        "downloadable": release.status in DOWNLOADABLE,
        "reasons": selectors.status_reasons(release),
        "check": release.baseline_check,
        "check_reason": selectors.check_reason(release.baseline_check),
        "interval": release.baseline_check.get("interval") or {},
        "baseline_rows": _baseline_rows(release.baseline_check),
        "baseline_plot": _baseline_plot(release.baseline_check),
        "excluded": [(exclusion_name(reason), n) for reason, n in (release.excluded or {}).items() if n],
        "gold_source": gold_source_name((release.gold or {}).get("source", "")),
        "contamination_check": selectors.contamination_checks(release).first(),
        "reliability": review_breakdowns.reliability_table(release.agreement or {}),
    })
    template = "exports/_release_live.html" if request.GET.get("part") == "live" else "exports/release_detail.html"
    return render(request, template, context)


def _baseline_rows(check: dict) -> list[tuple[str, float | None, float | None]]:
    """(metric's name, baseline, trivial baseline) for every metric the check reported."""
    metrics, trivial = check.get("metrics") or {}, check.get("trivial") or {}
    return [(metric_name(name), value, trivial.get(name)) for name, value in metrics.items()]


def _baseline_plot(check: dict) -> str:
    """Baseline and trivial baseline side by side per metric, so a maintainer sees the margin at a glance."""
    rows = _baseline_rows(check)
    if not rows:
        return ""
    labels, values, highlight = [], [], []
    for name, value, trivial in rows:
        labels += [name, _("%(metric)s (trivial baseline)") % {"metric": name}]
        values += [value, trivial]
        highlight += [True, False]
    return bar_chart(labels, values, title=_("Baseline vs trivial baseline on dev"),
                     value_label=_("score (0–100)"), value_range=(0.0, 100.0), highlight=highlight)


@login_required
@require_http_methods(["GET", "POST"])
def release_publish(request: HttpRequest, project_id: int, release_id: int) -> HttpResponse:
    """Publishing cannot be undone, so it takes two steps: this page states what freezes and asks; only its
    form's POST, which carries ``confirm``, publishes. Any other request gets the page."""
    project, role = project_for(request, project_id, PUBLISH)
    release = get_object_or_404(selectors.releases_of(project), pk=release_id)
    override = request.POST.get("override") == "on"
    reason = request.POST.get("override_reason", "").strip() if override else ""
    needs_override = release.status == ReleaseStatus.INCONCLUSIVE
    error = ""
    if request.method == "POST" and request.POST.get("confirm") == "publish" and needs_override and not reason:
        error = _("To publish without a verdict, tick the box and give a reason.")
    elif request.method == "POST" and request.POST.get("confirm") == "publish":
        try:
            services.release_publish(release=release, user=request.user, override_reason=reason)
        except ServiceError as error:
            messages.error(request, error.message)
        else:
            messages.success(request, _("Release %(version)s is published and can no longer change.")
                             % {"version": release.version})
            return redirect("exports:release-detail", project.pk, release.pk)
    context = _context(project, role)
    context.update({"release": release, "files": selectors.release_files(release).count(),
                    "publishable": release.status in (ReleaseStatus.PASSED, ReleaseStatus.INCONCLUSIVE),
                    "needs_override": needs_override, "override": override, "override_reason": reason,
                    "error": error})
    return render(request, "exports/release_publish.html", context)


@login_required
@require_POST
def release_verify(request: HttpRequest, project_id: int, release_id: int) -> HttpResponse:
    project, _role = project_for(request, project_id, CURATE)
    release = get_object_or_404(selectors.releases_of(project), pk=release_id)
    result = services.release_verify(release)
    if result.get("ok"):
        messages.success(request, _("All %(n)s files match their checksums.") % {"n": result["files"]})
    else:
        kinds = {"missing": _("missing"), "changed": _("changed"), "unlisted": _("not listed in SHA256SUMS"),
                 "differs_from_record": _("not the checksum recorded at build time")}
        problems = result.get("error") or "; ".join(
            f"{name}: {', '.join(result[key])}" for key, name in kinds.items() if result.get(key))
        messages.error(request, _("Verification failed: %(problems)s") % {"problems": problems})
    return redirect("exports:release-detail", project.pk, release.pk)


@login_required
def release_archive(request: HttpRequest, project_id: int, release_id: int) -> StreamingHttpResponse:
    project, _role = project_for(request, project_id, CURATE)
    release = get_object_or_404(selectors.releases_of(project), pk=release_id)
    if release.status not in DOWNLOADABLE:
        raise Http404(_("This release has no finished files."))
    return archive_response(release)


@login_required
def release_file(request: HttpRequest, project_id: int, release_id: int, file_id: int) -> FileResponse:
    project, _role = project_for(request, project_id, CURATE)
    release = get_object_or_404(selectors.releases_of(project), pk=release_id)
    file = get_object_or_404(selectors.release_files(release), pk=file_id)
    try:
        return file_response(release, file)
    except NotFound as error:
        raise Http404(str(error.detail)) from None


class SuggesterForm(forms.Form):
    show = forms.BooleanField(label=gettext_lazy("Show suggestions to annotators"), required=False)
    percent = forms.FloatField(label=gettext_lazy("Share of assignments with a suggestion (%)"), min_value=0,
                               max_value=100, help_text=gettext_lazy("100 for all; 50 for a controlled comparison."))
    queue_order = forms.ChoiceField(label=gettext_lazy("Queue order"), choices=[
        ("default", gettext_lazy("Closest to completion first")),
        ("uncertainty", gettext_lazy("Least certain suggestion first")),
    ])
    retrain_every = forms.IntegerField(label=gettext_lazy("Retrain after this many new gold items (0 = on demand)"),
                                       min_value=0)
    target_score = forms.FloatField(label=gettext_lazy("Target baseline score (0–100)"), min_value=0, max_value=100,
                                    required=False)


def _learning_curve_plot(effect: dict[str, Any]) -> SafeString | None:
    points = sorted(effect.get("points") or [], key=lambda p: p["n"])
    if len(points) < 2:
        return None
    series = [Series(effect.get("primary") or _("score"), [p["score"] for p in points])]
    if effect.get("target") is not None:
        series.append(Series(_("target"), [effect["target"]] * len(points), color="#e67e22"))
    return line_chart([f"{p['n']:,}" for p in points], series, title=_("Baseline score by gold items trained on"),
                      x_label=_("gold items"), y_label=f"{effect.get('primary') or ''} (0–100)")


@login_required
@require_http_methods(["GET", "POST"])
def suggester(request: HttpRequest, project_id: int) -> HttpResponse:
    """The suggester of a project: its settings, retraining with progress, the learning curve and what
    reaching the target would take."""
    project, role = project_for(request, project_id, CURATE)
    current = annotation_assist.assist_settings(project)
    form = SuggesterForm(request.POST if request.POST.get("action") == "settings" else None, initial={
        "show": current.show, "percent": round(100 * current.fraction, 2), "queue_order": current.queue_order,
        "retrain_every": current.retrain_every, "target_score": current.target_score})
    if request.method == "POST":
        if role not in MANAGE:
            raise PermissionDenied
        if request.POST.get("action") == "retrain":
            try:
                suggester_services.suggester_request(project=project, user=request.user)
            except ServiceError as error:
                messages.error(request, error.message)
            else:
                messages.success(request, _("Retraining the suggester; annotators keep working meanwhile."))
            return redirect("exports:suggester", project.pk)
        if form.is_valid():
            data = form.cleaned_data
            try:
                annotation_services.assist_settings_update(
                    project=project, show=data["show"], fraction=data["percent"] / 100,
                    queue_order=data["queue_order"], retrain_every=data["retrain_every"],
                    target_score=data["target_score"])
            except annotation_assist.AssistError as error:
                form.add_error(error.field if error.field in form.fields else None, str(error))
            else:
                messages.success(request, _("Suggester settings saved."))
                return redirect("exports:suggester", project.pk)
    state = overview(project)
    runs = list(selectors.suggester_runs(project)[:20])
    context = _context(project, role)
    context.update({"tab": "suggester", "form": form, "state": state, "runs": runs,
                    "effect": state["expected_effect"], "curve": _learning_curve_plot(state["expected_effect"]),
                    "refresh": any(r.status in (SuggesterRunStatus.QUEUED, SuggesterRunStatus.RUNNING) for r in runs)})
    return render(request, "exports/suggester.html", context)
