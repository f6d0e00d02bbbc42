// RUN: blockc-opt %s -split-input-file --blockc-gpu-emulate-kernels | FileCheck %s
// RUN: blockc-opt %s -split-input-file --blockc-gpu-emulate-kernels="chip=sm_90 check-bounds=1" | FileCheck %s --check-prefix=BOUNDS
// RUN: blockc-opt %s -split-input-file --blockc-gpu-emulate-kernels="profile=1" | FileCheck %s --check-prefix=PROFILE

// A kernel becomes a host function running one GPU thread: parameters from
// the launch's pointer array (memrefs as unpacked descriptors), ids from the
// BlockcEmuThread fields, workgroup memory as views of the block's shared
// buffer, private memory on the stack, barrier and shuffle as runtime calls;
// the gpu.module becomes a gpu.binary the emulator runtime loads.

// CHECK-DAG: llvm.mlir.global internal constant @[[BAR:__blockc_emu_site_[0-9]+]]("gpu.barrier at {{.*}}emulate-kernels.mlir:{{[0-9]+}}:{{[0-9]+}}\00")
// CHECK-DAG: llvm.mlir.global internal constant @[[SHF:__blockc_emu_site_[0-9]+]]("gpu.shuffle xor at {{.*}}emulate-kernels.mlir:{{[0-9]+}}:{{[0-9]+}}\00")
// CHECK-DAG: gpu.binary @m [#gpu.object<#nvvm.target<chip = "sm_90">, bin = "blockc-emulator:m#[[HASH:[0-9a-f]+]]">]
// CHECK-NOT: gpu.module
// CHECK:     func.func @host
// CHECK:       gpu.launch_func @m::@k
// CHECK-DAG: func.func private @blockcEmuBarrier(!llvm.ptr, !llvm.ptr)
// CHECK-DAG: func.func private @blockcEmuShuffle32(!llvm.ptr, i32, i32, i32, i32, !llvm.ptr) -> i64
// CHECK:     func.func @__blockc_emu_m_k(%[[PARAMS:.+]]: !llvm.ptr, %[[THREAD:.+]]: !llvm.ptr, %[[SHARED:.+]]: !llvm.ptr, %[[BYTES:.+]]: i64)
// CHECK-SAME:  blockc_codegen.emulated_kernel = #blockc_codegen.emulated_kernel<module = "m#[[HASH]]", kernel = "k", static_shared = 131, max_shared = 232448, synchronizes = true, block_x = 64, block_y = 1, block_z = 1>
// Parameter 0 (index): slot 0, loaded as i64.
// CHECK:       %[[S0:.+]] = llvm.getelementptr inbounds %[[PARAMS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK:       %[[P0:.+]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK:       llvm.load %[[P0]] : !llvm.ptr -> i64
// Parameter 1 (f32): slot 1.
// CHECK:       llvm.getelementptr inbounds %[[PARAMS]][1]
// CHECK:       llvm.load %{{.+}} : !llvm.ptr -> f32
// Parameter 2 (memref<?xf32>): slots 2-6, the descriptor's five fields.
// CHECK:       llvm.getelementptr inbounds %[[PARAMS]][6]
// CHECK:       %[[BUF:.+]] = builtin.unrealized_conversion_cast %{{.+}} : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<?xf32>
// Shared memory: a memref<?xi8> over (shared, shared bytes), one view per
// workgroup attribution at 16-byte aligned offsets.
// CHECK:       llvm.insertvalue %[[SHARED]]
// CHECK:       llvm.insertvalue %[[BYTES]], %{{.+}}[3, 0]
// CHECK:       %[[SMEM:.+]] = builtin.unrealized_conversion_cast %{{.+}} to memref<?xi8>
// CHECK:       %[[C0:.+]] = arith.constant 0 : index
// CHECK:       %[[TILE:.+]] = memref.view %[[SMEM]][%[[C0]]][] : memref<?xi8> to memref<4x8xf32>
// CHECK:       %[[C128:.+]] = arith.constant 128 : index
// CHECK:       memref.view %[[SMEM]][%[[C128]]][] : memref<?xi8> to memref<3xi8>
// CHECK:       memref.alloca() : memref<2xf32>
// thread_id x (offset 0), block_id y (16), block_dim z (32), grid_dim x (36),
// global_id x = block_id x (12) * block_dim x (24) + thread_id x (0), lane_id (48).
// CHECK:       llvm.getelementptr inbounds %[[THREAD]][0] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK:       llvm.getelementptr inbounds %[[THREAD]][16]
// CHECK:       llvm.getelementptr inbounds %[[THREAD]][32]
// CHECK:       llvm.getelementptr inbounds %[[THREAD]][36]
// CHECK:       llvm.getelementptr inbounds %[[THREAD]][12]
// CHECK:       llvm.getelementptr inbounds %[[THREAD]][24]
// CHECK:       llvm.getelementptr inbounds %[[THREAD]][0]
// CHECK:       arith.muli
// CHECK:       arith.addi
// CHECK:       llvm.getelementptr inbounds %[[THREAD]][48]
// CHECK:       memref.store %{{.+}}, %[[TILE]]
// CHECK:       %[[BARSITE:.+]] = llvm.mlir.addressof @[[BAR]]
// CHECK:       %[[BARPTR:.+]] = llvm.getelementptr %[[BARSITE]][0, 0]
// CHECK:       call @blockcEmuBarrier(%[[THREAD]], %[[BARPTR]])
// The shuffle: f32 bits, mode 0 (xor), result bits and valid bit unpacked.
// CHECK:       %[[BITS:.+]] = arith.bitcast %{{.+}} : f32 to i32
// CHECK:       %[[MODE:.+]] = arith.constant 0 : i32
// CHECK:       %[[R:.+]] = call @blockcEmuShuffle32(%[[THREAD]], %[[BITS]], %{{.+}}, %{{.+}}, %[[MODE]], %{{.+}})
// CHECK:       %[[LOW:.+]] = arith.trunci %[[R]] : i64 to i32
// CHECK:       %[[VAL:.+]] = arith.bitcast %[[LOW]] : i32 to f32
// CHECK:       %[[HIGH:.+]] = arith.shrui %[[R]]
// CHECK:       %[[VALID:.+]] = arith.trunci %[[HIGH]] : i64 to i1
// CHECK:       arith.select %[[VALID]], %[[VAL]]
// CHECK:       return

