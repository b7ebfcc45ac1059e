"""Deduplication: exact (normalised text hash) and near duplicates (MinHash LSH bands in the database)."""

from __future__ import annotations

import json
import zlib
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from datasketch import MinHash
from django.db import connection

from annotation.models import Item
from annotation.services import project_delete
from datasets_build import dedup
from datasets_build.models import MinHashBand, NearDuplicate
from datasets_build.services import items_import
from tests.builders import fresh_python

BASE = "호스트가 체크인 전에 자세한 안내를 보내 주셔서 처음 가는 길인데도 쉽게 찾아갈 수 있었어요"


def write(path: Path, titles: list[str]) -> Path:
    path.write_text("\n".join(json.dumps({"guid": f"{path.stem}-{i}", "title": t}, ensure_ascii=False)
                              for i, t in enumerate(titles)), encoding="utf-8")
    return path


def test_similarity_of_near_and_far_texts():
    far_text = "전혀 관계없는 야구 경기 결과 기사입니다"
    near, edited, far = dedup.signatures([BASE, BASE.replace("쉽게", "금방"), far_text])
    assert dedup.similarity(near, edited) >= 0.7
    assert dedup.similarity(near, far) < 0.1
    assert len(dedup.band_keys(near)) == dedup.BANDS


def test_batch_signatures_equal_datasketch_minhash():
    """The numpy batch computes exactly what datasketch's MinHash does for the same shingles, so band keys
    of items indexed before the batch version still match."""
    # Hashed a byte position at a time for all shingles together: texts of every length around SHINGLE, and
    # characters of one to four UTF-8 bytes, so that a wrong offset or width changes a value.
    texts = [BASE, "abc", "", "짧은 글", BASE * 3, "a", "abcde", "abcdef", "é ü ß", "😀 이모지 🎉 test ✓",
             "ＡＢＣ  호텔\n추천"]
    for text, signature in zip(texts, dedup.signatures(texts), strict=True):
        reference = MinHash(num_perm=dedup.NUM_PERM, seed=dedup.SEED, hashfunc=zlib.crc32)
        reference.update_batch(list(dedup.shingles(text)))
        assert np.array_equal(signature, reference.hashvalues)


def test_the_importer_does_not_import_datasketch():
    """datasketch's package imports its LSH and scipy (a second of CPU and ~27 MB in every process that
    imports the pipeline: the embedded ``import_items``, the web and Celery workers); only its MinHash
    parameters are needed, drawn the same way (the test above)."""
    code = ("import django, sys; django.setup(); import datasets_build.pipeline; "
            "print(sorted(m for m in ('datasketch', 'scipy') if m in sys.modules))")
    assert fresh_python(code) == "[]"


def test_normalisation_makes_spacing_and_width_variants_equal():
    assert dedup.normalise("ＡＢＣ  호텔\n추천") == dedup.normalise("abc 호텔 추천")


def near_duplicate_groups(project) -> list[set[int]]:
    """The project's near-duplicate groups (``NearDuplicate`` rows) as sets of item ids, by first item."""
    groups: dict[int, set[int]] = {}
    for item_id, group in NearDuplicate.objects.filter(project=project).values_list("item_id", "group"):
        groups.setdefault(group, set()).add(item_id)
    return sorted(groups.values(), key=min)


@pytest.mark.django_db
def test_near_duplicates_across_imports_and_their_groups(tmp_path, make_project):
    project = make_project("tc")
    items_import(project, write(tmp_path / "a.jsonl", [BASE, "완전히 다른 두 번째 기사의 제목입니다 정말로"]), "jsonl")
    result = items_import(project, write(tmp_path / "b.jsonl", [BASE + ".", BASE + "!!"]), "jsonl")
    # Both new items are near duplicates of the first import's item (and of each other): one group of three,
    # one row per item, named by the first item.
    assert result.items == 2 and result.summary["near_duplicates"] == 2
    assert MinHashBand.objects.filter(project=project).count() == 4 * dedup.BANDS
    groups = near_duplicate_groups(project)
    first = Item.objects.get(project=project, payload__title=BASE).pk
    assert groups == [{first, *Item.objects.filter(project=project, pk__gt=first + 1).values_list("pk", flat=True)}]
    rows = NearDuplicate.objects.filter(project=project)
    assert rows.count() == 3 and {row.group for row in rows} == {first}
    assert all(row.similarity >= dedup.threshold() for row in rows.exclude(item_id=first))


