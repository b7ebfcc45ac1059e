"""The shared builders of the test suite: what more than one test module needs to make its data or drive
Goldset, kept here once (fixtures live in ``tests/conftest.py``; the KLUE dev files are read by
``tests/klue_loader.py``).

Projects filled through ``parse_record`` + ``item_checked`` (``load_records``, ``sample_records``): items and
their corpus labels are stored the way ``import_items`` stores them (imported users named
``<source>:<original id>``, imported annotations) but without its duplicate skipping, so tests can plant
exact duplicates, and without its screening (the samples hold no PII; tests of the screening go through the
importer or the item services). Records are hand-written samples, one generator per task type.

Clients, files and commands: a logged-in page client, a token API client, JSONL bytes and files, and the
management commands' ``--json`` output.
"""

from __future__ import annotations

import importlib.util
import json
import os
import time
from collections.abc import Callable, Iterable
from io import StringIO
from pathlib import Path
from typing import Any
from unittest import mock

from django.core.management import call_command
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation import services
from annotation.models import Annotation, Item, Project, User
from annotation.task_types import get_task_type

TC_LABELS = ["IT과학", "경제", "사회", "생활문화", "세계", "스포츠", "정치"]
NLI_LABELS = ["entailment", "neutral", "contradiction"]


def imported_user(project: Project, original: str) -> User:
    """The user an import creates for a corpus annotator (``<source>:<id>``; ``corpus`` for no id)."""
    user, _ = User.objects.get_or_create(username=f"{project.slug}:{original or 'corpus'}",
                                         defaults={"is_imported": True})
    return user


def load_records(project: Project, records: Iterable[dict[str, Any]], *, split: str = "") -> list[Item]:
    """Parse KLUE-style records into items and imported annotations (as the importer does)."""
    task = get_task_type(project.task_type)
    items = []
    for record in records:
        parsed = task.parse_record(record)
        payload, text_hash = services.item_checked(task, parsed.payload)
        item = Item.objects.create(project=project, payload=payload, content_hash=text_hash,
                                   external_id=parsed.external_id, split=parsed.split or split, meta=parsed.meta,
                                   group_key=parsed.group_key)
        for annotation in parsed.annotations:
            payload = annotation.payload
            if annotation.stage in [s.name for s in task.stages]:
                Annotation.objects.create(item=item, annotator=imported_user(project, annotation.annotator),
                                          stage=annotation.stage, payload=payload, imported=True)
        items.append(item)
    return items


def sample_records(task_slug: str, n: int, *, prefix: str = "s") -> list[dict[str, Any]]:
    """``n`` small hand-written KLUE-style records of a task type (guids ``<prefix>-v1_dev_00000``…)."""
    records = []
    for i in range(n):
        guid = f"{prefix}-v1_dev_{i:05d}"
        records.append(SAMPLES[task_slug](guid, i))
    return records


def _tc(guid: str, i: int) -> dict[str, Any]:
    label = TC_LABELS[i % 7]
    return {"guid": guid, "title": f"{i}번째 기사 제목 {label} 소식", "predefined_news_category": label, "label": label,
            "annotations": {"annotators": ["01", "02", "03"],
                            "annotations": {"first-scope": [label, label, TC_LABELS[(i + 1) % 7]],
                                            "second-scope": ["해당없음"] * 3, "third-scope": ["해당없음"] * 3}},
            "url": f"https://example.com/{i}", "date": "2020.01.01. 오전 9:00"}


def _sts(guid: str, i: int) -> dict[str, Any]:
    scores = [i % 6, (i + 1) % 6, i % 6]
    real = sum(scores) / 3
    return {"guid": guid, "source": "airbnb-rtt", "sentence1": f"숙소가 {i}번 정말 깨끗했어요.",
            "sentence2": f"숙소는 {i}번 아주 깔끔했습니다.",
            "labels": {"label": round(real, 1), "real-label": real, "binary-label": int(real >= 3)},
            "annotations": {"agreement": "", "annotators": ["01", "02", "03"], "annotations": scores}}


def _nli(guid: str, i: int) -> dict[str, Any]:
    label = NLI_LABELS[i % 3]
    return {"guid": guid, "source": "wikipedia", "premise": f"전제 문장 {i // 2}번은 서울에 관한 이야기다.",
            "hypothesis": f"가설 {i}번은 서울 이야기다.", "gold_label": label, "author": label,
            "label2": label, "label3": label, "label4": NLI_LABELS[(i + 1) % 3], "label5": label}


def _ner(guid: str, i: int) -> dict[str, Any]:
    return {"guid": guid, "source": "wikitree", "sentence": f"<김철수:PS>는 {i}일 <서울:LC>에 갔다."}


def _re(guid: str, i: int) -> dict[str, Any]:
    sentence = f"이순신은 조선의 장군이며 {i}번 기록되었다."
    return {"guid": guid, "sentence": sentence,
            "subject_entity": {"word": "이순신", "start_idx": 0, "end_idx": 2, "type": "PER"},
            "object_entity": {"word": "조선", "start_idx": 5, "end_idx": 6, "type": "ORG"},
            "label": "per:employee_of" if i % 2 else "no_relation", "source": "wikipedia"}


