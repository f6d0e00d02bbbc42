// RUN: blockc-opt %s -split-input-file -verify-diagnostics --blockc-gpu-host-shared-allocs | FileCheck %s

// Outside kernels, every memref.alloc becomes managed memory
// (gpu.alloc host_shared) and every memref.dealloc an asynchronous
// gpu.dealloc that is waited for at once. Buffers of the kernels themselves
// are left alone; a buffer in another memory space is an error.

// A static host buffer becomes managed memory that kernels can access.
// CHECK-LABEL: func.func @static_alloc
// CHECK-NOT:     memref.alloc
// CHECK:         %[[M:.+]] = gpu.alloc host_shared () : memref<4x8xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         return %[[M]] : memref<4x8xf32>
func.func @static_alloc() -> memref<4x8xf32> {
  %m = memref.alloc() : memref<4x8xf32>
  return %m : memref<4x8xf32>
}

// -----

// Dynamic sizes are kept, in order.
// CHECK-LABEL: func.func @dynamic_alloc
// CHECK-SAME:    (%[[N:.+]]: index, %[[K:.+]]: index)
// CHECK-NOT:     memref.alloc
// CHECK:         %[[M:.+]] = gpu.alloc host_shared (%[[N]], %[[K]]) : memref<?x8x?xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         return %[[M]] : memref<?x8x?xf32>
func.func @dynamic_alloc(%n: index, %k: index) -> memref<?x8x?xf32> {
  %m = memref.alloc(%n, %k) : memref<?x8x?xf32>
  return %m : memref<?x8x?xf32>
}

// -----

// A dealloc becomes the only form gpu-to-llvm lowers: an async gpu.dealloc
// after a fresh token, then a blocking gpu.wait on its token.
// CHECK-LABEL: func.func @dealloc
// CHECK-SAME:    (%[[M:.+]]: memref<?xf32>)
// CHECK-NOT:     memref.dealloc
// CHECK:         %[[T0:.+]] = gpu.wait async
// CHECK-NEXT:    %[[T1:.+]] = gpu.dealloc async [%[[T0]]] %[[M]] : memref<?xf32>
// CHECK-NEXT:    gpu.wait [%[[T1]]]
// CHECK-NOT:     memref.dealloc
// CHECK:         return
func.func @dealloc(%m: memref<?xf32>) {
  memref.dealloc %m : memref<?xf32>
  return
}

// -----

// An alloc / dealloc pair: the dealloc frees the managed buffer.
// CHECK-LABEL: func.func @alloc_dealloc
// CHECK:         %[[M:.+]] = gpu.alloc host_shared (%{{.+}}) : memref<?xf32>
// CHECK:         memref.store %{{.+}}, %[[M]]
// CHECK:         %[[T0:.+]] = gpu.wait async
// CHECK-NEXT:    %[[T1:.+]] = gpu.dealloc async [%[[T0]]] %[[M]] : memref<?xf32>
// CHECK-NEXT:    gpu.wait [%[[T1]]]
func.func @alloc_dealloc(%n: index, %i: index, %v: f32) {
  %m = memref.alloc(%n) : memref<?xf32>
  memref.store %v, %m[%i] : memref<?xf32>
  memref.dealloc %m : memref<?xf32>
  return
}

// -----

// A buffer of the kernel itself (inside gpu.launch) is not a host buffer:
// it stays a memref.alloc / memref.dealloc.
// CHECK-LABEL: func.func @negative_alloc_in_launch
// CHECK:         gpu.launch
// CHECK:           %[[M:.+]] = memref.alloc(%{{.+}}) : memref<?xf32>
// CHECK:           memref.dealloc %[[M]] : memref<?xf32>
// CHECK:           gpu.terminator
// CHECK-NOT:     gpu.alloc
// CHECK-NOT:     gpu.dealloc
// CHECK:         return
func.func @negative_alloc_in_launch(%n: index) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %m = memref.alloc(%n) : memref<?xf32>
    memref.dealloc %m : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

// A buffer in a non-default memory space cannot be managed memory.
func.func @alloc_memory_space() -> memref<4xf32, 1> {
  // expected-error @+1 {{'memref.alloc' op cannot be placed in GPU-accessible memory (memory space or symbol operands)}}
  %m = memref.alloc() : memref<4xf32, 1>
  return %m : memref<4xf32, 1>
}

// -----

// Nor can one with symbol operands (a non-identity layout).
func.func @alloc_symbol_operands(%s: index) -> memref<4xf32, affine_map<(d0)[s0] -> (d0 + s0)>> {
  // expected-error @+1 {{'memref.alloc' op cannot be placed in GPU-accessible memory (memory space or symbol operands)}}
  %m = memref.alloc()[%s] : memref<4xf32, affine_map<(d0)[s0] -> (d0 + s0)>>
  return %m : memref<4xf32, affine_map<(d0)[s0] -> (d0 + s0)>>
}

// -----

