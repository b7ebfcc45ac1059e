"""Matrix rows for the annotator workspace's API (drafts)."""

from tests.site.matrix import Case, annotators

P = "api/projects/<int:project_pk>/"


def _draft(sc) -> str:
    return f"/api/projects/{sc.project.id}/assignments/{sc.extra['open_assignment']}/draft/"


CASES = [
    # Nothing saved yet: 204 for the assignment's owner.
    Case(P + "assignments/<int:assignment_pk>/draft/", "get", _draft, annotators(204)),
    Case(P + "assignments/<int:assignment_pk>/draft/", "put", _draft, annotators(200),
         body=lambda sc: {"payload": {"label": "경제"}, "seconds_spent": 3.5}),
]


def prepare(sc) -> None:
    """An assignment still open for the scenario's annotator (their leased second item)."""
    from annotation import services

    flag = sc.flag
    flag.resolution = "kept"  # an open flag hides the flagged item; the queue then offers the other one
    flag.save()
    sc.extra["open_assignment"] = services.assignment_next(project=sc.project, user=sc.users["annotator"]).id
    flag.resolution = "open"
    flag.save()
