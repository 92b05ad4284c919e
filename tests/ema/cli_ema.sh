#!/usr/bin/env bash
# ema through the CLI:
#  1. evaluation with the EMA weights differs from evaluation without, while
#     training itself is the same (train losses equal);
#  2. a run resumed from a mid-way checkpoint ends with EMA weights bit-identical
#     to the uninterrupted run's (compared in the last checkpoint's state);
#  3. with 2 processes the EMA weights of both ranks are equal (each rank logs a
#     checksum of its EMA weights at the end of training);
#  4. final_weights: the final model.safetensors holds the EMA weights, which the
#     test computes itself from the training weights of every step's checkpoint;
#     a resumed run saves the same final model; with --load_best_model_at_end the
#     EMA weights saved with the best checkpoint.
# usage: cli_ema.sh <trainhook> <digits.csv> <work dir>
source "$(dirname "${BASH_SOURCE[0]}")/../support/health_common.sh"

ARGS=(--max_steps 12 --logging_steps 4 --eval_strategy steps --eval_steps 4 --save_strategy steps --save_steps 4
  --learning_rate 1e-2 --callbacks ema --plugin_config ema.decay=0.8)
run "$WORK/ema" "${ARGS[@]}"
run "$WORK/plain" "${ARGS[@]}" --plugin_config ema.evaluate_with_ema=false
py '
def rows(path, key):
    return {r["step"]: r[key] for r in json.load(open(path))["log_history"] if key in r}
a, b = rows(sys.argv[1], "eval_loss"), rows(sys.argv[2], "eval_loss")
assert a.keys() == b.keys() == {4, 8, 12}, (a, b)
assert all(a[s] != b[s] for s in a), f"EMA evaluation equals the plain one: {a} {b}"
assert rows(sys.argv[1], "loss") == rows(sys.argv[2], "loss"), "the EMA swap changed training"
print("eval_loss with EMA", a, "without", b)
' "$WORK/ema/trainer_state.json" "$WORK/plain/trainer_state.json" || fail "evaluate_with_ema"
echo "ok: evaluation with EMA differs, training unchanged"

run "$WORK/resumed" "${ARGS[@]}" --resume_from_checkpoint "$WORK/ema/checkpoint-8"
py '
def ema(path):
    return json.load(open(path))["stateful_callbacks"]["ema"]["attributes"]
a, b = ema(sys.argv[1]), ema(sys.argv[2])
assert a["num_updates"] == b["num_updates"] == 12, (a["num_updates"], b["num_updates"])
assert a["weights"] == b["weights"], "EMA weights differ after the resume"
print("EMA weights bit-identical,", len(a["weights"]), "tensors")
' "$WORK/ema/checkpoint-12/trainer_state.json" "$WORK/resumed/checkpoint-12/trainer_state.json" ||
  fail "resumed EMA weights are not bit-identical to the uninterrupted run's"
echo "ok: resume bit-identical"

# A checkpoint written before EMA weights took the parameters' dtype holds them
# as doubles, with no "bits": it still resumes, rounded to float32, and as these
# doubles are exact float32 values the run ends bit-identical again.
cp -r "$WORK/ema/checkpoint-8" "$WORK/old-checkpoint-8"
py '
import array, base64
path = sys.argv[1]
j = json.load(open(path))
a = j["stateful_callbacks"]["ema"]["attributes"]
assert a["bits"] == [32] * len(a["names"]), a["bits"]
for k, v in a["weights"].items():
    a["weights"][k] = base64.b64encode(array.array("d", array.array("f", base64.b64decode(v))).tobytes()).decode()
del a["bits"]
text = json.dumps(j)
open(path, "w").write(text)
# Its checksum line too, as the old version wrote the file and its checksum together.
import hashlib, os
sums = os.path.join(os.path.dirname(path), "checkpoint.sha256")
lines = open(sums).read().splitlines()
digest = hashlib.sha256(text.encode()).hexdigest()
lines = [digest + "  trainer_state.json" if l.endswith(" trainer_state.json") else l for l in lines]
open(sums, "w").write("\n".join(lines) + "\n")
' "$WORK/old-checkpoint-8/trainer_state.json" || fail "cannot rewrite the checkpoint in the old format"
run "$WORK/resumed_old" "${ARGS[@]}" --resume_from_checkpoint "$WORK/old-checkpoint-8"
py '
def ema(path):
    return json.load(open(path))["stateful_callbacks"]["ema"]["attributes"]
a, b = ema(sys.argv[1]), ema(sys.argv[2])
assert a["weights"] == b["weights"], "EMA weights differ after resuming an old-format state"
' "$WORK/ema/checkpoint-12/trainer_state.json" "$WORK/resumed_old/checkpoint-12/trainer_state.json" ||
  fail "a checkpoint with EMA weights in doubles did not resume to the same EMA weights"
echo "ok: an old-format (double) EMA state resumes"

