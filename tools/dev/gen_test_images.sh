#!/usr/bin/env bash
# Makes tests/unit/images/tiny.{cubin,fatbin,ptx} again from tiny.cu (needs nvcc; no GPU):
# the real module images that tests/unit/test_cuimage.c locates. Commit them with it.
set -euo pipefail
cd "$(dirname "$0")/../../tests/unit/images"
nvcc -arch=sm_90 -cubin -o tiny.cubin tiny.cu
nvcc -gencode 'arch=compute_90,code=[sm_90,compute_90]' -fatbin -o tiny.fatbin tiny.cu
nvcc -arch=sm_90 -ptx -o tiny.ptx tiny.cu
ls -l tiny.cubin tiny.fatbin tiny.ptx
