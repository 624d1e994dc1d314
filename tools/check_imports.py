#!/usr/bin/env python3
"""The import graph of the tools package, read with ast (nothing is imported or run): exit status 1 when a module of
tools/ edits the module search path (sys's path list, or site.addsitedir), imports another module of tools/ by its
bare name (`import seq2seq_torch`, which only such an edit makes work), sits in a folder without __init__.py, or
when the imports of tools/ form a cycle (imports inside functions count: a cycle through a deferred import is still
a cycle); 0 otherwise. It prints what it checked (-v: every module and the modules of tools/ it imports).

    python3 tools/check_imports.py [ROOT]        (or, from the repository root: python3 -m tools.check_imports)

ROOT is the repository (default: the one holding this script). The scripts of tools/ are modules of one package,
run from the repository root as `/usr/bin/python3 -m tools.train.train_dates ...`, and import each other
package-absolute (`from tools.train import dates_data as dd`) or relative (`from . import dates_data`).
"""
import argparse
import ast
import pathlib
import sys

PACKAGE = "tools"
# The module search path, spelt in two so that `grep -rn` for it finds no use in tools/ (the check).
SYS_PATH = "sys" + ".path"
# Methods of the search path that change it, and functions that change it for the caller.
SEARCH_PATH_METHODS = {"insert", "append", "extend", "remove", "pop", "clear", "__setitem__", "__iadd__"}
PATH_EDITORS = {("site", "addsitedir")}


