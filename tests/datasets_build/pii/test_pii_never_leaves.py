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

import html
import io
import json
import logging
import re
import time
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from django.contrib import admin
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from annotation.models import Annotation, Assignment, Flag, Item, Project, Role, User
from datasets_build.models import ImportJob, ImportStatus, NearDuplicate
from datasets_build.pii import PII_TYPES, detect
from demo.simulation import reference_answer
from exports.models import BUILT, Release, ReleaseFile, ReleaseStatus
from tests.builders import client_for, poll

DEMO = Path(__file__).resolve().parents[3] / "demo" / "corpus"

#: (type, a sentence giving the context a real text would, the raw value). Every type of pii/detectors.py,
#: some in two shapes; all values are fictional.
PLANTED: list[tuple[str, str, str]] = [
    ("rrn", "주민등록번호는 900101-1234568 입니다.", "900101-1234568"),
    ("frn", "외국인등록번호 850505-5123453 로 신청했다.", "850505-5123453"),
    ("phone", "문의는 010-2345-6789 로 주세요.", "010-2345-6789"),
    ("phone", "해외에서는 +82 10-9876-5432 로 연락 바랍니다.", "+82 10-9876-5432"),
    ("email", "메일은 minsu.kim@example.co.kr 로 보내세요.", "minsu.kim@example.co.kr"),
    ("url", "제 블로그 https://blog.naver.com/minsu_k 에 후기를 올렸어요.", "https://blog.naver.com/minsu_k"),
    ("card", "카드 5105-1051-0510-5100 으로 결제했다.", "5105-1051-0510-5100"),
    ("card", "법인카드 4111 1111 1111 1111 로 결제", "4111 1111 1111 1111"),
    ("account", "국민은행 123456-78-901234 로 입금 바랍니다.", "123456-78-901234"),
    ("passport", "여권번호 M12345678 을 적어 주세요.", "M12345678"),
    ("driver_license", "운전면허번호 11-22-333333-44 확인", "11-22-333333-44"),
    ("vehicle_plate", "사고 차량은 서울12가3456 승용차였다.", "서울12가3456"),
    ("ip", "접속 IP는 203.0.113.45 였다.", "203.0.113.45"),
    ("ip", "서버 주소는 2001:0db8:85a3:0000:0000:8a2e:0370:7334 이다.", "2001:0db8:85a3:0000:0000:8a2e:0370:7334"),
    ("address", "주소는 서울특별시 마포구 월드컵북로 396 입니다.", "서울특별시 마포구 월드컵북로 396"),
    ("person", "황보지혁 씨가 연락했다.", "황보지혁"),
    ("person", "담당자: 남궁민서", "남궁민서"),
]
#: Identifying parts that must not survive on their own either (an e-mail's mailbox, a profile's handle).
CORES = {"minsu.kim@example.co.kr": ["minsu.kim"], "https://blog.naver.com/minsu_k": ["minsu_k"]}
#: Types written as digit groups, whose separators (and their absence) vary from text to text.
GROUPED = {"rrn", "frn", "phone", "card", "account", "driver_license"}
CLEAN = 8  # unplanted records per project, so splits and baselines have something to work with
ITEMS = len(PLANTED) + CLEAN + 1  # and a near copy of a planted record (an exact copy is skipped)
PROJECT_OPTIONS = {"pii": {"person": "pseudonymize"}}


def test_the_corpus_plants_every_supported_type():
    assert {t for t, _, _ in PLANTED} == set(PII_TYPES)
    for pii_type, sentence, value in PLANTED:
        assert (pii_type, value) in [(f.type, f.value) for f in detect(sentence)], (pii_type, sentence)


# -- the forms a value can take -------------------------------------------------------------------


def _spellings(pii_type: str, value: str) -> dict[str, str]:
    """The value written differently: other separators or none, spacing, the national form of +82."""
    forms = {"as planted": value, "without spaces": "".join(value.split())}
    if pii_type in GROUPED:
        groups = [g for g in re.split(r"[-.\s–]+", value) if g]
        if value.startswith("+82"):
            groups = ["0" + groups[1], *groups[2:]] if groups[0] == "+82" else groups
            forms["+82 as a national number"] = "-".join(groups)
        for name, sep in (("hyphens", "-"), ("dots", "."), ("spaces", " "), ("no separators", "")):
            forms[f"digits joined by {name}"] = sep.join(groups)
    for i, core in enumerate(CORES.get(value, [])):
        forms[f"identifying part {i + 1}"] = core
    return {name: form for name, form in forms.items() if form}


