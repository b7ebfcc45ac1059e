"""The release pages as a Korean maintainer reads them, and their irreversible steps.

* Korean pages are Korean: the release list, a release and its publish confirmation show no identifier and
  no English outside the dataset card (marked ``lang="en"``), with the words of docs/glossary.md.
* Publishing takes a confirmation that says what freezes; a POST without it publishes nothing.
* A version that exists is refused by its field, in the reader's language, and the form proposes the next
  free version.
* A build's state is followed live (``?part=live``), and what the page says matches the release's state.
"""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Item, Role, User
from exports import selectors
from exports.models import Release, ReleaseStatus
from tests.builders import load_records, sample_records
from tests.site.visible_text import offending_text

pytestmark = pytest.mark.django_db


@pytest.fixture
def team(make_project, make_user, add_member):
    manager = make_user(can_create=True)
    project = make_project("tc", manager=manager)
    load_records(project, sample_records("tc", 200))  # 20 dev records at 0.8/0.1/0.1: enough for a verdict
    maintainer = add_member(project, make_user(), Role.MAINTAINER)
    return project, manager, maintainer


def korean(user: User) -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE="ko")
    client.force_login(user)
    return client


def build(client: Client, project, version: str = "1.0.0", **fields) -> Release:
    data = {"version": version, "mode": "ratios", "splits": "0.8,0.1,0.1", "seed": "4",
            "formats": ["klue", "jsonl", "csv", "parquet"], **fields}
    response = client.post(reverse("exports:release-list", args=[project.pk]), data)
    assert response.status_code == 302, response.content.decode()[-3000:]
    return Release.objects.get(project=project, version=version)


def users_data(project, release: Release | None = None) -> list[str]:
    """What the pages show as it was given: names, ids, paths and checksums of the project's files."""
    data = [project.name, *User.objects.values_list("username", flat=True),
            *Item.objects.filter(project=project).values_list("external_id", flat=True),
            *(r["rater"] for r in selectors.rater_ids(project))]
    if release is not None:
        data += [str(selectors.release_folder(release)), release.version]
        data += [value for f in release.files.all() for value in (f.path, f.sha256, f.sha256[:12] + "…")]
    return data


def text_of(html: str, element_id: str) -> str:
    """The text inside the element with this id (tags removed)."""
    match = re.search(rf'id="{element_id}"[^>]*>(.*?)</(?:div|section|p|h2|form)>', html, re.S)
    assert match, element_id
    return " ".join(re.sub(r"<[^>]+>", " ", match.group(1)).split())


def test_the_release_pages_read_in_korean(team, release_root, django_capture_on_commit_callbacks):
    project, manager, maintainer = team
    client = korean(manager)
    empty = client.get(reverse("exports:release-list", args=[project.pk])).content.decode()
    assert "아직 배포가 없습니다." in empty and "아직 구성원이 없습니다." not in empty
    assert ">빌드</button>" in empty and "빌드 중" not in empty  # the button builds; it is not "Building"
    assert offending_text(empty, data=users_data(project)) == []
    with django_capture_on_commit_callbacks(execute=True):
        release = build(client, project)
    assert Release.objects.get(pk=release.pk).status == ReleaseStatus.PASSED

    client = korean(maintainer)
    detail = client.get(reverse("exports:release-detail", args=[project.pk, release.pk])).content.decode()
    assert "<h2>데이터셋 카드</h2>" in detail and "데이터셋 관리자" not in detail
    assert "매크로 F1" in detail and "macro_f1" not in detail.split('lang="en"')[0]
    assert "학습 160" in detail and "개발 20" in detail  # the splits by their Korean names
    assert "프로젝트의 정답 라벨" in detail or "주석에 작업 유형의 규칙" in detail  # where the gold came from
    assert "빌드와 점검을 마쳤습니다. 게시할 수 있습니다." in detail and "빌드 중" not in detail
    assert "주석에 쓰인 지침 버전" in detail and "빠진 항목" in detail
    assert offending_text(detail, data=users_data(project, release)) == []
    confirm = client.get(reverse("exports:release-publish", args=[project.pk, release.pk])).content.decode()
    assert "게시는 되돌릴 수 없습니다." in confirm
    assert offending_text(confirm, data=users_data(project, release)) == []

    published = client.post(reverse("exports:release-publish", args=[project.pk, release.pk]),
                            {"confirm": "publish"}, follow=True).content.decode()
    assert 'id="release-status">게시됨</span>' in published and "게시일" not in published
    assert offending_text(published, data=users_data(project, release)) == []
    listing = client.get(reverse("exports:release-list", args=[project.pk])).content.decode()
    assert ">게시됨</span>" in listing
    assert offending_text(listing, data=users_data(project, release)) == []


