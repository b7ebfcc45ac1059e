"""The annotator's workspace without a browser: pages, the guideline gate, drafts, retries, blindness,
the two-stage NLI and MRC flows through the API, and the Korean catalogue."""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import translation

from annotation import services
from annotation.models import Annotation, Draft, GuidelineAcknowledgement, Item, Project, Role, User
from annotation.task_types import get_task_type, slugs

pytestmark = pytest.mark.django_db
TC = {"label": "사회", "second": None, "third": None}


def page_client(user: User | None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def items(project: Project, payloads: list[dict[str, Any]]) -> list[Item]:
    return [services.item_create(project=project, payload=p, external_id=f"w-{i}") for i, p in enumerate(payloads)]


def headlines(project: Project, n: int) -> list[Item]:
    return items(project, [{"title": f"워크스페이스 기사 제목 {i}"} for i in range(n)])


@pytest.fixture
def tc_project(make_project: Callable[..., Project]) -> Project:
    project = make_project("tc", k=2)
    headlines(project, 3)
    return project


# -- pages: who gets in, and the gate -------------------------------------------------------------


@pytest.mark.parametrize(("role", "status"), [("outsider", 404), ("manager", 403), ("maintainer", 403)])
def test_workspace_is_for_annotators(role, status, tc_project, make_user, add_member) -> None:
    user = make_user()
    if role != "outsider":
        add_member(tc_project, user, role)
    assert page_client(user).get(reverse("annotation:annotate", args=[tc_project.pk])).status_code == status


def test_anonymous_goes_to_login(tc_project) -> None:
    for name in ("annotate", "guideline-read"):
        response = Client().get(reverse(f"annotation:{name}", args=[tc_project.pk]))
        assert response.status_code == 302 and response.url.startswith(reverse("annotation:login"))


def test_gate_before_the_first_item_and_after_a_new_version(tc_project, make_user, add_member) -> None:
    annotator = add_member(tc_project, make_user(), Role.ANNOTATOR)
    client = page_client(annotator)
    annotate_url = reverse("annotation:annotate", args=[tc_project.pk])
    gate_url = reverse("annotation:guideline-read", args=[tc_project.pk])
    response = client.get(annotate_url)
    assert response.status_code == 302 and response.url == f"{gate_url}?next={annotate_url}"

    page = client.get(response.url).content.decode()
    for heading in ("Task instructions", "Ethics", "Personal information (PII)"):
        assert heading in page
    assert "작업 개요" in page and "윤리 지침" in page and "개인정보 지침" in page  # the template's sections

    # Acknowledging needs the tick; then it is recorded with the version and the time.
    refused = client.post(gate_url, {"next": annotate_url})
    assert refused.status_code == 302 and not GuidelineAcknowledgement.objects.filter(user=annotator).exists()
    accepted = client.post(gate_url, {"confirm": "yes", "next": annotate_url})
    assert accepted.status_code == 302 and accepted.url == annotate_url
    ack = GuidelineAcknowledgement.objects.get(user=annotator)
    assert ack.guideline.version == 1 and ack.acknowledged_at is not None
    assert client.get(annotate_url).status_code == 200
    assert "You acknowledged version 1" in client.get(gate_url).content.decode()

    manager = tc_project.memberships.get(role=Role.MANAGER).user
    v2 = services.guideline_create(project=tc_project, instructions="## 바뀐 지침", ethics="윤리 v2", pii="개인정보 v2",
                                   created_by=manager, change_note="예시 추가")
    services.guideline_publish(guideline=v2)
    assert client.get(annotate_url).status_code == 302
    page = client.get(gate_url).content.decode()
    assert "바뀐 지침" in page and "예시 추가" in page
    client.post(gate_url, {"confirm": "yes"})
    assert GuidelineAcknowledgement.objects.filter(user=annotator, guideline=v2).exists()


def test_gate_never_redirects_off_site(tc_project, annotator_in) -> None:
    annotator = annotator_in(tc_project)
    response = page_client(annotator).post(reverse("annotation:guideline-read", args=[tc_project.pk]),
                                           {"confirm": "yes", "next": "https://evil.example/"})
    assert response.url == reverse("annotation:annotate", args=[tc_project.pk])


def test_guideline_markdown_in_the_gate_and_the_drawer_is_sanitised(tc_project, annotator_in) -> None:
    manager = tc_project.memberships.get(role=Role.MANAGER).user
    guideline = services.guideline_create(project=tc_project, instructions="<script>alert(1)</script> **굵게**",
                                          ethics="[x](javascript:alert(1))", pii="<img src=x onerror=alert(1)>",
                                          created_by=manager)
    services.guideline_publish(guideline=guideline)
    annotator = annotator_in(tc_project)
    client = page_client(annotator)
    for name in ("guideline-read", "annotate"):
        page = client.get(reverse(f"annotation:{name}", args=[tc_project.pk])).content.decode()
        assert "<strong>굵게</strong>" in page
        assert "<script>alert" not in page and "<img" not in page and 'href="javascript:' not in page


def test_workspace_page_hands_the_widget_its_config(tc_project, annotator_in) -> None:
    annotator = annotator_in(tc_project)
    response = page_client(annotator).get(reverse("annotation:annotate", args=[tc_project.pk]))
    page = response.content.decode()
    config = response.context["config"]
    assert config["task"] == "tc" and config["widget"].endswith("annotation/widgets/tc.js")
    assert 'href="/static/annotation/widgets/tc.css"' in page  # the widget's stylesheet, from the task type
    assert config["strings"]["tc_instruction"].startswith("Choose the topic")  # its strings, from the task type
    assert config["schema"]["labels"][0] == "IT과학"
    assert config["api"]["next"] == f"/api/projects/{tc_project.pk}/next/"
    assert 'id="workspace-config"' in page and "workspace.js" in page
    # The guideline is one click away, in a drawer on the page itself.
    assert 'id="ws-guideline"' in page and "작업 개요" in page
    for kind in ("Personal information", "Toxic or hateful", "Social bias", "Copyright", "Other"):
        assert kind in page


def test_home_and_project_page_show_own_progress_and_start_link(tc_project, annotator_in, make_user,
                                                                add_member) -> None:
    annotator = annotator_in(tc_project)
    assignment = services.assignment_next(project=tc_project, user=annotator)
    services.annotation_submit(project=tc_project, user=annotator, item_id=assignment.item_id, payload=TC)
    home = page_client(annotator).get(reverse("annotation:home"))
    row = home.context["rows"][0]
    assert row["mine"] == {"done": 1, "skipped": 0, "remaining": 2}
    page = home.content.decode()
    assert reverse("annotation:annotate", args=[tc_project.pk]) in page and "Start annotating" in page
    detail = page_client(annotator).get(reverse("annotation:project-detail", args=[tc_project.pk])).content.decode()
    assert reverse("annotation:annotate", args=[tc_project.pk]) in detail
    manager = tc_project.memberships.get(role=Role.MANAGER).user
    manager_home = page_client(manager).get(reverse("annotation:home")).content.decode()
    assert reverse("annotation:annotate", args=[tc_project.pk]) not in manager_home


def test_still_open_counts_the_item_on_screen_on_first_load_and_after_each_submission(tc_project, annotator_in,
                                                                                     api) -> None:
    """"Still open to you" is one count from the page's first render through every submission: the item on
    screen (leased to the annotator) is still open to them until they submit it."""
    annotator = annotator_in(tc_project)
    client = api(annotator)
    progress = f"/api/projects/{tc_project.id}/progress/"
    page = page_client(annotator).get(reverse("annotation:annotate", args=[tc_project.pk]))
    assert page.context["mine"]["remaining"] == 3  # rendered before the page asks for its first item
    task = client.get(f"/api/projects/{tc_project.id}/next/").json()
    assert client.get(progress).json()["remaining"] == 3  # the item on screen is still open
    answer = client.post(f"/api/projects/{tc_project.id}/annotations/", {"item": task["item"]["id"], "payload": TC},
                         format="json").json()
    assert answer["next"] is not None
    assert client.get(progress).json() == {"done": 1, "skipped": 0, "remaining": 2}
    reloaded = page_client(annotator).get(reverse("annotation:annotate", args=[tc_project.pk]))
    assert reloaded.context["mine"]["remaining"] == 2  # a reload shows what the workspace showed


def test_an_empty_queue_says_whether_others_hold_the_last_items_and_where_to_go_on(make_project, annotator_in,
                                                                                    add_member, api) -> None:
    """Empty because another annotator holds the last item's only place: the progress says so (the item may come
    back), unlike really done; and it names the annotator's next project that has an item for them now."""
    project = make_project("tc", k=1)
    item = headlines(project, 1)[0]
    kim, lee = annotator_in(project), annotator_in(project)
    client = api(lee)
    assert api(kim).get(f"/api/projects/{project.id}/next/").json()["item"]["id"] == item.id  # kim holds it
    assert client.get(f"/api/projects/{project.id}/next/").status_code == 204
    other = make_project("tc", k=1, slug="other-tc")
    headlines(other, 1)
    add_member(other, lee)
    held = client.get(f"/api/projects/{project.id}/progress/").json()
    assert held["remaining"] == 0 and held["held_by_others"] == 1
    assert held["next_project"] == {"id": other.id, "name": other.name,
                                    "url": reverse("annotation:annotate", args=[other.pk])}
    # Once kim submits, the project is really done for lee: nothing is held any more.
    api(kim).post(f"/api/projects/{project.id}/annotations/", {"item": item.id, "payload": TC}, format="json")
    done = client.get(f"/api/projects/{project.id}/progress/").json()
    assert done["held_by_others"] == 0 and done["next_project"]["id"] == other.id
    # A project with work left for the annotator needs no way on.
    assert set(client.get(f"/api/projects/{other.id}/progress/").json()) == {"done", "skipped", "remaining"}


# -- blind annotation ------------------------------------------------------------------------------


def test_annotators_never_see_others_labels_counts_or_gold(make_project, annotator_in, api) -> None:
    project = make_project("mrc", k=2)
    context = "가람시는 이달부터 시립도서관의 평일 운영 시간을 밤 10시까지 연장한다."
    item = items(project, [{"title": "도서관", "context": context}])[0]
    writer = annotator_in(project, "writer-secret")
    validator = annotator_in(project, "validator-two")
    other = annotator_in(project, "validator-one")
    api(writer).get(f"/api/projects/{project.id}/next/")
    written = {"question": "도서관은 언제까지 문을 여나?", "question_type": 1,
               "answer": {"text": "밤 10시", "start": context.index("밤 10시")}, "plausible": None}
    assert api(writer).post(f"/api/projects/{project.id}/annotations/", {"item": item.id, "payload": written},
                            format="json").status_code == 201
    api(other).get(f"/api/projects/{project.id}/next/")
    api(other).post(f"/api/projects/{project.id}/annotations/",
                    {"item": item.id, "payload": {"answer": {"text": "평일", "start": context.index("평일")}}},
                    format="json")
    Item.objects.filter(pk=item.pk).update(meta={"answers": [{"text": "GOLD-ANSWER", "answer_start": 0}]})

    client = api(validator)
    task = client.get(f"/api/projects/{project.id}/next/").json()
    assert task["stage"] == "validation"
    assert set(task["item"]["payload"]) == {"title", "context", "question"}
    body = json.dumps(task, ensure_ascii=False)
    for secret in ("writer-secret", "validator-one", "question_type", "answer", "GOLD-ANSWER", "plausible"):
        assert secret not in body
    assert client.get(f"/api/projects/{project.id}/annotations/").json()["count"] == 0
    assert set(client.get(f"/api/projects/{project.id}/progress/").json()) == {"done", "skipped", "remaining"}

    browser = page_client(validator)
    for url in (reverse("annotation:annotate", args=[project.pk]), reverse("annotation:home"),
                reverse("annotation:project-detail", args=[project.pk]),
                reverse("annotation:guideline-read", args=[project.pk])):
        html = browser.get(url).content.decode()
        for secret in ("writer-secret", "validator-one", "GOLD-ANSWER", "Items complete", "평일\""):
            assert secret not in html, (url, secret)


# -- drafts and retries -------------------------------------------------------------------------------


def test_drafts_round_trip_and_stay_private(tc_project, annotator_in, api) -> None:
    annotator, other = annotator_in(tc_project), annotator_in(tc_project)
    task = api(annotator).get(f"/api/projects/{tc_project.id}/next/").json()
    url = f"/api/projects/{tc_project.id}/assignments/{task['assignment']}/draft/"
    client = api(annotator)
    assert client.get(url).status_code == 204
    saved = client.put(url, {"payload": {"ranked": ["사회"]}, "seconds_spent": 12.5}, format="json")
    assert saved.status_code == 200
    again = client.put(url, {"payload": {"ranked": ["사회", "경제"]}, "seconds_spent": 14}, format="json")
    assert again.status_code == 200 and Draft.objects.count() == 1
    got = client.get(url).json()
    assert got["payload"] == {"ranked": ["사회", "경제"]} and got["seconds_spent"] == 14
    # Someone else's assignment is invisible, and a huge draft is refused.
    assert api(other).get(url).status_code == 404
    assert api(other).put(url, {"payload": {}}, format="json").status_code == 404
    assert client.put(url, {"payload": {"x": "가" * 80_000}}, format="json").status_code == 400
    # Once submitted, a late autosave is refused rather than reopening the item.
    client.post(f"/api/projects/{tc_project.id}/annotations/", {"item": task["item"]["id"], "payload": TC},
                format="json")
    assert client.put(url, {"payload": {"ranked": []}}, format="json").status_code == 409


def test_a_retried_submission_creates_one_annotation(tc_project, annotator_in, api) -> None:
    annotator = annotator_in(tc_project)
    client = api(annotator)
    task = client.get(f"/api/projects/{tc_project.id}/next/").json()
    body = {"item": task["item"]["id"], "stage": task["stage"], "payload": TC, "seconds_spent": 31}
    first = client.post(f"/api/projects/{tc_project.id}/annotations/", body, format="json")
    retry = client.post(f"/api/projects/{tc_project.id}/annotations/", body, format="json")
    assert (first.status_code, retry.status_code) == (201, 200)
    assert first.json()["id"] == retry.json()["id"]
    annotation = Annotation.objects.get(annotator=annotator)
    assert annotation.payload == TC and annotation.seconds_spent == 31


# -- the two-stage flows, end to end through the API -----------------------------------------------------


def run_stage(api, project: Project, user: User, payload: dict[str, Any]) -> dict[str, Any]:
    task = api(user).get(f"/api/projects/{project.id}/next/")
    assert task.status_code == 200, task.status_code
    data = task.json()
    response = api(user).post(f"/api/projects/{project.id}/annotations/",
                              {"item": data["item"]["id"], "stage": data["stage"], "payload": payload},
                              format="json")
    assert response.status_code == 201, response.json()
    return data


def test_nli_two_stage_flow(make_project, annotator_in, api) -> None:
    project = make_project("nli", k=3)
    item = items(project, [{"premise": "시립도서관은 이번 달부터 평일 운영 시간을 밤 10시까지 연장한다.",
                            "target_label": "contradiction"}])[0]
    writer, *validators = (annotator_in(project) for _ in range(4))
    written = run_stage(api, project, writer, {"hypothesis": "시립도서관은 평일 저녁 6시에 문을 닫는다.",
                                               "label": "contradiction"})
    assert written["stage"] == "writing" and written["item"]["payload"]["target_label"] == "contradiction"
    assert api(writer).get(f"/api/projects/{project.id}/next/").status_code == 204  # never their own
    for validator, label in zip(validators, ("contradiction", "contradiction", "neutral"), strict=True):
        seen = run_stage(api, project, validator, {"label": label})
        assert seen["stage"] == "validation"
        assert seen["item"]["payload"]["hypothesis"] == "시립도서관은 평일 저녁 6시에 문을 닫는다."
        assert "target_label" not in seen["item"]["payload"]
    extra = annotator_in(project)
    assert api(extra).get(f"/api/projects/{project.id}/next/").status_code == 204  # k validators reached
    stored = Annotation.objects.filter(item=item)
    assert stored.filter(stage="writing").get().annotator == writer
    assert sorted(a.payload["label"] for a in stored.filter(stage="validation")) == [
        "contradiction", "contradiction", "neutral"]
    assert writer.pk not in stored.filter(stage="validation").values_list("annotator", flat=True)


def test_mrc_two_stage_flow_with_an_unanswerable_question(make_project, annotator_in, api) -> None:
    project = make_project("mrc", k=2)
    context = "가람시는 이달부터 시립도서관의 평일 운영 시간을 밤 10시까지 연장한다고 14일 밝혔다."
    item = items(project, [{"title": "도서관 야간 개방", "context": context}])[0]
    writer, v1, v2 = (annotator_in(project) for _ in range(3))
    question = "도서관은 주말에 몇 시까지 문을 여나?"
    written = run_stage(api, project, writer, {
        "question": question, "question_type": 3, "answer": None,
        "plausible": {"text": "밤 10시", "start": context.index("밤 10시")}})
    assert written["stage"] == "writing"
    assert Item.objects.get(pk=item.pk).payload["question"] == question
    assert api(writer).get(f"/api/projects/{project.id}/next/").status_code == 204
    seen = run_stage(api, project, v1, {"answer": None})
    assert seen["stage"] == "validation" and seen["item"]["payload"]["question"] == question
    run_stage(api, project, v2, {"answer": {"text": "밤 10시", "start": context.index("밤 10시")}})
    validations = Annotation.objects.filter(item=item, stage="validation").order_by("annotator_id")
    assert [a.payload["answer"] for a in validations] == [None, {"text": "밤 10시", "start": context.index("밤 10시")}]
    assert api(annotator_in(project)).get(f"/api/projects/{project.id}/next/").status_code == 204


# -- Korean and English ------------------------------------------------------------------------------------


def test_pages_in_korean_from_the_browser_language_and_the_switch(tc_project, annotator_in) -> None:
    annotator = annotator_in(tc_project)
    client = page_client(annotator)
    korean = client.get(reverse("annotation:annotate", args=[tc_project.pk]),
                        HTTP_ACCEPT_LANGUAGE="ko").content.decode()
    assert "제출" in korean and "건너뛰기" in korean and '<html lang="ko">' in korean
    config = json.loads(korean.split('id="workspace-config" type="application/json">')[1].split("</script>")[0])
    assert config["strings"]["submit"] == "제출"
    english = client.get(reverse("annotation:annotate", args=[tc_project.pk]),
                         HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Submit" in english and "제출" not in english
    # The switch in the page header sets the language for the next pages.
    switched = client.post(reverse("set_language"), {"language": "ko", "next": reverse("annotation:home")})
    assert switched.status_code == 302
    assert "내 프로젝트" in client.get(reverse("annotation:home")).content.decode()
    # Guideline text and labels stay as the project wrote them.
    assert "IT과학" in korean and "작업 개요" in korean


def workspace_config(page: str) -> dict[str, Any]:
    return json.loads(page.split('id="workspace-config" type="application/json">')[1].split("</script>")[0])


@pytest.mark.parametrize("slug", slugs())
def test_task_and_stage_titles_show_in_korean_and_english(slug, make_project, annotator_in) -> None:
    """The titles the task type declares (English, marked for translation) on the project page and in the
    workspace, in the request's language."""
    task = get_task_type(slug)
    project = make_project(slug)
    titles = [task.title, *(stage.title for stage in task.stages)]
    with translation.override("ko"):
        korean = [translation.gettext(title) for title in titles]
    assert all(k != e for k, e in zip(korean, titles, strict=True)), "a title without a Korean translation"
    detail = reverse("annotation:project-detail", args=[project.pk])
    annotate = reverse("annotation:annotate", args=[project.pk])
    manager, annotator = page_client(project.created_by), page_client(annotator_in(project))
    for language, shown, hidden in (("ko", korean, titles), ("en", titles, korean)):
        page = html.unescape(manager.get(detail, HTTP_ACCEPT_LANGUAGE=language).content.decode())
        assert f"{task.klue_name} · {shown[0]}" in page
        assert all(f"<td>{title}</td>" in page for title in shown[1:])
        assert not any(f"<td>{title}</td>" in page for title in hidden[1:] if title not in shown)
        config = workspace_config(annotator.get(annotate, HTTP_ACCEPT_LANGUAGE=language).content.decode())
        assert list(config["stages"].values()) == shown[1:]


@pytest.mark.parametrize(("slug", "wording"), [("nli", ["NLI · 자연어 추론", "<td>가설 작성</td>", "<td>검증</td>"]),
                                               ("mrc", ["기계 독해", "<td>질문 작성</td>", "<td>질문에 답하기</td>"]),
                                               ("tc", ["YNAT · 주제 분류", "<td>라벨링</td>"])])
def test_the_titles_keep_their_korean_wording(slug, wording, make_project) -> None:
    project = make_project(slug)
    page = page_client(project.created_by).get(reverse("annotation:project-detail", args=[project.pk]),
                                               HTTP_ACCEPT_LANGUAGE="ko").content.decode()
    assert all(text in page for text in wording), wording


def test_korean_catalogue_covers_the_manager_pages() -> None:
    with translation.override("ko"):
        for english in ("Your projects", "New project", "Members", "Items", "Publish new version",
                        "Acknowledge", "Start annotating", "Keyboard shortcuts"):
            assert translation.gettext(english) != english, english


