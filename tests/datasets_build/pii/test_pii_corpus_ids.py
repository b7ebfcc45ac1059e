"""PII in the identifiers a corpus brings — its raters' ids and its guids — never reaches any output
(issue 23, finding 1; docs/pii.md "Identifiers").

YNAT records whose ``annotations.annotators`` hold an e-mail address and a phone number, and whose guids embed a
phone number, an e-mail address and a resident registration number, are uploaded through the import API with the
project's default policy. The manager computes agreement and gold and builds a release in every format; then every
release file, the upload folder, every GET route of the API and the pages (manager, annotator, superuser), every
admin changelist, every log record (SQL included) and every row of every table is scanned for the raw values.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import connection

from annotation.models import Annotation, Item, Role, User
from datasets_build.models import ImportStatus
from exports.models import BUILT, Release
from tests.builders import client_for
from tests.datasets_build.pii.leaks import (
    PLANTED,
    Leaks,
    Needle,
    Team,
    json_call,
    scan_admin,
    scan_database,
    scan_files,
    scan_routes,
    spellings,
)

RATERS = [("email", "hong.gildong77@naver.com"), ("phone", "010-2345-6789")]
GUIDS = [("phone", "contact-010-9876-5432", "010-9876-5432"), ("email", "mail-lee.younghee@daum.net",
                                                                 "lee.younghee@daum.net"),
         ("rrn", "rrn-800101-1234567", "800101-1234567")]
#: The raw values, in every spelling the scan knows, and an e-mail address's mailbox alone.
NEEDLES = [Needle(pii_type, value, spelling, form) for pii_type, value in
           [*RATERS, *((t, v) for t, _, v in GUIDS)] for spelling, form in spellings(pii_type, value).items()]
NEEDLES += [Needle("email", value, "mailbox", value.partition("@")[0]) for _, value in RATERS[:1]]
NEEDLES += [Needle("email", value, "mailbox", value.partition("@")[0]) for t, _, value in GUIDS if t == "email"]

TITLES = ["5억원 무이자 융자는 되고 7천만원 이사비는 안된다", "류현진 시즌 첫 승 달성…다저스 연승",
          "정부, 반도체 수출 규제 대응책 발표", "유엔 안보리 북한 제재 결의안 채택",
          "새 스마트폰 출시 앞두고 사전 예약 시작", "국회 본회의 예산안 처리 무산",
          "올해 독감 백신 무료 접종 대상 확대"]
LABELS = ["사회", "스포츠", "경제", "세계", "IT과학", "정치", "생활문화"]


def ynat_corpus() -> bytes:
    records = []
    for i, (title, label) in enumerate(zip(TITLES, LABELS, strict=True)):
        guid = GUIDS[i][1] if i < len(GUIDS) else f"ynat-v1_dev_{i:05d}"
        raters = [RATERS[0][1], RATERS[1][1], "03"] if i % 2 == 0 else [RATERS[1][1], "03", RATERS[0][1]]
        records.append({
            "guid": guid, "title": title, "predefined_news_category": label, "label": label,
            "annotations": {"annotators": raters, "annotations": {
                "first-scope": [label, label, LABELS[(i + 1) % len(LABELS)]],
                "second-scope": ["해당없음"] * 3, "third-scope": ["해당없음"] * 3}},
            "url": f"https://news.example.com/read?aid={i:010d}", "date": "2017.09.21. 오후 5:09"})
    return json.dumps(records, ensure_ascii=False).encode("utf-8")


@pytest.fixture
def team(make_user) -> Team:
    return Team(manager=make_user("ids-manager", can_create=True), maintainer=make_user("ids-maintainer"),
                annotators=[make_user("ids-annotator")],
                superuser=User.objects.create_superuser("ids-root", password="pw-goldset-123"))


@pytest.mark.django_db
def test_rater_ids_and_guids_with_pii_never_leave(team, tmp_path, settings, every_log,
                                                  django_capture_on_commit_callbacks):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.GOLDSET_RELEASE_ROOT = str(tmp_path / "releases")
    manager = client_for(team.manager)
    project_id = json_call(manager, "post", "/api/projects/", {"name": "YNAT ids", "slug": "ynat-ids",
                                                               "task_type": "tc", "annotators_per_item": 3})["id"]
    for user, role in ((team.maintainer, Role.MAINTAINER), (team.annotators[0], Role.ANNOTATOR)):
        json_call(manager, "post", f"/api/projects/{project_id}/members/", {"username": user.username, "role": role})
    base = f"/api/projects/{project_id}"
    with django_capture_on_commit_callbacks(execute=True):
        response = manager.post(f"{base}/imports/", {"file": SimpleUploadedFile("ynat.json", ynat_corpus()),
                                                     "format": "klue"})
    assert response.status_code == 202, response.content
    job = json_call(manager, "get", f"{base}/imports/{response.json()['id']}/")
    assert job["status"] == ImportStatus.SUCCEEDED, job["errors"]
    with django_capture_on_commit_callbacks(execute=True):
        json_call(manager, "get", f"{base}/agreement/")
    json_call(manager, "post", f"{base}/gold/")
    out = io.StringIO()
    call_command("build_release", "ynat-ids", "--version", "1.0.0", "--format", "klue,jsonl,csv,parquet",
                 "--check-margin", "-100", "--out", str(tmp_path / "releases"), "--json", stdout=out)
    release = Release.objects.get(project_id=project_id)
    # Seven records give no verdict (inconclusive); what matters here is that every file was written.
    assert release.status in BUILT, release.baseline_check

    connection.force_debug_cursor = False
    leaks = Leaks(NEEDLES)
    assert scan_files(tmp_path / "releases", leaks, "release file") >= 4
    scan_files(Path(settings.MEDIA_ROOT), leaks, "media file")
    project = release.project
    seen = scan_routes(team.clients(), project, leaks)
    scan_admin(team.clients()["superuser"], leaks, list(Item.objects.filter(project=project)))
    tables = scan_database(leaks)
    leaks.scan("build_release output", out.getvalue())
    leaks.scan("log records (every logger at DEBUG, SQL included)", "\n".join(every_log.lines))
    leaks.assert_none()
    assert {t: job["summary"]["pii"].get(t) for t in ("email", "phone", "rrn")} == {
        t: {"pseudonymized": 1} for t in ("email", "phone", "rrn")}

    # The scan read real outputs: the labels of all three raters, the agreement, the items.
    for url in (f"{base}/annotations/", f"{base}/agreement/", f"{base}/items/", f"/projects/{project_id}/agreement/",
                f"/projects/{project_id}/review/"):
        assert seen.get(url) == 200, (url, seen.get(url))
    assert tables["annotation_item"] == len(TITLES) and len(every_log.lines) > 100
    # The guids' PII was pseudonymized and recorded like a text finding; the raters kept their identity within
    # the project (the same corpus rater is one user), under an opaque name.
    guids = sorted(Item.objects.filter(project=project).values_list("external_id", flat=True))
    assert len(set(guids)) == len(TITLES) and not any(g in guids for _, g, _ in GUIDS)
    found = sorted((f["type"], f["action"]) for item in Item.objects.filter(project=project)
                   for f in item.pii_findings if f["field"] == "guid")
    assert found == [("email", "pseudonymized"), ("phone", "pseudonymized"), ("rrn", "pseudonymized")]
    from datasets_build.batch_services import imported_username

    raters = User.objects.filter(annotations__item__project=project).distinct()
    assert raters.count() == 3 and all(u.is_imported for u in raters)
    assert set(raters.values_list("username", flat=True)) == {imported_username(project, raw)
                                                                 for raw in (*(v for _, v in RATERS), "03")}
    assert Annotation.objects.filter(item__project=project).count() == 3 * len(TITLES)


@pytest.mark.parametrize(("guid", "expected"), [
    ("ynat-v1_dev_00000", "ynat-v1_dev_00000"),
    ("klue-nli-v1_train_24997", "klue-nli-v1_train_24997"),
    ("contact-010-9876-5432", "contact-phone-"),
    ("mail-lee.younghee@daum.net", "email-"),
    ("rrn-800101-1234567", "rrn-rrn-"),
    # A KLUE-like guid whose serial is a phone number is not taken for a plain one.
    ("ynat-v1_dev_01023456789", "ynat-v1_dev_phone-"),
    # Passports: the old form's eight digits, and the 2021 form's seven split by a letter.
    ("pp-M12345678", "pp-passport-"),
    ("pp-M123A4567", "pp-passport-"),
])
def test_guids_are_screened_under_the_policy(guid, expected, settings):
    from datasets_build.pii import resolve_policy
    from datasets_build.pii.apply import scrub_identifier

    new, findings = scrub_identifier(guid, resolve_policy({}))
    assert new.startswith(expected) and (new == guid) == (not findings)
    assert all(f["field"] == "guid" and f["action"] == "pseudonymized" for f in findings)
    # Stable (a keyed hash, not a per-record counter), so two records' guids stay distinct and re-imports match.
    assert scrub_identifier(guid, resolve_policy({}))[0] == new
    kept, detected = scrub_identifier(guid, resolve_policy({}, "detect"))
    assert kept == guid and [f["action"] for f in detected] == ["detected"] * len(findings)


def test_identifiers_the_detectors_skip_hold_no_pii():
    """The shortcut that spares most guids the detectors lets every planted value of every type through."""
    from datasets_build.pii.apply import _MAYBE_PII

    for pii_type, _, value in PLANTED:
        assert _MAYBE_PII.search(f"id-{value}-1"), (pii_type, value)
    assert not _MAYBE_PII.search("bench-000123") and not _MAYBE_PII.search("g-17")


@pytest.mark.parametrize("text", [
    "02-555-1234", "(02)555-1234", "02)555-1234", "+82 10 1234 5678", "+82-2-123-4567", "010 1234 5678",
    "010.1234.5678", "0505-123-4567", "IBK 123-456789-01", "농협 302-1234-5678-91", "11-12-123456-12",
    "서울 12-123456-12", "주민번호 800101-1234567", "주민번호 800101 – 5234567", "4111 1111 1111 1111",
    "3782 822463 10005", "M12345678", "M123A4567", "12가3456", "10.0.0.1", "2001:db8::ff00:42:8329", "kim@example.com",
])
def test_serial_numbers_skip_the_identifier_detectors_and_every_finding_passes_the_shortcut(text):
    """An identifier's digits reach the detectors only in a run of nine or more digits and separators (else with
    a ``.``, ``@``, ``:``, ``/``, Hangul or a passport's letter): every value the detectors find, of every number
    shape, passes that shortcut, so any identifier holding it does; a serial of up to eight digits does not."""
    from datasets_build.pii.apply import _MAYBE_PII
    from datasets_build.pii.detectors import detect

    findings = detect(f"id {text} 입니다")
    assert findings, text
    assert all(_MAYBE_PII.search(f.value) for f in findings), findings
    for serial in ("b-0012345", "doc-12345678", "r 123 456"):
        assert not _MAYBE_PII.search(serial) and not detect(serial)
