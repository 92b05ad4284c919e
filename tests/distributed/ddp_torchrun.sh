#!/usr/bin/env bash
# `torchrun --standalone --no-python --nproc_per_node 2 bin/trainhook train ...`
# (PyPI torch's launcher) gives the weights (1e-6) and eval accuracy of 1
# process with the combined batch. Built on LibTorch 2.x (scripts/test-torch2)
# the ranks join torchrun's own store on MASTER_PORT; built on 1.13, rank 0
# serves trainhook's store on a port the kernel chose and publishes it in
# torchrun's store. Then torchrun as on two machines: two agents on this host
# (--nnodes 2 --rdzv_backend c10d --max_restarts 2), one worker SIGKILLed after
# a checkpoint (the run_faults plugin's kill_worker, at an exact step): the
# restarted job resumes and its final weights are byte-identical to an
# uninterrupted run, 5 times out of 5. torchrun comes from the 2.x build's
# venv (build/torch-pypi), which scripts/install-deps --torch pypi-cuda completes
# once with the wheel's dependencies (~5 GB, ~3 min here) when torch cannot be
# imported there; the CUDA leg of scripts/test-torch2 uses the same folder.
# Skipped (exit 77) with the reason when it cannot be installed.
# usage: ddp_torchrun.sh <bin/trainhook> <ddp_weights_diff> <digits.csv> <work dir> <folder of run_faults plugin>
source "$(dirname "$0")/ddp_common.sh"
FAULTS=${5:?the folder of the run_faults test plugin}
VENV=${TRAINHOOK_TORCHRUN_VENV:?the test sets TRAINHOOK_TORCHRUN_VENV}
(
  flock 9
  if [[ ! -x $VENV/bin/torchrun ]] || ! "$VENV/bin/python" -c "import torch.distributed.run" 2>/dev/null; then
    echo "completing $VENV with torch's dependencies (for torchrun; once)"
    start=$SECONDS
    if ! TRAINHOOK_TORCH_PYPI_DIR="$VENV" timeout 1200 \
      "${TRAINHOOK_SOURCE_DIR:?the test sets TRAINHOOK_SOURCE_DIR}/scripts/install-deps" --torch pypi-cuda \
      >"$WORK/install.log" 2>&1; then
      echo "SKIP: torch (for torchrun) cannot be installed from PyPI: $(tail -3 "$WORK/install.log")"
      exit 77
    fi
    echo "installed in $((SECONDS - start)) s"
  fi
) 9>"$(dirname "$VENV")/.torch-pypi.lock" || exit $?

RUN=(--do_train --do_eval --max_steps 30 --logging_steps 10 --save_steps 15 --ddp_timeout 120)
"$CLI" train "${DATA[@]}" "${RUN[@]}" --output_dir "$WORK/one" --per_device_train_batch_size 32 \
  >"$WORK/one.log" 2>&1 || fail "1-process run failed: $(tail -20 "$WORK/one.log")"
timeout 240 "$VENV/bin/torchrun" --standalone --no-python --nproc_per_node 2 "$CLI" train "${DATA[@]}" "${RUN[@]}" \
  --output_dir "$WORK/two" --per_device_train_batch_size 16 >"$WORK/two.log" 2>&1 ||
  fail "torchrun run failed: $(grep -v '^\[' "$WORK/two.log" | tail -20)"
