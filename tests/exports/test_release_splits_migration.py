"""Migrations exports 0004 (the per-item ``ItemSplit`` rows become one ``ReleaseSplits`` row per release, and
back), 0005 (the rows recorded so far count as copied onto their items) and 0006 (the rows packed, and back)."""

from __future__ import annotations

import numpy as np
import pytest

from exports.models import ReleaseSplits
from tests.builders import historical_items, migrated_to

BEFORE = [("exports", "0003_release_states_rater_ids_item_splits")]
AFTER = [("exports", "0004_release_splits")]


@pytest.mark.django_db(transaction=True)
def test_item_splits_become_one_row_per_release_and_back():
    apps = migrated_to(BEFORE)
    try:
        project, ids = historical_items(apps, 5)
        release = apps.get_model("exports", "Release")
        first, second = (release.objects.create(project=project, version=v, split_spec={}, formats=["jsonl"],
                                                out_dir=f"/tmp/{v}") for v in ("1.0.0", "1.1.0"))
        item_split = apps.get_model("exports", "ItemSplit")
        chosen = {ids[0]: (first, "test"), ids[1]: (second, "train"), ids[2]: (first, "train"),
                  ids[3]: (second, "dev")}
        for item_id, (rel, split) in chosen.items():
            item_split.objects.create(item_id=item_id, release=rel, split=split)
        apps = migrated_to(AFTER)
        rows = {row.release_id: (row.names, np.frombuffer(bytes(row.item_ids), dtype="<i8").tolist(),
                                 np.frombuffer(bytes(row.codes), dtype=np.uint8).tolist())
                for row in apps.get_model("exports", "ReleaseSplits").objects.all()}
        assert rows == {first.pk: (["train", "test"], [ids[0], ids[2]], [1, 0]),
                        second.pk: (["train", "dev"], [ids[1], ids[3]], [0, 1])}
        apps = migrated_to(BEFORE)
        back = apps.get_model("exports", "ItemSplit").objects.values_list("item_id", "release_id", "split")
        assert set(back) == {(item_id, rel.pk, split) for item_id, (rel, split) in chosen.items()}
    finally:
        migrated_to()


@pytest.mark.django_db(transaction=True)
def test_release_splits_recorded_before_0005_count_as_copied_onto_their_items():
    apps = migrated_to(AFTER)
    try:
        project, ids = historical_items(apps, 2)
        release = apps.get_model("exports", "Release").objects.create(
            project=project, version="1.0.0", split_spec={}, formats=["jsonl"], out_dir="/tmp/1.0.0")
        apps.get_model("exports", "ReleaseSplits").objects.create(
            release=release, names=["train"], item_ids=np.asarray(ids, dtype="<i8").tobytes(),
            codes=np.zeros(len(ids), dtype=np.uint8).tobytes())
        apps = migrated_to([("exports", "0005_release_splits_applied")])
        assert list(apps.get_model("exports", "ReleaseSplits").objects.values_list("applied", flat=True)) == [True]
    finally:
        migrated_to()


@pytest.mark.django_db(transaction=True)
def test_release_splits_rows_are_packed_and_back():
    apps = migrated_to([("exports", "0005_release_splits_applied")])
    try:
        project, ids = historical_items(apps, 4)
        release = apps.get_model("exports", "Release").objects.create(
            project=project, version="1.0.0", split_spec={}, formats=["jsonl"], out_dir="/tmp/1.0.0")
        raw = {"item_ids": np.asarray(ids, dtype="<i8").tobytes(),
               "codes": np.asarray([1, 0, 2, 0], dtype=np.uint8).tobytes()}
        apps.get_model("exports", "ReleaseSplits").objects.create(release=release, names=["train", "dev", "test"],
                                                                  applied=False, **raw)
        migrated_to()
        row = ReleaseSplits.objects.get(release_id=release.pk)
        assert row.as_dict() == dict(zip(ids, ["dev", "train", "test", "train"], strict=True))
        assert not row.applied
        apps = migrated_to([("exports", "0005_release_splits_applied")])
        back = apps.get_model("exports", "ReleaseSplits").objects.get(release_id=release.pk)
        assert {"item_ids": bytes(back.item_ids), "codes": bytes(back.codes)} == raw
    finally:
        migrated_to()
