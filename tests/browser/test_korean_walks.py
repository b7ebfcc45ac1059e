"""Two walks through the console in a Korean browser, one page after another as a user goes.

A manager changes the project's settings, then (once annotation has started) finds the options that are locked,
reads the agreement dashboard, searches the disagreement list for a Korean word and filters it by a choice,
adjudicates the open disagreements one after another with "다음 판정 항목", and ends on the gold page.

A maintainer builds a release from the form and follows its build on the page while it runs, tries to reuse the
version and is refused by the field with the next free version proposed, publishes through the confirmation page
and downloads a file, which is byte for byte the released one.

On every page: the headings are Korean and :func:`tests.site.visible_text.offending_text` finds neither a raw
identifier nor English (the users' own data, given as ``data``, aside). tests/browser/test_release_publish.py
covers the building → passed switch and the confirmation page's wording; this walk builds for real instead.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from annotation import services
from annotation.agreement import services as agreement_services
from annotation.gold.services import gold_compute
from annotation.models import Annotation, GoldLabel, GoldStatus, Role
from exports import selectors as export_selectors
from exports.models import Release, ReleaseStatus
from exports.tasks import release_build_task
from tests.builders import load_records, sample_records
from tests.site.visible_text import offending_text

from .conftest import PASSWORD, SCREENSHOTS, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HANGUL = re.compile(r"[가-힣]")
TITLES = {"seoul": "서울시청에서 기자회견 열려", "busan": "부산 해운대 축제", "economy": "금리 인상 소식"}
#: Three annotators' labels per item: two items end in a three-way split (needs adjudication), one in a majority.
VOTES = {"seoul": ["사회", "경제", "정치"], "busan": ["생활문화", "생활문화", "사회"],
         "economy": ["세계", "경제", "정치"]}


@pytest.fixture
def korean_page(browser: Any, live_server: Any) -> Iterator[Any]:
    context = browser.new_context(base_url=live_server.url, locale="ko-KR", viewport={"width": 1366, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.set_default_navigation_timeout(60_000)  # the first request of a session loads the URL conf
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    context.route("**/*", lambda route: route.abort())
    context.close()
    assert errors == [], f"JavaScript errors on the page: {errors}"


def check_korean(page: Any, data: list[str]) -> None:
    """The page is in Korean: its headings carry Hangul, and nothing visible is an identifier or English."""
    page.wait_for_load_state()
    assert page.locator("html").get_attribute("lang") == "ko"
    # A subtree marked as another language (an English dataset card) keeps its own headings.
    headings = page.eval_on_selector_all("main h1, main h2, main h3", "els => els"
                                         ".filter(e => e.closest('[lang]').lang.startsWith('ko'))"
                                         ".map(e => e.innerText.trim())")
    assert headings and all(HANGUL.search(text) for text in headings), (page.url, headings)
    assert offending_text(page.content(), data=data) == [], page.url


def choose(page: Any, coder: Any, external_id: str) -> None:
    """Start the decision from this annotator's answer on the item."""
    answer = Annotation.objects.get(annotator=coder, item__external_id=external_id)
    page.locator(f"input[name=choice][value='{answer.pk}']").check()


def rows(page: Any) -> set[str]:
    return set(page.locator("table.disagreement tbody tr td:first-child").all_inner_texts())