// Bounds checking: each access under an scf.if on every index being below
// its dimension (unsigned: negative indices fail too); the else branch
// reports each failing dimension and a load yields 0.
// BOUNDS:      func.func @__blockc_emu_m_k(
// BOUNDS-SAME:   max_shared = 232448
// BOUNDS:        %[[DIM:.+]] = memref.dim %[[B:.+]], %{{.+}} : memref<?xf32>
// BOUNDS:        %[[OK:.+]] = arith.cmpi ult, %[[I:.+]], %[[DIM]] : index
// BOUNDS:        %[[ALL:.+]] = arith.andi %{{.+}}, %[[OK]] : i1
// BOUNDS:        %[[LOADED:.+]] = scf.if %[[ALL]] -> (f32) {
// Inside bounds, the global access is checked against device memory
// (flags 8: check; a load of 4 bytes).
// BOUNDS:          %[[AT:.+]] = llvm.inttoptr
// BOUNDS:          func.call @blockcEmuAccess(%arg1, %{{.+}}, %[[AT]], %c4_i32{{.*}}, %c8_i32{{.*}}, %{{.+}}) : (!llvm.ptr, i32, !llvm.ptr, i32, i32, !llvm.ptr) -> ()
// BOUNDS-NEXT:     %[[V:.+]] = memref.load %[[B]][%[[I]]] : memref<?xf32>
// BOUNDS-NEXT:     scf.yield %[[V]] : f32
// BOUNDS-NEXT:   } else {
// BOUNDS:          %[[BAD:.+]] = arith.xori %[[OK]], %{{.+}} : i1
// BOUNDS:          scf.if %[[BAD]] {
// BOUNDS:            func.call @blockcEmuOutOfBounds(
// BOUNDS:          %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// BOUNDS:          scf.yield %[[ZERO]] : f32
// BOUNDS:        scf.if %{{.+}} {
// The shared store's hook: flags 3 (store, shared).
// BOUNDS:          func.call @blockcEmuAccess(%arg1, %{{.+}}, %{{.+}}, %c4_i32{{.*}}, %c3_i32{{.*}}, %{{.+}})
// BOUNDS-NEXT:     memref.store %[[LOADED]], %{{.+}}[%{{.+}}, %{{.+}}] : memref<4x8xf32>
// BOUNDS-NEXT:   } else {
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%n: index, %s: f32, %buf: memref<?xf32>)
        workgroup(%tile: memref<4x8xf32, #gpu.address_space<workgroup>>,
                  %flags: memref<3xi8, #gpu.address_space<workgroup>>)
        private(%p: memref<2xf32, #gpu.address_space<private>>)
        kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      %tx = gpu.thread_id x
      %by = gpu.block_id y
      %bd = gpu.block_dim z
      %gd = gpu.grid_dim x
      %g = gpu.global_id x
      %l = gpu.lane_id
      %v = memref.load %buf[%tx] : memref<?xf32>
      %c0 = arith.constant 0 : index
      memref.store %v, %tile[%c0, %c0] : memref<4x8xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %o = arith.constant 1 : i32
      %w = arith.constant 32 : i32
      %r, %ok = gpu.shuffle xor %v, %o, %w : f32
      %sel = arith.select %ok, %r, %s : f32
      memref.store %sel, %buf[%g] : memref<?xf32>
      %ids = arith.addi %by, %bd : index
      %ids2 = arith.addi %ids, %gd : index
      %ids3 = arith.addi %ids2, %l : index
      memref.store %sel, %buf[%ids3] : memref<?xf32>
      gpu.return
    }
  }
  func.func @host(%n: index, %buf: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    %s = arith.constant 1.0 : f32
    gpu.launch_func @m::@k blocks in (%c1, %c1, %c1) threads in (%n, %c1, %c1) args(%n : index, %s : f32, %buf : memref<?xf32>)
    return
  }
}

