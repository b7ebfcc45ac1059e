"""The ``labelstudio`` release format (NER, RE) and its round trip through a real Label Studio.

The release is built from the synthetic items of ``tests/data/interop/labelstudio_roundtrip_items_*.jsonl``
and compared byte for byte with the files that were uploaded to Label Studio 1.23.2; Label Studio's export of
the project (committed, with two more annotators' work on it; tests/data/interop/README.md) is imported
back with ``import_items --format labelstudio`` and must keep every span and relation."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.agreement.services import report_now
from annotation.models import Annotation, Item, Project
from datasets_build.batch_services import imported_username
from exports.models import BUILT
from tests.builders import load_records, sample_records

pytestmark = pytest.mark.django_db

INTEROP = Path(__file__).resolve().parents[1] / "data" / "interop"


def _command(name: str, *args: str) -> dict[str, Any]:
    out = StringIO()
    call_command(name, *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def _released(task: str, tmp_path: Path) -> Path:
    """The release folder of the round trip's items, built as README.md says."""
    slug = f"lsrt-{task}"
    _command("import_items", slug, str(INTEROP / f"labelstudio_roundtrip_items_{task}.jsonl"), "--format", "jsonl",
             "--task-type", task, "--pii", "off")
    return Path(_command("build_release", slug, "--version", "1.0.0", "--format", "labelstudio,doccano",
                         "--splits", "1.0,0.0", "--out", str(tmp_path))["out"])


def _back(task: str, export: str) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Import a Label Studio export; external id → annotator (``user<id>``) → annotation payloads."""
    slug = f"lsrt-{task}-back"
    _command("import_items", slug, str(INTEROP / export), "--format", "labelstudio", "--task-type", task,
             "--source", "ls", "--pii", "off")
    project = Project.objects.get(slug=slug)
    authors = {imported_username(project, f"user{n}"): f"user{n}" for n in range(1, 10)}
    found: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for a in Annotation.objects.filter(item__project=project).select_related("item", "annotator"):
        found.setdefault(a.item.external_id, {}).setdefault(authors[a.annotator.username], []).append(a.payload)
    return found


def _tasks(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text("utf-8"))


def _exported(export: str) -> dict[str, dict[str, Any]]:
    return {task["data"]["guid"]: task for task in _tasks(INTEROP / export)}


def _importer(export: str, released: list[dict[str, Any]]) -> str:
    """The Label Studio user the import made the annotations as: on every task, the author of an annotation
    whose result is the release's, unchanged (ids, offsets, texts, labels)."""
    results = {task["data"]["guid"]: task["annotations"][0]["result"] for task in released}
    (user,) = set.intersection(*({a["completed_by"] for a in task["annotations"] if a["result"] == results[guid]}
                                 for guid, task in _exported(export).items()))
    assert len(_exported(export)) == len(released)
    return f"user{user}"


@pytest.mark.parametrize("task", ["ner", "re"])
def test_the_release_is_the_file_that_went_into_label_studio(task, tmp_path):
    folder = _released(task, tmp_path)
    for written, fixture in (("labelstudio/train.json", f"goldset_labelstudio_{task}.json"),
                             ("labelstudio/config.xml", f"goldset_labelstudio_{task}.config.xml"),
                             ("doccano/train.jsonl", f"goldset_doccano_{task}.jsonl")):
        assert (folder / written).read_bytes() == (INTEROP / fixture).read_bytes(), written
    card = (folder / "README.md").read_text("utf-8")
    assert "| `labelstudio/train.json` | Label Studio JSON tasks | train |" in card
    assert "| `labelstudio/config.xml` | Label Studio JSON tasks |" in card


def test_ner_round_trip_through_a_real_label_studio_keeps_every_span(tmp_path):
    released = _tasks(_released("ner", tmp_path) / "labelstudio" / "train.json")
    source = Project.objects.get(slug="lsrt-ner")
    before = {i.external_id: Annotation.objects.get(item=i).payload["entities"] for i in source.items.all()}
    assert len(released) == len(before) == 6 and sum(map(len, before.values())) == 15
    back = _back("ner", "labelstudio_roundtrip_ner.json")
    importer = _importer("labelstudio_roundtrip_ner.json", released)
    assert {guid: labels[importer] for guid, labels in back.items()} == {
        guid: [{"entities": entities}] for guid, entities in before.items()}
    # The sentence without entities came back as a label that says so, not as an unlabelled item.
    assert back["lsrt-ner-6"][importer] == [{"entities": []}]
    # Each Label Studio user's work is its own annotation: kim on every task (one quantity left out), lee on
    # the first (lee's cancelled task gives nothing).
    others = {guid: {who: p for who, p in labels.items() if who != importer} for guid, labels in back.items()}
    kim = next(who for who in others["lsrt-ner-2"])
    assert [e for e in before["lsrt-ner-2"] if e["type"] != "QT"] == others["lsrt-ner-2"][kim][0]["entities"]
    assert all(others[guid][kim] == [{"entities": before[guid]}] for guid in before if guid != "lsrt-ner-2")
    (lee,) = set(others["lsrt-ner-1"]) - {kim}
    assert others["lsrt-ner-1"][lee] == [{"entities": [{"start": 0, "end": 3, "type": "PS"},
                                                       {"start": 19, "end": 23, "type": "OG"}]}]
    assert lee not in others["lsrt-ner-3"]
    assert report_now(Project.objects.get(slug="lsrt-ner-back"))["annotators"] == 3


