#!/usr/bin/env bash
# ABI 1.1 through the real CLI and trainer with the plain-C plugin c_grad_norm
# (tests/sdk/model_access_c.c; C11, abi.h + dlpack.h only):
#  1. its global gradient L2 norm from the views at on_pre_optimizer_step equals
#     the trainer's grad_norm to 1e-5 relative at every step; the step values
#     (loss, grad_norm before clipping, learning rate) match the log; its
#     metrics reach log_history and the TensorBoard scalars (read with the real
#     tensorboard package); the plugin does not link LibTorch;
#  2. the same with 2 processes (trainhook launch --nproc_per_node 2);
#  3. every bad input is refused with TH_INVALID_ARGUMENT naming the callback,
#     and the run goes on;
#  5. TensorBoard histograms of the weights and gradients (tensorboard.histograms)
#     are read by the real reader (EventAccumulator.Histograms) with min/max/num/sum
#     equal to the tensors' at that step (computed by the C plugin from the views);
#  4. set_lr_factor halves the learning rate from its step on, and the factor
#     survives a resume from a checkpoint.
# usage: cli_model_access.sh <trainhook> <plugin folder> <digits.csv> <work dir>
set -euo pipefail
TH="$1" PLUGINS="$2" DIGITS="$3" WORK="$4"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"
VENV="$(test_venv)" || exit 1
[[ -s $DIGITS ]] || fail "$DIGITS is missing; scripts/install-deps unpacks it"
export OMP_NUM_THREADS=1
unset TENSORBOARD_LOGGING_DIR
rm -rf "$WORK"
mkdir -p "$WORK"
head -n 512 "$DIGITS" > "$WORK/train.csv"

ldd "$PLUGINS"/libtrainhook_c_grad_norm.so > "$WORK/ldd.txt"
if grep -qi torch "$WORK/ldd.txt"; then cat "$WORK/ldd.txt"; fail "the C plugin links LibTorch"; fi

ARGS=(--train_file "$WORK/train.csv" --feature_scale 0.0625 --model mlp --do_train --disable_tqdm true
  --seed 5 --per_device_train_batch_size 32 --logging_steps 1 --max_grad_norm 1e9 --learning_rate 1e-3
  --lr_scheduler_type constant --plugin_dir "$PLUGINS" --save_strategy no)

run() {  # out_dir args... (--callbacks c_grad_norm unless args give --callbacks)
  local out="$1"
  shift
  local cbs=(--callbacks c_grad_norm)
  [[ " $* " == *" --callbacks "* ]] && cbs=()
  "$TH" train "${ARGS[@]}" "${cbs[@]}" --output_dir "$out" "$@" > "$out.log" 2>&1 ||
    { cat "$out.log" >&2; fail "trainhook train $* exited with an error"; }
}

# log_history checks: c_grad_norm vs grad_norm (1e-5 rel), step values vs the log.
check_norms() {  # out_dir expected_steps [processes]
  "$VENV/bin/python" - "$1/trainer_state.json" "$2" "${3:-1}" <<'PY' || fail "$1: the views' gradient norm does not match"
import json, sys
hist = json.load(open(sys.argv[1]))["log_history"]
rows = [h for h in hist if "grad_norm" in h]
assert len(rows) == int(sys.argv[2]), f"{len(rows)} logged steps, expected {sys.argv[2]}"
for h in rows:
    for k in ("c_grad_norm", "c_step_grad_norm", "c_step_loss", "c_step_lr"):
        assert k in h, f"step {h['step']}: {k} missing from log_history: {h}"
    rel = abs(h["c_grad_norm"] - h["grad_norm"]) / h["grad_norm"]
    assert rel <= 1e-5, f"step {h['step']}: views give {h['c_grad_norm']}, trainer {h['grad_norm']} (rel {rel})"
    assert abs(h["c_step_grad_norm"] - h["grad_norm"]) <= 1e-12 * h["grad_norm"], h
    if sys.argv[3] == "1":  # the logged loss is the mean over ranks, c_step_loss this rank's
        assert abs(h["c_step_loss"] - h["loss"]) <= 1e-4 * max(1, abs(h["loss"])), h
    assert h["c_step_lr"] == h["learning_rate"], h
print(f"{len(rows)} steps, max rel diff", max(abs(h["c_grad_norm"] - h["grad_norm"]) / h["grad_norm"] for h in rows))
PY
}