def _dp(guid: str, i: int) -> dict[str, Any]:
    return {"guid": guid, "source": "news", "sentence": f"철수가 {i}번 밥을 먹었다",
            "index": [1, 2, 3, 4], "word_form": ["철수가", f"{i}번", "밥을", "먹었다"],
            "lemma": ["철수 가", f"{i} 번", "밥 을", "먹 었 다"], "pos": ["NNP+JKS", "SN+NNB", "NNG+JKO", "VV+EP+EF"],
            "head": [4, 4, 4, 0], "deprel": ["NP_SBJ", "NP_AJT", "NP_OBJ", "VP"]}


def _mrc(guid: str, i: int) -> dict[str, Any]:
    context = f"제주도 장마가 {i // 2}일 시작됐다. 장마는 한 달가량 이어진다."
    impossible = i % 3 == 2
    return {"title": f"장마 소식 {i // 2}", "context": context, "news_category": "종합", "source": "hankyung",
            "guid": guid, "question": f"장마는 얼마나 이어지나 {i}?", "answers": [] if impossible else
            [{"text": "한 달가량", "answer_start": context.index("한 달가량")}],
            "question_type": 3 if impossible else 1, "is_impossible": impossible,
            **({"plausible_answers": [{"text": "장마", "answer_start": 0}]} if impossible else {})}


def _dst(guid: str, i: int) -> dict[str, Any]:
    state = ["숙소-가격대-저렴", "숙소-지역-서울 동쪽"]
    return {"guid": guid, "domains": ["숙소"], "dialogue": [
        {"role": "user", "text": f"서울 동쪽에 {i}명 묵을 저렴한 숙소 있나요?", "state": state},
        {"role": "sys", "text": "네, 있습니다."},
        {"role": "user", "text": "인터넷도 되나요?", "state": [*state, "숙소-인터넷 가능-yes"]},
    ]}


SAMPLES = {"tc": _tc, "sts": _sts, "nli": _nli, "ner": _ner, "re": _re, "dp": _dp, "mrc": _mrc, "dst": _dst}


# -- clients, files and commands ---------------------------------------------------------------------


def client_for(user: User) -> Client:
    """A test client with the user's session, as a browser signed in as them."""
    client = Client()
    client.force_login(user)
    return client


def api_client(user: User | None) -> APIClient:
    """An API client authenticated with the user's token (or anonymous)."""
    client = APIClient()
    if user is not None:
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def jsonl(*records: dict[str, Any]) -> bytes:
    """The records as the bytes of a UTF-8 JSONL file (for uploads)."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def write_jsonl(path: Path, records: list[Any], encoding: str = "utf-8") -> Path:
    """Write records (dicts, or strings written as they are) one a line."""
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in records),
                    encoding=encoding)
    return path


def command_json(name: str, *args: str) -> dict[str, Any]:
    """Run a management command with ``--json`` and return what it printed."""
    out = StringIO()
    call_command(name, *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def run_agreement(slug: str) -> dict[str, Any]:
    """The project's agreement report, through the ``agreement`` command."""
    return command_json("agreement", slug)


def build_release(project: Project, out: Path, *args: str) -> dict[str, Any]:
    """Build a release of the project into ``out`` through the ``build_release`` command."""
    return command_json("build_release", project.slug, *args, "--out", str(out))


def nothing_written(project: Project) -> bool:
    """True when the project has no item and no annotation (a refused import left nothing behind)."""
    return not Item.objects.filter(project=project).exists() and not Annotation.objects.filter(
        item__project=project).exists()


def production_settings() -> object:
    """``config/settings.py`` loaded afresh as production loads it (``DJANGO_ENV=production``), as a module."""
    env = {"DJANGO_ENV": "production", "SECRET_KEY": "x" * 60, "ALLOWED_HOSTS": "goldset.example.org"}
    with mock.patch.dict(os.environ, env):
        spec = importlib.util.spec_from_file_location("goldset_prod_settings",
                                                      importlib.util.find_spec("config.settings").origin)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module


def poll(read: Callable[[], Any], done: Callable[[Any], bool], what: str, timeout: float = 240) -> Any:
    """What ``read`` returns once ``done`` holds for it (a job a live worker runs), read every half second;
    fails naming ``what`` and the last value after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not finish in {timeout:.0f} s: {value}")
        time.sleep(0.5)


def migrated_to(targets: list[tuple[str, str]] | None = None) -> Any:
    """Migrate the test database to ``targets`` (forwards or backwards; ``None``: the latest migrations) and
    return the historical apps there, for a test of a data migration."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    if targets is None:
        targets = executor.loader.graph.leaf_nodes()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def historical_items(apps: Any, n: int) -> tuple[Any, list[int]]:
    """A project with ``n`` items made through the historical ``apps`` of :func:`migrated_to`, and their ids."""
    project = apps.get_model("annotation", "Project").objects.create(name="p", slug="p", task_type="tc")
    item = apps.get_model("annotation", "Item")
    return project, [item.objects.create(project=project, payload={"title": str(i)}, content_hash=str(i)).pk
                     for i in range(n)]

def fresh_python(code: str) -> str:
    """What ``code`` prints in a new interpreter with the project's settings (what a process imports when it
    starts, which the test process has long imported)."""
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=Path(__file__).resolve().parents[1],
                          env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}).stdout.strip()
