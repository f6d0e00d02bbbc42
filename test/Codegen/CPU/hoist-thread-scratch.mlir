// RUN: blockc-opt %s --pass-pipeline="builtin.module(func.func(blockc-cpu-hoist-thread-scratch))" | FileCheck %s
// RUN: blockc-opt %s --pass-pipeline="builtin.module(func.func(blockc-cpu-hoist-thread-scratch),canonicalize,convert-scf-to-cf)" | FileCheck %s --check-prefix=LOWER

// A static alloca in the per-iteration alloca_scope of a work-sharing loop
// (what convert-scf-to-openmp makes of a stack buffer in an scf.forall)
// moves to the start of its omp.parallel region: allocated once per
// thread. A dynamic alloca (it depends on the iteration) stays, and so
// does one outside any omp.wsloop.
// CHECK-LABEL: func.func @per_thread
// CHECK: omp.parallel {
// CHECK-NEXT: %[[S:.+]] = memref.alloca() {alignment = 64 : i64} : memref<16xf32>
// CHECK-NEXT: omp.wsloop
// CHECK: memref.alloca_scope
// CHECK: %[[DYN:.+]] = memref.alloca(%{{.+}}) : memref<?xf32>
// CHECK: memref.load %[[S]]
// CHECK: memref.load %[[DYN]]
// After canonicalize the scope without static allocas is still there (it
// holds the dynamic one), while a loop whose only alloca was hoisted has
// no scope left and lowers to control flow.
// CHECK-LABEL: func.func @static_only
// CHECK: omp.parallel {
// CHECK-NEXT: memref.alloca() : memref<4x8xf32>
// CHECK-NEXT: omp.wsloop
// LOWER-LABEL: func.func @static_only
// LOWER-NOT: memref.alloca_scope
// LOWER: omp.parallel {
// LOWER-NEXT: memref.alloca() : memref<4x8xf32>
// CHECK-LABEL: func.func @outside_loop
// CHECK: omp.parallel {
// CHECK-NEXT: memref.alloca_scope
// CHECK-NEXT: memref.alloca() : memref<2xf32>
func.func @per_thread(%out: memref<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%c8) step (%c1) {
        memref.alloca_scope {
          %s = memref.alloca() {alignment = 64 : i64} : memref<16xf32>
          %d = memref.alloca(%i) : memref<?xf32>
          %v = memref.load %s[%c0] : memref<16xf32>
          %w = memref.load %d[%c0] : memref<?xf32>
          %x = arith.addf %v, %w : f32
          memref.store %x, %out[%i, %c0] : memref<8x16xf32>
        }
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

func.func @static_only(%out: memref<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%c8) step (%c1) {
        memref.alloca_scope {
          %s = memref.alloca() : memref<4x8xf32>
          scf.for %j = %c0 to %c4 step %c1 {
            %v = memref.load %s[%j, %c0] : memref<4x8xf32>
            memref.store %v, %out[%i, %j] : memref<8x16xf32>
          }
        }
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

func.func @outside_loop(%out: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  omp.parallel {
    memref.alloca_scope {
      %s = memref.alloca() : memref<2xf32>
      %v = memref.load %s[%c0] : memref<2xf32>
      memref.store %v, %out[%c0] : memref<2xf32>
    }
    omp.terminator
  }
  return
}

// A scope left without allocas is inlined by the pass itself, even around
// ops whose memory effects canonicalize does not know (a micro-kernel
// call): the loop body's scf.if then lowers to blocks.
// CHECK-LABEL: func.func @opaque_call
// CHECK: omp.parallel {
// CHECK-NEXT: %[[S:.+]] = memref.alloca() : memref<8xf32>
// CHECK-NOT: memref.alloca_scope
// CHECK: func.call @micro_kernel(%[[S]])
// LOWER-LABEL: func.func @opaque_call
// LOWER-NOT: memref.alloca_scope
// LOWER: cf.cond_br
func.func private @micro_kernel(memref<8xf32>)
func.func @opaque_call(%out: memref<8xf32>, %flag: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%c8) step (%c1) {
        memref.alloca_scope {
          %s = memref.alloca() : memref<8xf32>
          func.call @micro_kernel(%s) : (memref<8xf32>) -> ()
          scf.if %flag {
            %v = memref.load %s[%i] : memref<8xf32>
            memref.store %v, %out[%i] : memref<8xf32>
          }
        }
        omp.yield
      }
    }
    omp.terminator
  }
  return
}
