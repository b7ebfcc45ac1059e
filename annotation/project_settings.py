"""Validation of a project's ``options`` and ``label_schema`` before they are stored.

Both are free JSON read on hot paths: ``lease_minutes`` by every ``next/``, the schema by every submission,
the PII policy by every import, the gold settings by every gold computation. A value of the wrong shape stored
once (``{"lease_minutes": "abc"}``) made every annotator's ``next/`` fail with a 500, so the API, the admin and
the services refuse it on save with an error naming the field, and nothing is stored.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext as _

from .services import ServiceError
from .task_types import LABEL_NAMES, get_task_type

#: The bounds of ``options["lease_minutes"]``: at least a minute, at most a week.
LEASE_MINUTES_RANGE = (1, 7 * 24 * 60)


def _whole_number(value: Any, low: int, high: int | None = None) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        upper = _(" and at most %(high)d") % {"high": high} if high is not None else ""
        return _("must be a whole number of at least %(low)d%(upper)s; got %(value)r") % {
            "low": low, "upper": upper, "value": value}
    return None


def _choice(value: Any, choices: tuple[str, ...]) -> str | None:
    if value not in choices:
        return _("must be one of %(choices)s; got %(value)r") % {"choices": ", ".join(choices), "value": value}
    return None


def _lease_minutes(value: Any) -> str | None:
    return _whole_number(value, *LEASE_MINUTES_RANGE)


def _queue_order(value: Any) -> str | None:
    from .assist import QUEUE_ORDERS

    return _choice(value, QUEUE_ORDERS)


#: What the settings page offers for the PII option: the PII types, the actions, the replacements, each type's name
#: in the reader's language and the default action per type.
PiiChoices = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], dict[str, str], dict[str, Any]]

#: The PII policy is the importer's (``datasets_build.pii``), which depends on this app: it hands over its check
#: and its choices when it is ready (:func:`pii_policy_register`, from its ``AppConfig.ready``), as it does the
#: item screening (``services.item_screening_register``), so this app does not import the one above it.
_pii_policy: tuple[Callable[[dict[str, Any]], object], Callable[[], PiiChoices]] | None = None


def pii_policy_register(check: Callable[[dict[str, Any]], object], choices: Callable[[], PiiChoices]) -> None:
    """Make ``check(options)`` (raises ``ValueError`` saying what is wrong with ``options["pii"]``) the PII
    option's validation and ``choices()`` what the settings page offers."""
    global _pii_policy
    _pii_policy = (check, choices)


def _registered_pii_policy() -> tuple[Callable[[dict[str, Any]], object], Callable[[], PiiChoices]]:
    if _pii_policy is None:
        raise ImproperlyConfigured("no PII policy is registered: add datasets_build to INSTALLED_APPS")
    return _pii_policy


def _pii(value: Any) -> str | None:
    if not isinstance(value, dict):
        return _("must be an object mapping PII types to actions; got %(value)r") % {"value": value}
    try:
        _registered_pii_policy()[0]({"pii": value})
    except ValueError as bad:
        return str(bad)
    return None


def pii_policy_choices() -> PiiChoices:
    """What the settings page offers for the PII option (the import's own tables)."""
    return _registered_pii_policy()[1]()


def _gold_rule(value: Any) -> str | None:
    from .gold.rules import ALTERNATIVE_RULES

    return _choice(value, ALTERNATIVE_RULES)


def _gold_min_votes(value: Any) -> str | None:
    return _whole_number(value, 1)


def _gold_on_failure(value: Any) -> str | None:
    from .gold.rules import DISCARDED, NEEDS_ADJUDICATION

    return _choice(value, (NEEDS_ADJUDICATION, DISCARDED))


def _assist(value: Any) -> str | None:
    from .assist import AssistError, settings_validated

    if not isinstance(value, dict):
        return _("must be an object of assist settings; got %(value)r") % {"value": value}
    # What the suggester records about its current model comes back with the settings a manager changed.
    recorded = {key: value[key] for key in ASSIST_RECORDED if key in value}
    if not all(isinstance(recorded.get(key, ""), str) for key in ("model_version", "source")) or (
            isinstance(recorded.get("trained_on", 0), bool) or not isinstance(recorded.get("trained_on", 0), int)):
        return _("model_version and source must be strings and trained_on a whole number; got %(value)r") % {
            "value": recorded}
    try:
        settings_validated({key: setting for key, setting in value.items() if key not in ASSIST_RECORDED})
    except AssistError as bad:
        return f"{bad.field}: {bad}" if bad.field else str(bad)
    return None


#: Which contamination hits fail a release (``exports/contamination.py``), the first the default: test items found
#: in training data (an earlier release's train split, a reference marked as training data), any hit, or none
#: (every hit only warns).
CONTAMINATION_POLICIES = ("test_training", "any", "warn")


def _contamination_policy(value: Any) -> str | None:
    return _choice(value, CONTAMINATION_POLICIES)


def _budget(value: Any) -> str | None:
    """The budget's own field (``options.budget.rules[0].sample``) names where it is wrong."""
    from .budget import budget_problem

    problem = budget_problem(value)
    if problem is not None:
        raise ServiceError(problem[1], field=f"options.{problem[0]}")
    return None


#: The assist keys the suggester writes (``services.suggestions``), not a manager.
ASSIST_RECORDED = ("model_version", "source", "trained_on")

