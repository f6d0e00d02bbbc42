// RUN: blockc-opt %s --blockc-gpu-tile-matmul="tile-m=64 threads-y=12" -verify-diagnostics
// RUN: not blockc-opt %s --blockc-gpu-tile-matmul="tile-m=256 tile-n=256 tile-k=32" 2>&1 | FileCheck %s --check-prefix=SMEM

// A tile that threads-y does not divide is refused.
// expected-error @+2 {{blockc-gpu-tile-matmul: tile-m must be a multiple of threads-y, tile-n of threads-x, threads-x * threads-y at most 1024 and a divisor of tile-m * tile-k and tile-n * tile-k}}
// SMEM: tile-matmul-errors.mlir:[[@LINE+1]]:1: error: blockc-gpu-tile-matmul: the shared tiles exceed 48 KiB of static shared memory
func.func @bad_tiles() {
  return
}
