"""A small loader of the real KLUE NLI/STS dev files for the agreement and gold tests.

The importer is a separate feature; these tests only need items plus each record's per-annotator labels
as annotations by imported users, created in bulk. Nothing from the files is copied into the repository.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from annotation import services
from annotation.models import Annotation, Item, Project, User, content_hash

NLI_VOTERS = ("author", "label2", "label3", "label4", "label5")


def _users(prefix: str, names: list[str]) -> dict[str, User]:
    users = {}
    for name in names:
        user = User(username=f"{prefix}-{name}", is_imported=True, is_active=False)
        user.set_unusable_password()
        users[name] = user
    User.objects.bulk_create(users.values(), batch_size=500)
    stored = {u.username: u for u in User.objects.filter(username__in=[u.username for u in users.values()])}
    return {name: stored[f"{prefix}-{name}"] for name in names}


def _items(project: Project, records: list[dict[str, Any]], payload_of) -> list[Item]:
    items = []
    for record in records:
        payload = payload_of(record)
        text = "\n".join(str(v) for v in payload.values() if isinstance(v, str))
        items.append(Item(project=project, external_id=record["guid"], payload=payload, content_hash=content_hash(text),
                          split="dev"))
    Item.objects.bulk_create(items, batch_size=1000)
    return list(Item.objects.filter(project=project).order_by("id"))


def load_nli(klue_dir: Path, slug: str, *, limit: int | None = None) -> tuple[Project, list[dict[str, Any]]]:
    records = json.loads((klue_dir / "klue-nli-v1.1_dev.json").read_text(encoding="utf-8"))[:limit]
    project = services.project_create(name="KLUE-NLI dev", slug=slug, task_type="nli", created_by=None,
                                      annotators_per_item=4)
    users = _users(slug, list(NLI_VOTERS))
    items = _items(project, records, lambda r: {"premise": r["premise"], "hypothesis": r["hypothesis"],
                                                 "source": r.get("source", "")})
    annotations = []
    for item, record in zip(items, records, strict=True):
        annotations.append(Annotation(item=item, annotator=users["author"], stage="writing", imported=True,
                                      payload={"hypothesis": record["hypothesis"], "label": record["author"]}))
        for voter in NLI_VOTERS[1:]:
            annotations.append(Annotation(item=item, annotator=users[voter], stage="validation", imported=True,
                                          payload={"label": record[voter]}))
    Annotation.objects.bulk_create(annotations, batch_size=2000)
    return project, records


def load_sts(klue_dir: Path, slug: str, *, limit: int | None = None) -> tuple[Project, list[dict[str, Any]]]:
    records = json.loads((klue_dir / "klue-sts-v1.1_dev.json").read_text(encoding="utf-8"))[:limit]
    project = services.project_create(name="KLUE-STS dev", slug=slug, task_type="sts", created_by=None,
                                      annotators_per_item=7)
    names = sorted({a for r in records for a in r["annotations"]["annotators"]})
    users = _users(slug, names)
    items = _items(project, records, lambda r: {"sentence1": r["sentence1"], "sentence2": r["sentence2"],
                                                 "source": r.get("source", "")})
    annotations = [
        Annotation(item=item, annotator=users[annotator], stage="label", imported=True, payload={"score": score})
        for item, record in zip(items, records, strict=True)
        for annotator, score in zip(record["annotations"]["annotators"], record["annotations"]["annotations"],
                                    strict=True)
    ]
    Annotation.objects.bulk_create(annotations, batch_size=2000)
    return project, records