OPTIONS: dict[str, Callable[[Any], str | None]] = {
    "lease_minutes": _lease_minutes,
    "queue_order": _queue_order,
    "pii": _pii,
    "gold_rule": _gold_rule,
    "gold_min_votes": _gold_min_votes,
    "gold_on_failure": _gold_on_failure,
    "assist": _assist,
    "contamination_policy": _contamination_policy,
    "budget": _budget,
}
#: Options a label schema may also carry (the gold settings a task type sets as its default, e.g. NLI's votes).
GOLD_KEYS = ("gold_rule", "gold_min_votes", "gold_on_failure")


def options_validate(options: Any) -> dict[str, Any]:
    """The options unchanged, or ``ServiceError`` naming the first bad field (``options.<key>``)."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise ServiceError(_("options must be an object; got %(value)r") % {"value": options}, field="options")
    for key, value in options.items():
        check = OPTIONS.get(key)
        if check is None:
            raise ServiceError(_("unknown option %(key)r; expected one of %(known)s")
                               % {"key": key, "known": ", ".join(OPTIONS)}, field=f"options.{key}")
        problem = check(value)
        if problem:
            raise ServiceError(f"{key} {problem}", field=f"options.{key}")
    return options


def _same_shape(value: Any, default: Any) -> str | None:
    """Why ``value`` cannot stand in for the task's default schema entry ``default`` (None when it can)."""
    if isinstance(default, bool):
        return None if isinstance(value, bool) else _("must be true or false")
    if isinstance(default, int | float):
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            return _("must be a number")
        return None
    if isinstance(default, str):
        return None if isinstance(value, str) else _("must be a string")
    if isinstance(default, list):
        if not isinstance(value, list) or not value:
            return _("must be a non-empty list")
        if all(isinstance(entry, str) for entry in default):
            if not all(isinstance(entry, str) and entry.strip() for entry in value):
                return _("must be a list of non-empty strings")
            if len(set(value)) != len(value):
                return _("must not repeat an entry")
        return None
    if isinstance(default, dict):
        return None if isinstance(value, dict) else _("must be an object")
    return None


def label_schema_validate(schema: Any, *, task_type: str) -> dict[str, Any]:
    """The schema unchanged, or ``ServiceError`` naming the bad field (``label_schema.<key>``): every key of
    the task type's default schema present with the same kind of value, the gold settings valid, and a score
    range (STS) that is a range."""
    if not isinstance(schema, dict):
        raise ServiceError(_("label_schema must be an object; got %(value)r") % {"value": schema},
                           field="label_schema")
    task = get_task_type(task_type)
    for key, default in task.default_schema().items():
        if key == LABEL_NAMES and key not in schema:  # projects made before labels had names show the shipped ones
            continue
        if key not in schema:
            raise ServiceError(_("the %(task)s label schema needs %(key)r") % {"task": task_type, "key": key},
                               field=f"label_schema.{key}")
        problem = _same_shape(schema[key], default)
        if problem:
            raise ServiceError(f"{key} {problem}", field=f"label_schema.{key}")
    for key in GOLD_KEYS:
        if key in schema:
            problem = OPTIONS[key](schema[key])
            if problem:
                raise ServiceError(f"{key} {problem}", field=f"label_schema.{key}")
    if {"min", "max", "step"} <= schema.keys() and not (
            schema["min"] < schema["max"] and 0 < schema["step"] <= schema["max"] - schema["min"]):
        raise ServiceError(_("the score range needs min < max and 0 < step ≤ max − min"), field="label_schema.step")
    if LABEL_NAMES in schema:
        # The names the task type ships may outlive a label the project dropped (a smaller WoS ontology).
        _label_names_validate(schema[LABEL_NAMES], task.label_values(schema), set(task.default_label_names()))
    return schema


#: The longest display name a label may have (a button's text, a table cell).
LABEL_NAME_MAX = 80


def _label_names_validate(names: Any, values: list[str], shipped: set[str]) -> None:
    """``{value: {language: name}}`` for labels of the schema (or ones the task type ships names for), in the
    site's languages, each name a non-empty line of text."""
    field = f"label_schema.{LABEL_NAMES}"
    languages = [code for code, _name in settings.LANGUAGES]
    if not isinstance(names, dict):
        raise ServiceError(_("%(key)s must be an object mapping each label to its names per language, such as "
                             "{\"entailment\": {\"ko\": \"함의\", \"en\": \"entailment\"}}; got %(value)r")
                           % {"key": LABEL_NAMES, "value": names}, field=field)
    for value, entry in names.items():
        if value not in values and value not in shipped:
            raise ServiceError(_("%(value)r is not a label of this schema; name only its labels (%(labels)s)")
                               % {"value": value, "labels": ", ".join(values)}, field=f"{field}.{value}")
        if not isinstance(entry, dict):
            raise ServiceError(_("the names of %(value)r must be an object of language → name, such as "
                                 "{\"ko\": \"…\", \"en\": \"…\"}; got %(entry)r") % {"value": value, "entry": entry},
                               field=f"{field}.{value}")
        for language, name in entry.items():
            where = f"{field}.{value}.{language}"
            if language not in languages:
                raise ServiceError(_("unknown language %(language)r; expected one of %(languages)s")
                                   % {"language": language, "languages": ", ".join(languages)}, field=where)
            if not isinstance(name, str) or not name.strip() or "\n" in name or len(name) > LABEL_NAME_MAX:
                raise ServiceError(_("a label's name must be one line of 1 to %(max)d characters; got %(name)r")
                                   % {"max": LABEL_NAME_MAX, "name": name}, field=where)
