"""Issue 23's findings from the outside probe (login lockout behind a proxy, API tokens, malformed input,
young dashboards, invalid options, what outsiders learn, the schema, admin speed): each test failed before
its fix. See docs/security.md."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

PASSWORD = "pw-goldset-123"
PROXY = "10.0.0.2"
CLIENT_A, CLIENT_B = "203.0.113.5", "198.51.100.7"


@pytest.fixture
def axes_on(settings) -> None:
    from axes.models import AccessAttempt

    settings.AXES_ENABLED = True
    AccessAttempt.objects.all().delete()


def _through_proxy(client_address: str, forged: str = "") -> APIClient:
    """A client whose requests reach Django from the proxy, which appended the client's address."""
    forwarded = f"{forged}, {client_address}" if forged else client_address
    return APIClient(REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR=forwarded)


# -- 2. failed logins counted per real client behind the proxy ----------------------------------------


@pytest.mark.django_db
def test_wrong_passwords_from_one_client_behind_the_proxy_do_not_lock_out_another(axes_on, settings,
                                                                                  make_user) -> None:
    settings.GOLDSET_TRUSTED_PROXY_COUNT = 1
    user = make_user("victim")
    attacker = _through_proxy(CLIENT_A)
    statuses = [attacker.post(reverse("annotation:login"), {"username": user.username, "password": "wrong"}).status_code
                for _ in range(settings.AXES_FAILURE_LIMIT + 1)]
    assert statuses[-2:] == [429, 429]
    # The attacker cannot escape the count by forging an X-Forwarded-For entry of their own.
    forging = _through_proxy(CLIENT_A, forged=CLIENT_B)
    assert forging.post(reverse("annotation:login"), {"username": user.username,
                                                      "password": PASSWORD}).status_code == 429
    # The real user, behind the same proxy from another address, signs in on the page and gets a token.
    victim = _through_proxy(CLIENT_B)
    assert victim.post(reverse("annotation:login"), {"username": user.username,
                                                     "password": PASSWORD}).status_code == 302
    response = _through_proxy(CLIENT_B).post(reverse("api:api-token"), {"username": user.username,
                                                                        "password": PASSWORD},
                                             format="json")
    assert response.status_code == 200 and response.data["token"]


@pytest.mark.django_db
def test_without_a_trusted_proxy_the_forwarded_header_is_ignored(axes_on, settings, make_user) -> None:
    settings.GOLDSET_TRUSTED_PROXY_COUNT = 0
    user = make_user("victim")
    for n in range(settings.AXES_FAILURE_LIMIT):
        # A direct client rotating forged addresses is still one address.
        _through_proxy(f"192.0.2.{n}").post(reverse("annotation:login"), {"username": user.username,
                                                                          "password": "wrong"})
    assert _through_proxy(CLIENT_B).post(reverse("annotation:login"),
                                         {"username": user.username, "password": PASSWORD}).status_code == 429


@pytest.mark.django_db
def test_token_endpoint_answers_429_when_locked_and_counts_per_client(axes_on, settings, make_user) -> None:
    settings.GOLDSET_TRUSTED_PROXY_COUNT = 1
    user = make_user("victim")
    attacker = _through_proxy(CLIENT_A)
    url = reverse("api:api-token")
    statuses = [attacker.post(url, {"username": user.username, "password": "wrong"}, format="json").status_code
                for _ in range(settings.AXES_FAILURE_LIMIT + 1)]
    assert statuses == [400] * (settings.AXES_FAILURE_LIMIT - 1) + [429, 429]
    locked = attacker.post(url, {"username": user.username, "password": PASSWORD}, format="json")
    assert locked.status_code == 429 and locked.data["code"] == "locked_out" and "token" not in locked.data
    assert int(locked["Retry-After"]) == settings.AXES_COOLOFF_TIME.total_seconds()
    # Locked on the token endpoint means locked on the login page too (same account, same client) ...
    assert attacker.post(reverse("annotation:login"), {"username": user.username,
                                                       "password": PASSWORD}).status_code == 429
    # ... but not for the same account from another client.
    response = _through_proxy(CLIENT_B).post(url, {"username": user.username, "password": PASSWORD}, format="json")
    assert response.status_code == 200


# -- 8. API tokens expire and die with the password --------------------------------------------------


