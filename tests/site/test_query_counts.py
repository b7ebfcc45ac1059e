"""No N+1 queries: every GET API route and every project page issues as many queries with 30 rows as with 3.

The scenario is the permission matrix's (a project with a user in every role, plus what each
``matrix_<area>.prepare`` adds); ``grow`` then adds rows of every kind the pages and lists show:
annotators with memberships, items with sources, assignments and annotations, flags, import jobs and
releases. Each route is requested by the first role allowed to read it, twice (the first request may
fill caches or compute a cached report); the second request's count is compared between the sizes.

The annotation loop (``GET next/`` → ``POST annotations/``) is the hot path of the annotate benchmark;
its exact query counts are pinned below, so an added query fails here first (docs/performance.md).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation import services
from annotation.models import Assignment, Role, Source, User
from tests.builders import api_client
from tests.site.matrix import Case, Scenario, contributed_cases, prepared_scenario

GET_CASES: list[Case] = [case for case in contributed_cases() if case.method == "get"]
READERS = ("manager", "maintainer", "annotator", "superuser")
#: Queries a page may add with more rows without being an N+1 (e.g. one more page of a paginator).
SLACK = 2
#: Project pages (name, extra URL kwargs); every page route without an id of its own besides the project.
PROJECT_PAGES = ["annotation:project-detail", "annotation:project-guideline", "annotation:project-members",
                 "annotation:project-items", "annotation:guideline-read", "annotation:annotate",
                 "datasets_build:project-import", "datasets_build:project-review", "datasets_build:project-sources",
                 "exports:release-list", "annotation:review-dashboard", "annotation:review-items",
                 "annotation:review-gold", "annotation:project-audit", "exports:suggester",
                 "annotation:my-submissions"]
PAGE_READER = {"annotation:guideline-read": "annotator", "annotation:annotate": "annotator",
               "annotation:my-submissions": "annotator"}


def grow(sc: Scenario, n: int, tag: str) -> None:
    """Add n rows of every listed kind to the scenario's project."""
    from datasets_build.models import ImportJob

    project = sc.project
    source = Source.objects.create(name=f"source-{tag}", license="CC0-1.0")
    items = [services.item_create(project=project, payload={"title": f"성장 기사 {tag} {i}"},
                                  external_id=f"grow-{tag}-{i}", source=source) for i in range(n)]
    for i in range(n):
        annotator = User.objects.create_user(f"grow-{tag}-{i}", password="pw-goldset-123")
        services.membership_set(project=project, user=annotator, role=Role.ANNOTATOR)
        services.guideline_acknowledge(user=annotator, project=project)
        assignment = services.assignment_next(project=project, user=annotator)
        if assignment is not None:
            services.annotation_submit(project=project, user=annotator, item_id=assignment.item_id,
                                       payload={"label": "사회"})
        # The scenario's annotator sees their own flags; managers see all.
        services.flag_create(item=items[i], user=sc.users["annotator"], kind="other", note=f"확인 {i}")
        services.flag_resolve(flag=project.items.get(pk=items[i].pk).flags.latest("id"), resolution="kept",
                              by=sc.users["manager"])
        ImportJob.objects.create(project=project, file_name=f"{tag}-{i}.jsonl", stored_path="/nonexistent",
                                 format="jsonl", created_by=sc.users["manager"])
    _grow_releases(sc, n, tag)


def _grow_releases(sc: Scenario, n: int, tag: str) -> None:
    """Finished release rows (building real ones is the release tests' business; lists only read rows)."""
    from exports.models import Release, ReleaseStatus

    Release.objects.bulk_create([Release(project=sc.project, version=f"0.{i}.0-{tag}", status=ReleaseStatus.PASSED,
                                         formats=["jsonl"], created_by=sc.users["manager"]) for i in range(n)])


def _count(request: Callable[[], object]) -> int:
    request()  # warm: caches, lazily computed reports
    with CaptureQueriesContext(connection) as queries:
        response = request()
    assert response.status_code < 400, f"{response.status_code}: {getattr(response, 'data', '')}"
    return len(queries)


