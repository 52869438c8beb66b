#!/usr/bin/env bash
# The Swift code generated from the API's contract (Sources/BioAuthServer/openapi.yaml) is committed: BioAuthClient's
# types and client in Sources/BioAuthClient/Generated, BioAuthServer's types and server stubs in
# Sources/BioAuthServer/Generated. So an app that adds the package never compiles the generator nor trusts a build
# plugin, and neither does the server's build.
#
#   scripts/generate-openapi.sh          regenerate both after changing openapi.yaml (commit the result)
#   scripts/generate-openapi.sh --check  fail if the committed code is not what the generator makes of openapi.yaml (CI)
#
# The generator (swift-openapi-generator, the version pinned in scripts/openapi-generator/Package.swift) is built once
# into .build-openapi; its configurations are scripts/openapi-generator/client.yaml and server.yaml.
set -euo pipefail
cd "$(dirname "$0")/.."

mode="${1:-write}"
if [[ "$mode" != "write" && "$mode" != "--check" ]]; then
    echo "usage: scripts/generate-openapi.sh [--check]" >&2
    exit 2
fi

swift build --package-path scripts/openapi-generator --scratch-path "$PWD/.build-openapi" \
    --product swift-openapi-generator >/dev/null
generator="$PWD/.build-openapi/debug/swift-openapi-generator"
contract=Sources/BioAuthServer/openapi.yaml

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
stale=0
for side in client server; do
    case "$side" in
        client) target=BioAuthClient ;;
        server) target=BioAuthServer ;;
    esac
    "$generator" generate "$contract" \
        --config "scripts/openapi-generator/$side.yaml" \
        --additional-file-comment "swift-format-ignore-file" \
        --additional-file-comment "Made from $contract by scripts/generate-openapi.sh: edit the contract and run it, never this file." \
        --output-directory "$scratch/$side" >"$scratch/$side.log" 2>&1 || { cat "$scratch/$side.log" >&2; exit 1; }
    committed="Sources/$target/Generated"
    if [[ "$mode" == "--check" ]]; then
        if ! diff -r -q "$scratch/$side" "$committed" >/dev/null 2>&1; then
            echo "generate-openapi: $committed is out of date with $contract:" >&2
            diff -r "$scratch/$side" "$committed" | head -40 >&2 || true
            stale=1
        fi
    else
        rm -rf "$committed"
        mkdir -p "$committed"
        cp "$scratch/$side"/*.swift "$committed/"
        echo "generate-openapi: wrote $committed ($(ls "$committed" | wc -l) files)"
    fi
done
if [[ $stale -ne 0 ]]; then
    echo "generate-openapi: run scripts/generate-openapi.sh and commit the result." >&2
    exit 1
fi
[[ "$mode" == "--check" ]] && echo "generate-openapi: the committed client and server code match $contract."
exit 0