def test_a_manager_walks_settings_agreement_adjudication_and_gold(korean_page, django_user_model) -> None:
    page = korean_page
    manager = django_user_model.objects.create_user("manager-walk", password=PASSWORD)
    project = services.project_create(name="뉴스 분류 2026", slug="walk-tc", task_type="tc", created_by=manager,
                                      annotators_per_item=2)
    coders = [django_user_model.objects.create_user(f"coder{i}", password=PASSWORD) for i in range(3)]
    for coder in coders:
        services.membership_set(project=project, user=coder, role=Role.ANNOTATOR)
        services.guideline_acknowledge(user=coder, project=project)
    for key, title in TITLES.items():
        services.item_create(project=project, payload={"title": title}, external_id=key)
    data = [project.name, manager.username, *(c.username for c in coders), *TITLES, *TITLES.values()]

    # Settings, before any annotation: three annotators per item, a shorter lease, a new label named in both languages.
    sign_in(page, manager.username, f"/projects/{project.pk}/")
    page.locator("nav.tabs a[href$='/settings/']").click()
    page.wait_for_url(f"**/projects/{project.pk}/settings/")
    check_korean(page, data)
    assert page.locator("nav.tabs a.active").inner_text() == "설정"
    assert page.locator(".settings-labels .locked").count() == 0  # nothing annotated: the labels are open
    page.get_by_label("항목당 주석자 수", exact=True).fill("3")
    page.locator("input[name=lease_minutes]").fill("20")
    page.locator("input[name=new_value]").fill("날씨")
    page.locator("input[name=new_name_ko]").fill("날씨")
    page.locator("input[name=new_name_en]").fill("weather")
    page.get_by_role("button", name="설정 저장").click()
    page.wait_for_selector(".messages")
    assert "설정을 저장했습니다." in page.locator(".messages").inner_text()
    check_korean(page, data)
    project.refresh_from_db()
    assert project.annotators_per_item == 3 and project.options["lease_minutes"] == 20
    assert project.label_schema["label_names"]["날씨"] == {"ko": "날씨", "en": "weather"}

    # The annotators label every item (three each: the new setting); the label schema is now locked, with why.
    for n, coder in enumerate(coders):
        for _ in TITLES:
            assignment = services.assignment_next(project=project, user=coder)
            services.annotation_submit(project=project, user=coder, item_id=assignment.item_id,
                                       payload={"label": VOTES[assignment.item.external_id][n]})
    page.reload()
    check_korean(page, data)
    locked = page.locator(".settings-labels .locked").inner_text()
    assert locked.startswith("잠김:") and "주석 9개가 이 라벨을 쓰고 있습니다." in locked
    assert "새 프로젝트로 만드세요" in page.locator(".settings-locked").inner_text()  # the task type, always
    page.screenshot(path=str(SCREENSHOTS / "settings-locked-ko.png"), full_page=True)

    # The agreement dashboard: Korean headings, the coefficient by its human name.
    agreement_services.report_now(project)
    gold_compute(project)
    page.locator("nav.tabs a[href$='/agreement/']").click()
    page.wait_for_url(f"**/projects/{project.pk}/agreement/")
    check_korean(page, data)
    assert "계수" in page.locator("main h2").all_inner_texts()
    coefficients = page.locator("table.coefficients").inner_text()
    assert "Krippendorff 알파" in coefficients and "krippendorff_alpha" not in coefficients

    # The disagreement list: a Korean substring, then a status chosen from a select.
    page.goto(f"/projects/{project.pk}/agreement/items/")
    check_korean(page, data)
    assert rows(page) == set(TITLES)
    page.get_by_label("텍스트 검색").fill("해운대")
    page.get_by_label("텍스트 검색").press("Enter")
    page.wait_for_url("**q=*")
    assert rows(page) == {"busan"}
    check_korean(page, data)
    page.get_by_label("텍스트 검색").fill("")
    page.locator("#f-gold").select_option(label="판정 필요")
    page.get_by_role("button", name="필터").click()
    page.wait_for_url("**gold_status=needs_adjudication*")
    assert rows(page) == {"seoul", "economy"}
    check_korean(page, data)

    # Adjudication: the first open item, an answer chosen, then "다음 판정 항목" to the other one.
    page.get_by_role("link", name="seoul", exact=True).click()
    page.wait_for_url("**/agreement/items/*/")
    check_korean(page, data)
    page.locator("a[href$='/adjudicate/']").first.click()
    page.wait_for_url("**/adjudicate/")
    check_korean(page, data)
    choose(page, coders[1], "seoul")
    page.locator("#reason").fill("기자회견 내용은 경제 정책")
    page.get_by_role("button", name="결정 저장").click()
    page.wait_for_url("**/agreement/items/*/")
    check_korean(page, data)
    seoul = GoldLabel.objects.get(item__external_id="seoul")
    assert seoul.status == GoldStatus.ADJUDICATED and seoul.payload["label"] == "경제"
    page.get_by_role("link", name="다음 판정 항목").click()
    page.wait_for_url("**/adjudicate/")
    check_korean(page, data)
    assert "economy" in page.locator("main").inner_text()
    choose(page, coders[0], "economy")
    page.locator("#reason").fill("국제 금리 기사")
    page.get_by_role("button", name="결정 저장").click()
    page.wait_for_url("**/agreement/items/*/")
    page.get_by_role("link", name="다음 판정 항목").click()
    page.wait_for_url("**/gold/?status=needs_adjudication")
    assert "판정할 불일치 항목이 더 이상 없습니다." in page.locator(".messages").inner_text()
    check_korean(page, data)

    # The gold page: every item decided, shown by label name and status name.
    page.goto(f"/projects/{project.pk}/gold/?status=adjudicated")
    check_korean(page, data)
    assert page.locator("h2.gold-showing").inner_text() == "표시 중: 관리자가 판정 (2)"
    text = page.locator("main").inner_text()
    assert "경제" in text and "세계" in text and "{'label'" not in text
    page.screenshot(path=str(SCREENSHOTS / "gold-adjudicated-ko.png"), full_page=True)
    assert set(GoldLabel.objects.filter(item__project=project).values_list("status", flat=True)) == {
        GoldStatus.ADJUDICATED, GoldStatus.RESOLVED}


