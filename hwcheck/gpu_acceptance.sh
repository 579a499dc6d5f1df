#!/usr/bin/env bash
# The GPU acceptance set in one go, on a machine with a CUDA GPU and CuPy:
#   1. hwcheck's GPU tests (small campaigns of every instruction, the campaign command end to end, the
#      example programs for 2 seeds, the run command end to end);
#   2. hwcheck acceptance: mma m16n8k16 (10^6 per type), m16n8k8 (10^5 per type), the evidence classes
#      frac-bits/block/floor on both shapes (10^5 per case, with the model's neighbours counted against
#      the GPU), the six ldmatrix variants (10^5 each), cvt.rn.{f16,bf16}x2.f32 (10^6 each); then
#      every example program, every params combination, 20 random inputs each; one JSON report per
#      campaign and NAME-programs.json for the programs, in OUT_DIR;
#   3. (ONLY all or ptx) every PTX example (hwcheck/runs/ptx_examples.py), 20 seeds each, buffers and every
#      written register, into NAME-ptx-programs.json.
# The summary table is printed last. Exit status 0 only when both parts passed.
#
# Usage: hwcheck/gpu_acceptance.sh [OUT_DIR [SCALE [ONLY]]]
#   defaults: conformance 1.0 all; SCALE 0.01 = smoke run; ONLY: all | campaigns | programs | ptx
# Environment: PYTHON (default python3).
set -u
cd "$(dirname "$0")/.."
out="${1:-conformance}"
scale="${2:-1.0}"
only="${3:-all}"
py="${PYTHON:-python3}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

start=$(date +%s)
"$py" -m pytest -q -p no:cacheprovider -m gpu tests/hwcheck
tests_status=$?
"$py" -m hwcheck acceptance --out "$out" --scale "$scale" --only "$only"
acceptance_status=$?
ptx_status=0
if [ "$only" = "all" ]; then
    "$py" -m hwcheck acceptance --out "$out" --scale "$scale" --only ptx
    ptx_status=$?
fi
echo "gpu tests: exit ${tests_status}; acceptance (${only}): exit ${acceptance_status}; PTX examples: exit ${ptx_status};" \
     "$(( $(date +%s) - start )) s in all"
[ "$tests_status" -eq 0 ] && [ "$acceptance_status" -eq 0 ] && [ "$ptx_status" -eq 0 ]