def _token(user) -> str:
    response = APIClient().post(reverse("api:api-token"), {"username": user.username, "password": PASSWORD},
                                format="json")
    assert response.status_code == 200
    return response.data["token"]


def _projects_with(key: str) -> int:
    return APIClient(HTTP_AUTHORIZATION=f"Token {key}").get("/api/projects/").status_code


@pytest.mark.django_db
def test_an_expired_token_is_refused_and_the_token_endpoint_issues_a_new_one(make_user) -> None:
    user = make_user()
    key = _token(user)
    assert _projects_with(key) == 200
    assert _token(user) == key  # still live: asking again returns the same key
    Token.objects.filter(key=key).update(created=timezone.now() - timedelta(days=settings.GOLDSET_API_TOKEN_DAYS,
                                                                            minutes=1))
    response = APIClient(HTTP_AUTHORIZATION=f"Token {key}").get("/api/projects/")
    assert response.status_code == 401 and "expired" in response.data["detail"]
    fresh = _token(user)
    assert fresh != key and _projects_with(fresh) == 200 and _projects_with(key) == 401


@pytest.mark.django_db
def test_a_password_change_revokes_the_api_token(make_user) -> None:
    user = make_user()
    key = _token(user)
    other_key = _token(make_user())
    user.set_password("a-new-pw-goldset-456")
    user.save()
    assert _projects_with(key) == 401
    assert _projects_with(other_key) == 200  # other users keep theirs
    # Ordinary saves of the user do not touch the new token.
    new_key = APIClient().post(reverse("api:api-token"), {"username": user.username,
                                                          "password": "a-new-pw-goldset-456"},
                               format="json").data["token"]
    user.first_name = "Kim"
    user.save()
    assert _projects_with(new_key) == 200


# -- 8. the agreement dashboard of a young project ---------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("task_type", ["ner", "mrc"])
def test_dashboard_of_a_young_project_without_overlapping_annotations_renders(
        task_type, make_project, make_user, add_member, django_capture_on_commit_callbacks) -> None:
    from django.test import Client

    from annotation import services
    from annotation.models import Annotation, Role

    project = make_project(task_type, k=3)
    coders = [add_member(project, make_user(f"young-coder{i}"), Role.ANNOTATOR) for i in range(2)]
    for i, coder in enumerate(coders):
        # Each annotator has labelled a different item: nobody can be compared with anybody yet.
        if task_type == "ner":
            item = services.item_create(project=project, payload={"sentence": f"김철수는 {i}일 서울에 갔다."},
                                        external_id=f"young-{i}")
            payload = {"entities": [{"start": 0, "end": 3, "type": "PS"}]}
        else:
            context = f"제주도 장마가 {i}일 시작됐다."
            item = services.item_create(project=project, payload={"title": "장마", "context": context,
                                                                  "question": "장마는 어디?"},
                                        external_id=f"young-{i}")
            payload = {"answers": [{"text": "제주도", "answer_start": 0}], "is_impossible": False}
        Annotation.objects.create(item=item, annotator=coder, stage="label", payload=payload, seconds_spent=5.0)
    client = Client()
    client.force_login(project.created_by)
    url = reverse("annotation:review-dashboard", args=[project.pk])
    with django_capture_on_commit_callbacks(execute=True):
        assert client.get(url).status_code == 200
    page = client.get(url)
    assert page.status_code == 200
    assert "young-coder0" in page.content.decode()


# -- 8. JSON nesting and NUL characters are a 400 ----------------------------------------------------

DEEP_2KB = "[" * 1000 + "]" * 1000


@pytest.mark.django_db
def test_a_deeply_nested_json_body_is_a_400_anonymously_on_the_token_endpoint() -> None:
    response = APIClient().post(reverse("api:api-token"), DEEP_2KB, content_type="application/json")
    assert response.status_code == 400
    assert "nested deeper than" in response.json()["detail"]


@pytest.mark.django_db
def test_json_nested_beyond_the_limit_is_a_400_naming_the_place(make_project, api) -> None:
    from annotation.api.parsers import MAX_JSON_DEPTH

    project = make_project("tc")
    body = '{"options": ' + '{"a": ' * MAX_JSON_DEPTH + "1" + "}" * MAX_JSON_DEPTH + "}"
    response = api(project.created_by).patch(f"/api/projects/{project.pk}/", body, content_type="application/json")
    assert response.status_code == 400
    assert "options.a.a" in response.json()["detail"] and f"{MAX_JSON_DEPTH} levels" in response.json()["detail"]
    project.refresh_from_db()
    assert "a" not in project.options
    # A body over the depth parser's recursion stops the same way on every JSON endpoint.
    response = api(project.created_by).patch(f"/api/projects/{project.pk}/", DEEP_2KB,
                                             content_type="application/json")
    assert response.status_code == 400


