"""Hostile text in items, source names, file names, guideline markdown and flag notes never becomes live HTML.

The items come in through the ``import_items`` command, the guideline through the guideline service and
is published; then a manager, a maintainer and an annotator open every page they may see (every route
of the page permission table) and each answer is parsed: no script carrying the payload, no event-handler
attribute, no ``javascript:`` URL anywhere.
"""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client

from annotation import services
from annotation.models import Item, Role
from tests.security.hostile import GUIDELINE, HOSTILE, IMG, SCRIPT, live_problems
from tests.site.matrix import ROLES, Scenario
from tests.site.pages import PAGES, add_release


def test_the_checker_finds_live_html() -> None:
    found = live_problems(HOSTILE)
    assert any("alert(1)" in p for p in found)
    assert any("onerror" in p for p in found) and any("onclick" in p for p in found)
    assert any("javascript:" in p for p in found) and any("onload" in p for p in found)
    assert live_problems("<p>&lt;script&gt;alert(1)&lt;/script&gt; onerror=x javascript:alert(1)</p>") == []


@pytest.fixture
def hostile_project(make_user, make_project, tmp_path: Path) -> tuple[Scenario, dict[str, int]]:
    manager = make_user("x-manager", can_create=True)
    project = make_project("tc", slug="xss", manager=manager, k=2)
    records = [{"guid": f"xss-{i}", "title": f"{HOSTILE} 기사 {i}", "label": "사회",
                "url": "javascript:alert(11)", "date": "2026.01.01. 오전 9:00"} for i in range(4)]
    path = tmp_path / f"{IMG}<script>alert(12)<\\script>.jsonl"  # no "/" in a file name
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    out = StringIO()
    call_command("import_items", project.slug, str(path), "--format", "jsonl", "--pii", "off",
                 "--source", f"src {IMG}", "--license", "CC-BY-SA-4.0", "--json", stdout=out)
    result = json.loads(out.getvalue())
    assert result["errors"] == [] and result["created"]["items"] == 4, result
    assert all(SCRIPT in item.payload["title"] for item in Item.objects.filter(project=project))

    guideline = services.guideline_create(project=project, instructions=GUIDELINE, ethics=GUIDELINE, pii=GUIDELINE,
                                          created_by=manager, change_note=HOSTILE)
    services.guideline_publish(guideline=guideline)
    services.guideline_create(project=project, instructions=GUIDELINE, ethics="e", pii="p", created_by=manager,
                              change_note=HOSTILE)  # an unpublished draft shown on the guideline page too

    users = {"anonymous": None, "outsider": make_user("x-outsider"), "manager": manager,
             "annotator": make_user("x-annotator"), "maintainer": make_user("x-maintainer"),
             "superuser": make_user("x-root", is_superuser=True, is_staff=True)}
    services.membership_set(project=project, user=users["annotator"], role=Role.ANNOTATOR)
    services.membership_set(project=project, user=users["maintainer"], role=Role.MAINTAINER)
    services.guideline_acknowledge(user=users["annotator"], project=project)
    first = services.assignment_next(project=project, user=users["annotator"])
    services.annotation_submit(project=project, user=users["annotator"], item_id=first.item_id,
                               payload={"label": "사회"})
    second = services.assignment_next(project=project, user=users["annotator"])
    flag = services.flag_create(item=second.item, user=users["annotator"], kind="other", note=HOSTILE)
    services.assignment_next(project=project, user=users["annotator"])  # leaves an item open in the workspace
    # The page table's urls need the ids of the matrix scenario; this project has the same kinds of rows.
    sc = Scenario(project, users, first.item, first, first.item.annotations.first(), flag, guideline)
    add_release(sc, tmp_path / "release")
    return sc, {"flag": flag.id}


@pytest.mark.django_db
@pytest.mark.parametrize("role", [r for r in ROLES if r in {"manager", "maintainer", "annotator", "superuser"}])
def test_no_hostile_markup_survives_on_any_page(hostile_project, role: str) -> None:
    sc, _ = hostile_project
    client = Client()
    client.force_login(sc.users[role])
    seen = 0
    for page in PAGES:
        url = page.url(sc)
        response = client.get(url)
        if response.status_code != 200 or not response["Content-Type"].startswith("text/html"):
            continue
        seen += 1
        problems = live_problems(response.content.decode())
        assert not problems, f"{role} GET {url}: {problems}"
    # The guideline preview renders posted markdown: the same sanitiser must apply.
    response = client.post(f"/projects/{sc.project.id}/guideline/preview/",
                           {"instructions": GUIDELINE, "ethics": GUIDELINE, "pii": GUIDELINE})
    if response.status_code == 200:
        assert not live_problems(response.content.decode()), "guideline preview"
    assert seen >= {"annotator": 4}.get(role, 12), f"{role} saw only {seen} pages"


@pytest.mark.django_db
def test_hostile_text_is_shown_escaped_not_dropped(hostile_project) -> None:
    """Escaping keeps the annotator's text visible (as text), so nothing is silently lost."""
    sc, _ = hostile_project
    client = Client()
    client.force_login(sc.users["manager"])
    body = client.get(f"/projects/{sc.project.id}/items/").content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body


@pytest.mark.django_db
def test_admin_pages_escape_hostile_text(hostile_project) -> None:
    sc, ids = hostile_project
    client = Client()
    client.force_login(sc.users["superuser"])
    for url in ("/admin/annotation/item/", f"/admin/annotation/item/{sc.item.id}/change/", "/admin/annotation/flag/",
                f"/admin/annotation/flag/{ids['flag']}/change/", "/admin/annotation/guideline/",
                f"/admin/annotation/guideline/{sc.draft.id}/change/"):
        response = client.get(url)
        assert response.status_code == 200, url
        assert not live_problems(response.content.decode()), url