def test_kept_splits_are_named_as_kept(team, release_root, django_capture_on_commit_callbacks):
    project, manager, _maintainer = team
    Item.objects.filter(project=project).update(split="train")
    client = korean(manager)
    with django_capture_on_commit_callbacks(execute=True):
        release = build(client, project, mode="keep", formats=["jsonl"])
    detail = client.get(reverse("exports:release-detail", args=[project.pk, release.pk])).content.decode()
    assert "가져올 때의 분할 유지" in detail and "아무것도 가져오지 않음" not in detail


def test_publishing_asks_first_and_a_post_without_the_confirmation_publishes_nothing(
        team, release_root, django_capture_on_commit_callbacks):
    project, manager, maintainer = team
    with django_capture_on_commit_callbacks(execute=True):
        release = build(korean(manager), project)
    client = korean(maintainer)
    url = reverse("exports:release-publish", args=[project.pk, release.pk])
    detail = client.get(reverse("exports:release-detail", args=[project.pk, release.pk])).content.decode()
    assert f'href="{url}"' in detail  # the page's Publish leads to the confirmation
    asked = client.post(url)  # e.g. a form of an older page, or a replayed request
    assert asked.status_code == 200
    page = asked.content.decode()
    assert "게시는 되돌릴 수 없습니다." in page and 'name="confirm" value="publish"' in page
    assert "다시 빌드하거나 삭제할 수 없습니다" in page and "버전 1.0.0은(는) 다른 배포에 다시 쓸 수 없습니다" in page
    assert Release.objects.get(pk=release.pk).status == ReleaseStatus.PASSED
    done = client.post(url, {"confirm": "publish"})
    assert done.status_code == 302 and Release.objects.get(pk=release.pk).status == ReleaseStatus.PUBLISHED
    # Managers build but do not publish: not even the question is theirs.
    assert korean(manager).get(url).status_code == 403


def test_an_inconclusive_release_is_published_only_with_a_reason_on_the_confirmation(
        team, release_root, django_capture_on_commit_callbacks):
    project, manager, maintainer = team
    with django_capture_on_commit_callbacks(execute=True):
        release = build(korean(manager), project)
    Release.objects.filter(pk=release.pk).update(status=ReleaseStatus.INCONCLUSIVE)
    client = korean(maintainer)
    url = reverse("exports:release-publish", args=[project.pk, release.pk])
    page = client.get(url).content.decode()
    assert 'id="publish-override"' in page and 'id="override-reason"' in page
    refused = client.post(url, {"confirm": "publish", "override": "on", "override_reason": " "})
    assert refused.status_code == 200 and Release.objects.get(pk=release.pk).status == ReleaseStatus.INCONCLUSIVE
    assert "결론 없이 게시하려면 상자에 표시하고 사유를 적으세요." in refused.content.decode()
    client.post(url, {"confirm": "publish", "override": "on", "override_reason": "dev 세트가 작아도 공개 필요"})
    release.refresh_from_db()
    assert release.status == ReleaseStatus.PUBLISHED and release.publish_override == "dev 세트가 작아도 공개 필요"


def test_a_duplicate_version_is_refused_by_its_field_in_korean_and_the_next_free_one_is_proposed(
        team, release_root, django_capture_on_commit_callbacks):
    project, manager, _maintainer = team
    client = korean(manager)
    url = reverse("exports:release-list", args=[project.pk])
    assert 'name="version" value="1.0.0"' in client.get(url).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        build(client, project, version="1.0.0")
    form = client.get(url).content.decode()
    assert 'name="version" value="1.0.1"' in form  # not the version that exists
    again = client.post(url, {"version": "1.0.0", "mode": "keep", "formats": ["jsonl"]})
    assert again.status_code == 200 and Release.objects.filter(project=project).count() == 1
    page = again.content.decode()
    field = re.search(r'<div class="field has-error">\s*<label for="id_version">.*?</div>', page, re.S)
    assert field, "the error is shown by the version field"
    assert "버전 1.0.0은(는) 이미 있으며" in field.group(0) and "1.0.1" in field.group(0)
    assert 'name="version" value="1.0.1"' in field.group(0)  # the field holds the proposed version, not the taken one
    assert "already" not in page
    assert 'action="#build-release"' in page and 'id="build-release"' in page  # the answer scrolls to the form


@pytest.mark.parametrize(("versions", "expected"), [
    ([], "1.0.0"), (["1.0.0"], "1.0.1"), (["0.1.0", "1.2.3", "1.0.9"], "1.2.4"), (["2.1.0-rc.1"], "2.1.1"),
])
def test_the_next_free_version_follows_the_highest(make_project, versions, expected):
    project = make_project("tc")
    for version in versions:
        Release.objects.create(project=project, version=version, status=ReleaseStatus.ERROR)
    assert selectors.next_free_version(project) == expected


