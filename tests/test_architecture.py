"""The packages depend one way, as the data flows: stats, core and llm at the bottom, then
curation -> judging -> annotation, with home (cross-app pages) and config (settings, URLs) on top.

Read from the source with `ast`, so an import hidden inside a function counts too.

File by file as well: no import cycle between two modules (except through a `tasks.py`), every
import inside a function says why, the pure modules import no Django, and the paths that comments
and docs name exist. Each of those checks is a plain function, shown to fail on a planted tree.
"""

import ast
import functools
import io
import os
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Each package may import only from the packages listed after it.
LAYERS = ["config", "home", "annotation", "judging", "curation", "llm", "core", "stats"]
PACKAGES = set(LAYERS)
# Imports inside a function across packages are allowed only where a comment says why.
MAX_FUNCTION_LEVEL_IMPORTS = 3


def _modules():
    for package in LAYERS:
        # A renamed package would otherwise leave every check below with nothing to read.
        assert (ROOT / package).is_dir(), f"{package}/ is in LAYERS but not in the repository"
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            yield package, path


def _imports(tree: ast.AST):
    """(imported top-level package, inside a function?, line) for every import in a module."""

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield alias.name.split(".")[0], in_function, child.lineno
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                yield child.module.split(".")[0], in_function, child.lineno
            yield from visit(child, inner)

    yield from visit(tree, False)


@functools.cache
def _edges():
    """Parsed once for the three package-level tests."""
    edges = []
    for package, path in _modules():
        for target, in_function, line in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if target in PACKAGES and target != package:
                edges.append((package, target, in_function, f"{path.relative_to(ROOT)}:{line}"))
    return edges


def test_every_import_between_packages_points_down_the_layers():
    upward = [
        f"{where}: {source} imports {target}"
        for source, target, _, where in _edges()
        if LAYERS.index(target) < LAYERS.index(source)
    ]
    assert upward == []


def test_the_package_graph_has_no_cycle():
    graph: dict[str, set[str]] = {package: set() for package in PACKAGES}
    for source, target, _, _ in _edges():
        graph[source].add(target)
    state: dict[str, str] = {}

    def cycle_from(node, path):
        state[node] = "open"
        for successor in sorted(graph[node]):
            if state.get(successor) == "open":
                return path + [node, successor]
            if successor not in state and (found := cycle_from(successor, path + [node])):
                return found
        state[node] = "done"
        return None

    cycles = [found for package in sorted(PACKAGES) if package not in state and (found := cycle_from(package, []))]
    assert cycles == []


def test_imports_inside_functions_across_packages_are_few_and_explained():
    hidden = [(source, target, where) for source, target, in_function, where in _edges() if in_function]
    assert len(hidden) <= MAX_FUNCTION_LEVEL_IMPORTS, hidden
    for _, _, where in hidden:
        file, line = where.rsplit(":", 1)
        lines = (ROOT / file).read_text(encoding="utf-8").splitlines()
        context = lines[int(line) - 3 : int(line)]
        assert any("#" in text for text in context), f"{where}: say why this import sits inside a function"