@pytest.mark.django_db
def test_an_item_near_two_groups_merges_them_into_the_earlier(tmp_path, make_project, settings):
    """Union-find across imports: a later item nearly equal to members of two groups joins them; the merged
    group keeps the earlier group's name (its first item's id) and every member has one row."""
    settings.GOLDSET_NEAR_DUPLICATE_THRESHOLD = 0.6
    # Two texts sharing their middle (estimated similarity 0.41), and one holding both whole (0.75 and 0.66).
    head, middle, tail = "오늘 아침 시장에서 사과를 샀다 ", BASE[:28], " 그리고 저녁에는 영화를 보았다"
    first_left, first_right, both = head + middle, middle + tail, head + middle + tail
    project = make_project("tc")
    items_import(project, write(tmp_path / "a.jsonl", [first_left, first_left + "!"]), "jsonl")
    items_import(project, write(tmp_path / "b.jsonl", [first_right, first_right + "!"]), "jsonl")
    a, a2, b, b2 = Item.objects.filter(project=project).order_by("pk").values_list("pk", flat=True)
    assert near_duplicate_groups(project) == [{a, a2}, {b, b2}]
    result = items_import(project, write(tmp_path / "c.jsonl", [both]), "jsonl")
    assert result.summary["near_duplicates"] == 1
    c = Item.objects.get(project=project, payload__title=both).pk
    assert near_duplicate_groups(project) == [{a, a2, b, b2, c}]
    assert set(NearDuplicate.objects.filter(project=project).values_list("group", flat=True)) == {a}
    assert NearDuplicate.objects.filter(project=project).count() == 5


@pytest.mark.django_db
@pytest.mark.parametrize("remembered", [17, 0], ids=["groups-in-memory", "groups-read-back"])
def test_groups_merged_within_one_import_across_its_batches(tmp_path, make_project, settings, monkeypatch,
                                                            remembered):
    """Within one import, batch after batch: the groups of its earlier items come from memory (or, once
    forgotten, from the database) and follow the merges it made, so the groups are the same either way."""
    from datasets_build import pipeline

    settings.GOLDSET_NEAR_DUPLICATE_THRESHOLD = 0.6
    monkeypatch.setattr(pipeline, "BATCH_SIZE", 2)
    init = dedup.WrittenSignatures.__init__
    monkeypatch.setattr(dedup.WrittenSignatures, "__init__", lambda self, slots_log2=remembered: init(self, slots_log2))
    head, middle, tail = "오늘 아침 시장에서 사과를 샀다 ", BASE[:28], " 그리고 저녁에는 영화를 보았다"
    left, right, both = head + middle, middle + tail, head + middle + tail
    project = make_project("tc")
    # Batches of two: the third merges the first two groups; the fourth's item finds the renamed one.
    far = "완전히 다른 두 번째 기사의 제목입니다 정말로"
    result = items_import(project, write(tmp_path / "a.jsonl", [left, left + "!", right, right + "!", both, far,
                                                                 right + "?"]), "jsonl")
    assert result.summary["near_duplicates"] == 4
    ids = list(Item.objects.filter(project=project).order_by("pk").values_list("pk", flat=True))
    assert near_duplicate_groups(project) == [set(ids) - {ids[5]}]
    assert set(NearDuplicate.objects.filter(project=project).values_list("group", flat=True)) == {ids[0]}


