"""Who may do what in a project: one table, read by the API and the pages alike."""

from __future__ import annotations

from .models import Role, User

MANAGE = frozenset({Role.MANAGER.value, "superuser"})
CURATE = frozenset({Role.MANAGER.value, Role.MAINTAINER.value, "superuser"})
MEMBERS = frozenset({Role.ANNOTATOR.value, Role.MANAGER.value, Role.MAINTAINER.value, "superuser"})
ANNOTATE = frozenset({Role.ANNOTATOR.value})


def can_create_projects(user: User) -> bool:
    return bool(user.is_authenticated and user.has_perm("annotation.add_project"))
