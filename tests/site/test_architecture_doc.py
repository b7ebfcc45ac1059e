"""docs/ARCHITECTURE.md names files and code in backticks; every path must exist and every dotted name import.

The page names files relative to the part of the tree it is describing (``gold/services.py`` under
``annotation/``, ``klue.py`` under ``exports/writers/``), so a path counts as found when it exists under one
of :data:`ROOTS`. Names are resolved the same way, against the packages of :data:`PACKAGES`.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "ARCHITECTURE.md"
#: Where a relative path in the page may start.
ROOTS = ("", "annotation", "annotation/agreement", "annotation/gold", "annotation/api", "annotation/templates",
         "annotation/templates/annotation", "annotation/static/annotation", "datasets_build", "exports",
         "exports/writers", "demo", "tests")
#: Where a dotted name in the page may start (``services.annotation_submit``, ``gold.services.gold_compute``).
PACKAGES = ("", "annotation.", "annotation.models.", "annotation.agreement.", "annotation.agreement.measures.",
            "annotation.gold.", "annotation.api.", "annotation.task_types.", "datasets_build.", "exports.",
            "django.db.")
#: Backticked text that looks like a path or a dotted name and is neither, with the reason.
NOT_CODE = {
    "next/": "the API route an annotator asks for the next item",
    "annotation.add_project": "a Django permission",
    "annotation.expire_leases": "a Celery task's name (checked below against the Celery registry)",
    "project.task": "an attribute of a project (a model instance)",
    "serializer.save()": "DRF's method, named as what the views do not leave to it",
    "settings.X": "any setting",
    "klue_file.ontology": "an attribute of a task type's KlueFile (a dataclass field)",
    "payload_html.register": "functools.singledispatch's registration decorator of payload_html",
}
EXTENSIONS = (".py", ".md", ".js", ".css", ".html", ".json", ".jsonl", ".po", ".toml", ".sh")


def _tokens() -> list[str]:
    return sorted({token.strip() for token in re.findall(r"`([^`\n]+)`", DOC.read_text(encoding="utf-8"))})


def _exists(path: str) -> bool:
    return any((ROOT / base / path.rstrip("/")).exists() for base in ROOTS)


def _attribute(module: ModuleType, names: list[str]) -> bool:
    target: Any = module
    for index, name in enumerate(names):
        if not hasattr(target, name):
            # A class attribute declared without a value (``widget: ClassVar[str]``), the last name only.
            return index == len(names) - 1 and isinstance(target, type) and any(
                name in getattr(cls, "__annotations__", {}) for cls in target.__mro__)
        target = getattr(target, name)
    return True


def _resolves(dotted: str) -> bool:
    """Whether ``dotted`` is a module, or a module's attribute (of an attribute…), under one of PACKAGES."""
    for package in PACKAGES:
        parts = f"{package}{dotted}".split(".")
        for split in range(len(parts), 0, -1):
            try:
                module = importlib.import_module(".".join(parts[:split]))
            except ImportError:
                continue
            if _attribute(module, parts[split:]):
                return True
            break
    return False


def problems(tokens: list[str]) -> list[str]:
    """Every backticked path that does not exist and every dotted name that does not resolve."""
    found = []
    for token in tokens:
        if token in NOT_CODE or "<" in token or "*" in token:  # placeholders and globs
            continue
        if "::" in token:  # path::function
            path, name = token.split("::")
            text = next(((ROOT / base / path).read_text(encoding="utf-8") for base in ROOTS
                         if (ROOT / base / path).is_file()), "")
            if not re.search(rf"^\s*(def|class) {name}\b", text, re.M):
                found.append(f"{token}: no {name} in {path}")
        elif match := re.fullmatch(r"([\w./-]+(?:{}))(?: ([A-Z_]+))?".format("|".join(map(re.escape, EXTENSIONS))),
                                   token):
            path, name = match.groups()
            if not _exists(path):
                found.append(f"{token}: no such file")
            elif name and not any(name in (ROOT / base / path).read_text(encoding="utf-8") for base in ROOTS
                                  if (ROOT / base / path).is_file()):
                found.append(f"{token}: no {name} in {path}")
        elif re.fullmatch(r"[\w.]+/(?:[\w./]+)?", token):  # a folder, or folder/module.attribute
            if _exists(token):
                continue
            module, _, name = token.rpartition(".")
            if not (name and _exists(f"{module}.py") and _resolves(f"{module.replace('/', '.')}.{name}")):
                found.append(f"{token}: no such folder or module attribute")
        elif re.fullmatch(r"[A-Za-z_]\w*(\.\w+)+(\(\))?", token) and not _resolves(token.removesuffix("()")):
            found.append(f"{token}: does not import")  # module.name, Class.attribute, name()
    return found


def test_every_path_and_dotted_name_in_architecture_md_exists() -> None:
    assert not problems(_tokens())


def test_the_celery_task_the_page_names_is_registered() -> None:
    from config.celery import app

    app.loader.import_default_modules()
    assert "annotation.expire_leases" in app.tasks


def test_the_checker_finds_what_is_missing() -> None:
    assert problems(["annotation/selectors.py", "gold/selectors.py", "annotation/audit.py::audit_record",
                     "TaskType.widget",
                     "exports/writers/standard.py STANDARD_FORMATS", "exports/writers/flat.flat_schema",
                     "services.annotation_submit", "QueueSlot.live", "pii/", "TaskType.metrics()"]) == []
    assert problems(["annotation/nothing.py", "annotation/audit.py::nothing", "exports/writers/flat.nothing",
                     "services.nothing", "nothing/", "exports/writers/standard.py NOTHING",
                     "TaskType.widget.nothing"]) == [
        "annotation/nothing.py: no such file", "annotation/audit.py::nothing: no nothing in annotation/audit.py",
        "exports/writers/flat.nothing: no such folder or module attribute", "services.nothing: does not import",
        "nothing/: no such folder or module attribute",
        "exports/writers/standard.py NOTHING: no NOTHING in exports/writers/standard.py",
        "TaskType.widget.nothing: does not import"]
