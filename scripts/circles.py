#!/usr/bin/env python3
"""Finds circles among the modules of a Rust crate (issue 42's acceptance).

Usage: circles.py SRC_DIR [MODULE_PATH ...]   (no MODULE_PATH: every module with children)

For each MODULE_PATH (`crate` for the crate root, or e.g. `crate::extract::repair`),
the children of that module are the nodes; child A depends on child B when a
file inside A names a path into B (`use crate::b::…`, `crate::b::…`, `super::b`,
`self::b`, `super::super::b`, …, resolved against the file's own module path).
Test code is left out: files named `tests.rs` or under a `tests` folder, and
everything from a `#[cfg(test)]` line on. Prints each circle (a strongly
connected component of more than one child) and exits 1 when there is one.
"""
import os
import re
import sys

PATH = re.compile(r"\b((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)+)")
# `use crate::a::{b, c::d}` names b and c under a: expand one level of braces.
BRACES = re.compile(r"\b((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{([^{}]*)\}")


def module_path(src, file):
    rel = os.path.relpath(file, src)[:-3].split(os.sep)
    if rel[-1] in ("lib", "main") and len(rel) == 1:
        return ["crate"]
    if rel[-1] == "mod":
        rel = rel[:-1]
    return ["crate"] + rel


def resolve(own, path):
    """Absolute segments of `path` as seen from module `own`."""
    segs = path.split("::")
    if segs[0] == "crate":
        return segs
    base = list(own)
    while segs and segs[0] in ("self", "super"):
        if segs[0] == "super":
            base = base[:-1]
        segs = segs[1:]
    return base + segs


def code_of(file):
    with open(file, encoding="utf-8") as f:
        text = f.read()
    cut = text.find("#[cfg(test)]")
    text = text if cut < 0 else text[:cut]
    # Comments name paths in prose (see Note …); they are not dependencies.
    return "\n".join(line.split("//")[0] for line in text.splitlines())


def paths_in(code):
    for m in BRACES.finditer(code):
        for item in m.group(2).split(","):
            item = item.strip().split(" as ")[0].strip()
            if item and item != "self":
                yield m.group(1) + "::" + item
            elif item == "self":
                yield m.group(1)
    for m in PATH.finditer(code):
        yield m.group(1)


def circles(src, parent):
    parent = parent.split("::")
    edges = {}
    for root, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs if d != "tests"]
        for name in files:
            if not name.endswith(".rs") or name == "tests.rs":
                continue
            file = os.path.join(root, name)
            own = module_path(src, file)
            if own[: len(parent)] != parent or len(own) <= len(parent):
                continue
            child = own[len(parent)]
            for p in paths_in(code_of(file)):
                target = resolve(own, p)
                if target[: len(parent)] != parent or len(target) <= len(parent):
                    continue
                other = target[len(parent)]
                if other != child:
                    edges.setdefault(child, set()).add(other)
    # Tarjan's strongly connected components.
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(set(edges) | {w for ws in edges.values() for w in ws}):
        if v not in index:
            visit(v)
    return out, edges


def every_parent(src):
    found = set()
    for root, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs if d != "tests"]
        for name in files:
            if name.endswith(".rs") and name != "tests.rs":
                own = module_path(src, os.path.join(root, name))
                for i in range(1, len(own)):
                    found.add("::".join(own[:i]))
    return sorted(found)


def main():
    src = sys.argv[1]
    parents = sys.argv[2:] or every_parent(src)
    found = False
    for parent in parents:
        comps, edges = circles(src, parent)
        for comp in comps:
            found = True
            print(f"circle in {src} under {parent}: {' <-> '.join(comp)}")
            for a in comp:
                inside = sorted(b for b in edges.get(a, ()) if b in comp)
                print(f"    {a} -> {', '.join(inside)}")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
