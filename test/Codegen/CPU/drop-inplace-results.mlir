// RUN: blockc-opt %s -split-input-file --blockc-drop-inplace-results | FileCheck %s

// A result that is the function's own buffer argument (a cache written in
// place) is dropped; the other results stay.
// CHECK-LABEL: func.func @entry
// CHECK-SAME: (%[[N:.+]]: index, %[[C:.+]]: memref<?x4xf32>, %[[D:.+]]: memref<?x4xf32>) -> (memref<?xf32>, index)
// CHECK: %[[Y:.+]] = memref.alloc
// CHECK: return %[[Y]], %[[N]] : memref<?xf32>, index
func.func @entry(%n: index, %c: memref<?x4xf32>, %d: memref<?x4xf32>) -> (memref<?xf32>, memref<?x4xf32>, memref<?x4xf32>, index) {
  %y = memref.alloc(%n) : memref<?xf32>
  return %y, %c, %d, %n : memref<?xf32>, memref<?x4xf32>, memref<?x4xf32>, index
}

// -----

// Functions with callers keep their results (the callers would need
// rewriting).
// CHECK-LABEL: func.func @callee
// CHECK-SAME: -> memref<4xf32>
// CHECK: return %{{.+}} : memref<4xf32>
// CHECK-LABEL: func.func @caller
// CHECK-SAME: -> index
func.func @callee(%c: memref<4xf32>) -> memref<4xf32> {
  return %c : memref<4xf32>
}
func.func @caller(%c: memref<4xf32>, %i: index) -> index {
  %0 = func.call @callee(%c) : (memref<4xf32>) -> memref<4xf32>
  return %i : index
}

// -----

// A fresh buffer is not an argument: kept.
// CHECK-LABEL: func.func @fresh
// CHECK-SAME: -> memref<4xf32>
func.func @fresh() -> memref<4xf32> {
  %0 = memref.alloc() : memref<4xf32>
  return %0 : memref<4xf32>
}