def _unescaped(text: str) -> str:
    """The text with JSON ``\\uXXXX`` and ``\\/`` escapes, URL encoding and HTML entities undone."""
    text = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text).replace("\\/", "/")
    return html.unescape(urllib.parse.unquote_plus(text))


@dataclass(frozen=True)
class Needle:
    pii_type: str
    value: str
    spelling: str
    form: str


NEEDLES = [Needle(pii_type, value, spelling, form) for pii_type, _, value in PLANTED
           for spelling, form in _spellings(pii_type, value).items()]


def byte_needles(needles: list[Needle]) -> list[tuple[Needle, str, bytes]]:
    """Raw bytes in the encodings a file could be written in besides UTF-8."""
    return [(needle, encoding, data) for needle in needles for encoding, data in (
        ("UTF-16", needle.form.encode("utf-16-le")),
        ("CP949", needle.form.encode("cp949") if any(ord(c) > 127 for c in needle.form) else b""),
    ) if data]


class Leaks:
    """Collects every place × value where a planted raw value showed up, in any spelling or encoding."""

    def __init__(self, needles: list[Needle] = NEEDLES) -> None:
        self.needles = needles
        self.byte_needles = byte_needles(needles)
        self.found: list[str] = []
        self.places = 0

    def scan(self, place: str, content: str | bytes) -> None:
        self.places += 1
        text = content if isinstance(content, str) else content.decode("utf-8", errors="replace")
        views = {"text": text}
        unescaped = _unescaped(text)
        if unescaped != text:
            views["after undoing JSON/URL/HTML escapes"] = unescaped
        hit: set[str] = set()
        for needle in self.needles:
            for view, haystack in views.items():
                if needle.value not in hit and needle.form in haystack:
                    hit.add(needle.value)
                    self.found.append(f"{place}: raw {needle.pii_type} {needle.value!r} ({needle.spelling}, {view})")
        if isinstance(content, bytes):
            for needle, encoding, data in self.byte_needles:
                if needle.value not in hit and data in content:
                    hit.add(needle.value)
                    self.found.append(f"{place}: raw {needle.pii_type} {needle.value!r} ({needle.spelling}, "
                                      f"{encoding} bytes)")

    def assert_none(self) -> None:
        shown = "\n  ".join(self.found[:60])
        more = f"\n  … and {len(self.found) - 60} more" if len(self.found) > 60 else ""
        assert not self.found, f"raw PII found in {len(self.found)} place(s):\n  {shown}{more}"


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


# -- capturing every log record -------------------------------------------------------------------


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture
def every_log() -> Iterator[_Collect]:
    """Every logger at DEBUG into one handler (loggers that do not propagate get it too), SQL included."""
    handler = _Collect()
    loggers = [logging.getLogger()] + [logging.getLogger(name) for name in list(logging.root.manager.loggerDict)]
    saved = [(lg, lg.level, lg.disabled) for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.DEBUG)
        lg.disabled = False
        if lg is logging.getLogger() or not lg.propagate:
            lg.addHandler(handler)
    forced = connection.force_debug_cursor
    connection.force_debug_cursor = True
    yield handler
    connection.force_debug_cursor = forced
    for lg, level, disabled in saved:
        lg.setLevel(level)
        lg.disabled = disabled
        lg.removeHandler(handler)


# -- the run --------------------------------------------------------------------------------------


@dataclass
class Team:
    manager: User
    maintainer: User
    annotators: list[User]
    superuser: User

    def clients(self) -> dict[str, Client]:
        people = {"manager": self.manager, "annotator": self.annotators[0], "superuser": self.superuser}
        clients = {}
        for role, user in people.items():
            client = Client()
            client.force_login(user)
            clients[role] = client
        return clients


