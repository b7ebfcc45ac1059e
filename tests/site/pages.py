"""The page table: every browser page route (not /api/, not /admin/) with the status each role must get for
a GET and for a POST, and ``add_release`` for the rows that need a release and a release file.

``test_pages_permissions.py`` walks it and fails when a page route has no row (so new pages must join the
table here); ``tests/security/test_injection.py`` visits every page of it with hostile text.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from django.urls import URLPattern, URLResolver, get_resolver

from tests.site.matrix import Scenario

#: Statuses in the order of ``ROLES``: anonymous, outsider, annotator, manager, maintainer, superuser.
Row = tuple[int, int, int, int, int, int]
LOGIN = (302,)  # anonymous: redirected to the login page


@dataclass(frozen=True)
class Page:
    route: str
    url: Callable[[Scenario], str]
    get: Row
    post: Row


def project_url(sc: Scenario, rest: str = "") -> str:
    return f"/projects/{sc.project.id}/{rest}"


def release_url(sc: Scenario, rest: str = "") -> str:
    return project_url(sc, f"releases/{sc.extra['release']}/{rest}")


def item_url(sc: Scenario, rest: str = "") -> str:
    return project_url(sc, f"agreement/items/{sc.item.id}/{rest}")


PR = "projects/<int:project_id>/"
PAGES = [
    Page("", lambda sc: "/", get=(302, 200, 200, 200, 200, 200), post=(302, 200, 200, 200, 200, 200)),
    Page("accounts/login/", lambda sc: "/accounts/login/", get=(200,) * 6, post=(200,) * 6),
    Page("healthz", lambda sc: "/healthz", get=(200,) * 6, post=(405,) * 6),
    Page("accounts/logout/", lambda sc: "/accounts/logout/", get=(405,) * 6, post=(302,) * 6),
    # Single sign-on is off in the page table's settings: neither route answers (tests/sso/ turns it on).
    Page("accounts/sso/start/", lambda sc: "/accounts/sso/start/", get=(404,) * 6, post=(405,) * 6),
    Page("accounts/sso/callback/", lambda sc: "/accounts/sso/callback/", get=(404,) * 6, post=(405,) * 6),
    Page("i18n/setlang/", lambda sc: "/i18n/setlang/", get=(302,) * 6, post=(302,) * 6),
    Page("favicon.ico", lambda sc: "/favicon.ico", get=(301,) * 6, post=(405,) * 6),
    Page("preferences/shortcuts/", lambda sc: "/preferences/shortcuts/", get=(302, 405, 405, 405, 405, 405),
         post=(302, 400, 400, 400, 400, 400)),
    Page("projects/new/", lambda sc: "/projects/new/", get=(302, 403, 403, 200, 403, 200),
         post=(302, 403, 403, 200, 403, 200)),
    # Project pages.
    Page(PR, project_url, get=(302, 404, 200, 200, 200, 200), post=(302, 404, 200, 200, 200, 200)),
    Page(PR + "guideline/", lambda sc: project_url(sc, "guideline/"), get=(302, 404, 403, 200, 200, 200),
         post=(302, 404, 403, 200, 403, 200)),
    Page(PR + "guideline/preview/", lambda sc: project_url(sc, "guideline/preview/"),
         get=(302, 405, 405, 405, 405, 405), post=(302, 404, 403, 200, 403, 200)),
    Page(PR + "guideline/read/", lambda sc: project_url(sc, "guideline/read/"), get=(302, 404, 200, 200, 200, 200),
         post=(302, 404, 302, 302, 302, 302)),
    Page(PR + "members/", lambda sc: project_url(sc, "members/"), get=(302, 404, 403, 200, 200, 200),
         post=(302, 404, 403, 302, 403, 302)),
    Page(PR + "items/", lambda sc: project_url(sc, "items/"), get=(302, 404, 403, 200, 200, 200),
         post=(302, 404, 403, 200, 200, 200)),
    Page(PR + "annotate/", lambda sc: project_url(sc, "annotate/"), get=(302, 404, 200, 403, 403, 403),
         post=(302, 404, 200, 403, 403, 403)),
    Page(PR + "mine/", lambda sc: project_url(sc, "mine/"), get=(302, 404, 200, 403, 403, 403),
         post=(302, 405, 405, 405, 405, 405)),
    # The annotator's own annotation (a POST without a payload is refused with the reason).
    Page(PR + "mine/<int:annotation_id>/", lambda sc: project_url(sc, f"mine/{sc.annotation.id}/"),
         get=(302, 404, 200, 403, 403, 403), post=(302, 404, 400, 403, 403, 403)),
    Page(PR + "audit/", lambda sc: project_url(sc, "audit/"), get=(302, 404, 403, 200, 403, 200),
         post=(302, 405, 405, 405, 405, 405)),
    Page(PR + "settings/", lambda sc: project_url(sc, "settings/"), get=(302, 404, 403, 200, 403, 200),
         post=(302, 404, 403, 200, 403, 200)),
    # Assigning items: managers only; a POST choosing no items shows the settings page with the error.
    Page(PR + "settings/assign/", lambda sc: project_url(sc, "settings/assign/"), get=(302, 405, 405, 405, 405, 405),
         post=(302, 404, 403, 200, 403, 200)),
    # Webhooks: managers only; a POST without an action shows the page again.
    Page(PR + "webhooks/", lambda sc: project_url(sc, "webhooks/"), get=(302, 404, 403, 200, 403, 200),
         post=(302, 404, 403, 200, 403, 200)),
    # Import and screening (datasets_build).
    Page(PR + "import/", lambda sc: project_url(sc, "import/"), get=(302, 404, 403, 200, 403, 200),
         post=(302, 404, 403, 200, 403, 200)),
    Page(PR + "review/", lambda sc: project_url(sc, "review/"), get=(302, 404, 403, 200, 403, 200),
         post=(302, 404, 403, 404, 403, 404)),
    Page(PR + "sources/", lambda sc: project_url(sc, "sources/"), get=(302, 404, 403, 200, 200, 200),
         post=(302, 404, 403, 200, 200, 200)),
    # Agreement and gold: never for annotators.
    Page(PR + "agreement/", lambda sc: project_url(sc, "agreement/"), get=(302, 404, 403, 200, 200, 200),
         post=(302, 404, 403, 200, 200, 200)),
    # No report is computed in the test transaction: the readers' download is "not found" until one is.
    Page(PR + "agreement/agreement.csv", lambda sc: project_url(sc, "agreement/agreement.csv"),
         get=(302, 404, 403, 404, 404, 404), post=(302, 405, 405, 405, 405, 405)),
    Page(PR + "agreement/items/", lambda sc: project_url(sc, "agreement/items/"), get=(302, 404, 403, 200, 200, 200),
         post=(302, 404, 403, 200, 200, 200)),
    Page(PR + "agreement/items/<int:item_id>/", item_url, get=(302, 404, 403, 200, 200, 200),
         post=(302, 404, 403, 200, 200, 200)),
    Page(PR + "agreement/items/<int:item_id>/adjudicate/", lambda sc: item_url(sc, "adjudicate/"),
         get=(302, 404, 403, 200, 403, 200), post=(302, 404, 403, 400, 403, 400)),
    Page(PR + "agreement/next/", lambda sc: project_url(sc, "agreement/next/"), get=(302, 404, 403, 302, 403, 302),
         post=(302, 405, 405, 405, 405, 405)),
    Page(PR + "gold/", lambda sc: project_url(sc, "gold/"), get=(302, 404, 403, 200, 200, 200),
         post=(302, 404, 403, 200, 200, 200)),
    Page(PR + "gold/compute/", lambda sc: project_url(sc, "gold/compute/"), get=(302, 405, 405, 405, 405, 405),
         post=(302, 404, 403, 302, 403, 302)),
    # The suggester: curators read it, managers change it.
    Page(PR + "suggester/", lambda sc: project_url(sc, "suggester/"), get=(302, 404, 403, 200, 200, 200),
         post=(302, 404, 403, 200, 403, 200)),
    # Releases: never for annotators; publishing is the maintainers'.
    Page(PR + "releases/", lambda sc: project_url(sc, "releases/"), get=(302, 404, 403, 200, 200, 200),
         post=(302, 404, 403, 200, 200, 200)),
    Page(PR + "releases/<int:release_id>/", release_url, get=(302, 404, 403, 200, 200, 200),
         post=(302, 404, 403, 200, 200, 200)),
    Page(PR + "releases/<int:release_id>/diff/", lambda sc: release_url(sc, "diff/"),
         get=(302, 404, 403, 200, 200, 200), post=(302, 404, 403, 200, 200, 200)),
    Page(PR + "releases/<int:release_id>/publish/", lambda sc: release_url(sc, "publish/"),
         get=(302, 404, 403, 403, 200, 200), post=(302, 404, 403, 403, 200, 200)),
    Page(PR + "releases/<int:release_id>/verify/", lambda sc: release_url(sc, "verify/"),
         get=(302, 405, 405, 405, 405, 405), post=(302, 404, 403, 302, 302, 302)),
    Page(PR + "releases/<int:release_id>/archive/", lambda sc: release_url(sc, "archive/"),
         get=(302, 404, 403, 200, 200, 200), post=(302, 404, 403, 200, 200, 200)),
    Page(PR + "releases/<int:release_id>/files/<int:file_id>/",
         lambda sc: release_url(sc, f"files/{sc.extra['file']}/"),
         get=(302, 404, 403, 200, 200, 200), post=(302, 404, 403, 200, 200, 200)),
    # Contamination: a check asked for from the release page (POST only), the references, an item's history.
    Page(PR + "releases/<int:release_id>/contamination/", lambda sc: release_url(sc, "contamination/"),
         get=(302, 405, 405, 405, 405, 405), post=(302, 404, 403, 302, 302, 302)),
    Page(PR + "releases/references/", lambda sc: project_url(sc, "releases/references/"),
         get=(302, 404, 403, 200, 200, 200), post=(302, 404, 403, 400, 400, 400)),
    Page(PR + "items/<int:item_id>/provenance/", lambda sc: project_url(sc, f"items/{sc.item.id}/provenance/"),
         get=(302, 404, 403, 200, 200, 200), post=(302, 405, 405, 405, 405, 405)),
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
