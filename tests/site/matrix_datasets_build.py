"""Matrix rows for the dataset-building app's API (imports, sources, PII report, review queue)."""

from tests.site.matrix import Case, curators, managers

P = "api/projects/<int:project_pk>/"


def _p(sc, rest: str = "") -> str:
    return f"/api/projects/{sc.project.id}/{rest}"


CASES = [
    Case(P + "imports/", "get", lambda sc: _p(sc, "imports/"), curators(200)),
    # The matrix posts JSON, so managers get past the permission check and fail validation (no file).
    Case(P + "imports/", "post", lambda sc: _p(sc, "imports/"), managers(400), body=lambda sc: {"format": "jsonl"}),
    Case(P + "imports/<int:pk>/", "get", lambda sc: _p(sc, f"imports/{sc.extra['import_job']}/"), curators(200)),
    Case(P + "sources/", "get", lambda sc: _p(sc, "sources/"), curators(200)),
    Case(P + "pii-report/", "get", lambda sc: _p(sc, "pii-report/"), curators(200)),
    Case(P + "near-duplicates/", "get", lambda sc: _p(sc, "near-duplicates/"), curators(200)),
    Case(P + "screening-review/", "get", lambda sc: _p(sc, "screening-review/"), curators(200)),
    Case(P + "screening-review/<int:item_pk>/", "post", lambda sc: _p(sc, f"screening-review/{sc.item.id}/"),
         managers(200), body=lambda sc: {"decision": "keep", "reason": "확인함"}),
]


def prepare(sc) -> None:
    from datasets_build.models import ImportJob

    job = ImportJob.objects.create(project=sc.project, file_name="m.jsonl", stored_path="/nonexistent",
                                   format="jsonl", created_by=sc.users["manager"])
    sc.extra["import_job"] = job.id