// -----

// A kernel without barrier or shuffle does not synchronize (it runs as a
// loop over threads) and has no known block size when none is given.
// CHECK-LABEL: gpu.binary @plain
// CHECK:       func.func @__blockc_emu_plain_copy(
// CHECK-SAME:    #blockc_codegen.emulated_kernel<module = "plain#{{[0-9a-f]+}}", kernel = "copy", static_shared = 0, max_shared = 232448, synchronizes = false, block_x = 0, block_y = 0, block_z = 0>
// CHECK-NOT:   blockcEmuBarrier
module attributes {gpu.container_module} {
  gpu.module @plain {
    gpu.func @copy(%a: memref<8xf32>, %b: memref<8xf32>) kernel {
      %tx = gpu.thread_id x
      %v = memref.load %a[%tx] : memref<8xf32>
      memref.store %v, %b[%tx] : memref<8xf32>
      gpu.return
    }
  }
}

// -----

// Numeric memory spaces go too (the host has one address space).
// CHECK-LABEL: gpu.binary @numeric
// CHECK:       func.func @__blockc_emu_numeric_k(
// CHECK:         builtin.unrealized_conversion_cast %{{.+}} : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<4xf32>
// CHECK:         memref.load %{{.+}} : memref<4xf32>
module attributes {gpu.container_module} {
  gpu.module @numeric {
    gpu.func @k(%a: memref<4xf32, 1>) kernel {
      %tx = gpu.thread_id x
      %v = memref.load %a[%tx] : memref<4xf32, 1>
      memref.store %v, %a[%tx] : memref<4xf32, 1>
      gpu.return
    }
  }
}

// -----

// The profile (profile=1): every global or shared access calls
// blockcEmuAccess first (flags 0: a global load, 1: a global store; no
// device-memory check without check-bounds), and every block of code
// counts its floating-point operations when it starts: add, sub, mul and
// div a lane each, an FMA two per lane (entry block: 2; the loop body: a
// 4-lane FMA and a division, 9).
// PROFILE-LABEL: func.func @__blockc_emu_m_flops(
// PROFILE:         %[[N2:.+]] = arith.constant 2 : i64
// PROFILE-NEXT:    call @blockcEmuFlops(%arg1, %[[N2]]) : (!llvm.ptr, i64) -> ()
// PROFILE:         call @blockcEmuAccess(%arg1, %{{.+}}, %{{.+}}, %c4_i32{{.*}}, %c0_i32{{.*}}, %{{.+}})
// PROFILE-NEXT:    memref.load
// PROFILE:         scf.for
// PROFILE-NEXT:      %[[N9:.+]] = arith.constant 9 : i64
// PROFILE-NEXT:      call @blockcEmuFlops(%arg1, %[[N9]]) : (!llvm.ptr, i64) -> ()
// PROFILE:         call @blockcEmuAccess(%arg1, %{{.+}}, %{{.+}}, %c4_i32{{.*}}, %c1_i32{{.*}}, %{{.+}})
// PROFILE-NEXT:    memref.store
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @flops(%buf: memref<?xf32>, %n: index) kernel {
      %tx = gpu.thread_id x
      %v = memref.load %buf[%tx] : memref<?xf32>
      %a = arith.addf %v, %v : f32
      %m = arith.mulf %a, %v : f32
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %m) -> f32 {
        %vec = vector.broadcast %acc : f32 to vector<4xf32>
        %f = vector.fma %vec, %vec, %vec : vector<4xf32>
        %e = vector.extract %f[0] : f32 from vector<4xf32>
        %d = arith.divf %e, %acc : f32
        scf.yield %d : f32
      }
      memref.store %r, %buf[%tx] : memref<?xf32>
      gpu.return
    }
  }
}
