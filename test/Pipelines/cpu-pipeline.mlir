// RUN: blockc-opt %s --blockc-cpu-pipeline="isa=avx512" \
// RUN:   | FileCheck %s --implicit-check-not=transformer. --implicit-check-not=linalg. \
// RUN:     --implicit-check-not=memref. --implicit-check-not=scf. --implicit-check-not=func.func \
// RUN:     --implicit-check-not=vector. --implicit-check-not=blockc_codegen
// The LLVM dialect it prints translates with upstream's mlir-translate,
// which knows none of blockc's dialects:
// RUN: blockc-opt %s --blockc-cpu-pipeline="isa=avx2" | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVMIR
// LLVMIR: define {{.*}} @_mlir_ciface_forward(
// The same checks reject a module that stopped earlier (they can fail):
// RUN: blockc-opt %s --blockc-cpu-lower-to-linalg-pipeline="isa=avx512" --blockc-cpu-bufferize-pipeline="isa=avx512" \
// RUN:   | not FileCheck %s --implicit-check-not=transformer. --implicit-check-not=linalg. \
// RUN:     --implicit-check-not=memref. --implicit-check-not=scf. --implicit-check-not=func.func \
// RUN:     --implicit-check-not=vector. --implicit-check-not=omp.

// The whole CPU pipeline leaves only the LLVM dialect: the entry function,
// its C-interface wrapper (result descriptor first), and malloc; math lowers
// to LLVM intrinsics. No op of another dialect remains anywhere in the
// output (--implicit-check-not applies to every line, unlike a leading
// CHECK-NOT, which only covers the lines before the first match).
// CHECK-DAG: llvm.func @malloc
// CHECK: llvm.func @forward(
// CHECK: llvm.func @_mlir_ciface_forward(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// (D = 12 is no multiple of the vector width: the norm takes the generic
// linalg path, not the kernel of blockc-cpu-lower-norms. Its elementwise
// part and the activation are ops left between kernels:
// blockc-cpu-tile-elementwise makes them parallel loops, each outlined
// into a private function, whose OpenMP ops stay in the output for
// mlir-translate.)
// CHECK: llvm.func internal @forward_kernel
// CHECK: omp.parallel
// CHECK-DAG: llvm.intr.sqrt
// CHECK-DAG: llvm.intr.exp
func.func @forward(%x: tensor<?x?x12xf32>, %g: tensor<12xf32>) -> tensor<?x?x12xf32> {
  %n = transformer.rms_norm %x, %g : tensor<?x?x12xf32>, tensor<12xf32>
  %a = transformer.activation <gelu_tanh> %n : tensor<?x?x12xf32>
  return %a : tensor<?x?x12xf32>
}
