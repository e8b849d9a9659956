#!/bin/bash
# README command 1: install what is missing, build, and run the main job on the bundled example.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
scripts/run-example.sh
