"""Large files are prepared in worker processes (datasets_build/processes.py): the import they make must be the
one the same file makes prepared in place — items, labels, flags, duplicates, near duplicates, errors."""

from __future__ import annotations

import functools
import json
import logging
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from annotation.models import Annotation, Flag, Item, Project
from datasets_build import dedup, heap, morph, pipeline, prepare, processes
from datasets_build.models import MinHashBand, NearDuplicate
from datasets_build.services import items_import
from demo.synthetic import write_headlines
from tests.builders import nothing_written, write_jsonl

NEAR = "서울시는 다음 달부터 심야버스 노선을 다섯 개 늘리고 배차 간격을 줄인다고 밝혔다"


def corpus(tmp_path: Path) -> Path:
    """The benchmark's headlines (PII, near duplicates, labels) with what crosses batches planted in it:
    an exact duplicate and a near duplicate far from their originals, toxic and biased titles, threats (which
    the threat screener's model finds) beside the lexicon's hits and as a duplicate that is not written."""
    path = tmp_path / "corpus.jsonl"
    write_headlines(path, 400, seed=3)
    lines = path.read_text(encoding="utf-8").splitlines()
    extra = [
        {"guid": "near-1", "title": NEAR, "label": "사회"},
        {"guid": "tox-1", "title": "이 씨 발 놈들 다 필요 없다 연락은 010-2345-6789", "label": "사회"},
        {"guid": "bias-1", "title": "전라도 사람들은 다 믿으면 안 된다는 댓글 논란", "label": "사회"},
        {"guid": "threat-1", "title": "그런 놈들은 다 죽어야 한다는 글이 올라왔다", "label": "사회"},
        {"guid": "threat-2", "title": "김민수 씨는 전라도 사람들은 다 죽어야 한다고 말했다", "label": "사회"},
        {"guid": "dup-of-threat-1", "title": "그런 놈들은 다 죽어야 한다는 글이 올라왔다", "label": "사회"},
    ]
    late = [
        {"guid": "near-2", "title": NEAR + "!", "label": "사회"},
        {"guid": "dup-of-near-1", "title": NEAR + "  ", "label": "사회"},  # the same text after normalising
        {"guid": "threat-3", "title": "씨발 그런 놈들은 다 죽어야 한다", "label": "사회"},
        {"guid": "dup-of-threat-3", "title": "씨발 그런 놈들은  다 죽어야 한다", "label": "사회"},
    ]
    path.unlink()
    return write_jsonl(path, [*extra, *map(json.loads, lines), *late])


def snapshot(project: Project) -> dict[str, Any]:
    """What an import wrote, by external id (primary keys differ between projects)."""
    items = {i.external_id: (i.payload, i.meta, i.pii_findings, i.screening_status, i.content_hash, i.split,
                             i.group_key, i.source.name) for i in Item.objects.filter(project=project)}
    labels = sorted((a.item.external_id, a.annotator.username, a.stage, str(a.payload), a.imported)
                    for a in Annotation.objects.filter(item__project=project).select_related("item", "annotator"))
    flags = sorted((f.item.external_id, f.kind, f.note) for f in Flag.objects.filter(item__project=project))
    external_id = dict(Item.objects.filter(project=project).values_list("pk", "external_id"))
    near = sorted((n.item.external_id, external_id.get(n.group), external_id.get(n.duplicate_of_id), n.similarity)
                  for n in NearDuplicate.objects.filter(project=project))
    return {"items": items, "labels": labels, "flags": flags, "near": near,
            "bands": MinHashBand.objects.filter(project=project).count()}


def import_both_ways(path: Path, make_project: Any, settings: Any, monkeypatch: Any,
                     caplog: Any) -> tuple[Any, Project, Any, Project]:
    # Small chunks and batches, so that chunks, batches and the workers' hand-overs all cross one another.
    monkeypatch.setattr(processes, "CHUNK_SIZE", 7)
    monkeypatch.setattr(pipeline, "BATCH_SIZE", 50)
    settings.GOLDSET_IMPORT_PARALLEL_MIN_MB = 10_000
    in_place = make_project("tc")
    serial = items_import(in_place, path, "jsonl", source="corpus")
    settings.GOLDSET_IMPORT_PARALLEL_MIN_MB = 0
    settings.GOLDSET_IMPORT_PROCESSES = 2
    forked = make_project("tc")
    with caplog.at_level(logging.INFO, logger="datasets_build.processes"):
        parallel = items_import(forked, path, "jsonl", source="corpus")
    assert "preparing records in 2 worker processes" in caplog.text
    return serial, in_place, parallel, forked


