#!/usr/bin/env bash
# ema through the CLI:
#  1. evaluation with the EMA weights differs from evaluation without, while
#     training itself is the same (train losses equal);
#  2. a run resumed from a mid-way checkpoint ends with EMA weights bit-identical
#     to the uninterrupted run's (compared in the last checkpoint's state);
#  3. with 2 processes the EMA weights of both ranks are equal (each rank logs a
#     checksum of its EMA weights at the end of training).
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

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$TH" launch --nproc_per_node 2 --master_port "$PORT" -- train "${BASE[@]}" --output_dir "$WORK/two" "${ARGS[@]}" \
  --plugin_config ema.log_checksum=true \
  >"$WORK/two.log" 2>&1 || { cat "$WORK/two.log" >&2; fail "2 processes: trainhook launch failed"; }
sums=$(grep -oE "rank [01]: 12 EMA updates, weights checksum [0-9]+" "$WORK/two.log" | sort -u)
[[ $(wc -l <<<"$sums") -eq 2 ]] || { cat "$WORK/two.log" >&2; fail "2 processes: expected one EMA line per rank: $sums"; }
[[ $(awk '{print $NF}' <<<"$sums" | sort -u | wc -l) -eq 1 ]] || fail "2 processes: EMA weights differ between ranks: $sums"
echo "ok: 2 ranks, equal EMA weights ($(head -1 <<<"$sums" | awk '{print $NF}'))"
