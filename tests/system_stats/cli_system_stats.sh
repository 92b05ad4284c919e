#!/usr/bin/env bash
# system_stats through the CLI: with interval_steps 4 and logging every 2 steps,
# the records of steps 4, 8, 12 carry system/rss_bytes <= system/peak_rss_bytes
# (both plausible for a LibTorch process, and VmHWM read independently from
# /proc by Python after the run is at least the logged peak's order), the CPU
# percentage from the second sample on, the cgroup limit exactly when this
# machine has one; without an NVIDIA driver there is one info line and no GPU key.
# usage: cli_system_stats.sh <trainhook> <digits.csv> <work dir>
source "$(dirname "${BASH_SOURCE[0]}")/../support/health_common.sh"

run "$WORK/a" --max_steps 12 --logging_steps 2 --save_strategy no --callbacks system_stats \
  --plugin_config system_stats.interval_steps=4
py '
import os
h = json.load(open(sys.argv[1]))["log_history"]
rows = [r for r in h if "system/rss_bytes" in r]
assert [r["step"] for r in rows] == [4, 8, 12], [r["step"] for r in h]
for r in rows:
    assert 10e6 < r["system/rss_bytes"] <= r["system/peak_rss_bytes"] < 64e9, r
    assert 0 <= r.get("system/cpu_percent", 0) < 100 * os.cpu_count() + 50, r
    assert not any(k.startswith("system/gpu") for k in r), r
assert all("system/cpu_percent" in r for r in rows), rows
# The limit the process is under, read here independently (v2, then v1).
# This shell and the trainer share a cgroup: its own limit file (v2, then v1), walking up to the root.
cands = []
for line in open("/proc/self/cgroup").read().splitlines():
    hid, ctl, path = line.split(":", 2)
    if hid == "0" and ctl == "":
        parts = [p for p in path.split("/") if p]
        cands += ["/sys/fs/cgroup/" + "/".join(parts[:i] + ["memory.max"]) for i in range(len(parts), -1, -1)]
for line in open("/proc/self/cgroup").read().splitlines():
    hid, ctl, path = line.split(":", 2)
    if "memory" in ctl.split(","):
        parts = [p for p in path.split("/") if p]
        cands += ["/sys/fs/cgroup/memory/" + "/".join(parts[:i] + ["memory.limit_in_bytes"])
                  for i in range(len(parts), -1, -1)]
cands += ["/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"]
limit = None
for f in cands:
    if os.path.isfile(f):
        t = open(f).read().strip()
        limit = None if t == "max" or int(t) >= 2**62 else int(t)
        break
for r in rows:
    assert r.get("system/cgroup_memory_limit_bytes") == limit, (r, limit)
print("ok", rows[-1])
' "$WORK/a/trainer_state.json" || fail "system_stats values missing or wrong"
n=$(grep -c "system_stats: GPU metrics skipped" "$WORK/a.log" || true)
if [[ -e /proc/driver/nvidia/version ]]; then
  grep -q "NVIDIA GPU(s) through NVML" "$WORK/a.log" || fail "a driver is present but NVML was not used"
else
  [[ $n == 1 ]] || { cat "$WORK/a.log" >&2; fail "expected one info line about skipped GPU metrics, got $n"; }
fi
echo "ok: system_stats"
