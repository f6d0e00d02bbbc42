// RUN: blockc-opt %s -split-input-file --blockc-fuse-elementwise | FileCheck %s
// RUN: blockc-opt %s -split-input-file --blockc-fuse-elementwise=fuse-broadcast=true | FileCheck %s --check-prefix=BCAST
// RUN: blockc-opt %s -split-input-file --blockc-fuse-elementwise=fuse-into-reductions=true | FileCheck %s --check-prefix=RED
// RUN: blockc-opt %s -split-input-file --blockc-fuse-elementwise=keep-shared-tensor-core-results=true | FileCheck %s --check-prefix=KEEP

// silu(gate) * up, then + residual: three elementwise generics become one
// (one GPU kernel), reading gate, up and the residual once.
// CHECK-LABEL: func.func @swiglu_residual
// CHECK-SAME:    (%[[G:.+]]: tensor<2x8xf32>, %[[U:.+]]: tensor<2x8xf32>, %[[R:.+]]: tensor<2x8xf32>)
// CHECK:         %[[F:.+]] = linalg.generic
// CHECK-SAME:        ins(%[[G]], %[[U]], %[[R]] : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>)
// CHECK:           math.exp
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[F]]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @swiglu_residual(%g: tensor<2x8xf32>, %u: tensor<2x8xf32>, %r: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %e = tensor.empty() : tensor<2x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %n = arith.negf %a : f32
    %x = math.exp %n : f32
    %d = arith.addf %one, %x : f32
    %y = arith.divf %a, %d : f32
    linalg.yield %y : f32
  } -> tensor<2x8xf32>
  %p = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s, %u : tensor<2x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8xf32>
  %q = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %r : tensor<2x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.addf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8xf32>
  return %q : tensor<2x8xf32>
}

// -----

