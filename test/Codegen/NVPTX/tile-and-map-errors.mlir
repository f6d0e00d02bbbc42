// RUN: blockc-opt %s -split-input-file --blockc-gpu-tile-and-map -verify-diagnostics | FileCheck %s

// The thread block comes from blockc-gpu-select-tiles: a function with a
// loop to map and no blockc_codegen.gpu_map is an error.
// expected-error @+1 {{blockc-gpu-tile-and-map: @unconfigured has parallel loops and no 'blockc_codegen.gpu_map' (run blockc-gpu-select-tiles first)}}
func.func @unconfigured(%m: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %f, %m[%i] : memref<?xf32>
  }
  return
}

// -----

// Without a loop to map, nothing is needed.
// CHECK-LABEL: func.func @no_loops
// CHECK-NEXT: return
func.func @no_loops() {
  return
}
