#!/usr/bin/env bash
# Coverage-guided fuzzing (libFuzzer) of BioAuthCore's parsers: each harness in Fuzz/ is compiled with the Core
# sources it needs (no package dependencies) and run for SECONDS (default 30) from a seed corpus made from the
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
    [display-name]="Sources/BioAuthCore/Text/DisplayName.swift Fuzz/DisplayNameFuzz.swift"
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
    esac
}

status=0
for target in cbor base64url json-members display-name; do
    [[ -n "$only" && "$only" != "$target" ]] && continue
    dir="$out/$target"
    mkdir -p "$dir"
    echo "fuzz: building $target"
    # shellcheck disable=SC2086
    swiftc -O -sanitize=fuzzer,address -parse-as-library ${sources[$target]} -o "$dir/fuzzer" 2> "$dir/build.log" || {
        cat "$dir/build.log"; exit 1; }
    seed "$target" "$dir/corpus"
    echo "fuzz: running $target for ${seconds}s"
    # Swift's own backtracer does not run under AddressSanitizer; libFuzzer reports the crash and keeps its input.
    if ! (cd "$dir" && SWIFT_BACKTRACE=enable=no ./fuzzer -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 corpus \
            > run.log 2>&1); then
        echo "fuzz: $target FAILED"; tail -40 "$dir/run.log"; status=1
    else
        grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' "$dir/run.log" | tail -2 || true
    fi
done
exit $status
