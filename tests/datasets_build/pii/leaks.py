"""What the PII-never-leaves tests share: the planted values, every form a value can take, and the scans of
every place a value could end up (release and upload files, the database, the admin, every GET route).

Used by ``test_pii_never_leaves.py`` and ``test_pii_corpus_ids.py``; the ``every_log`` fixture is in this
folder's ``conftest.py``.
"""

from __future__ import annotations

import html
import json
import logging
import re
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from django.contrib import admin
from django.db import connection
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from annotation.models import Annotation, Assignment, Flag, Item, Project, User
from datasets_build.models import ImportJob
from exports.models import Release, ReleaseFile

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
# -- the forms a value can take -------------------------------------------------------------------


def spellings(pii_type: str, value: str) -> dict[str, str]:
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


def unescaped(text: str) -> str:
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
           for spelling, form in spellings(pii_type, value).items()]


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
        plain = unescaped(text)
        if plain != text:
            views["after undoing JSON/URL/HTML escapes"] = plain
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


# -- capturing every log record -------------------------------------------------------------------


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


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


def json_call(client: Client, method: str, url: str, body: Any = None, **extra: Any) -> Any:
    response = getattr(client, method)(url, json.dumps(body) if body is not None else None,
                                       content_type="application/json", **extra)
    assert response.status_code < 300, f"{method.upper()} {url}: {response.status_code} {response.content[:500]!r}"
    return response.json() if response.content else None


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
    if name in ("release_id", "other") or (name == "pk" and "/releases/<int:pk>" in route):
        return list(Release.objects.filter(project=project).values_list("pk", flat=True))
    if name in ("file_id", "file_pk"):
        return list(ReleaseFile.objects.filter(release__project=project).values_list("pk", flat=True))
    if name == "pk" and "/imports/" in route:
        return list(ImportJob.objects.filter(project=project).values_list("pk", flat=True))
    if (name == "pk" and "/annotations/" in route) or name == "annotation_id":
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
