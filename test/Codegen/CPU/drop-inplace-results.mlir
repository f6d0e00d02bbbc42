// RUN: blockc-opt %s -split-input-file --blockc-drop-inplace-results | FileCheck %s

// A result that is a KV cache argument of the function (transformer.kv_cache,
// a cache written in place) is dropped; the other results stay.
// CHECK-LABEL: func.func @entry
// CHECK-SAME: (%[[N:.+]]: index, %[[C:[^:]+]]: memref<?x4xf32> {transformer.kv_cache = "k"}, %[[D:[^:]+]]: memref<?x4xf32> {transformer.kv_cache = "v"}) -> (memref<?xf32>, index)
// CHECK: %[[Y:.+]] = memref.alloc
// CHECK: return %[[Y]], %[[N]] : memref<?xf32>, index
func.func @entry(%n: index, %c: memref<?x4xf32> {transformer.kv_cache = "k"}, %d: memref<?x4xf32> {transformer.kv_cache = "v"}) -> (memref<?xf32>, memref<?x4xf32>, memref<?x4xf32>, index) {
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
func.func @callee(%c: memref<4xf32> {transformer.kv_cache = "k"}) -> memref<4xf32> {
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

// -----

// A strided argument returned as an identity-layout copy (bufferization of a
// head-major cache): the result, its allocation and the copy go; a copy into
// another fresh buffer may follow.
// CHECK-LABEL: func.func @copied
// CHECK-SAME: (%[[N:.+]]: index, %[[C:[^:]+]]: memref<?x4xf32, strided<[1, ?], offset: ?>> {transformer.kv_cache = "k"}, %[[D:[^:]+]]: memref<?x4xf32, strided<[1, ?], offset: ?>> {transformer.kv_cache = "v"}) -> memref<?xf32>
// CHECK-NOT: memref.copy
// CHECK: %[[Y:.+]] = memref.alloc(%[[N]]) : memref<?xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: return %[[Y]] : memref<?xf32>
func.func @copied(%n: index, %c: memref<?x4xf32, strided<[1, ?], offset: ?>> {transformer.kv_cache = "k"}, %d: memref<?x4xf32, strided<[1, ?], offset: ?>> {transformer.kv_cache = "v"}) -> (memref<?xf32>, memref<?x4xf32>, memref<?x4xf32>) {
  %y = memref.alloc(%n) : memref<?xf32>
  %a = memref.alloc(%n) : memref<?x4xf32>
  memref.copy %c, %a : memref<?x4xf32, strided<[1, ?], offset: ?>> to memref<?x4xf32>
  %b = memref.alloc(%n) : memref<?x4xf32>
  memref.copy %d, %b : memref<?x4xf32, strided<[1, ?], offset: ?>> to memref<?x4xf32>
  return %y, %a, %b : memref<?xf32>, memref<?x4xf32>, memref<?x4xf32>
}

// -----

// A copy of the argument that is written again before the return is not
// the argument's content: kept.
// CHECK-LABEL: func.func @written_after
// CHECK-SAME: -> (memref<?xf32>, memref<4xf32>)
// CHECK: memref.copy
// CHECK: memref.store
// CHECK: return
func.func @written_after(%n: index, %c: memref<4xf32, strided<[?], offset: ?>> {transformer.kv_cache = "k"}) -> (memref<?xf32>, memref<4xf32>) {
  %y = memref.alloc(%n) : memref<?xf32>
  %a = memref.alloc() : memref<4xf32>
  memref.copy %c, %a : memref<4xf32, strided<[?], offset: ?>> to memref<4xf32>
  %f = arith.constant 1.0 : f32
  %i = arith.constant 0 : index
  memref.store %f, %a[%i] : memref<4xf32>
  return %y, %a : memref<?xf32>, memref<4xf32>
}

// -----

// An entry that returns one of its inputs (not a KV cache) keeps that
// result: the caller expects it. Only the marked cache goes.
// CHECK-LABEL: func.func @returns_input
// CHECK-SAME: (%[[X:[^:]+]]: memref<4xf32>, %[[C:[^:]+]]: memref<4xf32> {transformer.kv_cache = "v"}) -> (memref<4xf32>, memref<4xf32>)
// CHECK: %[[Y:.+]] = memref.alloc
// CHECK: return %[[X]], %[[Y]] : memref<4xf32>, memref<4xf32>
func.func @returns_input(%x: memref<4xf32>, %c: memref<4xf32> {transformer.kv_cache = "v"}) -> (memref<4xf32>, memref<4xf32>, memref<4xf32>) {
  %y = memref.alloc() : memref<4xf32>
  return %x, %y, %c : memref<4xf32>, memref<4xf32>, memref<4xf32>
}

// -----

// The identity-layout copy of an input that is not a cache is kept too.
// CHECK-LABEL: func.func @copied_input
// CHECK-SAME: -> memref<4xf32>
// CHECK: %[[A:.+]] = memref.alloc
// CHECK: memref.copy
// CHECK: return %[[A]] : memref<4xf32>
func.func @copied_input(%x: memref<4xf32, strided<[?], offset: ?>>) -> memref<4xf32> {
  %a = memref.alloc() : memref<4xf32>
  memref.copy %x, %a : memref<4xf32, strided<[?], offset: ?>> to memref<4xf32>
  return %a : memref<4xf32>
}
