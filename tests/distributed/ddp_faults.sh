#!/usr/bin/env bash
# Faults of a multi-process run end every rank with a clear error, never a
# hang: bad launcher environment, a rendezvous that cannot complete within
# --ddp_timeout, a rank killed mid-training (the survivor fails, naming itself
# and the cause), and under `trainhook launch` a killed rank stops the others,
# SIGTERM is forwarded, and the worst exit code is returned.
source "$(dirname "$0")/ddp_common.sh"
LONG=(--do_train --max_steps 1000000 --logging_steps 20 --save_strategy no --per_device_train_batch_size 16)

# expect_env_error <text> <env assignments...>
expect_env_error() {
  local text=$1
  shift
  local rc=0
  env "$@" "$CLI" train "${DATA[@]}" --do_train --max_steps 1 --output_dir "$WORK/env" >"$WORK/env.log" 2>&1 || rc=$?
  [[ $rc == 2 ]] || fail "$* exited $rc, expected 2: $(cat "$WORK/env.log")"
  grep -qF -- "$text" "$WORK/env.log" || fail "$*: no '$text' in: $(cat "$WORK/env.log")"
  echo "env $*: $(grep -F -- "$text" "$WORK/env.log" | head -1)"
}
expect_env_error "RANK=2 is not below WORLD_SIZE=2" RANK=2 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1
expect_env_error "MASTER_ADDR is not set" RANK=0 WORLD_SIZE=2
expect_env_error "WORLD_SIZE='two'" RANK=0 WORLD_SIZE=two
expect_env_error "RANK is set but WORLD_SIZE is not" RANK=1
expect_env_error "SLURM_PROCID=4 is not below SLURM_NTASKS=4" SLURM_PROCID=4 SLURM_NTASKS=4 MASTER_ADDR=127.0.0.1
rc=0
"$CLI" train "${DATA[@]}" --do_train --max_steps 1 --output_dir "$WORK/nccl" --ddp_backend mpi >"$WORK/nccl.log" 2>&1 || rc=$?
[[ $rc == 2 ]] && grep -q "ddp_backend" "$WORK/nccl.log" || fail "--ddp_backend mpi not refused: $(cat "$WORK/nccl.log")"

# NCCL needs a CUDA build: a clear error before any rendezvous.
rc=0
timeout 120 "$CLI" launch --nproc_per_node 2 -- train "${DATA[@]}" --do_train --max_steps 1 --output_dir "$WORK/nccl2" \
  --ddp_backend nccl >"$WORK/nccl2.log" 2>&1 || rc=$?
[[ $rc != 0 && $rc != 124 ]] || fail "--ddp_backend nccl on the CPU build: exit $rc"
# (the first rank to fail makes the launch stop the other, which may not print)
grep -q -- "--ddp_backend nccl: this trainhook was built without NCCL" "$WORK/nccl2.log" ||
  fail "--ddp_backend nccl: no clear error: $(tail -5 "$WORK/nccl2.log")"
echo "--ddp_backend nccl refused (exit $rc)"

# A rendezvous that cannot complete: rank 0 alone, then rank 1 alone (no store).
for r in 0 1; do
  port=$(free_port)
  rc=0
  RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 120 \
    "$CLI" train "${DATA[@]}" "${LONG[@]}" --output_dir "$WORK/alone$r" --ddp_timeout 3 >"$WORK/alone$r.log" 2>&1 || rc=$?
  [[ $rc != 0 && $rc != 124 ]] || fail "rank $r alone: exit $rc (124 = hung): $(tail -5 "$WORK/alone$r.log")"
  grep -q "rank $r of 2.*rendezvous.*127.0.0.1:$port.*ddp_timeout 3s" "$WORK/alone$r.log" ||
    fail "rank $r alone: no clear rendezvous error: $(tail -5 "$WORK/alone$r.log")"
  echo "rank $r alone exits $rc: $(grep -o "rank $r of 2.*ddp_timeout 3s" "$WORK/alone$r.log" | head -1)"
done

# wait_for_log <file> <pattern> <pid>: until the pattern shows (bounded).
wait_for_log() {
  for _ in $(seq 600); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    kill -0 "$3" 2>/dev/null || fail "process $3 ended early: $(tail -20 "$1")"
    sleep 0.1
  done
  fail "no '$2' in $1 after 60 s"
}

# A rank killed mid-training: the survivor fails with its rank and the cause.
port=$(free_port)
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    "$CLI" train "${DATA[@]}" "${LONG[@]}" --output_dir "$WORK/kill" --ddp_timeout 30 >"$WORK/kill$r.log" 2>&1 &
  pids[r]=$!
