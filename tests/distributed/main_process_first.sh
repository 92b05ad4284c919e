#!/usr/bin/env bash
# main_process_first with 2 real ranks on 127.0.0.1: the second rank's block
# starts after the first's ends (local and global), and a failure in rank 0's
# block ends both ranks with a clear message, well before the 60 s timeout.
# usage: main_process_first.sh <main_process_first_rank> <work dir>
set -uo pipefail
BIN=${1:?main_process_first_rank}
WORK=${2:?work dir}
rm -rf "$WORK"; mkdir -p "$WORK"
export OMP_NUM_THREADS=1
KEEP_GOING=1
source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"

run_pair() {  # run_pair <tag> local|global ok|fail -> exit codes in $WORK/<tag>.rc<rank>
  local tag=$1 port
  port=$(free_port)
  local pids=()
  for rank in 0 1; do
    RANK=$rank LOCAL_RANK=$rank WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
      timeout 90 "$BIN" "$WORK/$tag.log" "$2" "$3" >"$WORK/$tag.out$rank" 2>"$WORK/$tag.err$rank" &
    pids+=($!)
  done
  for rank in 0 1; do
    wait "${pids[$rank]}"
    echo $? >"$WORK/$tag.rc$rank"
  done
}

stamp() { awk -v r="$2" -v w="$3" '$1 == r && $2 == w { print $3 }' "$WORK/$1.log"; }

for mode in local global; do
  start=$(date +%s)
  run_pair "$mode" "$mode" ok
  for rank in 0 1; do
    [[ $(cat "$WORK/$mode.rc$rank") == 0 ]] || fail "$mode: rank $rank exited $(cat "$WORK/$mode.rc$rank"): $(cat "$WORK/$mode.err$rank")"
  done
  end0=$(stamp "$mode" 0 end); start1=$(stamp "$mode" 1 start)
  if [[ -z $end0 || -z $start1 ]]; then
    fail "$mode: missing stamps: $(cat "$WORK/$mode.log" 2>/dev/null)"
  elif ((start1 < end0)); then
    fail "$mode: rank 1 started its block ($start1) before rank 0 ended its block ($end0)"
  else
    echo "ok $mode: rank 1 started $(((start1 - end0) / 1000000)) ms after rank 0's block ended"
  fi
done

start=$(date +%s)
run_pair failing local fail
took=$(($(date +%s) - start))
rc0=$(cat "$WORK/failing.rc0"); rc1=$(cat "$WORK/failing.rc1")
[[ $rc0 != 0 && $rc0 != 124 ]] || fail "failing: rank 0 exited $rc0"
[[ $rc1 != 0 && $rc1 != 124 ]] || fail "failing: rank 1 exited $rc1 (124 = hung until the timeout)"
grep -q "rank 0 could not prepare the test data" "$WORK/failing.err0" || fail "failing: rank 0's error: $(cat "$WORK/failing.err0")"
grep -q "main_process_first(test data): the main process (local rank 0) failed in its block, so rank 1 does not run it" \
  "$WORK/failing.err1" || fail "failing: rank 1's message: $(cat "$WORK/failing.err1")"
grep -q "1 start" "$WORK/failing.log" && fail "failing: rank 1 ran the block after rank 0 failed"
grep -q "terminate called" "$WORK"/failing.err* && fail "failing: terminate called"
((took < 60)) || fail "failing: took ${took}s (a hang until the timeout?)"
[[ $failures == 0 ]] && echo "ok failing: both ranks ended in ${took}s with clear messages"
exit $((failures > 0))