def test_a_maintainer_builds_follows_publishes_and_downloads(korean_page, make_project, make_user, add_member,
                                                            release_root, monkeypatch) -> None:
    page = korean_page
    project = make_project("tc")
    load_records(project, sample_records("tc", 200))
    maintainer = add_member(project, make_user("maintainer-walk"), Role.MAINTAINER)
    maintainer.set_password(PASSWORD)
    maintainer.save()
    data = [project.name, project.created_by.username, maintainer.username]
    # The build is held back as if no worker had taken it yet; the test then runs it, as the worker would.
    queued: list[int] = []
    monkeypatch.setattr(release_build_task, "delay", queued.append)

    sign_in(page, maintainer.username, f"/projects/{project.pk}/releases/")
    check_korean(page, data)
    assert page.get_by_label("버전").input_value() == "1.0.0"
    page.get_by_role("button", name="빌드", exact=True).click()
    page.wait_for_url(re.compile(r"/releases/\d+/(#.*)?$"))  # the form posts to its own anchor
    release = Release.objects.get(project=project, version="1.0.0")
    assert queued == [release.pk]
    check_korean(page, data)
    assert page.locator("#release-progress").inner_text().startswith("빌드 중:")
    assert page.locator("#release-publish").count() == 0 and page.locator("#release-archive").count() == 0
    page.evaluate("window.stillThisPage = true")

    # The page's polls wait in the browser while the build writes: on SQLite's shared in-memory test database a
    # read overlapping the build's writes locks the table (on PostgreSQL they would not meet). Once the build is
    # done they go on, and the page learns the outcome from them.
    page.route(re.compile(r"[?&]part=live"), lambda route: route.continue_())
    release_build_task.apply(args=[release.pk])  # the worker's run, while the page watches
    page.wait_for_selector("#release-state", timeout=60_000)
    assert page.evaluate("window.stillThisPage") is True  # the live region, not a reload
    release.refresh_from_db()
    assert release.status == ReleaseStatus.PASSED
    assert page.locator("#release-status").inner_text() == "통과"
    assert page.locator("#release-state").inner_text() == "빌드와 점검을 마쳤습니다. 게시할 수 있습니다."
    check_korean(page, data)

    # The same version again is refused by the field, in Korean, with the next free one proposed.
    page.goto(f"/projects/{project.pk}/releases/")
    assert page.get_by_label("버전").input_value() == "1.0.1"
    page.get_by_label("버전").fill("1.0.0")
    page.get_by_role("button", name="빌드", exact=True).click()
    page.wait_for_url(f"**/projects/{project.pk}/releases/#build-release")
    field = page.locator(".field.has-error", has=page.locator("input[name=version]"))
    assert field.locator(".error").inner_text() == (
        "버전 1.0.0은(는) 이미 있으며, 버전은 다시 쓸 수 없습니다. 다음으로 쓸 수 있는 버전은 1.0.1입니다.")
    check_korean(page, data)
    page.locator("#build-release").screenshot(path=str(SCREENSHOTS / "release-version-taken-ko.png"))
    assert Release.objects.filter(project=project).count() == 1 and queued == [release.pk]
    assert page.get_by_label("버전").input_value() == "1.0.1"  # the proposal is in the field: one click builds it
    page.get_by_role("button", name="빌드", exact=True).click()
    page.wait_for_url(re.compile(r"/releases/\d+/(#.*)?$"))
    assert page.locator("main h2").first.inner_text().startswith("배포 1.0.1")
    assert queued == [release.pk, Release.objects.get(project=project, version="1.0.1").pk]

    # Publish through the confirmation page (its wording is test_release_publish.py's), then download a file.
    page.goto(f"/projects/{project.pk}/releases/{release.pk}/")
    page.locator("#release-publish").click()
    page.wait_for_url("**/publish/")
    check_korean(page, data)
    page.get_by_role("button", name="1.0.0 최종 게시").click()
    page.wait_for_url(f"**/releases/{release.pk}/")
    assert page.locator("#release-status").inner_text() == "게시됨"
    check_korean(page, data)
    file = export_selectors.release_files(release).get(path__endswith="train.jsonl")
    link = page.get_by_role("link", name=file.path, exact=True)
    with page.expect_download() as download_info:
        link.click()
    download = download_info.value
    assert download.suggested_filename == Path(file.path).name
    content = Path(download.path()).read_bytes()
    released = release_root / export_selectors.release_folder(release).name / file.path
    assert content == released.read_bytes() and len(content) == file.size > 0
    assert hashlib.sha256(content).hexdigest() == file.sha256  # the checksum recorded at build time
    assert len(content.decode().splitlines()) == file.records