# The plugin guide shows layer_grad_norms.cpp (below its header
# comment) verbatim: the documented example is the one built and run here.
"$VENV/bin/python" - "$HERE/layer_grad_norms.cpp" "$HERE/../../docs/plugins.md" <<'PY' ||
import sys
code = open(sys.argv[1]).read()
code = code[code.index("#include <trainhook/plugin.hpp>"):]
for doc in sys.argv[2:]:
    assert "```cpp\n" + code + "```" in open(doc).read(), f"{doc} does not show {sys.argv[1]} as it is"
PY
  fail "the documented per-layer gradient-norm example differs from tests/sdk/layer_grad_norms.cpp"

# 1. One process, with TensorBoard.
run "$WORK/one" --max_steps 6 --report_to tensorboard --callbacks c_grad_norm,layer_grad_norms
check_norms "$WORK/one" 6
# The per-layer example (layer_grad_norms.cpp): norms that combine to grad_norm.
"$VENV/bin/python" - "$WORK/one/trainer_state.json" <<'PY' || fail "the per-layer example's norms are wrong"
import json, math, sys
for h in json.load(open(sys.argv[1]))["log_history"]:
    if "grad_norm" not in h:
        continue
    layers = {k: v for k, v in h.items() if k.startswith("grad_norm/")}
    assert layers, h
    total = math.sqrt(sum(v * v for v in layers.values()))
    assert abs(total - h["grad_norm"]) <= 1e-5 * h["grad_norm"], (total, h)
print("per-layer example:", sorted(layers))
PY
"$VENV/bin/python" "$HERE/../tensorboard/check_events.py" "$WORK/one" --trainer-output 2> "$WORK/one.check" ||
  { cat "$WORK/one.check" >&2; fail "TensorBoard scalars do not match log_history (plugin metrics included)"; }
"$VENV/bin/python" - "$WORK/one/runs" <<'PY' || fail "c_grad_norm is not a TensorBoard scalar"
import glob, sys
from tensorboard.backend.event_processing import event_accumulator
(run,) = glob.glob(sys.argv[1] + "/*")
acc = event_accumulator.EventAccumulator(run)
acc.Reload()
tags = acc.Tags()["scalars"]
assert any(t.endswith("c_grad_norm") for t in tags), tags
print("tensorboard scalars:", [t for t in tags if "c_" in t])
PY
echo "ok: one process"

# 2. Two processes: gradients are averaged before on_pre_optimizer_step.
PORT=$(free_port)
"$TH" launch --nproc_per_node 2 --master_port "$PORT" -- train "${ARGS[@]}" --callbacks c_grad_norm --output_dir "$WORK/two" --max_steps 4 \
  > "$WORK/two.log" 2>&1 || { cat "$WORK/two.log" >&2; fail "2 processes: trainhook launch failed"; }
check_norms "$WORK/two" 4 2
echo "ok: two processes"

# 3. Bad input: refused with TH_INVALID_ARGUMENT (3) and the callback's name; the run goes on.
run "$WORK/probe" --max_steps 2 --plugin_config 'c_grad_norm={"probe": true}'
expect_probe() {  # case status text
  grep -F "probe $1 status=$2" "$WORK/probe.log" | grep -F -- "$3" >/dev/null ||
    { grep probe "$WORK/probe.log" >&2; fail "probe $1: expected status $2 with '$3'"; }
}
expect_probe grad_view_at_step_begin 3 "callback 'c_grad_norm': tensors: gradients are not readable in on_step_begin"
expect_probe param_write_at_step_begin 3 "callback 'c_grad_norm': tensors: parameters may not be written in on_step_begin"
expect_probe factor_zero 3 "callback 'c_grad_norm': set_lr_factor: the factor must be a finite number > 0, got 0"
expect_probe factor_negative 3 "callback 'c_grad_norm': set_lr_factor: the factor must be a finite number > 0"
expect_probe metric_empty_name 3 "callback 'c_grad_norm': add_metric: the metric name is empty"
expect_probe metric_nan 3 "callback 'c_grad_norm': add_metric: the value of 'c_nan' is NaN"
expect_probe metric_null_name 3 "callback 'c_grad_norm': add_metric: the metric name is NULL"
expect_probe skip_at_step_begin 3 "callback 'c_grad_norm': skip_optimizer_step: only in on_pre_optimizer_step"
expect_probe null_list 3 "callback 'c_grad_norm': tensors: \`out\` is NULL"
expect_probe learning_rates 0 ""
expect_probe param_write_at_optimizer_step 0 ""
grep -q "disabled\|failed" "$WORK/probe.log" && { cat "$WORK/probe.log" >&2; fail "probe: a callback failed"; }
check_norms "$WORK/probe" 2
echo "ok: bad input refused with messages"