def test_remembered_groups_follow_the_rows_written():
    """The groups an import keeps of its last items follow the group rows it writes: items joining a group,
    groups renamed when merged; an item whose slot a newer one took is no longer held (it is read back)."""
    remembered = dedup.WrittenSignatures(slots_log2=4)
    signatures = np.zeros((3, dedup.NUM_PERM), dtype=np.uint32)
    remembered.add([1, 2, 3], signatures, ["", "", ""])
    assert remembered.groups([1, 2, 3]) == ({1, 2, 3}, {})
    remembered.regroup([], [(1, 1), (2, 1), (3, 3)])
    remembered.regroup([(3, 1)], [])
    assert remembered.groups([1, 2, 3, 5]) == ({1, 2, 3}, {1: 1, 2: 1, 3: 1})
    remembered.add([17], signatures[:1], [""])  # 17 takes 1's slot, in no group yet
    assert remembered.groups([1, 17, 2]) == ({17, 2}, {2: 1})


@pytest.mark.django_db
def test_items_of_one_group_are_not_reported_as_near_duplicates(tmp_path, make_project):
    project = make_project("mrc")
    context = BASE * 5
    path = tmp_path / "mrc.jsonl"
    path.write_text("\n".join(json.dumps({"guid": f"q-{i}", "title": "제목", "context": context, "question": q},
                                         ensure_ascii=False) for i, q in enumerate(["어디에?", "언제?"])),
                    encoding="utf-8")
    result = items_import(project, path, "jsonl")
    assert result.items == 2 and result.summary["near_duplicates"] == 0


@pytest.mark.django_db
def test_the_threshold_is_a_setting(tmp_path, make_project, settings):
    settings.GOLDSET_NEAR_DUPLICATE_THRESHOLD = 0.99
    project = make_project("tc")
    result = items_import(project, write(tmp_path / "a.jsonl", [BASE, BASE.replace("쉽게", "금방")]), "jsonl")
    assert result.summary["near_duplicates"] == 0


@pytest.mark.django_db
def test_bands_go_with_their_item_and_project(tmp_path, make_project):
    """Band rows carry no database foreign keys (docs/performance.md): Django's deletion still removes them
    with their item and with their project, and a later import is not confused by the gap."""
    project, other = make_project("tc"), make_project("tc")
    items_import(project, write(tmp_path / "a.jsonl", [BASE, "완전히 다른 두 번째 기사의 제목입니다 정말로"]), "jsonl")
    items_import(other, write(tmp_path / "b.jsonl", [BASE]), "jsonl")
    first = Item.objects.get(project=project, payload__title=BASE)
    first.delete()
    assert not MinHashBand.objects.filter(item_id=first.pk).exists()
    assert MinHashBand.objects.filter(project=project).count() == dedup.BANDS
    result = items_import(project, write(tmp_path / "c.jsonl", [BASE + "!"]), "jsonl")
    assert result.items == 1 and result.summary["near_duplicates"] == 0  # the deleted item is not a candidate
    project_delete(project=project)
    assert not MinHashBand.objects.filter(project_id=project.pk).exists()
    assert MinHashBand.objects.filter(project=other).count() == dedup.BANDS


@pytest.mark.django_db
def test_an_import_into_a_project_whose_items_were_deleted_leaving_their_bands_finds_nothing_in_them(
        tmp_path, make_project):
    """Band rows have no foreign keys: items deleted with raw SQL leave theirs behind. A project without items
    takes its near duplicates from what the import holds in memory (the bands in the database are its own,
    or such leftovers): near copies of the deleted items are new items, and copies of one another a group."""
    project = make_project("tc")
    items_import(project, write(tmp_path / "a.jsonl", [BASE, "완전히 다른 두 번째 기사의 제목입니다 정말로"]), "jsonl")
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {NearDuplicate._meta.db_table} WHERE project_id = %s", [project.pk])
        cursor.execute(f"DELETE FROM {Item._meta.db_table} WHERE project_id = %s", [project.pk])
    assert MinHashBand.objects.filter(project=project).count() == 2 * dedup.BANDS
    result = items_import(project, write(tmp_path / "b.jsonl", [BASE + "!", "세 번째로 전혀 관계가 없는 문장이 여기에",
                                                                BASE + "?"]), "jsonl")
    assert result.items == 3 and result.summary["near_duplicates"] == 1
    assert [sorted(Item.objects.get(pk=pk).payload["title"] for pk in group)
            for group in near_duplicate_groups(project)] == [[BASE + "!", BASE + "?"]]


