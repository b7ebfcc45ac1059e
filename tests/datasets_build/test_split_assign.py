"""Splits before annotation (``manage.py assign_splits``): items without a split get one, leak-free (a group stays
whole, an item sharing a group with an item that has a split takes it), seeded; the items' k follows their split."""

from __future__ import annotations

import io
import json
from collections import defaultdict

import pytest
from django.core.management import CommandError, call_command

from annotation import services
from annotation.models import AuditEvent, Item, QueueSlot

pytestmark = pytest.mark.django_db


def _items(project, n: int, *, group_every: int = 4, split: str = "") -> list[Item]:
    return [services.item_create(project=project, payload={"title": f"분할 시험 기사 {split} {i}"},
                                 external_id=f"s-{split}-{i}", group_key=f"doc-{i // group_every}", split=split)
            for i in range(n)]


def test_assign_splits_gives_every_item_without_one_a_split_and_keeps_groups_whole(make_project) -> None:
    project = make_project("tc", k=2)
    made = _items(project, 80, group_every=2)
    kept = services.item_create(project=project, payload={"title": "이미 학습 분할에 있는 기사"}, external_id="kept",
                                group_key="doc-0", split="dev")
    services.project_update(project=project, changes={"options": {"budget": {"splits": {"train": 1, "dev": 4}}}},
                            by=None)
    services.queue_slots_ensure(project, "label")
    out = io.StringIO()
    call_command("assign_splits", project.slug, "--splits", "0.8,0.1,0.1", "--seed", "13", "--json", stdout=out)
    result = json.loads(out.getvalue())
    assert sum(result["assigned"].values()) == 80 and result["splits"].get("", 0) == 0
    splits = dict(Item.objects.filter(project=project).values_list("pk", "split"))
    assert splits[kept.pk] == "dev" and splits[made[0].pk] == splits[made[1].pk] == "dev"  # doc-0 joins its dev item
    groups = defaultdict(set)
    for item in made:
        groups[item.group_key].add(splits[item.pk])
    assert all(len(found) == 1 for found in groups.values())
    assert 56 <= result["splits"]["train"] <= 70 and result["splits"]["dev"] >= 6
    # the budget's k follows: train items 1, dev items 4
    needed = dict(QueueSlot.objects.filter(project=project).values_list("item_id", "needed"))
    assert all(needed[pk] == {"train": 1, "dev": 4, "test": 2}[split] for pk, split in splits.items())
    event = AuditEvent.objects.get(project=project, action="assign_splits")
    assert event.after["seed"] == 13 and sum(event.after["items"].values()) == 80


def test_bad_ratios_or_an_unknown_project_change_nothing(make_project) -> None:
    project = make_project("tc", k=2)
    _items(project, 5)
    with pytest.raises(CommandError, match="sum to 1"):
        call_command("assign_splits", project.slug, "--splits", "0.8,0.5", stdout=io.StringIO())
    with pytest.raises(CommandError, match="no project"):
        call_command("assign_splits", "nowhere", stdout=io.StringIO())
    assert set(Item.objects.filter(project=project).values_list("split", flat=True)) == {""}
    assert not AuditEvent.objects.filter(project=project, action="assign_splits").exists()
