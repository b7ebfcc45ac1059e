"""Manager pages, Markdown rendering and the admin: who sees what, and what each page writes."""

from __future__ import annotations

from collections.abc import Callable
from html.parser import HTMLParser
from typing import Any

import pytest
from django.contrib import admin
from django.contrib.auth.models import Permission
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation import selectors, services
from annotation.models import AuditEvent, Guideline, Item, Membership, Project, Role, ScreeningStatus, Source, User
from annotation.rendering import render_markdown

PASSWORD = "pw-goldset-123"
XSS = "<script>alert(1)</script>\n\n[x](javascript:alert(1))\n\n<img src=x onerror=alert(1)>\n\n**bold**"


# -- fixtures (local on purpose: conftest belongs to the lead) -------------------------------------


@pytest.fixture
def new_user(django_user_model: type[User]) -> Callable[..., User]:
    def make(username: str, *, can_create: bool = False, **extra: Any) -> User:
        user = django_user_model.objects.create_user(username, password=PASSWORD, **extra)
        if can_create:
            user.user_permissions.add(Permission.objects.get(codename="add_project"))
        return user

    return make


@pytest.fixture
def people(new_user: Callable[..., User]) -> dict[str, User | None]:
    return {
        "anonymous": None,
        "outsider": new_user("outsider"),
        "annotator": new_user("annotator"),
        "manager": new_user("manager", can_create=True),
        "maintainer": new_user("maintainer"),
        "superuser": new_user("root", is_superuser=True, is_staff=True),
    }


@pytest.fixture
def project(people: dict[str, User | None]) -> Project:
    project = services.project_create(name="YNAT pilot", slug="ynat-pilot", task_type="tc",
                                      created_by=people["manager"])
    services.membership_set(project=project, user=people["annotator"], role=Role.ANNOTATOR)
    services.membership_set(project=project, user=people["maintainer"], role=Role.MAINTAINER)
    return project


