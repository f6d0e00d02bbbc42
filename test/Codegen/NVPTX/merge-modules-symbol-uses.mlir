// RUN: blockc-opt %s --blockc-gpu-merge-modules | FileCheck %s

// Regression test: when a non-kernel symbol collides (two gpu.modules each
// with their own @helper), the second is renamed @helper_0 and the uses in
// its module must follow, or @kb would call @ka's helper.

// CHECK-LABEL: gpu.module @blockc_kernels
// CHECK:         func.func @[[H1:helper[_0-9]*]]() -> f32
// CHECK-NEXT:      arith.constant 1.000000e+00
// CHECK:         gpu.func @ka(
// CHECK:           func.call @[[H1]]()
// CHECK:         func.func @[[H2:helper[_0-9]*]]() -> f32
// CHECK-NEXT:      arith.constant 2.000000e+00
// CHECK:         gpu.func @kb(
// CHECK:           func.call @[[H2]]()
module attributes {gpu.container_module} {
  gpu.module @a {
    func.func @helper() -> f32 {
      %c = arith.constant 1.0 : f32
      return %c : f32
    }
    gpu.func @ka(%m: memref<1xf32>) kernel {
      %c0 = arith.constant 0 : index
      %x = func.call @helper() : () -> f32
      memref.store %x, %m[%c0] : memref<1xf32>
      gpu.return
    }
  }
  gpu.module @b {
    func.func @helper() -> f32 {
      %c = arith.constant 2.0 : f32
      return %c : f32
    }
    gpu.func @kb(%m: memref<1xf32>) kernel {
      %c0 = arith.constant 0 : index
      %x = func.call @helper() : () -> f32
      memref.store %x, %m[%c0] : memref<1xf32>
      gpu.return
    }
  }
  func.func @launch(%m: memref<1xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @a::@ka blocks in (%c1, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%m : memref<1xf32>)
    gpu.launch_func @b::@kb blocks in (%c1, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%m : memref<1xf32>)
    return
  }
}
