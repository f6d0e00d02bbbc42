// RUN: blockc-opt %s --split-input-file --blockc-merge-identical-functions | FileCheck %s

// Two private functions with the same type and body (names of values and
// locations aside) are one: the first stays and every call of the second
// calls it. A body that differs in one attribute, one type or one operand
// stays apart, and so do public functions.
// CHECK-LABEL: func.func @entry(
// CHECK-NEXT:    call @k(%arg0, %arg1)
// CHECK-NEXT:    call @k(%arg1, %arg0)
// CHECK-NEXT:    call @k_const(%arg0, %arg1)
// CHECK-NEXT:    call @k_operand(%arg0, %arg1)
// CHECK-NEXT:    call @pub(%arg0, %arg1)
// CHECK-NEXT:    call @pub_copy(%arg0, %arg1)
// CHECK-NEXT:    return
// CHECK-DAG:   func.func private @k(
// CHECK-DAG:   func.func private @k_const(
// CHECK-DAG:   func.func private @k_operand(
// CHECK-DAG:   func.func @pub(
// CHECK-DAG:   func.func @pub_copy(
// CHECK-NOT:   func.func private @k_copy
func.func @entry(%a: memref<4xf32>, %b: memref<4xf32>) {
  call @k(%a, %b) : (memref<4xf32>, memref<4xf32>) -> ()
  call @k_copy(%b, %a) : (memref<4xf32>, memref<4xf32>) -> ()
  call @k_const(%a, %b) : (memref<4xf32>, memref<4xf32>) -> ()
  call @k_operand(%a, %b) : (memref<4xf32>, memref<4xf32>) -> ()
  call @pub(%a, %b) : (memref<4xf32>, memref<4xf32>) -> ()
  call @pub_copy(%a, %b) : (memref<4xf32>, memref<4xf32>) -> ()
  return
}
func.func private @k(%x: memref<4xf32>, %y: memref<4xf32>) attributes {no_inline} {
  %c1 = arith.constant 1 : index
  %v = memref.load %x[%c1] : memref<4xf32>
  memref.store %v, %y[%c1] : memref<4xf32>
  return
}
func.func private @k_copy(%p: memref<4xf32>, %q: memref<4xf32>) attributes {no_inline} {
  %one = arith.constant 1 : index
  %w = memref.load %p[%one] : memref<4xf32> loc("elsewhere")
  memref.store %w, %q[%one] : memref<4xf32>
  return
}
func.func private @k_const(%x: memref<4xf32>, %y: memref<4xf32>) attributes {no_inline} {
  %c2 = arith.constant 2 : index
  %v = memref.load %x[%c2] : memref<4xf32>
  memref.store %v, %y[%c2] : memref<4xf32>
  return
}
func.func private @k_operand(%x: memref<4xf32>, %y: memref<4xf32>) attributes {no_inline} {
  %c1 = arith.constant 1 : index
  %v = memref.load %y[%c1] : memref<4xf32>
  memref.store %v, %y[%c1] : memref<4xf32>
  return
}
func.func @pub(%x: memref<4xf32>, %y: memref<4xf32>) {
  return
}
func.func @pub_copy(%x: memref<4xf32>, %y: memref<4xf32>) {
  return
}

// -----

// Different types or argument attributes keep functions apart.
// CHECK-LABEL: func.func @types(
// CHECK-NEXT:    call @f32(
// CHECK-NEXT:    call @f16(
// CHECK-NEXT:    call @f32_attr(
// CHECK-DAG:   func.func private @f32(
// CHECK-DAG:   func.func private @f16(
// CHECK-DAG:   func.func private @f32_attr(
func.func @types(%a: memref<4xf32>, %h: memref<4xf16>) {
  call @f32(%a) : (memref<4xf32>) -> ()
  call @f16(%h) : (memref<4xf16>) -> ()
  call @f32_attr(%a) : (memref<4xf32>) -> ()
  return
}
func.func private @f32(%x: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<4xf32>
  memref.store %v, %x[%c0] : memref<4xf32>
  return
}
func.func private @f16(%x: memref<4xf16>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<4xf16>
  memref.store %v, %x[%c0] : memref<4xf16>
  return
}
func.func private @f32_attr(%x: memref<4xf32> {llvm.noalias}) {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<4xf32>
  memref.store %v, %x[%c0] : memref<4xf32>
  return
}
