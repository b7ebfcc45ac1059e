"""The import writes batch by batch (datasets_build/pipeline.py): errors found against the project and in
the file come back in file order, and a database failure while writing a batch reaches the caller with
nothing written."""

from __future__ import annotations

import gc
import time

import pytest
from django.db import IntegrityError, OperationalError, connection, transaction

from annotation.models import Flag, Item, Source
from datasets_build import near_duplicates, pipeline, services
from datasets_build.models import MinHashBand, NearDuplicate
from datasets_build.services import items_import
from tests.builders import nothing_written, write_jsonl


def titles(n: int) -> list[dict[str, str]]:
    return [{"guid": f"r-{i}", "title": f"서로 다른 기사 제목 번호 {i} 입니다", "label": "사회"} for i in range(n)]


@pytest.fixture
def small_batches(monkeypatch):
    monkeypatch.setattr(pipeline, "BATCH_SIZE", 4)


@pytest.mark.django_db
def test_errors_against_the_project_and_in_the_file_come_back_in_file_order(tmp_path, make_project, small_batches,
                                                                      monkeypatch):
    flush = pipeline.ImportPipeline._flush

    def slow_flush(self, *args):
        time.sleep(0.3)  # a slow database: the project's errors must still come first
        return flush(self, *args)

    project = make_project("tc")
    assert items_import(project, write_jsonl(tmp_path / "first.jsonl", [
        {"guid": "taken", "title": "이미 있는 기사 제목", "label": "사회"}]), "jsonl").ok
    records = titles(12)
    records[2]["guid"] = "taken"  # found against the project
    records[9] = {"guid": "r-9", "label": "사회"}  # no title: found in the file, after that batch
    records[10]["label"] = "없는 주제"  # an unknown label: found in the file too
    monkeypatch.setattr(pipeline.ImportPipeline, "_flush", slow_flush)
    result = items_import(project, write_jsonl(tmp_path / "second.jsonl", records), "jsonl")
    assert [(e["record"], e["field"]) for e in result.errors] == [
        (3, "guid"), (10, "title"), (11, "annotations[0].label")]
    assert Item.objects.filter(project=project).count() == 1  # the first file's item only


@pytest.mark.django_db
def test_duplicates_in_the_project_and_in_the_file_are_all_counted(tmp_path, make_project, small_batches):
    project = make_project("tc")
    earlier = titles(3)
    assert items_import(project, write_jsonl(tmp_path / "first.jsonl", earlier), "jsonl").ok
    records = [*titles(12)[3:]]
    records[1] = {**earlier[0], "guid": "again-0"}  # in the project
    records[2] = {**records[0], "guid": "again-3"}  # in the file, in its batch
    records[6] = {**earlier[2], "guid": "again-2"}
    result = items_import(project, write_jsonl(tmp_path / "second.jsonl", records), "jsonl")
    assert result.ok and result.items == 6
    assert result.summary["duplicates_skipped"] == 3
    assert [d["record"] for d in result.summary["duplicates"]] == [2, 3, 7]
    assert [d["duplicate_of"] for d in result.summary["duplicates"]] == [
        "item 'r-0' already in the project", "record 1", "item 'r-2' already in the project"]


@pytest.mark.django_db
def test_the_next_batch_is_read_and_checked_while_one_is_written(tmp_path, make_project, small_batches, monkeypatch):
    """The database's work on a batch overlaps the importer's on the next; the importer's lookups of earlier
    items still see every batch before (here a record of the third batch repeats one of the second, which is
    still being written when the third is checked)."""
    write = pipeline.ImportPipeline._write
    read_while_writing = []

    def slow_write(self, *batch):
        read = self.outcome.progress.read
        time.sleep(0.3)
        read_while_writing.append(self.outcome.progress.read - read)
        return write(self, *batch)

    monkeypatch.setattr(pipeline.ImportPipeline, "_write", slow_write)
    project = make_project("tc")
    records = titles(12)
    records[9] = {**records[5], "guid": "again-5"}
    result = items_import(project, write_jsonl(tmp_path / "a.jsonl", records), "jsonl")
    assert result.ok and result.items == 11
    assert result.summary["duplicates"] == [{"record": 10, "duplicate_of": "item 'r-5' already in the project"}]
    # The second batch was read while the first was being written (on PostgreSQL, whose ids are reserved ahead,
    # the third too: the importer indexes a batch without waiting for its write).
    assert read_while_writing[0] == (8 if connection.vendor == "postgresql" else 4)


