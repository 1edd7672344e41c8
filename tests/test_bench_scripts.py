"""Every script in bench/ still imports: a module moved or renamed in the project breaks a
benchmark nobody runs in `make test`, so each is imported here without running its `main`.

A script sets Django up at import time (`bench._django.setup_django`: a throwaway database,
migrated). The test session has Django set up already, so that step is replaced by nothing, and
no database is touched. Imports inside a script's functions (the scripts that set Django up in
`main`) are checked by resolving each one: the module is found and every imported name exists.
"""

import ast
import importlib
import importlib.util
from pathlib import Path

import pytest

import bench._django

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted((ROOT / "bench").glob("bench_*.py"))


def _imports_unresolved(path: Path) -> list[str]:
    """`file:line: what` for each import in the script (at any depth) that does not resolve."""
    missing = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            wanted = [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module != "__future__":
            wanted = [(node.module, alias.name) for alias in node.names]
        else:
            continue
        for module_name, name in wanted:
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            try:
                module = importlib.import_module(module_name)
            except ImportError as error:
                missing.append(f"{where}: {module_name} ({error})")
                continue
            if name is None or name == "*" or hasattr(module, name):
                continue
            if importlib.util.find_spec(f"{module_name}.{name}") is None:
                missing.append(f"{where}: {name} from {module_name}")
    return missing


def test_there_are_bench_scripts():
    assert len(SCRIPTS) >= 10, SCRIPTS


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda path: path.name)
def test_a_bench_script_imports(path, monkeypatch):
    monkeypatch.setattr(bench._django, "setup_django", lambda: None)
    importlib.import_module(f"bench.{path.stem}")
    assert _imports_unresolved(path) == []
