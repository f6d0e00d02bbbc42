// RUN: blockc-opt %s -split-input-file --blockc-gpu-legalize-grid | FileCheck %s

// Grid y and z extents that may exceed 65535 become min(extent, 65535)
// blocks and a grid-stride loop over the extent; launches whose sizes may
// be 0 run under a guard.

// Static sizes within the limits: unchanged.
// CHECK-LABEL: func.func @within_limits
// CHECK-NOT:     scf.
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %c4, {{.*}} = %c65535, {{.*}} = %c2)
// CHECK-NOT:     scf.
func.func @within_limits(%m: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c65535 = arith.constant 65535 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c65535, %gz = %c2)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return
}

// -----

// A static z of 70000: 65535 blocks, each striding over z; inside, the
// block index along z is the loop's and the grid keeps its 70000 (region
// argument and gpu.grid_dim alike). No guard: every size is positive.
// CHECK-LABEL: func.func @static_z
// CHECK-SAME:    (%[[M:.+]]: memref<70000xindex>)
// CHECK-DAG:     %[[C70000:.+]] = arith.constant 70000 : index
// CHECK-DAG:     %[[CAP:.+]] = arith.constant 65535 : index
// CHECK-NOT:     scf.if
// CHECK:         gpu.launch blocks(%{{.+}}, %{{.+}}, %[[BZ:.+]]) in (%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}, %[[GZ:.+]] = %[[CAP]])
// CHECK-NEXT:      scf.for %[[Z:.+]] = %[[BZ]] to %[[C70000]] step %[[GZ]] {
// CHECK-NEXT:        %[[S:.+]] = arith.addi %[[Z]], %[[C70000]] : index
// CHECK-NEXT:        %[[T:.+]] = arith.addi %[[S]], %[[C70000]] : index
// CHECK-NEXT:        memref.store %[[T]], %[[M]][%[[Z]]]
// CHECK-NEXT:      }
// CHECK-NEXT:      gpu.terminator
func.func @static_z(%m: memref<70000xindex>) {
  %c1 = arith.constant 1 : index
  %c70000 = arith.constant 70000 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c70000)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %g = gpu.grid_dim z
    %s = arith.addi %bz, %gz : index
    %t = arith.addi %s, %g : index
    memref.store %t, %m[%bz] : memref<70000xindex>
    gpu.terminator
  }
  return
}

// -----

// A dynamic y (e.g. T): min(T, 65535) blocks along y, a loop over T, and
// the launch only when T > 0.
// CHECK-LABEL: func.func @dynamic_y
// CHECK-SAME:    (%[[T:.+]]: index, %[[M:.+]]: memref<?xf32>)
// CHECK:         %[[CAP:.+]] = arith.constant 65535 : index
// CHECK:         %[[G:.+]] = arith.minui %[[T]], %[[CAP]] : index
// CHECK:         %[[ZERO:.+]] = arith.constant 0 : index
// CHECK:         %[[NONEMPTY:.+]] = arith.cmpi ugt, %[[G]], %[[ZERO]] : index
// CHECK:         scf.if %[[NONEMPTY]] {
// CHECK-NEXT:      gpu.launch blocks(%{{.+}}, %[[BY:.+]], %{{.+}}) in (%{{.+}} = %{{.+}}, %[[GY:.+]] = %[[G]], %{{.+}} = %{{.+}})
// CHECK-NEXT:        scf.for %[[Y:.+]] = %[[BY]] to %[[T]] step %[[GY]] {
// CHECK-NEXT:          memref.store %{{.+}}, %[[M]][%[[Y]]]
func.func @dynamic_y(%t: index, %m: memref<?xf32>) {
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %t, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %f, %m[%by] : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

// A dynamic x (e.g. B * T / 32 blocks) and a dynamic block size: no
// stride loop along x (its limit is 2^31 - 1), a guard on both.
// CHECK-LABEL: func.func @dynamic_x
// CHECK-SAME:    (%[[N:.+]]: index, %[[W:.+]]: index)
// CHECK-NOT:     scf.for
// CHECK:         %[[A:.+]] = arith.cmpi ugt, %[[N]], %[[ZERO:.+]] : index
// CHECK:         %[[B:.+]] = arith.cmpi ugt, %[[W]], %[[ZERO]] : index
// CHECK:         %[[BOTH:.+]] = arith.andi %[[A]], %[[B]] : i1
// CHECK:         scf.if %[[BOTH]] {
// CHECK-NEXT:      gpu.launch
// CHECK-NOT:     scf.for
func.func @dynamic_x(%n: index, %w: index) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %w, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return
}
