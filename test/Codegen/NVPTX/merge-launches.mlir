// RUN: blockc-opt %s -split-input-file -blockc-gpu-merge-launches="kinds=gemv" | FileCheck %s

// Two independent weight-streaming launches with the same thread blocks (one
// writes an allocation, the other a function argument; both read the
// argument %x) become one launch over 32 + 16 blocks; the allocation
// between them moves above. Each body sees its own block id and grid x
// extent.

// CHECK-LABEL: func.func @independent
// CHECK-SAME:    (%[[X:.*]]: memref<256xf32>, %[[W:.*]]: memref<64xf32>, %[[OUT:.*]]: memref<64xf32>)
// CHECK-DAG:     %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG:     %[[C16:.*]] = arith.constant 16 : index
// CHECK:         %[[A:.*]] = memref.alloc() : memref<128xf32>
// CHECK-NEXT:    %[[B:.*]] = memref.alloc() : memref<32xf32>
// CHECK-NEXT:    %[[C48:.*]] = arith.constant 48 : index
// CHECK-NEXT:    gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C48]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in
// CHECK-NEXT:      %[[FIRST:.*]] = arith.cmpi ult, %[[BX]], %[[C32]] : index
// CHECK-NEXT:      scf.if %[[FIRST]] {
// CHECK-NEXT:        %[[V0:.*]] = memref.load %[[X]][%[[BX]]]
// CHECK-NEXT:        %[[S0:.*]] = arith.addi %[[BX]], %[[C32]] : index
// CHECK-NEXT:        memref.store %[[V0]], %[[A]][%[[S0]]]
// CHECK-NEXT:      } else {
// CHECK-NEXT:        %[[BX1:.*]] = arith.subi %[[BX]], %[[C32]] : index
// CHECK-NEXT:        %[[V1:.*]] = memref.load %[[X]][%[[BX1]]]
// CHECK-NEXT:        %[[S1:.*]] = arith.addi %[[BX1]], %[[C16]] : index
// CHECK-NEXT:        memref.store %[[V1]], %[[OUT]][%[[S1]]]
// CHECK-NEXT:      }
// CHECK-NEXT:      gpu.terminator
// CHECK-NEXT:    } {blockc_codegen.kernel = #blockc_codegen.kernel<gemv>}
// CHECK-NEXT:    memref.load %[[A]]
func.func @independent(%x: memref<256xf32>, %w: memref<64xf32>,
                       %out: memref<64xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %a = memref.alloc() : memref<128xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c32, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%bx] : memref<256xf32>
    %i = arith.addi %bx, %gx : index
    memref.store %v, %a[%i] : memref<128xf32>
    gpu.terminator
  } {blockc_codegen.kernel = #blockc_codegen.kernel<gemv>}
  %b = memref.alloc() : memref<32xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c16, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%bx] : memref<256xf32>
    %i = arith.addi %bx, %gx : index
    memref.store %v, %out[%i] : memref<64xf32>
    gpu.terminator
  } {blockc_codegen.kernel = #blockc_codegen.kernel<gemv>}
  %r = memref.load %a[%c0] : memref<128xf32>
  memref.dealloc %b : memref<32xf32>
  return %r : f32
}

// -----

// Three launches become one (the merged launch merges with the third; its
// blocks 0..47 run the first two): 32 + 16 + 8 blocks.

// CHECK-LABEL: func.func @three
// CHECK-DAG:     %[[C48:.*]] = arith.constant 48 : index
// CHECK-DAG:     %[[C56:.*]] = arith.constant 56 : index
// CHECK:         gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C56]],
// CHECK-NEXT:      %[[FIRST:.*]] = arith.cmpi ult, %[[BX]], %[[C48]] : index
// CHECK-NEXT:      scf.if %[[FIRST]] {
// CHECK-NEXT:        arith.cmpi ult, %[[BX]], %{{.*}} : index
// CHECK-NEXT:        scf.if
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @three(%x: memref<256xf32>, %o1: memref<64xf32>,
                 %o2: memref<64xf32>, %o3: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c32, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%bx] : memref<256xf32>
    memref.store %v, %o1[%bx] : memref<64xf32>
    gpu.terminator
  } {blockc_codegen.kernel = #blockc_codegen.kernel<gemv>}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c16, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%bx] : memref<256xf32>
    memref.store %v, %o2[%bx] : memref<64xf32>
    gpu.terminator
  } {blockc_codegen.kernel = #blockc_codegen.kernel<gemv>}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c8, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%bx] : memref<256xf32>
    memref.store %v, %o3[%bx] : memref<64xf32>
    gpu.terminator
  } {blockc_codegen.kernel = #blockc_codegen.kernel<gemv>}
  return
}

// -----

// A decode entry's projections: each behind the same run-time test M <= 16
// (weight-streaming kernel, or tensor cores), separated by the allocations
// of their results. The two scf.if merge (the allocation moves above), and
// the weight-streaming launches in their then branch merge; the else
// branches' launches (another kind) stay two.

