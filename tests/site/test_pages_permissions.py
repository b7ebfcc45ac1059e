"""Walk every browser page (not /api/, not /admin/) × role × GET/POST and assert the status.

Each page route has one row in ``PAGES``; the test fails when a page route has none, so new pages must
join the table. Statuses follow ``annotation.views.project_for``: anonymous visitors are sent to the
login page, people outside the project get 404 (the project's existence is not revealed), members in
the wrong role 403. A POST with an empty form shows what a forged or incomplete submission gets.
Further tests check that ids guessed from another project never resolve and that an annotator's pages
never show another annotator's work.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from annotation import services
from annotation.models import Role
from tests.site.matrix import ROLES, Scenario, build_scenario

#: Statuses in the order of ``ROLES``: anonymous, outsider, annotator, manager, maintainer, superuser.
Row = tuple[int, int, int, int, int, int]
LOGIN = (302,)  # anonymous: redirected to the login page


@dataclass(frozen=True)
class Page:
    route: str
    url: Callable[[Scenario], str]
    get: Row
    post: Row


def _p(sc: Scenario, rest: str = "") -> str:
    return f"/projects/{sc.project.id}/{rest}"


def _rel(sc: Scenario, rest: str = "") -> str:
    return _p(sc, f"releases/{sc.extra['release']}/{rest}")


def _item(sc: Scenario, rest: str = "") -> str:
    return _p(sc, f"agreement/items/{sc.item.id}/{rest}")


PR = "projects/<int:project_id>/"
PAGES = [
    Page("", lambda sc: "/", get=(302, 200, 200, 200, 200, 200), post=(302, 200, 200, 200, 200, 200)),
    Page("accounts/login/", lambda sc: "/accounts/login/", get=(200,) * 6, post=(200,) * 6),
    Page("healthz", lambda sc: "/healthz", get=(200,) * 6, post=(405,) * 6),
    Page("accounts/logout/", lambda sc: "/accounts/logout/", get=(405,) * 6, post=(302,) * 6),
    Page("i18n/setlang/", lambda sc: "/i18n/setlang/", get=(302,) * 6, post=(302,) * 6),
    Page("favicon.ico", lambda sc: "/favicon.ico", get=(301,) * 6, post=(405,) * 6),
    Page("preferences/shortcuts/", lambda sc: "/preferences/shortcuts/", get=(302, 405, 405, 405, 405, 405),
         post=(302, 400, 400, 400, 400, 400)),
    Page("projects/new/", lambda sc: "/projects/new/", get=(302, 403, 403, 200, 403, 200),
         post=(302, 403, 403, 200, 403, 200)),
    # Project pages.
    Page(PR, _p, get=(302, 404, 200, 200, 200, 200), post=(302, 404, 200, 200, 200, 200)),
    Page(PR + "guideline/", lambda sc: _p(sc, "guideline/"), get=(302, 404, 403, 200, 200, 200),
         post=(302, 404, 403, 200, 403, 200)),
    Page(PR + "guideline/preview/", lambda sc: _p(sc, "guideline/preview/"), get=(302, 405, 405, 405, 405, 405),
         post=(302, 404, 403, 200, 403, 200)),
    Page(PR + "guideline/read/", lambda sc: _p(sc, "guideline/read/"), get=(302, 404, 200, 200, 200, 200),
         post=(302, 404, 302, 302, 302, 302)),
    Page(PR + "members/", lambda sc: _p(sc, "members/"), get=(302, 404, 403, 200, 200, 200),
         post=(302, 404, 403, 302, 403, 302)),
    Page(PR + "items/", lambda sc: _p(sc, "items/"), get=(302, 404, 403, 200, 200, 200),
         post=(302, 404, 403, 200, 200, 200)),
    Page(PR + "annotate/", lambda sc: _p(sc, "annotate/"), get=(302, 404, 200, 403, 403, 403),
         post=(302, 404, 200, 403, 403, 403)),
    Page(PR + "audit/", lambda sc: _p(sc, "audit/"), get=(302, 404, 403, 200, 403, 200),
         post=(302, 405, 405, 405, 405, 405)),
    # Import and screening (datasets_build).
    Page(PR + "import/", lambda sc: _p(sc, "import/"), get=(302, 404, 403, 200, 403, 200),
         post=(302, 404, 403, 200, 403, 200)),
    Page(PR + "review/", lambda sc: _p(sc, "review/"), get=(302, 404, 403, 200, 403, 200),
         post=(302, 404, 403, 404, 403, 404)),
    Page(PR + "sources/", lambda sc: _p(sc, "sources/"), get=(302, 404, 403, 200, 200, 200),
         post=(302, 404, 403, 200, 200, 200)),
    # Agreement and gold: never for annotators.
    Page(PR + "agreement/", lambda sc: _p(sc, "agreement/"), get=(302, 404, 403, 200, 200, 200),
         post=(302, 404, 403, 200, 200, 200)),
    Page(PR + "agreement/items/", lambda sc: _p(sc, "agreement/items/"), get=(302, 404, 403, 200, 200, 200),
         post=(302, 404, 403, 200, 200, 200)),
    Page(PR + "agreement/items/<int:item_id>/", _item, get=(302, 404, 403, 200, 200, 200),
         post=(302, 404, 403, 200, 200, 200)),
    Page(PR + "agreement/items/<int:item_id>/adjudicate/", lambda sc: _item(sc, "adjudicate/"),
         get=(302, 404, 403, 200, 403, 200), post=(302, 404, 403, 400, 403, 400)),
    Page(PR + "gold/", lambda sc: _p(sc, "gold/"), get=(302, 404, 403, 200, 200, 200),
         post=(302, 404, 403, 200, 200, 200)),
    Page(PR + "gold/compute/", lambda sc: _p(sc, "gold/compute/"), get=(302, 405, 405, 405, 405, 405),
         post=(302, 404, 403, 302, 403, 302)),
    # The suggester: curators read it, managers change it.
    Page(PR + "suggester/", lambda sc: _p(sc, "suggester/"), get=(302, 404, 403, 200, 200, 200),
         post=(302, 404, 403, 200, 403, 200)),
    # Releases: never for annotators; publishing is the maintainers'.
    Page(PR + "releases/", lambda sc: _p(sc, "releases/"), get=(302, 404, 403, 200, 200, 200),
         post=(302, 404, 403, 200, 200, 200)),
    Page(PR + "releases/<int:release_id>/", _rel, get=(302, 404, 403, 200, 200, 200),
         post=(302, 404, 403, 200, 200, 200)),
    Page(PR + "releases/<int:release_id>/publish/", lambda sc: _rel(sc, "publish/"),
         get=(302, 405, 405, 405, 405, 405), post=(302, 404, 403, 403, 302, 302)),
    Page(PR + "releases/<int:release_id>/verify/", lambda sc: _rel(sc, "verify/"),
         get=(302, 405, 405, 405, 405, 405), post=(302, 404, 403, 302, 302, 302)),
    Page(PR + "releases/<int:release_id>/archive/", lambda sc: _rel(sc, "archive/"),
         get=(302, 404, 403, 200, 200, 200), post=(302, 404, 403, 200, 200, 200)),
    Page(PR + "releases/<int:release_id>/files/<int:file_id>/", lambda sc: _rel(sc, f"files/{sc.extra['file']}/"),
         get=(302, 404, 403, 200, 200, 200), post=(302, 404, 403, 200, 200, 200)),
]


def page_routes() -> set[str]:
    """Every route that is neither API nor admin."""
    found: set[str] = set()

    def walk(patterns, prefix: str) -> None:
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, route)
            elif isinstance(pattern, URLPattern) and not route.startswith(("api/", "admin/")):
                found.add(route)

    walk(get_resolver().url_patterns, "")
    return found


def test_every_page_route_is_in_the_table() -> None:
    missing = sorted(page_routes() - {page.route for page in PAGES})
    assert not missing, f"page routes without a row in tests/site/test_pages_permissions.py: {missing}"
    stale = sorted({page.route for page in PAGES} - page_routes())
    assert not stale, f"rows for routes that no longer exist: {stale}"


def add_release(sc: Scenario, folder: Path) -> None:
    """A finished release with one file on disk (built by hand: the matrix is about access, not building)."""
    from exports.models import Release, ReleaseFile

    (folder / "jsonl").mkdir(parents=True, exist_ok=True)
    data = b'{"guid": "m-1"}\n'
    (folder / "jsonl" / "train.jsonl").write_bytes(data)
    release = Release.objects.create(project=sc.project, version="1.0.0", status="passed", out_dir=str(folder),
                                     created_by=sc.users["manager"])
    file = ReleaseFile.objects.create(release=release, path="jsonl/train.jsonl", kind="jsonl", split="train",
                                      size=len(data), sha256=hashlib.sha256(data).hexdigest())
    sc.extra.update(release=release.id, file=file.id)


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
    response = client.get(_p(sc, "agreement/"))
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
    for url in (_p(sc), _p(sc, "annotate/"), _p(sc, "guideline/read/"), "/"):
        response = client.get(url)
        assert response.status_code == 200, url
        body = response.content.decode()
        assert other.username not in body and note not in body, url
    # Every page that lists annotations or files refuses annotators, whatever id they try.
    for url in (_item(sc), _p(sc, f"agreement/items/{assignment.item_id}/"), _p(sc, "agreement/items/"),
                _p(sc, "gold/"), _p(sc, "releases/")):
        assert client.get(url).status_code == 403, url
