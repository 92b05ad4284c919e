#!/usr/bin/env bash
# The progress plugin through the real CLI:
#  1. output to a pipe: plain progress lines and HF-style log lines, no '\r'
#     and no escape sequences anywhere;
#  2. under a pseudo-terminal (script(1)): the bar is redrawn in place with
#     '\r', each drawing within the terminal's width;
#  3. --disable_tqdm: the printer's log lines and no bars.
# usage: cli_progress.sh TRAINHOOK_BINARY WORK_DIR [extra trainhook args...]
set -euo pipefail
TH="$1"
WORK="$2"
shift 2
EXTRA=("$@")
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rm -rf "$WORK"
mkdir -p "$WORK"
"$HERE/../early_stopping/make_data.sh" "$WORK/data"

source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"

args() {  # out_dir
  printf '%q ' "$TH" train --train_file "$WORK/data/train.csv" --validation_file "$WORK/data/valid.csv" \
    --do_train --output_dir "$1" --per_device_train_batch_size 16 --per_device_eval_batch_size 8 \
    --max_steps 40 --logging_steps 10 --eval_strategy steps --eval_steps 20 --save_strategy no \
    --learning_rate 0.01 --seed 1 --hidden_size 16 "${EXTRA[@]}"
}

# 1. A pipe.
if ! eval "$(args "$WORK/pipe")" 2>&1 | cat > "$WORK/pipe.txt"; then
  cat "$WORK/pipe.txt" >&2
  fail "trainhook train failed"
fi
if LC_ALL=C grep -q $'[\r\x1b]' "$WORK/pipe.txt"; then
  cat -A "$WORK/pipe.txt" | head -40 >&2
  fail "output to a pipe has carriage returns or escape sequences"
fi
grep -q '^100% 40/40 \[' "$WORK/pipe.txt" || { cat "$WORK/pipe.txt" >&2; fail "no final progress line 100% 40/40"; }
awk "/^{/ && /'loss': / && /'epoch': /{found = 1} END {exit !found}" "$WORK/pipe.txt" || fail "no HF-style log line with loss and epoch"
grep -q "^{.*'eval_loss': " "$WORK/pipe.txt" || fail "no HF-style evaluation log line"
grep -q "^{.*total_flos" "$WORK/pipe.txt" && fail "total_flos should be dropped from printed logs"
echo "ok: pipe gives plain lines"

# 2. A pseudo-terminal, 72 columns wide.
COLUMNS=72 LINES=24 TERM=xterm script -qfec "stty cols 72 rows 24 2>/dev/null; $(args "$WORK/tty")" /dev/null \
  > "$WORK/tty.txt" < /dev/null || { cat "$WORK/tty.txt" >&2; fail "trainhook train under script failed"; }
grep -q $'\r' "$WORK/tty.txt" || fail "no carriage return under a terminal"
# Each drawing of the bar (text after a '\r' that starts with a percentage) fits in 71 columns.
draws=0
while IFS= read -r seg; do
  seg="${seg%%$'\e'*}"
  if [[ "$seg" =~ ^(\ *[0-9]+%\|) ]]; then
    draws=$((draws + 1))
    width="$(printf '%s' "$seg" | LC_ALL=C.UTF-8 wc -m)"
    ((width <= 71)) || fail "a bar is $width columns wide on a 72-column terminal: $seg"
  fi
done < <(tr '\r\n' '\n\n' < "$WORK/tty.txt")
((draws >= 2)) || { cat -A "$WORK/tty.txt" | head -40 >&2; fail "the bar was drawn $draws times, expected redraws"; }
grep -q $'\r100%|' "$WORK/tty.txt" || fail "the final bar (100%) was not drawn in place"
echo "ok: the bar redraws in place under a terminal ($draws drawings)"

# 3. disable_tqdm: the printer.
if ! eval "$(args "$WORK/printer") --disable_tqdm true" 2>&1 | cat > "$WORK/printer.txt"; then
  cat "$WORK/printer.txt" >&2
  fail "trainhook train --disable_tqdm failed"
fi
grep -q "^{.*'loss': " "$WORK/printer.txt" || { cat "$WORK/printer.txt" >&2; fail "the printer printed no logs"; }
grep -q '% 40/40' "$WORK/printer.txt" && fail "disable_tqdm still shows a progress bar"
echo "ok: disable_tqdm prints log lines and no bar"
echo "all progress CLI checks passed"
