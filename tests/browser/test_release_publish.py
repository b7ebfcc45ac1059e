"""A Korean maintainer follows a release build live and publishes it through the confirmation.

The build's state reaches the open page without a reload (the live region), the "building" line gives way
to the release's real state, and publishing takes the confirmation page's own button.
"""

from __future__ import annotations

from typing import Any

import pytest

from annotation.models import Role
from exports import services as export_services
from exports.models import Release, ReleaseStatus
from tests.builders import load_records, sample_records

from .conftest import PASSWORD, SCREENSHOTS, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_build_is_followed_live_then_published_after_confirming(browser: Any, live_server: Any, make_project,
                                                                   make_user, add_member, release_root) -> None:
    project = make_project("tc")
    load_records(project, sample_records("tc", 200))
    maintainer = add_member(project, make_user("maintainer-ko"), Role.MAINTAINER)
    maintainer.set_password(PASSWORD)
    maintainer.save()
    built = export_services.release_build(project, version="1.0.0", splits="0.8,0.1,0.1", seed=4,
                                          user=project.created_by)
    assert built.status == ReleaseStatus.PASSED
    # As while a worker builds it: the page opens on a release still being built.
    Release.objects.filter(pk=built.pk).update(status=ReleaseStatus.BUILDING,
                                               progress={"phase": "files", "done": 1, "total": 3})
    context = browser.new_context(base_url=live_server.url, locale="ko-KR", viewport={"width": 1366, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        detail = f"/projects/{project.pk}/releases/{built.pk}/"
        sign_in(page, maintainer.username, detail)
        assert page.locator("#release-progress").inner_text().startswith("빌드 중: 파일 쓰는 중.")
        assert page.locator("#release-publish").count() == 0
        page.evaluate("window.stillThisPage = true")  # a reload would lose it
        page.screenshot(path=str(SCREENSHOTS / "release-building-ko.png"))

        Release.objects.filter(pk=built.pk).update(status=ReleaseStatus.PASSED, progress={"phase": "done"})
        page.wait_for_selector("#release-state")
        assert page.evaluate("window.stillThisPage") is True
        assert "게시할 수 있습니다" in page.locator("#release-state").inner_text()
        assert page.locator("#release-progress").count() == 0 and "빌드 중" not in page.locator("main").inner_text()
        assert page.locator("#release-status").inner_text() == "통과"
        page.screenshot(path=str(SCREENSHOTS / "release-passed-ko.png"))

        page.locator("#release-publish").click()
        page.wait_for_url(f"**{detail}publish/")
        assert page.locator("#publish-confirm h2").inner_text() == "배포 1.0.0을(를) 게시할까요?"
        assert "게시는 되돌릴 수 없습니다." in page.locator("#publish-confirm").inner_text()
        assert Release.objects.get(pk=built.pk).status == ReleaseStatus.PASSED  # asking publishes nothing
        page.screenshot(path=str(SCREENSHOTS / "release-publish-confirm-ko.png"))
        page.get_by_role("button", name="1.0.0 최종 게시").click()
        page.wait_for_url(f"**{detail}")
        assert page.locator("#release-status").inner_text() == "게시됨"
        assert Release.objects.get(pk=built.pk).status == ReleaseStatus.PUBLISHED
        assert errors == []
    finally:
        context.close()
