"""doccano and Label Studio imports at the same bar as every format (issue 35, findings 1, 4 and 7): a record over
``GOLDSET_IMPORT_MAX_RECORD_KB`` is refused before it is read whole, a ZIP cannot expand without bound, near-
duplicate signatures take bounded memory, ``<x:TYPE>`` in a tool's text is text (only the tool's span fields
give spans), a sentence labelled with no entities stays labelled, and a label twice is a reason, not a
traceback. Fixtures: tests/data/interop/README.md."""

from __future__ import annotations

import json
import random
import resource
import zipfile
import zlib
from io import BytesIO, StringIO
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from datasketch import MinHash
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import Annotation, Item, Project
from datasets_build import dedup
from datasets_build.batch_services import imported_username
from datasets_build.klue_formats import iter_klue_records
from datasets_build.models import ImportJob, ImportStatus

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("media")]

DATA = Path(__file__).parents[1] / "data" / "interop"
LIMIT = "larger than the limit of 1,048,576 characters (GOLDSET_IMPORT_MAX_RECORD_KB)"
MARKUP_TEXT = "<b:PS> 서울 시청 앞에서 <19:QT>, 20기:QT>로가면서 만났다."


@pytest.fixture
def upload(api, make_project, django_capture_on_commit_callbacks):
    """Upload a file to an NER project through the import API (the job runs when the request commits) → the
    finished job."""
    project = make_project("ner")
    client = api(project.created_by)

    def run(name: str, content: bytes, fmt: str, **fields: str) -> ImportJob:
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(f"/api/projects/{project.pk}/imports/", {
                "file": SimpleUploadedFile(name, content), "format": fmt, **fields}, format="multipart")
        assert response.status_code == 202, response.data
        job = ImportJob.objects.get(pk=response.data["id"])
        assert job.status in (ImportStatus.SUCCEEDED, ImportStatus.FAILED), job.status
        return job

    return run


def _refused(job: ImportJob, record: int, field: str, *words: str) -> None:
    assert job.status == ImportStatus.FAILED, (job.status, job.message)
    assert job.message.startswith("nothing imported")
    assert not Item.objects.filter(project=job.project).exists()
    assert not Annotation.objects.filter(item__project=job.project).exists()
    first = job.errors[0]
    assert (first["record"], first["field"]) == (record, field), job.errors
    assert all(word in first["message"] for word in words), job.errors


def _korean(n: int, seed: int = 1) -> str:
    """``n`` random Hangul syllables: text that compresses like text, not like one repeated letter."""
    rng = random.Random(seed)
    return "".join(chr(rng.randrange(0xAC00, 0xD7A4)) for _ in range(n))


def _lines(*values: dict[str, Any]) -> bytes:
    return "".join(json.dumps(v, ensure_ascii=False) + "\n" for v in values).encode()


