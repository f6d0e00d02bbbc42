// RUN: blockc-opt %s -split-input-file -verify-diagnostics --blockc-gpu-emulate-kernels

// What the emulator cannot run is an error naming the kernel.

module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%a: memref<8xf32>) kernel {
      %tx = gpu.thread_id x
      %v = memref.load %a[%tx] : memref<8xf32>
      // expected-error @+1 {{PTX inline assembly cannot run on the host (kernel 'k'); the emulator's pipeline expands math with blockc-gpu-expand-math{portable=true}}}
      %r = llvm.inline_asm "sqrt.rn.f32 $0, $1;", "=f,f" %v : (f32) -> f32
      memref.store %r, %a[%tx] : memref<8xf32>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%a: memref<8xf64>) kernel {
      %tx = gpu.thread_id x
      %v = memref.load %a[%tx] : memref<8xf64>
      %o = arith.constant 1 : i32
      %w = arith.constant 32 : i32
      // expected-error @+1 {{the GPU emulator supports 32-bit shuffles only, in kernel 'k'}}
      %r, %ok = gpu.shuffle xor %v, %o, %w : f64
      memref.store %r, %a[%tx] : memref<8xf64>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%a: memref<8xf32>) kernel {
      %tx = gpu.thread_id x
      %v = memref.load %a[%tx] : memref<8xf32>
      // expected-error @+1 {{the GPU emulator does not model 'gpu.subgroup_reduce' (kernel 'k')}}
      %r = gpu.subgroup_reduce add %v : (f32) -> f32
      memref.store %r, %a[%tx] : memref<8xf32>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k() kernel {
      // expected-error @+1 {{the GPU emulator does not model 'nvvm.read.ptx.sreg.tid.x' (kernel 'k')}}
      %t = nvvm.read.ptx.sreg.tid.x : i32
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    // expected-error @+1 {{the GPU emulator runs kernels only; 'helper' is a device function}}
    gpu.func @helper() {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    // expected-error @+1 {{kernel 'big' declares 49216 bytes of static shared memory, more than the 49152 a block may declare statically}}
    gpu.func @big() workgroup(%a: memref<12304xf32, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    // expected-error @+1 {{the GPU emulator cannot pass a kernel argument of type 'vector<4xf32>' (kernel 'k')}}
    gpu.func @k(%v: vector<4xf32>) kernel {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    // expected-error @+1 {{the GPU emulator needs workgroup memory of static shape, identity layout and integer or float elements in kernel 'k', got 'memref<8xindex, #gpu.address_space<workgroup>>'}}
    gpu.func @k() workgroup(%a: memref<8xindex, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
  }
}
