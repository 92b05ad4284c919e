# Sourced by the reliability CLI tests that run small trainings against a test
# plugin folder (end_of_run.sh, plugin_exit.sh, output_dir_lock.sh): their
# arguments <trainhook binary> <work dir> [<plugin folder>], a clean work dir,
# fail() counting failed cases (the caller reports $failures at its end), and
# $WORK/train.csv, CASE_ROWS rows (default 32) of two features and a class
# (seed CASE_SEED, default 5); final_files.
set -uo pipefail
CLI="$1"
WORK="$2"
PLUGINS="${3:-}"
rm -rf "$WORK"
mkdir -p "$WORK"
KEEP_GOING=1
source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"

python3 - "$WORK" "${CASE_ROWS:-32}" "${CASE_SEED:-5}" <<'PY'
import random, sys
r = random.Random(int(sys.argv[3]))
with open(f"{sys.argv[1]}/train.csv", "w") as f:
    for _ in range(int(sys.argv[2])):
        a, b = r.uniform(-1, 1), r.uniform(-1, 1)
        f.write(f"{a:.4f},{b:.4f},{int(a + b > 0)}\n")
PY

# final_files NAME OUTPUT_DIR: the final files of a run are there and complete
# (the model, the train results with train_loss, the trainer state).
final_files() {
  local name="$1" out="$2"
  local f
  for f in model.pt model.safetensors train_results.json all_results.json trainer_state.json; do
    [[ -s $out/$f ]] || {
      fail "$name: $out/$f missing"
      return 1
    }
  done
  grep -q '"train_loss"' "$out/train_results.json" || {
    fail "$name: train_results.json has no train_loss"
    return 1
  }
}
