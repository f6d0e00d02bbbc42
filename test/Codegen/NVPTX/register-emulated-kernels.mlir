// RUN: blockc-opt %s -split-input-file --blockc-gpu-register-emulated-kernels | FileCheck %s

// Every llvm.func carrying #blockc_codegen.emulated_kernel is registered by
// a constructor (priority 101, before gpu.binary's module loads at 123) and
// unregistered by a destructor; the attribute is consumed.

// CHECK-DAG: llvm.mlir.global internal constant @[[MOD:__blockc_emu_name_[0-9]+]]("m#00ff\00")
// CHECK-DAG: llvm.mlir.global internal constant @[[K1:__blockc_emu_name_[0-9]+]]("k1\00")
// CHECK-DAG: llvm.mlir.global internal constant @[[K2:__blockc_emu_name_[0-9]+]]("k2\00")
// CHECK:     llvm.func @__blockc_emu_m_k1(%{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: i64) {
// CHECK:     llvm.func @__blockc_emu_m_k2(
// CHECK-NOT:   blockc_codegen
// CHECK:     llvm.func @blockcEmuRegisterKernel(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i32, i32, i32, i32)
// CHECK:     llvm.func @blockcEmuUnregisterKernel(!llvm.ptr)
// CHECK:     llvm.func internal @__blockc_emu_register() {
// CHECK:       %[[F1:.+]] = llvm.mlir.addressof @__blockc_emu_m_k1 : !llvm.ptr
// CHECK-DAG:   %[[S1:.+]] = llvm.mlir.constant(8320 : i64) : i64
// CHECK-DAG:   %[[M1:.+]] = llvm.mlir.constant(166912 : i64) : i64
// CHECK-DAG:   %[[SYNC:.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-DAG:   %[[BX:.+]] = llvm.mlir.constant(16 : i32) : i32
// CHECK-DAG:   %[[BY:.+]] = llvm.mlir.constant(16 : i32) : i32
// CHECK-DAG:   %[[BZ:.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK:       llvm.call @blockcEmuRegisterKernel(%{{.+}}, %{{.+}}, %[[F1]], %[[S1]], %[[M1]], %[[SYNC]], %[[BX]], %[[BY]], %[[BZ]])
// CHECK:       %[[F2:.+]] = llvm.mlir.addressof @__blockc_emu_m_k2 : !llvm.ptr
// CHECK:       llvm.call @blockcEmuRegisterKernel(%{{.+}}, %{{.+}}, %[[F2]], {{.+}})
// CHECK:       llvm.return
// CHECK:     llvm.func internal @__blockc_emu_unregister() {
// CHECK:       %[[G1:.+]] = llvm.mlir.addressof @__blockc_emu_m_k1 : !llvm.ptr
// CHECK:       llvm.call @blockcEmuUnregisterKernel(%[[G1]])
// CHECK:       %[[G2:.+]] = llvm.mlir.addressof @__blockc_emu_m_k2 : !llvm.ptr
// CHECK:       llvm.call @blockcEmuUnregisterKernel(%[[G2]])
// CHECK:     llvm.mlir.global_ctors ctors = [@other_ctor, @__blockc_emu_register], priorities = [65535 : i32, 101 : i32], data = [#llvm.zero, #llvm.zero]
// CHECK:     llvm.mlir.global_dtors dtors = [@__blockc_emu_unregister], priorities = [101 : i32], data = [#llvm.zero]
module {
  llvm.func @__blockc_emu_m_k1(%p: !llvm.ptr, %t: !llvm.ptr, %s: !llvm.ptr, %n: i64) attributes {blockc_codegen.emulated_kernel = #blockc_codegen.emulated_kernel<module = "m#00ff", kernel = "k1", static_shared = 8320, max_shared = 166912, synchronizes = true, block_x = 16, block_y = 16, block_z = 1>} {
    llvm.return
  }
  llvm.func @__blockc_emu_m_k2(%p: !llvm.ptr, %t: !llvm.ptr, %s: !llvm.ptr, %n: i64) attributes {blockc_codegen.emulated_kernel = #blockc_codegen.emulated_kernel<module = "m#00ff", kernel = "k2", static_shared = 0, max_shared = 166912, synchronizes = false, block_x = 0, block_y = 0, block_z = 0>} {
    llvm.return
  }
  llvm.func @other_ctor() {
    llvm.return
  }
  llvm.mlir.global_ctors ctors = [@other_ctor], priorities = [65535 : i32], data = [#llvm.zero]
}

// -----

// Nothing to register: the module is unchanged.
// CHECK-LABEL: llvm.func @f()
// CHECK-NOT:   __blockc_emu_register
// CHECK-NOT:   global_ctors
module {
  llvm.func @f() {
    llvm.return
  }
}