def _capped(extra_mb: int) -> tuple[int, int]:
    """Cap the address space at what the process uses plus ``extra_mb``; returns the limits to restore."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as statm:
        used = int(statm.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (used + extra_mb * 1024 * 1024, hard))
    return soft, hard


# -- finding 1: one record limit on every reader -------------------------------------------------------------


def test_a_5_mib_doccano_record_is_refused_naming_the_member_and_line(upload):
    big = _korean(5 * 1024 * 1024 // 2)  # 2.6 M characters, 7.5 MB of UTF-8
    member = _lines({"id": 1, "text": "이순신은 1545년 한성에서 태어났다.", "label": [[0, 3, "PS"]], "Comments": []},
                    {"id": 2, "text": big, "label": [[0, 2, "PS"]], "Comments": []})
    job = upload("project-1.zip", _zip_bytes({"kim.jsonl": member}), "doccano")
    _refused(job, 2, "kim.jsonl:", LIMIT)


def test_a_5_mib_doccano_jsonl_line_is_refused(upload):
    job = upload("train.jsonl", _lines({"text": "짧은 문장.", "label": [], "guid": "a"},
                                       {"text": "x" * (5 * 1024 * 1024), "label": [], "guid": "b"}), "doccano")
    _refused(job, 2, "", LIMIT)


def test_a_labelstudio_task_over_the_limit_is_refused_naming_the_task(upload):
    tasks = json.loads((DATA / "labelstudio_ner.json").read_text("utf-8"))
    tasks[1]["data"]["text"] = _korean(1_200_000)
    job = upload("project-2.json", json.dumps(tasks, ensure_ascii=False).encode(), "labelstudio")
    _refused(job, 2, "", "task 2 (line 1)", LIMIT)


def _zip_bytes(members: dict[str, bytes]) -> bytes:
    out = BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return out.getvalue()


@pytest.fixture(scope="module")
def bomb(tmp_path_factory) -> bytes:
    """A doccano ZIP of 0.3 MB whose one member is one 300 MiB line."""
    path = tmp_path_factory.mktemp("bomb") / "project-9.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive, \
            archive.open("kim.jsonl", "w", force_zip64=True) as member:
        member.write(b'{"id": 1, "text": "')
        chunk = b"a" * (1024 * 1024)
        for _ in range(300):
            member.write(chunk)
        member.write(b'", "label": [], "Comments": []}\n')
    return path.read_bytes()


def test_a_zip_of_a_300_mib_line_is_refused_unopened_under_a_memory_cap(upload, bomb):
    assert len(bomb) < 1024 * 1024
    limits = _capped(600)
    try:
        job = upload("project-9.zip", bomb, "doccano")
    finally:
        resource.setrlimit(resource.RLIMIT_AS, limits)
    _refused(job, 0, "kim.jsonl", "GOLDSET_IMPORT_ZIP_MAX_RATIO", "314,572,")


def test_with_the_ratio_allowed_the_300_mib_line_is_still_refused_unread(upload, bomb, settings):
    """The member is inflated and read a megabyte at a time: the line is skipped in pieces and reported."""
    settings.GOLDSET_IMPORT_ZIP_MAX_RATIO = 100_000
    limits = _capped(600)
    try:
        job = upload("project-9.zip", bomb, "doccano")
    finally:
        resource.setrlimit(resource.RLIMIT_AS, limits)
    _refused(job, 1, "kim.jsonl:", LIMIT, "314,572,")


def test_a_zip_expanding_past_the_total_limit_is_refused(upload, settings):
    settings.GOLDSET_IMPORT_ZIP_MAX_MB = 1
    members = {f"user{i}.jsonl": _lines({"id": 1, "text": _korean(200_000, i), "label": []}) for i in range(3)}
    job = upload("project-3.zip", _zip_bytes(members), "doccano")
    _refused(job, 0, "user1.jsonl", "GOLDSET_IMPORT_ZIP_MAX_MB", "1,048,576")


def test_a_zip_listing_more_files_than_a_doccano_export_is_refused_before_it_is_opened(upload):
    members = {f"user{i}.jsonl": b"" for i in range(1_001)}
    job = upload("project-4.zip", _zip_bytes(members), "doccano")
    _refused(job, 0, "", "lists 1,001 files", "at most 1,000")


def test_minhash_of_a_50_mb_text_stays_in_bounded_memory_and_matches_datasketch():
    """20.9 million shingles: one pass would hold 64 × 4 bytes of each (5.4 GB). A periodic text with a tail
    has the shingles of its first thousand and last thousand characters, so datasketch gives the reference."""
    text = ("서울 시청 앞에서 " * 2_100_000)[:20_900_000] + " 끝에만 있는 문장 하나"
    assert len(text.encode()) >= 50_000_000
    limits = _capped(400)
    try:
        (signature,) = dedup.signatures([text])
    finally:
        resource.setrlimit(resource.RLIMIT_AS, limits)
    reference = MinHash(num_perm=dedup.NUM_PERM, seed=dedup.SEED, hashfunc=zlib.crc32)
    reference.update_batch(list(dedup.shingles(text[:1000]) | dedup.shingles(text[-1000:])))
    assert np.array_equal(signature, reference.hashvalues)


def test_signatures_of_texts_cut_into_pieces_equal_datasketch():
    """Texts around a piece's size and past a normalising part (cut at whitespace), in one batch with short
    ones: the same values as hashing each text's shingles whole."""
    texts = [_korean(dedup.PIECE_SHINGLES + n) for n in (-1, 3, 4, 5, 200)]
    words = _korean(1_100_000, 7)
    texts += ["짧다", " ".join(words[i:i + 5] for i in range(0, len(words), 5)) + "  ΟΔΟΣ  끝", "ＡＢＣ  호텔\n추천"]
    for text, signature in zip(texts, dedup.signatures(texts), strict=True):
        reference = MinHash(num_perm=dedup.NUM_PERM, seed=dedup.SEED, hashfunc=zlib.crc32)
        reference.update_batch(list(dedup.shingles(text)))
        assert np.array_equal(signature, reference.hashvalues), len(text)


# -- finding 4: markup is never inferred from a tool's text ------------------------------------------------------


