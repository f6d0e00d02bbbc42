// RUN: blockc-opt %s --blockc-gpu-lower-tensor-map-args | FileCheck %s

// A kernel's TMA tensor-map argument becomes a pointer, read back as the
// map through a cast; its launch passes the host's map cast to a pointer.
// Other arguments and kernels without maps are unchanged.

!map = !nvgpu.tensormap.descriptor<tensor = memref<64x64xbf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>

// CHECK-LABEL: func.func @host
// CHECK:         %[[MAP:.+]] = nvgpu.tma.create.descriptor
// CHECK:         %[[PTR:.+]] = builtin.unrealized_conversion_cast %[[MAP]] : !nvgpu.tensormap.descriptor<{{.+}}> to !llvm.ptr
// CHECK:         gpu.launch_func @kernels::@tma {{.+}} args(%arg1 : index, %[[PTR]] : !llvm.ptr)
// CHECK:         gpu.launch_func @kernels::@plain {{.+}} args(%arg1 : index)
// CHECK:       gpu.func @tma(%[[I:.+]]: index, %[[P:.+]]: !llvm.ptr) kernel
// CHECK-NEXT:    %[[BACK:.+]] = builtin.unrealized_conversion_cast %[[P]] : !llvm.ptr to !nvgpu.tensormap.descriptor
// CHECK:         nvgpu.tma.prefetch.descriptor %[[BACK]]
// CHECK:       gpu.func @plain(%{{.+}}: index) kernel
module attributes {gpu.container_module} {
  func.func @host(%a: memref<*xbf16>, %n: index) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %map = nvgpu.tma.create.descriptor %a box[%c64, %c64] : memref<*xbf16> -> !map
    gpu.launch_func @kernels::@tma blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%n : index, %map : !map)
    gpu.launch_func @kernels::@plain blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%n : index)
    return
  }
  gpu.module @kernels {
    gpu.func @tma(%n: index, %map: !map) kernel {
      nvgpu.tma.prefetch.descriptor %map : !map
      gpu.return
    }
    gpu.func @plain(%n: index) kernel {
      gpu.return
    }
  }
}
