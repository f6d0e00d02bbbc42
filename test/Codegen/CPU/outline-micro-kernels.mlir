// RUN: blockc-opt %s --split-input-file --blockc-cpu-outline-micro-kernels | FileCheck %s

// Two kernels with the same 2-row micro-kernel over operands of different
// static shapes (64 and 128 columns, a packed panel of 16 rows) share one
// function: the outermost result-less loop around the register tile (the
// row loop, not the column loop inside it) becomes a call, every memref
// cast to its canonical type (sizes, offset and non-unit strides dynamic,
// the unit stride kept), constants cloned into the function, the subview
// inside retyped from its dynamic source.
// CHECK-LABEL: func.func private @a(
// CHECK-SAME:    %[[A:.+]]: memref<?x64xf32>, %[[P:.+]]: memref<16x8xf32>, %[[LO:.+]]: index, %[[HI:.+]]: index, %[[K:.+]]: index)
// CHECK-DAG:     %[[CA:.+]] = memref.cast %[[A]] : memref<?x64xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK-DAG:     %[[CP:.+]] = memref.cast %[[P]] : memref<16x8xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK:         call @[[MICRO:a_micro]](%[[LO]], %[[HI]], %[[CA]], %[[CP]], %[[K]])
// CHECK-NOT:     scf.for
// CHECK:         return
// CHECK:       func.func private @[[MICRO]](%[[MLO:.+]]: index, %[[MHI:.+]]: index, %[[MA:.+]]: memref<?x?xf32, strided<[?, 1], offset: ?>>, %[[MP:.+]]: memref<?x?xf32, strided<[?, 1], offset: ?>>, %[[MK:.+]]: index)
// CHECK-SAME:    attributes {llvm.linkage = #llvm.linkage<internal>, no_inline, passthrough = ["noinline"]}
// CHECK-DAG:     %[[C2:.+]] = arith.constant 2 : index
// CHECK:         scf.for %{{.+}} = %[[MLO]] to %[[MHI]] step %[[C2]] {
// CHECK:           memref.subview %[[MA]]{{.+}} : memref<?x?xf32, strided<[?, 1], offset: ?>> to memref<2x8xf32, strided<[?, 1], offset: ?>>
// CHECK:           scf.for {{.+}} -> (vector<8xf32>, vector<8xf32>)
// CHECK:         return
// CHECK-LABEL: func.func private @b(
// CHECK:         memref.cast {{.+}} : memref<?x128xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK:         call @[[MICRO]](
// CHECK-NOT:     func.func private @b_micro
func.func private @a(%a: memref<?x64xf32>, %p: memref<16x8xf32>, %lo: index, %hi: index, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %pad = arith.constant 0.0 : f32
  scf.for %i = %lo to %hi step %c2 {
    scf.for %j = %c0 to %c16 step %c8 {
      %t = memref.subview %a[%i, %j] [2, 8] [1, 1] : memref<?x64xf32> to memref<2x8xf32, strided<[64, 1], offset: ?>>
      %r0 = vector.transfer_read %t[%c0, %c0], %pad {in_bounds = [true]} : memref<2x8xf32, strided<[64, 1], offset: ?>>, vector<8xf32>
      %r1 = vector.transfer_read %t[%c1, %c0], %pad {in_bounds = [true]} : memref<2x8xf32, strided<[64, 1], offset: ?>>, vector<8xf32>
      %acc:2 = scf.for %kk = %c0 to %k step %c1 iter_args(%x = %r0, %y = %r1) -> (vector<8xf32>, vector<8xf32>) {
        %w = vector.transfer_read %p[%kk, %c0], %pad {in_bounds = [true]} : memref<16x8xf32>, vector<8xf32>
        %s0 = memref.load %a[%i, %kk] : memref<?x64xf32>
        %b0 = vector.broadcast %s0 : f32 to vector<8xf32>
        %x1 = vector.fma %b0, %w, %x : vector<8xf32>
        %y1 = vector.fma %b0, %w, %y : vector<8xf32>
        scf.yield %x1, %y1 : vector<8xf32>, vector<8xf32>
      }
      vector.transfer_write %acc#0, %t[%c0, %c0] {in_bounds = [true]} : vector<8xf32>, memref<2x8xf32, strided<[64, 1], offset: ?>>
      vector.transfer_write %acc#1, %t[%c1, %c0] {in_bounds = [true]} : vector<8xf32>, memref<2x8xf32, strided<[64, 1], offset: ?>>
    }
  }
  return
}
func.func private @b(%a: memref<?x128xf32>, %p: memref<16x8xf32>, %lo: index, %hi: index, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %pad = arith.constant 0.0 : f32
  scf.for %i = %lo to %hi step %c2 {
    scf.for %j = %c0 to %c16 step %c8 {
      %t = memref.subview %a[%i, %j] [2, 8] [1, 1] : memref<?x128xf32> to memref<2x8xf32, strided<[128, 1], offset: ?>>
      %r0 = vector.transfer_read %t[%c0, %c0], %pad {in_bounds = [true]} : memref<2x8xf32, strided<[128, 1], offset: ?>>, vector<8xf32>
      %r1 = vector.transfer_read %t[%c1, %c0], %pad {in_bounds = [true]} : memref<2x8xf32, strided<[128, 1], offset: ?>>, vector<8xf32>
      %acc:2 = scf.for %kk = %c0 to %k step %c1 iter_args(%x = %r0, %y = %r1) -> (vector<8xf32>, vector<8xf32>) {
        %w = vector.transfer_read %p[%kk, %c0], %pad {in_bounds = [true]} : memref<16x8xf32>, vector<8xf32>
        %s0 = memref.load %a[%i, %kk] : memref<?x128xf32>
        %b0 = vector.broadcast %s0 : f32 to vector<8xf32>
        %x1 = vector.fma %b0, %w, %x : vector<8xf32>
        %y1 = vector.fma %b0, %w, %y : vector<8xf32>
        scf.yield %x1, %y1 : vector<8xf32>, vector<8xf32>
      }
      vector.transfer_write %acc#0, %t[%c0, %c0] {in_bounds = [true]} : vector<8xf32>, memref<2x8xf32, strided<[128, 1], offset: ?>>
      vector.transfer_write %acc#1, %t[%c1, %c0] {in_bounds = [true]} : vector<8xf32>, memref<2x8xf32, strided<[128, 1], offset: ?>>
    }
  }
  return
}

