// RUN: blockc-opt %s --blockc-cpu-fma-to-fmuladd | FileCheck %s --implicit-check-not=math.fma
// RUN: blockc-opt %s --blockc-cpu-fma-to-fmuladd --convert-math-to-llvm \
// RUN:   --convert-func-to-llvm --reconcile-unrealized-casts \
// RUN:   | mlir-translate --mlir-to-llvmir \
// RUN:   | llc -O2 -mtriple=x86_64 -mattr=-avx | FileCheck %s --check-prefix=SSE
// RUN: blockc-opt %s --blockc-cpu-fma-to-fmuladd --convert-math-to-llvm \
// RUN:   --convert-func-to-llvm --reconcile-unrealized-casts \
// RUN:   | mlir-translate --mlir-to-llvmir \
// RUN:   | llc -O2 -mtriple=x86_64 -mattr=+avx2,+fma | FileCheck %s --check-prefix=FMA

// Vectors and scalars: every math.fma becomes llvm.intr.fmuladd with the
// same operands in the same order.
// CHECK-LABEL: func.func @vec
// CHECK-SAME: (%[[A:.*]]: vector<4xf32>, %[[B:.*]]: vector<4xf32>, %[[C:.*]]: vector<4xf32>)
// CHECK: %[[R:.*]] = llvm.intr.fmuladd(%[[A]], %[[B]], %[[C]]) : (vector<4xf32>, vector<4xf32>, vector<4xf32>) -> vector<4xf32>
// CHECK: return %[[R]]
// Without FMA instructions a multiply and an add, no libm call; with FMA
// one fused instruction.
// SSE-LABEL: vec:
// SSE-NOT: fmaf
// SSE: mulps
// SSE: addps
// SSE-NOT: fmaf
// SSE-LABEL: scalar:
// SSE-NOT: fmaf
// SSE: mulss
// SSE: addss
// SSE-NOT: fmaf
// FMA-LABEL: vec:
// FMA: vfmadd{{...}}ps
// FMA-LABEL: scalar:
// FMA: vfmadd{{...}}ss
func.func @vec(%a: vector<4xf32>, %b: vector<4xf32>, %c: vector<4xf32>) -> vector<4xf32> {
  %r = math.fma %a, %b, %c : vector<4xf32>
  return %r : vector<4xf32>
}

// CHECK-LABEL: func.func @scalar
// CHECK-SAME: (%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32)
// CHECK: llvm.intr.fmuladd(%[[A]], %[[B]], %[[C]]) : (f32, f32, f32) -> f32
func.func @scalar(%a: f32, %b: f32, %c: f32) -> f32 {
  %r = math.fma %a, %b, %c : f32
  return %r : f32
}