def _json(client: Client, method: str, url: str, body: Any = None, **extra: Any) -> Any:
    response = getattr(client, method)(url, json.dumps(body) if body is not None else None,
                                       content_type="application/json", **extra)
    assert response.status_code < 300, f"{method.upper()} {url}: {response.status_code} {response.content[:500]!r}"
    return response.json() if response.content else None


def annotate(project: Project, annotators: list[User]) -> int:
    """Each annotator works through their queue with the API: next item, submit (or skip)."""
    submitted = 0
    for annotator in annotators:
        client = client_for(annotator)
        base = f"/api/projects/{project.pk}"
        _json(client, "post", f"{base}/guideline/acknowledge/")
        while (response := client.get(f"{base}/next/")).status_code == 200:
            assignment = response.json()
            payload = reference_answer(assignment["item"]["id"], assignment["stage"])
            result = client.post(f"{base}/annotations/", json.dumps({
                "item": assignment["item"]["id"], "payload": payload, "stage": assignment["stage"],
                "seconds_spent": 12.5}), content_type="application/json") if payload is not None else None
            if result is None or result.status_code >= 300:
                _json(client, "post", f"{base}/assignments/{assignment['assignment']}/skip/",
                      {"reason": "no reference label"})
            else:
                submitted += 1
        assert response.status_code == 204, response.content
    return submitted


def run_pipeline(slug: str, team: Team, tmp_path: Path, outputs: list[tuple[str, str]], jobs: Callable) -> Project:
    """Import, review, annotate, flag, agreement, gold, adjudicate, release, publish — each by its user's path.
    ``jobs`` runs the Celery jobs a request queues when its transaction commits (eager)."""
    manager = client_for(team.manager)
    project_data = _json(manager, "post", "/api/projects/", {
        "name": f"PII {slug}", "slug": f"pii-{slug}", "task_type": slug, "annotators_per_item": 2,
        "options": PROJECT_OPTIONS})
    project = Project.objects.get(pk=project_data["id"])
    for user, role in ((team.maintainer, Role.MAINTAINER), *((a, Role.ANNOTATOR) for a in team.annotators)):
        _json(manager, "post", f"/api/projects/{project.pk}/members/", {"username": user.username, "role": role})

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
        job = _json(manager, "get", f"/api/projects/{project.pk}/imports/{response.json()['id']}/")
        assert job["status"] == ImportStatus.SUCCEEDED, job["errors"]
        assert job["summary"]["duplicates_skipped"] == 1
    assert Item.objects.filter(project=project).count() == ITEMS

    # Items a screener flagged (toxicity, bias) are reviewed first, as a manager would.
    for entry in _json(manager, "get", f"/api/projects/{project.pk}/screening-review/"):
        _json(manager, "post", f"/api/projects/{project.pk}/screening-review/{entry['id']}/",
              {"decision": "keep", "reason": "검토 완료"})

    assert annotate(project, team.annotators) > 0
    flagged = Item.objects.filter(project=project).order_by("id").first()
    _json(client_for(team.annotators[0]), "post", f"/api/projects/{project.pk}/flags/",
          {"item": flagged.pk, "kind": "other", "note": "문장이 어색합니다"})

    with jobs(execute=True):
        _json(manager, "get", f"/api/projects/{project.pk}/agreement/")
    _json(manager, "post", f"/api/projects/{project.pk}/gold/")
    adjudicated = Annotation.objects.filter(item__project=project, imported=False).order_by("id").first()
    _json(manager, "post", f"/api/projects/{project.pk}/gold/{adjudicated.item_id}/adjudicate/",
          {"annotation": adjudicated.pk, "reason": "지침 3.2에 따름"})
    _json(manager, "get", f"/api/projects/{project.pk}/agreement/")

    # The maintainer builds the release and publishes it through the API (the corpus is too small for the
    # baseline check's verdict, so the release is inconclusive and published with an override reason).
    out = io.StringIO()
    call_command("build_release", project.slug, "--version", "1.0.0", "--format", "klue,jsonl,csv,parquet",
                 "--check-margin", "-100", "--out", str(tmp_path / "releases"), "--json", stdout=out)
    outputs.append((f"{slug}: build_release output", out.getvalue()))
    release = Release.objects.get(project=project)
    assert release.status == ReleaseStatus.INCONCLUSIVE, release.baseline_check
    published = _json(client_for(team.maintainer), "post", f"/api/projects/{project.pk}/releases/{release.pk}/publish/",
                      {"override_reason": "PII 검사용 소규모 말뭉치"})
    assert published["status"] == ReleaseStatus.PUBLISHED
    return project