same_weights "$WORK/one/model.pt" "$WORK/two/model.pt" 1e-6 "1 process x32 vs torchrun 2 ranks x16"
# Which store the ranks met in: torchrun's own with LibTorch 2.x, trainhook's beside it with 1.13.
if [[ ${TRAINHOOK_TORCH_VERSION%%.*} -ge 2 ]]; then want="rendezvous in torchrun's store"
else want="rendezvous in trainhook's store (its port published in torchrun's store)"; fi
grep -qF "$want" "$WORK/two.log" || fail "LibTorch $TRAINHOOK_TORCH_VERSION: no '$want' in the torchrun log"
if [[ ${TRAINHOOK_TORCH_VERSION%%.*} -lt 2 ]]; then
  # No torchrun store where torchrun's variables say: the error names the address and what was expected.
  port=$(free_port) rc=0
  RANK=1 WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    TORCHELASTIC_USE_AGENT_STORE=True timeout 120 "$CLI" train "${DATA[@]}" "${RUN[@]}" --ddp_timeout 5 \
    --output_dir "$WORK/no_store" >"$WORK/no_store.log" 2>&1 || rc=$?
  [[ $rc != 0 && $rc != 124 ]] || fail "no agent store: exit $rc"
  grep -qF "cannot connect to 127.0.0.1:$port (torchrun's store, MASTER_ADDR:MASTER_PORT)" "$WORK/no_store.log" ||
    fail "no agent store: unclear error: $(tail -3 "$WORK/no_store.log")"
  echo "no agent store: $(grep -o 'rank 1 of 2: .*' "$WORK/no_store.log" | head -1)"
  # A store as a torchrun agent serves it: `python` runs a TCPStore server on a
  # free port ($store_port), with `setup` (Python on `s`) run first; stopped by the test.
  # agent_store <name> <python> <setup>
  agent_store() {
    "$2" -c "
import signal, datetime, torch.distributed as d
s = d.TCPStore('127.0.0.1', 0, is_master=True, wait_for_workers=False, timeout=datetime.timedelta(seconds=120))
$3
print(s.port, flush=True)
signal.pause()" >"$WORK/$1.port" 2>"$WORK/$1.store.log" &
    store_pid=$!
    trap 'kill $store_pid 2>/dev/null || true' EXIT
    wait_for 60 "the $1 TCPStore" test -s "$WORK/$1.port"
    store_port=$(cat "$WORK/$1.port")
  }
  # two_ranks <name> <restart count of rank 0> <of rank 1> [text rank 1 prints before rank 0 starts]:
  # trains on $store_port as torchrun's workers would.
  two_ranks() {
    local name=$1 r pids=() count
    for r in 1 0; do
      count=$2
      ((r == 1)) && count=$3
      RANK=$r WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$store_port \
        TORCHELASTIC_USE_AGENT_STORE=True TORCHELASTIC_RESTART_COUNT=$count timeout 240 \
        "$CLI" train "${DATA[@]}" "${RUN[@]}" --ddp_timeout 60 --output_dir "$WORK/$name" \
        --per_device_train_batch_size 16 >"$WORK/$name.$r.log" 2>&1 &
      pids[r]=$!
      if ((r == 1)) && [[ -n ${4:-} ]]; then
        wait_for_text "$WORK/$name.1.log" "$4" "${pids[1]}" 60 || fail "$name: rank 1 never said '$4': $(tail -3 "$WORK/$name.1.log")"
      fi
    done
    for r in 0 1; do wait "${pids[$r]}" || fail "$name: rank $r failed: $(tail -5 "$WORK/$name.$r.log")"; done
    kill "$store_pid" 2>/dev/null || true
    trap - EXIT
    same_weights "$WORK/two/model.pt" "$WORK/$name/model.pt" 0 "torchrun 2.x vs $name"
  }
  # Debian's torchrun 1.13 (--rdzv_backend static) serves a 1.13 store on MASTER_PORT
  # (its own launcher does not start under Python 3.11 here, so its store is
  # started as it starts it): the 2.x greeting is refused, and the ranks join it
  # with their own 1.13 client.
  if /usr/bin/python3 -c 'import torch.distributed' 2>/dev/null; then
    agent_store store13 /usr/bin/python3 ""
    two_ranks store13 0 0
    grep -qF "rendezvous in torchrun's store (a LibTorch 1.x one, joined as it is)" "$WORK/store13.0.log" ||
      fail "1.13 agent store: not joined as such: $(grep 'data parallel' "$WORK/store13.0.log")"
  fi
  # torchrun 2.x's agents may count a restart differently (one restarts its
  # workers for another's rejoin without counting), and the store still holds
  # the address an earlier attempt's rank 0 published: rank 1 (started first,
  # restart 1) finds that address refused and waits for rank 0's (restart 0).
  agent_store stale "$VENV/bin/python" "s.set('trainhook/store_address', '127.0.0.1:$(free_port)')"
  two_ranks stale 0 1 "which refuses connections"