@pytest.mark.django_db
def test_a_nul_in_a_draft_payload_is_a_400_and_nothing_is_saved(make_project, annotator_in, api) -> None:
    from annotation import services
    from annotation.models import Assignment

    project = make_project("tc")
    services.item_create(project=project, payload={"title": "기사"}, external_id="nul-1")
    annotator = annotator_in(project)
    assignment = services.assignment_next(project=project, user=annotator)
    url = f"/api/projects/{project.pk}/assignments/{assignment.pk}/draft/"
    for payload in ({"label": "경\x00제"}, {"la\x00bel": "경제"}):
        response = api(annotator).put(url, {"payload": payload, "seconds_spent": 1.0}, format="json")
        assert response.status_code == 400, payload
        assert "NUL" in response.json()["detail"]
    assert api(annotator).get(url).status_code == 204
    assert Assignment.objects.get(pk=assignment.pk).item_id == assignment.item_id


def _get_cases():
    from tests.site.matrix import contributed_cases

    return [case for case in contributed_cases() if case.method == "get"]


@pytest.mark.django_db
def test_a_nul_in_any_query_parameter_is_a_400_on_every_api_route(api) -> None:
    from tests.site.matrix import prepared_scenario

    scenario = prepared_scenario()
    user = scenario.users["superuser"]
    scenario.extra["username"] = user.username
    # Without the middleware, on PostgreSQL, status (gold, API and page), split, external_id and
    # screening_status (items list and detail) were 500s: 8 route × parameter pairs.
    params = "&".join(f"{name}=x%00y" for name in ("status", "split", "external_id", "screening_status", "q",
                                                  "search", "stage", "kind", "page", "annotator", "item", "label",
                                                  "source", "offset", "limit", "object_type", "ordering", "format"))
    for case in _get_cases():
        url = case.url(scenario)
        response = api(user).get(f"{url}{'&' if '?' in url else '?'}{params}")
        assert response.status_code == 400, url
        assert response.json()["code"] == "nul_character", url
        # A NUL in a parameter's name is refused too.
        assert api(user).get(f"{url}{'&' if '?' in url else '?'}a%00b=1").status_code == 400, url


@pytest.mark.django_db
def test_a_nul_in_page_query_strings_form_fields_and_paths_is_a_400(make_project, client) -> None:
    project = make_project("tc")
    client.force_login(project.created_by)
    for url in (reverse("annotation:home"), f"/projects/{project.pk}/", f"/projects/{project.pk}/items/",
                reverse("annotation:review-gold", args=[project.pk])):
        response = client.get(url + "?q=%00&status=%00")
        assert response.status_code == 400, url
        assert b"NUL" in response.content
    # As a browser sends a form (urlencoded); Django's form fields refuse a NUL in multipart fields themselves.
    login = client.post(reverse("annotation:login"), "username=a%00b&password=x",
                        content_type="application/x-www-form-urlencoded")
    assert login.status_code == 400
    assert client.get(f"/projects/{project.pk}/%00/").status_code == 400


@pytest.mark.django_db
def test_the_adjudication_form_refuses_a_deeply_nested_payload(make_project, make_user, add_member) -> None:
    from django.test import Client

    from annotation import services
    from annotation.models import Annotation, Role

    project = make_project("tc", k=2)
    item = services.item_create(project=project, payload={"title": "기사"}, external_id="adj-1")
    for i, label in enumerate(("사회", "경제")):
        Annotation.objects.create(item=item, annotator=add_member(project, make_user(f"adj{i}"), Role.ANNOTATOR),
                                  stage="label", payload={"label": label})
    client = Client()
    client.force_login(project.created_by)
    url = reverse("annotation:review-adjudicate", args=[project.pk, item.pk])
    response = client.post(url, {"choice": "payload", "payload": DEEP_2KB, "reason": "r", "version": "0"})
    assert response.status_code == 400
    assert "nested deeper than" in response.content.decode()


