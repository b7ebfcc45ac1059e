"""Walk every browser page (not /api/, not /admin/) × role × GET/POST and assert the status.

Each page route has one row in ``PAGES`` (``tests/site/pages.py``); the test fails when a page route has
none, so new pages must join the table. Statuses follow ``annotation.views.project_for``: anonymous
visitors are sent to the login page, people outside the project get 404 (the project's existence is not
revealed), members in the wrong role 403. A POST with an empty form shows what a forged or incomplete submission gets.
Further tests check that ids guessed from another project never resolve and that an annotator's pages
never show another annotator's work.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client

from annotation import services
from annotation.models import Role
from tests.site.matrix import ROLES, Scenario, build_scenario
from tests.site.pages import PAGES, Page, add_release, item_url, page_routes, project_url


def test_every_page_route_is_in_the_table() -> None:
    missing = sorted(page_routes() - {page.route for page in PAGES})
    assert not missing, f"page routes without a row in tests/site/pages.py: {missing}"
    stale = sorted({page.route for page in PAGES} - page_routes())
    assert not stale, f"rows for routes that no longer exist: {stale}"


def client_for(sc: Scenario, role: str) -> Client:
    client = Client()
    if sc.users[role] is not None:
        client.force_login(sc.users[role])
    return client


@pytest.mark.django_db
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.route or "/")
def test_page_permission_matrix(page: Page, tmp_path: Path) -> None:
    sc = build_scenario()
    add_release(sc, tmp_path)
    url = page.url(sc)
    wrong = []
    for method in ("get", "post"):
        for role, expected in zip(ROLES, getattr(page, method), strict=True):
            status = getattr(client_for(sc, role), method)(url, {}).status_code
            if status != expected:
                wrong.append(f"{role} {method.upper()} {url}: {status}, expected {expected}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.django_db
def test_anonymous_is_sent_to_the_login_page(client) -> None:
    sc = build_scenario()
    response = client.get(project_url(sc, "agreement/"))
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


@pytest.mark.django_db
def test_ids_from_another_project_never_resolve(tmp_path: Path) -> None:
    """A manager of one project who guesses ids from another gets 404 everywhere, never the other's data."""
    sc = build_scenario()
    add_release(sc, tmp_path / "theirs")
    manager = sc.users["manager"]
    mine = services.project_create(name="Mine", slug="mine", task_type="tc", created_by=manager,
                                   annotators_per_item=2)
    services.item_create(project=mine, payload={"title": "내 기사"}, external_id="mine-1")
    client = Client()
    client.force_login(manager)
    other_item, other_release, other_file = sc.item.id, sc.extra["release"], sc.extra["file"]
    base = f"/projects/{mine.id}/"
    for url in (f"{base}agreement/items/{other_item}/", f"{base}agreement/items/{other_item}/adjudicate/",
                f"{base}releases/{other_release}/", f"{base}releases/{other_release}/files/{other_file}/",
                f"{base}releases/{other_release}/archive/"):
        assert client.get(url).status_code == 404, url
    assert client.post(f"{base}releases/{other_release}/verify/").status_code == 404
    # Managers may not publish at all, so that one stops at the role check.
    assert client.post(f"{base}releases/{other_release}/publish/").status_code == 403
    # Someone with no role in the other project cannot reach it at all.
    sc.project.memberships.filter(user=manager).delete()
    sc.project.created_by = sc.users["superuser"]
    sc.project.save()
    assert client.get(f"/projects/{sc.project.id}/releases/{other_release}/files/{other_file}/").status_code == 404


@pytest.mark.django_db
def test_annotator_pages_never_show_another_annotators_work() -> None:
    sc = build_scenario()
    other = services.membership_set(project=sc.project, user=type(sc.users["annotator"]).objects.create_user(
        "m-annotator-2", password="pw-goldset-123"), role=Role.ANNOTATOR).user
    services.guideline_acknowledge(user=other, project=sc.project)
    assignment = services.assignment_next(project=sc.project, user=other)
    note = "두번째-작업자만-아는-메모"
    services.annotation_submit(project=sc.project, user=other, item_id=assignment.item_id, payload={"label": "정치"})
    services.flag_create(item=assignment.item, user=other, kind="other", note=note)
    client = Client()
    client.force_login(sc.users["annotator"])
    for url in (project_url(sc), project_url(sc, "annotate/"), project_url(sc, "guideline/read/"), "/"):
        response = client.get(url)
        assert response.status_code == 200, url
        body = response.content.decode()
        assert other.username not in body and note not in body, url
    # Every page that lists annotations or files refuses annotators, whatever id they try.
    for url in (item_url(sc), project_url(sc, f"agreement/items/{assignment.item_id}/"),
                project_url(sc, "agreement/items/"), project_url(sc, "gold/"), project_url(sc, "releases/")):
        assert client.get(url).status_code == 403, url