def test_re_round_trip_through_a_real_label_studio_keeps_every_relation(tmp_path):
    released = _tasks(_released("re", tmp_path) / "labelstudio" / "train.json")
    originals = {i.external_id: i for i in Project.objects.get(slug="lsrt-re").items.all()}
    back = _back("re", "labelstudio_roundtrip_re.json")
    importer = _importer("labelstudio_roundtrip_re.json", released)
    assert set(back) == set(originals) and len(originals) == 7
    for guid, item in originals.items():
        again = Item.objects.get(project__slug="lsrt-re-back", external_id=guid)
        assert again.payload == item.payload, guid  # sentence, subject and object entity with their types
        assert back[guid][importer] == [Annotation.objects.get(item=item).payload], guid
    others = {guid: {who: p for who, p in labels.items() if who != importer} for guid, labels in back.items()}
    # kim and lee on the first pair (lee drew it from object to subject: it is the same pair, the same label),
    # kim's "colleagues" on the last, lee's "title" on the fourth.
    assert sorted(map(str, others["lsrt-re-1"].values())) == [str([{"label": "org:founded_by"}])] * 2
    assert list(others["lsrt-re-7"].values()) == [[{"label": "per:colleagues"}]]
    assert list(others["lsrt-re-4"].values()) == [[{"label": "per:title"}]]
    assert report_now(Project.objects.get(slug="lsrt-re-back"))["annotators"] == 3


@pytest.mark.parametrize(("task", "items"), [("ner", 6), ("re", 0)])
def test_label_studio_takes_the_doccano_lines_as_task_data_without_annotations(task, items):
    """Why the labelstudio format exists: Label Studio 1.23.2 refuses the doccano release's ``.jsonl``, and
    takes its lines as a JSON array only as task data (doccano's ``label`` / ``entities`` / ``relations``
    are fields of ``data``), with no annotation, so no label comes back."""
    exported = _tasks(INTEROP / f"labelstudio_of_doccano_{task}.json")
    doccano = [json.loads(line) for line in (INTEROP / f"goldset_doccano_{task}.jsonl").read_text("utf-8").split(
        "\n") if line]
    assert [t["data"] for t in exported] == doccano
    assert all(t["annotations"] == [] for t in exported)
    args = ("import_items", f"lsdc-{task}", str(INTEROP / f"labelstudio_of_doccano_{task}.json"),
            "--format", "labelstudio", "--task-type", task, "--pii", "off")
    if not items:  # RE: an item is a related pair, and nothing is related: a file of no records is refused
        with pytest.raises(CommandError, match="the file holds no records"):
            _command(*args)
        return
    # NER: the sentences come in unlabelled.
    assert _command(*args)["created"] == {"items": items, "annotations": 0}


@pytest.mark.parametrize("task", ["tc", "dp", "mrc"])
def test_the_labelstudio_format_is_refused_for_other_task_types(task, make_project, tmp_path):
    project = make_project(task)
    load_records(project, sample_records(task, 4))
    with pytest.raises(CommandError, match=f"format labelstudio is for ner, re projects, not {task}"):
        _command("build_release", project.slug, "--version", "1.0.0", "--format", "klue,labelstudio", "--out",
                 str(tmp_path))


def test_a_manager_chooses_labelstudio_in_the_api_and_the_release_form(make_project, api, client, settings, tmp_path,
                                                                       django_capture_on_commit_callbacks):
    settings.GOLDSET_RELEASE_ROOT = str(tmp_path / "releases")
    project = make_project("re")
    project.label_schema = {**project.label_schema, "labels": ["no_relation", "per:employee_of"]}
    project.save(update_fields=["label_schema"])
    load_records(project, sample_records("re", 4))
    manager = project.created_by
    client.force_login(manager)
    page = client.get(f"/projects/{project.pk}/releases/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert 'value="labelstudio"' in page and 'value="conllu"' not in page
    assert "Label Studio JSON tasks" in page and "labelstudio —" not in page
    korean = client.get(f"/projects/{project.pk}/releases/", HTTP_ACCEPT_LANGUAGE="ko").content.decode()
    assert "Label Studio JSON 작업 형식" in korean and "labelstudio —" not in korean
    with django_capture_on_commit_callbacks(execute=True):
        made = api(manager).post(f"/api/projects/{project.pk}/releases/",
                                 {"version": "1.0.0", "formats": ["klue", "labelstudio"], "splits": "1.0,0.0"},
                                 format="json")
    assert made.status_code == 202, made.content
    release = project.releases.get(version="1.0.0")
    assert release.status in BUILT, release.error
    folder = Path(release.out_dir)
    tasks = _tasks(folder / "labelstudio" / "train.json")
    assert [t["annotations"][0]["result"][2]["labels"] for t in tasks] == [
        [r["label"]] for r in sample_records("re", 4)]
    # The labelling config lists the project's own relation names and entity types.
    config = (folder / "labelstudio" / "config.xml").read_text("utf-8")
    assert '<Relation value="per:employee_of"/>' in config and "org:founded_by" not in config
    assert '<Label value="PER"/>' in config
    assert {f.path for f in release.files.all()} >= {"labelstudio/train.json", "labelstudio/config.xml"}