// CHECK-LABEL: func.func @behind_the_same_test
// CHECK:         memref.alloc
// CHECK-NEXT:    memref.alloc
// CHECK-NEXT:    scf.if %{{.*}} {
// CHECK-NEXT:      arith.constant 48 : index
// CHECK-NEXT:      gpu.launch
// CHECK-NOT:       gpu.launch
// CHECK:           } {blockc_codegen.kernel = #blockc_codegen.kernel<gemv>}
// CHECK-NEXT:    } else {
// CHECK-NEXT:      gpu.launch
// CHECK:           } {blockc_codegen.kernel = #blockc_codegen.kernel<tensor_core_matmul>}
// CHECK-NEXT:      gpu.launch
// CHECK:           } {blockc_codegen.kernel = #blockc_codegen.kernel<tensor_core_matmul>}
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @behind_the_same_test(%m: index, %x: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %small = arith.cmpi ule, %m, %c16 : index
  %a = memref.alloc() : memref<64xf32>
  scf.if %small {
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c32, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
      %v = memref.load %x[%bx] : memref<256xf32>
      memref.store %v, %a[%bx] : memref<64xf32>
      gpu.terminator
    } {blockc_codegen.kernel = #blockc_codegen.kernel<gemv>}
  } else {
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
      %v = memref.load %x[%bx] : memref<256xf32>
      memref.store %v, %a[%bx] : memref<64xf32>
      gpu.terminator
    } {blockc_codegen.kernel = #blockc_codegen.kernel<tensor_core_matmul>}
  }
  %b = memref.alloc() : memref<64xf32>
  scf.if %small {
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c16, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
      %v = memref.load %x[%bx] : memref<256xf32>
      memref.store %v, %b[%bx] : memref<64xf32>
      gpu.terminator
    } {blockc_codegen.kernel = #blockc_codegen.kernel<gemv>}
  } else {
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
      %v = memref.load %x[%bx] : memref<256xf32>
      memref.store %v, %b[%bx] : memref<64xf32>
      gpu.terminator
    } {blockc_codegen.kernel = #blockc_codegen.kernel<tensor_core_matmul>}
  }
  return
}

// -----

// Launches that stay apart: the second reads what the first writes; a
// write to a buffer of unknown origin (a global); other thread blocks; a
// kind not asked for; a body that reads its block id through gpu.block_id.

// CHECK-LABEL: func.func @dependent
// CHECK-COUNT-2: gpu.launch blocks
func.func @dependent(%x: memref<64xf32>, %y: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %a = memref.alloc() : memref<64xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c32, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%bx] : memref<64xf32>
    memref.store %v, %a[%bx] : memref<64xf32>
    gpu.terminator
  } {blockc_codegen.kernel = #blockc_codegen.kernel<gemv>}
  %view = memref.subview %a[0] [32] [1] : memref<64xf32> to memref<32xf32, strided<[1]>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c32, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %v = memref.load %view[%bx] : memref<32xf32, strided<[1]>>
    memref.store %v, %y[%bx] : memref<64xf32>
    gpu.terminator
  } {blockc_codegen.kernel = #blockc_codegen.kernel<gemv>}
  return
}

memref.global "private" @table : memref<64xf32> = uninitialized

// CHECK-LABEL: func.func @unknown_buffer
// CHECK-COUNT-2: gpu.launch blocks
func.func @unknown_buffer(%x: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %t = memref.get_global @table : memref<64xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c32, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%bx] : memref<64xf32>
    memref.store %v, %t[%bx] : memref<64xf32>
    gpu.terminator
  } {blockc_codegen.kernel = #blockc_codegen.kernel<gemv>}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c32, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%bx] : memref<64xf32>
    memref.store %v, %x[%bx] : memref<64xf32>
    gpu.terminator
  } {blockc_codegen.kernel = #blockc_codegen.kernel<gemv>}
  return
}

// CHECK-LABEL: func.func @other_threads
// CHECK-COUNT-2: gpu.launch blocks
func.func @other_threads(%x: memref<64xf32>, %y: memref<64xf32>, %z: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c32, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%bx] : memref<64xf32>
    memref.store %v, %y[%bx] : memref<64xf32>
    gpu.terminator
  } {blockc_codegen.kernel = #blockc_codegen.kernel<gemv>}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c32, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%bx] : memref<64xf32>
    memref.store %v, %z[%bx] : memref<64xf32>
    gpu.terminator
  } {blockc_codegen.kernel = #blockc_codegen.kernel<gemv>}
  return
}

// CHECK-LABEL: func.func @other_kind
// CHECK-COUNT-2: gpu.launch blocks
func.func @other_kind(%x: memref<64xf32>, %y: memref<64xf32>, %z: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c32, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%bx] : memref<64xf32>
    memref.store %v, %y[%bx] : memref<64xf32>
    gpu.terminator
  } {blockc_codegen.kernel = #blockc_codegen.kernel<row_reduction>}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c32, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%bx] : memref<64xf32>
    memref.store %v, %z[%bx] : memref<64xf32>
    gpu.terminator
  } {blockc_codegen.kernel = #blockc_codegen.kernel<row_reduction>}
  return
}

// CHECK-LABEL: func.func @block_id_op
// CHECK-COUNT-2: gpu.launch blocks
func.func @block_id_op(%x: memref<64xf32>, %y: memref<64xf32>, %z: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c32, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %id = gpu.block_id x
    %v = memref.load %x[%id] : memref<64xf32>
    memref.store %v, %y[%id] : memref<64xf32>
    gpu.terminator
  } {blockc_codegen.kernel = #blockc_codegen.kernel<gemv>}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c32, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%bx] : memref<64xf32>
    memref.store %v, %z[%bx] : memref<64xf32>
    gpu.terminator
  } {blockc_codegen.kernel = #blockc_codegen.kernel<gemv>}
  return
}