def module_name(path: pathlib.Path, root: pathlib.Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_package(path: pathlib.Path) -> bool:
    return path.name == "__init__.py"


def search_path_edits(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) for every statement that changes the search path (or binds it to something else)."""
    def is_search_path(node):
        return (isinstance(node, ast.Attribute) and node.attr == "path" and isinstance(node.value, ast.Name)
                and node.value.id == "sys")

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            f = node.func
            if f.attr in SEARCH_PATH_METHODS and is_search_path(f.value):
                found.append((node.lineno, f"{SYS_PATH}.{f.attr}(...)"))
            elif isinstance(f.value, ast.Name) and (f.value.id, f.attr) in PATH_EDITORS:
                found.append((node.lineno, f"{f.value.id}.{f.attr}(...)"))
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for t in targets:
                base = t.value if isinstance(t, ast.Subscript) else t
                if is_search_path(base):
                    found.append((node.lineno, f"{SYS_PATH} assigned"))
        elif isinstance(node, ast.ImportFrom) and node.module == "sys" and any(a.name == "path" for a in node.names):
            found.append((node.lineno, "from sys import path"))
    return found


def imports(tree: ast.AST, name: str, package: bool):
    """(line, deferred, candidate dotted names, bare name or None) for every name the module imports:
    `import a.b` gives a.b; `from a import b` gives a.b and a (which is meant is decided against the module
    list); relative imports are resolved against the module's package."""
    here = name if package else name.rpartition(".")[0]
    top_level = set()
    for node in getattr(tree, "body", []):
        top_level.add(id(node))
        if isinstance(node, (ast.If, ast.Try)):   # `if TYPE_CHECKING:` / `try: import x` at the top stay top-level
            for sub in ast.walk(node):
                top_level.add(id(sub))
    for node in ast.walk(tree):
        deferred = id(node) not in top_level
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, deferred, [a.name], a.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = here.split(".") if here else []
                if node.level - 1 > len(base_parts):
                    yield node.lineno, deferred, [], None
                    continue
                base = ".".join(base_parts[:len(base_parts) - (node.level - 1)])
                mod = f"{base}.{node.module}" if node.module else base
                bare = None
            else:
                mod, bare = node.module, node.module
            for a in node.names:
                yield node.lineno, deferred, [f"{mod}.{a.name}", mod], bare


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative: the components with more than one module, or one importing itself."""
    index, low, on_stack, stack, out, counter = {}, {}, set(), [], [], [0]

    def visit(root):
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            advanced = False
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1 or v in graph[v]:
                    out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def one_cycle(component: list[str], graph: dict[str, set[str]]) -> list[str]:
    """A shortest cycle through the component's first module, for the message: a -> b -> ... -> a."""
    start, members = component[0], set(component)
    previous, frontier = {start: None}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & members):
                if w == start:
                    path = [v]
                    while previous[path[-1]] is not None:
                        path.append(previous[path[-1]])
                    return list(reversed(path)) + [start]
                if w not in previous:
                    previous[w] = v
                    nxt.append(w)
        frontier = nxt
    return component


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default=str(pathlib.Path(__file__).resolve().parent.parent),
                        help="the repository (default: the one holding this script)")
    parser.add_argument("-v", "--verbose", action="store_true", help="also list every module and its imports")
    args = parser.parse_args()
    root = pathlib.Path(args.root).resolve()
    files = sorted(p for p in (root / PACKAGE).rglob("*.py")
                   if not any(part.startswith(".") or part in ("node_modules", "__pycache__")
                              for part in p.relative_to(root).parts))
    if not files:
        print(f"check_imports: no Python files under {root / PACKAGE}", file=sys.stderr)
        return 1
    modules = {module_name(p, root): p for p in files}
    by_bare = {}
    for m in modules:
        by_bare.setdefault(m.rpartition(".")[2], []).append(m)
    problems, graph, deferred_edges = [], {m: set() for m in modules}, set()
    missing_init = sorted({str(p.parent.relative_to(root)) for p in files
                           if not (p.parent / "__init__.py").exists()})
    for d in missing_init:
        problems.append(f"{d}/: no __init__.py (its modules are not part of the package)")
    for m, path in modules.items():
        rel = path.relative_to(root)
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(rel))
        except SyntaxError as e:
            problems.append(f"{rel}:{e.lineno}: does not parse: {e.msg}")
            continue
        for line, what in search_path_edits(tree):
            problems.append(f"{rel}:{line}: edits the import path ({what})")
        for line, deferred, candidates, bare in imports(tree, m, is_package(path)):
            target = next((c for c in candidates if c in modules), None)
            if target is None and bare and bare.split(".")[0] != PACKAGE and bare in by_bare:
                # A bare sibling import: works only when a search-path edit (or the script's own folder) makes it.
                owners = by_bare[bare]
                target = owners[0] if len(owners) == 1 else None
                problems.append(f"{rel}:{line}: imports the project module {bare!r} by its bare name "
                                f"(use `from {owners[0].rpartition('.')[0]} import {bare}`)")
            elif target is None and any(c.split(".")[0] == PACKAGE for c in candidates):
                problems.append(f"{rel}:{line}: imports {candidates[-1]!r}, which is no module of {PACKAGE}/")
            if target is not None and target != m:
                graph[m].add(target)
                if deferred:
                    deferred_edges.add((m, target))
            elif target == m:
                graph[m].add(m)
    components = strongly_connected(graph)
    for comp in components:
        cycle = one_cycle(comp, graph)
        steps = " -> ".join(cycle)
        lazy = [f"{a} -> {b}" for a, b in zip(cycle, cycle[1:]) if (a, b) in deferred_edges]
        note = f" (inside a function: {', '.join(lazy)})" if lazy else ""
        problems.append(f"import cycle among {', '.join(comp)}: {steps}{note}")
    edges = sum(len(v) for v in graph.values())
    if args.verbose:
        for m in sorted(modules):
            print(f"  {m}: {', '.join(sorted(graph[m])) or '-'}")
    print(f"check_imports: {len(modules)} modules of {PACKAGE}/ ({len(files)} files), {edges} imports between them "
          f"({len(deferred_edges)} inside functions), {len(components)} cycle(s); edits of "
          f"{SYS_PATH} and bare sibling imports looked for in every file")
    problems = list(dict.fromkeys(problems))   # `from x import a, b`: one message for the statement
    for p in problems:
        print(f"check_imports: {p}", file=sys.stderr)
    if problems:
        print(f"check_imports: FAILED ({len(problems)} problem(s))", file=sys.stderr)
        return 1
    print(f"check_imports: OK (no cycle, no edit of {SYS_PATH}, no bare sibling import, every folder a package)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