@pytest.mark.django_db
def test_item_ids_are_reserved_ahead_of_the_writes_on_postgresql(make_project):
    from annotation.bulk import ReservedIds

    ids = ReservedIds(Item)
    if connection.vendor != "postgresql":
        assert ids.take(3) is None  # the insert numbers the rows
        return
    first, second, third = ids.take(3), ids.take(5), ids.take(40_000)
    taken = first + second + third
    assert len(set(taken)) == len(taken) == 40_008 and taken == sorted(taken)
    # From the table's sequence: an item saved afterwards gets a later id.
    assert Item.objects.create(project=make_project("tc"), payload={"title": "제목"}).pk > taken[-1]


@pytest.mark.postgres
@pytest.mark.django_db
def test_batches_waiting_for_the_model_screeners_do_not_hold_the_import_up(tmp_path, make_project, settings,
                                                                           monkeypatch):
    """While the model screeners' process loads its models, the batches it must screen wait in the writer: the
    importer checks and indexes the next ones meanwhile (it had waited a second for the analyser)."""
    from datasets_build import morph, processes

    if connection.vendor != "postgresql":
        pytest.skip("on SQLite the importer waits for each batch's ids")
    morph._kiwi.cache_clear()  # the screening process, forked from this one, loads it itself
    load = morph.load_analyser

    def slow_load():
        time.sleep(2)
        load()

    finish = pipeline.ImportPipeline._finish_screening
    read_when_screened: list[int] = []

    def spied_finish(self, records):
        finish(self, records)
        read_when_screened.append(self.outcome.progress.read)

    monkeypatch.setattr(morph, "load_analyser", slow_load)  # the screening process is forked after this
    monkeypatch.setattr(pipeline.ImportPipeline, "_finish_screening", spied_finish)
    monkeypatch.setattr(pipeline, "BATCH_SIZE", 50)
    monkeypatch.setattr(processes, "CHUNK_SIZE", 10)
    settings.GOLDSET_IMPORT_PARALLEL_MIN_MB = 0
    settings.GOLDSET_IMPORT_PROCESSES = 2
    records = titles(600)
    records[3]["title"] = "그런 놈들은 다 죽어야 한다는 글이 올라왔다"
    result = items_import(make_project("tc"), write_jsonl(tmp_path / "a.jsonl", records), "jsonl")
    assert result.ok and result.items == 600 and result.summary["screening"]["toxic"]["threat"] == 1
    assert read_when_screened[0] >= 500  # the first batch's screening finished when most of the file was read


@pytest.mark.django_db
def test_a_database_failure_while_writing_reaches_the_caller_and_nothing_is_written(tmp_path, make_project,
                                                                                    small_batches, monkeypatch):
    write = pipeline.ImportPipeline._write
    calls = []

    def failing_write(self, kept, *rest):
        calls.append(len(kept))
        if len(calls) == 2:
            raise OperationalError("server closed the connection unexpectedly")
        return write(self, kept, *rest)

    monkeypatch.setattr(pipeline.ImportPipeline, "_write", failing_write)
    project = make_project("tc")
    with pytest.raises(OperationalError, match="closed the connection"):
        items_import(project, write_jsonl(tmp_path / "a.jsonl", titles(20)), "jsonl")
    assert calls[:2] == [4, 4] and len(calls) == 2  # no batch is written after the failure
    assert nothing_written(project)
    assert gc.get_freeze_count() == 0  # the failed import gave the process's objects back to the collector


