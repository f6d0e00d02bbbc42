// Every -emit stage of the CPU driver on a small block: the IR dialects each
// stage leaves, and the LLVM IR / assembly / object outputs. The ISA is
// pinned (nothing runs): with AVX-512 the head dim 8 attention is the
// attention kernel on 8-lane vectors, whatever the host.

// RUN: blockc %S/Inputs/tiny.mlir -isa=avx512 -emit=transformer | FileCheck %s --check-prefix=TRANSFORMER
// RUN: blockc %S/Inputs/tiny.mlir -isa=avx512 -emit=linalg | FileCheck %s --check-prefix=LINALG --implicit-check-not=transformer.
// RUN: blockc %S/Inputs/tiny.mlir -isa=avx512 -emit=buffers | FileCheck %s --check-prefix=BUFFERS --implicit-check-not=linalg.generic
// RUN: blockc %S/Inputs/tiny.mlir -isa=avx512 -emit=llvm-mlir | FileCheck %s --check-prefix=LLVMMLIR
// The verifier after every pass (not once per part of the pipeline): the
// same IR.
// RUN: blockc %S/Inputs/tiny.mlir -isa=avx512 -emit=llvm-mlir --verify-each | FileCheck %s --check-prefix=LLVMMLIR
// RUN: blockc %S/Inputs/tiny.mlir -isa=avx512 -emit=llvm-ir | FileCheck %s --check-prefix=LLVMIR
// RUN: blockc %S/Inputs/tiny.mlir -isa=avx512 -emit=asm -o - | FileCheck %s --check-prefix=ASM
// RUN: rm -rf %t && mkdir -p %t && blockc %S/Inputs/tiny.mlir -isa=avx512 -emit=obj -o %t/b.o --header=%t/api.h
// RUN: test -s %t/b.o && FileCheck %s --check-prefix=HDR --input-file=%t/api.h

// TRANSFORMER: transformer.block
// LINALG-LABEL: func.func @forward
// LINALG: math.rsqrt
// LINALG: tensor.expand_shape
// LINALG: linalg.generic
// LINALG: scf.forall {{.*}} -> (tensor<?x?x4x8xf32>)
// LINALG: vector<8xf32>
// LINALG: kernel = #blockc_codegen.kernel<attention>
// LINALG: tensor.collapse_shape
// LINALG: scf.forall
// The weights' packing is in the prepare function's parts, one per weight,
// which it calls.
// LINALG-LABEL: func.func @forward_prepare(
// LINALG: call @forward_prepare_{{[0-9]+}}(
// LINALG-LABEL: func.func @forward_prepare_{{[0-9]+}}(
// LINALG: scf.forall
// LINALG: vector.transfer_read
// BUFFERS-LABEL: func.func @forward
// BUFFERS: memref.alloc
// BUFFERS: scf.for
// LLVMMLIR: llvm.func @forward(
// LLVMMLIR: llvm.func @_mlir_ciface_forward(
// LLVMMLIR-NOT: transformer.weight_name
// LLVMIR: define {{.*}}@_mlir_ciface_forward(ptr
// ASM: _mlir_ciface_forward:
// HDR: void _mlir_ciface_forward(
