#!/usr/bin/env bash
# The Apple code, as far as Linux can prove it (docs/APPLE.md): BioAuthApple compiled against stand-ins for Apple's
# frameworks (Tests/AppleSDK: declarations as the iOS 18 SDK gives them, built as SDK modules) in Swift 6 mode with
# warnings as errors, its adapters run against a scripted phone, and the stand-ins shown to be strict: each snippet
# in Tests/AppleSDK/Misuse must fail to compile (warnings count, as they do for BioAuthApple) with the diagnostic its
# first line names, and each in
# Tests/AppleSDK/Compiles must compile without a warning, and so must the example app and the documentation's Apple
# samples (scripts/check-samples.py). Snippets are compiled to SIL
# (-emit-sil), which runs the region-isolation checks that -typecheck skips.
#
# Declarations whose isolation changed between Xcode 16's SDK and Xcode 26's (the passkey sheet's delegate protocols)
# come in both forms: everything above runs once against each (BIOAUTH_APPLE_SDK=xcode16 selects the older), and the
# snippets in Tests/AppleSDK/Misuse/<variant>/ must fail only against that variant.
#
#   scripts/apple-check.sh                # both variants; about 3 minutes each the first time (BioAuthClient and swift-crypto are built again)
#   scripts/apple-check.sh xcode16        # one
set -euo pipefail
cd "$(dirname "$0")/.."
package=Tests/AppleSDK
variants=("$@")
[[ ${#variants[@]} -gt 0 ]] || variants=(xcode26 xcode16)
status=0

check() {
    local variant=$1 scratch=.build-apple
    [[ $variant == xcode26 ]] || scratch=".build-apple-$variant"
    export BIOAUTH_APPLE_SDK=$variant
    echo "apple-check: the $variant SDK's declarations"
    # Which framework code is compiled depends on `canImport`, which incremental builds do not track: always rebuild it.
    # Its build folder goes, and the build plan with it (a plan left behind names files of the removed folder).
    rm -rf "$scratch/debug/BioAuthAppleUnderTest.build" "$scratch/debug/AuthenticationServices.build" "$scratch/debug.yaml"
    swift build --package-path "$package" --scratch-path "$scratch" --build-tests
    swift test --package-path "$package" --scratch-path "$scratch" --skip-build

    local modules
    modules="$(swift build --package-path "$package" --scratch-path "$scratch" --show-bin-path)/Modules"
    local flags=(-emit-sil -swift-version 6 -parse-as-library -I "$modules" -module-cache-path "$scratch/snippet-module-cache" -o /dev/null)
    local file expected output
    for file in "$package"/Misuse/*.swift "$package"/Misuse/"$variant"/*.swift; do
        [[ -f $file ]] || continue
        expected=$(sed -n '1s|^// expect: ||p' "$file")
        if output=$(swiftc "${flags[@]}" -warnings-as-errors "$file" 2>&1); then
            echo "apple-check ($variant): $file compiled, but must fail with: $expected"; status=1
        elif ! grep -qF -- "$expected" <<< "$output"; then
            echo "apple-check ($variant): $file failed, but not with: $expected"; echo "$output" | grep -E 'error:' | head -5; status=1
        else
            echo "apple-check ($variant): $file is refused ($expected)"
        fi
    done
    for file in "$package"/Compiles/*.swift; do
        if output=$(swiftc "${flags[@]}" -warnings-as-errors "$file" 2>&1); then
            echo "apple-check ($variant): $file compiles"
        else
            echo "apple-check ($variant): $file must compile without warnings:"; echo "$output" | grep -E 'error:|warning:' | head -10; status=1
        fi
    done
    # The example app, as an app module importing BioAuthApple (here BioAuthAppleUnderTest).
    local examples="$scratch/example-sources"
    rm -rf "$examples" && mkdir -p "$examples"
    for file in Examples/BioAuthExample/*.swift; do
        sed 's/^import BioAuthApple$/import BioAuthAppleUnderTest/' "$file" > "$examples/$(basename "$file")"
    done
    if output=$(swiftc "${flags[@]}" -wmo -warnings-as-errors -module-name BioAuthExample "$examples"/*.swift 2>&1); then
        echo "apple-check ($variant): Examples/BioAuthExample compiles"
    else
        echo "apple-check ($variant): Examples/BioAuthExample must compile without warnings:"; echo "$output" | grep -E 'error:|warning:' | head -10; status=1
    fi
    # The documentation's samples that need Apple's frameworks (README, docs, DocC, doc comments).
    scripts/check-samples.py apple "$scratch" || status=1
}

for variant in "${variants[@]}"; do
    case $variant in
    xcode26 | xcode16) check "$variant" ;;
    *) echo "apple-check: no SDK variant $variant (xcode26 or xcode16)"; exit 2 ;;
    esac
done
exit $status