@pytest.fixture
def scenario() -> Scenario:
    return prepared_scenario()


def _reader(case: Case) -> str:
    return next(role for role in READERS if case.status_for(role) < 300)


def _api_counts(sc: Scenario) -> dict[str, int]:
    counts = {}
    for case in GET_CASES:
        role = _reader(case)
        url = case.url(sc)
        counts[f"{case.route} ({role})"] = _count(lambda url=url, role=role: api_client(sc.users[role]).get(url))
    return counts


def _page_counts(sc: Scenario) -> dict[str, int]:
    from django.test import Client

    counts = {}
    for name in ["annotation:home", *PROJECT_PAGES]:
        role = PAGE_READER.get(name, "manager")
        client = Client()
        client.force_login(sc.users[role])
        url = reverse(name) if name == "annotation:home" else reverse(name, kwargs={"project_id": sc.project.id})
        counts[f"{name} ({role})"] = _count(lambda url=url, client=client: client.get(url))
    return counts


def _assert_flat(small: dict[str, int], large: dict[str, int]) -> None:
    grown = {route: (small[route], large[route]) for route in small if large[route] > small[route] + SLACK}
    assert not grown, f"query count grows with rows (3 rows → 30 rows): {grown}"


@pytest.mark.django_db
def test_api_get_routes_do_not_grow_with_rows(scenario: Scenario) -> None:
    grow(scenario, 3, "a")
    small = _api_counts(scenario)
    grow(scenario, 27, "b")
    _assert_flat(small, _api_counts(scenario))


@pytest.mark.django_db
def test_pages_do_not_grow_with_rows(scenario: Scenario) -> None:
    grow(scenario, 3, "a")
    small = _page_counts(scenario)
    grow(scenario, 27, "b")
    _assert_flat(small, _page_counts(scenario))


#: The take, in the transaction of the request (its savepoint in a test): queue state (a live lease to resume
#: with its item, stale leases), candidate slot locked, the counter recounted and counting the lease (one
#: UPDATE), the assignment (on PostgreSQL in the counter's statement).
def take_queries(postgres: bool) -> list[str]:
    return ["queue state", "candidate", *(["counter and assignment"] if postgres else ["counter", "assignment"])]


#: ``GET next/``: the token with the project and the caller's role and guideline standing (one query,
#: api/authentication.py), then the annotator's queue lock
#: (PostgreSQL only) and the take.
def next_queries(postgres: bool) -> list[str]:
    return ["token and project", "savepoint", *(["queue lock"] if postgres else []), *take_queries(postgres),
            "release"]


#: ``POST annotations/``, which answers with the next assignment: token and project, then in one transaction the
#: assignment (locked, with its item, and the queue lock on PostgreSQL), the previous annotation, the
#: annotation, the audit event, the assignment's status, and the take. On PostgreSQL the three writes and the
#: take's queue state are one statement (tests/annotation/test_submit_statements.py). The guideline version the
#: response names was read with the project.
def submit_queries(postgres: bool) -> list[str]:
    writes = ["writes and queue state"] if postgres else ["annotation", "audit", "status", "queue state"]
    return ["token and project", "savepoint", "assignment", "previous", *writes, *take_queries(postgres)[1:],
            "release"]


