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
    gpu.func @k(%mask: i32) kernel {
      // expected-error @+1 {{the GPU emulator models 'nvvm.bar.warp.sync' with the full mask (-1) only, in kernel 'k'}}
      nvvm.bar.warp.sync %mask : i32
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k() kernel {
      %id = arith.constant 1 : i32
      // expected-error @+1 {{the GPU emulator models 'nvvm.barrier' with an id and a thread count (and no reduction) only, in kernel 'k'}}
      nvvm.barrier id = %id
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

// -----

// Tensor-core forms the emulator does not model.
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%am: memref<2x2xf16>, %bm: memref<1x2xf16>, %out: memref<2x2xf32>) kernel {
      %c0 = arith.constant 0 : index
      %a = vector.load %am[%c0, %c0] : memref<2x2xf16>, vector<2x2xf16>
      %b = vector.load %bm[%c0, %c0] : memref<1x2xf16>, vector<1x2xf16>
      %c = arith.constant dense<0.0> : vector<2x2xf32>
      // expected-error @+1 {{the GPU emulator models mma.sync m16n8k16 with bf16 or f16 multiplicands and m16n8k8 with tf32 multiplicands (tf32Enabled), with f32 accumulators, only (kernel 'k')}}
      %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 8]} : (vector<2x2xf16>, vector<1x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
      vector.store %d, %out[%c0, %c0] : memref<2x2xf32>, vector<2x2xf32>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%s: memref<16x16xi8, #gpu.address_space<workgroup>>, %out: memref<4x4xi8>) kernel {
      %c0 = arith.constant 0 : index
      // expected-error @+1 {{the GPU emulator models ldmatrix into vector<tiles x 2 x bf16/f16> or (not transposed) vector<tiles x 1 x f32> only (kernel 'k')}}
      %a = nvgpu.ldmatrix %s[%c0, %c0] {numTiles = 4 : i32, transpose = false} : memref<16x16xi8, #gpu.address_space<workgroup>> -> vector<4x4xi8>
      vector.store %a, %out[%c0, %c0] : memref<4x4xi8>, vector<4x4xi8>
      gpu.return
    }
  }
}

// -----

// A cp.async token carried out of a loop is not modelled.
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%g: memref<16x16xbf16>, %s: memref<16x16xbf16, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %tx = gpu.thread_id x
      // expected-error @+1 {{the GPU emulator models cp.async tokens used by nvgpu.device_async_create_group only (kernel 'k')}}
      %t0 = nvgpu.device_async_copy %g[%tx, %c0], %s[%tx, %c0], 8 : memref<16x16xbf16> to memref<16x16xbf16, #gpu.address_space<workgroup>>
      %t = scf.for %i = %c0 to %c2 step %c1 iter_args(%tok = %t0) -> (!nvgpu.device.async.token) {
        scf.yield %tok : !nvgpu.device.async.token
      }
      %grp = nvgpu.device_async_create_group %t
      nvgpu.device_async_wait %grp
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k() kernel {
      %b = nvgpu.mbarrier.create -> !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
      %c0 = arith.constant 0 : index
      // expected-error @+1 {{the GPU emulator does not model 'nvgpu.mbarrier.arrive' (kernel 'k')}}
      %t = nvgpu.mbarrier.arrive %b[%c0] : !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>> -> !nvgpu.mbarrier.token
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k() kernel {
      // expected-error @+1 {{the GPU emulator models mbarriers in workgroup (shared) memory only (kernel 'k')}}
      %b = nvgpu.mbarrier.create -> !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<global>>
      gpu.return
    }
  }
}

// -----

!map = !nvgpu.tensormap.descriptor<tensor = memref<64x64xbf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%p: !llvm.ptr) workgroup(%s : memref<64x64xbf16, #gpu.address_space<workgroup>>) kernel {
      %map = builtin.unrealized_conversion_cast %p : !llvm.ptr to !map
      %b = nvgpu.mbarrier.create -> !bars
      %c0 = arith.constant 0 : index
      %mask = arith.constant 3 : i16
      // expected-error @+1 {{the GPU emulator does not model TMA multicast (clusters) (kernel 'k')}}
      nvgpu.tma.async.load %map[%c0, %c0], %b[%c0] to %s multicast_mask = %mask : !map, !bars -> memref<64x64xbf16, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k() kernel {
      // expected-error @+1 {{the GPU emulator models warpgroup accumulators of 64 x N f32 only (one m64 wgmma per warpgroup) (kernel 'k')}}
      %acc = nvgpu.warpgroup.mma.init.accumulator -> !nvgpu.warpgroup.accumulator<fragmented = vector<128x128xf32>>
      gpu.return
    }
  }
}

// -----

!map = !nvgpu.tensormap.descriptor<tensor = memref<64x32xf32, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!acc = !nvgpu.warpgroup.accumulator<fragmented = vector<64x16xf32>>
!da = !nvgpu.warpgroup.descriptor<tensor = memref<64x16xtf32, #gpu.address_space<workgroup>>>
!db = !nvgpu.warpgroup.descriptor<tensor = memref<16x16xtf32, #gpu.address_space<workgroup>>>
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%p: !llvm.ptr) workgroup(%s: memref<64x32xf32, #gpu.address_space<workgroup>>) kernel {
      %map = builtin.unrealized_conversion_cast %p : !llvm.ptr to !map
      %da = nvgpu.warpgroup.generate.descriptor %s, %map : memref<64x32xf32, #gpu.address_space<workgroup>>, !map -> !da
      %db = nvgpu.warpgroup.generate.descriptor %s, %map : memref<64x32xf32, #gpu.address_space<workgroup>>, !map -> !db
      %acc0 = nvgpu.warpgroup.mma.init.accumulator -> !acc
      // expected-error @+1 {{the GPU emulator models tf32 warpgroup MMA of one k8 step per op only (kernel 'k')}}
      %n = nvgpu.warpgroup.mma %da, %db, %acc0 : !da, !db, !acc -> !acc
      gpu.return
    }
  }
}

// -----

!map = !nvgpu.tensormap.descriptor<tensor = memref<64x128xf8E4M3FN, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!acc = !nvgpu.warpgroup.accumulator<fragmented = vector<64x16xf32>>
!da = !nvgpu.warpgroup.descriptor<tensor = memref<64x32xf8E4M3FN, #gpu.address_space<workgroup>>>
!db = !nvgpu.warpgroup.descriptor<tensor = memref<32x16xf8E4M3FN, #gpu.address_space<workgroup>>>
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%p: !llvm.ptr) workgroup(%s: memref<64x128xf8E4M3FN, #gpu.address_space<workgroup>>) kernel {
      %map = builtin.unrealized_conversion_cast %p : !llvm.ptr to !map
      %da = nvgpu.warpgroup.generate.descriptor %s, %map : memref<64x128xf8E4M3FN, #gpu.address_space<workgroup>>, !map -> !da
      %db = nvgpu.warpgroup.generate.descriptor %s, %map : memref<64x128xf8E4M3FN, #gpu.address_space<workgroup>>, !map -> !db
      %acc0 = nvgpu.warpgroup.mma.init.accumulator -> !acc
      // expected-error @+1 {{the GPU emulator models warpgroup MMA with bf16, f16 or tf32 multiplicands only (kernel 'k')}}
      %n = nvgpu.warpgroup.mma %da, %db, %acc0 : !da, !db, !acc -> !acc
      gpu.return
    }
  }
}
