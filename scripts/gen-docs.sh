#!/bin/bash
# Regenerates docs/reference/ from the ODS definitions (dialects and passes).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh wsc-docs
rm -rf docs/reference
mkdir -p docs/reference
for f in $(cd build/gen/docs && find . -name '*.md' | sort); do
  mkdir -p "docs/reference/$(dirname "$f")"
  cp "build/gen/docs/$f" "docs/reference/$f"
done
echo "docs/reference: $(find docs/reference -name '*.md' | wc -l) files"