// The normalised input of a projection is not fused into the contraction
// (it would be recomputed for every output column and hide the contraction
// from blockc-gpu-tile-matmul); the contraction is not fused into its
// elementwise consumer either: all three generics stay.
// CHECK-LABEL: func.func @keep_contraction
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT:     linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#y = affine_map<(m, n, k) -> (m, n)>
func.func @keep_contraction(%x: tensor<2x8xf32>, %g: tensor<2x8xf32>, %w: tensor<4x8xf32>, %init: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %e = tensor.empty() : tensor<2x8xf32>
  %n = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %g : tensor<2x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8xf32>
  %c = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%n, %w : tensor<2x8xf32>, tensor<4x8xf32>) outs(%init : tensor<2x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  %e2 = tensor.empty() : tensor<2x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<2x4xf32>) outs(%e2 : tensor<2x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// -----

// A per-row factor (rsqrt over [2]) read through a broadcast by a [2, 8]
// op is not fused: it would be recomputed for each of the 8 columns. The
// [2, 8] consumer chain after it still fuses (scale then add). With
// fuse-broadcast (NVPTX) the whole chain is one op.
// BCAST-LABEL: func.func @keep_broadcast_producer
// BCAST-SAME:    (%[[S:.+]]: tensor<2xf32>, %[[X:.+]]: tensor<2x8xf32>, %[[B:.+]]: tensor<2x8xf32>)
// BCAST:         linalg.generic
// BCAST-SAME:        ins(%[[S]], %[[X]], %[[B]] : tensor<2xf32>, tensor<2x8xf32>, tensor<2x8xf32>)
// BCAST:           math.rsqrt
// BCAST:           arith.mulf
// BCAST:           arith.addf
// BCAST-NOT:     linalg.generic
#row = affine_map<(d0) -> (d0)>
#bcast = affine_map<(d0, d1) -> (d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @keep_broadcast_producer
// CHECK-SAME:    (%[[S:.+]]: tensor<2xf32>, %[[X:.+]]: tensor<2x8xf32>, %[[B:.+]]: tensor<2x8xf32>)
// CHECK:         %[[INV:.+]] = linalg.generic
// CHECK-SAME:        ins(%[[S]] : tensor<2xf32>)
// CHECK:           math.rsqrt
// CHECK:         linalg.generic
// CHECK-SAME:        ins(%[[INV]], %[[X]], %[[B]] : tensor<2xf32>, tensor<2x8xf32>, tensor<2x8xf32>)
// CHECK-NOT:       math.rsqrt
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK-NOT:     linalg.generic
func.func @keep_broadcast_producer(%s: tensor<2xf32>, %x: tensor<2x8xf32>, %b: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %e1 = tensor.empty() : tensor<2xf32>
  %inv = linalg.generic {indexing_maps = [#row, #row], iterator_types = ["parallel"]}
      ins(%s : tensor<2xf32>) outs(%e1 : tensor<2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.rsqrt %a : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %e2 = tensor.empty() : tensor<2x8xf32>
  %scaled = linalg.generic {indexing_maps = [#bcast, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%inv, %x : tensor<2xf32>, tensor<2x8xf32>) outs(%e2 : tensor<2x8xf32>) {
  ^bb0(%i: f32, %v: f32, %o: f32):
    %m = arith.mulf %i, %v : f32
    linalg.yield %m : f32
  } -> tensor<2x8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%scaled, %b : tensor<2x8xf32>, tensor<2x8xf32>) outs(%e2 : tensor<2x8xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %a = arith.addf %v, %w : f32
    linalg.yield %a : f32
  } -> tensor<2x8xf32>
  return %sum : tensor<2x8xf32>
}

// -----

#id = affine_map<(b, k) -> (b, k)>
#row = affine_map<(b, k) -> (b)>
#w = affine_map<(b, n, k) -> (n, k)>
#a = affine_map<(b, n, k) -> (b, k)>
#o = affine_map<(b, n, k) -> (b, n)>

// The widening of a bf16 input read by a row reduction (a norm's sum of
// squares) and by a contraction. Only with fuse-into-reductions does the
// reduction read the bf16 input itself (each element once); the
// contraction, whose input map misses n, always reads the widened tensor.
// CHECK-LABEL: func.func @widen_then_reduce
// CHECK:         %[[WIDE:.+]] = linalg.generic {{.+}} ins(%arg0 : tensor<4x64xbf16>)
// CHECK:         linalg.generic {{.+}} ins(%[[WIDE]] : tensor<4x64xf32>)
// CHECK:         linalg.generic {{.+}} ins(%[[WIDE]], %arg1 : tensor<4x64xf32>, tensor<8x64xf32>)
// BCAST-LABEL: func.func @widen_then_reduce
// RED-LABEL: func.func @widen_then_reduce
// RED:         %[[WIDE:.+]] = linalg.generic {{.+}} ins(%arg0 : tensor<4x64xbf16>)
// RED:         linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<4x64xbf16>)
// RED:           arith.extf
// RED:           arith.mulf
// RED:           arith.addf
// RED:         linalg.generic {{.+}} ins(%[[WIDE]], %arg1 : tensor<4x64xf32>, tensor<8x64xf32>)
func.func @widen_then_reduce(%x: tensor<4x64xbf16>, %w: tensor<8x64xf32>)
    -> (tensor<4xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x64xf32>
  %wide = linalg.generic {indexing_maps = [#id, #id],
                          iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x64xbf16>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %v = arith.extf %in : bf16 to f32
    linalg.yield %v : f32
  } -> tensor<4x64xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %ss = linalg.generic {indexing_maps = [#id, #row],
                        iterator_types = ["parallel", "reduction"]}
      ins(%wide : tensor<4x64xf32>) outs(%z1 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %out, %sq : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#a, #w, #o],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%wide, %w : tensor<4x64xf32>, tensor<8x64xf32>) outs(%z2 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %wn: f32, %out: f32):
    %p = arith.mulf %in, %wn : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %ss, %y : tensor<4xf32>, tensor<4x8xf32>
}

// -----

#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>

// The residual stream after a tensor-core projection, h = round(x +
// round(o)), read by two ops. Without the option each reader recomputes it
// from x and the f32 o; with keep-shared-tensor-core-results it stays one
// op (the projection's epilogue computes it once, in bf16) and each reader
// widens it, the widening (free to recompute) fused into both.
// CHECK-LABEL: func.func @shared_residual
// CHECK:         %[[O:.+]] = linalg.generic {{.+}} ins(%arg1, %arg2 : tensor<4x64xbf16>, tensor<64x64xbf16>)
// CHECK:         linalg.generic {{.+}} ins(%arg0, %[[O]] : tensor<4x64xbf16>, tensor<4x64xf32>)
// CHECK:         linalg.generic {{.+}} ins(%arg0, %[[O]] : tensor<4x64xbf16>, tensor<4x64xf32>)
// KEEP-LABEL: func.func @shared_residual
// KEEP:         %[[O:.+]] = linalg.generic {{.+}} ins(%arg1, %arg2 : tensor<4x64xbf16>, tensor<64x64xbf16>)
// KEEP:         %[[H:.+]] = linalg.generic {{.+}} ins(%arg0, %[[O]] : tensor<4x64xbf16>, tensor<4x64xf32>) outs(%{{.+}} : tensor<4x64xbf16>)
// KEEP:         linalg.generic {{.+}} ins(%[[H]] : tensor<4x64xbf16>)
// KEEP-NEXT:    ^bb0
// KEEP-NEXT:      arith.extf
// KEEP:         linalg.generic {{.+}} ins(%[[H]] : tensor<4x64xbf16>)
// KEEP-NEXT:    ^bb0
// KEEP-NEXT:      arith.extf
// BCAST-LABEL: func.func @shared_residual
// RED-LABEL: func.func @shared_residual
func.func @shared_residual(%x: tensor<4x64xbf16>, %a: tensor<4x64xbf16>,
                           %wo: tensor<64x64xbf16>)
    -> (tensor<4x64xf32>, tensor<4x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x64xf32>) -> tensor<4x64xf32>
  %o = linalg.generic {indexing_maps = [#a, #w, #o],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %wo : tensor<4x64xbf16>, tensor<64x64xbf16>) outs(%z : tensor<4x64xf32>)
      attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4>} {
  ^bb0(%in: bf16, %wn: bf16, %out: f32):
    %e0 = arith.extf %in : bf16 to f32
    %e1 = arith.extf %wn : bf16 to f32
    %p = arith.mulf %e0, %e1 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x64xf32>
  %eb = tensor.empty() : tensor<4x64xbf16>
  %h = linalg.generic {indexing_maps = [#id, #id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %o : tensor<4x64xbf16>, tensor<4x64xf32>) outs(%eb : tensor<4x64xbf16>) {
  ^bb0(%xi: bf16, %oi: f32, %out: bf16):
    %r = arith.truncf %oi : f32 to bf16
    %rf = arith.extf %r : bf16 to f32
    %xf = arith.extf %xi : bf16 to f32
    %sum = arith.addf %xf, %rf : f32
    %t = arith.truncf %sum : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x64xbf16>
  %hf = linalg.generic {indexing_maps = [#id, #id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<4x64xbf16>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %v = arith.extf %in : bf16 to f32
    linalg.yield %v : f32
  } -> tensor<4x64xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%hf : tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.mulf %in, %in : f32
    linalg.yield %v : f32
  } -> tensor<4x64xf32>
  %neg = linalg.generic {indexing_maps = [#id, #id],
                         iterator_types = ["parallel", "parallel"]}
      ins(%hf : tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.negf %in : f32
    linalg.yield %v : f32
  } -> tensor<4x64xf32>
  return %sq, %neg : tensor<4x64xf32>, tensor<4x64xf32>
}