def test_a_build_is_followed_live_and_its_words_match_its_state(team, release_root):
    project, manager, _maintainer = team
    client = korean(manager)
    response = client.post(reverse("exports:release-list", args=[project.pk]), {
        "version": "1.0.0", "mode": "keep", "formats": ["jsonl"]})  # queued: no worker runs it in this test
    release = Release.objects.get(project=project)
    page = client.get(response.url)
    # No "being built" message that would stay above the release after it passed: the live part says it.
    assert not list(page.context["messages"])
    html = page.content.decode()
    assert "live_region.js" in html and 'data-live-done="0"' in html and "빌드 중: 작업 프로세스 대기 중." in html
    live = reverse("exports:release-detail", args=[project.pk, release.pk]) + "?part=live"
    Release.objects.filter(pk=release.pk).update(progress={"phase": "files", "done": 2, "total": 3})
    part = client.get(live).content.decode()
    assert part.lstrip().startswith('<div id="release-live"') and "<html" not in part
    assert "빌드 중: 파일 쓰는 중. 2 / 3" in part and 'data-live-done="0"' in part
    Release.objects.filter(pk=release.pk).update(status=ReleaseStatus.PASSED, progress={"phase": "done"})
    part = client.get(live).content.decode()
    assert 'data-live-done="1"' in part and "빌드 중" not in part and "게시할 수 있습니다" in part


def test_why_items_were_left_out_is_said_in_words():
    from django.utils import translation

    from exports.names import exclusion_name, metric_name

    with translation.override("ko"):
        assert exclusion_name("screening_needs_review") == "검토 필요 (검수)"
        assert exclusion_name("gold_needs_adjudication") == "판정 필요 (정답)"
        assert exclusion_name("open_flag") == "미해결 신고" and exclusion_name("unlabelled") == "주석 없음"
        assert metric_name("joint_goal_accuracy") == "결합 목표 정확도 (JGA)"
    with translation.override("en"):
        assert exclusion_name("screening_needs_review") == "Needs review (screening)"
        assert metric_name("macro_f1") == "macro F1"


def test_a_failed_verification_names_the_problem_in_korean(team, release_root, django_capture_on_commit_callbacks):
    project, manager, _maintainer = team
    client = korean(manager)
    with django_capture_on_commit_callbacks(execute=True):
        release = build(client, project, formats=["jsonl"])
    (selectors.release_folder(release).local / "jsonl" / "dev.jsonl").write_text("{}\n", encoding="utf-8")
    page = client.post(reverse("exports:release-verify", args=[project.pk, release.pk]), follow=True)
    text = page.content.decode()
    assert "검증 실패: 바뀐 파일: jsonl/dev.jsonl" in text and "changed:" not in text


def test_an_unchecked_release_says_why_in_korean(team, release_root, django_capture_on_commit_callbacks):
    project, manager, _maintainer = team
    client = korean(manager)
    with django_capture_on_commit_callbacks(execute=True):
        release = build(client, project, formats=["jsonl"])  # no KLUE files: the check cannot run
    assert Release.objects.get(pk=release.pk).status == ReleaseStatus.UNCHECKED
    detail = client.get(reverse("exports:release-detail", args=[project.pk, release.pk])).content.decode()
    korean_part = detail.split('<div lang="en">')[0]  # the dataset card after it is English
    assert "배포에 학습하고 채점할 KLUE 파일이 없습니다" in korean_part and "could not run" not in korean_part
    assert "빌드는 끝났지만 점검 결과 때문에 게시할 수 없습니다." in detail
    assert offending_text(detail, data=users_data(project, release)) == []


def test_every_metric_of_every_task_type_has_a_name():
    from annotation.task_types import all_task_types
    from exports.names import METRICS

    for task in all_task_types():
        metrics = task.metrics()
        assert {*metrics.official, *metrics.extra, metrics.primary} <= set(METRICS), task.slug


@pytest.mark.django_db
def test_a_project_without_items_offers_no_build_but_says_what_comes_first(make_project, make_user, add_member):
    manager = make_user(can_create=True)
    project = make_project("tc", manager=manager)
    maintainer = add_member(project, make_user(), Role.MAINTAINER)
    url = reverse("exports:release-list", args=[project.pk])
    import_url = reverse("datasets_build:project-import", args=[project.pk])
    page = korean(manager).get(url).content.decode()
    assert "이 프로젝트에는 아직 항목이 없어 배포할 것이 없습니다." in page and f'href="{import_url}"' in page
    assert 'action="#build-release"' not in page
    # A maintainer, who does not import, is told who does.
    assert "먼저 프로젝트 관리자가 항목을 가져와야 합니다." in korean(maintainer).get(url).content.decode()
    load_records(project, sample_records("tc", 5))
    assert 'action="#build-release"' in korean(manager).get(url).content.decode()
