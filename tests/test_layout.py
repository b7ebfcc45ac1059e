"""The suite's own layout (tests/README.md): no test module imports another test module, and none imports
``bench/``. What more than one test module needs lives in ``tests/builders.py``, a conftest, or a helper
module of the folder whose name does not start with ``test_`` (``tests/site/matrix.py``)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _imported(module: ast.AST, path: Path, root: Path) -> Iterator[tuple[int, str]]:
    """(line, dotted module) of every import in the module, relative ones resolved against its package."""
    package = path.parent.relative_to(root.parent).parts
    for node in ast.walk(module):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else ()
            target = ".".join((*base, node.module)) if node.module else ".".join(base)
            yield node.lineno, target
            # ``from . import test_x`` and ``from tests.site import test_x`` name the module in the alias
            yield from ((node.lineno, f"{target}.{alias.name}") for alias in node.names)


def forbidden_imports(root: Path) -> list[str]:
    """``file:line: module`` of every import of a ``test_*`` module or of ``bench`` by a test module under
    ``root`` (a ``tests`` folder)."""
    found = []
    for path in sorted(root.rglob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, name in _imported(tree, path, root):
            parts = name.split(".")
            tests = [i for i, part in enumerate(parts) if part.startswith("test_")]
            if parts[0] == root.name and tests:
                found.append(f"{path.relative_to(root.parent).as_posix()}:{line}: {'.'.join(parts[:tests[0] + 1])}")
            elif parts[0] == "bench":
                found.append(f"{path.relative_to(root.parent).as_posix()}:{line}: bench")
    return sorted(set(found))


def test_no_test_module_imports_another_test_module_or_bench() -> None:
    found = forbidden_imports(TESTS)
    assert found == [], ("move what is shared to tests/builders.py, a conftest.py or a helper module of the "
                         "folder (not named test_*):\n" + "\n".join(found))


def test_the_layout_check_finds_each_kind_of_import(tmp_path: Path) -> None:
    tests = tmp_path / "tests"
    (tests / "site").mkdir(parents=True)
    (tests / "site" / "test_b.py").write_text("x = 1\n", encoding="utf-8")
    (tests / "site" / "matrix.py").write_text("from tests.site.test_b import x\n", encoding="utf-8")  # not a test
    (tests / "test_a.py").write_text(
        "from tests.site.test_b import x, test_thing\n"
        "import tests.site.test_b\n"
        "from tests.site import test_b\n"
        "from tests.site.matrix import y\n"
        "from tests.builders import client_for\n"
        "def f():\n"
        "    from bench.pii import run\n", encoding="utf-8")
    (tests / "site" / "test_c.py").write_text("from .test_b import x\nfrom . import matrix\n", encoding="utf-8")
    assert forbidden_imports(tests) == [
        "tests/site/test_c.py:1: tests.site.test_b",
        "tests/test_a.py:1: tests.site.test_b",
        "tests/test_a.py:2: tests.site.test_b",
        "tests/test_a.py:3: tests.site.test_b",
        "tests/test_a.py:7: bench",
    ]