def _imported_modules(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module


@pytest.mark.parametrize(
    "path", sorted(ROOT.glob("*/migrations/0*.py")), ids=lambda p: f"{p.parent.parent.name}/{p.name}"
)
def test_migrations_import_no_live_project_code(path):
    """A migration replays history: importing today's prompts or services would change what it
    does tomorrow. Its own app's frozen data (`<app>.migrations.*`) is fine, and so is a model
    module, which Django's generated migrations name for callable field defaults."""
    live = [
        module
        for module in _imported_modules(ast.parse(path.read_text(encoding="utf-8")))
        if module.split(".")[0] in PACKAGES
        and not module.startswith(f"{path.parent.parent.name}.migrations")
        and not module.endswith(".models")
    ]
    assert live == []


def test_the_statistics_are_pure():
    """stats/ takes plain values and returns them: no Django, no database, no project code."""
    impure = [
        f"{path.relative_to(ROOT)}:{line}: {target}"
        for path in sorted((ROOT / "stats").rglob("*.py"))
        for target, _, line in _imports(ast.parse(path.read_text(encoding="utf-8")))
        if target in PACKAGES - {"stats"} or target in ("django", "rest_framework")
    ]
    assert impure == []


# ----------------------------------------------------------------------------- file by file
#
# The checks below read every module of the packages (migrations apart) and resolve each import to
# the FILE it loads: `from judging import tasks` is judging/tasks.py, `from . import x` is
# the sibling x.py, `from judging.runs.creation import run_create` is judging/runs/creation.py. Importing a
# module runs its packages' `__init__.py` first, so those count as imported too. An import under
# `if TYPE_CHECKING:` never runs and does not count; one inside a function does.


def _module_files(root: Path, packages) -> dict[str, Path]:
    """Dotted module name -> file, for every module of `packages` under `root` (no migrations)."""
    files = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            if "migrations" in path.relative_to(root).parts:
                continue
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            files[".".join(parts)] = path
    return files


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST):
    """(import node, inside a function?) for every import that runs, at any depth."""

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for other in child.orelse:
                    yield from visit(ast.Module(body=[other], type_ignores=[]), in_function)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child, in_function
            yield from visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))

    yield from visit(tree, False)


