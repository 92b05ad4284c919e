#!/usr/bin/env bash
# --bf16, --fp16 and --use_cpu through the CLI:
#  1. --bf16 on the CPU trains the main job's CNN on the digits to >= 95 % eval
#     accuracy under bfloat16 autocast, and every tensor it saves (each
#     checkpoint's and the final model.safetensors) is float32; the run says so;
#  2. its losses differ from the float32 run's (autocast really ran);
#  3. --fp16 without a CUDA GPU, --fp16 --use_cpu and --bf16 --fp16 are refused before training with exit 2,
#     naming the flags; --no_cuda points to --use_cpu;
#  4. --use_cpu trains on the CPU and training_args.json records the three flags.
# usage: cli_mixed_precision.sh <trainhook binary> <digits.csv> <work dir>
set -euo pipefail
cli="$1" data="$2" work="$3"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"
[[ -s $data ]] || fail "$data is missing; scripts/install-deps unpacks it"
rm -rf "$work"
mkdir -p "$work"
export OMP_NUM_THREADS=1
JOB=(--train_file "$data" --validation_split_percentage 20 --feature_scale 0.0625 --model cnn --hidden_size 128
  --do_train --do_eval --num_train_epochs 15 --per_device_train_batch_size 32 --learning_rate 3e-3
  --warmup_ratio 0.05 --eval_strategy epoch --save_strategy epoch --save_total_limit 2 --logging_steps 100
  --load_best_model_at_end --metric_for_best_model accuracy --disable_tqdm)
run() {  # name args...
  local name="$1"
  shift
  "$cli" train "${JOB[@]}" --output_dir "$work/$name" "$@" >"$work/$name.log" 2>&1 ||
    { tail -20 "$work/$name.log" >&2; fail "trainhook train $* exited with an error"; }
}

# 1-2.
run bf16 --bf16
grep -qE "training on (the CPU|cuda:0) with bfloat16 autocast \(--bf16\)" "$work/bf16.log" ||
  fail "the --bf16 run does not say it trains with bfloat16 autocast: $(head -3 "$work/bf16.log")"
run f32
python3 - "$work" <<'PY' || fail "--bf16 on the CPU"
import glob, json, struct, sys
work = sys.argv[1]
acc = json.load(open(f"{work}/bf16/eval_results.json"))["eval_accuracy"]
assert acc >= 0.95, f"--bf16 eval_accuracy {acc:.4f} < 0.95"
files = [f"{work}/bf16/model.safetensors"] + glob.glob(f"{work}/bf16/checkpoint-*/model.safetensors")
assert len(files) >= 2, files
for path in files:
    with open(path, "rb") as f:
        header = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
    dtypes = {t["dtype"] for name, t in header.items() if name != "__metadata__"}
    assert dtypes == {"F32"}, f"{path} holds {dtypes}, not only float32"
def losses(name):
    return [r["eval_loss"] for r in json.load(open(f"{work}/{name}/trainer_state.json"))["log_history"] if "eval_loss" in r]
assert losses("bf16") != losses("f32"), "the --bf16 run's eval losses equal the float32 run's: no autocast"
print(f"--bf16: eval_accuracy {acc:.4f}, {len(files)} safetensors files all F32")
PY

# 3. Requests this machine (no CUDA GPU here) or the flags cannot serve.
refused() {  # expected-text args...
  local want="$1" rc=0
  shift
  "$cli" train "${JOB[@]}" --output_dir "$work/refused" "$@" >"$work/refused.log" 2>&1 || rc=$?
  [[ $rc == 2 ]] || fail "$* exited $rc, expected 2: $(tail -3 "$work/refused.log")"
  grep -qF -- "$want" "$work/refused.log" || fail "$*: no '$want' in: $(tail -3 "$work/refused.log")"
  [[ ! -e $work/refused/model.safetensors ]] || fail "$*: trained anyway"
}
if ! grep -qiF "cuda" <("$cli" train --help 2>&1 | grep -F -- "--use_cpu"); then
  fail "--help does not explain --use_cpu"
fi
if grep -qF "training on the CPU" "$work/bf16.log"; then  # no CUDA GPU for this LibTorch here
  refused "--fp16 needs a CUDA GPU (this LibTorch or machine has none); on the CPU use --bf16" --fp16
else
  echo "skipped: --fp16 on CUDA (a GPU is present: test_device_placement trains with it)"
fi
refused "--fp16 needs a CUDA GPU and --use_cpu keeps training on the CPU; on the CPU use --bf16" --fp16 --use_cpu
refused "--bf16 and --fp16: mixed precision takes one of them, not both" --bf16 --fp16
refused "HF replaced no_cuda by use_cpu: give --use_cpu" --no_cuda
echo "ok: --fp16, --bf16 --fp16 and --no_cuda refused with their messages"

# 4.
run cpu --use_cpu --num_train_epochs 1 --load_best_model_at_end false --save_strategy no
grep -qF "training on the CPU" "$work/cpu.log" || fail "--use_cpu does not say it trains on the CPU"
python3 - "$work/cpu/training_args.json" <<'PY' || fail "training_args.json lacks the device flags"
import json, sys
a = json.load(open(sys.argv[1]))
assert a["use_cpu"] is True and a["bf16"] is False and a["fp16"] is False, {k: a.get(k) for k in ("use_cpu", "bf16", "fp16")}
PY
echo "PASS"