// -----

// A micro-kernel without an equal stays inline over its static types; so
// does one that makes a memref other than a subview, and a loop holding two
// register tiles is no micro-kernel (each tile's own loop would be, if it
// had one).
// CHECK-LABEL: func.func @alone(
// CHECK-NOT:     call
// CHECK:         scf.for
// CHECK:           scf.for {{.+}} -> (vector<8xf32>)
// CHECK:         memref.cast
// CHECK:           scf.for {{.+}} -> (vector<8xf32>)
// CHECK:         scf.for
// CHECK:           scf.for {{.+}} -> (vector<8xf32>)
// CHECK:           scf.for {{.+}} -> (vector<8xf32>)
// CHECK:         return
// CHECK-NOT:   func.func
func.func @alone(%a: memref<64xf32>, %b: memref<64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %pad = arith.constant 0.0 : f32
  %z = arith.constant dense<0.0> : vector<8xf32>
  scf.for %i = %c0 to %n step %c1 {
    %s = scf.for %k = %c0 to %n step %c1 iter_args(%x = %z) -> (vector<8xf32>) {
      %v = vector.transfer_read %a[%k], %pad {in_bounds = [true]} : memref<64xf32>, vector<8xf32>
      %y = arith.addf %x, %v : vector<8xf32>
      scf.yield %y : vector<8xf32>
    }
    vector.transfer_write %s, %b[%i] {in_bounds = [true]} : vector<8xf32>, memref<64xf32>
  }
  scf.for %i = %c0 to %n step %c1 {
    %d = memref.cast %a : memref<64xf32> to memref<?xf32>
    %s = scf.for %k = %c0 to %n step %c1 iter_args(%x = %z) -> (vector<8xf32>) {
      %v = vector.transfer_read %d[%k], %pad {in_bounds = [true]} : memref<?xf32>, vector<8xf32>
      %y = arith.addf %x, %v : vector<8xf32>
      scf.yield %y : vector<8xf32>
    }
    vector.transfer_write %s, %b[%i] {in_bounds = [true]} : vector<8xf32>, memref<64xf32>
  }
  scf.for %i = %c0 to %n step %c1 {
    %s = scf.for %k = %c0 to %n step %c1 iter_args(%x = %z) -> (vector<8xf32>) {
      %v = vector.transfer_read %a[%k], %pad {in_bounds = [true]} : memref<64xf32>, vector<8xf32>
      %y = arith.addf %x, %v : vector<8xf32>
      scf.yield %y : vector<8xf32>
    }
    %t = scf.for %k = %c0 to %n step %c1 iter_args(%x = %s) -> (vector<8xf32>) {
      %v = vector.transfer_read %b[%k], %pad {in_bounds = [true]} : memref<64xf32>, vector<8xf32>
      %y = arith.addf %x, %v : vector<8xf32>
      scf.yield %y : vector<8xf32>
    }
    vector.transfer_write %t, %b[%i] {in_bounds = [true]} : vector<8xf32>, memref<64xf32>
  }
  return
}
