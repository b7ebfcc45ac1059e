"""Matrix rows for the suggester API: managers change it, maintainers look, annotators never reach it."""

from __future__ import annotations

from tests.site.matrix import Case, curators, managers

P = "api/projects/<int:project_pk>/suggester/"


def _s(sc, rest: str = "") -> str:
    return f"/api/projects/{sc.project.id}/suggester/{rest}"


CASES = [
    Case(P, "get", lambda sc: _s(sc), curators(200)),
    Case(P, "patch", lambda sc: _s(sc), managers(200), body=lambda sc: {"show": True, "fraction": 0.5}),
    # Queued (the job itself would report that the project has too little gold).
    Case(P + "train/", "post", lambda sc: _s(sc, "train/"), managers(202)),
    # Permission first: an allowed caller without a file gets 400, everyone else their 403/404.
    Case(P + "predictions/", "post", lambda sc: _s(sc, "predictions/"), managers(400), body=lambda sc: {}),
    Case(P + "runs/", "get", lambda sc: _s(sc, "runs/"), curators(200)),
    Case(P + "runs/<int:pk>/", "get", lambda sc: _s(sc, f"runs/{sc.extra['suggester_run']}/"), curators(200)),
]


def prepare(sc) -> None:
    from exports.models import SuggesterRun

    sc.extra["suggester_run"] = SuggesterRun.objects.create(project=sc.project, kind="train").id