@pytest.mark.django_db
def test_annotation_loop_query_counts(api, make_project, annotator_in) -> None:
    project = make_project("tc", k=3)
    for i in range(5):
        services.item_create(project=project, payload={"title": f"뉴스 제목 {i}"}, external_id=f"q-{i}")
    client = api(annotator_in(project))
    next_url = reverse("api:next-item", args=[project.pk])
    submit_url = reverse("api:annotation-list", args=[project.pk])
    postgres = connection.vendor == "postgresql"

    def submit(assignment: dict) -> tuple[dict, list[str]]:
        with CaptureQueriesContext(connection) as queries:
            submitted = client.post(submit_url, {"item": assignment["item"]["id"], "payload": {"label": "사회"}},
                                    format="json")
        assert submitted.status_code == 201, submitted.content
        assert submitted.json()["guideline_version"] == project.guidelines.get(is_current=True).version
        return submitted.json()["next"], [q["sql"] for q in queries]

    assignment = client.get(next_url).json()  # the project's first take creates its queue slots
    with CaptureQueriesContext(connection) as queries:
        assert client.get(next_url).json() == assignment  # a live lease is resumed
    assert len(queries) == len(["token and project", "savepoint", *(["queue lock"] if postgres else []), "queue state",
                                "release"]), [q["sql"] for q in queries]
    assignment, submit_sql = submit(assignment)
    assert len(submit_sql) == len(submit_queries(postgres)), submit_sql
    # A lease that ran out costs the take its expiry (after the submission committed); none costs nothing.
    other = annotator_in(project)
    services.assignment_next(project=project, user=other)
    Assignment.objects.filter(annotator=other).update(lease_expires_at="2000-01-01T00:00:00Z")
    assignment, submit_sql = submit(assignment)
    assert len(submit_sql) > len(submit_queries(postgres))
    assert Assignment.objects.get(annotator=other).status == "expired"
    skip_url = f"/api/projects/{project.pk}/assignments/{assignment['assignment']}/skip/"
    assert client.post(skip_url, {}, format="json").status_code == 200
    with CaptureQueriesContext(connection) as queries:  # no lease to resume: a take
        assert client.get(next_url).json()["item"]["id"] != assignment["item"]["id"]
    assert len(queries) == len(next_queries(postgres)), [q["sql"] for q in queries]


@pytest.mark.django_db
def test_item_pages_do_not_grow_with_the_items_annotations(make_project, annotator_in) -> None:
    """The review pages of one item (comparison, adjudication) with 3 and with 30 annotations and flags on it."""
    from django.test import Client

    project = make_project("tc", k=30)
    item = services.item_create(project=project, payload={"title": "한 기사 제목"}, external_id="one")
    client = Client()
    client.force_login(project.created_by)
    urls = [reverse(f"annotation:{name}", kwargs={"project_id": project.pk, "item_id": item.pk})
            for name in ("review-item", "review-adjudicate")]

    def annotate(n: int) -> dict[str, int]:
        for _ in range(n):
            annotator = annotator_in(project)
            assert services.assignment_next(project=project, user=annotator).item_id == item.pk
            services.annotation_submit(project=project, user=annotator, item_id=item.pk, payload={"label": "사회"})
            flag = services.flag_create(item=item, user=annotator, kind="other", note="확인")
            services.flag_resolve(flag=flag, resolution="kept", by=project.created_by)
        counts = {url: _count(lambda url=url: client.get(url)) for url in urls}
        # Every annotation is shown (by its label's English name on this English page).
        assert client.get(urls[0]).content.decode().count("society") >= item.annotations.count()
        return counts

    small = annotate(3)
    _assert_flat(small, annotate(27))


@pytest.mark.django_db
def test_release_page_does_not_grow_with_its_files(make_project, tmp_path) -> None:
    """A release's page with the files of one format and of all four (and their baseline check)."""
    from django.test import Client

    from exports import services as release_services
    from tests.builders import load_records, sample_records

    project = make_project("tc")
    load_records(project, sample_records("tc", 60))
    client = Client()
    client.force_login(project.created_by)
    counts, files = {}, []
    for version, formats in (("1.0.0", "jsonl"), ("1.1.0", "klue,jsonl,csv,parquet")):
        release = release_services.release_build(project, version=version, seed=1, formats=formats,
                                                 out=tmp_path / version, agreement=False)
        assert release.status in ("unchecked", "inconclusive"), release.error  # JSONL only; 6 dev records
        files.append(release.files.count())
        url = reverse("exports:release-detail", kwargs={"project_id": project.pk, "release_id": release.pk})
        counts[formats] = {"release-detail": _count(lambda url=url: client.get(url))}
    assert files[1] > 2 * files[0], files
    _assert_flat(counts["jsonl"], counts["klue,jsonl,csv,parquet"])
