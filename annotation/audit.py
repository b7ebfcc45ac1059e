"""The audit trail: services call :func:`audit_record` next to every change a person makes to an annotation,
a gold decision, a guideline, a release or an import. Managers read it through ``selectors.audit_events``."""

from __future__ import annotations

from typing import Any

from .models import AuditEvent, Project, User
from .rows import insert_instance


def audit_record(*, project: Project | int, actor: User | None, object_type: str, object_id: int | None,
                 action: str, before: Any = None, after: Any = None) -> AuditEvent:
    """Record one change; call it inside the transaction that makes the change."""
    return insert_instance(audit_event(project=project, actor=actor, object_type=object_type, object_id=object_id,
                                       action=action, before=before, after=after))


def audit_event(*, project: Project | int, actor: User | None, object_type: str, object_id: int | None,
                action: str, before: Any = None, after: Any = None) -> AuditEvent:
    """The event :func:`audit_record` records, unsaved: for a caller writing it together with the change
    (``rows.with_writes``), in the change's transaction all the same."""
    project_id = project if isinstance(project, int) else project.pk
    return AuditEvent(
        project_id=project_id, actor=actor if actor is not None and actor.is_authenticated else None,
        object_type=object_type, object_id=object_id, action=action, before=before, after=after,
    )
