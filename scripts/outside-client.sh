#!/usr/bin/env bash
# The outside-client rule for approvals, device binding and step-up: scripts/outside-client/ciba_client.py, an OpenID CIBA
# client, a bank's backend that hands out binding codes, a bank's resource server enforcing RFC 9470 over introspection
# (resource_server.py), and phones written from docs/PROTOCOL.md alone in Python, against a real
# `bioauth serve` on loopback. Needs `swift build` first and
# Python's `cryptography` (installed with pip when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
out=.build-outside-client
rm -rf "$out" && mkdir -p "$out"
python3 -c 'import cryptography' 2>/dev/null || pip install --quiet cryptography

binary="$(swift build --show-bin-path)/bioauth"
[[ -x "$binary" ]] || swift build --product bioauth
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
credentials=$("$binary" admin service create call-centre --scope approvals:write --database "$out/bioauth.sqlite")
client_id=$(awk '/^client_id:/ {print $2}' <<< "$credentials")
client_secret=$(awk '/^client_secret:/ {print $2}' <<< "$credentials")
"$binary" admin service display-name "$client_id" "Bank Call Centre" --database "$out/bioauth.sqlite" > /dev/null
binding=$("$binary" admin service create branch --scope bindings:write --database "$out/bioauth.sqlite")
binding_id=$(awk '/^client_id:/ {print $2}' <<< "$binding")
binding_secret=$(awk '/^client_secret:/ {print $2}' <<< "$binding")
gateway=$("$binary" admin service create api-gateway --scope sessions:introspect --database "$out/bioauth.sqlite")
gateway_id=$(awk '/^client_id:/ {print $2}' <<< "$gateway")
gateway_secret=$(awk '/^client_secret:/ {print $2}' <<< "$gateway")
"$binary" serve --host 127.0.0.1 --port "$port" --database "$out/bioauth.sqlite" --bcrypt-cost 4 --rp-id bank.example \
    --receipt-key "$out/receipt-key.pem" --pin-key "$out/pin-key" --log-level warning > "$out/server.log" 2>&1 &
server=$!
resource_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 scripts/outside-client/resource_server.py "http://127.0.0.1:$port" "$gateway_id" "$gateway_secret" "$resource_port" \
    > "$out/resource-server.log" 2>&1 &
resource=$!
trap 'kill $server $resource 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
    python3 -c "import urllib.request, sys; urllib.request.urlopen(sys.argv[1], timeout=1)" "http://127.0.0.1:$port/healthz" \
        2>/dev/null && break
    sleep 0.2
done
python3 scripts/outside-client/ciba_client.py "http://127.0.0.1:$port" "$client_id" "$client_secret" bank.example \
    "$binding_id" "$binding_secret" "http://127.0.0.1:$resource_port"
