#!/usr/bin/env python3
"""Runs every command and snippet a user would copy from README.md and docs/*.md.

A fenced block whose language is `sh` (or `bash`) is run by bash (-e -o pipefail), a
`python` block by one Python session per document (the blocks of a document share
their names, as in an interactive session). Each document runs in a folder of its own
under --work, holding `build` (a link to the build), `bench`, `scripts` and `python`
(links into the source), so the commands run as written from the root of a clone.
`trainhook` is on PATH (the build's bin/), the Python package is the source tree's
(`python/`) with the build's core library (TRAINHOOK_LIBRARY).

A document steers its blocks with HTML comments (invisible when rendered), placed
right before the block they apply to:

  <!-- doc-test: skip REASON -->         not run; the reason is printed
  <!-- doc-test: replace 'OLD' 'NEW' --> run with OLD replaced by NEW (a shorter run);
                                         the replacement is printed
  <!-- doc-test: setup sh|python         hidden code run first, e.g. to make the data
  ...                                    a sketch leaves to the reader
  -->
  <!-- doc-test: needs PROGRAM -->       run when PROGRAM is on PATH, else skipped saying so

Blocks in other languages (cmake, cpp, yaml, json, none) are files or output, not run.
A sh or python block with neither a run nor a skip, or a directive followed by no
runnable block, fails the test: a new snippet is run or says why not.

`torchrun` is PyTorch 2.x's (--torchrun: Debian's 1.13 one cannot start under Python 3.11).

usage: run_doc_snippets.py --root SRC --build BUILD --work DIR [--python PY] [--torchrun FILE] [--only NAME]
"""
import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

RUN_LANGS = {"sh": "sh", "bash": "sh", "python": "python"}
DIRECTIVE = re.compile(r"^<!--\s*doc-test:\s*(\w[\w-]*)\s*(.*?)\s*(-->)?\s*$")
FENCE = re.compile(r"^(\s*)```\s*([\w+-]*)\s*$")
BLOCK_TIMEOUT = 900


class DocError(Exception):
    pass


def parse(path):
    """The blocks of a document: (line, language, code, directives) for each fence."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks, pending, i = [], [], 0
    while i < len(lines):
        line = lines[i]
        m = DIRECTIVE.match(line.strip())
        if m:
            kind, rest, closed = m.group(1), m.group(2), m.group(3)
            if kind == "setup":
                if closed:
                    raise DocError(f"{path}:{i + 1}: a setup directive holds its code on the lines after it")
                body, i = [], i + 1
                while i < len(lines) and lines[i].strip() != "-->":
                    body.append(lines[i])
                    i += 1
                if i == len(lines):
                    raise DocError(f"{path}: setup directive without its closing '-->'")
                if rest not in ("sh", "python"):
                    raise DocError(f"{path}: setup directive language '{rest}': expected sh or python")
                pending.append(("setup", rest, "\n".join(body)))
            elif kind == "skip":
                if not rest:
                    raise DocError(f"{path}:{i + 1}: 'doc-test: skip' needs a reason")
                pending.append(("skip", rest, None))
            elif kind == "needs":
                if not rest:
                    raise DocError(f"{path}:{i + 1}: 'doc-test: needs' names a program")
                pending.append(("needs", rest, None))
            elif kind == "replace":
                args = shlex.split(rest)
                if len(args) != 2:
                    raise DocError(f"{path}:{i + 1}: 'doc-test: replace' takes 'OLD' 'NEW', got {rest!r}")
                pending.append(("replace", args[0], args[1]))
            else:
                raise DocError(f"{path}:{i + 1}: unknown directive 'doc-test: {kind}' "
                               "(expected skip, replace, needs or setup)")
            i += 1
            continue
        m = FENCE.match(line)
        if m:
            indent, lang, start, body = m.group(1), m.group(2), i + 1, []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
                i += 1
            if i == len(lines):
                raise DocError(f"{path}:{start}: fenced block without its closing ```")
            if lang not in RUN_LANGS and pending:
                raise DocError(f"{path}:{start}: doc-test directives before a '{lang or 'plain'}' block, "
                               "which is not run (only sh and python blocks are)")
            blocks.append((start, RUN_LANGS.get(lang), "\n".join(body) + "\n", pending))
            pending = []
        elif pending and line.strip():
            raise DocError(f"{path}:{i + 1}: doc-test directives must come right before their block")
        i += 1
    if pending:
        raise DocError(f"{path}: doc-test directives at the end, before no block")
    return blocks


# A persistent Python session per document: blocks are exec'd in one namespace.
SESSION = r"""
import json, os, sys, traceback
ns = {"__name__": "__main__"}
out = os.fdopen(int(sys.argv[1]), "w")
for line in sys.stdin:
    req = json.loads(line)
    try:
        exec(compile(req["code"], req["name"], "exec"), ns)
        out.write(json.dumps({"ok": True}) + "\n")
    except BaseException:
        traceback.print_exc()
        out.write(json.dumps({"ok": False}) + "\n")
    out.flush()
