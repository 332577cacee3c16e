"""The shape of the code base (docs/architecture.md, "Limits the code keeps"): no
import cycle in the Python package, counting imports inside functions; domain modules
never import the CLI framework; no module or function past its size limit; the ns-3
reference programs take resolved values. Read from the sources, not from imports, so
a cycle hidden in a function body counts as much as one at the top of a file."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).parents[2]
PACKAGE = ROOT / "python" / "vtlab"
CORE = ROOT / "crates"

MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 80


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def python_modules() -> dict[str, Path | None]:
    """Every module of the package; compiled ones (a `.pyi` stub) map to None."""
    mods: dict[str, Path | None] = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    for stub in PACKAGE.rglob("*.pyi"):
        mods.setdefault(module_name(stub), None)
    return mods


def imported_modules(name: str, path: Path, mods: dict[str, Path | None]) -> set[str]:
    """The package's modules that `name` imports anywhere in its body. `from a import
    b` depends on `a.b` when that is a module, else on `a`; a parent package being
    initialised first is not an edge (Python does that for every submodule)."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                if not is_package:
                    base.pop()
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            subs = {f"{target}.{a.name}" for a in node.names} & mods.keys()
            found |= subs
            if len(subs) < len(node.names):
                found.add(target)
    return {m for m in found if m in mods and m != name}


def import_graph() -> dict[str, set[str]]:
    mods = python_modules()
    return {m: (imported_modules(m, p, mods) if p else set()) for m, p in mods.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[v] = min(low[v], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_cycle_finder_sees_a_cycle_through_a_function_body(tmp_path):
    # a imports b at the top, b imports a inside a function: one cycle {a, b};
    # c imports a only: no cycle. Built by hand, so the finder cannot pass vacuously.
    graph = {"a": {"b"}, "b": {"a"}, "c": {"a"}}
    assert cycles(graph) == [["a", "b"]]
    pkg = tmp_path / "p"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from p import b\n")
    (pkg / "b.py").write_text("def f():\n    from p.a import x\n    return x\n")
    mods = {"p": pkg / "__init__.py", "p.a": pkg / "a.py", "p.b": pkg / "b.py"}
    assert imported_modules("p.b", pkg / "b.py", mods) == {"p.a"}
    assert imported_modules("p.a", pkg / "a.py", mods) == {"p.b"}


def test_python_import_graph_has_no_cycle():
    assert cycles(import_graph()) == []


def test_only_the_cli_imports_typer():
    users = []
    for path in PACKAGE.rglob("*.py"):
        name = module_name(path)
        if name == "vtlab.cli" or name.startswith("vtlab.cli."):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            if any(n == "typer" or n.startswith("typer.") for n in names):
                users.append(name)
    assert users == [], f"domain modules importing typer: {sorted(set(users))}"


def test_no_python_module_is_too_long():
    long = {
        str(p.relative_to(ROOT)): n
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def test_no_python_function_is_too_long():
    long = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({n})")
    assert long == []


FN = re.compile(r"\s*(?:pub(?:\([a-z:]+\))?\s+)?(?:const\s+)?(?:unsafe\s+)?fn\s+(\w+)")
TEST_MOD = re.compile(r"\s*(?:pub\s+)?mod\s+\w+\s*\{")


def _code(line: str) -> str:
    """A line without its comment, string and char literals (so their braces do not count)."""
    line = re.sub(r'r#".*?"#', '""', line)
    line = re.sub(r'"(?:\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(?:\\.|[^'\\])'", "''", line)
    return line.split("//")[0]


def rust_functions(text: str) -> Iterator[tuple[str, int, int]]:
    """(name, first line, length in lines) of each function outside test code: a
    `#[cfg(test)]` item (module or function) and everything in it is skipped."""
    lines = [_code(line) for line in text.splitlines()]
    depth = 0
    skip_until: int | None = None  # depth at which a skipped test module closes
    cfg_test = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if "#[cfg(test)]" in text.splitlines()[i]:
            cfg_test = True
        elif skip_until is None and (m := FN.match(line)):
            end, opened = i, 0
            started = False
            while end < len(lines):
                if not started and ";" in lines[end] and "{" not in lines[end]:
                    break
                for ch in lines[end]:
                    if ch == "{":
                        opened += 1
                        started = True
                    elif ch == "}":
                        opened -= 1
                if started and opened == 0:
                    break
                end += 1
            if started and not cfg_test:
                yield m.group(1), i + 1, end - i + 1
            cfg_test = False
        elif cfg_test and TEST_MOD.match(line):
            skip_until = depth
            cfg_test = False
        elif cfg_test and line.strip() and not line.strip().startswith("#"):
            cfg_test = False
        depth += line.count("{") - line.count("}")
        if skip_until is not None and depth <= skip_until:
            skip_until = None
        i += 1


def test_rust_function_finder_skips_test_code_and_literals():
    src = (
        "fn a() {\n    let s = \"{\";\n    let c = '}';\n}\n"
        "#[cfg(test)]\nfn helper() {\n}\n"
        "#[cfg(test)]\nmod tests {\n    fn t() {\n    }\n}\n"
        "pub(crate) fn b(x: u32) -> u32 {\n    x\n}\n"
        "trait T {\n    fn decl(&self);\n}\n"
    )
    # a: lines 1-4 (4 lines); helper and t are test code; b: lines 13-15 (3 lines);
    # decl has no body.
    assert list(rust_functions(src)) == [("a", 1, 4), ("b", 13, 3)]


def test_no_production_rust_function_is_too_long():
    long = []
    for path in CORE.rglob("*.rs"):
        rel = path.relative_to(ROOT)
        if {"tests", "benches", "examples"} & set(rel.parts):
            continue
        if path.name == "tests.rs" or path.name.endswith("_tests.rs"):
            continue
        for name, line, n in rust_functions(path.read_text()):
            if n > MAX_FUNCTION_LINES:
                long.append(f"{rel}:{line} {name} ({n})")
    assert long == []


def test_reference_programs_take_resolved_loss_values():
    # docs/architecture.md: the ns-3 programs receive the burst-start probability
    # from the core's resolved scenario, never a mean loss to invert themselves.
    for path in (ROOT / "validation" / "ns3").glob("*.cc"):
        text = path.read_text()
        assert "FromMeanLoss" not in text, path.name
        assert '"meanLoss"' not in text, path.name
