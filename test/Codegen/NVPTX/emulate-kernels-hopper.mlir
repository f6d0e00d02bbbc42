// RUN: blockc-opt %s --blockc-gpu-emulate-kernels | FileCheck %s

// The Hopper ops of a kernel under the emulator: the mbarrier group lives
// in the block's shared memory after the static attributions (8192 bytes
// here), 8 bytes per barrier; init, arrive.expect_tx, the parity wait and
// the TMA load (its coordinates through a 2 x i32 stack buffer, innermost
// first) are runtime calls; a matrix descriptor is convert-nvgpu-to-nvvm's
// encoding of the shared-memory offset (start >> 4 in 14 bits | 128B
// swizzle (1) << 62 | stride 1024 >> 4 << 32 | leading 64 x 128 >> 4 << 16
// = 4611686293338849280); the accumulator a vector of this thread's N / 2
// = 8 floats, carried by scf.for, each m64n16k16 a runtime call on it
// (bf16: type 0, no transposes); the store goes to the PTX ISA's fragment
// positions of the thread (warp (tid / 32) % 4, lane). wgmma's asynchrony
// is counted per thread: each warpgroup.mma commits its MMAs as a group and
// waits to its waitGroup depth (1) (blockcEmuWgmmaCommit), the explicit
// wgmma.wait_group 0 is blockcEmuWgmmaWait, and the store first checks that
// the group that last wrote its accumulator is not in flight
// (blockcEmuWgmmaRead). The accumulator that the init, the loop and the
// wgmma carry is one (number 0: the same registers on a GPU), written by
// the init (blockcEmuWgmmaWrite), the wgmma and read by the store.

