"""The import contracts (pyproject.toml, ``[tool.importlinter]``; docs/ARCHITECTURE.md) hold on the code, and
each one fails when the import it forbids is planted in a copy of the tree: the linter the CI runs
(``lint-imports``) sees every kind of arrow the architecture rules out."""

from __future__ import annotations

import os
import pkgutil
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
CONTRACTS = {contract["id"]: contract for contract in CONFIG["contracts"]}
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

#: One planted violation per contract: (contract id, file in the copy, text added to it).
PLANTED = {
    # The ground floor reaching up into the top layer.
    "layers": ("config/planted.py", "from exports import integrity\n"),
    # A layer taking a label set from a task type's module instead of the registry.
    "registry": ("exports/planted.py", "from annotation.task_types.ner import LABELS\n"),
    # The task-type contract importing an app's models.
    "task-type-contract": ("annotation/task_types/base.py", "from annotation.models import Project\n"),
}


def _copy_tree(destination: Path) -> None:
    """The root packages' Python files and pyproject.toml, nothing else (the linter reads only these)."""

    def not_python(folder: str, names: list[str]) -> list[str]:
        return [name for name in names if name == "__pycache__" or (
            not (Path(folder) / name).is_dir() and not name.endswith(".py"))]

    for package in CONFIG["root_packages"]:
        shutil.copytree(ROOT / package, destination / package, ignore=not_python)
    shutil.copy(ROOT / "pyproject.toml", destination / "pyproject.toml")


def _broken(tree: Path) -> set[str]:
    """The names of the contracts ``lint-imports`` reports broken in ``tree`` (run there, as the CI runs it)."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"} | {"COLUMNS": "1000"}
    result = subprocess.run([str(LINT_IMPORTS), "--no-cache", "--no-logo"], cwd=tree, env=env, capture_output=True,
                            text=True, timeout=300)
    # One line per contract: its name, then KEPT or BROKEN (and the count of ignored imports, if any).
    status = {name: line.strip()[len(name):].split()[0] for line in result.stdout.splitlines()
              for name in (c["name"] for c in CONFIG["contracts"]) if line.strip().startswith(f"{name} ")}
    broken = {name for name, word in status.items() if word == "BROKEN"}
    kept = {name for name, word in status.items() if word == "KEPT"}
    assert broken | kept == {c["name"] for c in CONFIG["contracts"]}, result.stdout + result.stderr
    assert (result.returncode != 0) == bool(broken), result.stdout + result.stderr
    return broken


@pytest.fixture(scope="module")
def clean_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tree = tmp_path_factory.mktemp("clean")
    _copy_tree(tree)
    return tree


def test_the_code_keeps_every_contract(clean_tree: Path) -> None:
    assert _broken(clean_tree) == set()


@pytest.mark.parametrize("contract", sorted(PLANTED))
def test_a_planted_violation_breaks_its_contract(tmp_path: Path, contract: str) -> None:
    _copy_tree(tmp_path)
    path, text = PLANTED[contract]
    target = tmp_path / path
    target.write_text((target.read_text(encoding="utf-8") if target.exists() else "") + text, encoding="utf-8")
    assert _broken(tmp_path) == {CONTRACTS[contract]["name"]}


def test_the_task_type_contract_names_every_module_it_covers() -> None:
    """The forbidden contract lists modules by name: a new helper of the task-type package, or a new subpackage
    of ``annotation``, must join it (a task type's own module, with its ``TASK_TYPE``, is above the layers)."""
    contract = CONTRACTS["task-type-contract"]
    package = ROOT / "annotation" / "task_types"
    helpers = {f"annotation.task_types.{info.name}" for info in pkgutil.iter_modules([str(package)])
               if "TASK_TYPE = " not in (package / f"{info.name}.py").read_text(encoding="utf-8")}
    assert set(contract["source_modules"]) == {"annotation.task_types", *helpers}
    subpackages = {f"annotation.{info.name}.**" for info in pkgutil.iter_modules([str(ROOT / "annotation")])
                   if info.ispkg and info.name != "task_types"}
    assert subpackages <= set(contract["forbidden_modules"])
    assert {"annotation", "annotation.*"} <= set(contract["forbidden_modules"])
