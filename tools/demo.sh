#!/bin/sh
# demo.sh: the Quick start's main job on the bundled examples: tag every
# record and print what was found.
set -eu
bin=${1:-./revtrail}
cd "$(dirname "$0")/.."
"$bin" classify examples/classify/*
