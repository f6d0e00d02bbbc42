// RUN: blockc-opt %s -split-input-file -verify-diagnostics --blockc-gpu-merge-modules | FileCheck %s --implicit-check-not=@src_
// RUN: blockc-opt %s -split-input-file -verify-diagnostics --blockc-gpu-merge-modules=module-name=k | FileCheck %s --check-prefix=NAMED --implicit-check-not=@src_

// gpu-kernel-outlining makes one gpu.module per kernel; the pass moves every
// kernel into one gpu.module and retargets every gpu.launch_func to it. The
// source modules are all named @src_*: no reference to them may remain.

// Two modules, two kernels: one @blockc_kernels (or @k) holding both, in
// order, and both launches retargeted.
// CHECK-LABEL: gpu.module @blockc_kernels
// CHECK-NOT:     gpu.module
// CHECK:         gpu.func @first(%{{.+}}: memref<4xf32>) kernel
// CHECK:         gpu.func @second() kernel
// CHECK-LABEL: func.func @two_modules
// CHECK-SAME:    (%[[M:.+]]: memref<4xf32>)
// CHECK:         gpu.launch_func @blockc_kernels::@first
// CHECK-SAME:      args(%[[M]] : memref<4xf32>)
// CHECK:         gpu.launch_func @blockc_kernels::@second
// NAMED-LABEL: gpu.module @k
// NAMED:         gpu.func @first
// NAMED:         gpu.func @second
// NAMED-LABEL: func.func @two_modules
// NAMED:         gpu.launch_func @k::@first
// NAMED:         gpu.launch_func @k::@second
module attributes {gpu.container_module} {
  gpu.module @src_a {
    gpu.func @first(%m: memref<4xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @src_b {
    gpu.func @second() kernel {
      gpu.return
    }
  }
  func.func @two_modules(%m: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @src_a::@first blocks in (%c1, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.launch_func @src_b::@second blocks in (%c1, %c1, %c1)
        threads in (%c1, %c1, %c1)
    return
  }
}

// -----

// Kernels with the same name in different modules: the later one is renamed
// and its launch follows it; a module's non-kernel symbols move along; the
// first module's targets are kept.
// CHECK-LABEL: gpu.module @blockc_kernels [#nvvm.target<chip = "sm_80">]
// CHECK-NOT:     gpu.module
// CHECK:         gpu.func @[[K0:forward_kernel]]() kernel
// CHECK:         gpu.func @[[K1:forward_kernel_[0-9]+]]() kernel
// CHECK:         func.func @helper
// CHECK:         gpu.func @[[K2:forward_kernel_[0-9]+]]() kernel
// CHECK-NEXT:      func.call @helper()
// CHECK-LABEL: func.func @colliding_kernels
// CHECK:         gpu.launch_func @blockc_kernels::@[[K0]] blocks
// CHECK:         gpu.launch_func @blockc_kernels::@[[K1]] blocks
// CHECK:         gpu.launch_func @blockc_kernels::@[[K2]] blocks
// NAMED-LABEL: gpu.module @k
// NAMED-LABEL: func.func @colliding_kernels
// NAMED:         gpu.launch_func @k::@forward_kernel blocks
// NAMED:         gpu.launch_func @k::@forward_kernel_{{[0-9]+}} blocks
// NAMED:         gpu.launch_func @k::@forward_kernel_{{[0-9]+}} blocks
module attributes {gpu.container_module} {
  gpu.module @src_forward_kernel [#nvvm.target<chip = "sm_80">] {
    gpu.func @forward_kernel() kernel {
      gpu.return
    }
  }
  gpu.module @src_forward_kernel_0 [#nvvm.target<chip = "sm_80">] {
    gpu.func @forward_kernel() kernel {
      gpu.return
    }
  }
  gpu.module @src_forward_kernel_1 [#nvvm.target<chip = "sm_80">] {
    func.func @helper() {
      return
    }
    gpu.func @forward_kernel() kernel {
      func.call @helper() : () -> ()
      gpu.return
    }
  }
  func.func @colliding_kernels() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @src_forward_kernel::@forward_kernel
        blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @src_forward_kernel_0::@forward_kernel
        blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @src_forward_kernel_1::@forward_kernel
        blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
}

// -----

// The same kernel launched twice (from two functions) is merged once and
// both launches are retargeted.
// CHECK-LABEL: gpu.module @blockc_kernels
// CHECK-COUNT-1: gpu.func @kernel() kernel
// CHECK-NOT:     gpu.func
// CHECK-LABEL: func.func @launch_twice_a
// CHECK:         gpu.launch_func @blockc_kernels::@kernel blocks
// CHECK-LABEL: func.func @launch_twice_b
// CHECK:         gpu.launch_func @blockc_kernels::@kernel blocks
// NAMED-LABEL: func.func @launch_twice_a
// NAMED:         gpu.launch_func @k::@kernel blocks
// NAMED-LABEL: func.func @launch_twice_b
// NAMED:         gpu.launch_func @k::@kernel blocks
module attributes {gpu.container_module} {
  gpu.module @src_only {
    gpu.func @kernel() kernel {
      gpu.return
    }
  }
  func.func @launch_twice_a() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @src_only::@kernel blocks in (%c1, %c1, %c1)
        threads in (%c1, %c1, %c1)
    return
  }
  func.func @launch_twice_b() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @src_only::@kernel blocks in (%c1, %c1, %c1)
        threads in (%c1, %c1, %c1)
    return
  }
}

// -----

// The merged module's name must be free (here both the default name and
// the one given by module-name=k are taken).
// expected-error-re @+1 {{blockc-gpu-merge-modules: a symbol named '{{(blockc_kernels|k)}}' already exists}}
module attributes {gpu.container_module} {
  gpu.module @src_c {
    gpu.func @kernel() kernel {
      gpu.return
    }
  }
  func.func @blockc_kernels() {
    return
  }
  func.func @k() {
    return
  }
}

// -----

// Without any gpu.module the pass creates none.
// CHECK-NOT:   gpu.module
// CHECK-LABEL: func.func @negative_no_kernels
// NAMED-NOT:   gpu.module
// NAMED-LABEL: func.func @negative_no_kernels
module {
  func.func @negative_no_kernels() {
    return
  }
}
