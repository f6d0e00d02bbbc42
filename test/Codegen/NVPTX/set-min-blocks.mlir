// RUN: blockc-opt %s --pass-pipeline='builtin.module(gpu.module(blockc-gpu-set-min-blocks))' | FileCheck %s

// A kernel that reallocates registers (setmaxnreg) gets nvvm.minctasm = 1
// (PTX .minnctapersm 1: ptxas then knows its register count at entry and
// applies setmaxnreg); other kernels, and one that has the attribute
// already, are left alone.
// CHECK-LABEL: gpu.module @kernels
// CHECK:         gpu.func @reallocates() kernel attributes {nvvm.minctasm = 1 : i32}
// CHECK:         gpu.func @plain() kernel {
// CHECK:         gpu.func @given() kernel attributes {nvvm.minctasm = 2 : i32}
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @reallocates() kernel {
      nvvm.setmaxregister increase 240
      gpu.return
    }
    gpu.func @plain() kernel {
      gpu.return
    }
    gpu.func @given() kernel attributes {nvvm.minctasm = 2 : i32} {
      nvvm.setmaxregister decrease 24
      gpu.return
    }
  }
}
