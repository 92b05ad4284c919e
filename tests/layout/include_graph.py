"""The core's includes go one way, at two grains.

Areas: the core's areas include one another one way only (core/CMakeLists.txt
lists them in that order): a file of an area may include headers of the areas
before it in AREAS, never of one after it, and every area directory is listed.

Components: a component is a header and its same-named source file,
core/include/trainhook/A/x.hpp (or a private core/src/A/x.hpp) with
core/src/A/x.cpp, named A/x; A may be a nested folder (plugin_host/registry/x).
A private core/src/A/x_impl.hpp beside x.cpp (the definition of x's pimpl)
is part of component A/x.
Component A/x depends on B/y when one of its files includes B/y's header, by
<trainhook/B/y.hpp> or by a path relative to the including file. The
component graph inside the core has no cycle: a header that two components
share holds only what both need and includes neither of them.

Prints the area graph; exits 1 naming each file that includes backwards and
each include cycle as its path a -> b -> ... -> a."""
import os
import re
import sys

# Each area may include only areas before it.
AREAS = ["common", "args", "data", "models", "callbacks", "plugin_host", "optim", "checkpoint",
         "distributed", "trainer", "cli"]
SOURCE_SUFFIXES = (".hpp", ".h", ".cpp")

root = sys.argv[1]
rank = {a: i for i, a in enumerate(AREAS)}
include = re.compile(r'^\s*#\s*include\s*[<"]trainhook/([a-z_0-9]+)/', re.M)
any_include = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
edges, bad, unknown = {}, [], set()
# Component name ("plugin_host/registry/plugin_scan") -> the files it holds.
component_files = {}
for base in ("core/src", "core/include/trainhook"):
    top = os.path.join(root, base)
    for area in sorted(os.listdir(top)):
        if not os.path.isdir(os.path.join(top, area)):
            continue
        if area not in rank:
            unknown.add(area)
            continue
        for dirpath, _, files in os.walk(os.path.join(top, area)):
            for f in sorted(files):
                path = os.path.join(dirpath, f)
                if f.endswith(SOURCE_SUFFIXES):
                    name = os.path.splitext(os.path.relpath(path, top))[0].replace(os.sep, "/")
                    component_files.setdefault(name, []).append(path)
                with open(path, encoding="utf-8") as fh:
                    for target in include.findall(fh.read()):
                        if target == area or target not in rank:
                            continue
                        edges.setdefault(area, set()).add(target)
                        if rank[target] > rank[area]:
                            bad.append(f"{os.path.relpath(path, root)}: {area}/ includes {target}/, "
                                       f"which comes after it")


# A pimpl's private definition belongs to the component whose class it completes.
for name in [n for n in component_files if n.endswith("_impl")]:
    owner = name[:-len("_impl")]
    if owner in component_files and all(p.startswith(os.path.join(root, "core/src")) for p in component_files[name]):
        component_files[owner] += component_files.pop(name)


def included_component(path, kind, target):
    """The core component a file's #include names, or None (outside the core)."""
    stem = os.path.splitext(target)[0]
    name = None
    if target.startswith("trainhook/"):
        name = stem[len("trainhook/"):]
    elif kind == '"':  # a private header beside the file (or below it)
        full = os.path.normpath(os.path.join(os.path.dirname(path), stem))
        for base in ("core/src", "core/include/trainhook"):
            rel = os.path.relpath(full, os.path.join(root, base))
            if not rel.startswith(".."):
                name = rel.replace(os.sep, "/")
                break
    if name is not None and name not in component_files and name.endswith("_impl"):
        name = name[:-len("_impl")]
    return name if name in component_files else None


depends = {}
for name, paths in component_files.items():
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            for kind, target in any_include.findall(fh.read()):
                other = included_component(path, kind, target)
                if other is not None and other != name:
                    depends.setdefault(name, set()).add(other)

# Each cycle once, from a depth-first search: a back edge to a component on the
# current path closes a cycle.
cycles, seen_cycles = [], set()
state = {}  # absent: unvisited; 1: on the path; 2: done
for start in sorted(component_files):
    if start in state:
        continue
    path, stack = [start], [iter(sorted(depends.get(start, ())))]
    state[start] = 1
    while stack:
        nxt = next(stack[-1], None)
        if nxt is None:
            state[path.pop()] = 2
            stack.pop()
        elif state.get(nxt) == 1:
            cycle = path[path.index(nxt):]
            key = frozenset(cycle)
            if key not in seen_cycles:
                seen_cycles.add(key)
                cycles.append(cycle + [nxt])
        elif nxt not in state:
            state[nxt] = 1
            path.append(nxt)
            stack.append(iter(sorted(depends.get(nxt, ()))))

for area in AREAS:
    print(f"{area:12} -> {', '.join(sorted(edges.get(area, ()), key=rank.get)) or '-'}")
print(f"{len(component_files)} components, "
      f"{sum(len(d) for d in depends.values())} component includes")
for a in sorted(unknown):
    bad.append(f"core area '{a}' is not in AREAS of {os.path.relpath(__file__, root)}: place it in the order")
for cycle in cycles:
    bad.append("include cycle between components: " + " -> ".join(cycle))
if bad:
    print("\n".join(bad), file=sys.stderr)
    sys.exit(1)
