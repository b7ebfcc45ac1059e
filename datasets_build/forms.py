"""Forms of the import and review pages."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from annotation.models import FlagKind

from .models import ImportFormat


class ImportForm(forms.Form):
    file = forms.FileField(label=_("File"))
    format = forms.ChoiceField(label=_("Format"), choices=ImportFormat.choices, initial=ImportFormat.JSONL)
    source = forms.CharField(label=_("Source name"), required=False, max_length=200,
                             help_text=_("The corpus the file comes from; new names are registered with the licence."))
    license = forms.CharField(label=_("Licence (SPDX)"), required=False, max_length=100,
                              help_text=_("E.g. CC-BY-SA-4.0, CC-BY-NC-4.0, KOGL-Type1."))
    pii = forms.ChoiceField(label=_("PII"), required=False, choices=[
        ("", _("Project policy (identifiers pseudonymized, names flagged)")),
        ("pseudonymize", _("Pseudonymize every type")),
        ("detect", _("Detect and flag only (already screened corpora)")),
        ("off", _("Off")),
    ])
    encoding = forms.ChoiceField(label=_("Encoding"), choices=[("auto", _("Detect (UTF-8, CP949/EUC-KR)")),
                                                               ("utf-8", "UTF-8"), ("cp949", "CP949 / EUC-KR")])
    duplicates = forms.ChoiceField(label=_("Exact duplicates"), choices=[("skip", _("Skip and report")),
                                                                         ("refuse", _("Refuse the file"))])
    approved_only = forms.BooleanField(
        label=_("doccano: approved examples only"), required=False,
        help_text=_("The doccano export was made with “Export only approved documents”. An example there with no "
                    "labels was confirmed by its annotator, so it is imported as labelled with nothing."))
    ontology = forms.FileField(label=_("Ontology (dialogue state tracking only)"), required=False,
                               help_text=_("The ontology file the dialogues come with, e.g. wos-v1.1_ontology.json: "
                                           "it becomes the project's ontology, and its releases ship it."))


    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("approved_only") and data.get("format") != ImportFormat.DOCCANO:
            self.add_error("approved_only", _("Only a doccano export has approved examples."))
        return data


class ReviewForm(forms.Form):
    decision = forms.ChoiceField(choices=[("keep", _("Keep")), ("drop", _("Drop"))])
    reason = forms.CharField(max_length=2000)


class ItemIdsField(forms.Field):
    """Item ids ticked on a page (any id may be sent: the service keeps those still in the project's queue)."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value: Any) -> list[int]:
        values = [str(v) for v in value or []]
        if not all(v.isdigit() for v in values):
            raise forms.ValidationError(_("Item ids are whole numbers."))
        return [int(v) for v in values]


class BulkReviewForm(ReviewForm):
    """One decision for the items ticked on the page (``scope=chosen``) or for every item matching the
    page's filter (``scope=filter``)."""

    scope = forms.ChoiceField(choices=[("chosen", _("Chosen items")), ("filter", _("All items matching the filter"))])
    items = ItemIdsField(required=False)
    kind = forms.ChoiceField(required=False, choices=[("", _("Any reason")), *FlagKind.choices])

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("scope") == "chosen" and not data.get("items"):
            raise forms.ValidationError(_("Tick the items to decide, or choose all items matching the filter."))
        return data