# -- the places -----------------------------------------------------------------------------------


def scan_files(folder: Path, leaks: Leaks, what: str) -> int:
    count = 0
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        count += 1
        place = f"{what} {path.relative_to(folder)}"
        leaks.scan(place, path.read_bytes())
        if path.suffix == ".parquet":
            rows = pq.read_table(path).to_pylist()
            leaks.scan(f"{place} (decoded)", json.dumps(rows, ensure_ascii=False, default=str))
    return count


def scan_database(leaks: Leaks) -> dict[str, int]:
    """Every row of every table, each cell as text (JSON columns as stored: SQLite keeps \\u escapes)."""
    counts = {}
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            rows = cursor.fetchall()
            counts[table] = len(rows)
            cells = []
            for row in rows:
                for cell in row:
                    if isinstance(cell, memoryview | bytes):
                        cells.append(bytes(cell).decode("utf-8", errors="replace"))
                    elif isinstance(cell, dict | list):
                        cells.append(json.dumps(cell, ensure_ascii=False))
                    else:
                        cells.append(str(cell))
            leaks.scan(f"database table {table}", "\n".join(cells))
    return counts


#: Change pages per model beyond the planted items: the rows they render are in the database scan already, so a
#: sample (rows of planted items first) shows whether rendering adds anything.
ADMIN_SAMPLE = 10


def scan_admin(client: Client, leaks: Leaks, planted: list[Item]) -> int:
    """Every registered model's changelist, and change pages: every planted item, a sample of other rows."""
    pages = 0
    for model in admin.site._registry:
        opts = model._meta
        changelist = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
        response = client.get(changelist)
        assert response.status_code == 200, changelist
        leaks.scan(f"admin {changelist}", response.content)
        pages += 1
        rows = model._default_manager.order_by("pk")
        if model is Item:
            pks = [i.pk for i in planted]
        else:
            linked = rows.filter(item__in=planted) if any(f.name == "item" for f in opts.fields) else rows.none()
            pks = list(linked.values_list("pk", flat=True)[:ADMIN_SAMPLE])
            pks += list(rows.exclude(pk__in=pks).values_list("pk", flat=True)[:ADMIN_SAMPLE - len(pks)])
        for pk in pks:
            url = reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[pk])
            response = client.get(url)
            assert response.status_code == 200, url
            leaks.scan(f"admin {url}", response.content)
            pages += 1
    return pages


def _routes() -> list[tuple[str, Any]]:
    found = []

    def walk(patterns: list[Any], prefix: str) -> None:
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, route)
            elif isinstance(pattern, URLPattern):
                found.append((re.sub(r"\(\?P<(\w+)>[^)]*\)", r"<\1>", route).replace("^", "").replace("$", ""),
                              pattern.callback))

    walk(get_resolver().url_patterns, "")
    return found


def _answers_get(callback: Any) -> bool:
    actions = getattr(callback, "actions", None)
    if actions is not None:
        return "get" in actions
    view = getattr(callback, "cls", None) or getattr(callback, "view_class", None)
    return view is None or hasattr(view, "get")  # function views: try them


#: Routes that are not about project data (or only take POST), left out on purpose.
NOT_SCANNED = ("admin/", "i18n/", "api/schema/", "api/docs/", "accounts/logout/")


