#!/usr/bin/env bash
# The whole GPU suite in one go, as it is run on a lent GPU machine (one call): the
# shim's verification kernels against its host rules (gpucheck_edges), interposition and
# tuning (run.sh), then the launch rate with and without the shim (launch_rate.sh). Tables go to stdout, and to $OUT when it is set.
#
#   bash tests/gpu/all.sh [BUILD_DIR] [LIBXMATUNE]
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:-$here/../../build-gpu}
shim=${2:-$here/../../build/shim/libxmatune.so}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader || true
"$build/bin/gpucheck_edges"
rc=$?
bash "$here/run.sh" "$build" "$shim" || rc=1
echo
echo "protect: auto under PyTorch's allocators (bash tests/gpu/torch_alloc.sh):"
bash "$here/torch_alloc.sh" "$shim" || rc=1
bash "$here/launch_rate.sh" "$build" "$shim" || rc=1
exit $rc