@pytest.mark.django_db
def test_bands_held_in_memory_and_written_when_full_find_the_same_groups(tmp_path, make_project, monkeypatch):
    """An import keeps its items' bands in memory and writes them when it ends, or when the memory is full:
    an item whose near copy was written to the database before (the memory full after every batch) is found
    as one whose copy is still in memory is, and every band ends up in the database either way."""
    from datasets_build import pipeline

    monkeypatch.setattr(pipeline, "BATCH_SIZE", 2)
    other = "완전히 다른 두 번째 기사의 제목입니다 정말로"
    titles = [BASE, other, BASE + ".", "세 번째로 전혀 관계가 없는 문장이 여기에", BASE + "!!", other + "!",
              "마지막 줄은 앞의 어느 것과도 닮지 않았다"]
    held, flushed = make_project("tc"), make_project("tc")
    items_import(held, write(tmp_path / "held.jsonl", titles), "jsonl")
    monkeypatch.setattr(dedup, "PendingBands", partial(dedup.PendingBands, capacity=2 * dedup.BANDS))
    result = items_import(flushed, write(tmp_path / "flushed.jsonl", titles), "jsonl")

    def by_position(project) -> list[set[int]]:
        ids = list(Item.objects.filter(project=project).order_by("pk").values_list("pk", flat=True))
        return [{ids.index(pk) for pk in group} for group in near_duplicate_groups(project)]

    # Items 4 and 5 find 0, 2 and 1 in the database when the memory was full after every batch.
    assert result.summary["near_duplicates"] == 3
    assert by_position(flushed) == by_position(held) == [{0, 2, 4}, {1, 5}]
    assert MinHashBand.objects.filter(project=held).count() == len(titles) * dedup.BANDS
    assert MinHashBand.objects.filter(project=flushed).count() == len(titles) * dedup.BANDS


@pytest.mark.django_db
@pytest.mark.parametrize("earlier", [False, True], ids=["new project", "project with items"])
def test_bands_written_in_runs_as_the_import_goes_find_the_same_groups(tmp_path, make_project, monkeypatch,
                                                                         earlier):
    """On PostgreSQL the held bands are written in runs while the import goes on, not all when it ends: written
    bands are in the database before the last batch is, and the groups found are those of an import that held every band
    until it ended — also where the lookups go to the database (a project with items), which then finds the
    bands written and still held twice (once counted)."""
    from datasets_build import near_duplicates, pipeline

    monkeypatch.setattr(pipeline, "BATCH_SIZE", 2)
    other = "완전히 다른 두 번째 기사의 제목입니다 정말로"
    titles = [BASE, other, BASE + ".", "세 번째로 전혀 관계가 없는 문장이 여기에", BASE + "!!", other + "!",
              "마지막 줄은 앞의 어느 것과도 닮지 않았다", BASE + "?"]
    held, runs = make_project("tc"), make_project("tc")
    if earlier:
        for project in (held, runs):
            items_import(project, write(tmp_path / "earlier.jsonl", ["이미 있던 항목 하나와 그 밖의 글자들"]), "jsonl")
    items_import(held, write(tmp_path / "held.jsonl", titles), "jsonl")
    monkeypatch.setattr(near_duplicates, "BAND_RUN", 2 * dedup.BANDS)
    entries: list[list[tuple[int, int]]] = []
    shared_bands = near_duplicates._SharedBands

    def counted(band_keys, entry_keys, entry_items):
        entries.append(list(zip(entry_keys.tolist(), entry_items.tolist(), strict=True)))
        return shared_bands(band_keys, entry_keys, entry_items)

    monkeypatch.setattr(near_duplicates, "_SharedBands", counted)
    seen_written: list[int] = []
    before = MinHashBand.objects.filter(project=runs).count()

    def progress(_) -> None:
        seen_written.append(MinHashBand.objects.filter(project=runs).count() - before)

    result = items_import(runs, write(tmp_path / "runs.jsonl", titles), "jsonl", on_progress=progress)

    def by_position(project) -> list[set[int]]:
        ids = list(Item.objects.filter(project=project).order_by("pk").values_list("pk", flat=True))
        return [{ids.index(pk) for pk in group} for group in near_duplicate_groups(project)]

    assert result.summary["near_duplicates"] == 4
    assert by_position(runs) == by_position(held)
    if not earlier:
        assert by_position(runs) == [{0, 2, 4, 7}, {1, 5}]
    # In runs on PostgreSQL; on SQLite all when the import ends.
    assert any(seen_written[:-1]) == (connection.vendor == "postgresql")
    assert all(len(set(pairs)) == len(pairs) for pairs in entries), "a band was counted twice"
    assert MinHashBand.objects.filter(project=runs).count() == MinHashBand.objects.filter(project=held).count()


