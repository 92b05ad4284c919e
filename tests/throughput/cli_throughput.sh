#!/usr/bin/env bash
# throughput through the CLI: with window_size 4 and logging every 2 steps, the
# training records from step 4 on carry Composer's names and nothing before;
# the values hold by their definition (samples_per_sec = batches_per_sec x 32,
# device = global / world_size, flops_per_sec / samples_per_sec = the trainer's
# FLOPs per sample, mfu = device flops / peak_flops, flops_per_sample
# overrides); tokens appear with --include_num_input_tokens_seen (1 token a row);
# batches_per_sec is within a factor of 20 of the run's own steps per second.
# usage: cli_throughput.sh <trainhook> <digits.csv> <work dir>
source "$(dirname "${BASH_SOURCE[0]}")/../support/health_common.sh"

run "$WORK/a" --max_steps 24 --logging_steps 2 --save_strategy no --eval_strategy steps --eval_steps 10 \
  --callbacks throughput --plugin_config throughput.window_size=4 --plugin_config throughput.peak_flops=1e9 \
  --include_num_input_tokens_seen
py '
h = json.load(open(sys.argv[1]))["log_history"]
train = [r for r in h if "loss" in r]
with_t = [r for r in train if "throughput/batches_per_sec" in r]
assert [r["step"] for r in with_t] == list(range(4, 25, 2)), [r["step"] for r in with_t]
assert all("throughput/batches_per_sec" not in r for r in h if "loss" not in r), "only training records"
final = h[-1]
flops_per_sample = final["total_flos"] / (24 * 32)
for r in with_t:
    b, s = r["throughput/batches_per_sec"], r["throughput/samples_per_sec"]
    assert b > 0 and math.isclose(s, 32 * b, rel_tol=1e-9), r
    for k in ("batches_per_sec", "samples_per_sec", "tokens_per_sec", "flops_per_sec"):
        assert math.isclose(r["throughput/device/" + k], r["throughput/" + k], rel_tol=1e-12), (k, r)
    assert math.isclose(r["throughput/tokens_per_sec"], s, rel_tol=1e-9), r  # one token per row
    assert math.isclose(r["throughput/flops_per_sec"], flops_per_sample * s, rel_tol=1e-9), r
    assert math.isclose(r["throughput/device/mfu"], r["throughput/device/flops_per_sec"] / 1e9, rel_tol=1e-12), r
steps_per_sec = final["train_steps_per_second"]
for r in with_t:
    assert steps_per_sec / 20 < r["throughput/batches_per_sec"] < steps_per_sec * 20, (r, steps_per_sec)
print("ok", len(with_t), "records; batches/s", [round(r["throughput/batches_per_sec"], 1) for r in with_t])
' "$WORK/a/trainer_state.json" || fail "throughput values missing or wrong"

run "$WORK/b" --max_steps 8 --logging_steps 4 --save_strategy no --callbacks throughput \
  --plugin_config throughput.window_size=2 --plugin_config throughput.flops_per_sample=1000
py '
h = json.load(open(sys.argv[1]))["log_history"]
rows = [r for r in h if "throughput/samples_per_sec" in r]
assert [r["step"] for r in rows] == [4, 8], rows
for r in rows:
    assert math.isclose(r["throughput/flops_per_sec"], 1000 * r["throughput/samples_per_sec"], rel_tol=1e-9), r
    assert "throughput/tokens_per_sec" not in r and "throughput/device/mfu" not in r, r
print("ok flops_per_sample")
' "$WORK/b/trainer_state.json" || fail "flops_per_sample override wrong"

"$TH" train "${BASE[@]}" --output_dir "$WORK/bad" --max_steps 2 --callbacks throughput \
  --plugin_config throughput.window_size=0 >"$WORK/bad.log" 2>&1 && fail "window_size 0 was accepted"
grep -q "plugin_config throughput.window_size" "$WORK/bad.log" || { cat "$WORK/bad.log" >&2; fail "no message naming the key"; }
echo "ok: throughput"
