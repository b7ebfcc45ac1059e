"""Issue 35, finding 8: a WoS (dst) corpus's ontology is recorded at import and a release ships it — the source's
slots in the source's order with the source's values — not the project's default. See docs/formats.md, "WoS
ontology"."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from annotation.models import Item, Project
from annotation.task_types.dst import FREE_VALUE_SLOTS, ONTOLOGY, release_ontology
from datasets_build.models import ImportStatus
from datasets_build.ontology import ONTOLOGY_SLOTS
from tests.builders import build_release

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("media")]

#: A small ontology in an order of its own (not the default's), values the default does not have.
SMALL = {"택시-도착지": ["none", "dontcare", "서울역", "한빛 호텔"], "숙소-지역": ["none", "dontcare", "서울 동쪽"],
         "숙소-종류": ["none", "dontcare", "한옥 스테이"]}


def dialogue(n: int, state: list[str]) -> dict:
    return {"guid": f"wos-v1_train_{n:05d}", "domains": sorted({s.split("-")[0] for s in state}), "dialogue": [
        {"role": "user", "text": f"{n}번째 요청입니다. 조건에 맞는 곳을 알려주세요.", "state": state},
        {"role": "sys", "text": "네, 찾아보겠습니다."}]}


DIALOGUES = [dialogue(1, ["숙소-종류-한옥 스테이"]), dialogue(2, ["택시-도착지-한빛 호텔", "숙소-지역-서울 동쪽"]),
             dialogue(3, ["택시-도착지-서울역"])]


def state_strings(records: list[dict]) -> set[str]:
    return {s for r in records for turn in r["dialogue"] if turn["role"] == "user" for s in turn["state"]}


def missing(states: set[str], ontology: dict[str, list[str]]) -> set[str]:
    return {s for s in states if s.split("-", 2)[2] not in ontology.get("-".join(s.split("-", 2)[:2]), [])}


def released_ontology(project: Project, out: Path) -> tuple[Path, dict]:
    folder = Path(build_release(project, out, "--version", "1.0.0", "--keep-splits", "--format", "klue")["out"])
    path = folder / "wos-v1.1_ontology.json"
    return folder, json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.klue
def test_a_klue_wos_import_records_the_ontology_beside_it_and_the_release_ships_it(klue_dir, tmp_path):
    source = klue_dir / "wos-v1.1_ontology.json"
    out = StringIO()
    call_command("import_items", "wos-real", str(klue_dir / "wos-v1.1_dev_sample_10.json"), "--format", "klue",
                 "--task-type", "dst", "--pii", "off", "--json", stdout=out)
    result = json.loads(out.getvalue())
    assert result["errors"] == [] and result["created"]["items"] == 10
    assert result["summary"]["ontology"] == {"file": "wos-v1.1_ontology.json", "slots": 45, "values": 2452,
                                             "recorded": True}
    project = Project.objects.get(slug="wos-real")
    folder, shipped = released_ontology(project, tmp_path / "out")
    original = json.loads(source.read_text(encoding="utf-8"))
    # The source's ontology, as it was: same slots in the same order, same values; the same bytes even.
    assert list(shipped.items()) == list(original.items())
    assert sum(map(len, shipped.values())) == 2452
    assert (folder / "wos-v1.1_ontology.json").read_bytes() == source.read_bytes()
    # The released dialogues are the source's, and every state string is in the released ontology but for those
    # KLUE's own ontology leaves out: open slots (names, times, places) that take any value.
    released = json.loads((folder / "wos-v1.1_dev.json").read_text(encoding="utf-8"))
    assert released == json.loads((klue_dir / "wos-v1.1_dev_sample_10.json").read_text(encoding="utf-8"))
    states = state_strings(released)
    assert len(states) == 99
    assert missing(states, shipped) == missing(states, original) and len(missing(states, shipped)) == 13
    assert {"-".join(s.split("-", 2)[:2]) for s in missing(states, shipped)} <= set(FREE_VALUE_SLOTS)
    # What the release shipped before: the project's default, which misses 39 of them.
    default = release_ontology({"ontology": ONTOLOGY})
    assert sum(map(len, default.values())) == 229 and len(missing(states, default)) == 39


def test_the_command_takes_an_ontology_and_refuses_one_for_another_task_type(make_project, tmp_path):
    dialogues, ontology = tmp_path / "dialogues.jsonl", tmp_path / "my_ontology.json"
    dialogues.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in DIALOGUES), encoding="utf-8")
    ontology.write_text(json.dumps(SMALL, ensure_ascii=False), encoding="utf-8")
    call_command("import_items", "wos-small", str(dialogues), "--format", "jsonl", "--task-type", "dst",
                 "--pii", "off", "--ontology", str(ontology), stdout=StringIO())
    project = Project.objects.get(slug="wos-small")
    assert project.label_schema["ontology"] == SMALL and project.label_schema[ONTOLOGY_SLOTS] == list(SMALL)
    project.items.update(split="train")
    _, shipped = released_ontology(project, tmp_path / "out")
    assert list(shipped.items()) == list(SMALL.items())
    assert not missing(state_strings(DIALOGUES), shipped)

    tc = make_project("tc")
    with pytest.raises(CommandError, match=r"my_ontology\.json: an ontology comes with WoS dialogues \(dst\)"):
        call_command("import_items", tc.slug, str(dialogues), "--format", "jsonl", "--ontology", str(ontology),
                     stdout=StringIO())
    assert not Item.objects.filter(project=tc).exists()


def upload(name: str, content: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content, content_type="application/octet-stream")


def test_the_import_api_takes_the_ontology_with_the_dialogues(api, make_project, media,
                                                              django_capture_on_commit_callbacks):
    project = make_project("dst")
    client = api(project.created_by)
    url = f"/api/projects/{project.pk}/imports/"
    body = "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in DIALOGUES).encode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, {"file": upload("wos.jsonl", body), "format": "jsonl", "pii": "off",
                                     "ontology": upload("wos-v1.1_ontology.json",
                                                        json.dumps(SMALL, ensure_ascii=False).encode())},
                               format="multipart")
    assert response.status_code == 202, response.data
    job = client.get(f"{url}{response.data['id']}/").data
    assert job["status"] == ImportStatus.SUCCEEDED, job["errors"]
    assert job["options"]["ontology"] == "wos-v1.1_ontology.json"  # its name, not where it was stored
    assert job["summary"]["ontology"] == {"file": "wos-v1.1_ontology.json", "slots": 3, "values": 10,
                                          "recorded": True}
    project.refresh_from_db()
    assert project.label_schema["ontology"] == SMALL and project.label_schema[ONTOLOGY_SLOTS] == list(SMALL)
    assert list((media / "imports").iterdir()) == []  # both uploads are gone

    # A project with items keeps its ontology: another one is refused, and nothing of that import is written.
    other = {**SMALL, "숙소-지역": ["none", "dontcare", "서울 서쪽"]}
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, {"file": upload("more.jsonl", json.dumps(dialogue(9, ["숙소-지역-서울 서쪽"]),
                                                                             ensure_ascii=False).encode()),
                                     "format": "jsonl", "ontology": upload("other.json", json.dumps(other).encode())},
                               format="multipart")
    job = client.get(f"{url}{response.data['id']}/").data
    assert job["status"] == ImportStatus.FAILED
    assert job["errors"][0]["field"] == "ontology" and "other.json: differs from the ontology of" in job["errors"][0][
        "message"]
    project.refresh_from_db()
    assert project.label_schema["ontology"] == SMALL and project.items.count() == 3


@pytest.mark.parametrize(("task", "name", "content", "message"), [
    ("tc", "o.json", json.dumps(SMALL), "an ontology comes with WoS dialogues (dst)"),
    ("dst", "o.txt", json.dumps(SMALL), "the ontology is a .json file"),
    ("dst", "o.json", "{not json", "o.json: is not JSON"),
    ("dst", "o.json", json.dumps(["a"]), 'o.json: must be a JSON object of "domain-slot": [values]'),
    ("dst", "o.json", json.dumps({"숙소": ["a"]}), "o.json: slot '숙소' is not 'domain-slot'"),
    ("dst", "o.json", json.dumps({"숙소-지역": ["a", "a"]}), "o.json: '숙소-지역' lists 'a' twice"),
])
def test_a_bad_ontology_upload_is_refused_with_its_reason(api, make_project, media, task, name, content, message):
    project = make_project(task)
    response = api(project.created_by).post(f"/api/projects/{project.pk}/imports/", {
        "file": upload("wos.jsonl", json.dumps(DIALOGUES[0], ensure_ascii=False).encode()), "format": "jsonl",
        "ontology": upload(name, content.encode())}, format="multipart")
    assert response.status_code == 400
    assert response.data["field"] == "ontology" and message in response.data["detail"]
    assert not (media / "imports").exists() or list((media / "imports").iterdir()) == []


def test_the_import_page_takes_the_ontology(client, make_project, media, django_capture_on_commit_callbacks):
    project = make_project("dst")
    client.force_login(project.created_by)
    page = client.get(f"/projects/{project.pk}/import/")
    assert page.status_code == 200 and 'name="ontology"' in page.content.decode()
    body = "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in DIALOGUES).encode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/projects/{project.pk}/import/", {
            "file": upload("wos.jsonl", body), "format": "jsonl", "pii": "off", "encoding": "auto",
            "duplicates": "skip", "ontology": upload("wos-v1.1_ontology.json",
                                                     json.dumps(SMALL, ensure_ascii=False).encode())})
    assert response.status_code == 302
    project.refresh_from_db()
    assert project.label_schema[ONTOLOGY_SLOTS] == list(SMALL) and project.items.count() == 3
    tc = make_project("tc", manager=project.created_by)
    assert 'name="ontology"' not in client.get(f"/projects/{tc.pk}/import/").content.decode()