# -- 8. project options and label schema validated on save -------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(("body", "field"), [
    ({"options": {"lease_minutes": "abc"}}, "options.lease_minutes"),
    ({"options": {"lease_minutes": 0}}, "options.lease_minutes"),
    ({"options": {"queue_order": "random"}}, "options.queue_order"),
    ({"options": {"pii": {"phone": "shred"}}}, "options.pii"),
    ({"options": {"gold_min_votes": "two"}}, "options.gold_min_votes"),
    ({"options": {"assist": {"fraction": 3}}}, "options.assist"),
    ({"options": {"lease_minute": 10}}, "options.lease_minute"),
    ({"options": ["lease_minutes"]}, "options"),
    ({"label_schema": {"labels": "abc", "none_label": "해당없음"}}, "label_schema.labels"),
    ({"label_schema": {"none_label": "해당없음"}}, "label_schema.labels"),
    ({"label_schema": {"labels": ["경제", "경제"], "none_label": "해당없음"}}, "label_schema.labels"),
])
def test_invalid_options_or_schema_are_a_400_naming_the_field_and_next_keeps_working(
        body, field, make_project, annotator_in, api) -> None:
    from annotation import services

    project = make_project("tc", k=1)
    services.item_create(project=project, payload={"title": "기사"}, external_id="opt-1")
    annotator = annotator_in(project)
    before = (dict(project.options), dict(project.label_schema))
    response = api(project.created_by).patch(f"/api/projects/{project.pk}/", body, format="json")
    assert response.status_code == 400
    assert field in response.data, response.data
    project.refresh_from_db()
    assert (project.options, project.label_schema) == before
    assert api(annotator).get(f"/api/projects/{project.pk}/next/").status_code == 200
    # Creating a project with the same values is refused too, and creates nothing.
    created = api(project.created_by).post("/api/projects/", {"name": "New", "slug": "new-bad", "task_type": "tc",
                                                              **body}, format="json")
    assert created.status_code == 400 and field in created.data


@pytest.mark.django_db
def test_valid_options_and_schema_are_stored_and_used(make_project, annotator_in, api) -> None:
    from annotation import services
    from annotation.models import Assignment

    project = make_project("sts", k=1)
    services.item_create(project=project, payload={"sentence1": "a", "sentence2": "b"}, external_id="ok-1")
    annotator = annotator_in(project)
    body = {"options": {"lease_minutes": 45, "queue_order": "default", "pii": {"phone": "detect"}},
            "label_schema": {"min": 0, "max": 5, "step": 0.5}}
    assert api(project.created_by).patch(f"/api/projects/{project.pk}/", body, format="json").status_code == 200
    assert api(annotator).get(f"/api/projects/{project.pk}/next/").status_code == 200
    assignment = Assignment.objects.get(item__project=project, annotator=annotator)
    assert timedelta(minutes=44) < assignment.lease_expires_at - timezone.now() <= timedelta(minutes=45)
    bad_range = {"label_schema": {"min": 5, "max": 0, "step": 1}}
    response = api(project.created_by).patch(f"/api/projects/{project.pk}/", bad_range, format="json")
    assert response.status_code == 400 and "label_schema.step" in response.data


@pytest.mark.django_db
def test_the_admin_refuses_invalid_project_options(make_project, make_user) -> None:
    from django.test import Client

    project = make_project("tc")
    root = make_user("root-admin", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(root)
    url = reverse("admin:annotation_project_change", args=[project.pk])
    form = {"name": project.name, "slug": project.slug, "description": "", "task_type": "tc",
            "label_schema": '{"labels": ["a"], "none_label": "x"}', "annotators_per_item": "3",
            "options": '{"lease_minutes": "abc"}', "memberships-TOTAL_FORMS": "0",
            "memberships-INITIAL_FORMS": "0"}
    response = client.post(url, form)
    assert response.status_code == 200 and "options.lease_minutes" in response.content.decode()
    project.refresh_from_db()
    assert project.options == {}
    form["options"] = '{"lease_minutes": 10}'
    assert client.post(url, form).status_code == 302
    project.refresh_from_db()
    assert project.options == {"lease_minutes": 10}


# -- 8. what outsiders learn --------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_user_who_may_not_create_projects_cannot_probe_slugs(make_project, make_user, api) -> None:
    project = make_project("tc", slug="secret-corpus")
    outsider = make_user("probe")
    answers = {slug: api(outsider).post("/api/projects/", {"name": "x", "slug": slug, "task_type": "tc"},
                                        format="json") for slug in (project.slug, "no-such-project")}
    assert {r.status_code for r in answers.values()} == {403}
    assert answers[project.slug].data == answers["no-such-project"].data


def _import(project, tmp_path, name: str, *, source: str, license: str = "", prefix: str = "s") -> None:
    from datasets_build.services import items_import
    from tests.builders import sample_records

    path = tmp_path / name
    records = sample_records("tc", 3, prefix=prefix)
    for record in records:
        record["title"] += f" ({prefix})"  # distinct texts, so no import skips them as duplicates
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records), "utf-8")
    result = items_import(project, path, "jsonl", source=source, license=license)
    assert not result.errors, result.errors


