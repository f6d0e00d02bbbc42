// Every GPU memory, stream and event operation gpu-to-llvm lowers to an
// mgpu* call, used by runtime-abi.test.
module attributes {gpu.container_module} {
func.func @f(%n: index, %m: memref<?xf32>, %h: memref<4xf32>, %v: f32, %i: i32, %s16: i16) {
  %t0 = gpu.wait async
  %a, %t1 = gpu.alloc async [%t0] (%n) : memref<?xf32>
  %t2 = gpu.memcpy async [%t1] %a, %m : memref<?xf32>, memref<?xf32>
  %t3 = gpu.memset async [%t2] %a, %v : memref<?xf32>, f32
  %b, %t4 = gpu.alloc async [%t3] (%n) : memref<?xi32>
  %t5 = gpu.memset async [%t4] %b, %i : memref<?xi32>, i32
  %c, %t6 = gpu.alloc async [%t5] (%n) : memref<?xi16>
  %t7 = gpu.memset async [%t6] %c, %s16 : memref<?xi16>, i16
  %t8 = gpu.dealloc async [%t7] %a : memref<?xf32>
  gpu.wait [%t8]
  %u = memref.cast %h : memref<4xf32> to memref<*xf32>
  gpu.host_register %u : memref<*xf32>
  gpu.host_unregister %u : memref<*xf32>
  return
}
}
