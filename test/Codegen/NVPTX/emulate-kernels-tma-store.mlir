// RUN: blockc-opt %s --blockc-gpu-emulate-kernels | FileCheck %s

// A TMA store under the emulator: the async-proxy fence, the store (its
// coordinates through a 2 x i32 stack buffer, innermost first; the source
// is the staging tile's address in the block's shared memory, the map the
// kernel's pointer argument), the bulk group's commit and its wait (the
// number of groups left pending, 0) are runtime calls
// (include/blockc/Runtime/EmulatorRuntime.h); a fence of another proxy
// kind stays a no-op.

// CHECK-DAG: func.func private @blockcEmuTmaStore(!llvm.ptr, !llvm.ptr, !llvm.ptr, i32, !llvm.ptr, !llvm.ptr)
// CHECK-DAG: func.func private @blockcEmuBulkCommit(!llvm.ptr, !llvm.ptr)
// CHECK-DAG: func.func private @blockcEmuBulkWait(!llvm.ptr, i32, !llvm.ptr)
// CHECK-DAG: func.func private @blockcEmuFenceProxyAsync(!llvm.ptr, !llvm.ptr)
// CHECK:     func.func @__blockc_emu_m_k(%[[PARAMS:.+]]: !llvm.ptr, %[[THREAD:.+]]: !llvm.ptr, %[[SHARED:.+]]: !llvm.ptr, %{{.+}}: i64)
// CHECK-DAG:   %[[COORDS:.+]] = memref.alloca() : memref<2xi32>
// CHECK:       %[[SLOT:.+]] = llvm.getelementptr inbounds %[[PARAMS]][0]
// CHECK:       %[[MAPADDR:.+]] = llvm.load %[[SLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK:       %[[MAP:.+]] = llvm.load %[[MAPADDR]] : !llvm.ptr -> !llvm.ptr
// CHECK:       memref.store %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}] : memref<16x32xbf16>
// CHECK:       call @blockcEmuFenceProxyAsync(%[[THREAD]], %{{.+}})
// CHECK:       call @blockcEmuBarrier(%[[THREAD]], %{{.+}})
// CHECK:       memref.store %{{.+}}, %[[COORDS]][%{{.+}}] : memref<2xi32>
// CHECK:       memref.store %{{.+}}, %[[COORDS]][%{{.+}}] : memref<2xi32>
// CHECK:       call @blockcEmuTmaStore(%[[THREAD]], %{{.+}}, %[[MAP]], %c2_i32, %{{.+}}, %{{.+}})
// CHECK:       call @blockcEmuBulkCommit(%[[THREAD]], %{{.+}})
// CHECK:       %[[ZERO:.+]] = arith.constant 0 : i32
// CHECK:       call @blockcEmuBulkWait(%[[THREAD]], %[[ZERO]], %{{.+}})
// CHECK-NOT:   call
// CHECK:       return
// CHECK-NOT:   nvgpu.
// CHECK-NOT:   nvvm.
!map = !nvgpu.tensormap.descriptor<tensor = memref<16x32xbf16, #gpu.address_space<workgroup>>, swizzle = none, l2promo = none, oob = zero, interleave = none>
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%p: !llvm.ptr)
        workgroup(%s: memref<16x32xbf16, #gpu.address_space<workgroup>>) kernel {
      %map = builtin.unrealized_conversion_cast %p : !llvm.ptr to !map
      %c0 = arith.constant 0 : index
      %c8 = arith.constant 8 : index
      %one = arith.constant 1.0 : bf16
      memref.store %one, %s[%c0, %c0] : memref<16x32xbf16, #gpu.address_space<workgroup>>
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      gpu.barrier
      nvgpu.tma.async.store %s to %map[%c8, %c0] : memref<16x32xbf16, #gpu.address_space<workgroup>> -> !map
      nvvm.cp.async.bulk.commit.group
      nvvm.cp.async.bulk.wait_group 0 {read}
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<alias>}
      gpu.return
    }
  }
}