// CHECK-DAG: func.func private @blockcEmuMbarrierInit(!llvm.ptr, !llvm.ptr, i32, !llvm.ptr)
// CHECK-DAG: func.func private @blockcEmuMbarrierArrive(!llvm.ptr, !llvm.ptr, i32, !llvm.ptr)
// CHECK-DAG: func.func private @blockcEmuMbarrierTryWaitParity(!llvm.ptr, !llvm.ptr, i32, !llvm.ptr)
// CHECK-DAG: func.func private @blockcEmuTmaLoad(!llvm.ptr, !llvm.ptr, !llvm.ptr, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr)
// CHECK-DAG: func.func private @blockcEmuWgmma(!llvm.ptr, i32, i64, i64, i32, i32, i32, !llvm.ptr, i32, !llvm.ptr)
// CHECK-DAG: func.func private @blockcEmuWgmmaRead(!llvm.ptr, i32, !llvm.ptr)
// CHECK-DAG: func.func private @blockcEmuWgmmaWrite(!llvm.ptr, i32, !llvm.ptr)
// CHECK:     func.func @__blockc_emu_m_k(%[[PARAMS:.+]]: !llvm.ptr, %[[THREAD:.+]]: !llvm.ptr, %[[SHARED:.+]]: !llvm.ptr, %{{.+}}: i64)
// CHECK-SAME:  static_shared = 8208, max_shared = 232448, synchronizes = true
// CHECK-DAG:   %[[ACCBUF:.+]] = memref.alloca() : memref<8xf32>
// CHECK-DAG:   %[[COORDS:.+]] = memref.alloca() : memref<2xi32>
// The map: the first parameter, a pointer.
// CHECK:       %[[SLOT:.+]] = llvm.getelementptr inbounds %[[PARAMS]][0]
// CHECK:       %[[MAPADDR:.+]] = llvm.load %[[SLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK:       %[[MAP:.+]] = llvm.load %[[MAPADDR]] : !llvm.ptr -> !llvm.ptr
// CHECK:       %[[BARS:.+]] = llvm.getelementptr %[[SHARED]][8192] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK:       %[[B1:.+]] = llvm.getelementptr %[[BARS]][%{{.+}}] : (!llvm.ptr, i64) -> !llvm.ptr, i64
// CHECK:       call @blockcEmuMbarrierInit(%[[THREAD]], %[[B1]], %{{.+}}, %{{.+}})
// CHECK:       call @blockcEmuMbarrierArrive(%[[THREAD]], %{{.+}}, %{{.+}}, %{{.+}})
// CHECK:       memref.store %{{.+}}, %[[COORDS]][%{{.+}}] : memref<2xi32>
// CHECK:       memref.store %{{.+}}, %[[COORDS]][%{{.+}}] : memref<2xi32>
// CHECK:       call @blockcEmuTmaLoad(%[[THREAD]], %{{.+}}, %[[MAP]], %c2_i32, %{{.+}}, %{{.+}}, %{{.+}})
// CHECK:       %[[PAR:.+]] = arith.extui %true : i1 to i32
// CHECK:       call @blockcEmuMbarrierTryWaitParity(%[[THREAD]], %{{.+}}, %[[PAR]], %{{.+}})
// CHECK:       %[[AT:.+]] = llvm.ptrtoint %{{.+}} : !llvm.ptr to i64
// CHECK:       %[[BASE:.+]] = llvm.ptrtoint %[[SHARED]] : !llvm.ptr to i64
// CHECK:       %[[OFF:.+]] = arith.subi %[[AT]], %[[BASE]] : i64
// CHECK:       %[[START:.+]] = arith.shrui %[[OFF]], %c4_i64
// CHECK:       %[[START14:.+]] = arith.andi %[[START]], %c16383_i64
// CHECK:       %[[DESCA:.+]] = arith.ori %[[START14]], %c4611686293338849280_i64
// CHECK:       %[[DESCB:.+]] = arith.ori %{{.+}}, %c4611686293338849280_i64
// CHECK:       call @blockcEmuWgmmaWrite(%[[THREAD]], %c0_i32{{[_0-9]*}}, %{{.+}})
// CHECK:       %[[ACC:.+]] = scf.for {{.+}} iter_args(%[[IT:.+]] = %cst) -> (vector<8xf32>)
// CHECK:         vector.store %{{.+}}, %[[ACCBUF]]
// CHECK:         %[[DA:.+]] = arith.addi %[[DESCA]], %c0_i64
// CHECK:         %[[DB:.+]] = arith.addi %[[DESCB]], %c0_i64
// CHECK:         func.call @blockcEmuWgmma(%[[THREAD]], %c0_i32{{[_0-9]*}}, %[[DA]], %[[DB]], %c16_i32, %c0_i32{{.*}}, %c0_i32{{.*}}, %{{.+}}, %c0_i32{{[_0-9]*}}, %[[SITE:[0-9]+]])
// CHECK:         %[[DEPTH:.+]] = arith.constant 1 : i32
// CHECK-NEXT:    func.call @blockcEmuWgmmaCommit(%[[THREAD]], %[[DEPTH]], %[[SITE]])
// CHECK:         %[[NEW:.+]] = vector.load %[[ACCBUF]]
// CHECK:         scf.yield %{{.+}} : vector<8xf32>
// CHECK:       %[[ZERO:.+]] = arith.constant 0 : i32
// CHECK:       call @blockcEmuWgmmaWait(%[[THREAD]], %[[ZERO]], %{{.+}})
// CHECK:       call @blockcEmuWgmmaRead(%[[THREAD]], %c0_i32{{[_0-9]*}}, %{{.+}})
// CHECK-COUNT-8: memref.store %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}] : memref<64x16xf32>
// CHECK-NOT:   nvgpu.
// CHECK-NOT:   nvvm.wgmma
!map = !nvgpu.tensormap.descriptor<tensor = memref<64x64xbf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
!acc = !nvgpu.warpgroup.accumulator<fragmented = vector<64x16xf32>>
!da = !nvgpu.warpgroup.descriptor<tensor = memref<64x16xbf16, #gpu.address_space<workgroup>>>
!db = !nvgpu.warpgroup.descriptor<tensor = memref<16x16xbf16, #gpu.address_space<workgroup>>>
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%p: !llvm.ptr, %out: memref<64x16xf32>)
        workgroup(%s: memref<64x64xbf16, #gpu.address_space<workgroup>>) kernel {
      %map = builtin.unrealized_conversion_cast %p : !llvm.ptr to !map
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c8192 = arith.constant 8192 : index
      %ticks = arith.constant 1000 : index
      %bars = nvgpu.mbarrier.create -> !bars
      nvgpu.mbarrier.init %bars[%c1], %c1 : !bars
      nvgpu.mbarrier.arrive.expect_tx %bars[%c1], %c8192 : !bars
      nvgpu.tma.async.load %map[%c0, %c2], %bars[%c1] to %s : !map, !bars -> memref<64x64xbf16, #gpu.address_space<workgroup>>
      %true = arith.constant true
      nvgpu.mbarrier.try_wait.parity %bars[%c1], %true, %ticks : !bars
      %da = nvgpu.warpgroup.generate.descriptor %s, %map : memref<64x64xbf16, #gpu.address_space<workgroup>>, !map -> !da
      %db = nvgpu.warpgroup.generate.descriptor %s, %map : memref<64x64xbf16, #gpu.address_space<workgroup>>, !map -> !db
      %acc0 = nvgpu.warpgroup.mma.init.accumulator -> !acc
      %c3 = arith.constant 3 : index
      %acc = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %acc0) -> (!acc) {
        %n = nvgpu.warpgroup.mma %da, %db, %a : !da, !db, !acc -> !acc
        scf.yield %n : !acc
      }
      nvvm.wgmma.wait.group.sync.aligned 0
      nvgpu.warpgroup.mma.store %acc, %out : !acc to memref<64x16xf32>
      gpu.return
    }
  }
}