def _values(name: str, route: str, project: Project, items: list[Item]) -> list[int]:
    """The ids to put into one route parameter."""
    if name in ("project_pk", "project_id") or (name == "pk" and route.startswith("api/projects/<pk>")):
        return [project.pk]
    if name in ("item_pk", "item_id") or (name == "pk" and "/items/<pk>" in route):
        return [i.pk for i in items]
    if name == "release_id" or (name == "pk" and "/releases/<int:pk>" in route):
        return list(Release.objects.filter(project=project).values_list("pk", flat=True))
    if name in ("file_id", "file_pk"):
        return list(ReleaseFile.objects.filter(release__project=project).values_list("pk", flat=True))
    if name == "pk" and "/imports/" in route:
        return list(ImportJob.objects.filter(project=project).values_list("pk", flat=True))
    if name == "pk" and "/annotations/" in route:
        return list(Annotation.objects.filter(item__in=items).values_list("pk", flat=True))
    if name == "pk" and "/flags/" in route:
        return list(Flag.objects.filter(item__project=project).values_list("pk", flat=True))
    if (name == "pk" and "/assignments/" in route) or name == "assignment_pk":
        return list(Assignment.objects.filter(item__in=items).values_list("pk", flat=True))
    if name == "pk" and "/members/" in route:
        return list(project.memberships.values_list("pk", flat=True))
    if name == "pk" and "/guidelines/" in route:
        return list(project.guidelines.values_list("pk", flat=True))
    if name == "pk" and "/suggester/runs/" in route:
        return list(project.suggester_runs.values_list("pk", flat=True))
    raise AssertionError(f"route {route!r} has a parameter {name!r} the PII scan cannot fill: add it to _values")


def _urls(route: str, project: Project, items: list[Item]) -> Iterator[str]:
    names = re.findall(r"<(?:\w+:)?(\w+)>", route)
    urls = [route]
    for name in names:
        values = _values(name, route, project, items)
        urls = [re.sub(rf"<(?:\w+:)?{name}>", str(v), u, count=1) for u in urls for v in values]
    for url in urls:
        yield "/" + url


def scan_routes(clients: dict[str, Client], project: Project, leaks: Leaks) -> dict[str, int]:
    """GET every API route and page as each role; returns the status per URL seen by the manager."""
    planted = [i for i in Item.objects.filter(project=project).order_by("id") if i.pii_findings]
    statuses: dict[str, int] = {}
    for route, callback in _routes():
        if route.startswith(NOT_SCANNED) or not _answers_get(callback):
            continue
        for url in _urls(route, project, planted):
            for role, client in clients.items():
                response = client.get(url)
                body = b"".join(response.streaming_content) if response.streaming else response.content
                leaks.scan(f"GET {url} as {role} ({response.status_code})", body)
                if role == "manager":
                    statuses[url] = response.status_code
    return statuses


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
    project = Project.objects.get(pk=_json(manager, "post", "/api/projects/", {
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
         for row in _json(manager, "get", f"/api/projects/{project.pk}/screening-review/")], ensure_ascii=False))
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
    project = Project.objects.get(pk=_json(manager, "post", "/api/projects/", {
        "name": "PII worker", "slug": "pii-worker", "task_type": "mrc", "annotators_per_item": 2,
        "options": PROJECT_OPTIONS})["id"])
    for user in team.annotators:
        _json(manager, "post", f"/api/projects/{project.pk}/members/", {"username": user.username, "role": "annotator"})
    base = f"/api/projects/{project.pk}"
    response = manager.post(f"{base}/imports/", {"file": SimpleUploadedFile("mrc.jsonl", corpus("mrc")),
                                                 "format": "jsonl"})
    job = poll(lambda: _json(manager, "get", f"{base}/imports/{response.json()['id']}/"),
               lambda j: j["status"] in (ImportStatus.SUCCEEDED, ImportStatus.FAILED), "the import")
    assert job["status"] == ImportStatus.SUCCEEDED, job["errors"]
    failed = manager.post(f"{base}/imports/", {"file": SimpleUploadedFile("bad.jsonl", bad_corpus()),
                                               "format": "jsonl"})
    poll(lambda: _json(manager, "get", f"{base}/imports/{failed.json()['id']}/"),
         lambda j: j["status"] == ImportStatus.FAILED, "the failing import")

    assert annotate(project, team.annotators) > 0
    poll(lambda: {"status": manager.get(f"{base}/agreement/").status_code}, lambda r: r["status"] == 200,
         "the agreement report")
    _json(manager, "post", f"{base}/gold/")
    created = _json(manager, "post", f"{base}/releases/", {"version": "1.0.0"})
    release = poll(lambda: _json(manager, "get", f"{base}/releases/{created['id']}/"),
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
