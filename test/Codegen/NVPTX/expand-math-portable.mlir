// RUN: blockc-opt %s --blockc-gpu-expand-math=portable=true | FileCheck %s --implicit-check-not=llvm.inline_asm

// With `portable` (the GPU emulator), the ops that have a native PTX
// instruction stay math ops, rsqrt becomes 1 / math.sqrt, and the
// polynomials (here exp) are the same as for PTX: no inline assembly.

// CHECK-LABEL: func.func @portable
// CHECK-SAME:    (%[[X:.+]]: f32, %[[D:.+]]: f64, %[[M:.+]]: memref<8xf32>, %[[MD:.+]]: memref<1xf64>)
// CHECK:         gpu.launch
// CHECK:           %[[S:.+]] = math.sqrt %[[X]] : f32
// CHECK-NEXT:      %[[R:.+]] = arith.divf %{{.+}}, %[[S]] : f32
// CHECK:           math.fma %[[X]], %[[X]], %[[X]] : f32
// CHECK:           math.sqrt %[[X]] : f32
// CHECK:           math.absf %[[X]] : f32
// CHECK:           math.floor %[[X]] : f32
// CHECK:           math.ceil %[[X]] : f32
// CHECK:           math.roundeven %[[D]] : f64
// CHECK-NOT:       math.exp
// CHECK:           memref.store %{{.+}}, %[[M]]
// CHECK:           gpu.terminator
func.func @portable(%x: f32, %d: f64, %m: memref<8xf32>, %md: memref<1xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %r = math.rsqrt %x : f32
    memref.store %r, %m[%c0] : memref<8xf32>
    %f = math.fma %x, %x, %x : f32
    memref.store %f, %m[%c1] : memref<8xf32>
    %s = math.sqrt %x : f32
    memref.store %s, %m[%c2] : memref<8xf32>
    %a = math.absf %x : f32
    memref.store %a, %m[%c3] : memref<8xf32>
    %fl = math.floor %x : f32
    memref.store %fl, %m[%c4] : memref<8xf32>
    %ce = math.ceil %x : f32
    memref.store %ce, %m[%c5] : memref<8xf32>
    %re = math.roundeven %d : f64
    memref.store %re, %md[%c0] : memref<1xf64>
    %e = math.exp %x : f32
    memref.store %e, %m[%c6] : memref<8xf32>
    gpu.terminator
  }
  return
}
