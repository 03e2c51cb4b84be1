#!/usr/bin/env bash
# check-construction's workflows against a real mocknet stacks-node (CI runs them against the devnet node; this
# checks its model against the real thing): a sequential multisig transfer (p2sh; Epoch 2.5 refuses the
# non-sequential modes), sponsored transfers and the pox-4 stacking calls (stack_stx, delegate_stx,
# revoke_delegate_stx), through our Rosetta Construction API and `serve` (fed live by the node); then
# check-data reconciles the chain. Exit 0 when both pass.
# usage (from the project root, after `cargo build --profile test --bin stacks-ledger`):
#   tests/realnode/check-construction.sh STACKS_NODE_BIN [WORKDIR]
set -uo pipefail
node=$1; wd=${2:-$(mktemp -d)}; mkdir -p "$wd"
bin=${BIN:-target/debug/stacks-ledger}; tools=${REALNODE_TOOLS:-../shared/tools/realnode}
free() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
api=$(free); ev=$(free); rpc=$(free); p2p=$(free)
DATABASE_URL="sqlite://$wd/db.sqlite" STACKS_CHAIN_ID=0x80000000 "$bin" serve --api-bind "127.0.0.1:$api" \
  --events-bind "127.0.0.1:$ev" --node-rpc "http://127.0.0.1:$rpc" > "$wd/serve.log" 2>&1 & sp=$!
sleep 1
np=$("$tools/run-mocknet.sh" "$node" "$ev" "$wd" "$rpc" "$p2p")
trap 'kill $np $sp 2>/dev/null' EXIT
# Epoch 2.5 (pox-4) starts at burn height 6.
for _ in $(seq 150); do
  h=$(curl -s "http://127.0.0.1:$rpc/v2/info" | python3 -c 'import sys,json;print(json.load(sys.stdin)["burn_block_height"])' 2>/dev/null)
  [ -n "$h" ] && [ "$h" -ge 8 ] && break; sleep 2
done
cat > "$wd/cc.json" <<JSON
{"network": {"blockchain": "stacks", "network": "testnet"}, "online_url": "http://127.0.0.1:$api/rosetta/v1",
 "construction": {"offline_url": "http://127.0.0.1:$api/rosetta/v1",
  "prefunded_accounts": [{"privkey": "539e35c740079b79f931036651ad01f76d8fe1496dbd840ba9e62c7e7b355db0",
    "account_identifier": {"address": "ST3EQ88S02BXXD0T5ZVT3KW947CRMQ1C6DMQY8H19"}, "curve_type": "secp256k1",
    "currency": {"symbol": "STX", "decimals": 6}}],
  "end_conditions": {"create_account": 2, "transfer": 1, "multisig_transfer": 1, "sponsored_transfer": 2,
    "stack_stx": 1, "delegate_stx": 1, "revoke_delegate_stx": 1}}}
JSON
"$bin" check-construction --configuration-file "$wd/cc.json" --timeout-secs 300 > "$wd/cc.out" 2>&1; cc=$?
echo "check-construction: $(tail -1 "$wd/cc.out")"; sed -n '/^{"addresses_created/p;/^{"create_account/p' "$wd/cc.out"
"$bin" check-data --url "http://127.0.0.1:$api" > "$wd/cd.out" 2>&1; cd=$?
echo "check-data: $(tail -1 "$wd/cd.out")"
[ $cc = 0 ] && [ $cd = 0 ]
