#!/usr/bin/env bash
# Makes one kept real-node test chain (see README.md here): a mocknet stacks-node posts its events to
# our `serve` (SQLite), examples/realnode_driver.rs sends the scenario's transactions through our
# /v2/transactions and records the node's own answers at one tip; then the node and `serve` stop, the
# raw event log is exported (`export-events`) and cut after that tip's block.
# usage (from the project root, after `cargo build --profile test --bin stacks-ledger --example realnode_driver`):
#   tests/realnode/make-chain.sh STACKS_NODE_BIN SCENARIO [WORKDIR]     (SCENARIO: contracts | pox | bns)
set -euo pipefail
node=$1; scenario=$2; wd=${3:-$(mktemp -d)}; mkdir -p "$wd"
bin=${BIN:-target/debug/stacks-ledger}; driver=${DRIVER:-target/debug/examples/realnode_driver}
tools=${REALNODE_TOOLS:-../shared/tools/realnode}; out=tests/realnode/$scenario
free() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
api=$(free); ev=$(free); rpc=$(free); p2p=$(free)
export DATABASE_URL="sqlite://$wd/db.sqlite" STACKS_CHAIN_ID=0x80000000
"$bin" serve --api-bind "127.0.0.1:$api" --events-bind "127.0.0.1:$ev" --node-rpc "http://127.0.0.1:$rpc" > "$wd/serve.log" 2>&1 & sp=$!
sleep 1
np=$("$tools/run-mocknet.sh" "$node" "$ev" "$wd" "$rpc" "$p2p")
trap 'kill $np $sp 2>/dev/null || true' EXIT
# Epoch 2.5 (pox-4) starts at burn height 6.
for _ in $(seq 150); do
  h=$(curl -s "http://127.0.0.1:$rpc/v2/info" | python3 -c 'import sys,json;print(json.load(sys.stdin)["burn_block_height"])' 2>/dev/null || true)
  [ -n "$h" ] && [ "$h" -ge 8 ] && break; sleep 2
done
mkdir -p "$out"
"$driver" "$scenario" "http://127.0.0.1:$rpc" "http://127.0.0.1:$api" "$out" | tee "$wd/driver.out"
tip=$(tail -1 "$wd/driver.out" | sed -n 's/^tip //p')
kill $np; sleep 3; kill $sp; wait $sp || true
rm -f "$wd/all.tsv"
"$bin" export-events --file "$wd/all.tsv" > /dev/null
# Keep the events up to the recorded tip's block (the node may have mined one more before it stopped).
python3 - "$wd/all.tsv" "$out/chain.tsv" "$tip" <<'PY'
import json, sys
src, dst, tip = sys.argv[1], sys.argv[2], int(sys.argv[3])
kept = []
for line in open(src):
    kept.append(line)
    _, _, path, payload = line.rstrip("\n").split("\t", 3)
    if path == "/new_block" and json.loads(payload)["block_height"] == tip:
        break
else:
    sys.exit(f"no block at the recorded tip {tip}")
open(dst, "w").writelines(kept)
print(f"{dst}: {len(kept)} events up to block {tip}")
PY
