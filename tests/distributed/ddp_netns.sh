#!/usr/bin/env bash
# The 2-rank run across two "hosts": two network namespaces made here, joined
# by a veth pair, with addresses 10.200.0.1/24 and 10.200.0.2/24 that exist only
# inside them; `trainhook launch --nnodes 2 --node_rank N` runs in each; rank 0
# serves the rendezvous on 10.200.0.1 and Gloo listens on the address that
# routes to it. The weights equal (1e-6) the 1-process run
# with the combined batch. Skipped (exit 77) where namespaces cannot be made
# (not root, no CAP_NET_ADMIN, no ip tool). Both namespaces are always deleted.
source "$(dirname "$0")/ddp_common.sh"
RUN=(--do_train --do_eval --max_steps 20 --logging_steps 10 --save_strategy no --ddp_timeout 60)
ns_a=th_ddp_a_$$
ns_b=th_ddp_b_$$
veth_a=thd$$a
veth_b=thd$$b
cleanup() {
  ip netns del "$ns_a" 2>/dev/null || true
  ip netns del "$ns_b" 2>/dev/null || true
}
trap cleanup EXIT
skip() {
  echo "SKIP: $* (this test needs root / CAP_NET_ADMIN to make network namespaces)"
  exit 77
}
command -v ip >/dev/null || skip "the ip tool (iproute2) is not installed"
ip netns add "$ns_a" 2>"$WORK/ns.err" || skip "ip netns add failed: $(cat "$WORK/ns.err")"
ip netns add "$ns_b" 2>"$WORK/ns.err" || skip "ip netns add failed: $(cat "$WORK/ns.err")"
ip link add "$veth_a" netns "$ns_a" type veth peer name "$veth_b" netns "$ns_b" 2>"$WORK/ns.err" ||
  skip "cannot make a veth pair: $(cat "$WORK/ns.err")"
ip -n "$ns_a" addr add 10.200.0.1/24 dev "$veth_a"
ip -n "$ns_b" addr add 10.200.0.2/24 dev "$veth_b"
for ns in "$ns_a" "$ns_b"; do ip -n "$ns" link set lo up; done
ip -n "$ns_a" link set "$veth_a" up
ip -n "$ns_b" link set "$veth_b" up

"$CLI" train "${DATA[@]}" "${RUN[@]}" --output_dir "$WORK/one" --per_device_train_batch_size 32 \
  >"$WORK/one.log" 2>&1 || fail "1-process run failed: $(tail -20 "$WORK/one.log")"
port=29500  # each namespace has its own ports: no clash with the machine's
# One `trainhook launch` per "host", as on two machines.
for n in 0 1; do
  ns=$ns_a
  [[ $n == 1 ]] && ns=$ns_b
  ip netns exec "$ns" "$CLI" launch --nnodes 2 --node_rank $n --nproc_per_node 1 --master_addr 10.200.0.1 \
    --master_port $port -- train "${DATA[@]}" "${RUN[@]}" --output_dir "$WORK/two" \
    --per_device_train_batch_size 16 >"$WORK/rank$n.log" 2>&1 &
  pids[n]=$!
done
p0=${pids[0]}
p1=${pids[1]}
rc0=0 rc1=0
wait $p0 || rc0=$?
wait $p1 || rc1=$?
[[ $rc0 == 0 && $rc1 == 0 ]] || fail "exit codes rank 0: $rc0, rank 1: $rc1
rank 0: $(tail -5 "$WORK/rank0.log")
rank 1: $(tail -5 "$WORK/rank1.log")"
same_weights "$WORK/one/model.pt" "$WORK/two/model.pt" 1e-6 "1 process x32 vs 2 namespaces x16"
a1=$(json_get "$WORK/one/eval_results.json" 'j["eval_accuracy"]')
a2=$(json_get "$WORK/two/eval_results.json" 'j["eval_accuracy"]')
[[ $a1 == "$a2" ]] || fail "eval_accuracy differs: $a1 vs $a2"
echo "eval_accuracy $a2 on both"
echo "PASS"