// A constant global read by a kernel gets a managed copy at the start of the
// call; the kernel reads the copy, host code still reads the global, and the
// copy is released before the return.
memref.global "private" constant @table : memref<4xf64> = dense<[1.0, 2.0, 3.0, 4.0]>
// CHECK-LABEL: func.func @global_read_by_kernel
// CHECK: %[[G:.+]] = memref.get_global @table : memref<4xf64>
// CHECK: %[[M:.+]] = gpu.alloc host_shared () : memref<4xf64>
// CHECK: %[[T0:.+]] = gpu.wait async
// CHECK: %[[T1:.+]] = gpu.memcpy async [%[[T0]]] %[[M]], %[[G]] : memref<4xf64>, memref<4xf64>
// CHECK: gpu.wait [%[[T1]]]
// CHECK: gpu.launch
// CHECK: memref.load %[[M]]
// CHECK: memref.load %[[G]]
// CHECK: %[[T:.+]] = gpu.wait async
// CHECK: gpu.dealloc async [%[[T]]] %[[M]] : memref<4xf64>
// CHECK: return
func.func @global_read_by_kernel(%out: memref<4xf64>) -> f64 {
  %g = memref.get_global @table : memref<4xf64>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %g[%c0] : memref<4xf64>
    memref.store %v, %out[%c0] : memref<4xf64>
    gpu.terminator
  }
  %h = memref.load %g[%c1] : memref<4xf64>
  return %h : f64
}

// -----

// A global reached by a kernel through views made on the host (cast,
// expand_shape, subview) is copied too, and the views are taken of the copy;
// a view the host alone reads keeps the global.
memref.global "private" constant @freqs : memref<8xf32> = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]>
// CHECK-LABEL: func.func @global_through_views
// CHECK: %[[G:.+]] = memref.get_global @freqs : memref<8xf32>
// CHECK: %[[M:.+]] = gpu.alloc host_shared () : memref<8xf32>
// CHECK: %[[T0:.+]] = gpu.wait async
// CHECK: %[[T1:.+]] = gpu.memcpy async [%[[T0]]] %[[M]], %[[G]] : memref<8xf32>, memref<8xf32>
// CHECK: gpu.wait [%[[T1]]]
// CHECK: %[[C:.+]] = memref.cast %[[M]] : memref<8xf32> to memref<?xf32>
// CHECK: %[[E:.+]] = memref.expand_shape %[[M]] {{\[\[}}0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
// CHECK: %[[S:.+]] = memref.subview %[[E]][1, 0] [1, 4] [1, 1]
// CHECK: %[[H:.+]] = memref.subview %[[G]][0] [2] [1]
// CHECK: gpu.launch
// CHECK:   memref.load %[[C]]
// CHECK:   memref.load %[[S]]
// CHECK: memref.load %[[H]]
// CHECK: gpu.dealloc async [%{{.+}}] %[[M]] : memref<8xf32>
// CHECK: return
func.func @global_through_views(%out: memref<2xf32>) -> f32 {
  %g = memref.get_global @freqs : memref<8xf32>
  %cast = memref.cast %g : memref<8xf32> to memref<?xf32>
  %e = memref.expand_shape %g [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
  %row = memref.subview %e[1, 0] [1, 4] [1, 1] : memref<2x4xf32> to memref<4xf32, strided<[1], offset: 4>>
  %host = memref.subview %g[0] [2] [1] : memref<8xf32> to memref<2xf32, strided<[1]>>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %a = memref.load %cast[%c0] : memref<?xf32>
    %b = memref.load %row[%c1] : memref<4xf32, strided<[1], offset: 4>>
    memref.store %a, %out[%c0] : memref<2xf32>
    memref.store %b, %out[%c1] : memref<2xf32>
    gpu.terminator
  }
  %h = memref.load %host[%c1] : memref<2xf32, strided<[1]>>
  return %h : f32
}

// -----

// Host copies of contiguous buffers run on the GPU (gpu.memcpy); a strided
// copy stays a host copy.
// CHECK-LABEL: func.func @copies
// CHECK:         %[[A:.+]] = gpu.alloc host_shared (%{{.+}}) : memref<?x64xf32>
// CHECK:         %[[B:.+]] = gpu.alloc host_shared (%{{.+}}) : memref<?x64xf32>
// CHECK:         %[[T0:.+]] = gpu.wait async
// CHECK:         %[[T1:.+]] = gpu.memcpy async [%[[T0]]] %[[B]], %[[A]] : memref<?x64xf32>, memref<?x64xf32>
// CHECK:         gpu.wait [%[[T1]]]
// CHECK:         memref.copy %{{.+}}, %{{.+}} : memref<?x32xf32, strided<[64, 1]>> to memref<?x32xf32>
// CHECK-NOT:     memref.copy
func.func @copies(%n: index, %out: memref<?x32xf32>) -> memref<?x64xf32> {
  %a = memref.alloc(%n) : memref<?x64xf32>
  %b = memref.alloc(%n) : memref<?x64xf32>
  memref.copy %a, %b : memref<?x64xf32> to memref<?x64xf32>
  %s = memref.subview %b[0, 0] [%n, 32] [1, 1] : memref<?x64xf32> to memref<?x32xf32, strided<[64, 1]>>
  memref.copy %s, %out : memref<?x32xf32, strided<[64, 1]>> to memref<?x32xf32>
  memref.dealloc %a : memref<?x64xf32>
  return %b : memref<?x64xf32>
}