"""


class PythonSession:
    def __init__(self, python, cwd, env):
        r, w = os.pipe()
        self.proc = subprocess.Popen([python, "-c", SESSION, str(w)], cwd=cwd, env=env, stdin=subprocess.PIPE,
                                     pass_fds=(w,), text=True)
        os.close(w)
        self.replies = os.fdopen(r)
        self.cwd = Path(cwd)

    def run(self, code, name):
        # The block is a real file: TorchScript and inspect read a class's source from it.
        path = self.cwd / ".doc-test" / (re.sub(r"[^\w.-]+", "_", name) + ".py")
        path.parent.mkdir(exist_ok=True)
        path.write_text(code, encoding="utf-8")
        self.proc.stdin.write(json.dumps({"code": code, "name": str(path)}) + "\n")
        self.proc.stdin.flush()
        line = self.replies.readline()
        if not line:
            raise DocError(f"{name}: the Python session ended (exit status {self.proc.wait()})")
        return json.loads(line)["ok"]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def workspace(args, doc):
    work = args.work / doc.stem
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    (work / "build").symlink_to(args.build.resolve())
    for name in ("bench", "scripts", "python", "examples"):
        (work / name).symlink_to(args.root / name)
    env = dict(os.environ)
    tools = work / ".doc-test-bin"
    tools.mkdir()
    if args.torchrun:
        (tools / "torchrun").symlink_to(args.torchrun.resolve())
    env["PATH"] = f"{args.build.resolve() / 'bin'}:{tools}:{env.get('PATH', '/usr/bin:/bin')}"
    env["TRAINHOOK_LIBRARY"] = str(args.build.resolve() / "lib" / "libtrainhook_base.so")
    env["PYTHONPATH"] = str(args.root / "python")
    env["TRAINHOOK_REGISTRY_CACHE"] = str(work / "registry-cache.json")
    env["HOME"] = str(work)  # nothing a snippet writes under ~ (caches, HF's) escapes the test
    env.pop("TRAINHOOK_PLUGIN_PATH", None)
    return work, env


def run_doc(args, doc, report):
    blocks = parse(doc)
    runnable = [b for b in blocks if b[1]]
    if not runnable:
        return 0
    work, env = workspace(args, doc)
    session = None
    failures = 0
    try:
        for line, lang, code, directives in runnable:
            where = f"{doc.relative_to(args.root)}:{line}"
            skip = [d for d in directives if d[0] == "skip"]
            skip += [("skip", f"needs {d[1]}, not found on PATH", None) for d in directives
                     if d[0] == "needs" and not shutil.which(d[1], path=env["PATH"])]
            if skip:
                report.append((where, "skip", skip[0][1]))
                print(f"skip {where}: {skip[0][1]}", flush=True)
                continue
            notes = []
            for d in directives:
                if d[0] == "replace":
                    if d[1] not in code:
                        raise DocError(f"{where}: 'doc-test: replace' looks for {d[1]!r}, which the block lacks")
                    code = code.replace(d[1], d[2])
                    notes.append(f"{d[1]} -> {d[2]}")
            steps = [(d[1], d[2], f"{where} (setup)") for d in directives if d[0] == "setup"]
            steps.append((lang, code, where))
            print(f"run  {where} ({lang}{'; ' + ', '.join(notes) if notes else ''})", flush=True)
            start = time.monotonic()
            ok = True
            for step_lang, step_code, name in steps:
                if step_lang == "sh":
                    try:
                        rc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", step_code], cwd=work, env=env,
                                            timeout=BLOCK_TIMEOUT).returncode
                    except subprocess.TimeoutExpired:
                        print(f"FAIL: {name}: still running after {BLOCK_TIMEOUT} s", file=sys.stderr)
                        rc = -1
                    ok = rc == 0
                    if not ok:
                        print(f"FAIL: {name}: exit status {rc}:\n{step_code}", file=sys.stderr)
                else:
                    if session is None:
                        session = PythonSession(args.python, work, env)
                    ok = session.run(step_code, name)
                    if not ok:
                        print(f"FAIL: {name}: the Python block raised (above):\n{step_code}", file=sys.stderr)
                if not ok:
                    break
            took = time.monotonic() - start
            report.append((where, "ok" if ok else "FAIL", f"{took:.1f} s" + (f"; {', '.join(notes)}" if notes else "")))
            if not ok:
                failures += 1
                break  # later blocks of the document build on this one
    finally:
        if session:
            session.close()
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", type=Path, required=True)
    ap.add_argument("--build", type=Path, required=True)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--python", help="the Python of the HF venv (torch, transformers); default "
                    "$TRAINHOOK_HF_VENV/bin/python, else <root>/build/hf-venv/bin/python")
    ap.add_argument("--torchrun", type=Path, help="PyTorch 2.x's torchrun, put on PATH")
    ap.add_argument("--only", action="append", help="a document's file name (repeatable)")
    args = ap.parse_args()
    args.root = args.root.resolve()
    if not args.python:
        venv = os.environ.get("TRAINHOOK_HF_VENV") or str(args.root / "build" / "hf-venv")
        args.python = os.path.join(venv, "bin", "python")
    if not os.access(args.python, os.X_OK):
        sys.exit(f"FAIL: no Python for the snippets at {args.python} (scripts/venv hf makes the HF venv)")
    if args.torchrun and not args.torchrun.exists():
        print(f"note: no torchrun at {args.torchrun}: the blocks that need it are skipped", flush=True)
        args.torchrun = None
    docs = [args.root / "README.md"] + sorted((args.root / "docs").glob("*.md"))
    if args.only:
        docs = [d for d in docs if d.name in args.only]
        if not docs:
            sys.exit(f"--only {args.only}: no such document")
    report, failures = [], 0
    try:
        for doc in docs:
            failures += run_doc(args, doc, report)
    except DocError as e:
        print(f"FAIL: {e}", file=sys.stderr)
        return 1
    print("\nsnippet                          result  detail")
    for where, result, detail in report:
        print(f"{where:<32} {result:<7} {detail}")
    ran = sum(r == "ok" for _, r, _ in report)
    print(f"\n{ran} run, {sum(r == 'skip' for _, r, _ in report)} skipped with a reason, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
