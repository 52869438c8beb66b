#!/usr/bin/env bash
# The Apple code, as far as Linux can prove it (docs/APPLE.md): BioAuthApple compiled against stand-ins for Apple's
# frameworks (Tests/AppleSDK: declarations as the iOS 18 SDK gives them, built as SDK modules) in Swift 6 mode with
# warnings as errors, its adapters run against a scripted phone, and the stand-ins shown to be strict: each snippet
# in Tests/AppleSDK/Misuse must fail to compile (warnings count, as they do for BioAuthApple) with the diagnostic its
# first line names, and each in
# Tests/AppleSDK/Compiles must compile without a warning, and so must the example app. Snippets are compiled to SIL
# (-emit-sil), which runs the region-isolation checks that -typecheck skips.
#
#   scripts/apple-check.sh        # about 3 minutes the first time (it builds BioAuthClient and swift-crypto again)
set -euo pipefail
cd "$(dirname "$0")/.."
package=Tests/AppleSDK
scratch=.build-apple

# Which framework code is compiled depends on `canImport`, which incremental builds do not track: always rebuild it.
# Its build folder goes, and the build plan with it (a plan left behind names files of the removed folder).
rm -rf "$scratch/debug/BioAuthAppleUnderTest.build" "$scratch/debug.yaml"
swift build --package-path "$package" --scratch-path "$scratch" --build-tests
swift test --package-path "$package" --scratch-path "$scratch" --skip-build

modules="$(swift build --package-path "$package" --scratch-path "$scratch" --show-bin-path)/Modules"
flags=(-emit-sil -swift-version 6 -parse-as-library -I "$modules" -module-cache-path "$scratch/snippet-module-cache" -o /dev/null)
status=0
for file in "$package"/Misuse/*.swift; do
    expected=$(sed -n '1s|^// expect: ||p' "$file")
    if output=$(swiftc "${flags[@]}" -warnings-as-errors "$file" 2>&1); then
        echo "apple-check: $file compiled, but must fail with: $expected"; status=1
    elif ! grep -qF -- "$expected" <<< "$output"; then
        echo "apple-check: $file failed, but not with: $expected"; echo "$output" | grep -E 'error:' | head -5; status=1
    else
        echo "apple-check: $file is refused ($expected)"
    fi
done
for file in "$package"/Compiles/*.swift; do
    if output=$(swiftc "${flags[@]}" -warnings-as-errors "$file" 2>&1); then
        echo "apple-check: $file compiles"
    else
        echo "apple-check: $file must compile without warnings:"; echo "$output" | grep -E 'error:|warning:' | head -10; status=1
    fi
done
# The example app, as an app module importing BioAuthApple (here BioAuthAppleUnderTest).
examples="$scratch/example-sources"
rm -rf "$examples" && mkdir -p "$examples"
for file in Examples/BioAuthExample/*.swift; do
    sed 's/^import BioAuthApple$/import BioAuthAppleUnderTest/' "$file" > "$examples/$(basename "$file")"
done
if output=$(swiftc "${flags[@]}" -wmo -warnings-as-errors -module-name BioAuthExample "$examples"/*.swift 2>&1); then
    echo "apple-check: Examples/BioAuthExample compiles"
else
    echo "apple-check: Examples/BioAuthExample must compile without warnings:"; echo "$output" | grep -E 'error:|warning:' | head -10; status=1
fi
exit $status
