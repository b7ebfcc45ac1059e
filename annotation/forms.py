"""Forms of the manager pages: input parsing and field errors only; the work happens in services."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from . import selectors
from .models import Role, ScreeningStatus, Split
from .task_types import all_task_types
from .workspace_strings import task_title

#: Guideline sections are long Markdown, but not unbounded (rendering cost grows with size).
GUIDELINE_MAX_CHARS = 50_000


def task_type_choices() -> list[tuple[str, str]]:
    return [(t.slug, f"{t.klue_name} — {task_title(t.title)} ({t.slug})") for t in all_task_types()]


class ProjectCreateForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=200)
    slug = forms.SlugField(label=_("Slug"), max_length=100,
                           help_text=_("Short identifier used by the command line, e.g. klue-tc-2024."))
    task_type = forms.ChoiceField(label=_("Task type"), choices=task_type_choices)
    annotators_per_item = forms.IntegerField(label=_("Annotators per item"), min_value=1, max_value=20,
                                             initial=3)

    def clean_slug(self) -> str:
        slug = self.cleaned_data["slug"]
        if selectors.project_slug_taken(slug):
            raise forms.ValidationError(_("A project with this slug already exists."))
        return slug


class GuidelineForm(forms.Form):
    instructions = forms.CharField(label=_("Instructions"), max_length=GUIDELINE_MAX_CHARS,
                                   widget=forms.Textarea(attrs={"rows": 18, "data-preview": "instructions"}))
    ethics = forms.CharField(label=_("Ethics"), max_length=GUIDELINE_MAX_CHARS,
                             widget=forms.Textarea(attrs={"rows": 8, "data-preview": "ethics"}))
    pii = forms.CharField(label=_("Personal information (PII)"), max_length=GUIDELINE_MAX_CHARS,
                          widget=forms.Textarea(attrs={"rows": 8, "data-preview": "pii"}))
    change_note = forms.CharField(label=_("Change note"), max_length=300, required=False,
                                  help_text=_("What changed and why; annotators see it when they "
                                              "re-acknowledge."))


class GuidelinePreviewForm(forms.Form):
    """The same sections, all optional: the preview renders whatever is typed so far."""

    instructions = forms.CharField(max_length=GUIDELINE_MAX_CHARS, required=False, strip=False)
    ethics = forms.CharField(max_length=GUIDELINE_MAX_CHARS, required=False, strip=False)
    pii = forms.CharField(max_length=GUIDELINE_MAX_CHARS, required=False, strip=False)


class MemberAddForm(forms.Form):
    username = forms.CharField(label=_("Username"), max_length=150)
    role = forms.ChoiceField(label=_("Role"), choices=Role.choices, initial=Role.ANNOTATOR)

    def clean_username(self) -> object:
        username = self.cleaned_data["username"].strip()
        user = selectors.user_by_username(username)
        if user is None:
            raise forms.ValidationError(_("No user named “%(username)s”."), params={"username": username})
        return user


class MemberRoleForm(forms.Form):
    role = forms.ChoiceField(label=_("Role"), choices=Role.choices)


ALL = ""
#: ``Split.NONE`` is the empty string, which a query string cannot tell apart from "no filter".
UNASSIGNED = "unassigned"


class ItemFilterForm(forms.Form):
    split = forms.ChoiceField(
        label=_("Split"), required=False,
        choices=[(ALL, _("All splits")), (UNASSIGNED, _("Unassigned"))]
        + [(value, label) for value, label in Split.choices if value],
    )
    screening_status = forms.ChoiceField(label=_("Screening"), required=False,
                                         choices=[(ALL, _("Any status")), *ScreeningStatus.choices])

    def split_value(self) -> str | None:
        """The split to filter on, ``None`` for all; only valid after ``is_valid()``."""
        value = self.cleaned_data.get("split") or ALL
        if value == ALL:
            return None
        return Split.NONE if value == UNASSIGNED else value
