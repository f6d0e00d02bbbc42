// RUN: blockc-opt %s -split-input-file --blockc-gpu-emulate-kernels | FileCheck %s

// The tensor-core ops of a kernel become runtime calls: ldmatrix and
// mma.sync are warp collectives (the kernel synchronizes) whose fragments
// travel through stack buffers allocated once in the entry block; cp.async
// copies, groups and waits call the thread's copy queue.

// CHECK-DAG: llvm.mlir.global internal constant @[[LD:__blockc_emu_site_[0-9]+]]("nvgpu.ldmatrix at {{.*}}emulate-kernels-nvgpu.mlir:{{[0-9]+}}:{{[0-9]+}}\00")
// CHECK-DAG: llvm.mlir.global internal constant @[[MMA:__blockc_emu_site_[0-9]+]]("nvgpu.mma.sync at {{.*}}emulate-kernels-nvgpu.mlir:{{[0-9]+}}:{{[0-9]+}}\00")
// CHECK-DAG: func.func private @blockcEmuLdMatrix(!llvm.ptr, !llvm.ptr, !llvm.ptr, i32, i32, !llvm.ptr)
// CHECK-DAG: func.func private @blockcEmuMma(!llvm.ptr, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
// CHECK-DAG: func.func private @blockcEmuCpAsync(!llvm.ptr, !llvm.ptr, !llvm.ptr, i32, i32, !llvm.ptr)
// CHECK-DAG: func.func private @blockcEmuCpAsyncCommit(!llvm.ptr)
// CHECK-DAG: func.func private @blockcEmuCpAsyncWait(!llvm.ptr, i32, !llvm.ptr)
// CHECK:     func.func @__blockc_emu_m_k(%{{.+}}: !llvm.ptr, %[[THREAD:.+]]: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: i64)
// CHECK-SAME:  synchronizes = true
// One buffer per fragment of a call (the mma's C and D are both 4 f32),
// made in the entry block in reverse order of use: D, C, B, A, the
// ldmatrix result.
// CHECK:       %[[OUT:.+]] = memref.alloca() : memref<4xf32>
// CHECK-NEXT:  %[[C:.+]] = memref.alloca() : memref<4xf32>
// CHECK-NEXT:  %[[B:.+]] = memref.alloca() : memref<4xbf16>
// CHECK-NEXT:  %[[A:.+]] = memref.alloca() : memref<8xbf16>
// CHECK-NEXT:  %[[LD:.+]] = memref.alloca() : memref<8xbf16>
// 8 bf16 = 16 bytes, 6 of them read (3 elements); then the group and a
// wait that leaves one group pending.
// CHECK:       %[[SRCB:.+]] = arith.index_cast %{{.+}} : index to i32
// CHECK:       call @blockcEmuCpAsync(%[[THREAD]], %{{.+}}, %{{.+}}, %c16_i32{{.*}}, %[[SRCB]], %{{.+}})
// CHECK:       call @blockcEmuCpAsyncCommit(%[[THREAD]])
// CHECK:       call @blockcEmuCpAsyncWait(%[[THREAD]], %c1_i32{{.*}}, %{{.+}})
// ldmatrix.x4 (not transposed) into its buffer, reloaded as the fragment.
// CHECK:       call @blockcEmuLdMatrix(%[[THREAD]], %{{.+}}, %{{.+}}, %c4_i32{{.*}}, %c0_i32{{.*}}, %{{.+}})
// CHECK:       %[[AV:.+]] = vector.load %[[LD]][%{{.+}}] : memref<8xbf16>, vector<8xbf16>
// CHECK:       vector.shape_cast %[[AV]] : vector<8xbf16> to vector<4x2xbf16>
// mma: bf16 is type 0.
// CHECK:       vector.store %{{.+}}, %[[A]]
// CHECK:       vector.store %{{.+}}, %[[B]]
// CHECK:       vector.store %{{.+}}, %[[C]]
// CHECK:       call @blockcEmuMma(%[[THREAD]], %c0_i32{{.*}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}})
// CHECK:       %[[D:.+]] = vector.load %[[OUT]]
// CHECK:       vector.shape_cast %[[D]] : vector<4xf32> to vector<2x2xf32>
// CHECK-NOT:   {{^[^"]*nvgpu\.}}
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%g: memref<16x16xbf16>, %n: index, %bm: memref<2x2xbf16>, %out: memref<2x2xf32>)
        workgroup(%s: memref<16x16xbf16, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %b = vector.load %bm[%c0, %c0] : memref<2x2xbf16>, vector<2x2xbf16>
      %c = arith.constant dense<0.0> : vector<2x2xf32>
      %tx = gpu.thread_id x
      %t = nvgpu.device_async_copy %g[%tx, %c0], %s[%tx, %c0], 8, %n {bypassL1} : memref<16x16xbf16> to memref<16x16xbf16, #gpu.address_space<workgroup>>
      %grp = nvgpu.device_async_create_group %t
      nvgpu.device_async_wait %grp {numGroups = 1 : i32}
      gpu.barrier
      %a = nvgpu.ldmatrix %s[%tx, %c0] {numTiles = 4 : i32, transpose = false} : memref<16x16xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
      %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
      vector.store %d, %out[%c0, %c0] : memref<2x2xf32>, vector<2x2xf32>
      gpu.return
    }
  }
}