PORT=$(free_port)
"$TH" launch --nproc_per_node 2 --master_port "$PORT" -- train "${BASE[@]}" --output_dir "$WORK/two" "${ARGS[@]}" \
  --plugin_config ema.log_checksum=true \
  >"$WORK/two.log" 2>&1 || { cat "$WORK/two.log" >&2; fail "2 processes: trainhook launch failed"; }
sums=$(grep -oE "rank [01]: 12 EMA updates, weights checksum [0-9]+" "$WORK/two.log" | sort -u)
[[ $(wc -l <<<"$sums") -eq 2 ]] || { cat "$WORK/two.log" >&2; fail "2 processes: expected one EMA line per rank: $sums"; }
[[ $(awk '{print $NF}' <<<"$sums" | sort -u | wc -l) -eq 1 ]] || fail "2 processes: EMA weights differ between ranks: $sums"
echo "ok: 2 ranks, equal EMA weights ($(head -1 <<<"$sums" | awk '{print $NF}'))"

# 4. The final model holds the EMA weights. Checkpoints every step hold the
# training weights of that step; from the EMA state of checkpoint-1 the test
# applies ema = d * ema + (1 - d) * w for steps 2..6 in float32 arithmetic (each
# product and sum rounded to float32), as the plugin does for float32 parameters.
FINAL=(--max_steps 6 --logging_steps 2 --save_strategy steps --save_steps 1 --learning_rate 5e-2
  --callbacks ema --plugin_config ema.decay=0.7)
run "$WORK/final" "${FINAL[@]}"
run "$WORK/final_off" "${FINAL[@]}" --plugin_config ema.final_weights=false
run "$WORK/final_resumed" "${FINAL[@]}" --resume_from_checkpoint "$WORK/final/checkpoint-3"
SAFETENSORS_PY='
import struct, base64, array
def tensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        assert t["dtype"] == "F32", t
        b, e = t["data_offsets"]
        out[name] = array.array("f", data[b:e]).tolist()
    return out
def ema_state(ckpt):
    a = json.load(open(ckpt + "/trainer_state.json"))["stateful_callbacks"]["ema"]["attributes"]
    bits = dict(zip(a["names"], a["bits"]))
    return {k: array.array("f" if bits[k] == 32 else "d", base64.b64decode(v)).tolist() for k, v in a["weights"].items()}
def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]
def max_diff(a, b):
    assert a.keys() == b.keys(), (sorted(a), sorted(b))
    return max(abs(x - y) for k in a for x, y in zip(a[k], b[k]))
'
py "$SAFETENSORS_PY"'
work, d = sys.argv[1], 0.7
ema = ema_state(work + "/final/checkpoint-1")
for step in range(2, 7):
    w = tensors(f"{work}/final/checkpoint-{step}/model.safetensors")
    ema = {k: [f32(f32(e * f32(d)) + f32(x * f32(1 - d))) for e, x in zip(ema[k], w[k])] for k in ema}
expected = ema
final = tensors(work + "/final/model.safetensors")
last = tensors(work + "/final/checkpoint-6/model.safetensors")
off = tensors(work + "/final_off/model.safetensors")
assert max_diff(final, expected) <= 1e-6, f"final model is not the EMA weights: {max_diff(final, expected)}"
assert max_diff(final, last) > 1e-3, "final model equals the last training weights"
assert max_diff(off, last) == 0, "final_weights=false: the final model is not the training weights"
resumed = open(work + "/final_resumed/model.safetensors", "rb").read()
assert resumed == open(work + "/final/model.safetensors", "rb").read(), "resumed final model differs"
print("final model = EMA weights (max diff", max_diff(final, expected), "), training weights differ by", max_diff(final, last))
' "$WORK" || fail "final_weights: the final model does not hold the EMA weights"
echo "ok: final model holds the EMA weights, also after a resume"

# With --load_best_model_at_end the best checkpoint is the first (greater_is_better
# on a falling eval_loss): the final model holds the EMA weights saved with it.
run "$WORK/best" "${FINAL[@]}" --eval_strategy steps --eval_steps 2 --save_steps 2 --load_best_model_at_end true \
  --metric_for_best_model eval_loss --greater_is_better true
py "$SAFETENSORS_PY"'
work = sys.argv[1]
best = json.load(open(work + "/best/trainer_state.json"))["best_model_checkpoint"]
assert best.endswith("checkpoint-2"), best
ema = {k: [f32(x) for x in v] for k, v in ema_state(best).items()}
last = {k: [f32(x) for x in v] for k, v in ema_state(work + "/best/checkpoint-6").items()}
final = tensors(work + "/best/model.safetensors")
assert max_diff(final, ema) == 0, f"final model is not the best checkpoint EMA weights: {max_diff(final, ema)}"
assert max_diff(final, last) > 1e-3, "the best and the last EMA weights are the same"
print("load_best_model_at_end: final model = EMA weights of", best)
' "$WORK" || fail "load_best_model_at_end with ema: the final model does not hold the best checkpoint's EMA weights"
echo "ok: load_best_model_at_end uses the best checkpoint's EMA weights"
