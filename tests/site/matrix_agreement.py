"""Matrix rows for agreement, gold and adjudication: managers and maintainers read, managers decide;
annotators never see agreement, other people's labels or gold."""

from tests.site.matrix import Case, curators, managers

P = "api/projects/<int:project_pk>/"


def _p(sc, rest: str = "") -> str:
    return f"/api/projects/{sc.project.id}/{rest}"


CASES = [
    # In the test transaction the queued job never runs, so readers get 202 with the job's status.
    Case(P + "agreement/", "get", lambda sc: _p(sc, "agreement/"), curators(202)),
    Case(P + "agreement/csv/", "get", lambda sc: _p(sc, "agreement/csv/"), curators(202)),
    Case(P + "agreement/annotators/", "get", lambda sc: _p(sc, "agreement/annotators/"), curators(202)),
    Case(P + "agreement/items/", "get", lambda sc: _p(sc, "agreement/items/"), curators(200)),
    Case(P + "gold/", "get", lambda sc: _p(sc, "gold/"), curators(200)),
    Case(P + "gold/", "post", lambda sc: _p(sc, "gold/"), managers(200)),
    Case(P + "gold/<int:item_pk>/adjudicate/", "post", lambda sc: _p(sc, f"gold/{sc.item.id}/adjudicate/"),
         managers(200), body=lambda sc: {"payload": {"label": "사회"}, "reason": "제목이 사회 기사"}),
    Case(P + "gold/<int:item_pk>/known/", "post", lambda sc: _p(sc, f"gold/{sc.item.id}/known/"), managers(200),
         body=lambda sc: {"payload": {"label": "경제"}}),
    Case(P + "gold/<int:item_pk>/known/", "delete", lambda sc: _p(sc, f"gold/{sc.item.id}/known/"), managers(204)),
]