done
wait_for_log "$WORK/kill0.log" "'loss'" "${pids[0]}"
kill -9 "${pids[1]}"
start=$SECONDS
rc=0
wait "${pids[0]}" || rc=$?
[[ $rc != 0 ]] || fail "rank 0 exited 0 after rank 1 was killed"
grep -q "rank 0 of 2: all_reduce (.*) failed: .* -- rank 1 (the only other rank) has most likely exited" \
  "$WORK/kill0.log" || fail "rank 0's error is unclear: $(tail -5 "$WORK/kill0.log")"
echo "rank 1 killed: rank 0 exited $rc after $((SECONDS - start)) s: $(grep -o 'rank 0 of 2: [^-]*' "$WORK/kill0.log" | head -1)"

# A rank that hangs (stopped, sockets open): the other fails after ddp_timeout.
port=$(free_port)
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    "$CLI" train "${DATA[@]}" "${LONG[@]}" --output_dir "$WORK/hang" --ddp_timeout 5 >"$WORK/hang$r.log" 2>&1 &
  pids[r]=$!
done
wait_for_log "$WORK/hang0.log" "'loss'" "${pids[0]}"
kill -STOP "${pids[1]}"
start=$SECONDS
rc=0
timeout 120 tail --pid="${pids[0]}" -f /dev/null || rc=$?
kill -KILL "${pids[1]}" 2>/dev/null || true
[[ $rc == 0 ]] || fail "rank 0 still runs 120 s after rank 1 hung (ddp_timeout 5)"
rc=0
wait "${pids[0]}" || rc=$?
[[ $rc != 0 ]] || fail "rank 0 exited 0 although rank 1 hung"
grep -q "rank 0 of 2: .* failed: .*ddp_timeout is 5s" "$WORK/hang0.log" || fail "rank 0's error is unclear: $(tail -5 "$WORK/hang0.log")"
echo "rank 1 hung: rank 0 exited $rc after $((SECONDS - start)) s: $(grep -o 'rank 0 of 2: .\{0,160\}' "$WORK/hang0.log" | head -1)"

# trainhook launch: killing one rank stops the other and the launch fails, naming the rank.
"$CLI" launch --nproc_per_node 2 -- train "${DATA[@]}" "${LONG[@]}" --output_dir "$WORK/launch" --ddp_timeout 30 \
  >"$WORK/launch.log" 2>&1 &
launcher=$!
wait_for_log "$WORK/launch.log" "'loss'" "$launcher"
children=($(pgrep -P "$launcher" | sort -n))
[[ ${#children[@]} == 2 ]] || fail "expected 2 processes under trainhook launch, found ${children[*]}"
kill -9 "${children[1]}"
rc=0
wait "$launcher" || rc=$?
[[ $rc != 0 ]] || fail "trainhook launch exited 0 after a rank was killed"
grep -q "rank 1 (pid ${children[1]}) was killed by signal 9" "$WORK/launch.log" ||
  fail "trainhook launch does not name the killed rank: $(tail -5 "$WORK/launch.log")"
kill -0 "${children[0]}" 2>/dev/null && fail "rank 0 still runs after the launch ended"
echo "launch: a killed rank makes the launch exit $rc: $(grep 'rank 1 (pid' "$WORK/launch.log")"

# trainhook launch forwards SIGTERM; the exit code is 128+15.
"$CLI" launch --nproc_per_node 2 -- train "${DATA[@]}" "${LONG[@]}" --output_dir "$WORK/term" >"$WORK/term.log" 2>&1 &
launcher=$!
wait_for_log "$WORK/term.log" "'loss'" "$launcher"
children=($(pgrep -P "$launcher"))
kill -TERM "$launcher"
rc=0
wait "$launcher" || rc=$?
[[ $rc == 143 ]] || fail "trainhook launch after SIGTERM exited $rc, expected 143: $(tail -5 "$WORK/term.log")"
for c in "${children[@]}"; do kill -0 "$c" 2>/dev/null && fail "process $c survived SIGTERM"; done
grep -q "forwarding it to every process" "$WORK/term.log" || fail "no forwarding message"
# Every rank finished its step and stopped at the same one, and that
# step's checkpoint holds every rank's RNG state.
steps=($(sed -n 's/.*stopped by SIGTERM at step \([0-9]*\):.*/\1/p' "$WORK/term.log" | sort -u))
n_stopped="$(grep -c "stopped by SIGTERM at step" "$WORK/term.log" || true)"
[[ $n_stopped == 2 && ${#steps[@]} == 1 ]] ||
  fail "expected both ranks to report one stop step, got $n_stopped report(s) at step(s) ${steps[*]}: $(tail -8 "$WORK/term.log")"
ck="$WORK/term/checkpoint-${steps[0]}"
[[ -f "$ck/trainer_state.json" && -f "$ck/rng_state_0.pth" && -f "$ck/rng_state_1.pth" ]] ||
  fail "no complete checkpoint of step ${steps[0]} with both ranks' RNG states: $(ls "$ck" 2>&1)"
echo "launch: SIGTERM forwarded, exit $rc; both ranks stopped at step ${steps[0]}, $ck saved"
echo "PASS"