def _absolute_names(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    """Every dotted name an import may load, relative imports resolved: `from a import b` gives
    both `a` and `a.b` (b may be a module or a name defined in a)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        stem = ".".join(base + ([node.module] if node.module else []))
    else:
        stem = node.module or ""
    return [stem] + [f"{stem}.{alias.name}" for alias in node.names if alias.name != "*"]


def _loaded_modules(names: list[str], files: dict[str, Path]) -> set[str]:
    """The project modules that importing `names` runs: each name's longest prefix that is a
    module, and every package `__init__.py` above it."""
    loaded = set()
    for name in names:
        parts = name.split(".")
        for end in range(1, len(parts) + 1):
            if ".".join(parts[:end]) in files:
                loaded.add(".".join(parts[:end]))
    return loaded


def module_graph(root: Path, packages) -> tuple[dict[str, Path], dict[str, set[str]], dict[str, set[str]]]:
    """(modules -> files, module -> project modules it imports, module -> other top-level
    packages it imports such as `django`), imports inside functions included. Read once per tree:
    the cycle and purity tests share it (callers only read it)."""
    return _module_graph(root, tuple(packages))


@functools.cache
def _module_graph(root: Path, packages: tuple[str, ...]):
    files = _module_files(root, packages)
    graph: dict[str, set[str]] = {}
    outside: dict[str, set[str]] = {}
    for module, path in files.items():
        is_package = path.name == "__init__.py"
        graph[module], outside[module] = set(), set()
        for node, _ in _import_nodes(ast.parse(path.read_text(encoding="utf-8"))):
            names = _absolute_names(node, module, is_package)
            graph[module] |= _loaded_modules(names, files) - {module}
            if isinstance(node, ast.Import) or not node.level:
                outside[module] |= {name.split(".")[0] for name in names} - set(packages)
    return files, graph, outside


def file_import_cycles(root: Path, packages, allowed_through: str = "tasks.py") -> list[list[str]]:
    """Import cycles between files, each as the list of its files (the first repeated at the
    end), leaving out any cycle that passes through a module named `allowed_through` (the
    service <-> task loop of a queued Django app). One cycle is reported per knot of modules
    that all reach each other."""
    files, graph, _ = module_graph(root, packages)
    kept = {module for module, path in files.items() if path.name != allowed_through}
    edges = {module: sorted(graph[module] & kept) for module in kept}
    # Tarjan's strongly connected components, iteratively (deep package graphs stay in bounds).
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    knots: list[list[str]] = []
    for start in sorted(kept):
        if start in index:
            continue
        work = [(start, iter(edges[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(edges[successor])))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    knot = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        knot.append(member)
                        if member == node:
                            break
                    if len(knot) > 1:
                        knots.append(sorted(knot))
    cycles = []
    for knot in sorted(knots):
        members = set(knot)
        # The shortest way from the knot's first module back to itself, by breadth.
        first = knot[0]
        previous: dict[str, str] = {}
        queue = [first]
        while queue and first not in previous:
            node = queue.pop(0)
            for successor in edges[node]:
                if successor in members and successor not in previous:
                    previous[successor] = node
                    queue.append(successor)
        path = [first]
        while len(path) == 1 or path[-1] != first:
            path.append(previous[path[-1]])
        path.reverse()
        cycles.append([str(files[module].relative_to(root)) for module in path])
    return cycles


def _why_comments(source: str) -> set[int]:
    """The lines holding a comment that says something: a bare `# noqa: ...`, `# type: ignore`
    or `# pragma ...` says nothing about why."""
    comments = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT:
            continue
        text = re.sub(
            r"#\s*(noqa(:\s*[A-Z]+[0-9]+(\s*,\s*[A-Z]+[0-9]+)*)?|type:\s*ignore(\[[^\]]*\])?|pragma:?[^#]*)",
            "#",
            token.string,
        )
        if re.search(r"[A-Za-z]{2}", text):
            comments.add(token.start[0])
    return comments


def unexplained_function_imports(root: Path, packages) -> list[str]:
    """`file:line: import` for each import inside a function with no comment saying why.

    Whatever it imports (project code, Django, a heavy library, the standard library): an import
    belongs at the top of its module unless something forces it down (a cycle, a heavy import
    kept off a start-up path, an optional dependency), and then the reader needs that reason.
    The reason is a comment on the import's line(s) or on the 1-3 lines just above; a run of
    imports one after another (blank lines between groups allowed) shares one comment: above
    the first of them, or anywhere among them. A docstring does not count (it says what the
    function does, for its callers), nor does a bare `noqa` or `type: ignore`.
    """
    found = []
    for _, path in _module_files(root, packages).items():
        source = path.read_text(encoding="utf-8")
        comments = _why_comments(source)
        tree = ast.parse(source)
        in_function = {(node.lineno, node.col_offset) for node, inner in _import_nodes(tree) if inner}
        for body in (
            getattr(node, field)
            for node in ast.walk(tree)
            for field in ("body", "orelse", "finalbody", "handlers")
            if isinstance(getattr(node, field, None), list)
        ):
            run: list[ast.stmt] = []
            for statement in [*body, None]:
                if isinstance(statement, (ast.Import, ast.ImportFrom)):
                    run.append(statement)
                    continue
                if run and (run[0].lineno, run[0].col_offset) in in_function:
                    span = range(max(1, run[0].lineno - 3), run[-1].end_lineno + 1)
                    explained = any(line in comments for line in span)
                    if not explained:
                        found += [
                            f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node)}"
                            for node in run
                            if (node.lineno, node.col_offset) in in_function
                        ]
                run = []
    return sorted(found, key=lambda where: (where.split(":")[0], int(where.split(":")[1])))


def impure_modules(root: Path, packages, pure: list[str], forbidden=("django", "rest_framework")) -> list[str]:
    """For each listed pure path (a file, or a folder for every file in it): a line for a path
    that does not exist, and one per module that imports a `forbidden` package, directly or
    through project modules (imports inside functions included), naming the chain of files."""
    files, graph, outside = module_graph(root, packages)
    modules_of = {path: module for module, path in files.items()}
    problems = []
    for listed in pure:
        target = root / listed
        if not target.exists():
            problems.append(f"{listed}: listed as pure but missing (moved? update the list)")
            continue
        paths = sorted(target.rglob("*.py")) if target.is_dir() else [target]
        for path in paths:
            start = modules_of[path]
            came_from = {start: None}
            queue = [start]
            while queue:
                module = queue.pop(0)
                if bad := sorted(outside[module] & set(forbidden)):
                    chain = [module]
                    while came_from[chain[-1]] is not None:
                        chain.append(came_from[chain[-1]])
                    files_chain = " -> ".join(str(files[name].relative_to(root)) for name in reversed(chain))
                    problems.append(f"{path.relative_to(root)}: {files_chain} imports {', '.join(bad)}")
                    break
                for successor in sorted(graph[module]):
                    if successor not in came_from:
                        came_from[successor] = module
                        queue.append(successor)
    return problems


# Folders never read for comments and docs: the environment, caches, generated files, and
# migrations (a migration's comments tell history: the files they name may be long gone).
_NOT_READ = {
    ".git",
    ".venv",
    "node_modules",
    "staticfiles",
    "__pycache__",
    ".ruff_cache",
    ".pytest_cache",
    "migrations",
}
# A path-like word: segments of letters, digits, `_`, `-` and `.` joined by `/`. Not when it
# continues something else (a URL `/runs/new/`, `../shared/...`, `https://...`, `~/...`,
# `<app>/locale`, `$VAR/...`).
_PATH_WORD = re.compile(r"(?<![\w./:~@<>{}$*\\-])((?:[\w.-]+/)+[\w.-]*)(?![\w/<>{}*?\[$])")
# Paths of other repositories that look like ours, each with where it lives.
NAMED_ELSEWHERE = frozenset(
    {
        "config/dimension_definition.json",  # AlignBench's repository (judging keeps a copy)
    }
)
_TEMPLATE_COMMENTS = re.compile(r"\{#.*?#\}|\{% comment %\}.*?\{% endcomment %\}|<!--.*?-->", re.DOTALL)


def _files_read(root: Path):
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(name for name in subfolders if name not in _NOT_READ)
        for name in sorted(names):
            yield Path(folder) / name


def _comment_and_doc_lines(root: Path):
    """(file, line number, text) for every line of prose: Python comments and docstrings,
    Markdown files, and the comments of templates."""
    for path in _files_read(root):
        if path.suffix == ".md":
            for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                yield path, number, text
        elif path.suffix == ".py":
            source = path.read_text(encoding="utf-8")
            for token in tokenize.generate_tokens(io.StringIO(source).readline):
                if token.type == tokenize.COMMENT:
                    yield path, token.start[0], token.string
            for node in ast.walk(ast.parse(source)):
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and (
                    (docstring := node.body[:1])
                    and isinstance(docstring[0], ast.Expr)
                    and isinstance(docstring[0].value, ast.Constant)
                    and isinstance(docstring[0].value.value, str)
                ):
                    for offset, text in enumerate(docstring[0].value.value.splitlines()):
                        yield path, docstring[0].lineno + offset, text
        elif path.suffix == ".html" and "templates" in path.relative_to(root).parts:
            source = path.read_text(encoding="utf-8")
            for comment in _TEMPLATE_COMMENTS.finditer(source):
                first = source.count("\n", 0, comment.start()) + 1
                for offset, text in enumerate(comment.group().splitlines()):
                    yield path, first + offset, text


def missing_named_paths(root: Path, named_elsewhere: frozenset[str] | None = None) -> list[str]:
    """`file:line: path` for each repository path named in prose that does not exist.

    The rules, strict where a path can only mean a file of this repository and silent where it
    may mean something else:
    - a path is a word with at least one `/` whose first segment is a folder at the top of the
      repository (`judging/runs/spec.py`, `bench/bench_bt.py`, `tests/judging/`, `docs/`); it
      must exist from the top, as a file or (ending in `/`) a folder;
    - a template or static file's name (`judging/run_detail.html`, `judging/run.js`) may also
      exist under any `templates/` or `static/` folder, as Django finds them;
    - not checked: words that continue a URL or another path (`/runs/new/`, `https://...`,
      `../shared/data/...`, `~/...`), words with a placeholder or a glob (`<app>/locale`,
      `{slug}/`, `judging/*.py`, `tests/...`), paths whose first segment is no top-level folder
      (`review/services.py` said inside curation/, `admin/base.html`), and single names (`.env`,
      `db.sqlite3`, `Makefile`: files `make run` creates or that need no folder to be found);
    - paths of other repositories that look like ours are listed in `NAMED_ELSEWHERE`;
    - read: Python comments and docstrings, Markdown files, template comments; not migrations.
    A trailing `:line` or `::test` is not part of the path; a trailing `.` ends the sentence.
    """
    if named_elsewhere is None:
        named_elsewhere = NAMED_ELSEWHERE
    top = {path.name for path in root.iterdir() if path.is_dir() and path.name not in _NOT_READ}
    lookup = [root] + sorted(
        folder
        for pattern in ("templates", "static", "*/templates", "*/static")
        for folder in root.glob(pattern)
        if folder.is_dir()
    )
    missing = []
    for path, number, text in _comment_and_doc_lines(root):
        for match in _PATH_WORD.finditer(text):
            named = match.group(1).rstrip(".")
            if named.split("/")[0] not in top or "..." in named or "//" in named or named in named_elsewhere:
                continue
            if not any((folder / named).exists() for folder in lookup):
                missing.append(f"{path.relative_to(root)}:{number}: {named}")
    return missing


# ----------------------------------------------------------------------------- the checks on this tree

# Modules that must never import Django, DRF or the ORM, even through another project module:
# the statistics, and the pure rooms of judging, curation, core and llm. A listed path that does
# not exist fails the test (a move must update this list, never silently drop a module from it).
PURE_MODULES = [
    "stats/",
    "judging/verdicts/parsing.py",
    "judging/prompts/texts.py",
    "judging/prompts/building.py",
    "judging/prompts/untrusted.py",
    "judging/prompts/placeholders.py",
    "judging/prompts/lookalikes.py",
    "judging/papers/tables.py",
    "judging/papers/arena_scores.py",
    "judging/papers/benchmarks.py",
    "judging/benchmarks/registry.py",
    "curation/registry.py",
    "curation/datasets/public_formats.py",
    "curation/conversation.py",
    "core/import_checks.py",
    "core/processes.py",
    "llm/window.py",
    "llm/pacing.py",
]


def test_no_import_cycle_between_files_except_through_a_task_module():
    """A cycle between two files makes the import order matter and each file unreadable alone.
    The one allowed: a service enqueues its task and the task calls the service back, which
    every queued Django app has, so a cycle through a `tasks.py` is left out."""
    cycles = file_import_cycles(ROOT, LAYERS)
    assert cycles == [], "import cycles between files:\n" + "\n".join(" -> ".join(cycle) for cycle in cycles)


def test_every_import_inside_a_function_says_why():
    unexplained = unexplained_function_imports(ROOT, LAYERS)
    assert unexplained == [], "imports inside functions with no comment saying why:\n" + "\n".join(unexplained)


def test_pure_modules_import_no_django():
    problems = impure_modules(ROOT, LAYERS, PURE_MODULES)
    assert problems == [], "pure modules:\n" + "\n".join(problems)


def test_comments_and_docs_name_only_paths_that_exist():
    missing = missing_named_paths(ROOT)
    assert missing == [], "paths named in comments or docs that do not exist:\n" + "\n".join(missing)


# ----------------------------------------------------------------------------- the checks can fail


def _plant(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_a_planted_cycle_between_two_files_is_found(tmp_path):
    _plant(
        tmp_path,
        {
            "shop/__init__.py": "",
            "shop/orders.py": "from shop import billing\n",
            # Relative, inside a function, and `from package import module`: all resolved.
            "shop/billing.py": "def total():\n    from . import orders\n\n    return orders\n",
            "shop/tasks.py": "from shop.jobs import run\n",
            "shop/jobs.py": "from shop import tasks\n\nrun = None\n",
            "shop/types.py": "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from shop import hints\n",
            "shop/hints.py": "from shop.types import TYPE_CHECKING\n",
        },
    )
    # The cycle through tasks.py is allowed, and an import only type checkers read is no cycle.
    assert file_import_cycles(tmp_path, ["shop"]) == [["shop/billing.py", "shop/orders.py", "shop/billing.py"]]


def test_a_planted_cycle_across_packages_and_deeper_modules_is_found(tmp_path):
    _plant(
        tmp_path,
        {
            "low/__init__.py": "",
            "low/helpers.py": "import high.b\n",
            "low/deep/__init__.py": "",
            "low/deep/a.py": "from ..helpers import name\n",
            "high/__init__.py": "",
            "high/b.py": "from low.deep.a import name\n",
        },
    )
    assert file_import_cycles(tmp_path, ["low", "high"]) == [
        ["high/b.py", "low/deep/a.py", "low/helpers.py", "high/b.py"]
    ]


def test_a_planted_function_import_without_a_reason_is_found(tmp_path):
    _plant(
        tmp_path,
        {
            "shop/__init__.py": "",
            "shop/orders.py": (
                "def a():\n    import json\n\n\n"
                "def b():\n    # A cycle: billing imports this module.\n    from shop import billing\n\n\n"
                "def c():\n    from shop import billing  # noqa: F401\n\n\n"
                "def d():\n    import csv  # kept off the start-up path\n"
            ),
        },
    )
    assert unexplained_function_imports(tmp_path, ["shop"]) == [
        "shop/orders.py:2: import json",
        "shop/orders.py:11: from shop import billing",
    ]


def test_a_planted_impure_module_and_a_missing_pure_path_are_found(tmp_path):
    _plant(
        tmp_path,
        {
            "shop/__init__.py": "",
            "shop/maths.py": "def mean():\n    # cheap\n    from shop import helpers\n",
            "shop/helpers.py": "from django.db import models\n",
            "shop/clean.py": "import math\n",
        },
    )
    assert impure_modules(tmp_path, ["shop"], ["shop/maths.py", "shop/clean.py", "shop/gone.py"]) == [
        "shop/maths.py: shop/maths.py -> shop/helpers.py imports django",
        "shop/gone.py: listed as pure but missing (moved? update the list)",
    ]


def test_a_planted_missing_path_is_found(tmp_path):
    _plant(
        tmp_path,
        {
            "shop/__init__.py": '"""Orders are saved by shop/orders.py; shop/gone.py is no more."""\n',
            "shop/orders.py": "# See shop/__init__.py, docs/ and shop/templates/shop/page.html.\nx = 1  # shop/old.py:12\n",
            "shop/templates/shop/page.html": "{# extends shop/base.html #}<p>shop/not_a_comment.py</p>\n",
            "docs/guide.md": (
                "Read `shop/orders.py`, then shop/moved.py. Not paths: /shop/orders/, ../shop/x.py,\n"
                "https://example.org/shop/y.py, <app>/locale, shop/*.py, shop/..., .env, db.sqlite3.\n"
                "A template by its name: `shop/page.html`.\n"
            ),
        },
    )
    assert missing_named_paths(tmp_path) == [
        "docs/guide.md:1: shop/moved.py",
        "shop/__init__.py:1: shop/gone.py",
        "shop/orders.py:2: shop/old.py",
        "shop/templates/shop/page.html:1: shop/base.html",
    ]


# A file a newcomer can read in one sitting; the papers' prompts are printed verbatim, however long.
MAX_MODULE_LINES = 600
VERBATIM = {"judging/prompts/texts.py"}


def long_modules(root: Path) -> list[str]:
    """`path: lines` for every Python file outside tests/ and migrations/ over MAX_MODULE_LINES."""
    found = []
    # Hidden folders (.venv, .git, the tools' caches) hold no project code.
    folders = [folder for folder in root.iterdir() if folder.is_dir() and not folder.name.startswith(".")]
    folders = [folder for folder in folders if folder.name != "tests"]
    for path in sorted(path for folder in folders for path in folder.rglob("*.py")):
        relative = path.relative_to(root)
        if "migrations" in relative.parts or str(relative) in VERBATIM:
            continue
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_MODULE_LINES:
            found.append(f"{relative}: {lines}")
    return found


def test_no_module_outgrows_a_sitting():
    assert long_modules(ROOT) == []


def test_a_planted_long_module_is_found(tmp_path):
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "big.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1), encoding="utf-8")
    (tmp_path / "core" / "fine.py").write_text("x = 1\n" * MAX_MODULE_LINES, encoding="utf-8")
    assert long_modules(tmp_path) == [f"core/big.py: {MAX_MODULE_LINES + 1}"]


# A benchmark is one module (judging/benchmarks/<name>.py, registered once): its paper's name as a
# string appears there and nowhere else in the project's code (migrations, tests and bench/ apart);
# everything else asks the registry.
PAPER_NAMES = {
    "urs": "judging/benchmarks/urs.py",
    "alignbench": "judging/benchmarks/alignbench.py",
    "alpacaeval": "judging/benchmarks/chinese_alpaca_eval.py",
    "chinese_alpaca_eval": "judging/benchmarks/chinese_alpaca_eval.py",
    "arena_hard": "judging/benchmarks/arena_hard.py",
}


def paper_names_outside_their_modules(root: Path, packages, names: dict[str, str]) -> list[str]:
    """`path:line: 'name'` for every string literal equal to a paper's name outside its module."""
    found = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            relative = path.relative_to(root)
            if "migrations" in relative.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
                    if names[node.value] != relative.as_posix():
                        found.append(f"{relative}:{node.lineno}: {node.value!r}")
    return found


def test_a_papers_name_appears_only_in_its_benchmarks_module():
    assert paper_names_outside_their_modules(ROOT, LAYERS, PAPER_NAMES) == []


def test_a_planted_paper_name_is_found(tmp_path):
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "mine.py").write_text('NAME = "paper"\n', encoding="utf-8")
    (tmp_path / "core" / "other.py").write_text('X = {"paper": 1}\nY = "paper/a"\n', encoding="utf-8")
    (tmp_path / "core" / "migrations").mkdir()
    (tmp_path / "core" / "migrations" / "0001.py").write_text('Z = "paper"\n', encoding="utf-8")
    assert paper_names_outside_their_modules(tmp_path, ["core"], {"paper": "core/mine.py"}) == [
        "core/other.py:1: 'paper'"
    ]


