"""Annotation budgets: how many annotators (k) each item gets, by split and for chosen subsets.

A project's budget is its ``options["budget"]``::

    {"splits": {"train": 1, "dev": 5, "test": 5},
     "rules": [{"k": 3, "split": "train", "sample": 0.05, "seed": 13},
               {"k": 4, "source": "news-2021"},
               {"k": 4, "label": "politics"}]}

An item's k is the k of the first rule it matches, else its split's k, else the project's
``annotators_per_item``. A rule matches when all of its conditions hold: ``split`` (the item's split, ``""`` for
none yet), ``sample`` with ``seed`` (a seeded share of the items: a hash of the item id and the seed below the
share), ``source`` (the name of the item's source) and ``label`` (a label the corpus came with: an imported
annotation whose ``label`` is that value). A stage with a fixed number of annotators (the NLI writer) keeps it.

The k is written into each queue slot (``QueueSlot.needed``) by the services (``services.budgets``), so the take
compares two columns; :func:`item_k` is the same rule as an ORM expression for every other reader (gold,
agreement, progress, releases).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from django.db.models import (
    BigIntegerField,
    Case,
    Exists,
    ExpressionWrapper,
    F,
    IntegerField,
    OuterRef,
    Q,
    Value,
    When,
)
from django.db.models.functions import Mod
from django.db.models.lookups import LessThan
from django.utils.translation import gettext as _

from .models import Annotation, Project, Split

#: The largest k a budget may give (the API's and the settings page's bound on annotators per item).
K_MAX = 50
#: At most this many rules: each is one more condition in the expression every reader evaluates.
RULES_MAX = 10
#: The splits a budget names (``""``: not assigned yet).
SPLITS = tuple(choice.value for choice in Split)
#: The seeded sample: an item is in it when ``(id * A + seed * B) mod 2^32`` is below ``share * 2^32`` — integer
#: arithmetic both databases do the same way (Knuth's multiplicative hash, spread evenly over consecutive ids).
_HASH_A, _HASH_B, _HASH_M = 2654435761, 2246822519, 1 << 32
RULE_CONDITIONS = ("split", "sample", "source", "label")


@dataclass(frozen=True)
class Rule:
    k: int
    split: str | None = None
    sample: float | None = None
    seed: int = 0
    source: str | None = None
    label: str | None = None


@dataclass(frozen=True)
class Budget:
    default: int
    splits: dict[str, int]
    rules: tuple[Rule, ...]

    @property
    def uniform(self) -> bool:
        """Every item gets the project's k (no split or rule says otherwise)."""
        return not self.rules and all(k == self.default for k in self.splits.values())

    def ks(self) -> set[int]:
        return {self.default, *self.splits.values(), *(rule.k for rule in self.rules)}


class BudgetError(ValueError):
    """A budget that cannot be stored: ``field`` names where (``budget.rules[1].sample``)."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


def _k_problem(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= K_MAX:
        return _("must be a whole number from 1 to %(max)d; got %(value)r") % {"max": K_MAX, "value": value}
    return None


def _check(value: Any) -> None:
    """Raise :class:`BudgetError` when ``value`` is not a budget's shape."""
    if not isinstance(value, dict):
        raise BudgetError(_("must be an object with \"splits\" and \"rules\"; got %(value)r") % {"value": value},
                          "budget")
    unknown = set(value) - {"splits", "rules"}
    if unknown:
        raise BudgetError(_("unknown key %(key)r; expected splits, rules") % {"key": sorted(unknown)[0]}, "budget")
    splits = value.get("splits", {})
    if not isinstance(splits, dict):
        raise BudgetError(_("must be an object of split → k; got %(value)r") % {"value": splits}, "budget.splits")
    for split, k in splits.items():
        if split not in SPLITS or not split:
            raise BudgetError(_("unknown split %(split)r; expected train, dev or test") % {"split": split},
                              f"budget.splits.{split}")
        problem = _k_problem(k)
        if problem:
            raise BudgetError(problem, f"budget.splits.{split}")
    rules = value.get("rules", [])
    if not isinstance(rules, list) or len(rules) > RULES_MAX:
        raise BudgetError(_("must be a list of at most %(max)d rules; got %(value)r") % {"max": RULES_MAX,
                                                                                         "value": rules},
                          "budget.rules")
    for i, rule in enumerate(rules):
        _rule_check(rule, f"budget.rules[{i}]")


