"""The permission matrix: every API endpoint × method × role, with the status each role must get.

Each app contributes its rows in a ``tests/site/matrix_<app>.py`` module (a ``CASES`` list, and a
``prepare(scenario)`` when its rows need ids of their own); the test in ``test_permissions.py`` runs them
all and fails when an API route has no row, so new endpoints must join the matrix.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from annotation import services
from annotation.models import Annotation, Assignment, Flag, Guideline, Item, Project, Role, User

ROLES = ("anonymous", "outsider", "annotator", "manager", "maintainer", "superuser")


@dataclass
class Scenario:
    """One project with a user in every role and a bit of every kind of data."""

    project: Project
    users: dict[str, User | None]
    item: Item
    assignment: Assignment
    annotation: Annotation
    flag: Flag
    draft: Guideline
    extra: dict[str, Any] = field(default_factory=dict)


def build_scenario() -> Scenario:
    from django.contrib.auth.models import Permission

    def user(name: str, **extra: Any) -> User:
        return User.objects.create_user(name, password="pw-goldset-123", **extra)

    manager = user("m-manager")
    manager.user_permissions.add(Permission.objects.get(codename="add_project"))
    users: dict[str, User | None] = {
        "anonymous": None,
        "outsider": user("m-outsider"),
        "annotator": user("m-annotator"),
        "manager": manager,
        "maintainer": user("m-maintainer"),
        "superuser": User.objects.create_superuser("m-root", password="pw-goldset-123"),
    }
    project = services.project_create(name="Matrix", slug="matrix", task_type="tc", created_by=manager,
                                      annotators_per_item=2)
    services.membership_set(project=project, user=users["annotator"], role=Role.ANNOTATOR)
    services.membership_set(project=project, user=users["maintainer"], role=Role.MAINTAINER)
    services.guideline_acknowledge(user=users["annotator"], project=project)
    services.item_create(project=project, payload={"title": "첫 번째 기사 제목"}, external_id="m-1")
    services.item_create(project=project, payload={"title": "두 번째 기사 제목"}, external_id="m-2")
    assignment = services.assignment_next(project=project, user=users["annotator"])
    annotation, _ = services.annotation_submit(project=project, user=users["annotator"], item_id=assignment.item_id,
                                               payload={"label": "사회"})
    flag = services.flag_create(item=assignment.item, user=users["annotator"], kind="other", note="확인 필요")
    draft = services.guideline_create(project=project, instructions="v2", ethics="e", pii="p", created_by=manager)
    return Scenario(project, users, assignment.item, assignment, annotation, flag, draft)


@dataclass(frozen=True)
class Case:
    #: The route as Django spells it, e.g. ``api/projects/<int:project_pk>/next/``.
    route: str
    method: str
    url: Callable[[Scenario], str]
    #: Expected status per role; a role left out expects the ``default``.
    expected: dict[str, int]
    body: Callable[[Scenario], Any] | None = None
    default: int = 403

    def status_for(self, role: str) -> int:
        if role == "anonymous" and "anonymous" not in self.expected:
            return 401
        return self.expected.get(role, self.default)


def members(status: int, *, outsider: int = 404) -> dict[str, int]:
    """Every project member (and superusers) gets ``status``; outsiders do not see the project."""
    return {"outsider": outsider, "annotator": status, "manager": status, "maintainer": status,
            "superuser": status}


def curators(status: int) -> dict[str, int]:
    """Managers, maintainers and superusers get ``status``; annotators 403, outsiders 404."""
    return {"outsider": 404, "annotator": 403, "manager": status, "maintainer": status, "superuser": status}


def managers(status: int) -> dict[str, int]:
    return {"outsider": 404, "annotator": 403, "manager": status, "maintainer": 403, "superuser": status}


def annotators(status: int) -> dict[str, int]:
    return {"outsider": 404, "annotator": status, "manager": 403, "maintainer": 403, "superuser": 403}


def contributions() -> list[ModuleType]:
    """Every ``matrix_<app>`` module of this folder (imported here, at call time: they import this module)."""
    folder = str(Path(__file__).parent)
    return [importlib.import_module(f"{__package__}.{m.name}") for m in pkgutil.iter_modules([folder])
            if m.name.startswith("matrix_")]


def contributed_cases() -> list[Case]:
    """The rows of every app, in module order."""
    return [case for module in contributions() for case in module.CASES]


def prepared_scenario() -> Scenario:
    """A scenario with the extra ids every app's rows refer to."""
    scenario = build_scenario()
    for module in contributions():
        if hasattr(module, "prepare"):
            module.prepare(scenario)
    return scenario
