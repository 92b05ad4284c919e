# Shared by the plugin-host CLI scripts (isolation.sh, auto_isolation.sh), sourced
# after tests/lib/test_lib.sh with CLI, WORK and the BASE array of train
# arguments set.

# run NAME ARGS...: the run's exit code in $rc, its output in $WORK/NAME.out,
# the trainer's pid in $WORK/NAME.pid (environment as the caller sets it).
run() {
  local name="$1"
  shift
  timeout 300 bash -c 'echo $$ >"$0"; exec "$@"' "$WORK/$name.pid" "$CLI" "${BASE[@]}" \
    --output_dir "$WORK/$name" "$@" >"$WORK/$name.out" 2>&1
  rc=$?
  ((rc != 124)) || fail "$name: the run did not end within 300 s"
}

# has_line NAME TEXT: a line of the run's output holds TEXT.
has_line() {
  grep -qF -- "$2" "$WORK/$1.out" || {
    fail "$1: no line '$2' in the output:"
    tail -8 "$WORK/$1.out"
    return 1
  }
}
