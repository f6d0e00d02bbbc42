// RUN: blockc-opt %s --blockc-gpu-emulate-kernels | FileCheck %s

// The warp-specialised kernels' synchronisation under the emulator:
// setmaxnreg changes nothing on the host and disappears; bar.warp.sync
// (full mask) is a rendezvous of the warp's 32 lanes, an idx shuffle of
// lane 0 whose result is unused; a named barrier (bar.sync id, count) is
// blockcEmuNamedBarrier with its id and count. All three make the kernel
// synchronizing (fibers).

// CHECK-DAG: func.func private @blockcEmuNamedBarrier(!llvm.ptr, i32, i32, !llvm.ptr)
// CHECK-DAG: func.func private @blockcEmuShuffle32(!llvm.ptr, i32, i32, i32, i32, !llvm.ptr) -> i64
// CHECK:     func.func @__blockc_emu_m_k(%{{.+}}: !llvm.ptr, %[[THREAD:.+]]: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: i64)
// CHECK-SAME:  synchronizes = true
// CHECK-NOT:   setmaxregister
// CHECK-DAG:   %[[ZERO:.+]] = arith.constant 0 : i32
// CHECK-DAG:   %[[W32:.+]] = arith.constant 32 : i32
// CHECK-DAG:   %[[IDX:.+]] = arith.constant 3 : i32
// CHECK:       call @blockcEmuShuffle32(%[[THREAD]], %[[ZERO]], %[[ZERO]], %[[W32]], %[[IDX]], %{{.+}})
// CHECK:       call @blockcEmuNamedBarrier(%[[THREAD]], %{{.+}}, %{{.+}}, %{{.+}}) : (!llvm.ptr, i32, i32, !llvm.ptr) -> ()
// CHECK-NOT:   nvvm.
// CHECK:       return
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k() kernel {
      %all = arith.constant -1 : i32
      %id = arith.constant 1 : i32
      %n = arith.constant 256 : i32
      nvvm.setmaxregister increase 232
      nvvm.bar.warp.sync %all : i32
      nvvm.barrier id = %id number_of_threads = %n
      gpu.return
    }
  }
}
