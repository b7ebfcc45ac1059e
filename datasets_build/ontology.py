"""The ontology a WoS (DST) corpus comes with (``wos-v1.1_ontology.json``: ``{"domain-slot": [values]}``).

Imported with the dialogues, it becomes the project's ontology before their states are read: the label schema's
``ontology`` holds its slots and values, and ``ontology_slots`` its slot order (a JSON object's key order does not
survive PostgreSQL's ``jsonb``; a list's does). A release then ships the source's ontology, not Goldset's default
(``annotation.task_types.dst.release_ontology``). A project keeps one ontology: once it has items, an import may
bring only the ontology it already has.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from annotation.models import Item, Project
from annotation.task_types import get_task_type

from .readers import RecordError

#: The label schema key that keeps the ontology's slot order.
ONTOLOGY_SLOTS = "ontology_slots"
#: An ontology file larger than this is refused before it is read (KLUE's is 43 KB).
MAX_ONTOLOGY_BYTES = 16 << 20


def _refuse(name: str, message: str) -> RecordError:
    return RecordError(0, "ontology", f"{name}: {message}")


def read_ontology(path: Path, name: str) -> dict[str, list[str]]:
    """The ontology in the file at ``path`` (``name`` is what the user calls it), in the file's order; a
    :class:`RecordError` on the ``ontology`` field names what is wrong."""
    if path.stat().st_size > MAX_ONTOLOGY_BYTES:
        raise _refuse(name, f"larger than {MAX_ONTOLOGY_BYTES >> 20} MB; an ontology lists slots and their values")
    try:
        data = json.loads(path.read_bytes().decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise _refuse(name, "is not UTF-8 text") from None
    except ValueError as error:
        raise _refuse(name, f"is not JSON ({error})") from None
    if not isinstance(data, dict) or not data:
        raise _refuse(name, 'must be a JSON object of "domain-slot": [values], like wos-v1.1_ontology.json')
    for slot, values in data.items():
        domain, _, rest = slot.partition("-")
        if not domain.strip() or not rest.strip():
            raise _refuse(name, f"slot {slot!r} is not 'domain-slot'")
        if not isinstance(values, list) or not all(isinstance(v, str) and v.strip() for v in values):
            raise _refuse(name, f"the values of {slot!r} must be a list of non-empty strings")
        if len(set(values)) != len(values):
            twice = next(v for v in values if values.count(v) > 1)
            raise _refuse(name, f"{slot!r} lists {twice!r} twice")
    return data


def ontology_in_order(schema: dict[str, Any]) -> dict[str, list[str]]:
    """A label schema's ontology with its slots in their recorded order (any slot not recorded after them)."""
    ontology = schema.get("ontology") or {}
    order = [slot for slot in schema.get(ONTOLOGY_SLOTS) or [] if slot in ontology]
    return {slot: ontology[slot] for slot in [*order, *(slot for slot in ontology if slot not in order)]}


def ontology_record(project: Project, ontology: dict[str, list[str]], name: str) -> bool:
    """Make ``ontology`` the project's (inside the import's transaction); ``True`` when it changed the schema.
    Refused for a task type without an ontology, and for a project with items whose ontology differs."""
    if not get_task_type(project.task_type).klue_file.ontology:
        raise _refuse(name, f"an ontology comes with WoS dialogues (dst); {project.slug} is a {project.task_type} "
                            "project")
    schema = project.label_schema or {}
    if list(ontology_in_order(schema).items()) == list(ontology.items()):
        return False
    if Item.objects.filter(project=project).exists():
        raise _refuse(name, f"differs from the ontology of {project.slug}, which already has items; import it "
                            "into a new project, or import the project's own ontology with these dialogues")
    project.label_schema = {**schema, "ontology": ontology, ONTOLOGY_SLOTS: list(ontology)}
    project.save(update_fields=["label_schema"])
    return True


def ontology_beside(path: Path, task_slug: str) -> Path | None:
    """The ontology KLUE ships beside a WoS file (``wos-v1.1_dev.json`` → ``wos-v1.1_ontology.json`` in the same
    folder), if there is one; ``None`` for other task types."""
    spec = get_task_type(task_slug).klue_file
    if not spec.ontology:
        return None
    found = sorted(path.parent.glob(f"{spec.name}-v*_ontology.json"))
    return found[0] if found else None
