// RUN: blockc-opt %s --blockc-cpu-pipeline | FileCheck %s

// The whole CPU pipeline leaves only the LLVM dialect: the entry function,
// its C-interface wrapper (result descriptor first), and malloc; math lowers to LLVM intrinsics.
// CHECK-NOT: transformer.
// CHECK-NOT: linalg.
// CHECK-NOT: memref.
// CHECK-NOT: scf.
// CHECK-NOT: func.func
// CHECK-DAG: llvm.func @malloc
// CHECK: llvm.func @forward(
// CHECK: llvm.intr.sqrt
// CHECK: llvm.intr.exp
// CHECK: llvm.func @_mlir_ciface_forward(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
func.func @forward(%x: tensor<?x?x16xf32>, %g: tensor<16xf32>) -> tensor<?x?x16xf32> {
  %n = transformer.rms_norm %x, %g : tensor<?x?x16xf32>, tensor<16xf32>
  %a = transformer.activation <gelu_tanh> %n : tensor<?x?x16xf32>
  return %a : tensor<?x?x16xf32>
}
