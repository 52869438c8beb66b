#!/usr/bin/env bash
# Builds the DocC documentation of every library (catalogs in Sources/*/*.docc), warnings as errors: a broken link or
# an undocumented parameter fails it. The archives are in .build/plugins/Swift-DocC/outputs/.
#
#   scripts/docs.sh                 # all libraries
#   scripts/docs.sh BioAuthClient   # one
set -euo pipefail
cd "$(dirname "$0")/.."
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(BioAuthCore BioAuthClient BioAuthApple BioAuthTesting BioAuthServer)
for target in "${targets[@]}"; do
    echo "docs: $target"
    swift package generate-documentation --target "$target" --warnings-as-errors
done
