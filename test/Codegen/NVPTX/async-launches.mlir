// RUN: blockc-opt %s -blockc-gpu-async-launches | FileCheck %s

// A host function's stream-less launches get one stream created at entry;
// the runtime's allocation and free calls get it too (the per-call stream of
// the free goes); the host waits for it before the first load of a buffer
// after queued work (not before stack-slot accesses, not twice in a row),
// before an unknown call, and at the return, where it is destroyed.

module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target, "">]
  llvm.func @mgpuMemAlloc(i64, !llvm.ptr, i8) -> !llvm.ptr
  llvm.func @mgpuMemFree(!llvm.ptr, !llvm.ptr)
  llvm.func @mgpuStreamCreate() -> !llvm.ptr
  llvm.func @mgpuStreamSynchronize(!llvm.ptr)
  llvm.func @mgpuStreamDestroy(!llvm.ptr)
  llvm.func @consume(!llvm.ptr)

  // CHECK-LABEL: llvm.func @kernels_and_host_code
  // CHECK-NEXT:    %[[S:.*]] = llvm.call @mgpuStreamCreate() : () -> !llvm.ptr
  // CHECK:         %[[BUF:.*]] = llvm.call @mgpuMemAlloc(%{{.*}}, %[[S]], %{{.*}})
  // CHECK-NEXT:    gpu.launch_func <%[[S]] : !llvm.ptr> @kernels::@k
  // CHECK-NEXT:    llvm.cond_br
  // CHECK:       ^bb1:
  // CHECK-NEXT:    gpu.launch_func <%[[S]] : !llvm.ptr> @kernels::@k
  // CHECK-NEXT:    llvm.br ^bb2
  // CHECK:       ^bb2:
  // CHECK-NEXT:    llvm.alloca
  // CHECK-NEXT:    llvm.store
  // CHECK-NEXT:    llvm.call @mgpuStreamSynchronize(%[[S]])
  // CHECK-NEXT:    llvm.load %[[BUF]]
  // CHECK-NEXT:    llvm.load %[[BUF]]
  // CHECK-NEXT:    gpu.launch_func <%[[S]] : !llvm.ptr> @kernels::@k
  // CHECK-NEXT:    llvm.call @mgpuStreamSynchronize(%[[S]])
  // CHECK-NEXT:    llvm.call @consume(%[[BUF]])
  // CHECK-NEXT:    llvm.call @mgpuMemFree(%[[BUF]], %[[S]])
  // CHECK-NEXT:    llvm.call @mgpuStreamSynchronize(%[[S]])
  // CHECK-NEXT:    llvm.call @mgpuStreamDestroy(%[[S]])
  // CHECK-NEXT:    llvm.return
  llvm.func @kernels_and_host_code(%n: i64, %flag: i1) {
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %null = llvm.mlir.zero : !llvm.ptr
    %shared = llvm.mlir.constant(1 : i8) : i8
    %buf = llvm.call @mgpuMemAlloc(%n, %null, %shared) : (i64, !llvm.ptr, i8) -> !llvm.ptr
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) : i64 args(%buf : !llvm.ptr)
    llvm.cond_br %flag, ^bb1, ^bb2
  ^bb1:
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) : i64 args(%buf : !llvm.ptr)
    llvm.br ^bb2
  ^bb2:
    %slot = llvm.alloca %c1 x i64 : (i64) -> !llvm.ptr
    llvm.store %n, %slot : i64, !llvm.ptr
    %a = llvm.load %buf : !llvm.ptr -> i64
    %b = llvm.load %buf : !llvm.ptr -> i64
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) : i64 args(%buf : !llvm.ptr)
    llvm.call @consume(%buf) : (!llvm.ptr) -> ()
    %s = llvm.call @mgpuStreamCreate() : () -> !llvm.ptr
    llvm.call @mgpuMemFree(%buf, %s) : (!llvm.ptr, !llvm.ptr) -> ()
    llvm.call @mgpuStreamSynchronize(%s) : (!llvm.ptr) -> ()
    llvm.call @mgpuStreamDestroy(%s) : (!llvm.ptr) -> ()
    llvm.return
  }

  // A function with a launch on a stream already is left alone.
  // CHECK-LABEL: llvm.func @has_a_stream
  // CHECK:         %[[T:.*]] = llvm.call @mgpuStreamCreate()
  // CHECK-NEXT:    gpu.launch_func <%[[T]] : !llvm.ptr> @kernels::@k
  // CHECK-NEXT:    gpu.launch_func @kernels::@k
  // CHECK-NEXT:    llvm.return
  llvm.func @has_a_stream(%p: !llvm.ptr) {
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %t = llvm.call @mgpuStreamCreate() : () -> !llvm.ptr
    gpu.launch_func <%t : !llvm.ptr> @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) : i64 args(%p : !llvm.ptr)
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) : i64 args(%p : !llvm.ptr)
    llvm.return
  }

  // A function without launches gets no stream.
  // CHECK-LABEL: llvm.func @host_only
  // CHECK-NEXT:    llvm.load
  // CHECK-NEXT:    llvm.return
  llvm.func @host_only(%p: !llvm.ptr) -> i64 {
    %v = llvm.load %p : !llvm.ptr -> i64
    llvm.return %v : i64
  }
}
