"""What the queue's concurrency tests share: annotators ready to work (members who acknowledged the guideline),
a thread per annotator, and the budget's seeded sample as docs/settings.md states it."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable

from annotation import services
from annotation.models import Project, Role, User

ANNOTATORS = 20


def run_per_user(run: Callable[[User], None], users: list[User], *, timeout: float) -> None:
    """``run(user)`` in a thread per user; fails if one is still running after ``timeout`` seconds."""
    threads = [threading.Thread(target=run, args=(user,)) for user in users]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    assert not any(thread.is_alive() for thread in threads), "a worker thread hung"


def annotators(project: Project, make_user: Callable[..., User], n: int = ANNOTATORS) -> list[User]:
    users = []
    for _ in range(n):
        user = make_user()
        services.membership_set(project=project, user=user, role=Role.ANNOTATOR)
        services.guideline_acknowledge(user=user, project=project)
        users.append(user)
    return users


def in_sample(item_id: int, share: float, seed: int) -> bool:
    """The seeded sample as docs/settings.md states it, written here apart from the SQL it checks."""
    return (item_id * 2654435761 + seed * 2246822519) % 2 ** 32 < math.ceil(share * 2 ** 32)
