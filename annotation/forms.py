"""Forms of the manager pages: input parsing and field errors only; the work happens in services."""

from __future__ import annotations

import copy
from typing import Any

from django import forms
from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext_lazy as _

from . import selectors
from .assist import AssistSettings, assist_settings
from .budget import K_MAX, RULES_MAX
from .gold.rules import DAWID_SKENE, DISCARDED, MACE, NEEDS_ADJUDICATION
from .models import Project, Role, ScreeningStatus, Split
from .project_settings import (
    CONTAMINATION_POLICIES,
    GOLD_KEYS,
    LABEL_NAME_MAX,
    LEASE_MINUTES_RANGE,
    pii_policy_choices,
)
from .task_types import LABEL_NAMES, all_task_types
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
    q = forms.CharField(label=_("Text contains"), required=False, max_length=selectors.SEARCH_MAX_CHARS,
                        widget=forms.TextInput(attrs={"type": "search", "placeholder": _("e.g. 서울")}))
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


#: The settings page's sections, in order: (key, heading), each holding the fields :data:`SETTINGS_SECTION_FIELDS`
#: names (a name ending in ``_`` takes every field it starts).
SETTINGS_SECTIONS = (
    ("general", _("Project")),
    ("work", _("Annotation work")),
    ("budget", _("Annotation budget")),
    ("gold", _("Gold labels")),
    ("assist", _("Model-assisted annotation")),
    ("pii", _("Personal information (PII) in imports")),
    ("releases", _("Releases")),
)
SETTINGS_SECTION_FIELDS = {
    "general": ("name", "description"),
    "work": ("annotators_per_item", "lease_minutes"),
    "budget": ("budget_",),
    "gold": ("gold_rule", "gold_min_votes", "gold_on_failure"),
    "assist": ("assist_", "queue_order"),
    "pii": ("pii_",),
    "releases": ("contamination_policy",),
}


def _put(mapping: dict[str, Any], key: str, value: Any, default: Any) -> None:
    """Store ``value`` under ``key``, or leave the key out when it is the default (the option's absence)."""
    if value is None or value == "" or value == default:
        mapping.pop(key, None)
    else:
        mapping[key] = value


#: A rule row's fields, in the table's order.
RULE_KEYS = ("k", "split", "sample", "seed", "source", "label")
#: A rule row's split choice for "whatever the split" (``UNASSIGNED``, from the items filter, is "none yet").
ANY = "*"


def _budget_target(parts: list[str]) -> str:
    """The settings page's field for the part of ``options.budget`` a service error names."""
    if parts[:1] == ["splits"] and len(parts) > 1:
        return f"budget_{parts[1]}"
    if parts[:1] and parts[0].startswith("rules["):
        index = parts[0][len("rules["):].rstrip("]")
        key = parts[1] if len(parts) > 1 and parts[1] in RULE_KEYS else "k"
        return f"rule_{index}_{key}"
    return "budget_train"