@pytest.mark.postgres
@pytest.mark.django_db
def test_on_postgresql_the_references_an_import_writes_are_checked_as_its_first_batch_is_written(
        tmp_path, make_project, small_batches, monkeypatch):
    """Not at the commit, where the server would check every row of the import alone after the last batch
    (batch_services.foreign_keys_checked_as_written): a batch whose items refer to a source that is not there fails
    as it is written, and no batch is written after it."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite counts the missing references as it writes and fails the commit")
    write = pipeline.ImportPipeline._write
    calls = []

    def counted_write(self, kept, *rest):
        calls.append(len(kept))
        return write(self, kept, *rest)

    monkeypatch.setattr(services, "source_ensure", lambda **kwargs: Source(pk=10**9, name="gone", license="CC0-1.0"))
    monkeypatch.setattr(pipeline.ImportPipeline, "_write", counted_write)
    project = make_project("tc")
    with pytest.raises(IntegrityError, match="foreign key"):
        items_import(project, write_jsonl(tmp_path / "a.jsonl", titles(12)), "jsonl")
    assert calls == [4]
    assert nothing_written(project)


@pytest.mark.django_db
def test_an_import_leaves_the_references_of_the_rest_of_its_transaction_checked_at_the_commit(tmp_path, make_project):
    """The import checks the references it writes as it writes them (batch_services.foreign_keys_checked_as_written);
    afterwards its transaction checks them at the commit again, as Django declares them: a row may refer to
    nothing for a while, if nothing refers to nothing when the transaction commits."""
    project = make_project("tc")
    with transaction.atomic():
        assert items_import(project, write_jsonl(tmp_path / "a.jsonl", titles(3)), "jsonl").items == 3
        flag = Flag.objects.create(item_id=10**9, kind="toxic", note="refers to no item yet")
        flag.item_id = Item.objects.filter(project=project).first().pk
        flag.save()
    assert Flag.objects.get(pk=flag.pk).item.project == project


@pytest.mark.django_db
def test_the_objects_held_before_an_import_sit_out_its_collections_and_only_then(tmp_path, make_project,
                                                                                  small_batches):
    """heap.long_lived_objects_frozen: while the import runs the process's earlier objects are frozen
    (out of the collector's passes); afterwards they are collected as usual again."""
    frozen_during: list[int] = []
    project = make_project("tc")
    result = items_import(project, write_jsonl(tmp_path / "a.jsonl", titles(10)), "jsonl",
                          on_progress=lambda progress: frozen_during.append(gc.get_freeze_count()))
    assert result.ok and result.items == 10
    *during, last = frozen_during  # the last report comes once the records are written
    assert during and min(during) > 0 and last == 0
    assert gc.get_freeze_count() == 0


@pytest.mark.django_db
def test_a_freeze_the_process_made_before_an_import_outlasts_it(tmp_path, make_project):
    gc.freeze()
    try:
        assert items_import(make_project("tc"), write_jsonl(tmp_path / "a.jsonl", titles(3)), "jsonl").items == 3
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_the_embedded_database_file_keeps_a_write_ahead_log_and_durable_commits(tmp_path, settings):
    """The embedded default's connections (a SQLite file) write through the write-ahead log, so a large import
    spills its pages without a sync each time, and still sync every commit (synchronous=FULL)."""
    from django.db.backends.sqlite3.base import DatabaseWrapper

    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.sqlite3":
        pytest.skip("the embedded default is SQLite")
    wrapper = DatabaseWrapper({**settings.DATABASES["default"], "NAME": str(tmp_path / "goldset.sqlite3")})
    # A connection as Django opens one (its init commands), without the test database's guard.
    connection = wrapper.get_new_connection(wrapper.get_connection_params())
    try:
        (journal,), (synchronous,), (cache,) = (connection.execute(f"PRAGMA {name}").fetchone()
                                                for name in ("journal_mode", "synchronous", "cache_size"))
    finally:
        connection.close()
    assert (journal, synchronous) == ("wal", 2)  # 2: FULL
    assert cache <= -65536  # KiB: an import's batches stay in memory


@pytest.mark.django_db
def test_a_written_batch_is_indexed_in_the_importers_thread_while_the_writer_writes_the_next(
        tmp_path, make_project, small_batches, monkeypatch):
    """The writer's thread only writes: the near-duplicate indexing of a batch runs in the importer's thread
    while the writer writes the next batch, and the groups it finds are those of every batch before."""
    import threading

    index = near_duplicates.NearDuplicateIndex.index
    write = pipeline.ImportPipeline._write
    indexed: list[tuple[float, bool]] = []
    written: list[tuple[float, bool]] = []

    def spied_index(self, ids, kept, band_keys):
        indexed.append((time.monotonic(), threading.current_thread() is threading.main_thread()))
        return index(self, ids, kept, band_keys)

    def spied_write(self, *batch):
        time.sleep(0.3)  # a slow database: the batch before is indexed meanwhile
        ids = write(self, *batch)
        written.append((time.monotonic(), threading.current_thread() is threading.main_thread()))
        return ids

    monkeypatch.setattr(near_duplicates.NearDuplicateIndex, "index", spied_index)
    monkeypatch.setattr(pipeline.ImportPipeline, "_write", spied_write)
    project = make_project("tc")
    records = titles(12)
    records[6]["title"] = records[1]["title"] + "!"  # a near copy of the first batch's, in the second
    records[10]["title"] = records[1]["title"] + "?"  # and in the third
    result = items_import(project, write_jsonl(tmp_path / "a.jsonl", records), "jsonl")
    assert result.ok and result.items == 12 and result.summary["near_duplicates"] == 2
    assert [main for _, main in indexed] == [True] * 3 and [main for _, main in written] == [False] * 3
    # Batch k is indexed before batch k + 1 is written.
    assert indexed[0][0] < written[1][0] and indexed[1][0] < written[2][0]
    grouped = NearDuplicate.objects.filter(project=project).values_list("item__external_id", "group")
    assert sorted(external_id for external_id, _ in grouped) == ["r-1", "r-10", "r-6"]
    assert len({group for _, group in grouped}) == 1


@pytest.mark.django_db
@pytest.mark.parametrize(("failing", "owner", "step", "error"), [
    ("groups", pipeline.ImportPipeline, "_write_groups", OperationalError("server closed the connection unexpectedly")),
    ("indexing", near_duplicates.NearDuplicateIndex, "index", ValueError("a bug")),
])
def test_a_failure_writing_or_finding_a_batchs_groups_leaves_nothing_written(tmp_path, make_project, small_batches,
                                                                             monkeypatch, failing, owner, step, error):
    """A database failure writing a batch's groups (in the writer) reaches the caller; an unforeseen error while
    indexing one (in the importer) stops the import; either way nothing of the import is written."""
    calls = []
    original = getattr(owner, step)

    def failing_second(self, *args):
        calls.append(1)
        if len(calls) == 2:
            raise error
        return original(self, *args)

    monkeypatch.setattr(owner, step, failing_second)
    project = make_project("tc")
    if failing == "groups":
        with pytest.raises(OperationalError, match="closed the connection"):
            items_import(project, write_jsonl(tmp_path / "a.jsonl", titles(20)), "jsonl")
    else:
        result = items_import(project, write_jsonl(tmp_path / "a.jsonl", titles(20)), "jsonl")
        assert "ValueError: a bug" in result.errors[0]["message"]
    assert len(calls) == 2  # nothing indexed after the failure
    assert nothing_written(project)
    assert not NearDuplicate.objects.filter(project=project).exists()
    assert not MinHashBand.objects.filter(project=project).exists()
