"""The package versions the plugin guide and the examples ask for are those
that introduced what they use (sdk/CHANGELOG.md): a snippet that asks for 0.2
on a page that uses options.hpp (0.4) would not build against 0.2.

    docs_versions_check.py <source dir>

Checks:
  - docs/plugins.md: every `find_package(Trainhook X.Y ...)` in a ```cmake block
    asks for at least the newest version introducing a header the block's
    SOURCES include (the files are looked up in examples/ and tests/sdk/), or a
    component or target the block names (COMPONENTS support, Trainhook::testkit);
  - examples/*/CMakeLists.txt: every `find_package(Trainhook X.Y ...)` asks for
    at least the newest version introducing an SDK header the example's sources
    include, a CMake function it calls (trainhook_package_plugins, 0.6) or a
    component the line names;
  - the guide states the ABI minor of abi.h ("N today").
"""
import pathlib
import re
import sys

INTRODUCED = {  # what -> the package version that introduced it
    "trainhook/options.hpp": (0, 4),
    "trainhook/plugin_config.h": (0, 4),
    "trainhook/plugin_entry.h": (0, 8),
    "trainhook/support/": (0, 5),
    "trainhook/testkit/": (0, 5),
    "Trainhook::support": (0, 5),
    "Trainhook::testkit": (0, 5),
    "trainhook_package_plugins(": (0, 6),
}
COMPONENTS = {"support": (0, 5), "testkit": (0, 5), "sdk": (0, 2), "core": (0, 1)}
FIND = re.compile(r"find_package\(Trainhook\s+(\d+)\.(\d+)[^)]*\)")

src = pathlib.Path(sys.argv[1])
errors = []


def needs(text):
    return max([v for k, v in INTRODUCED.items() if k in text], default=(0, 0))


def line_needs(line):
    m = re.search(r"COMPONENTS([^)]*)\)", line)
    names = m.group(1).split() if m else []
    return max([COMPONENTS.get(n, (0, 0)) for n in names], default=(0, 0))


def fmt(v):
    return f"{v[0]}.{v[1]}"


guide = (src / "docs/plugins.md").read_text()


def source_needs(name):
    found = [p for d in ("examples", "tests/sdk") for p in (src / d).rglob(name)]
    if not found:
        errors.append(f"docs/plugins.md: a snippet builds {name}, found nowhere under examples/ or tests/sdk/")
        return (0, 0)
    return needs("\n".join(re.findall(r"#include\s*<([^>]+)>", found[0].read_text())))


snippets = 0
for block in re.findall(r"```cmake\n(.*?)```", guide, re.S):
    block_needs = max([needs(block)] + [source_needs(n) for n in re.findall(r"SOURCES\s+([^\s)]+)", block)])
    for line in block.splitlines():
        m = FIND.search(line)
        if not m:
            continue
        snippets += 1
        asked = (int(m.group(1)), int(m.group(2)))
        want = max(block_needs, line_needs(line))
        if asked < want:
            errors.append(f"docs/plugins.md: {line.strip()} asks for {fmt(asked)}, but its snippet uses what "
                          f"{fmt(want)} introduced")
if snippets == 0:
    errors.append("docs/plugins.md: no find_package(Trainhook X.Y) snippet found")

for cmake in sorted(src.glob("examples/*/CMakeLists.txt")):
    sources = "".join(p.read_text() for p in cmake.parent.iterdir() if p.suffix in (".c", ".cpp", ".h", ".hpp"))
    includes = "\n".join(re.findall(r"#include\s*<([^>]+)>", sources))
    sdk_needs = max([v for k, v in INTRODUCED.items() if k.startswith("trainhook/") and k in includes
                     and not k.startswith(("trainhook/support/", "trainhook/testkit/"))], default=(0, 0))
    sdk_needs = max(sdk_needs, needs("\n".join(line.split("#")[0] for line in cmake.read_text().splitlines())))
    for line in cmake.read_text().splitlines():
        m = FIND.search(line)
        if not m:
            continue
        asked = (int(m.group(1)), int(m.group(2)))
        want = max(sdk_needs, line_needs(line))
        if asked < want:
            errors.append(f"{cmake.relative_to(src)}: {line.strip()} asks for {fmt(asked)}, but the example needs "
                          f"{fmt(want)}")

minor = re.search(r"#define TRAINHOOK_ABI_VERSION_MINOR (\d+)", (src / "sdk/include/trainhook/abi.h").read_text())
if f"TRAINHOOK_ABI_VERSION_MINOR`, {minor.group(1)} today" not in guide:
    errors.append(f"docs/plugins.md does not say the ABI minor is {minor.group(1)} today")

for e in errors:
    print("FAIL:", e)
print(f"docs versions: {snippets} guide snippets checked, {len(errors)} problem(s)")
sys.exit(1 if errors else 0)