@pytest.mark.django_db
def test_a_file_prepared_in_worker_processes_imports_exactly_as_in_place(tmp_path, make_project, settings,
                                                                         monkeypatch, caplog):
    serial, in_place, parallel, forked = import_both_ways(corpus(tmp_path), make_project, settings, monkeypatch,
                                                          caplog)
    assert serial.errors == parallel.errors == []
    assert serial.items == parallel.items == 407 and serial.annotations == parallel.annotations == 407
    # Each item's file record, as runs of (first item id, first record, length): the same runs, the ids offset
    # by the other project's items.
    runs = {which: [[item - result.summary["record_runs"][0][0], record, n]
                    for item, record, n in result.summary["record_runs"]]
            for which, result in (("parallel", parallel), ("serial", serial))}
    assert runs["parallel"] == runs["serial"] == [[0, 1, 5], [5, 7, 401], [406, 409, 1]]
    assert ({k: v for k, v in parallel.summary.items() if k != "record_runs"}
            == {k: v for k, v in serial.summary.items() if k != "record_runs"})
    assert parallel.summary["duplicates"] == [{"record": 6, "duplicate_of": "record 4"},
                                              {"record": 408, "duplicate_of": "item 'near-1' already in the project"},
                                              {"record": 410, "duplicate_of": "record 409"}]
    # The threats of the written items and of the two duplicates (counted like every record read).
    assert parallel.summary["screening"]["toxic"]["threat"] == 5
    assert parallel.summary["pii"]["phone"]["pseudonymized"] >= 40
    written, expected = snapshot(forked), snapshot(in_place)
    assert written == expected
    assert ("near-2", "near-1", "near-1") in {(a, group, b) for a, group, b, _ in written["near"]}
    assert {kind for _, kind, _ in written["flags"]} >= {"toxic", "bias"}
    assert any(external_id == "threat-1" and "threat" in note for external_id, _, note in written["flags"])
    assert {(kind, note.split(" at ")[0]) for external_id, kind, note in written["flags"]
            if external_id == "threat-2"} == {("pii", "PII detected and kept for review: person ×1"),
                                              ("toxic", "threat"), ("bias", "region")}
    assert [note for external_id, kind, note in written["flags"] if external_id == "threat-3" and kind == "toxic"] == [
        "profanity at [0, 2) by ko-lexicon@2026.12-3:p01; threat at [12, 18) by ko-threats@2026.12-1:must"]
    assert written["items"]["threat-1"][3] == written["items"]["threat-3"][3] == "needs_review"
    assert written["bands"] == 407 * dedup.BANDS


@pytest.mark.django_db
def test_problems_found_in_worker_processes_are_reported_in_file_order_and_nothing_is_written(
        tmp_path, make_project, settings, monkeypatch, caplog):
    path = tmp_path / "bad.jsonl"
    write_headlines(path, 120, seed=5)
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[3] = '{"guid": "broken", "title": '  # not JSON
    lines[40] = '["not", "an", "object"]'
    lines[41] = '{"guid": "no-title", "label": "사회"}'
    lines[90] = '{"guid": "bad-label", "title": "다른 제목", "label": "문의 010-9876-5432"}'
    lines[100] = lines[7]  # the same guid and text again: a duplicate, skipped
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    serial, in_place, parallel, forked = import_both_ways(path, make_project, settings, monkeypatch, caplog)
    assert [e["record"] for e in parallel.errors] == [4, 41, 42, 91]
    assert parallel.errors == serial.errors
    assert "010-9876-5432" not in str(parallel.errors)  # the record's PII is taken out of its message
    assert nothing_written(forked) and nothing_written(in_place)


@pytest.mark.django_db
def test_an_import_into_a_project_with_items_still_finds_their_duplicates(tmp_path, make_project, settings,
                                                                           monkeypatch, caplog):
    """The lookups an import skips while its project started empty (dedup.SeenKeys) are made when it did not:
    a second file finds the first file's exact duplicates, near duplicates and external ids."""
    first = write_jsonl(tmp_path / "first.jsonl", [{"guid": "a-1", "title": NEAR},
                                                   {"guid": "a-2", "title": "전혀 관계없는 스포츠 기사 제목 야구"}])
    project = make_project("tc")
    assert items_import(project, first, "jsonl").items == 2
    second = write_jsonl(tmp_path / "second.jsonl", [{"guid": "b-1", "title": NEAR + "!"},
                                                     {"guid": "b-2", "title": "전혀 관계없는 스포츠 기사 제목 야구"}])
    settings.GOLDSET_IMPORT_PARALLEL_MIN_MB = 0
    result = items_import(project, second, "jsonl")
    assert result.items == 1 and result.summary["duplicates_skipped"] == 1
    assert result.summary["near_duplicates"] == 1
    clash = write_jsonl(tmp_path / "clash.jsonl", [{"guid": "a-1", "title": "새로운 제목의 다른 기사"}])
    refused = items_import(project, clash, "jsonl")
    assert refused.errors[0]["field"] == "guid" and "already exists in the project" in refused.errors[0]["message"]


