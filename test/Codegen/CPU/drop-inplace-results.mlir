// RUN: blockc-opt %s -split-input-file --blockc-drop-inplace-results | FileCheck %s

// A result that is a KV cache argument of the function (transformer.kv_cache,
// a cache written in place) is dropped; the other results stay.
// CHECK-LABEL: func.func @entry
// CHECK-SAME: (%[[N:.+]]: index, %[[C:[^:]+]]: memref<1x?x2x4xf32> {transformer.kv_cache = #transformer.kv_cache<key>}, %[[D:[^:]+]]: memref<1x?x2x4xf32> {transformer.kv_cache = #transformer.kv_cache<value>}) -> (memref<?xf32>, index)
// CHECK: %[[Y:.+]] = memref.alloc
// CHECK: return %[[Y]], %[[N]] : memref<?xf32>, index
func.func @entry(%n: index, %c: memref<1x?x2x4xf32> {transformer.kv_cache = #transformer.kv_cache<key>}, %d: memref<1x?x2x4xf32> {transformer.kv_cache = #transformer.kv_cache<value>}) -> (memref<?xf32>, memref<1x?x2x4xf32>, memref<1x?x2x4xf32>, index) {
  %y = memref.alloc(%n) : memref<?xf32>
  return %y, %c, %d, %n : memref<?xf32>, memref<1x?x2x4xf32>, memref<1x?x2x4xf32>, index
}

// -----

// A function with callers (func.call only) loses such results too: its
// calls use the buffer they pass instead.
// CHECK-LABEL: func.func @callee
// CHECK-NOT: ->
// CHECK: return{{$}}
// CHECK-LABEL: func.func @caller
// CHECK-SAME: -> index
// CHECK-NEXT: call @callee(%{{.+}}) : (memref<1x4x1x1xf32>) -> ()
func.func @callee(%c: memref<1x4x1x1xf32> {transformer.kv_cache = #transformer.kv_cache<key>}) -> memref<1x4x1x1xf32> {
  return %c : memref<1x4x1x1xf32>
}
func.func @caller(%c: memref<1x4x1x1xf32>, %i: index) -> index {
  %0 = func.call @callee(%c) : (memref<1x4x1x1xf32>) -> memref<1x4x1x1xf32>
  return %i : index
}

// -----

// A fresh buffer is not an argument: kept.
// CHECK-LABEL: func.func @fresh
// CHECK-SAME: -> memref<1x4x1x1xf32>
func.func @fresh() -> memref<1x4x1x1xf32> {
  %0 = memref.alloc() : memref<1x4x1x1xf32>
  return %0 : memref<1x4x1x1xf32>
}

// -----

// A strided argument returned as an identity-layout copy (bufferization of a
// head-major cache): the result, its allocation and the copy go; a copy into
// another fresh buffer may follow.
// CHECK-LABEL: func.func @copied
// CHECK-SAME: (%[[N:.+]]: index, %[[C:[^:]+]]: memref<1x?x2x4xf32, strided<[?, 4, ?, 1], offset: ?>> {transformer.kv_cache = #transformer.kv_cache<key>}, %[[D:[^:]+]]: memref<1x?x2x4xf32, strided<[?, 4, ?, 1], offset: ?>> {transformer.kv_cache = #transformer.kv_cache<value>}) -> memref<?xf32>
// CHECK-NOT: memref.copy
// CHECK: %[[Y:.+]] = memref.alloc(%[[N]]) : memref<?xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: return %[[Y]] : memref<?xf32>
func.func @copied(%n: index, %c: memref<1x?x2x4xf32, strided<[?, 4, ?, 1], offset: ?>> {transformer.kv_cache = #transformer.kv_cache<key>}, %d: memref<1x?x2x4xf32, strided<[?, 4, ?, 1], offset: ?>> {transformer.kv_cache = #transformer.kv_cache<value>}) -> (memref<?xf32>, memref<1x?x2x4xf32>, memref<1x?x2x4xf32>) {
  %y = memref.alloc(%n) : memref<?xf32>
  %a = memref.alloc(%n) : memref<1x?x2x4xf32>
  memref.copy %c, %a : memref<1x?x2x4xf32, strided<[?, 4, ?, 1], offset: ?>> to memref<1x?x2x4xf32>
  %b = memref.alloc(%n) : memref<1x?x2x4xf32>
  memref.copy %d, %b : memref<1x?x2x4xf32, strided<[?, 4, ?, 1], offset: ?>> to memref<1x?x2x4xf32>
  return %y, %a, %b : memref<?xf32>, memref<1x?x2x4xf32>, memref<1x?x2x4xf32>
}

// -----

// A copy of the argument that is written again before the return is not
// the argument's content: kept.
// CHECK-LABEL: func.func @written_after
// CHECK-SAME: -> (memref<?xf32>, memref<1x4x1x1xf32>)
// CHECK: memref.copy
// CHECK: memref.store
// CHECK: return
func.func @written_after(%n: index, %c: memref<1x4x1x1xf32, strided<[?, ?, ?, 1], offset: ?>> {transformer.kv_cache = #transformer.kv_cache<key>}) -> (memref<?xf32>, memref<1x4x1x1xf32>) {
  %y = memref.alloc(%n) : memref<?xf32>
  %a = memref.alloc() : memref<1x4x1x1xf32>
  memref.copy %c, %a : memref<1x4x1x1xf32, strided<[?, ?, ?, 1], offset: ?>> to memref<1x4x1x1xf32>
  %f = arith.constant 1.0 : f32
  %i = arith.constant 0 : index
  memref.store %f, %a[%i, %i, %i, %i] : memref<1x4x1x1xf32>
  return %y, %a : memref<?xf32>, memref<1x4x1x1xf32>
}

// -----

// An entry that returns one of its inputs (not a KV cache) keeps that
// result: the caller expects it. Only the marked cache goes.
// CHECK-LABEL: func.func @returns_input
// CHECK-SAME: (%[[X:[^:]+]]: memref<1x4x1x1xf32>, %[[C:[^:]+]]: memref<1x4x1x1xf32> {transformer.kv_cache = #transformer.kv_cache<value>}) -> (memref<1x4x1x1xf32>, memref<1x4x1x1xf32>)
// CHECK: %[[Y:.+]] = memref.alloc
// CHECK: return %[[X]], %[[Y]] : memref<1x4x1x1xf32>, memref<1x4x1x1xf32>
func.func @returns_input(%x: memref<1x4x1x1xf32>, %c: memref<1x4x1x1xf32> {transformer.kv_cache = #transformer.kv_cache<value>}) -> (memref<1x4x1x1xf32>, memref<1x4x1x1xf32>, memref<1x4x1x1xf32>) {
  %y = memref.alloc() : memref<1x4x1x1xf32>
  return %x, %y, %c : memref<1x4x1x1xf32>, memref<1x4x1x1xf32>, memref<1x4x1x1xf32>
}

// -----

// The identity-layout copy of an input that is not a cache is kept too.
// CHECK-LABEL: func.func @copied_input
// CHECK-SAME: -> memref<1x4x1x1xf32>
// CHECK: %[[A:.+]] = memref.alloc
// CHECK: memref.copy
// CHECK: return %[[A]] : memref<1x4x1x1xf32>
func.func @copied_input(%x: memref<1x4x1x1xf32, strided<[?, ?, ?, 1], offset: ?>>) -> memref<1x4x1x1xf32> {
  %a = memref.alloc() : memref<1x4x1x1xf32>
  memref.copy %x, %a : memref<1x4x1x1xf32, strided<[?, ?, ?, 1], offset: ?>> to memref<1x4x1x1xf32>
  return %a : memref<1x4x1x1xf32>
}

// -----

// A prepare function's destinations (blockc-cpu-prepare-weights: arguments
// marked blockc_codegen.prepared, filled in place) are dropped from its
// results as well; a marked argument of a function that is not a prepare
// function stays a result.
// CHECK-LABEL: func.func @forward_prepare
// CHECK-SAME: (%{{.+}}: memref<8x8xf32>, %[[P:.+]]: memref<1x1x8x8xf32> {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 8, cols = 8, panel_k = 8, panel_n = 8>})
// CHECK-NOT: ->
// CHECK: return{{$}}
// CHECK-LABEL: func.func @not_prepare
// CHECK-SAME: -> memref<1x1x8x8xf32>
func.func @forward_prepare(%w: memref<8x8xf32>, %p: memref<1x1x8x8xf32> {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 8, cols = 8, panel_k = 8, panel_n = 8>}) -> memref<1x1x8x8xf32> attributes {blockc_codegen.prepare_for = "forward"} {
  return %p : memref<1x1x8x8xf32>
}
func.func @not_prepare(%p: memref<1x1x8x8xf32> {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 8, cols = 8, panel_k = 8, panel_n = 8>}) -> memref<1x1x8x8xf32> {
  return %p : memref<1x1x8x8xf32>
}

// -----

// A cache carried unchanged through loops (a paged entry's page writes:
// each loop yields its own iter_arg buffer) is the argument's buffer: the
// result is dropped. A loop that yields another buffer is not.
// CHECK-LABEL: func.func @carried
// CHECK-SAME: %[[D:[a-z0-9_]+]]: memref<?x4x2x8xf32> {transformer.kv_cache = #transformer.kv_cache<value>}
// CHECK-SAME: -> memref<?x4x2x8xf32>
// CHECK: %[[OTHER:[a-z0-9_]+]] = scf.for {{.+}} iter_args(%{{[a-z0-9_]+}} = %[[D]])
// CHECK: return %[[OTHER]] : memref<?x4x2x8xf32>
func.func @carried(%n: index, %c: memref<?x4x2x8xf32> {transformer.kv_cache = #transformer.kv_cache<key>},
    %d: memref<?x4x2x8xf32> {transformer.kv_cache = #transformer.kv_cache<value>}, %e: memref<?x4x2x8xf32>)
    -> (memref<?x4x2x8xf32>, memref<?x4x2x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %c) -> (memref<?x4x2x8xf32>) {
    %s = scf.for %j = %c0 to %n step %c1 iter_args(%b = %a) -> (memref<?x4x2x8xf32>) {
      scf.yield %b : memref<?x4x2x8xf32>
    }
    scf.yield %s : memref<?x4x2x8xf32>
  }
  %o = scf.for %i = %c0 to %n step %c1 iter_args(%a = %d) -> (memref<?x4x2x8xf32>) {
    scf.yield %e : memref<?x4x2x8xf32>
  }
  return %r, %o : memref<?x4x2x8xf32>, memref<?x4x2x8xf32>
}

// -----

// A prepare function that calls its parts (one per weight): the parts'
// destinations are dropped and their calls rewritten to the buffer they
// pass, after which the prepare function returns its own destinations,
// dropped in turn. A called function's other results stay.
// CHECK-LABEL: func.func @forward_prepare
// CHECK-SAME: (%[[W:.+]]: memref<8x8xf32>, %[[P:.+]]: memref<1x1x8x8xf32> {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 8, cols = 8, panel_k = 8, panel_n = 8>})
// CHECK-NOT: ->
// CHECK-NEXT: %[[S:.+]] = call @forward_prepare_0(%[[W]], %[[P]]) : (memref<8x8xf32>, memref<1x1x8x8xf32>) -> memref<8xf32>
// CHECK-NEXT: call @use(%[[P]], %[[S]])
// CHECK-NEXT: return{{$}}
// CHECK-LABEL: func.func @forward_prepare_0
// CHECK-SAME: -> memref<8xf32>
// CHECK: return %{{.+}} : memref<8xf32>
func.func @forward_prepare(%w: memref<8x8xf32>, %p: memref<1x1x8x8xf32> {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 8, cols = 8, panel_k = 8, panel_n = 8>}) -> memref<1x1x8x8xf32> attributes {blockc_codegen.prepare_for = "forward"} {
  %r, %s = call @forward_prepare_0(%w, %p) : (memref<8x8xf32>, memref<1x1x8x8xf32>) -> (memref<1x1x8x8xf32>, memref<8xf32>)
  call @use(%r, %s) : (memref<1x1x8x8xf32>, memref<8xf32>) -> ()
  return %r : memref<1x1x8x8xf32>
}
func.func @forward_prepare_0(%w: memref<8x8xf32>, %p: memref<1x1x8x8xf32> {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 8, cols = 8, panel_k = 8, panel_n = 8>}) -> (memref<1x1x8x8xf32>, memref<8xf32>) attributes {blockc_codegen.prepare_part_of = "forward_prepare"} {
  %s = memref.alloc() : memref<8xf32>
  return %p, %s : memref<1x1x8x8xf32>, memref<8xf32>
}
func.func private @use(memref<1x1x8x8xf32>, memref<8xf32>)