class ProjectSettingsForm(forms.Form):
    """The manager's settings page: every option the service may change, filled from the project, and
    :meth:`changes`, the service's ``changes`` from what was posted. The label rows are ``name_<i>_<language>``
    (display names of the i-th label value), ``remove_<i>`` (before annotation starts) and ``new_*`` (a label
    added to the task's label list)."""

    name = forms.CharField(label=_("Name"), max_length=200)
    description = forms.CharField(label=_("Description"), required=False, widget=forms.Textarea(attrs={"rows": 3}))
    annotators_per_item = forms.IntegerField(
        label=_("Annotators per item"), min_value=1, max_value=50,
        help_text=_("How many people label each item; items already complete stay complete."))
    lease_minutes = forms.IntegerField(
        label=_("Lease time (minutes)"), min_value=LEASE_MINUTES_RANGE[0], max_value=LEASE_MINUTES_RANGE[1],
        help_text=_("How long an item stays reserved for the annotator who took it before it returns to the queue."))
    gold_rule = forms.ChoiceField(label=_("Gold rule"), required=False)
    gold_min_votes = forms.IntegerField(
        label=_("Votes a label needs to become gold"), min_value=1, required=False,
        help_text=_("Leave empty for a majority of the annotators."))
    gold_on_failure = forms.ChoiceField(
        label=_("When no label has enough votes"), required=False,
        choices=[("", _("the rule's default")), (NEEDS_ADJUDICATION, _("send the item to adjudication")),
                 (DISCARDED, _("leave the item out"))])
    assist_show = forms.BooleanField(label=_("Show model suggestions to annotators"), required=False)
    # In percent, as on the suggester page; stored as the fraction the queue reads.
    assist_percent = forms.FloatField(
        label=_("Share of assignments with a suggestion (%)"), min_value=0, max_value=100,
        help_text=_("100 for all; 50 for a controlled comparison."))
    queue_order = forms.ChoiceField(label=_("Queue order"), choices=[
        ("default", _("the queue's own order")), ("uncertainty", _("least certain suggestion first"))])
    assist_uncertainty = forms.ChoiceField(label=_("Uncertainty measure"), choices=[
        ("margin", _("margin between the two most likely labels")), ("entropy", _("entropy of the prediction"))])
    assist_retrain_every = forms.IntegerField(
        label=_("Retrain the suggester after this many new gold items"), min_value=0,
        help_text=_("0 = only when a manager asks."))
    assist_target_score = forms.FloatField(
        label=_("Target score of the suggester (0–100)"), required=False, min_value=0, max_value=100)
    contamination_policy = forms.ChoiceField(
        label=_("When a dev or test item is found in other data"), choices=[
            ("test_training", _("fail the release for test items found in training data; warn for the rest")),
            ("any", _("fail the release for every item found")),
            ("warn", _("only warn"))],
        help_text=_("Training data: the train split of earlier releases, and the references marked as training "
                    "data. The same item in two splits of one release always fails it."))

    def __init__(self, data: Any = None, *, project: Project, locks: dict[str, str]) -> None:
        self.project = project
        self.locks = locks
        self.task = project.task
        self.schema = dict(project.label_schema or {})
        self.values = self.task.label_values(self.schema)
        self.languages = [code for code, _name in settings.LANGUAGES]
        options = project.options or {}
        assist = assist_settings(project)
        super().__init__(data, initial={
            "name": project.name, "description": project.description,
            "annotators_per_item": project.annotators_per_item,
            "lease_minutes": options.get("lease_minutes", settings.GOLDSET_LEASE_MINUTES),
            **{key: options.get(key, self.schema.get(key, "")) for key in ("gold_rule", "gold_on_failure")},
            "gold_min_votes": options.get("gold_min_votes", self.schema.get("gold_min_votes")),
            "assist_show": assist.show, "assist_percent": round(100 * assist.fraction, 2),
            "queue_order": assist.queue_order,
            "assist_uncertainty": assist.uncertainty, "assist_retrain_every": assist.retrain_every,
            "assist_target_score": assist.target_score,
            "contamination_policy": options.get("contamination_policy", CONTAMINATION_POLICIES[0]),
        })
        self.fields["gold_rule"].choices = [
            ("", _("the task type's rule")),
            (DAWID_SKENE, _("Dawid–Skene (weighs each annotator by their estimated accuracy)")),
            (MACE, _("MACE (weighs each annotator by how often they know the answer rather than guess)"))]
        types, actions, replacements, type_names, self.pii_defaults = pii_policy_choices()
        self.pii_types = types
        configured = dict(options.get("pii") or {})
        action_names = {"pseudonymize": _("replace with a placeholder"), "detect": _("detect and flag only"),
                        "off": _("do not look for it")}
        self.fields["pii_replacement"] = forms.ChoiceField(
            label=_("Replacement"), initial=configured.get("replacement", replacements[0]),
            choices=[("placeholder", _("typed placeholder, such as [전화번호1]")),
                     ("fake", _("realistic fake value"))])
        for pii_type in types:
            self.fields[f"pii_{pii_type}"] = forms.ChoiceField(
                label=type_names[pii_type], initial=configured.get(pii_type, self.pii_defaults[pii_type]),
                choices=[(action, action_names.get(action, action)) for action in actions])
        self._budget_fields(options.get("budget") or {})
        display = {language: self.task.label_display(self.schema, language) for language in self.languages}
        self.current_names = {value: {language: display[language][value] for language in self.languages
                                      if value in display[language]} for value in self.values}
        language_names = dict(settings.LANGUAGES)
        for i, value in enumerate(self.values):
            for language in self.languages:
                label = _("Name of %(label)s (%(language)s)") % {"label": value,
                                                                  "language": language_names[language]}
                self.fields[f"name_{i}_{language}"] = forms.CharField(
                    label=label, required=False, max_length=LABEL_NAME_MAX,
                    initial=self.current_names[value].get(language, ""),
                    widget=forms.TextInput(attrs={"aria-label": label, "lang": language}))
            if self.removable:
                label = _("Remove %(label)s") % {"label": value}
                self.fields[f"remove_{i}"] = forms.BooleanField(
                    label=label, required=False, widget=forms.CheckboxInput(attrs={"aria-label": label}))
        if self.task.label_list:
            self.fields["new_value"] = forms.CharField(
                label=_("New label (the value stored in files and the API)"), required=False, max_length=100)
            for language in self.languages:
                self.fields[f"new_name_{language}"] = forms.CharField(
                    label=_("Its name (%(language)s)") % {"language": language_names[language]}, required=False,
                    max_length=LABEL_NAME_MAX)

    def _budget_fields(self, budget: dict[str, Any]) -> None:
        """k per split (``budget_<split>``), then the budget's rules as rows (``rule_<i>_<key>``): the stored ones
        and one empty row to add a rule."""
        split_names = {"train": _("train"), "dev": _("dev"), "test": _("test")}
        for split, name in split_names.items():
            self.fields[f"budget_{split}"] = forms.IntegerField(
                label=_("Annotators per item in %(split)s") % {"split": name}, required=False, min_value=1,
                max_value=K_MAX, initial=(budget.get("splits") or {}).get(split),
                help_text=_("Leave empty for the project's number.") if split == "test" else "")
        rules = list(budget.get("rules") or [])
        self.rule_count = min(len(rules) + 1, RULES_MAX)
        sources = [("", _("any source"))] + [(name, name) for name in selectors.source_names(self.project)]
        labels = list(self.schema.get(self.task.label_list, [])) if self.task.label_list else []
        display = self.task.label_display(self.schema, translation.get_language() or settings.LANGUAGE_CODE)
        for i in range(self.rule_count):
            rule = rules[i] if i < len(rules) else {}
            row = _("rule %(n)d") % {"n": i + 1}
            share = rule.get("sample")
            self.fields[f"rule_{i}_k"] = forms.IntegerField(
                label=_("Annotators per item (%(row)s)") % {"row": row}, required=False, min_value=1,
                max_value=K_MAX, initial=rule.get("k"))
            self.fields[f"rule_{i}_split"] = forms.ChoiceField(
                label=_("Split (%(row)s)") % {"row": row}, required=False, initial=rule.get("split", ANY),
                choices=[(ANY, _("any split")), *split_names.items(), (UNASSIGNED, _("none yet"))])
            self.fields[f"rule_{i}_sample"] = forms.FloatField(
                label=_("Sample in percent (%(row)s)") % {"row": row}, required=False, min_value=0.01,
                max_value=100, initial=None if share is None else round(share * 100, 6))
            self.fields[f"rule_{i}_seed"] = forms.IntegerField(
                label=_("Seed of the sample (%(row)s)") % {"row": row}, required=False, min_value=0,
                initial=rule.get("seed"))
            self.fields[f"rule_{i}_source"] = forms.ChoiceField(
                label=_("Source (%(row)s)") % {"row": row}, required=False, initial=rule.get("source", ""),
                choices=sources if rule.get("source") in (None, *dict(sources)) else [*sources, (rule["source"],
                                                                                              rule["source"])])
            self.fields[f"rule_{i}_label"] = forms.ChoiceField(
                label=_("Corpus label (%(row)s)") % {"row": row}, required=False, initial=rule.get("label", ""),
                choices=[("", _("any label")), *((value, display.get(value, value)) for value in labels)])
            for key in RULE_KEYS:  # the table's cells have no label element of their own
                field = self.fields[f"rule_{i}_{key}"]
                field.widget.attrs["aria-label"] = field.label

    def budget_rows(self) -> list[list[forms.BoundField]]:
        """The rule rows' fields, for the template's table."""
        return [[self[f"rule_{i}_{key}"] for key in RULE_KEYS] for i in range(self.rule_count)]

    def _budget(self) -> dict[str, Any]:
        data = self.cleaned_data
        splits = {split: data[f"budget_{split}"] for split in ("train", "dev", "test")
                  if data[f"budget_{split}"] is not None}
        rules = []
        for i in range(self.rule_count):
            if data[f"rule_{i}_k"] is None:  # a row without k is no rule (the empty row, or one cleared)
                continue
            rule: dict[str, Any] = {"k": data[f"rule_{i}_k"]}
            if data[f"rule_{i}_split"] != ANY:
                rule["split"] = Split.NONE.value if data[f"rule_{i}_split"] == UNASSIGNED else data[f"rule_{i}_split"]
            if data[f"rule_{i}_sample"] is not None:
                rule["sample"] = round(data[f"rule_{i}_sample"] / 100, 8)
                if data[f"rule_{i}_seed"] is not None:
                    rule["seed"] = data[f"rule_{i}_seed"]
            for key in ("source", "label"):
                if data[f"rule_{i}_{key}"]:
                    rule[key] = data[f"rule_{i}_{key}"]
            rules.append(rule)
        budget: dict[str, Any] = {}
        if splits:
            budget["splits"] = splits
        if rules:
            budget["rules"] = rules
        return budget

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        for i in range(getattr(self, "rule_count", 0)):
            if data.get(f"rule_{i}_k") is None:
                continue
            if not any(data.get(f"rule_{i}_{key}") not in (None, "", ANY) for key in ("split", "sample", "source",
                                                                                      "label")):
                self.add_error(f"rule_{i}_k", _("A rule needs a condition: a split, a sample, a source or a label."))
            if data.get(f"rule_{i}_seed") is not None and data.get(f"rule_{i}_sample") is None:
                self.add_error(f"rule_{i}_seed", _("A seed goes with a sample; give the sample's percentage too."))
        return data

    @property
    def removable(self) -> bool:
        """Labels can be removed while no annotation uses the schema (and only from a label list)."""
        return bool(self.task.label_list) and "label_schema" not in self.locks

    def sections(self) -> list[tuple[str, Any, list[forms.BoundField]]]:
        """(key, heading, fields) of the option sections, for the template."""
        return [(key, heading, [self[name] for name in self.fields if any(
                    name == prefix or (prefix.endswith("_") and name.startswith(prefix))
                    for prefix in SETTINGS_SECTION_FIELDS[key])])
                for key, heading in SETTINGS_SECTIONS]

    def label_rows(self) -> list[dict[str, Any]]:
        """One row per label value: its name fields per language and its remove box (when removable)."""
        return [{"value": value, "names": [self[f"name_{i}_{language}"] for language in self.languages],
                 "remove": self[f"remove_{i}"] if self.removable else None} for i, value in enumerate(self.values)]

    def new_label_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in ("new_value", *(f"new_name_{lang}" for lang in self.languages))
                if name in self.fields]

    def clean_new_value(self) -> str:
        value = self.cleaned_data["new_value"].strip()
        if value and value in self.values:
            raise forms.ValidationError(_("%(label)s is already a label of this project.") % {"label": value})
        return value

    def changes(self) -> dict[str, Any]:
        """The service's ``changes``: the plain fields, the options and the label schema as posted."""
        data = self.cleaned_data
        return {"name": data["name"], "description": data["description"],
                "annotators_per_item": data["annotators_per_item"], "options": self._options(),
                "label_schema": self._schema()}

    def _options(self) -> dict[str, Any]:
        data = self.cleaned_data
        options = copy.deepcopy(self.project.options or {})
        _put(options, "lease_minutes", data["lease_minutes"], settings.GOLDSET_LEASE_MINUTES)
        for key in GOLD_KEYS:
            _put(options, key, data[key], self.schema.get(key))
        _put(options, "queue_order", data["queue_order"], "default")
        assist = dict(options.get("assist") or {})
        defaults = AssistSettings()
        fraction = None if data["assist_percent"] is None else data["assist_percent"] / 100
        _put(assist, "fraction", fraction, defaults.fraction)
        for key in ("show", "uncertainty", "retrain_every", "target_score"):
            _put(assist, key, data[f"assist_{key}"], getattr(defaults, key))
        assist.pop("queue_order", None)  # the project's own queue_order option is the one the queue reads
        _put(options, "assist", assist, {})
        pii = {pii_type: data[f"pii_{pii_type}"] for pii_type in self.pii_types
               if data[f"pii_{pii_type}"] != self.pii_defaults[pii_type]}
        _put(pii, "replacement", data["pii_replacement"], "placeholder")
        _put(options, "pii", pii, {})
        _put(options, "contamination_policy", data["contamination_policy"], CONTAMINATION_POLICIES[0])
        _put(options, "budget", self._budget(), {})
        return options

    def _schema(self) -> dict[str, Any]:
        data = self.cleaned_data
        schema = copy.deepcopy(self.schema)
        posted = {value: {language: data[f"name_{i}_{language}"].strip() for language in self.languages
                          if data[f"name_{i}_{language}"].strip()} for i, value in enumerate(self.values)}
        removed = {value for i, value in enumerate(self.values) if self.removable and data.get(f"remove_{i}")}
        new_value = data.get("new_value", "")
        if posted != self.current_names or removed or new_value:
            names = {value: entry for value, entry in posted.items() if entry and value not in removed}
            if new_value:
                names[new_value] = {language: data[f"new_name_{language}"].strip() for language in self.languages
                                    if data[f"new_name_{language}"].strip()}
            schema[LABEL_NAMES] = {value: entry for value, entry in names.items() if entry}
        label_list = self.task.label_list
        if label_list and (removed or new_value):
            schema[label_list] = [value for value in schema.get(label_list) or [] if value not in removed]
            if new_value:
                schema[label_list].append(new_value)
        return schema

    def add_service_error(self, error: Any) -> None:
        """Show a service's refusal next to the field it names (``options.lease_minutes``,
        ``label_schema.label_names.neutral.ko``), or above the form."""
        parts = (error.field or "").split(".")
        target = None
        if parts[:2] == ["options", "budget"]:
            target = _budget_target(parts[2:])
        elif parts[0] == "options" and len(parts) > 1:
            target = {"assist": "assist_percent", "pii": "pii_replacement"}.get(parts[1], parts[1])
        elif parts[:2] == ["label_schema", LABEL_NAMES] and len(parts) > 2 and parts[2] in self.values:
            language = parts[3] if len(parts) > 3 and parts[3] in self.languages else self.languages[0]
            target = f"name_{self.values.index(parts[2])}_{language}"
        elif parts[0] == "label_schema" and "new_value" in self.fields:
            target = "new_value"
        elif parts[0] in self.fields:
            target = parts[0]
        self.add_error(target if target in self.fields else None, error.message)