def client_as(user: User | None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def make_items(project: Project, n: int, start: int = 0) -> list[Item]:
    return [services.item_create(project=project, payload={"title": f"헤드라인 {i}번 기사"}, external_id=f"ynat-{i}")
            for i in range(start, start + n)]


def annotate_all(project: Project, user: User, label: str = "사회") -> int:
    """Let ``user`` annotate every item they are offered; returns how many."""
    services.guideline_acknowledge(user=user, project=project)
    done = 0
    while (assignment := services.assignment_next(project=project, user=user)) is not None:
        services.annotation_submit(project=project, user=user, item_id=assignment.item_id, payload={"label": label})
        done += 1
    return done


class Tags(HTMLParser):
    """Every start tag with its attributes, to check rendered HTML structurally."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def assert_no_script_injection(html: str) -> None:
    parser = Tags()
    parser.feed(html)
    for tag, attrs in parser.tags:
        assert tag != "img", attrs
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        for name in ("href", "src"):
            assert not (attrs.get(name) or "").strip().lower().startswith("javascript:"), (tag, attrs)
        if tag == "script":
            assert attrs.get("src"), "inline <script> in a page that should have none"
    assert "<script>alert(1)</script>" not in html
    assert "<img" not in html


# -- rendering ------------------------------------------------------------------------------------


def test_render_markdown_keeps_formatting_and_drops_active_content() -> None:
    html = str(render_markdown(XSS + "\n\n[ok](https://klue-benchmark.com) [m](mailto:a@b.kr)\n\n# 제목"))
    assert "<strong>bold</strong>" in html
    assert '<a href="https://klue-benchmark.com"' in html
    assert 'href="mailto:a@b.kr"' in html
    assert "<h1>제목</h1>" in html
    assert_no_script_injection(html)


def test_render_markdown_strips_raw_html_links_with_bad_schemes() -> None:
    html = str(render_markdown('<a href="javascript:alert(1)" onclick="x()">x</a> [d](data:text/html,hi) '
                               "[v](vbscript:msgbox)"))
    assert "<a " not in html  # raw HTML is escaped text, and the bad-scheme links never become anchors
    assert_no_script_injection(html)


def test_markdown_filter() -> None:
    from django.template import Context, Template

    out = Template("{% load goldset %}{{ text|markdown }}").render(Context({"text": "*hi* <b>x</b>"}))
    assert out == "<p><em>hi</em> &lt;b&gt;x&lt;/b&gt;</p>\n"
    assert Template("{% load goldset %}{{ text|markdown }}").render(Context({"text": None})) == ""


# -- permissions ----------------------------------------------------------------------------------

PAGES = ["project-detail", "project-guideline", "project-members", "project-items"]
#: role → expected status of GET on each page above.
EXPECTED = {
    "outsider": [404, 404, 404, 404],
    "annotator": [200, 403, 403, 403],
    "maintainer": [200, 200, 200, 200],
    "manager": [200, 200, 200, 200],
    "superuser": [200, 200, 200, 200],
}


@pytest.mark.django_db
@pytest.mark.parametrize("role", sorted(EXPECTED))
def test_project_pages_by_role(role: str, people: dict[str, User | None], project: Project) -> None:
    client = client_as(people[role])
    got = [client.get(reverse(f"annotation:{name}", args=[project.pk])).status_code for name in PAGES]
    assert got == EXPECTED[role]


@pytest.mark.django_db
@pytest.mark.parametrize("name", [*PAGES, "project-guideline-preview"])
def test_anonymous_is_sent_to_login(name: str, project: Project) -> None:
    url = reverse(f"annotation:{name}", args=[project.pk])
    response = Client().post(url) if name.endswith("preview") else Client().get(url)
    assert response.status_code == 302
    assert response.url.startswith(reverse("annotation:login"))


@pytest.mark.django_db
def test_anonymous_home_and_new_redirect_to_login() -> None:
    for url in (reverse("annotation:home"), reverse("annotation:project-new")):
        response = Client().get(url)
        assert response.status_code == 302 and response.url.startswith(reverse("annotation:login"))


@pytest.mark.django_db
def test_unknown_project_is_404(people: dict[str, User | None]) -> None:
    for name in PAGES:
        assert client_as(people["superuser"]).get(reverse(f"annotation:{name}", args=[999_999])).status_code == 404


@pytest.mark.django_db
@pytest.mark.parametrize(("role", "status"), [("outsider", 404), ("annotator", 403), ("maintainer", 403),
                                              ("manager", 200), ("superuser", 200)])
def test_preview_is_for_managers(role: str, status: int, people: dict[str, User | None],
                                 project: Project) -> None:
    url = reverse("annotation:project-guideline-preview", args=[project.pk])
    assert client_as(people[role]).post(url, {"instructions": "# hi"}).status_code == status


@pytest.mark.django_db
def test_maintainers_read_but_do_not_write(people: dict[str, User | None], project: Project) -> None:
    client = client_as(people["maintainer"])
    page = client.get(reverse("annotation:project-guideline", args=[project.pk])).content.decode()
    assert "Only project managers can edit the guideline." in page
    assert "<textarea" not in page
    post = client.post(reverse("annotation:project-guideline", args=[project.pk]),
                       {"action": "publish", "instructions": "a", "ethics": "b", "pii": "c"})
    assert post.status_code == 403
    assert project.guidelines.count() == 1
    outsider = people["outsider"]
    post = client.post(reverse("annotation:project-members", args=[project.pk]),
                       {"action": "add", "username": outsider.username, "role": Role.MANAGER})
    assert post.status_code == 403
    assert not Membership.objects.filter(project=project, user=outsider).exists()


@pytest.mark.django_db
def test_annotator_sees_only_their_own_progress(people: dict[str, User | None], project: Project,
                                                new_user: Callable[..., User]) -> None:
    make_items(project, 4)
    other = new_user("other-annotator")
    services.membership_set(project=project, user=other, role=Role.ANNOTATOR)
    assert annotate_all(project, other) == 4
    response = client_as(people["annotator"]).get(reverse("annotation:project-detail", args=[project.pk]))
    assert response.status_code == 200
    assert "progress" not in response.context
    assert response.context["mine"] == {"done": 0, "skipped": 0, "remaining": 4}
    page = response.content.decode()
    assert "Your progress" in page and "Items complete" not in page and "other-annotator" not in page
    assert reverse("annotation:project-items", args=[project.pk]) not in page  # no links to manager pages

    manager_page = client_as(people["manager"]).get(reverse("annotation:project-detail", args=[project.pk]))
    stage = manager_page.context["progress"]["stages"][0]
    assert (stage["annotations"], stage["items_started"]) == (4, 4)
    assert 'role="progressbar"' in manager_page.content.decode()
    # The members' count has its unit, as the annotators' count beside it does.
    korean = client_as(people["manager"]).get(reverse("annotation:project-detail", args=[project.pk]),
                                              HTTP_ACCEPT_LANGUAGE="ko").content.decode()
    members = Membership.objects.filter(project=project).count()
    annotators = Membership.objects.filter(project=project, role=Role.ANNOTATOR).count()
    assert f"<dd>{members}명 <span class=\"muted\">(주석자 {annotators}명)</span></dd>" in korean


# -- home and project creation --------------------------------------------------------------------


@pytest.mark.django_db
def test_home_lists_projects_and_offers_creation_to_creators(people: dict[str, User | None],
                                                             project: Project) -> None:
    page = client_as(people["manager"]).get(reverse("annotation:home")).content.decode()
    assert reverse("annotation:project-detail", args=[project.pk]) in page
    assert reverse("annotation:project-new") in page
    annotator_page = client_as(people["annotator"]).get(reverse("annotation:home")).content.decode()
    assert reverse("annotation:project-detail", args=[project.pk]) in annotator_page
    assert reverse("annotation:project-new") not in annotator_page
    outsider_page = client_as(people["outsider"]).get(reverse("annotation:home")).content.decode()
    assert "Ask a project manager to add you" in outsider_page
    assert reverse("annotation:project-detail", args=[project.pk]) not in outsider_page


@pytest.mark.django_db
def test_new_project_page_needs_the_permission(people: dict[str, User | None]) -> None:
    assert client_as(people["annotator"]).get(reverse("annotation:project-new")).status_code == 403
    response = client_as(people["manager"]).get(reverse("annotation:project-new"))
    assert response.status_code == 200
    page = response.content.decode()
    for klue_name in ("YNAT", "KLUE-STS", "KLUE-NLI", "KLUE-NER", "KLUE-RE", "KLUE-DP", "KLUE-MRC", "WoS"):
        assert klue_name in page


@pytest.mark.django_db
def test_creating_a_project_makes_the_creator_manager_with_guideline_v1(
    new_user: Callable[..., User],
) -> None:
    creator = new_user("creator", can_create=True)
    client = client_as(creator)
    response = client.post(reverse("annotation:project-new"), {"name": "NER 2025", "slug": "ner-2025",
                                                               "task_type": "ner",
                                                    "annotators_per_item": 2})
    project = Project.objects.get(slug="ner-2025")
    assert response.status_code == 302 and response.url == reverse("annotation:project-detail", args=[project.pk])
    assert (project.task_type, project.annotators_per_item) == ("ner", 2)
    assert selectors.role_in_project(creator, project) == Role.MANAGER
    guideline = selectors.current_guideline(project)
    assert guideline is not None and guideline.version == 1 and guideline.is_published
    assert guideline.instructions == project.task.guideline_template().instructions
    assert client.get(response.url).status_code == 200

    again = client.post(reverse("annotation:project-new"), {"name": "dup", "slug": "ner-2025", "task_type": "tc",
                                                 "annotators_per_item": 3})
    assert again.status_code == 200 and "slug" in again.context["form"].errors
    bad = client.post(reverse("annotation:project-new"), {"name": "x", "slug": "x", "task_type": "pos",
                                               "annotators_per_item": 0})
    assert set(bad.context["form"].errors) == {"task_type", "annotators_per_item"}
    assert Project.objects.count() == 1


# -- guideline ------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_editing_the_guideline_publishes_v2(people: dict[str, User | None], project: Project) -> None:
    client = client_as(people["manager"])
    url = reverse("annotation:project-guideline", args=[project.pk])
    page = client.get(url)
    assert page.context["form"].initial["ethics"] == project.task.guideline_template().ethics
    data = {"instructions": "## 새 지침\n제목만 봅니다.", "ethics": "윤리", "pii": "개인정보", "change_note": "shorter"}
    # Publishing asks first, in the reader's language, keeping the edits in the form; nothing is created yet.
    asked = client.post(url, {**data, "action": "publish"}, HTTP_ACCEPT_LANGUAGE="ko")
    html = asked.content.decode()
    card = html.split('id="publish-confirm"')[1].split("</section>")[0]
    assert asked.status_code == 200 and project.guidelines.count() == 1
    assert "지침 버전 2을(를) 게시할까요?" in card and "되돌릴 수 없습니다" in card
    assert '<input type="hidden" name="confirm" value="publish" form="guideline-form">' in card
    assert "제목만 봅니다." in html.split('id="guideline-form"')[1]
    response = client.post(url, {**data, "action": "publish", "confirm": "publish"})
    assert response.status_code == 302
    current = selectors.current_guideline(project)
    assert (current.version, current.instructions, current.change_note) == (2, data["instructions"], "shorter")
    assert Guideline.objects.filter(project=project, is_current=True).count() == 1

    # A draft is saved without becoming current, and the editor starts from it next time.
    client.post(url, {**data, "instructions": "초안", "action": "draft"})
    draft = Guideline.objects.get(project=project, version=3)
    assert not draft.is_published and selectors.current_guideline(project).version == 2
    assert client.get(url).context["form"].initial["instructions"] == "초안"
    page = client.get(url).content.decode()
    assert "v3" in page and "draft" in page
    asked = client.post(url, {"action": "publish-draft", "guideline": draft.pk})
    assert "Publish guideline version 3?" in asked.content.decode()
    assert selectors.current_guideline(project).version == 2
    client.post(url, {"action": "publish-draft", "guideline": draft.pk, "confirm": "publish"})
    assert selectors.current_guideline(project).version == 3

    empty = client.post(url, {"instructions": " ", "ethics": "e", "pii": "p", "action": "publish"})
    assert empty.status_code == 200 and "instructions" in empty.context["form"].errors
    assert project.guidelines.count() == 3


@pytest.mark.django_db
def test_guideline_markdown_is_sanitised_everywhere(people: dict[str, User | None], project: Project) -> None:
    client = client_as(people["manager"])
    url = reverse("annotation:project-guideline", args=[project.pk])
    client.post(url, {"instructions": XSS, "ethics": XSS, "pii": XSS, "action": "publish", "confirm": "publish"})
    assert selectors.current_guideline(project).version == 2

    manager_page = client.get(url).content.decode()  # editor preview + textareas
    assert "<strong>bold</strong>" in manager_page
    assert_no_script_injection(manager_page)
    maintainer_page = client_as(people["maintainer"]).get(url).content.decode()  # read-only rendering
    assert maintainer_page.count("<strong>bold</strong>") == 3
    assert_no_script_injection(maintainer_page)

    preview = client.post(reverse("annotation:project-guideline-preview", args=[project.pk]),
                          {"instructions": XSS, "ethics": "*e*", "pii": ""})
    assert preview.status_code == 200
    body = preview.json()
    assert body["ethics"] == "<p><em>e</em></p>\n" and body["pii"] == ""
    assert_no_script_injection(body["instructions"])


# -- members --------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_managing_members(people: dict[str, User | None], project: Project, new_user: Callable[..., User]) -> None:
    client = client_as(people["manager"])
    url = reverse("annotation:project-members", args=[project.pk])
    newcomer = new_user("newcomer")
    response = client.post(url, {"action": "add", "username": "newcomer", "role": Role.ANNOTATOR})
    assert response.status_code == 302
    membership = Membership.objects.get(project=project, user=newcomer)
    assert membership.role == Role.ANNOTATOR
    page = client.get(url).content.decode()
    assert "newcomer" in page and "maintainer" in page

    missing = client.post(url, {"action": "add", "username": "nobody", "role": Role.ANNOTATOR})
    assert missing.status_code == 200 and "username" in missing.context["add_form"].errors

    client.post(url, {"action": "role", "membership": membership.pk, "role": Role.MAINTAINER})
    membership.refresh_from_db()
    assert membership.role == Role.MAINTAINER

    # Removing takes two steps: the first POST only asks, saying what cannot be undone.
    asked = client.post(url, {"action": "remove", "membership": membership.pk}, HTTP_ACCEPT_LANGUAGE="ko")
    assert asked.status_code == 200 and Membership.objects.filter(pk=membership.pk).exists()
    card = asked.content.decode().split('id="remove-confirm"')[1].split("</section>")[0]
    assert "newcomer 님을 프로젝트에서 뺄까요?" in card and "되돌릴 수 없습니다" in card
    assert 'name="confirm" value="remove"' in card and f'value="{membership.pk}"' in card
    client.post(url, {"action": "remove", "membership": membership.pk, "confirm": "remove"})
    assert not Membership.objects.filter(pk=membership.pk).exists()

    # The last manager stays: otherwise nobody but a superuser could manage the project again.
    own = Membership.objects.get(project=project, user=people["manager"])
    response = client.post(url, {"action": "remove", "membership": own.pk, "confirm": "remove"}, follow=True)
    assert Membership.objects.filter(pk=own.pk).exists()
    assert "at least one manager" in response.content.decode()

    other = Project.objects.create(name="other", slug="other", task_type="tc")
    foreign = Membership.objects.create(project=other, user=newcomer, role=Role.ANNOTATOR)
    for confirm in ("", "remove"):
        assert client.post(url, {"action": "remove", "membership": foreign.pk, "confirm": confirm}).status_code == 404
        assert client.post(url, {"action": "remove", "membership": "junk", "confirm": confirm}).status_code == 404


@pytest.mark.django_db
def test_imported_users_cannot_join(people: dict[str, User | None], project: Project,
                                    new_user: Callable[..., User]) -> None:
    new_user("klue-annotator-1", is_imported=True)
    response = client_as(people["manager"]).post(reverse("annotation:project-members", args=[project.pk]),
                                                 {"action": "add", "username": "klue-annotator-1",
                                                  "role": Role.ANNOTATOR}, follow=True)
    assert "cannot join" in response.content.decode()
    assert not Membership.objects.filter(project=project, user__username="klue-annotator-1").exists()


# -- items ----------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_items_page_lists_filters_and_counts(people: dict[str, User | None], project: Project) -> None:
    items = make_items(project, 3)
    Item.objects.filter(pk=items[0].pk).update(split="dev")
    Item.objects.filter(pk=items[1].pk).update(screening_status=ScreeningStatus.NEEDS_REVIEW)
    annotate_all(project, people["annotator"])
    client = client_as(people["maintainer"])
    url = reverse("annotation:project-items", args=[project.pk])
    response = client.get(url)
    rows = response.context["rows"]
    assert [r["item"].external_id for r in rows] == ["ynat-0", "ynat-1", "ynat-2"]
    assert [r["counts"] for r in rows] == [[1], [0], [1]]  # the item under review is not handed out
    assert "헤드라인 0번 기사" in response.content.decode()
    assert [r["item"].pk for r in client.get(url, {"split": "dev"}).context["rows"]] == [items[0].pk]
    assert len(client.get(url, {"split": "unassigned"}).context["rows"]) == 2
    needs_review = client.get(url, {"screening_status": ScreeningStatus.NEEDS_REVIEW}).context["rows"]
    assert [r["item"].pk for r in needs_review] == [items[1].pk]
    assert client.get(url, {"split": "nonsense"}).status_code == 200  # bad filters show everything


@pytest.mark.django_db
def test_items_page_paginates_without_n_plus_one(people: dict[str, User | None], project: Project,
                                                 django_assert_max_num_queries: Any) -> None:
    client = client_as(people["manager"])
    url = reverse("annotation:project-items", args=[project.pk])
    make_items(project, 2)
    client.get(url)  # warm up sessions and caches
    with CaptureQueriesContext(connection) as few:
        client.get(url)
    make_items(project, 60, start=2)
    annotate_all(project, people["annotator"])
    with django_assert_max_num_queries(len(few.captured_queries)):
        response = client.get(url)
    assert len(response.context["rows"]) == 50
    assert response.context["page"].paginator.num_pages == 2
    assert len(client.get(url, {"page": 2}).context["rows"]) == 12


# -- admin ----------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_admin_changelist_add_and_change_pages(people: dict[str, User | None], project: Project) -> None:
    make_items(project, 2)
    annotate_all(project, people["annotator"])
    source = Source.objects.create(name="news", license="CC-BY-SA-4.0")
    item = Item.objects.first()
    item.source = source
    item.save()
    services.flag_create(item=item, user=people["annotator"], kind="toxic", note="?")
    client = client_as(people["superuser"])
    from django.apps import apps
    from django.db.models import CompositePrimaryKey

    for app in ("annotation", "datasets_build", "exports"):
        # Every model has an admin, except those the admin cannot show: the MinHash bands, keyed by
        # (project, key, item), an index of the items rather than data anyone edits.
        models = {m for m in apps.get_app_config(app).get_models() if not isinstance(m._meta.pk, CompositePrimaryKey)}
        assert models <= set(admin.site._registry), app
    request = client.get(reverse("admin:index")).wsgi_request
    for model, model_admin in admin.site._registry.items():
        meta = model._meta
        views = ("changelist", "add") if model_admin.has_add_permission(request) else ("changelist",)
        for view in views:
            url = reverse(f"admin:{meta.app_label}_{meta.model_name}_{view}")
            # The audit trail is written by the services only: its admin is read-only.
            expected = 403 if (model is AuditEvent and view == "add") else 200
            assert client.get(url).status_code == expected, url
        obj = model._default_manager.first()
        if obj is not None:
            url = reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[obj.pk])
            assert client.get(url).status_code == 200, url
    # Search and the filters that span relations work too.
    for label in ("user", "item", "annotation", "flag"):
        assert client.get(reverse(f"admin:annotation_{label}_changelist"), {"q": "ynat"}).status_code == 200
    annotations = client.get(reverse("admin:annotation_annotation_changelist"),
                             {"item__project__id__exact": project.pk})
    assert annotations.status_code == 200 and "2 annotations" in annotations.content.decode()


@pytest.mark.django_db
def test_admin_adds_guidelines_through_the_service(people: dict[str, User | None], project: Project) -> None:
    client = client_as(people["superuser"])
    response = client.post(reverse("admin:annotation_guideline_add"), {
        "project": project.pk, "instructions": "i", "ethics": "e", "pii": "p", "change_note": "admin",
    })
    assert response.status_code == 302, response.content.decode()[:2000]
    draft = Guideline.objects.get(project=project, change_note="admin")
    assert draft.version == 2 and not draft.is_published and draft.created_by == people["superuser"]
