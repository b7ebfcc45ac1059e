"""Migration 0005: near-duplicate pairs become groups (one row per item), and back."""

from __future__ import annotations

import pytest

from tests.builders import historical_items, migrated_to

BEFORE = [("datasets_build", "0004_minhash_band_composite_key")]
AFTER = [("datasets_build", "0005_near_duplicate_groups")]


@pytest.mark.django_db(transaction=True)
def test_pairs_become_groups_and_back():
    apps = migrated_to(BEFORE)
    try:
        project, ids = historical_items(apps, 6)
        pair = apps.get_model("datasets_build", "NearDuplicate")
        # A chain 0 ~ 1 ~ 2 (item 2 closer to 1 than to 0), a pair 3 ~ 4, item 5 alone.
        for a, b, similarity in ((1, 0, 0.9), (2, 0, 0.82), (2, 1, 0.95), (4, 3, 0.85)):
            pair.objects.create(project=project, item_id=ids[a], duplicate_of_id=ids[b], similarity=similarity)
        apps = migrated_to(AFTER)
        rows = {row.item_id: (row.group, row.duplicate_of_id, row.similarity)
                for row in apps.get_model("datasets_build", "NearDuplicate").objects.all()}
        assert rows == {ids[0]: (ids[0], None, None), ids[1]: (ids[0], ids[0], 0.9), ids[2]: (ids[0], ids[1], 0.95),
                        ids[3]: (ids[3], None, None), ids[4]: (ids[3], ids[3], 0.85)}
        apps = migrated_to(BEFORE)
        back = {(row.item_id, row.duplicate_of_id, row.similarity)
                for row in apps.get_model("datasets_build", "NearDuplicate").objects.all()}
        assert back == {(ids[1], ids[0], 0.9), (ids[2], ids[1], 0.95), (ids[4], ids[3], 0.85)}
    finally:
        migrated_to()
