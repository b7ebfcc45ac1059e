"""What the annotator's workspace stores beside annotations: drafts and shortcut preferences."""

from __future__ import annotations

import json
from typing import Any

from ..models import (
    Assignment,
    AssignmentStatus,
    Draft,
    User,
)
from .errors import ServiceError

# -- workspace drafts ---------------------------------------------------------------------------

#: A draft is the widget's state, a few kilobytes; the bound keeps a buggy or hostile client from
#: filling the database.
DRAFT_MAX_BYTES = 200_000
#: Assignments whose work is over: a late autosave (a timer firing after the submit) must not revive them.
_CLOSED = (AssignmentStatus.SUBMITTED, AssignmentStatus.SKIPPED, AssignmentStatus.FLAGGED)


def draft_save(*, assignment: Assignment, payload: Any, seconds_spent: float = 0.0) -> Draft:
    """Store the annotator's unfinished work on an open assignment (last write wins)."""
    if assignment.status in _CLOSED:
        raise ServiceError(f"this item is already {assignment.get_status_display().lower()}", code="conflict")
    if len(json.dumps(payload, ensure_ascii=False).encode()) > DRAFT_MAX_BYTES:
        raise ServiceError(f"the draft is larger than {DRAFT_MAX_BYTES} bytes", field="payload")
    draft, _ = Draft.objects.update_or_create(
        assignment=assignment, defaults={"payload": payload, "seconds_spent": max(0.0, float(seconds_spent))}
    )
    return draft


def user_shortcuts_set(*, user: User, single_keys: bool) -> User:
    """Turn the workspace's single-key shortcuts on or off for one person (a stored preference)."""
    user.single_key_shortcuts = single_keys
    user.save(update_fields=["single_key_shortcuts"])
    return user