def test_seen_keys_never_forget_a_key_and_rarely_claim_one():
    seen = dedup.SeenKeys(bits_log2=20)
    rng = np.random.default_rng(11)
    added = rng.integers(-(2**63), 2**63 - 1, 20_000, dtype=np.int64).tolist()
    seen.add(added)
    assert seen.may_contain(added).all()
    others = rng.integers(-(2**63), 2**63 - 1, 20_000, dtype=np.int64).tolist()
    assert seen.may_contain(others).mean() < 0.01
    assert seen.may_contain([]).shape == (0,)


def test_seen_keys_take_the_held_bands_in_blocks(monkeypatch):
    """The importer adds its two million held bands' keys at once when it lets go of them: their positions are
    computed a block at a time (all at once, the temporaries took ~270 MB, the import's peak at 1,000,000 items),
    and give the same filter."""
    import tracemalloc

    keys = np.random.default_rng(5).integers(-(2**63), 2**63 - 1, 1 << 21, dtype=np.int64)
    blocked = dedup.SeenKeys()
    tracemalloc.start()
    try:
        blocked.add(keys)
        assert blocked.may_contain(keys).all()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 24 * 1024 * 1024
    monkeypatch.setattr(dedup.SeenKeys, "_BLOCK", len(keys))
    whole = dedup.SeenKeys()
    whole.add(keys)
    assert (whole._bytes == blocked._bytes).all()


def test_how_many_worker_processes_an_import_gets(settings, monkeypatch):
    settings.GOLDSET_IMPORT_PARALLEL_MIN_MB = 1
    settings.GOLDSET_IMPORT_PROCESSES = 0
    assert processes.import_processes(1024 * 1024 - 1) == 0  # a small file is prepared in place
    monkeypatch.setattr(processes.os, "sched_getaffinity", lambda pid: set(range(64)))
    assert processes.import_processes(1024 * 1024) == processes.MAX_DEFAULT_PROCESSES  # not one per host core
    monkeypatch.setattr(processes.os, "sched_getaffinity", lambda pid: {0, 1})
    assert processes.import_processes(50 * 1024 * 1024) == 2
    settings.GOLDSET_IMPORT_PROCESSES = 6
    assert processes.import_processes(50 * 1024 * 1024) == 6


@pytest.mark.django_db
def test_the_model_screeners_load_beside_the_workers_in_a_process_of_their_own(tmp_path, make_project, settings,
                                                                              monkeypatch):
    """Kiwi (for the threat screener) is loaded by the model screeners' process while the workers prepare, not
    by the importer before it forks them (which held everything up for a second): neither the workers nor the
    importer ever hold it, and the threat is found."""
    morph._kiwi.cache_clear()
    loaded_in_worker = multiprocessing.get_context("fork").Array("i", [-1, -1])
    start = processes._start_worker

    def recording_start(parent: int, preparer: prepare.RecordPreparer | None = None) -> None:
        if preparer is not None:  # a preparation worker, not the model screeners' process
            with loaded_in_worker.get_lock():
                loaded_in_worker[loaded_in_worker[:].index(-1)] = morph._kiwi.cache_info().currsize
        start(parent, preparer)

    monkeypatch.setattr(processes, "_start_worker", recording_start)
    settings.GOLDSET_IMPORT_PARALLEL_MIN_MB = 0
    settings.GOLDSET_IMPORT_PROCESSES = 2
    project = make_project("tc")
    result = items_import(project, corpus(tmp_path), "jsonl")
    assert result.ok and result.summary["screening"]["toxic"]["threat"] == 5
    assert loaded_in_worker[:] == [0, 0]  # the workers started without the analyser: the importer had none
    assert morph._kiwi.cache_info().currsize == 0


@pytest.mark.django_db
def test_an_import_prepared_in_process_lets_go_of_the_analyser_it_loaded(tmp_path, make_project, settings):
    """A small file is prepared in the importing process, which loads Kiwi on the first sentence the threat
    screener analyses: a long-lived Celery worker must not keep it after the import."""
    morph._kiwi.cache_clear()
    settings.GOLDSET_IMPORT_PARALLEL_MIN_MB = 1024
    result = items_import(make_project("tc"), corpus(tmp_path), "jsonl")
    assert result.ok and result.summary["screening"]["toxic"]["threat"] == 5  # Kiwi was needed and loaded
    assert morph._kiwi.cache_info().currsize == 0
    morph.load_analyser()  # loaded before an import (a worker's own choice): left loaded
    try:
        with morph.analyser_let_go():
            morph.analyse_sentence("나는 학교에 간다")
        assert morph._kiwi.cache_info().currsize == 1
    finally:
        morph._kiwi.cache_clear()


