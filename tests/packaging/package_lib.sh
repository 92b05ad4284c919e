# What the packaging tests share. Source after tests/lib/test_lib.sh.

# A run of a packaged trainer sees nothing of the build tree or the caller:
# no plugin path, helper folder, lock or library from the environment, and a
# registry cache of its own, so the scan by the packaged scanner really happens.
clean_env() {
  env -u TRAINHOOK_PLUGIN_PATH -u TRAINHOOK_LIBEXEC_DIR -u TRAINHOOK_PLUGIN_LOCK -u TRAINHOOK_LIBRARY \
    -u LD_LIBRARY_PATH TRAINHOOK_REGISTRY_CACHE="$TMP/registry-cache.json" "$@"
}

# train_digits <trainhook> <output dir> [flags...]: the README's main command on
# the digits data, a short run; passes when it exits 0 and writes the model,
# trainer_state.json and jsonl's log_history with evaluations in it.
train_digits() {
  local th="$1" out="$2"
  shift 2
  clean_env "$th" train --train_file "$DIGITS" --label_column last --model mlp --validation_split_percentage 10 \
    --output_dir "$out" --do_train --do_eval --num_train_epochs 2 --eval_strategy epoch \
    --report_to jsonl --callbacks early_stopping --metric_for_best_model loss \
    --plugin_config early_stopping.early_stopping_patience=3 "$@" >"$out.log" 2>&1 ||
    { tail -30 "$out.log"; fail "training with $th"; }
  [[ -f "$out/trainer_state.json" ]] || fail "no trainer_state.json in $out"
  grep -q '"eval_loss"' "$out/log_history.jsonl" || fail "jsonl wrote no evaluation to $out/log_history.jsonl"
  grep -i 'accuracy' "$out.log" | tail -1 || true
}

# plugins_listed <listing> <folder>: our plugins are listed from <folder>.
plugins_listed() {
  local listing="$1" dir="$2" name
  for name in early_stopping jsonl tensorboard mlflow nan_guard; do
    grep -qF "$dir/libtrainhook_$name.so" <<<"$listing" || fail "trainhook plugins does not list $dir/libtrainhook_$name.so"
  done
}
