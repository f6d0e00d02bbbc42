// RUN: blockc-opt %s --pass-pipeline="builtin.module(func.func(blockc-gpu-legalize-grid),blockc-nvptx-lower-to-llvm-pipeline{emulate=true})" | %emulator_runner 2>&1 | FileCheck %s --implicit-check-not="blockc GPU emulator"

// blockc-gpu-legalize-grid under the emulator (which checks CUDA's limits
// at every launch, see errors.mlir): a grid z of 70000 runs as 65535 blocks
// striding over z, and every z index is written exactly once with its own
// value; an empty grid launches nothing (and reports nothing).

func.func private @printMemrefI32(memref<*xi32>) attributes {llvm.emit_c_interface}

// The number of entries i with out[i] != i, then the grid z the kernel saw.
// CHECK: [0,  70000]
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c70000 = arith.constant 70000 : index
  %out = memref.alloc() : memref<70000xi32>
  %seen = memref.alloc() : memref<1xi32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c70000)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %z = arith.index_cast %bz : index to i32
    memref.store %z, %out[%bz] : memref<70000xi32>
    %first = arith.cmpi eq, %bz, %c0 : index
    scf.if %first {
      %g = gpu.grid_dim z
      %gi = arith.index_cast %g : index to i32
      memref.store %gi, %seen[%c0] : memref<1xi32>
    }
    gpu.terminator
  }
  // An empty grid: nothing runs, no error.
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c0, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %bad = arith.constant -1 : i32
    memref.store %bad, %seen[%c0] : memref<1xi32>
    gpu.terminator
  }
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %wrong = scf.for %i = %c0 to %c70000 step %c1 iter_args(%n = %zero) -> i32 {
    %v = memref.load %out[%i] : memref<70000xi32>
    %ii = arith.index_cast %i : index to i32
    %ne = arith.cmpi ne, %v, %ii : i32
    %inc = arith.select %ne, %one, %zero : i32
    %next = arith.addi %n, %inc : i32
    scf.yield %next : i32
  }
  %result = memref.alloc() : memref<2xi32>
  memref.store %wrong, %result[%c0] : memref<2xi32>
  %g = memref.load %seen[%c0] : memref<1xi32>
  memref.store %g, %result[%c1] : memref<2xi32>
  %u = memref.cast %result : memref<2xi32> to memref<*xi32>
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}