def _import(slug: str, path: Path, fmt: str, *extra: str) -> dict[str, Any]:
    out = StringIO()
    call_command("import_items", slug, str(path), "--format", fmt, "--task-type", "ner", "--pii", "off", "--json",
                 *extra, stdout=out)
    return json.loads(out.getvalue())


def _entities(slug: str, who: str = "") -> dict[str, list[dict[str, Any]]]:
    """Sentence → entities of the annotation by ``who`` (an author of the export; "" for the corpus)."""
    project = Project.objects.get(slug=slug)
    found = {}
    for annotation in Annotation.objects.filter(item__project=project).select_related("item", "annotator"):
        if who and annotation.annotator.username != imported_username(project, who):
            continue
        found[annotation.item.payload["sentence"]] = annotation.payload["entities"]
    return found


@pytest.mark.parametrize(("path", "fmt", "who"), [
    (DATA / "doccano_markup_text.jsonl", "doccano", ""),
    (DATA / "doccano_markup_text.zip", "doccano", "kim"),
    (DATA / "labelstudio_markup_text.json", "labelstudio", "user2"),
])
def test_markup_like_text_stays_text_with_only_the_users_spans(path, fmt, who):
    result = _import("markup", path, fmt)
    assert result["errors"] == []
    item = Item.objects.get(project__slug="markup", payload__sentence=MARKUP_TEXT)
    assert item.payload == {"sentence": MARKUP_TEXT}
    assert _entities("markup", who)[MARKUP_TEXT] == [{"start": 7, "end": 12, "type": "LC"}]
    # Nobody else's label: no corpus label made from the "<b:PS>" in the text.
    expected = {"": 1, "kim": 1, "user2": 2}[who]  # Label Studio: lee (user3) submitted it with no entities
    assert Annotation.objects.filter(item=item).count() == expected


def test_a_label_twice_on_one_item_is_a_reason_not_a_traceback(tmp_path):
    """A JSONL record may carry labels already split per author; the same author twice is the record's error
    (the database's unique constraint would otherwise stop the import with an IntegrityError)."""
    label = {"annotator": "kim", "stage": "label", "payload": {"entities": []}}
    path = tmp_path / "twice.jsonl"
    path.write_bytes(_lines({"guid": "t-1", "sentence": "한 문장.", "_annotations": [label, label]}))
    reason = r"record 1 annotations\[1\]: a second label by annotator kim at stage label;"
    with pytest.raises(CommandError, match=reason):
        _import("twice", path, "jsonl")
    assert not Item.objects.filter(project__slug="twice").exists()


