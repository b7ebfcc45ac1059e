"""The workspace's interface text, translated on the server and handed to the JavaScript as JSON.

The widgets carry no message catalogue of their own: Django's ``ko`` catalogue covers them too. Labels from
the project's schema (topics, relations, DEPRELs, slots) are shown by their display names in the reader's
language (:func:`label_display`), and sent back as their values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.utils.translation import get_language, gettext
from django.utils.translation import gettext as _

from .task_types import TaskType

if TYPE_CHECKING:
    from .models import Project


def stage_title(title: str) -> str:
    """A stage title in the request's language (the task types declare them in English, ``gettext_noop``)."""
    return gettext(title)


def task_title(title: str) -> str:
    """A task type's title in the request's language (declared like the stage titles)."""
    return gettext(title)


def reader_language() -> str:
    """The request's language as the label schemas name it (``ko``, ``en``)."""
    return (get_language() or settings.LANGUAGE_CODE).split("-")[0]


def label_display(project: Project) -> dict[str, str]:
    """The project's label values → their names in the request's language (values without a name are left
    out: pages show the value)."""
    return project.task.label_display(project.label_schema or {}, reader_language())


def workspace_strings(task: TaskType) -> dict[str, str]:
    """Every string the workspace and the task type's widget show, in the request's language."""
    return {
        # workspace
        "loading": _("Loading the next item…"),
        "done_all": _("Nothing left for you in this project. Thank you!"),
        "held_by_others": _("Other annotators are working on the last items of this project (%(n)s). If one of "
                            "them stops, the item comes back to the queue: check again in a few minutes."),
        "check_again": _("Check again"),
        "next_project": _("Next project: %(name)s"),
        "back_to_projects": _("Back to your projects"),
        "submit": _("Submit"),
        "skip": _("Skip"),
        "flag": _("Flag"),
        "saved": _("Saved. Here is the next item."),
        "draft_saved": _("Draft saved"),
        "draft_local": _("Draft kept in this browser (server not reachable)"),
        "draft_restored": _("Your unsaved work on this item was restored."),
        "offline_retry": _("Connection lost. Your answer is kept and will be sent again automatically."),
        "queue_busy": _("Many annotators are asking for items at this moment; asking again…"),
        "resent": _("A submission that had not reached the server was sent."),
        "error": _("Something went wrong: %(detail)s"),
        "invalid": _("Not submitted: %(detail)s"),
        "skipped": _("Skipped."),
        "flagged": _("Flagged. The item left your queue and goes to the manager's review."),
        "guideline_changed": _("A new guideline version was published. Please read it first."),
        "key_submit": _("submit"),
        "key_skip": _("skip (with an optional reason)"),
        "key_flag": _("flag the item"),
        "key_guideline": _("show or hide the guideline"),
        "key_accept": _("accept the model's suggestion as is and submit it"),
        "suggested_part": _("suggested"),
        "suggestion_banner": _("Pre-filled with a model's suggestion (%(model)s, confidence %(confidence)s). Check "
                               "every part: what you submit counts as your own answer."),
        "suggestion_accept": _("accepts it unchanged."),
        "first": _("1st"),
        "second": _("2nd"),
        "third": _("3rd"),
        "none": _("none"),
        "remove": _("Remove"),
        "selection": _("Selection"),
        "span_caret": _("Cursor before character %(n)s of %(total)s"),
        "span_selection": _("Selected: %(text)s (characters %(start)s to %(end)s)"),
        **task.widget_strings(),
    }