# judging's ground floor, which every room may import, imports no room: a floor that imported a
# room standing on it would tie every room to that one (judging/batching.py once asked the engine
# who held a step; core/processes.py answers that now), and judging/dispatch.py queues every task,
# so no room climbs into results/ to queue a run's figures.
JUDGING_GROUND_FLOOR = ["judging.models", "judging.errors", "judging.batching", "judging.dispatch"]
JUDGING_ROOMS = {"prompts", "answers", "verdicts", "runs", "engine", "results", "papers", "benchmarks"}


def rooms_below_the_floor(graph: dict[str, set[str]], floor: list[str], rooms: set[str]) -> list[str]:
    """`floor module -> room module` for every import of a room by a ground-floor module."""
    return [
        f"{module} -> {target}"
        for module in floor
        for target in sorted(graph[module])
        if target.startswith("judging.") and target.split(".")[1] in rooms
    ]


def test_judgings_ground_floor_imports_no_room():
    _, graph, _ = module_graph(ROOT, LAYERS)
    assert rooms_below_the_floor(graph, JUDGING_GROUND_FLOOR, JUDGING_ROOMS) == []


def test_a_floor_importing_a_room_is_found():
    graph = {"judging.batching": {"judging.engine.workers", "judging.models"}, "judging.models": set()}
    assert rooms_below_the_floor(graph, ["judging.batching", "judging.models"], {"engine"}) == [
        "judging.batching -> judging.engine.workers"
    ]