def test_a_duplicate_doccano_line_is_a_one_line_reason(tmp_path):
    lines = (DATA / "doccano_markup_text.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "dup.jsonl"
    path.write_bytes(b"".join([*lines, lines[1]]))
    out = StringIO()
    with pytest.raises(CommandError, match=r"first at record 3: example markup-2 appears twice in the file$"):
        call_command("import_items", "dup", str(path), "--format", "doccano", "--task-type", "ner", "--json",
                     stdout=out)
    assert not Item.objects.filter(project__slug="dup").exists()


def _release(slug: str, formats: str, out: Path, splits: str = "--keep-splits") -> Path:
    stdout = StringIO()
    call_command("build_release", slug, "--version", "1.0.0", "--format", formats, "--out", str(out),
                 *splits.split(), "--json", stdout=stdout)
    return Path(json.loads(stdout.getvalue())["out"])


@pytest.mark.klue
def test_the_klue_ner_dev_release_comes_back_whole_through_doccano_and_label_studio(klue_dir, tmp_path):
    """Every sentence of the release, 03639 (``<19:QT>, 20기:QT>로가면서``) included, with its text and
    spans unchanged."""
    source = klue_dir / "klue-ner-v1.1_dev.tsv"
    assert _import("klue-ner", source, "klue")["errors"] == []
    folder = _release("klue-ner", "doccano,labelstudio", tmp_path / "out")
    released = [json.loads(line) for line in (folder / "doccano" / "dev.jsonl").read_text("utf-8").splitlines()]
    assert len(released) == 4_993  # of the 5,000 imported
    gold = {r["sentence"]: r for _, r in iter_klue_records(source, "ner")}
    tricky = next(r for r in released if r["guid"] == "klue-ner-v1_dev_03639")
    assert "20기:QT>" in tricky["text"]
    expected = {r["text"]: [{"start": s, "end": e, "type": t} for s, e, t in r["label"]] for r in released}
    assert all(gold[text]["guid"] for text in expected)
    for slug, path, fmt in (("back-doccano", folder / "doccano" / "dev.jsonl", "doccano"),
                            ("back-ls", folder / "labelstudio" / "dev.json", "labelstudio")):
        result = _import(slug, path, fmt)
        assert result["errors"] == [] and result["created"]["items"] == len(released), result["created"]
        assert _entities(slug) == expected
        assert Item.objects.get(project__slug=slug, external_id="klue-ner-v1_dev_03639").payload == {
            "sentence": tricky["text"]}


# -- finding 7: a sentence labelled with no entities stays labelled --------------------------------------------


def test_an_empty_doccano_label_list_stays_a_label_into_the_next_release(tmp_path):
    assert _import("empty", DATA / "doccano_markup_text.jsonl", "doccano")["created"] == {"items": 2,
                                                                                           "annotations": 2}
    assert _entities("empty")["오늘은 아무 일도 없었다."] == []
    folder = _release("empty", "doccano", tmp_path / "out", "--splits 1.0,0.0")
    released = {json.loads(line)["guid"]: json.loads(line)
                for path in (folder / "doccano").glob("*.jsonl") for line in path.read_text("utf-8").splitlines()}
    assert released["markup-2"]["label"] == [] and released["markup-1"]["label"] == [[7, 12, "LC"]]


def test_in_a_doccano_zip_an_empty_list_is_no_label_since_doccano_writes_every_example_to_every_member():
    assert _import("empty-zip", DATA / "doccano_markup_text.zip", "doccano")["created"] == {"items": 2,
                                                                                             "annotations": 1}


#: ``doccano_ner_approved.zip`` and ``doccano_ner_all.zip``: one doccano 1.8.4 project exported with "Export only
#: approved documents" and without (tests/data/interop/README.md). kim confirmed the first sentence (one entity)
#: and the second (none); lee the third (one entity).
APPROVED = {"kim": {"이순신은 1545년 한성에서 태어났다.": [{"start": 0, "end": 3, "type": "PS"}],
                    "오늘은 아무 일도 없었다.": []},
            "lee": {"삼성전자는 수원에 본사를 두고 있다.": [{"start": 0, "end": 4, "type": "OG"}]}}


def _members(path: Path) -> dict[str, list[dict[str, Any]]]:
    with zipfile.ZipFile(path) as archive:
        return {name: [json.loads(line) for line in archive.read(name).decode().splitlines() if line]
                for name in archive.namelist()}


def test_doccano_marks_a_sentence_confirmed_with_no_entities_only_by_exporting_approved_examples():
    """What doccano 1.8.4 itself writes: the full export gives the confirmed sentence with no entities to every
    member as ``"label": []``, like any example nobody labelled; the export of approved examples gives each member
    only the examples that member confirmed."""
    full, approved = _members(DATA / "doccano_ner_all.zip"), _members(DATA / "doccano_ner_approved.zip")
    empty = "오늘은 아무 일도 없었다."
    assert all(any(line["text"] == empty and line["label"] == [] for line in lines) for lines in full.values())
    assert all(len(lines) == 3 for lines in full.values())
    assert {name: [line["text"] for line in lines] for name, lines in approved.items() if lines} == {
        f"{who}.jsonl": list(texts) for who, texts in APPROVED.items()}
    assert [line["label"] for line in approved["kim.jsonl"] if line["text"] == empty] == [[]]


def test_an_export_of_approved_examples_keeps_a_confirmed_sentence_with_no_entities_through_the_api(upload):
    job = upload("project-1.zip", (DATA / "doccano_ner_approved.zip").read_bytes(), "doccano", approved_only="true")
    assert job.status == ImportStatus.SUCCEEDED, job.errors
    assert (job.items_written, job.annotations_written) == (3, 3)
    assert job.options["approved_only"] is True
    for who, expected in APPROVED.items():
        assert _entities(job.project.slug, who) == expected
    # Released again, the sentence is one labelled with nothing, not left out as unlabelled.
    item = Item.objects.get(project=job.project, payload__sentence="오늘은 아무 일도 없었다.")
    assert Annotation.objects.filter(item=item).count() == 1


def test_without_the_option_a_doccano_zip_keeps_only_the_labels_it_shows(tmp_path):
    for slug, name, extra, labelled in (("full", "doccano_ner_all.zip", (), 2),
                                        ("approved-off", "doccano_ner_approved.zip", (), 2),
                                        ("approved-on", "doccano_ner_approved.zip", ("--approved-only",), 3)):
        result = _import(slug, DATA / name, "doccano", *extra)
        assert result["errors"] == [] and result["created"] == {"items": 3, "annotations": labelled}, slug
    assert _entities("approved-on", "kim")["오늘은 아무 일도 없었다."] == []
    assert "오늘은 아무 일도 없었다." not in _entities("approved-off")
    folder = _release("approved-on", "doccano", tmp_path / "out", "--splits 1.0,0.0")
    released = [json.loads(line) for path in (folder / "doccano").glob("*.jsonl")
                for line in path.read_text("utf-8").splitlines()]
    assert {"text": "오늘은 아무 일도 없었다.", "label": []} in [
        {key: line[key] for key in ("text", "label")} for line in released]


def test_approved_only_is_refused_for_a_format_that_has_no_approved_examples(api, make_project):
    project = make_project("ner")
    response = api(project.created_by).post(f"/api/projects/{project.pk}/imports/", {
        "file": SimpleUploadedFile("tasks.json", (DATA / "labelstudio_ner.json").read_bytes()),
        "format": "labelstudio", "approved_only": "true"}, format="multipart")
    assert response.status_code == 400, response.data
    assert "approved_only is for doccano exports" in json.dumps(response.data)
    assert not ImportJob.objects.filter(project=project).exists()
    with pytest.raises(CommandError, match="approved_only is for doccano exports"):
        _import("ls-approved", DATA / "labelstudio_ner.json", "labelstudio", "--approved-only")
    assert not Item.objects.filter(project__slug="ls-approved").exists()


# -- findings 4 and 7 through the real tools: their exports of a Goldset release ---------------------------------

#: ``goldset_release_ner_tricky.jsonl`` (03639's released line, markup-like text, a sentence with no entities), as
#: the real doccano 1.8.4 and Label Studio 1.23.2 gave it back (tests/data/interop/README.md).
TRICKY = {"klue-ner-v1_dev_03639": ("19, 20기:QT>로가면서 실망했지만 21기에서 다시회복!시로랑 춤출때 졸귀♥",
                                    [{"start": 0, "end": 2, "type": "QT"}, {"start": 22, "end": 25, "type": "QT"},
                                     {"start": 33, "end": 35, "type": "PS"}]),
          "markup-1": (MARKUP_TEXT, [{"start": 7, "end": 12, "type": "LC"}]),
          "markup-2": ("오늘은 아무 일도 없었다.", [])}


def _doccano_member(tmp_path: Path) -> Path:
    """The ``admin.jsonl`` of doccano's ZIP, unzipped as a user would."""
    path = tmp_path / "admin.jsonl"
    with zipfile.ZipFile(DATA / "doccano_real_roundtrip_ner.zip") as archive:
        assert archive.namelist() == ["admin.jsonl"]
        path.write_bytes(archive.read("admin.jsonl"))
    return path


@pytest.mark.parametrize(("source", "fmt", "labelled"), [
    ("labelstudio_real_roundtrip_ner.json", "labelstudio", set(TRICKY)),
    ("admin.jsonl", "doccano", set(TRICKY)),
    # doccano's ZIP writes an example nobody labelled with "label": [] too: the empty list there is no label.
    ("doccano_real_roundtrip_ner.zip", "doccano", set(TRICKY) - {"markup-2"}),
])
def test_the_real_tools_exports_of_a_release_come_back_with_every_sentence_and_span(source, fmt, labelled, tmp_path):
    path = _doccano_member(tmp_path) if source == "admin.jsonl" else DATA / source
    result = _import("real", path, fmt)
    assert result["errors"] == [] and result["created"] == {"items": 3, "annotations": len(labelled)}
    items = {item.external_id: item for item in Item.objects.filter(project__slug="real")}
    assert {guid: item.payload for guid, item in items.items()} == {
        guid: {"sentence": text} for guid, (text, _) in TRICKY.items()}
    assert _entities("real") == {TRICKY[guid][0]: TRICKY[guid][1] for guid in labelled}
    folder = _release("real", "doccano", tmp_path / "out", "--splits 1.0,0.0")
    released = {json.loads(line)["guid"]: json.loads(line)
                for path in (folder / "doccano").glob("*.jsonl") for line in path.read_text("utf-8").splitlines()}
    assert released == {guid: {"text": TRICKY[guid][0], "guid": guid,
                               "label": [[e["start"], e["end"], e["type"]] for e in TRICKY[guid][1]]}
                        for guid in labelled}