@pytest.mark.django_db
def test_sources_are_scoped_to_their_project(make_project, make_user, api, tmp_path) -> None:
    first = make_project("tc", slug="first")
    other = make_project("tc", slug="other")
    _import(first, tmp_path, "secret-newsroom-dump.jsonl", source="wire", license="CC-BY-NC-4.0")
    # Another project may use the same source name with its own licence, and learns nothing of the first's.
    _import(other, tmp_path, "mine.jsonl", source="wire", license="MIT", prefix="o")
    _import(other, tmp_path, "more.jsonl", source="wire", prefix="p")
    mine = api(other.created_by).get(f"/api/projects/{other.pk}/sources/").data
    assert [(s["name"], s["license"], s["items"]) for s in mine] == [("wire", "MIT", 6)]
    page = api(other.created_by).get(f"/projects/{other.pk}/sources/").content.decode()
    assert "secret-newsroom-dump" not in page and "CC-BY-NC" not in page
    theirs = api(first.created_by).get(f"/api/projects/{first.pk}/sources/").data
    assert [(s["name"], s["license"], s["items"]) for s in theirs] == [("wire", "CC-BY-NC-4.0", 3)]
    # Deleting a project takes its sources along (its items' RESTRICT reference does not block that).
    from annotation.models import Source

    other.delete()
    assert list(Source.objects.values_list("project__slug", "license")) == [("first", "CC-BY-NC-4.0")]


@pytest.mark.django_db(transaction=True)
def test_the_migration_gives_each_project_its_own_copy_of_a_shared_source() -> None:
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    executor.migrate([("annotation", "0007_import_indexes")])
    old = executor.loader.project_state([("annotation", "0007_import_indexes")]).apps
    project_model, source_model, item_model = (old.get_model("annotation", name)
                                               for name in ("Project", "Source", "Item"))
    projects = [project_model.objects.create(name=slug, slug=slug, task_type="tc") for slug in ("pa", "pb")]
    shared = source_model.objects.create(name="wire", license="CC-BY-4.0", provenance="imported from a.jsonl")
    source_model.objects.create(name="unused", license="MIT")
    for n, project in enumerate(projects * 2):
        item_model.objects.create(project=project, source=shared, payload={"title": str(n)}, external_id=f"e{n}",
                                  content_hash=f"{n:064d}")
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    from annotation.models import Item, Source

    rows = sorted(Source.objects.values_list("name", "project__slug", "license", "provenance"))
    assert rows == [("unused", None, "MIT", ""), ("wire", "pa", "CC-BY-4.0", "imported from a.jsonl"),
                    ("wire", "pb", "CC-BY-4.0", "imported from a.jsonl")]
    for item in Item.objects.select_related("source", "project"):
        assert item.source.project_id == item.project_id


# -- 8. the API schema behind a login in production; /healthz open ----------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/api/schema/", "/api/docs/"])
def test_the_api_schema_needs_a_login_unless_made_public(url, settings, make_user, api) -> None:
    settings.GOLDSET_API_SCHEMA_PUBLIC = False
    assert APIClient().get(url).status_code == 401
    assert api(make_user()).get(url).status_code == 200
    settings.GOLDSET_API_SCHEMA_PUBLIC = True
    assert APIClient().get(url).status_code == 200