@pytest.mark.django_db
def test_bands_written_in_runs_go_when_the_import_fails_later(tmp_path, make_project, monkeypatch):
    """All or nothing: the runs written before a bad record are rolled back with the rest of the import."""
    from datasets_build import near_duplicates, pipeline

    monkeypatch.setattr(pipeline, "BATCH_SIZE", 2)
    monkeypatch.setattr(near_duplicates, "BAND_RUN", 2 * dedup.BANDS)
    project = make_project("tc")
    path = write(tmp_path / "bad.jsonl", [BASE, BASE + ".", "세 번째로 전혀 관계가 없는 문장이 여기에",
                                          "마지막 줄은 앞의 어느 것과도 닮지 않았다", "다섯 번째 문장도 따로 있다"])
    path.write_text(path.read_text(encoding="utf-8") + '\n{"guid": "x", "title": 5}', encoding="utf-8")
    written: list[int] = []
    result = items_import(project, path, "jsonl", on_progress=lambda _: written.append(
        MinHashBand.objects.filter(project=project).count()))
    assert result.errors and (max(written) > 0) == (connection.vendor == "postgresql")
    assert not MinHashBand.objects.filter(project=project).exists()
    assert not Item.objects.filter(project=project).exists()


@pytest.mark.django_db
def test_existing_items_are_found_by_hash_and_external_id_in_this_project_only(tmp_path, make_project):
    """The per-value lookups of the import (content hash, external id) see this project's items, not another's."""
    project, other = make_project("tc"), make_project("tc")
    items_import(other, write(tmp_path / "a.jsonl", [BASE]), "jsonl")
    again = items_import(project, write(tmp_path / "a.jsonl", [BASE]), "jsonl")
    assert again.items == 1 and again.summary["duplicates_skipped"] == 0
    duplicate = items_import(project, write(tmp_path / "b.jsonl", [BASE]), "jsonl")
    assert duplicate.items == 0 and duplicate.summary["duplicates_skipped"] == 1
    same_id = items_import(project, write(tmp_path / "a.jsonl", ["다른 제목의 새 기사입니다"]), "jsonl")
    assert same_id.items == 0 and "already exists" in same_id.errors[0]["message"]


@pytest.mark.django_db
def test_the_admin_lists_and_searches_near_duplicate_groups(tmp_path, make_project, client, django_user_model):
    project = make_project("tc")
    titles = [BASE, BASE + "!", "완전히 다른 두 번째 기사의 제목입니다 정말로"]
    items_import(project, write(tmp_path / "a.jsonl", titles), "jsonl")
    first = Item.objects.get(project=project, payload__title=BASE).pk
    client.force_login(django_user_model.objects.create_superuser("root", "root@example.org", "pw-root-1234"))
    listing = client.get("/admin/datasets_build/nearduplicate/", {"q": str(first)})
    assert listing.status_code == 200 and "2 near duplicates" in listing.content.decode()
    assert client.get("/admin/datasets_build/nearduplicate/", {"q": "not-a-number"}).status_code == 200
    row = NearDuplicate.objects.get(item_id=first)
    assert client.get(f"/admin/datasets_build/nearduplicate/{row.pk}/change/").status_code == 200
