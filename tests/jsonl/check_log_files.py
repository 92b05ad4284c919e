"""Checks the jsonl and csv loggers' files against trainer_state.json's log_history.
usage:
  check_log_files.py equal <out_dir>         both files hold exactly log_history (all keys, values)
  check_log_files.py killed <out_dir>        after SIGKILL: every complete line parses and equals the last
                                             checkpoint's log_history where it has the entry, the file holds
                                             at least the entries of the checkpoint before it, csv rows equal
                                             jsonl lines
  check_log_files.py same <a_dir> <b_dir>    the training lines of a's jsonl equal b's at the same step
The csv file is read with Python's csv module; a cell reads back as the number
log_history holds (integers without a point, NaN as "nan" where JSON has null).
"""
import csv
import glob
import json
import math
import os
import sys


def jsonl_lines(path, complete_only):
    text = open(path, encoding="utf-8").read()
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    elif complete_only and lines:
        lines.pop()  # the line a killed writer had not finished (there is none: lines are one write)
    return [json.loads(l) for l in lines]


def csv_rows(path, complete_only):
    text = open(path, encoding="utf-8", newline="").read()
    if complete_only and text and not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]
    rows = list(csv.DictReader(text.splitlines(keepends=True)))
    return [{k: v for k, v in r.items() if v != ""} for r in rows]


def cell_matches(cell, want):
    if want is None:
        return cell in ("nan", "inf", "-inf")  # trainer_state.json writes non-finite numbers as null
    if isinstance(want, bool):
        return cell == json.dumps(want)
    if isinstance(want, int):
        return cell.lstrip("-").isdigit() and int(cell) == want
    if isinstance(want, float):
        return float(cell) == want
    return cell == want


def row_equals(row, entry):
    if set(row) != set(entry):
        return False, f"keys {sorted(row)} vs {sorted(entry)}"
    for k, want in entry.items():
        if not cell_matches(row[k], want):
            return False, f"{k}: cell {row[k]!r} vs {want!r}"
    return True, ""


def same_entry(a, b):
    # Exact: same keys, same JSON types, same values (NaN is null on both sides).
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def check_files(out, history, complete_only):
    lines = jsonl_lines(os.path.join(out, "log_history.jsonl"), complete_only)
    rows = csv_rows(os.path.join(out, "log_history.csv"), complete_only)
    return lines, rows


def fail(msg):
    sys.exit("FAIL: " + msg)


mode = sys.argv[1]
if mode == "equal":
    out = sys.argv[2]
    history = json.load(open(os.path.join(out, "trainer_state.json")))["log_history"]
    lines, rows = check_files(out, history, False)
    # trainer_state.json is written at the end of training; the evaluation the
    # CLI runs after it (a validation file) logs one more record, which the
    # files have (as HF's log_history in memory has it) and the json does not.
    final_evals = lines[len(history):]
    for l in final_evals:
        if l.get("step") != history[-1]["step"] or not all(
                k in ("epoch", "step") or k.startswith("eval_") for k in l):
            fail(f"jsonl line past log_history is not the final evaluation: {l}")
    if len(lines) != len(history) + len(final_evals) or len(final_evals) > 1:
        fail(f"jsonl has {len(lines)} lines, log_history {len(history)} entries")
    for i, (l, h) in enumerate(zip(lines, history)):
        if not same_entry(l, h):
            fail(f"jsonl line {i + 1}: {l} != {h}")
    if len(rows) != len(lines):
        fail(f"csv has {len(rows)} rows, jsonl {len(lines)} lines")
    for i, (r, h) in enumerate(zip(rows, history + final_evals)):
        ok, why = row_equals(r, h)
        if not ok:
            fail(f"csv row {i + 1}: {why}")
    print(f"equal: {len(history)} entries in both files (+ {len(final_evals)} final evaluation)")
elif mode == "killed":
    out = sys.argv[2]
    ckpts = sorted(glob.glob(os.path.join(out, "checkpoint-*")), key=lambda p: int(p.rsplit("-", 1)[1]))
    if not ckpts:
        fail("no checkpoint")
    history = json.load(open(os.path.join(ckpts[-1], "trainer_state.json")))["log_history"]
    lines, rows = check_files(out, history, True)
    # The newest checkpoint's folder exists before its on_save has flushed the
    # lines (HF's order: save, then on_save), so a SIGKILL in between may leave
    # fewer lines than it holds. Every earlier checkpoint's on_save has returned:
    # the file holds at least its entries.
    flushed = ckpts[-2] if len(ckpts) > 1 else None
    if flushed is not None:
        n_flushed = len(json.load(open(os.path.join(flushed, "trainer_state.json")))["log_history"])
        if len(lines) < n_flushed:
            fail(f"jsonl has {len(lines)} complete lines, fewer than {flushed}'s {n_flushed} entries")
    for i, h in enumerate(history[:len(lines)]):
        if not same_entry(lines[i], h):
            fail(f"jsonl line {i + 1}: {lines[i]} != {h}")
    steps = [l["step"] for l in lines]
    if steps != sorted(steps):
        fail(f"jsonl steps out of order: {steps}")
    # csv: every complete row equals the jsonl line of the same index. Each
    # logger's worker writes what is queued every 100 ms (or 64 records), so
    # between two saves either may be up to a worker batch (256) ahead.
    n = min(len(rows), len(lines))
    if abs(len(rows) - len(lines)) > 256:
        fail(f"csv has {len(rows)} rows, jsonl {len(lines)} lines")
    for i in range(n):
        ok, why = row_equals(rows[i], lines[i])
        if not ok:
            fail(f"csv row {i + 1}: {why}")
    print(f"killed: {len(lines)} jsonl lines ({len(history)} in {os.path.basename(ckpts[-1])}), {len(rows)} csv rows")
elif mode == "same":
    a = {l["step"]: l for l in jsonl_lines(os.path.join(sys.argv[2], "log_history.jsonl"), True) if "loss" in l}
    b = {l["step"]: l for l in jsonl_lines(os.path.join(sys.argv[3], "log_history.jsonl"), True) if "loss" in l}
    common = sorted(set(a) & set(b))
    if len(common) < 10:
        fail(f"only {len(common)} training lines in common")
    for s in common:
        if not same_entry(a[s], b[s]):
            fail(f"step {s}: {a[s]} != {b[s]}")
    print(f"same: {len(common)} training lines equal")
else:
    fail("unknown mode " + mode)
