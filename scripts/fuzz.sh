#!/usr/bin/env bash
# Coverage-guided fuzzing (libFuzzer) of the parsers of untrusted input. Each harness in Fuzz/ is compiled with the
# sources it needs: those without package dependencies (BioAuthCore's parsers, the server's Accept parser) by swiftc
# directly; the App Attest verifier and the signed-payload and transaction encoders, which need swift-crypto and
# swift-certificates, as executables of the package in Fuzz/Package (about two minutes to build the first time) and run for SECONDS (default 30) from a seed corpus made from the
# real vectors in ../shared/vectors and from examples of valid input.
#
#   scripts/fuzz.sh            # every target, 30 s each
#   scripts/fuzz.sh 600 cbor   # one target, 10 minutes
#
# A crash leaves its input in .build-fuzz/TARGET/crash-*; turn it into a test case before fixing it.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
only="${2:-}"
out=.build-fuzz
mkdir -p "$out"

declare -A sources=(
    [cbor]="Sources/BioAuthCore/Wire/CBOR.swift Fuzz/CBORFuzz.swift"
    [base64url]="Sources/BioAuthCore/Wire/Base64URL.swift Fuzz/Base64URLFuzz.swift"
    [json-members]="Sources/BioAuthCore/Wire/JSONMemberNames.swift Fuzz/JSONMemberNamesFuzz.swift"
    [display-name]="Sources/BioAuthCore/Text/DisplayName.swift Sources/BioAuthCore/Text/LookalikeKeys.swift Sources/BioAuthCore/Text/ConfusablesData.swift Fuzz/DisplayNameFuzz.swift"
    [accept]="Sources/BioAuthServer/HTTP/AcceptHeader.swift Fuzz/AcceptHeaderFuzz.swift"
    [app-attest]="package AppAttestFuzz"
    [encoders]="package EncoderFuzz"
)

seed() {
    local target=$1 corpus=$2
    mkdir -p "$corpus"
    case "$target" in
    cbor)
        # Every real App Attest attestation and assertion (CBOR), decoded from the shared vectors.
        python3 - "$corpus" <<'PY'
import base64, glob, json, os, sys
corpus = sys.argv[1]
for path in glob.glob("../shared/vectors/appattest/*/*.json"):
    vector = json.load(open(path))
    for key, value in vector.items():
        if key.endswith("_b64") and isinstance(value, str):
            try:
                data = base64.b64decode(value + "=" * (-len(value) % 4))
            except Exception:
                continue
            name = os.path.basename(path) + "." + key
            open(os.path.join(corpus, name), "wb").write(data)
PY
        ;;
    app-attest)
        # Every attestation (first byte 0) and assertion (first byte 1) of the shared vectors, valid and negative.
        python3 - "$corpus" <<'PY'
import base64, glob, json, os, sys
corpus = sys.argv[1]
for path in glob.glob("../shared/vectors/appattest/*/*.json"):
    vector = json.load(open(path))
    for key, prefix in (("attestation_b64", b"\x00"), ("assertion_b64", b"\x01")):
        value = vector.get(key)
        if isinstance(value, str):
            data = base64.b64decode(value + "=" * (-len(value) % 4))
            open(os.path.join(corpus, os.path.basename(path) + "." + key), "wb").write(prefix + data)
PY
        ;;
    encoders)
        # One-byte-length fields: purpose, relying-party id, challenge, key id, counter, hash; then payment id,
        # amount, currency, payee id, payee name (a login payload and a CNY 88.00 payment).
        python3 - "$corpus" <<'PY'
import os, sys
def f(b): return bytes([len(b)]) + b
seed = (f(b"login") + f(b"bank.example") + f(bytes(32)) + f(bytes(range(32))) + f((7).to_bytes(8, "big")) + f(b"")
        + f(b"01a2082b-18de-71f9-95c5-6cd17613a1a7") + f((8800).to_bytes(8, "big")) + f(b"CNY") + f(b"coffee-1")
        + f("Café Zoë".encode()))
open(os.path.join(sys.argv[1], "login-and-payment"), "wb").write(seed)
PY
        ;;
    base64url) printf 'AAEC' > "$corpus/a"; printf '_-8' > "$corpus/b"; printf '' > "$corpus/empty" ;;
    json-members)
        printf '{"amountMinor":8800,"currency":"CNY","payeeId":"p","payeeName":"Coffee Shop"}' > "$corpus/payment"
        printf '{"a":{"b":[1,2,{"c":"\\u00e9"}]},"d":null}' > "$corpus/nested"
        printf '{"a":1,"a":2}' > "$corpus/duplicate"
        ;;
    display-name)
        for name in "Coffee Shop" "星巴克 Starbucks" "Al Noor تجارة" "東京の本屋" "Café Zoë" "Соffee Shop"; do
            printf '%s' "$name" > "$corpus/$(printf '%s' "$name" | md5sum | cut -c1-8)"
        done
        ;;
    accept)
        printf 'application/json, application/problem+json' > "$corpus/client"
        printf 'text/html;level=1;q=0.5, application/*;q=0.001, */*;q=0' > "$corpus/weights"
        printf 'application/json;charset="utf-8, \\"x\\""' > "$corpus/quoted"
        printf 'APPLICATION/YAML;Q=1.000,,' > "$corpus/case"
        ;;
    esac
}

status=0
for target in cbor base64url json-members display-name accept app-attest encoders; do
    [[ -n "$only" && "$only" != "$target" ]] && continue
    dir="$out/$target"
    mkdir -p "$dir"
    echo "fuzz: building $target"
    max_len=4096
    # LeakSanitizer counts the harness's constants (initialized once, held for the whole run) as leaks at exit.
    asan_options=""
    if [[ ${sources[$target]} == package\ * ]]; then
        product=${sources[$target]#package }
        swift build -c release --package-path Fuzz/Package --scratch-path "$out/package-build" --product "$product" \
            -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library > "$dir/build.log" 2>&1 || {
            grep -v 'Cannot export local symbol' "$dir/build.log" | tail -40; exit 1; }
        cp "$(swift build -c release --package-path Fuzz/Package --scratch-path "$out/package-build" --show-bin-path)/$product" "$dir/fuzzer"
        max_len=8192  # an attestation is about 5 KiB
        asan_options="detect_leaks=0"
    else
        # shellcheck disable=SC2086
        swiftc -O -sanitize=fuzzer,address -parse-as-library ${sources[$target]} -o "$dir/fuzzer" 2> "$dir/build.log" || {
            cat "$dir/build.log"; exit 1; }
    fi
    seed "$target" "$dir/corpus"
    echo "fuzz: running $target for ${seconds}s"
    # Swift's own backtracer does not run under AddressSanitizer; libFuzzer reports the crash and keeps its input.
    if ! (cd "$dir" && ASAN_OPTIONS="$asan_options" SWIFT_BACKTRACE=enable=no ./fuzzer -max_total_time="$seconds" \
            -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 corpus > run.log 2>&1); then
        echo "fuzz: $target FAILED"; tail -40 "$dir/run.log"; status=1
    else
        grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' "$dir/run.log" | tail -2 || true
    fi
done
exit $status