fi
# torchrun restarting the finished job (the same command again): no step, no
# new checkpoint, the final weights kept byte for byte.
before=$(cd "$WORK/two" && ls -d checkpoint-* && sha256sum model.pt model.safetensors trainer_state.json)
timeout 240 "$VENV/bin/torchrun" --standalone --no-python --nproc_per_node 2 "$CLI" train "${DATA[@]}" "${RUN[@]}" \
  --output_dir "$WORK/two" --per_device_train_batch_size 16 >"$WORK/again.log" 2>&1 ||
  fail "torchrun restart of the finished job failed: $(grep -v '^\[' "$WORK/again.log" | tail -20)"
grep -q "the run was already complete" "$WORK/again.log" || fail "the restart did not say the run was complete"
after=$(cd "$WORK/two" && ls -d checkpoint-* && sha256sum model.pt model.safetensors trainer_state.json)
[[ $before == "$after" ]] || fail "the restart changed the finished job's files: $(diff <(echo "$before") <(echo "$after"))"
echo "torchrun restart of the finished job: complete, nothing trained, files unchanged"
a1=$(json_get "$WORK/one/eval_results.json" 'j["eval_accuracy"]')
a2=$(json_get "$WORK/two/eval_results.json" 'j["eval_accuracy"]')
[[ $a1 == "$a2" ]] || fail "eval_accuracy differs: $a1 vs $a2"
echo "torchrun: eval_accuracy $a2 on both; $("$VENV/bin/python" -c 'import torch; print("torch", torch.__version__)' 2>/dev/null)"

# Two agents on this host, as two machines would run them; torchrun's c10d
# rendezvous on a free port of 127.0.0.1 (one agent serves it, the other joins).
# two_agents <name> [VAR=value ...]: both agents' workers get the variables.
ELASTIC=(--do_train --max_steps 8 --save_steps 4 --logging_steps 4 --ddp_timeout 60 --per_device_train_batch_size 16
  --plugin_dir "$FAULTS" --callbacks kill_worker)
two_agents() {
  local name=$1 port pids=() rc=0 n
  shift
  port=$(free_port)
  for n in 0 1; do
    env "$@" timeout 240 "$VENV/bin/torchrun" --nnodes 2 --nproc_per_node 1 --rdzv_backend c10d \
      --rdzv_endpoint "127.0.0.1:$port" --rdzv_id "$name" --max_restarts 2 --no-python \
      "$CLI" train "${DATA[@]}" "${ELASTIC[@]}" --output_dir "$WORK/$name" >"$WORK/$name.agent$n.log" 2>&1 &
    pids+=($!)
  done
  for n in 0 1; do wait "${pids[$n]}" || rc=$?; done
  ((rc == 0)) || fail "$name: an agent exited $rc: $(grep -hv '^\[' "$WORK/$name".agent*.log | grep -v Warning | tail -20)"
  grep -qF "$want" "$WORK/$name".agent*.log || fail "$name: no '$want' in the agents' logs"
}
weights() { sha256sum <"$WORK/$1/model.safetensors" | cut -d' ' -f1; }
two_agents elastic_ref
ref=$(weights elastic_ref)
for i in 1 2 3 4 5; do
  two_agents "elastic_kill$i" TRAINHOOK_TEST_KILL_STEP=5 TRAINHOOK_TEST_KILL_RANK=1
  grep -qF "kill_worker: SIGKILL to rank 1 at step 5" "$WORK/elastic_kill$i".agent*.log ||
    fail "kill $i: the worker was not killed"
  grep -qE "torchrun: run id elastic_kill$i, restart [12] of at most 2" "$WORK/elastic_kill$i".agent*.log ||
    fail "kill $i: torchrun did not restart the workers"
  grep -qF "resuming training at $WORK/elastic_kill$i/checkpoint-4" "$WORK/elastic_kill$i".agent*.log ||
    fail "kill $i: the restart did not resume from checkpoint-4"
  [[ $(weights "elastic_kill$i") == "$ref" ]] || fail "kill $i: model.safetensors differs from the uninterrupted run's"
  echo "kill $i: worker killed after checkpoint-4, restarted, resumed; final weights byte-identical"
done
echo "two torchrun agents: 5/5 kills bit-identical to the uninterrupted run"
echo "PASS"
