"""Matrix rows for the annotation app's API."""

from tests.site.matrix import Case, annotators, curators, managers, members

P = "api/projects/<int:project_pk>/"


def _p(sc, rest: str = "") -> str:
    return f"/api/projects/{sc.project.id}/{rest}"


CASES = [
    Case("api/auth/token/", "post", lambda sc: "/api/auth/token/",
         {"anonymous": 400, "outsider": 200, "annotator": 200, "manager": 200, "maintainer": 200, "superuser": 200},
         body=lambda sc: {"username": sc.extra["username"], "password": "pw-goldset-123"}),
    Case("api/task-types/", "get", lambda sc: "/api/task-types/", members(200, outsider=200)),
    Case("api/schema/", "get", lambda sc: "/api/schema/", {"anonymous": 200, **members(200, outsider=200)}),
    Case("api/docs/", "get", lambda sc: "/api/docs/", {"anonymous": 200, **members(200, outsider=200)}),
    Case("api/projects/", "get", lambda sc: "/api/projects/", members(200, outsider=200)),
    Case("api/projects/", "post", lambda sc: "/api/projects/",
         {"outsider": 403, "annotator": 403, "manager": 201, "maintainer": 403, "superuser": 201},
         body=lambda sc: {"name": "New", "slug": f"new-{sc.extra['username']}", "task_type": "sts"}),
    Case("api/projects/<pk>/", "get", lambda sc: _p(sc), members(200)),
    Case("api/projects/<pk>/", "put", lambda sc: _p(sc), managers(200),
         body=lambda sc: {"name": "Renamed", "slug": "matrix", "task_type": "tc", "annotators_per_item": 3}),
    Case("api/projects/<pk>/", "patch", lambda sc: _p(sc), managers(200), body=lambda sc: {"name": "Renamed"}),
    # The scenario holds annotation work, so even those allowed get 409 rather than losing it.
    Case("api/projects/<pk>/", "delete", lambda sc: _p(sc), managers(409)),
    Case("api/projects/<pk>/progress/", "get", lambda sc: _p(sc, "progress/"), members(200)),
    Case(P + "members/", "get", lambda sc: _p(sc, "members/"), curators(200)),
    Case(P + "members/", "post", lambda sc: _p(sc, "members/"), managers(201),
         body=lambda sc: {"username": "m-outsider", "role": "annotator"}),
    Case(P + "members/<pk>/", "put", lambda sc: _p(sc, f"members/{sc.extra['membership']}/"), managers(200),
         body=lambda sc: {"role": "maintainer"}),
    Case(P + "members/<pk>/", "patch", lambda sc: _p(sc, f"members/{sc.extra['membership']}/"), managers(200),
         body=lambda sc: {"role": "maintainer"}),
    Case(P + "members/<pk>/", "delete", lambda sc: _p(sc, f"members/{sc.extra['membership']}/"), managers(204)),
    Case(P + "guidelines/", "get", lambda sc: _p(sc, "guidelines/"), curators(200)),
    Case(P + "guidelines/", "post", lambda sc: _p(sc, "guidelines/"), managers(201),
         body=lambda sc: {"instructions": "지침", "ethics": "윤리", "pii": "개인정보"}),
    Case(P + "guidelines/<pk>/", "get", lambda sc: _p(sc, f"guidelines/{sc.draft.id}/"), curators(200)),
    Case(P + "guidelines/<pk>/publish/", "post", lambda sc: _p(sc, f"guidelines/{sc.draft.id}/publish/"),
         managers(200)),
    Case(P + "guideline/", "get", lambda sc: _p(sc, "guideline/"), members(200)),
    Case(P + "guideline/acknowledge/", "post", lambda sc: _p(sc, "guideline/acknowledge/"), members(201)),
    Case(P + "next/", "get", lambda sc: _p(sc, "next/"), annotators(200)),
    Case(P + "budget/", "get", lambda sc: _p(sc, "budget/"), curators(200)),
    Case(P + "budget/", "post", lambda sc: _p(sc, "budget/"), managers(200),
         body=lambda sc: {"items": [sc.item.id], "annotators": []}),
    Case(P + "items/", "get", lambda sc: _p(sc, "items/"), curators(200)),
    Case(P + "items/", "post", lambda sc: _p(sc, "items/"), managers(201),
         body=lambda sc: {"payload": {"title": "새 기사"}, "external_id": "m-new"}),
    Case(P + "items/<pk>/", "get", lambda sc: _p(sc, f"items/{sc.item.id}/"), curators(200)),
    Case(P + "items/<pk>/", "delete", lambda sc: _p(sc, f"items/{sc.item.id}/"), managers(204)),
    Case(P + "assignments/", "get", lambda sc: _p(sc, "assignments/"), annotators(200)),
    Case(P + "assignments/<pk>/skip/", "post", lambda sc: _p(sc, f"assignments/{sc.extra['leased']}/skip/"),
         annotators(200), body=lambda sc: {"reason": "skip"}),
    Case(P + "annotations/", "get", lambda sc: _p(sc, "annotations/"), members(200)),
    Case(P + "annotations/", "post", lambda sc: _p(sc, "annotations/"), annotators(200),
         body=lambda sc: {"item": sc.item.id, "payload": {"label": "경제"}}),
    Case(P + "annotations/<pk>/", "get", lambda sc: _p(sc, f"annotations/{sc.annotation.id}/"), members(200)),
    Case(P + "annotations/mine/", "get", lambda sc: _p(sc, "annotations/mine/"), annotators(200)),
    # Only its annotator may revise an annotation: the others' role is refused before they learn whether it exists.
    Case(P + "annotations/<pk>/", "patch", lambda sc: _p(sc, f"annotations/{sc.annotation.id}/"), annotators(200),
         body=lambda sc: {"payload": {"label": "경제"}}),
    Case(P + "flags/", "get", lambda sc: _p(sc, "flags/"), members(200)),
    Case(P + "flags/", "post", lambda sc: _p(sc, "flags/"), members(201),
         body=lambda sc: {"item": sc.item.id, "kind": "pii", "note": "전화번호"}),
    Case(P + "audit/", "get", lambda sc: _p(sc, "audit/"), managers(200)),
    Case(P + "audit/", "get", lambda sc: _p(sc, "audit/?object_type=guideline"), managers(200)),
    Case(P + "flags/<pk>/resolve/", "post", lambda sc: _p(sc, f"flags/{sc.flag.id}/resolve/"), managers(200),
         body=lambda sc: {"resolution": "kept"}),
]


def prepare(sc) -> None:
    """Extra ids the rows above refer to."""
    from annotation import services
    from annotation.models import Membership

    sc.extra["membership"] = Membership.objects.get(project=sc.project, user__username="m-maintainer").id
    # A second, still leased, assignment for the skip row.
    sc.flag.resolution = "kept"
    sc.flag.save()
    sc.extra["leased"] = services.assignment_next(project=sc.project, user=sc.users["annotator"]).id
    sc.flag.resolution = "open"
    sc.flag.save()