def _rule_check(rule: Any, where: str) -> None:
    if not isinstance(rule, dict):
        raise BudgetError(_("a rule must be an object such as {\"k\": 3, \"split\": \"train\", \"sample\": 0.05}; "
                            "got %(value)r") % {"value": rule}, where)
    unknown = set(rule) - {"k", "seed", *RULE_CONDITIONS}
    if unknown:
        raise BudgetError(_("unknown key %(key)r; expected k, split, sample, seed, source, label")
                          % {"key": sorted(unknown)[0]}, f"{where}.{sorted(unknown)[0]}")
    problem = _k_problem(rule.get("k"))
    if problem:
        raise BudgetError(problem, f"{where}.k")
    if not any(key in rule for key in RULE_CONDITIONS):
        raise BudgetError(_("a rule needs at least one condition: split, sample, source or label"), where)
    if "split" in rule and rule["split"] not in SPLITS:
        raise BudgetError(_("unknown split %(split)r; expected train, dev, test or \"\" (none yet)")
                          % {"split": rule["split"]}, f"{where}.split")
    if "sample" in rule:
        share = rule["sample"]
        if isinstance(share, bool) or not isinstance(share, int | float) or not math.isfinite(share) \
                or not 0 < share <= 1:
            raise BudgetError(_("must be a share above 0 and at most 1 (0.05 = 5%%); got %(value)r")
                              % {"value": share}, f"{where}.sample")
    if "seed" in rule:
        if "sample" not in rule:
            raise BudgetError(_("a seed only goes with a sample"), f"{where}.seed")
        seed = rule["seed"]
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < _HASH_M:
            raise BudgetError(_("must be a whole number from 0 to %(max)d; got %(value)r")
                              % {"max": _HASH_M - 1, "value": seed}, f"{where}.seed")
    for key in ("source", "label"):
        if key in rule and (not isinstance(rule[key], str) or not rule[key].strip()):
            raise BudgetError(_("must be a non-empty string; got %(value)r") % {"value": rule[key]}, f"{where}.{key}")


def budget_problem(value: Any) -> tuple[str, str] | None:
    """(field, message) of what is wrong with ``value`` as ``options["budget"]``, or ``None``."""
    try:
        _check(value)
    except BudgetError as bad:
        return bad.field, str(bad)
    return None


def budget_of(project: Project) -> Budget:
    """The project's budget (options already validated when stored)."""
    raw = (project.options or {}).get("budget") or {}
    rules = tuple(Rule(k=r["k"], split=r.get("split"), sample=r.get("sample"), seed=r.get("seed", 0),
                       source=r.get("source"), label=r.get("label")) for r in raw.get("rules", []))
    return Budget(default=project.annotators_per_item, splits=dict(raw.get("splits", {})), rules=rules)


def project_budget_problem(project: Project, value: Any) -> tuple[str, str] | None:
    """What the project's data makes wrong in a well-shaped budget: a source it has no such name for, a label
    outside its label list (or a task type without one label per answer)."""
    from .task_types import get_task_type

    if not isinstance(value, dict):
        return None
    task = get_task_type(project.task_type)
    sources = set(project.sources.values_list("name", flat=True))
    labels = (project.label_schema or {}).get(task.label_list or "", []) if task.label_list else []
    for i, rule in enumerate(value.get("rules", [])):
        if "source" in rule and rule["source"] not in sources:
            known = ", ".join(sorted(sources)) or _("none yet")
            return (f"budget.rules[{i}].source",
                    _("this project has no source named %(name)r (its sources: %(known)s)")
                    % {"name": rule["source"], "known": known})
        if "label" in rule and rule["label"] not in labels:
            return (f"budget.rules[{i}].label",
                    _("%(label)r is not one of this project's labels (%(labels)s)")
                    % {"label": rule["label"], "labels": ", ".join(map(str, labels)) or _("none")})
    return None


def _threshold(share: float) -> int:
    return math.ceil(share * _HASH_M)


def rule_condition(rule: Rule, item: str) -> Q:
    """The rule's conditions on the item reached by the lookup prefix ``item`` (``""`` on Item itself). The sample is
    integer arithmetic both databases do alike: ``(id * A + seed * B) mod 2^32 < share * 2^32``."""
    prefix = f"{item}__" if item else ""
    pk = f"{item}_id" if item else "pk"  # a foreign key's own column: no join to read the id
    q = Q()
    if rule.split is not None:
        q &= Q(**{f"{prefix}split": rule.split})
    if rule.source is not None:
        q &= Q(**{f"{prefix}source__name": rule.source})
    if rule.sample is not None:
        hashed = ExpressionWrapper(Mod(F(pk) * Value(_HASH_A) + Value(rule.seed * _HASH_B), Value(_HASH_M)),
                                   output_field=BigIntegerField())
        q &= Q(LessThan(hashed, Value(_threshold(rule.sample))))
    if rule.label is not None:
        q &= Q(Exists(Annotation.objects.filter(item=OuterRef(pk), imported=True, payload__label=rule.label)))
    return q


def item_k(budget: Budget, *, item: str = "") -> Any:
    """The budget as an expression of an item's k, on ``Item`` rows (``item=""``) or on rows reaching the item
    by a foreign key named ``item`` (``QueueSlot``, ``Annotation``)."""
    if budget.uniform:
        return Value(budget.default, output_field=IntegerField())
    whens = [When(rule_condition(rule, item), then=Value(rule.k)) for rule in budget.rules]
    split = f"{item}__split" if item else "split"
    whens += [When(Q(**{split: name}), then=Value(k)) for name, k in budget.splits.items()]
    return Case(*whens, default=Value(budget.default), output_field=IntegerField())


def stage_k(project: Project, budget: Budget, stage: str) -> Any:
    """An item's k in ``stage`` as an expression on ``Item`` rows: the stage's fixed number, else the budget's."""
    fixed = project.task.stage(stage).annotators
    return item_k(budget) if fixed is None else Value(fixed, output_field=IntegerField())
