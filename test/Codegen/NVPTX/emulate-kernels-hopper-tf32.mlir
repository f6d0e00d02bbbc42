// RUN: blockc-opt %s --blockc-gpu-emulate-kernels | FileCheck %s

// A warpgroup MMA with tf32 operands (f32 words in shared memory, the
// descriptors' tensors typed tf32; docs/GPU.md#tf32) under the emulator:
// one m64n16k8 per op, a runtime call with multiplicand type 2 (tf32).

// CHECK-LABEL: func.func @__blockc_emu_m_k(
// CHECK:         scf.for
// CHECK:           %[[DA:.+]] = arith.addi %{{.+}}, %c0_i64
// CHECK:           %[[DB:.+]] = arith.addi %{{.+}}, %c0_i64
// CHECK:           func.call @blockcEmuWgmma(%{{.+}}, %c2_i32{{[_0-9]*}}, %[[DA]], %[[DB]], %c16_i32, %c0_i32{{.*}}, %c0_i32{{.*}}, %{{.+}}, %{{.+}})
// CHECK-NOT:       @blockcEmuWgmma(
// CHECK:           func.call @blockcEmuWgmmaCommit(
!map = !nvgpu.tensormap.descriptor<tensor = memref<64x32xf32, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!acc = !nvgpu.warpgroup.accumulator<fragmented = vector<64x16xf32>>
!da = !nvgpu.warpgroup.descriptor<tensor = memref<64x8xtf32, #gpu.address_space<workgroup>>>
!db = !nvgpu.warpgroup.descriptor<tensor = memref<8x16xtf32, #gpu.address_space<workgroup>>>
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%p: !llvm.ptr, %out: memref<64x16xf32>)
        workgroup(%s: memref<64x32xf32, #gpu.address_space<workgroup>>) kernel {
      %map = builtin.unrealized_conversion_cast %p : !llvm.ptr to !map
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %da = nvgpu.warpgroup.generate.descriptor %s, %map : memref<64x32xf32, #gpu.address_space<workgroup>>, !map -> !da
      %db = nvgpu.warpgroup.generate.descriptor %s, %map : memref<64x32xf32, #gpu.address_space<workgroup>>, !map -> !db
      %acc0 = nvgpu.warpgroup.mma.init.accumulator -> !acc
      %acc = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %acc0) -> (!acc) {
        %n = nvgpu.warpgroup.mma %da, %db, %a : !da, !db, !acc -> !acc
        scf.yield %n : !acc
      }
      nvvm.wgmma.wait.group.sync.aligned 0
      nvgpu.warpgroup.mma.store %acc, %out : !acc to memref<64x16xf32>
      gpu.return
    }
  }
}
