// RUN: blockc-opt %s --blockc-nvptx-lower-to-llvm-pipeline="emulate=true" | %emulator_runner 2>&1 | FileCheck %s
// RUN: blockc-opt %s --blockc-nvptx-lower-to-llvm-pipeline="emulate=true check-bounds=true" | %emulator_runner 2>&1 | FileCheck %s --check-prefixes=CHECK,BOUNDS

// What a GPU refuses or leaves undefined is an error naming the kernel (and
// the op's location): divergent barriers, deadlocks, launch limits; with
// bounds checking, an access out of bounds. Each case runs in its own
// function; the error is sticky, so @main clears it between cases.

llvm.func @blockcEmuClearError()

// Threads 32-63 return before the barrier that threads 0-31 wait at.
// CHECK: blockc GPU emulator: kernel 'divergent_kernel': divergent barrier in block (0,0,0): 32 threads wait at gpu.barrier at {{.*}}errors.mlir:[[@LINE+9]]:{{[0-9]+}}, 32 threads exited
func.func @divergent() {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %low = arith.cmpi ult, %tx, %c32 : index
    scf.if %low {
      gpu.barrier
    }
    gpu.terminator
  }
  return
}

// Two halves of the block wait at different barriers.
// CHECK: blockc GPU emulator: kernel 'deadlock_kernel': deadlock in block (0,0,0): 32 threads wait at gpu.barrier at {{.*}}errors.mlir:[[@LINE+9]]:{{[0-9]+}}, 32 threads wait at gpu.barrier at {{.*}}errors.mlir:[[@LINE+11]]:{{[0-9]+}}
func.func @deadlock() {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %low = arith.cmpi ult, %tx, %c32 : index
    scf.if %low {
      gpu.barrier
    } else {
      gpu.barrier
    }
    gpu.terminator
  }
  return
}

// 1025 threads in a block.
// CHECK: blockc GPU emulator: kernel 'too_many_threads_kernel': block x = 1025 exceeds 1024
func.func @too_many_threads() {
  %c1 = arith.constant 1 : index
  %c1025 = arith.constant 1025 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1025, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return
}

// A grid z of 70000 blocks (blockc's own launches go through
// blockc-gpu-legalize-grid, which keeps y and z within 65535).
// CHECK: blockc GPU emulator: kernel 'grid_z_kernel': grid z = 70000 exceeds 65535
func.func @grid_z() {
  %c1 = arith.constant 1 : index
  %c70000 = arith.constant 70000 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c70000)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return
}

// 40 KiB of static and 200 KiB of dynamic shared memory: more than the
// 227 KiB a block may use on sm_90 (the pipeline's default chip).
// CHECK: blockc GPU emulator: kernel 'shared_kernel': static (40960) plus dynamic (204800) shared memory is 245760 bytes, more than the target's 232448
func.func @shared() {
  %c1 = arith.constant 1 : index
  %dyn = arith.constant 204800 : i32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             dynamic_shared_memory_size %dyn
             workgroup(%s : memref<10240xf32, #gpu.address_space<workgroup>>) {
    gpu.terminator
  }
  return
}

// Thread i reads element i + 1 of a 64-element buffer: thread 63 reads past
// the end. Without bounds checking nothing is reported (the read stays
// inside the allocation's 256-byte alignment).
// BOUNDS: blockc GPU emulator: kernel 'bounds_kernel': out-of-bounds access at memref.load at {{.*}}errors.mlir:[[@LINE+10]]:{{[0-9]+}} in thread (63,0,0) of block (0,0,0): index 64 is outside [0, 64) in dimension 0
// CHECK-NOT: bounds_kernel
func.func @bounds() {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %in = gpu.alloc host_shared () : memref<64xf32>
  %out = gpu.alloc host_shared () : memref<64xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %next = arith.addi %tx, %c1 : index
    %v = memref.load %in[%next] : memref<64xf32>
    memref.store %v, %out[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}

// A kernel that reads a host buffer (memref.alloc: host memory, not
// mgpuMemAlloc's) runs without bounds checking, as host and device share
// one address space here; with bounds checking it is an error, as the read
// would fault on a GPU.
// BOUNDS: blockc GPU emulator: kernel 'host_pointer_kernel': thread (0,0,0) of block (0,0,0): memref.load at {{.*}}errors.mlir:[[@LINE+9]]:{{[0-9]+}} reads address 0x{{[0-9a-f]+}}, which is not device memory (no live mgpuMemAlloc allocation holds its 4 bytes; a host pointer faults on a GPU)
// CHECK-NOT: host_pointer_kernel
func.func @host_pointer() {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %in = memref.alloc() : memref<32xf32>
  %out = gpu.alloc host_shared () : memref<32xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %in[%tx] : memref<32xf32>
    memref.store %v, %out[%tx] : memref<32xf32>
    gpu.terminator
  }
  memref.dealloc %in : memref<32xf32>
  return
}

func.func @main() {
  call @divergent() : () -> ()
  llvm.call @blockcEmuClearError() : () -> ()
  call @deadlock() : () -> ()
  llvm.call @blockcEmuClearError() : () -> ()
  call @too_many_threads() : () -> ()
  llvm.call @blockcEmuClearError() : () -> ()
  call @grid_z() : () -> ()
  llvm.call @blockcEmuClearError() : () -> ()
  call @shared() : () -> ()
  llvm.call @blockcEmuClearError() : () -> ()
  call @bounds() : () -> ()
  llvm.call @blockcEmuClearError() : () -> ()
  call @host_pointer() : () -> ()
  return
}