# 4. The LR factor set at the end of step 2, kept in the checkpoint and restored on
# resume. The logged learning_rate is the rate a step used (the newest
# transformers' order), so the halved rate shows from step 3 on.
run "$WORK/factor" --max_steps 6 --save_strategy steps --save_steps 3 \
  --plugin_config 'c_grad_norm={"lr_factor": 0.5, "lr_factor_step": 2}'
run "$WORK/resumed" --max_steps 6 --save_strategy steps --save_steps 3 \
  --resume_from_checkpoint "$WORK/factor/checkpoint-3"
"$VENV/bin/python" - "$WORK/factor/trainer_state.json" "$WORK/resumed/trainer_state.json" <<'PY' ||
import json, sys
full = {h["step"]: h["learning_rate"] for h in json.load(open(sys.argv[1]))["log_history"] if "learning_rate" in h}
assert full[1] == 1e-3 and full[2] == 1e-3 and all(full[s] == 5e-4 for s in range(3, 7)), full
resumed = {h["step"]: h["learning_rate"] for h in json.load(open(sys.argv[2]))["log_history"] if "learning_rate" in h}
assert all(resumed[s] == 5e-4 for s in range(4, 7)), resumed
print("learning rates:", full, "resumed:", resumed)
PY
  fail "the learning-rate factor did not apply or was not restored on resume"
grep -q '"TrainhookLrFactor"' "$WORK/factor/checkpoint-3/trainer_state.json" || fail "no lr factor in the checkpoint"
echo "ok: lr factor and resume"

# 5. TensorBoard histograms every 2 steps; the C plugin logs the same tensors' min/max/sum/num.
run "$WORK/hist" --max_steps 4 --report_to tensorboard --plugin_config 'c_grad_norm={"stats": true}' \
  --plugin_config tensorboard.histograms=weights,gradients --plugin_config tensorboard.histogram_steps=2
"$VENV/bin/python" - "$WORK/hist" <<'PY' || fail "TensorBoard histograms do not match the tensors"
import glob, json, math, sys
from tensorboard.backend.event_processing import event_accumulator
out = sys.argv[1]
(run,) = glob.glob(out + "/runs/*")
acc = event_accumulator.EventAccumulator(run, size_guidance={event_accumulator.HISTOGRAMS: 0})
acc.Reload()
tags = acc.Tags()["histograms"]
hist = {r["step"]: r for r in json.load(open(out + "/trainer_state.json"))["log_history"] if "loss" in r}
assert any(t.startswith("weights/") for t in tags) and any(t.startswith("gradients/") for t in tags), tags
checked = 0
for tag in tags:
    events = acc.Histograms(tag)
    assert [e.step for e in events] == [2, 4], (tag, [e.step for e in events])
    for e in events:
        ref = hist[e.step]
        v = e.histogram_value
        for what, got in (("min", v.min), ("max", v.max), ("sum", v.sum), ("num", v.num)):
            want = ref[f"c_stats/{tag}/{what}"]
            assert math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9), (tag, e.step, what, got, want)
        assert sum(v.bucket) == v.num, (tag, sum(v.bucket), v.num)
        checked += 1
print("histograms checked:", checked, sorted(tags))
PY
echo "ok: TensorBoard histograms"