// -----

// TF32: ldmatrix of f32 rows (one f32 per register) and mma.sync m16n8k8
// with tf32Enabled (type 2). A and C are both 4 f32 but travel in
// different buffers (one buffer would carry C in place of A); the
// ldmatrix result and D share one (each is reloaded right after its call).
// CHECK-LABEL: func.func @__blockc_emu_m_tf32
// CHECK:       %[[C:.+]] = memref.alloca() : memref<4xf32>
// CHECK-NEXT:  %[[B:.+]] = memref.alloca() : memref<2xf32>
// CHECK-NEXT:  %[[A:.+]] = memref.alloca() : memref<4xf32>
// CHECK-NEXT:  %[[LD:.+]] = memref.alloca() : memref<4xf32>
// CHECK:       call @blockcEmuLdMatrix(%{{.+}}, %{{.+}}, %{{.+}}, %c4_i32{{.*}}, %c0_i32{{.*}}, %{{.+}})
// CHECK:       vector.load %[[LD]][%{{.+}}] : memref<4xf32>, vector<4xf32>
// CHECK:       vector.store %{{.+}}, %[[A]]
// CHECK:       vector.store %{{.+}}, %[[B]]
// CHECK:       vector.store %{{.+}}, %[[C]]
// CHECK:       call @blockcEmuMma(%{{.+}}, %c2_i32{{.*}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}})
// CHECK:       vector.load %[[LD]]
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @tf32(%bm: memref<2x1xf32>, %out: memref<2x2xf32>)
        workgroup(%s: memref<16x8xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %b = vector.load %bm[%c0, %c0] : memref<2x1xf32>, vector<2x1xf32>
      %c = arith.constant dense<1.0> : vector<2x2xf32>
      %tx = gpu.thread_id x
      %a = nvgpu.ldmatrix %s[%tx, %c0] {numTiles = 4 : i32, transpose = false} : memref<16x8xf32, #gpu.address_space<workgroup>> -> vector<4x1xf32>
      %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
      vector.store %d, %out[%c0, %c0] : memref<2x2xf32>, vector<2x2xf32>
      gpu.return
    }
  }
}

// -----

// Dynamic shared memory is a view of the block's shared buffer after the
// static part (here 64 bytes of workgroup attribution).
// CHECK-LABEL: func.func @__blockc_emu_m_dyn
// CHECK-SAME:    static_shared = 64
// CHECK:         %[[SMEM:.+]] = builtin.unrealized_conversion_cast %{{.+}} to memref<?xi8>
// CHECK:         memref.view %[[SMEM]][%{{.+}}][] : memref<?xi8> to memref<16xf32>
// CHECK:         %[[C64:.+]] = arith.constant 64 : index
// CHECK:         %[[SIZE:.+]] = arith.subi %{{.+}}, %[[C64]] : index
// CHECK:         %[[DYN:.+]] = memref.view %[[SMEM]][%[[C64]]][%[[SIZE]]] : memref<?xi8> to memref<?xi8>
// CHECK:         memref.view %[[DYN]][%{{.+}}][] : memref<?xi8> to memref<8xf32>
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @dyn(%out: memref<8xf32>) workgroup(%s: memref<16xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %base = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %d = memref.view %base[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<8xf32, #gpu.address_space<workgroup>>
      %tx = gpu.thread_id x
      %v = memref.load %d[%tx] : memref<8xf32, #gpu.address_space<workgroup>>
      memref.store %v, %out[%tx] : memref<8xf32>
      gpu.return
    }
  }
}