def test_the_analyser_runs_without_a_thread_pool() -> None:
    """One sentence is analysed at a time: a thread pool's threads would only cost CPU."""
    morph._kiwi.cache_clear()
    try:
        morph.load_analyser()
        assert morph._kiwi().num_workers == 1  # kiwipiepy's default is one thread per core
        assert morph.analyse_sentence("나는 학교에 간다")["word_form"] == ["나는", "학교에", "간다"]
    finally:
        morph._kiwi.cache_clear()


@pytest.mark.django_db
def test_every_import_hands_its_freed_memory_back(tmp_path, make_project, monkeypatch):
    """glibc keeps what a process freed: a Celery worker would hold a large import's peak into the release
    it builds next. Every import ends by trimming the heap — one that needed no analyser, and one that failed."""
    trims: list[int] = []
    monkeypatch.setattr(heap, "trim", lambda: trims.append(1))
    plain = tmp_path / "plain.jsonl"
    write_jsonl(plain, [{"guid": f"p-{i}", "title": f"평범한 경제 기사 제목 {i}"} for i in range(5)])
    assert items_import(make_project("tc"), plain, "jsonl").ok
    assert trims == [1]
    write_jsonl(plain, [{"guid": "p-0", "title": ""}])
    assert not items_import(make_project("tc"), plain, "jsonl").ok
    assert trims == [1, 1]


@pytest.mark.django_db
def test_signatures_kept_from_the_import_find_the_groups_that_hashing_the_texts_again_finds(
        tmp_path, make_project, settings, monkeypatch):
    """The near-duplicate search takes the signatures of items this import wrote from memory
    (dedup.WrittenSignatures); with a table of one slot it reads nearly all of them back and hashes them
    again: the groups are the same."""
    path = tmp_path / "near.jsonl"
    sentences = [f"{NEAR} {word}" for word in ("오늘", "내일", "모레")] + ["전혀 관계없는 스포츠 기사 제목 야구"]
    write_jsonl(path, [{"guid": f"r-{i}", "title": f"{sentences[i % 4]} ({i // 4})"} for i in range(120)])
    monkeypatch.setattr(pipeline, "BATCH_SIZE", 25)
    kept = make_project("tc")
    assert items_import(kept, path, "jsonl", source="near").summary["near_duplicates"] > 60
    monkeypatch.setattr(dedup, "WrittenSignatures", functools.partial(dedup.WrittenSignatures, slots_log2=0))
    hashed_again = make_project("tc")
    assert items_import(hashed_again, path, "jsonl", source="near").ok
    assert snapshot(hashed_again) == snapshot(kept)


def test_written_signatures_give_back_what_they_hold_and_forget_what_a_newer_item_replaced():
    table = dedup.WrittenSignatures(slots_log2=3)
    signatures = np.arange(3 * dedup.NUM_PERM, dtype=np.uint32).reshape(3, dedup.NUM_PERM)
    table.add([5, 6, 7], signatures, ["", "g", ""])
    table.add([13], signatures[:1] + 1, ["h"])  # slot 5 again
    ids, group_keys, found = table.find([7, 5, 13, 6, 99])
    assert ids == [7, 13, 6] and group_keys == ["", "h", "g"]
    assert (found == np.stack([signatures[2], signatures[0] + 1, signatures[1]])).all()


def test_letting_go_of_the_analyser_hands_its_memory_back():
    """A process that loaded Kiwi for an import (prepared in place) lets go of it: its memory (~330 MB,
    allocated by Kiwi's own allocator) must go back to the system, not stay with a long-lived Celery worker."""
    code = ("import os, django; django.setup(); from datasets_build import morph\n"
            "rss = lambda: int(open('/proc/self/statm').read().split()[1]) * os.sysconf('SC_PAGE_SIZE') >> 20\n"
            "before = rss()\n"
            "with morph.analyser_let_go():\n    morph.load_analyser()\n    loaded = rss()\n"
            "print(loaded - before, rss() - before)")
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                               cwd=Path(__file__).resolve().parents[2],
                               env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"})
    loaded, kept = map(int, completed.stdout.split())
    assert loaded > 200 and kept < 60