class ItemsAssignForm(forms.Form):
    """Items chosen by a budget rule's conditions, given to chosen annotators (``services.items_assign``); no
    annotator ticked opens the chosen items to every annotator again."""

    split = forms.ChoiceField(label=_("Split"), required=False)
    sample = forms.FloatField(label=_("Sample in percent"), required=False, min_value=0.01, max_value=100)
    seed = forms.IntegerField(label=_("Seed"), required=False, min_value=0)
    source = forms.ChoiceField(label=_("Source"), required=False)
    label = forms.ChoiceField(label=_("Corpus label"), required=False)
    annotators = forms.MultipleChoiceField(label=_("Annotators"), required=False, widget=forms.CheckboxSelectMultiple)

    def __init__(self, data: Any = None, *, project: Project) -> None:
        super().__init__(data, prefix="assign")
        schema = project.label_schema or {}
        task = project.task
        labels = list(schema.get(task.label_list, [])) if task.label_list else []
        display = task.label_display(schema, translation.get_language() or settings.LANGUAGE_CODE)
        self.fields["split"].choices = [(ANY, _("any split")), ("train", _("train")), ("dev", _("dev")),
                                        ("test", _("test")), (UNASSIGNED, _("none yet"))]
        self.fields["source"].choices = [("", _("any source"))] + [(n, n) for n in selectors.source_names(project)]
        self.fields["label"].choices = [("", _("any label")), *((value, display.get(value, value)) for value in labels)]
        self.fields["annotators"].choices = [(m.user.username, m.user.username) for m in
                                             selectors.project_members(project) if m.role == Role.ANNOTATOR]

    def where(self) -> dict[str, Any]:
        """The conditions as ``services.items_chosen`` takes them."""
        data = self.cleaned_data
        where: dict[str, Any] = {}
        if data["split"] and data["split"] != ANY:
            where["split"] = Split.NONE.value if data["split"] == UNASSIGNED else data["split"]
        if data["sample"] is not None:
            where["sample"] = round(data["sample"] / 100, 8)
            if data["seed"] is not None:
                where["seed"] = data["seed"]
        for key in ("source", "label"):
            if data[key]:
                where[key] = data[key]
        return where

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.is_bound and not self.errors and not self.where():
            raise forms.ValidationError(_("Choose the items: a split, a sample, a source or a label."))
        return data

    def add_service_error(self, error: Any) -> None:
        field = (error.field or "").split(".")[-1]
        self.add_error(field if field in self.fields else None, error.message)
