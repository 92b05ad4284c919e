#!/usr/bin/env bash
# Integration test of the flyte plugin against a real S3-compatible server
# (moto_server on 127.0.0.1), read back with boto3:
#  1. three saves (one file above the multipart threshold) are in the bucket
#     with identical bytes, manifests and the deck;
#  2. a store that fails for 10 s mid-upload (a failing proxy in front of moto)
#     loses nothing;
#  3. a second attempt given the first as previous prefix skips the corrupted
#     newest checkpoint, resumes from the one before and carries it forward;
#  4. a run that fails (EXCEPTION) while its last checkpoint uploads: that
#     checkpoint is in the bucket, the half-written one after it is not, and
#     the end-of-run line says so.
# Usage: s3_moto_test.sh <flyte_driver> <flyte plugin library> <venv>
set -euo pipefail
DRIVER="$1"; PLUGIN="$2"; VENV="$3"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../lib/test_lib.sh"  # free_port
PY="$VENV/bin/python"
[[ -x "$VENV/bin/moto_server" ]] || { echo "moto_server not found in $VENV (run scripts/venv test)"; exit 1; }
WORK="$(mktemp -d)"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

wait_port() {
  for _ in $(seq 1 100); do
    "$PY" -c "import socket,sys; socket.create_connection(('127.0.0.1',$1),0.2)" 2>/dev/null && return 0
    sleep 0.2
  done
  echo "nothing listens on port $1"; return 1
}

MOTO_PORT="$(free_port)"
"$VENV/bin/moto_server" -H 127.0.0.1 -p "$MOTO_PORT" >"$WORK/moto.log" 2>&1 &
PIDS+=($!)
wait_port "$MOTO_PORT"

export AWS_ENDPOINT_URL="http://127.0.0.1:$MOTO_PORT" AWS_REGION=us-east-1
export AWS_ACCESS_KEY_ID=AKIATESTKEY AWS_SECRET_ACCESS_KEY=do-not-log-this-secret-123
unset AWS_SESSION_TOKEN TRAINHOOK_CHECKPOINT_DEST TRAINHOOK_PREV_CHECKPOINT || true
"$PY" "$HERE/s3_tool.py" make-bucket ckpts
BIG=$((12 * 1024 * 1024 + 4321))   # three parts of 5 MiB, 5 MiB and the rest
SMALL_PARTS='"multipart_threshold": 5242880, "part_size": 5242880'

echo "== 1. uploads to s3://ckpts/run1 =="
"$DRIVER" "$PLUGIN" "$WORK/out1" \
  "{\"checkpoint_path\": \"s3://ckpts/run1\", $SMALL_PARTS}" 1,2,3 "$BIG" 2>"$WORK/run1.log"
cat "$WORK/run1.log"
grep -q "uploaded to s3://ckpts/run1: checkpoint-1, checkpoint-2, checkpoint-3, log_history.html" "$WORK/run1.log" \
  || grep -q "uploaded to s3://ckpts/run1: checkpoint-1, checkpoint-3, log_history.html" "$WORK/run1.log"
"$PY" "$HERE/s3_tool.py" verify "$WORK/out1" ckpts run1 checkpoint-3 checkpoint-1
"$PY" "$HERE/s3_tool.py" has ckpts run1/log_history.html
if grep -q "checkpoint-2 (superseded" "$WORK/run1.log"; then
  echo "checkpoint-2 was superseded by checkpoint-3 (uploads fell behind): allowed"
else
  "$PY" "$HERE/s3_tool.py" verify "$WORK/out1" ckpts run1 checkpoint-2
fi
if grep -q "do-not-log-this-secret-123" "$WORK/run1.log"; then echo "the secret key was logged"; exit 1; fi

echo "== 2. the store fails for 10 s mid-upload =="
PROXY_PORT="$(free_port)"
"$PY" "$HERE/failing_proxy.py" "$PROXY_PORT" "$MOTO_PORT" 2 10 "$WORK/failed-count" &
PIDS+=($!)
wait_port "$PROXY_PORT"
AWS_ENDPOINT_URL="http://127.0.0.1:$PROXY_PORT" "$DRIVER" "$PLUGIN" "$WORK/out2" \
  "{\"checkpoint_path\": \"s3://ckpts/run2\", \"retry_seconds\": 90, \"deck\": false, $SMALL_PARTS}" 4 "$BIG" \
  2>"$WORK/run2.log"
cat "$WORK/run2.log"
[[ -s "$WORK/failed-count" ]] || { echo "the proxy never failed a request"; exit 1; }
echo "the proxy failed $(cat "$WORK/failed-count") requests"
grep -q "retrying in" "$WORK/run2.log"
grep -q "uploaded to s3://ckpts/run2: checkpoint-4" "$WORK/run2.log"
if grep -q "not uploaded" "$WORK/run2.log"; then exit 1; fi
"$PY" "$HERE/s3_tool.py" verify "$WORK/out2" ckpts run2 checkpoint-4

echo "== 3. resume from run1 with its newest checkpoint corrupted =="
"$PY" "$HERE/s3_tool.py" corrupt ckpts run1/checkpoint-3/optimizer/state.bin
"$DRIVER" "$PLUGIN" "$WORK/out3" \
  "{\"checkpoint_path\": \"s3://ckpts/run3\", \"prev_checkpoint\": \"s3://ckpts/run1\", \"deck\": false, $SMALL_PARTS}" \
  "" 0 >"$WORK/run3.out" 2>"$WORK/run3.log"
cat "$WORK/run3.out" "$WORK/run3.log"
grep -q "skipping checkpoint-3 from s3://ckpts/run1: 'optimizer/state.bin' does not match its SHA-256" "$WORK/run3.log"
EXPECTED=2
grep -q "checkpoint-2 (superseded" "$WORK/run1.log" && EXPECTED=1
grep -qx "RESUME $WORK/out3/checkpoint-$EXPECTED" "$WORK/run3.out"
cmp "$WORK/out1/checkpoint-$EXPECTED/big.bin" "$WORK/out3/checkpoint-$EXPECTED/big.bin"
"$PY" "$HERE/s3_tool.py" verify "$WORK/out1" ckpts run3 "checkpoint-$EXPECTED"
echo "== 4. the run fails while its last complete checkpoint uploads =="
"$DRIVER" "$PLUGIN" "$WORK/out4" \
  "{\"checkpoint_path\": \"s3://ckpts/run4\", \"deck\": false, $SMALL_PARTS}" 5,6 "$BIG" \
  --fail "CUDA error: device-side assert" 2>"$WORK/run4.log"
cat "$WORK/run4.log"
"$PY" "$HERE/s3_tool.py" verify "$WORK/out4" ckpts run4 checkpoint-6
[[ -d "$WORK/out4/checkpoint-7" ]] || { echo "the driver wrote no half checkpoint-7"; exit 1; }
if "$PY" "$HERE/s3_tool.py" has ckpts run4/checkpoint-7/model.pt 2>/dev/null; then
  echo "the half-written checkpoint-7 was uploaded"; exit 1
fi
grep -q "flyte run s3://ckpts/run4 FAILED (error at step 6: CUDA error: device-side assert): " "$WORK/run4.log"
grep -Eq "the last complete checkpoint checkpoint-6 was (uploading at the failure|uploaded before the failure|queued again at the failure) and is uploaded" "$WORK/run4.log"
echo "== flyte S3 integration: all passed =="
