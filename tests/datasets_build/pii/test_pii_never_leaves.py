"""PII never leaves: a corpus with every supported PII type planted goes all the way to a published release,
and no raw value appears anywhere afterwards (docs/pii.md, "PII never leaves").

The corpus (tc, nli, ner with entity offsets, mrc with answer offsets) is imported by the users' paths — the API
upload (an import job) and ``manage.py import_items`` — with the default policy for identifiers and the
documented per-project setting that pseudonymizes person names too (by default names are only *detected*: kept
in the text and flagged for review, see ``test_detect_keeps_the_text_but_nothing_else_repeats_it``).
Annotators work through the API, agreement and gold are computed, an item is adjudicated, a maintainer builds a
release in every format and publishes it. Then every place is scanned for every planted value, in every form it
could take: separators and spacing changed, JSON ``\\uXXXX`` escapes, HTML and URL escaping, UTF-8/UTF-16/CP949
bytes. The places: every file of the release folder (Parquet read back too), the upload folder, everything logged
at DEBUG (SQL included) and printed by the commands, every admin changelist with the change pages of the planted
items and a sample of every other model's rows, every GET route of the API and the pages as manager, annotator
and superuser, and every row of every database table.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import connection

from annotation.models import Annotation, Flag, Item, Project, Role, User
from datasets_build.models import ImportJob, ImportStatus, NearDuplicate
from datasets_build.pii import PII_TYPES, detect
from demo.simulation import reference_answer
from exports.models import BUILT, Release, ReleaseStatus
from tests.builders import client_for, poll
from tests.datasets_build.pii.leaks import (
    NEEDLES,
    PLANTED,
    Leaks,
    Team,
    json_call,
    scan_admin,
    scan_database,
    scan_files,
    scan_routes,
)

DEMO = Path(__file__).resolve().parents[3] / "demo" / "corpus"

CLEAN = 8  # unplanted records per project, so splits and baselines have something to work with
ITEMS = len(PLANTED) + CLEAN + 1  # and a near copy of a planted record (an exact copy is skipped)
PROJECT_OPTIONS = {"pii": {"person": "pseudonymize"}}


def test_the_corpus_plants_every_supported_type():
    assert {t for t, _, _ in PLANTED} == set(PII_TYPES)
    for pii_type, sentence, value in PLANTED:
        assert (pii_type, value) in [(f.type, f.value) for f in detect(sentence)], (pii_type, sentence)


# -- the corpus -----------------------------------------------------------------------------------


def _demo(slug: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DEMO / f"{slug}.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()]


def _plant_tc(record: dict[str, Any], pii_type: str, sentence: str, value: str) -> dict[str, Any]:
    return {**record, "title": f"{sentence} {record['title']}"}


def _plant_nli(record: dict[str, Any], pii_type: str, sentence: str, value: str) -> dict[str, Any]:
    # Half in the premise, half in the written hypothesis (both are annotator-visible text).
    if PLANTED.index((pii_type, sentence, value)) % 2:
        return {**record, "hypothesis": f"{record['hypothesis']} {sentence}"}
    return {**record, "premise": f"{sentence} {record['premise']}"}


def _plant_ner(record: dict[str, Any], pii_type: str, sentence: str, value: str) -> dict[str, Any]:
    # Entity offsets after the planted sentence move; a planted name is itself a PS entity.
    planted = sentence.replace(value, f"<{value}:PS>") if pii_type == "person" else sentence
    return {**record, "sentence": f"{planted} {record['sentence']}"}


def _plant_mrc(record: dict[str, Any], pii_type: str, sentence: str, value: str) -> dict[str, Any]:
    shift = len(sentence) + 1
    planted = {**record, "context": f"{sentence} {record['context']}",
               "answers": [{**a, "answer_start": a["answer_start"] + shift} for a in record.get("answers", [])]}
    if "plausible_answers" in record:
        planted["plausible_answers"] = [{**a, "answer_start": a["answer_start"] + shift}
                                        for a in record["plausible_answers"]]
    if pii_type == "phone":  # an answer that is itself PII, quoted in the answer list
        planted.update(question="문의 전화번호는 무엇인가?", question_type=1, is_impossible=False,
                       answers=[{"text": value, "answer_start": sentence.index(value)}])
        planted.pop("plausible_answers", None)
    return planted


PLANTERS: dict[str, Callable[..., dict[str, Any]]] = {"tc": _plant_tc, "nli": _plant_nli, "ner": _plant_ner,
                                                       "mrc": _plant_mrc}


#: The fields a near copy of a record changes a little (at the end, so offsets stay right; an NLI copy needs
#: another premise, as items of one premise group are kept together rather than reported).
NEAR_KEY = {"tc": ["title"], "nli": ["premise", "hypothesis"], "ner": ["sentence"], "mrc": ["context"]}


def corpus(slug: str) -> bytes:
    records = _demo(slug)
    # Each value also sits, alone, in a field the task does not know (kept in meta and exported) of another
    # record, as a scraped corpus's extra columns would carry it.
    planted = [{**PLANTERS[slug](records[i], *PLANTED[i]), "memo": PLANTED[(i + 1) % len(PLANTED)][1]}
               for i in range(len(PLANTED))]
    clean = records[len(PLANTED):len(PLANTED) + CLEAN]
    # The duplicate reports carry planted records too: an exact copy (skipped on import) and a near copy.
    copies = [{**planted[2], "guid": f"{planted[2]['guid']}-copy"},
              {**planted[3], **{key: planted[3][key] + "!" for key in NEAR_KEY[slug]},
               "guid": f"{planted[3]['guid']}-near"}]
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in planted + clean + copies).encode("utf-8")


def bad_corpus() -> bytes:
    """An MRC file whose answer does not quote the context: the error message wants to say what it holds."""
    sentence = "문의는 010-2345-6789 로 주세요. 계좌는 국민은행 123456-78-901234 입니다."
    record = {"guid": "bad-mrc-1", "title": "제목", "context": sentence, "question": "번호는?", "question_type": 1,
              "is_impossible": False, "answers": [{"text": "전화번호 안내 문구입니다", "answer_start": 4}]}
    return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")


# -- the run --------------------------------------------------------------------------------------


def annotate(project: Project, annotators: list[User]) -> int:
    """Each annotator works through their queue with the API: next item, submit (or skip)."""
    submitted = 0
    for annotator in annotators:
        client = client_for(annotator)
        base = f"/api/projects/{project.pk}"
        json_call(client, "post", f"{base}/guideline/acknowledge/")
        while (response := client.get(f"{base}/next/")).status_code == 200:
            assignment = response.json()
            payload = reference_answer(assignment["item"]["id"], assignment["stage"])
            result = client.post(f"{base}/annotations/", json.dumps({
                "item": assignment["item"]["id"], "payload": payload, "stage": assignment["stage"],
                "seconds_spent": 12.5}), content_type="application/json") if payload is not None else None
            if result is None or result.status_code >= 300:
                json_call(client, "post", f"{base}/assignments/{assignment['assignment']}/skip/",
                      {"reason": "no reference label"})
            else:
                submitted += 1
        assert response.status_code == 204, response.content
    return submitted


def run_pipeline(slug: str, team: Team, tmp_path: Path, outputs: list[tuple[str, str]], jobs: Callable) -> Project:
    """Import, review, annotate, flag, agreement, gold, adjudicate, release, publish — each by its user's path.
    ``jobs`` runs the Celery jobs a request queues when its transaction commits (eager)."""
    manager = client_for(team.manager)
    project_data = json_call(manager, "post", "/api/projects/", {
        "name": f"PII {slug}", "slug": f"pii-{slug}", "task_type": slug, "annotators_per_item": 2,
        "options": PROJECT_OPTIONS})
    project = Project.objects.get(pk=project_data["id"])
    for user, role in ((team.maintainer, Role.MAINTAINER), *((a, Role.ANNOTATOR) for a in team.annotators)):
        json_call(manager, "post", f"/api/projects/{project.pk}/members/", {"username": user.username, "role": role})

    data = corpus(slug)
    if slug == "ner":  # the command-line path
        path = tmp_path / f"{slug}.jsonl"
        path.write_bytes(data)
        out, err = io.StringIO(), io.StringIO()
        call_command("import_items", project.slug, str(path), "--format", "jsonl", "--source", "planted",
                     "--license", "CC-BY-SA-4.0", "--json", stdout=out, stderr=err)
        path.unlink()
        outputs += [(f"{slug}: import_items output", out.getvalue() + err.getvalue())]
    else:  # the upload path: an import job
        with jobs(execute=True):
            response = manager.post(f"/api/projects/{project.pk}/imports/", {
                "file": SimpleUploadedFile(f"{slug}.jsonl", data), "format": "jsonl", "source": f"planted-{slug}",
                "license": "CC-BY-SA-4.0"})
        assert response.status_code == 202, response.content
        job = json_call(manager, "get", f"/api/projects/{project.pk}/imports/{response.json()['id']}/")
        assert job["status"] == ImportStatus.SUCCEEDED, job["errors"]
        assert job["summary"]["duplicates_skipped"] == 1
    assert Item.objects.filter(project=project).count() == ITEMS

    # Items a screener flagged (toxicity, bias) are reviewed first, as a manager would.
    for entry in json_call(manager, "get", f"/api/projects/{project.pk}/screening-review/"):
        json_call(manager, "post", f"/api/projects/{project.pk}/screening-review/{entry['id']}/",
              {"decision": "keep", "reason": "검토 완료"})

    assert annotate(project, team.annotators) > 0
    flagged = Item.objects.filter(project=project).order_by("id").first()
    json_call(client_for(team.annotators[0]), "post", f"/api/projects/{project.pk}/flags/",
          {"item": flagged.pk, "kind": "other", "note": "문장이 어색합니다"})

    with jobs(execute=True):
        json_call(manager, "get", f"/api/projects/{project.pk}/agreement/")
    json_call(manager, "post", f"/api/projects/{project.pk}/gold/")
    adjudicated = Annotation.objects.filter(item__project=project, imported=False).order_by("id").first()
    json_call(manager, "post", f"/api/projects/{project.pk}/gold/{adjudicated.item_id}/adjudicate/",
          {"annotation": adjudicated.pk, "reason": "지침 3.2에 따름"})
    json_call(manager, "get", f"/api/projects/{project.pk}/agreement/")

    # The maintainer builds the release and publishes it through the API (the corpus is too small for the
    # baseline check's verdict, so the release is inconclusive and published with an override reason).
    out = io.StringIO()
    call_command("build_release", project.slug, "--version", "1.0.0", "--format", "klue,jsonl,csv,parquet",
                 "--check-margin", "-100", "--out", str(tmp_path / "releases"), "--json", stdout=out)
    outputs.append((f"{slug}: build_release output", out.getvalue()))
    release = Release.objects.get(project=project)
    assert release.status == ReleaseStatus.INCONCLUSIVE, release.baseline_check
    published = json_call(client_for(team.maintainer), "post",
                          f"/api/projects/{project.pk}/releases/{release.pk}/publish/",
                          {"override_reason": "PII 검사용 소규모 말뭉치"})
    assert published["status"] == ReleaseStatus.PUBLISHED
    return project


# -- the tests ------------------------------------------------------------------------------------


@pytest.fixture
def team(make_user) -> Team:
    return Team(manager=make_user("pii-manager", can_create=True), maintainer=make_user("pii-maintainer"),
                annotators=[make_user("pii-annotator-1"), make_user("pii-annotator-2")],
                superuser=User.objects.create_superuser("pii-root", password="pw-goldset-123"))


@pytest.mark.django_db
def test_pii_never_leaves(team, tmp_path, settings, every_log, django_capture_on_commit_callbacks):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.GOLDSET_RELEASE_ROOT = str(tmp_path / "releases")
    outputs: list[tuple[str, str]] = []
    started = time.monotonic()
    projects = [run_pipeline(slug, team, tmp_path, outputs, django_capture_on_commit_callbacks)
                for slug in ("tc", "nli", "ner", "mrc")]
    # A failed import: its job keeps the errors, whose messages would like to quote the record.
    with django_capture_on_commit_callbacks(execute=True):
        failed = client_for(team.manager).post(f"/api/projects/{projects[-1].pk}/imports/", {
            "file": SimpleUploadedFile("bad.jsonl", bad_corpus()), "format": "jsonl"})
    assert failed.status_code == 202
    job = ImportJob.objects.get(pk=failed.json()["id"])
    assert job.status == ImportStatus.FAILED and job.errors

    # The run's SQL is in the log; the scan's own reads need not be.
    connection.force_debug_cursor = False
    leaks = Leaks()

    files = scan_files(tmp_path / "releases", leaks, "release file")
    assert files >= 4 * 10
    scan_files(Path(settings.MEDIA_ROOT), leaks, "media file")
    clients = team.clients()
    seen = {}
    for project in projects:
        seen |= scan_routes(clients, project, leaks)
    planted = [i for i in Item.objects.order_by("id") if i.pii_findings]
    admin_pages = scan_admin(clients["superuser"], leaks, planted)
    tables = scan_database(leaks)
    for place, text in outputs:
        leaks.scan(place, text)
    leaks.scan("log records (every logger at DEBUG, SQL included)", "\n".join(every_log.lines))

    leaks.assert_none()

    # The pipeline really ran on the planted values: every type was pseudonymized in every project.
    for project in projects:
        actions = {(f["type"], f["action"]) for item in Item.objects.filter(project=project)
                   for f in item.pii_findings}
        assert actions == {(t, "pseudonymized") for t in PII_TYPES}, (project.task_type, actions)
        assert NearDuplicate.objects.filter(project=project).exists(), project.task_type
    # The scan saw real pages: the manager read the items, the agreement, gold, audit trail, releases …
    tc = projects[0]
    release = Release.objects.get(project=tc)
    for url in (f"/api/projects/{tc.pk}/items/", f"/api/projects/{tc.pk}/annotations/",
                f"/api/projects/{tc.pk}/agreement/", f"/api/projects/{tc.pk}/gold/",
                f"/api/projects/{tc.pk}/audit/", f"/api/projects/{tc.pk}/imports/",
                f"/api/projects/{tc.pk}/releases/{release.pk}/", f"/projects/{tc.pk}/review/",
                f"/projects/{tc.pk}/audit/", f"/projects/{tc.pk}/agreement/items/",
                f"/projects/{tc.pk}/releases/{release.pk}/"):
        assert seen.get(url) == 200, (url, seen.get(url))
    assert len(every_log.lines) > 100 and tables["annotation_item"] == 4 * ITEMS and admin_pages
    print(f"\nscanned {leaks.places} places ({files} release files, {len(seen)} URLs per role, {admin_pages} "
          f"admin pages, {len(tables)} tables, {len(every_log.lines)} log records) for {len(NEEDLES)} needles "
          f"in {time.monotonic() - started:.0f} s")


@pytest.mark.django_db
def test_detect_keeps_the_text_but_nothing_else_repeats_it(team, settings, tmp_path,
                                                           django_capture_on_commit_callbacks):
    """``detect`` (every type with ``--pii detect``; names under the default policy) keeps raw values in the item
    text on purpose — for corpora already pseudonymized, like KLUE — and flags the item for a manager's review.
    The text is then exported as it is; what Goldset writes *about* the findings never repeats them."""
    settings.MEDIA_ROOT = str(tmp_path / "media")
    manager = client_for(team.manager)
    project = Project.objects.get(pk=json_call(manager, "post", "/api/projects/", {
        "name": "detect", "slug": "pii-detect", "task_type": "tc"})["id"])
    assert project.options.get("pii") is None  # the default policy: names detected, identifiers replaced
    with django_capture_on_commit_callbacks(execute=True):
        response = manager.post(f"/api/projects/{project.pk}/imports/", {
            "file": SimpleUploadedFile("tc.jsonl", corpus("tc")), "format": "jsonl", "pii": "detect"})
    job = ImportJob.objects.get(pk=response.json()["id"])
    assert job.status == ImportStatus.SUCCEEDED, job.errors
    planted = Item.objects.filter(project=project, pii_findings__isnull=False).exclude(pii_findings=[])
    assert planted.count() == len(PLANTED) + 1
    kept = "\n".join(json.dumps(item.payload, ensure_ascii=False) for item in planted)
    assert all(value in kept for _, _, value in PLANTED)  # by design: the text stands as imported
    assert {item.screening_status for item in planted} == {"needs_review"}

    leaks = Leaks()
    for item in planted:
        leaks.scan(f"item {item.external_id} findings", json.dumps(item.pii_findings, ensure_ascii=False))
    for flag in Flag.objects.filter(item__project=project):
        leaks.scan(f"flag {flag.pk} note", flag.note)
    leaks.scan("import job", json.dumps([job.summary, job.errors, job.message, job.options], ensure_ascii=False))
    for event in project.audit_events.all():
        leaks.scan(f"audit event {event.pk}", json.dumps([event.before, event.after], ensure_ascii=False))
    leaks.scan("review queue API findings", json.dumps(
        [{k: v for k, v in row.items() if k != "payload"}
         for row in json_call(manager, "get", f"/api/projects/{project.pk}/screening-review/")], ensure_ascii=False))
    leaks.assert_none()
    assert Flag.objects.filter(item__project=project, kind="pii").count() == len(PLANTED) + 1


@pytest.mark.worker
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_pii_never_leaves_through_the_live_worker(live_worker, team, settings, tmp_path):
    """The jobs on a real worker: the upload imported, the agreement report and the release built there; the
    worker's log, the release folder, the upload folder, the jobs' API answers and the database hold no value."""
    from tests.conftest import ROOT

    settings.MEDIA_ROOT = str(tmp_path / "media")  # absolute paths: the worker reads and writes the same folders
    settings.GOLDSET_RELEASE_ROOT = str(tmp_path / "releases")
    manager = client_for(team.manager)
    project = Project.objects.get(pk=json_call(manager, "post", "/api/projects/", {
        "name": "PII worker", "slug": "pii-worker", "task_type": "mrc", "annotators_per_item": 2,
        "options": PROJECT_OPTIONS})["id"])
    for user in team.annotators:
        json_call(manager, "post", f"/api/projects/{project.pk}/members/",
                  {"username": user.username, "role": "annotator"})
    base = f"/api/projects/{project.pk}"
    response = manager.post(f"{base}/imports/", {"file": SimpleUploadedFile("mrc.jsonl", corpus("mrc")),
                                                 "format": "jsonl"})
    job = poll(lambda: json_call(manager, "get", f"{base}/imports/{response.json()['id']}/"),
               lambda j: j["status"] in (ImportStatus.SUCCEEDED, ImportStatus.FAILED), "the import")
    assert job["status"] == ImportStatus.SUCCEEDED, job["errors"]
    failed = manager.post(f"{base}/imports/", {"file": SimpleUploadedFile("bad.jsonl", bad_corpus()),
                                               "format": "jsonl"})
    poll(lambda: json_call(manager, "get", f"{base}/imports/{failed.json()['id']}/"),
         lambda j: j["status"] == ImportStatus.FAILED, "the failing import")

    assert annotate(project, team.annotators) > 0
    poll(lambda: {"status": manager.get(f"{base}/agreement/").status_code}, lambda r: r["status"] == 200,
         "the agreement report")
    json_call(manager, "post", f"{base}/gold/")
    created = json_call(manager, "post", f"{base}/releases/", {"version": "1.0.0"})
    release = poll(lambda: json_call(manager, "get", f"{base}/releases/{created['id']}/"),
                   lambda r: r["status"] not in (ReleaseStatus.BUILDING, ReleaseStatus.CHECKING), "the release")
    assert release["status"] in BUILT, release["error"]

    leaks = Leaks()
    assert scan_files(tmp_path / "releases", leaks, "release file") >= 10
    scan_files(tmp_path / "media", leaks, "media file")
    leaks.scan("worker log", (ROOT / "celery-test-worker.log").read_bytes())
    for url in (f"{base}/imports/", f"{base}/releases/", f"{base}/releases/{created['id']}/",
                f"{base}/agreement/", f"{base}/items/", f"{base}/audit/"):
        leaks.scan(f"GET {url}", manager.get(url).content)
    scan_database(leaks)
    leaks.assert_none()
    assert live_worker.poll() is None
