"""Writes: every change to annotation work goes through a function here, one module per concern —
projects (members, guidelines), items, the queue, submissions, flags, the workspace's drafts, model
suggestions and users (API tokens).

Each function checks, then acts inside a transaction, locking the rows whose invariants it relies on
(the check-then-do pattern), so that concurrent requests cannot hand out an item k+1 times or create
two annotations for one double-click. Callers use the package (``services.annotation_submit``).
"""

from __future__ import annotations

from .budgets import (
    budget_capacity_check,
    items_assign,
    items_chosen,
    queue_needed_refresh,
)
from .errors import (
    ServiceError,
)
from .flags import (
    flag_create,
    flag_resolve,
)
from .items import (
    ScreenedItem,
    ScreenedWriting,
    item_checked,
    item_create,
    item_delete,
    item_delete_refusal,
    item_screened,
    item_screening_register,
    item_update,
    item_written,
    items_create,
)
from .projects import (
    guideline_acknowledge,
    guideline_create,
    guideline_publish,
    membership_remove,
    membership_set,
    project_changes_checked,
    project_create,
    project_delete,
    project_locks,
    project_update,
)
from .queue import (
    assignment_next,
    assignment_skip,
    assignments_expire,
    queue_priority_set,
    queue_slots_ensure,
    queue_slots_sync,
)
from .submissions import (
    Submission,
    annotation_revise,
    annotation_submit,
    annotation_submit_and_next,
)
from .suggestions import (
    assist_settings_update,
    queue_priorities_refresh,
    suggestion_decide,
    suggestions_clear,
    suggestions_replace,
)
from .users import (
    token_issue,
    tokens_revoke_on_password_change,
    user_ensure,
)
from .workspace import (
    DRAFT_MAX_BYTES,
    draft_save,
    user_shortcuts_set,
)

__all__ = [
    "DRAFT_MAX_BYTES",
    "ScreenedItem",
    "ScreenedWriting",
    "ServiceError",
    "Submission",
    "annotation_revise",
    "annotation_submit",
    "annotation_submit_and_next",
    "assignment_next",
    "assignment_skip",
    "assignments_expire",
    "assist_settings_update",
    "budget_capacity_check",
    "draft_save",
    "flag_create",
    "flag_resolve",
    "guideline_acknowledge",
    "guideline_create",
    "guideline_publish",
    "item_checked",
    "item_create",
    "item_delete",
    "item_delete_refusal",
    "item_screened",
    "item_screening_register",
    "item_update",
    "item_written",
    "items_assign",
    "items_chosen",
    "items_create",
    "membership_remove",
    "membership_set",
    "project_changes_checked",
    "project_create",
    "project_delete",
    "project_locks",
    "project_update",
    "queue_needed_refresh",
    "queue_priorities_refresh",
    "queue_priority_set",
    "queue_slots_ensure",
    "queue_slots_sync",
    "suggestion_decide",
    "suggestions_clear",
    "suggestions_replace",
    "token_issue",
    "tokens_revoke_on_password_change",
    "user_ensure",
    "user_shortcuts_set",
]
