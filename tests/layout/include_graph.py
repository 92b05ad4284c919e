"""The core's areas include one another one way only (core/CMakeLists.txt
lists them in that order): a file of an area may include headers of the areas
before it in AREAS, never of one after it, and every area directory is listed.
Prints the graph; exits 1 naming each file that includes backwards."""
import os
import re
import sys

# Each area may include only areas before it.
AREAS = ["common", "args", "data", "models", "callbacks", "plugin_host", "optim", "checkpoint",
         "distributed", "trainer", "cli"]

root = sys.argv[1]
rank = {a: i for i, a in enumerate(AREAS)}
include = re.compile(r'^\s*#\s*include\s*[<"]trainhook/([a-z_0-9]+)/', re.M)
edges, bad, unknown = {}, [], set()
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
                with open(path, encoding="utf-8") as fh:
                    for target in include.findall(fh.read()):
                        if target == area or target not in rank:
                            continue
                        edges.setdefault(area, set()).add(target)
                        if rank[target] > rank[area]:
                            bad.append(f"{os.path.relpath(path, root)}: {area}/ includes {target}/, "
                                       f"which comes after it")
for area in AREAS:
    print(f"{area:12} -> {', '.join(sorted(edges.get(area, ()), key=rank.get)) or '-'}")
for a in sorted(unknown):
    bad.append(f"core area '{a}' is not in AREAS of {os.path.relpath(__file__, root)}: place it in the order")
if bad:
    print("\n".join(bad), file=sys.stderr)
    sys.exit(1)