def test_production_settings_put_the_schema_behind_a_login_and_keep_healthz_on_plain_http() -> None:
    from tests.builders import production_settings

    prod = production_settings()
    assert prod.GOLDSET_API_SCHEMA_PUBLIC is False
    assert prod.GOLDSET_TRUSTED_PROXY_COUNT == 0
    assert prod.SECURE_REDIRECT_EXEMPT == [r"^healthz$"]


@pytest.mark.django_db
def test_healthz_answers_anonymously() -> None:
    response = APIClient().get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


# -- 8. admin pages stay bounded on large projects ---------------------------------------------------

#: Small tables an admin page may read whole: permission and group pickers on the user page, and the project and
#: source filters of the lists (one row per project or per imported corpus, never per item or user).
SMALL_TABLES = {"auth_permission", "auth_group", "django_content_type", "annotation_project", "annotation_source"}


def _unbounded_selects(queries) -> list[str]:
    found = []
    for query in queries:
        sql = query["sql"]
        if not sql.lstrip().upper().startswith("SELECT") or " WHERE " in sql or " LIMIT " in sql:
            continue
        tables = set(re.findall(r'FROM "?(\w+)"?', sql))
        if not tables <= SMALL_TABLES:
            found.append(sql)
    return found


@pytest.mark.django_db
def test_admin_change_pages_and_lists_never_read_a_whole_large_table(make_project, annotator_in, make_user,
                                                                    monkeypatch) -> None:
    from django.contrib import admin
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from annotation import services
    from datasets_build.models import NearDuplicate

    project = make_project("tc", k=1)
    items = [services.item_create(project=project, payload={"title": f"기사 {n}"}, external_id=f"big-{n}")
             for n in range(40)]
    NearDuplicate.objects.create(project=project, item=items[1], group=items[0].pk, duplicate_of=items[0],
                                 similarity=0.9)
    annotator = annotator_in(project)
    assignment = services.assignment_next(project=project, user=annotator)
    services.annotation_submit(project=project, user=annotator, item_id=assignment.item_id, payload={"label": "사회"})
    services.assignment_next(project=project, user=annotator)
    services.flag_create(item=items[5], user=annotator, kind="other", note="n")
    for n in range(6):
        make_user(f"many-{n}")
    root = make_user("admin-root", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(root)
    checked = 0
    for model, model_admin in admin.site._registry.items():
        # Pages of 5 rows, so these tables span several pages as a large project's do (a list that fits on
        # one page is read without LIMIT).
        monkeypatch.setattr(model_admin, "list_per_page", 5)
        meta = model._meta
        obj = model._default_manager.order_by("pk").first()
        # A list that fits on one page is fetched without LIMIT (bounded by the page size): check lists that don't.
        several_pages = model._default_manager.count() > 5
        urls = [(reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist"), several_pages)]
        if obj is not None:
            urls.append((reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[obj.pk]), True))
        for url, check_selects in urls:
            with CaptureQueriesContext(connection) as queries:
                assert client.get(url).status_code == 200, url
            unbounded = _unbounded_selects(queries.captured_queries) if check_selects else []
            assert not unbounded, (url, unbounded)
            counts = [q["sql"] for q in queries.captured_queries if "COUNT(" in q["sql"].upper()
                      and not set(re.findall(r'FROM "?(\w+)"?', q["sql"])) <= SMALL_TABLES]
            assert all(" LIMIT " in sql for sql in counts), (url, counts)
            checked += 1
    assert checked > 30
    # The near-duplicate pair's page (read-only: the import builds the groups) shows its two items, not a
    # list of every item.
    pair = NearDuplicate.objects.get()
    page = client.get(reverse("admin:datasets_build_nearduplicate_change", args=[pair.pk])).content.decode()
    assert "<select" not in page and "기사 39" not in page
    # An editable page with a foreign key to the items renders it as an id box.
    page = client.get(reverse("admin:annotation_draft_add")).content.decode()
    assert 'class="vForeignKeyRawIdAdminField"' in page and "기사 39" not in page


@pytest.mark.django_db
def test_form_encoded_api_bodies_still_parse_after_the_nul_check(make_user) -> None:
    """The middleware reads urlencoded forms before DRF does; DRF must still see the fields."""
    user = make_user()
    response = APIClient().post(reverse("api:api-token"), f"username={user.username}&password={PASSWORD}",
                                content_type="application/x-www-form-urlencoded")
    assert response.status_code == 200 and response.data["token"]
