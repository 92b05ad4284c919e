#!/usr/bin/env bash
# Integration test: the CLI's input errors are clear and name the file/line/flag.
# usage: cli_errors.sh <trainhook binary> <work dir>
set -uo pipefail
cli="$1"; work="$2"
rm -rf "$work"; mkdir -p "$work"
printf '1,2,0\n3,4,1\n5,6,1\n7,8,0\n' > "$work/train.csv"
printf '1,2,0\n3,4\n' > "$work/ragged.csv"
printf '1,2,0\n3,4,7\n' > "$work/label.csv"
failures=0

expect() {  # expect <name> <exit code> <text in stderr> -- args...
  local name="$1" code="$2" text="$3"; shift 4
  "$cli" train "$@" --output_dir "$work/out-$name" >"$work/$name.out" 2>"$work/$name.err"
  local got=$?
  if [[ $got -ne $code ]]; then
    echo "FAIL $name: exit $got, expected $code"; cat "$work/$name.err"; failures=$((failures + 1)); return
  fi
  if ! grep -qF -- "$text" "$work/$name.err"; then
    echo "FAIL $name: stderr lacks '$text':"; cat "$work/$name.err"; failures=$((failures + 1)); return
  fi
  echo "ok $name"
}

expect missing 1 "$work/nope.csv: no such file" -- --do_train --train_file "$work/nope.csv" --max_steps 1
expect ragged 1 "$work/ragged.csv:2: expected 3 fields, found 2" -- --do_train --train_file "$work/ragged.csv"
expect label 1 "$work/label.csv:2: label 7 is out of range" -- --do_eval --train_file "$work/train.csv" \
  --validation_file "$work/label.csv"
expect model 1 "did you mean 'mlp'" -- --do_train --train_file "$work/train.csv" --model mlpp
expect nothing 2 "nothing to do" -- --train_file "$work/train.csv"
expect no_eval_data 2 "--do_eval needs --validation_file" -- --do_eval --train_file "$work/train.csv"
mkdir -p "$work/out-nonempty" && touch "$work/out-nonempty/file"
expect nonempty 2 "already exists and is not empty" -- --do_train --train_file "$work/train.csv"
exit $((failures > 0))
