// RUN: blockc-opt %s -split-input-file -verify-diagnostics --blockc-cpu-prepare-weights | FileCheck %s

// blockc-cpu-prepare-weights moves the packing of prepared weights (a
// linalg.pack marked blockc_codegen.prepared, with the weight-only work
// feeding it: here a folded norm gain) out of an entry into a part per
// weight, @<entry>_prepare_<argument>, which @<entry>_prepare calls.

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#layout = #blockc_codegen.packed_weight<rows = 12, cols = 8, panel_k = 8, panel_n = 8>

// The entry takes the packed type at the weight's position; the gain stays.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    %[[X:.+]]: tensor<4x8xf32>,
// CHECK-SAME:    %{{.+}}: tensor<8xf32> {transformer.weight_name = "g"},
// CHECK-SAME:    %[[P:.+]]: tensor<2x1x8x8xf32> {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 12, cols = 8, panel_k = 8, panel_n = 8>, transformer.weight_name = "w"})
// CHECK-NEXT:  return %[[X]], %[[P]]
// The prepare function: the arguments the moved work reads, in entry order,
// with their attributes and source_arg, then one writable destination per
// packed weight (filled in place and returned).
// CHECK-LABEL: func.func @forward_prepare(
// CHECK-SAME:    %[[G:.+]]: tensor<8xf32> {blockc_codegen.source_arg = 1 : i64, transformer.weight_name = "g"},
// CHECK-SAME:    %[[W:.+]]: tensor<12x8xf32> {blockc_codegen.source_arg = 2 : i64, transformer.weight_name = "w"},
// CHECK-SAME:    %[[D:.+]]: tensor<2x1x8x8xf32> {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 12, cols = 8, panel_k = 8, panel_n = 8>, blockc_codegen.source_arg = 2 : i64, bufferization.writable = true})
// CHECK-SAME:    -> (tensor<2x1x8x8xf32> {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 12, cols = 8, panel_k = 8, panel_n = 8>, blockc_codegen.source_arg = 2 : i64})
// CHECK-SAME:    attributes {blockc_codegen.prepare_for = "forward"}
// CHECK-NEXT:  %[[R:.+]] = call @forward_prepare_2(%[[G]], %[[W]], %[[D]])
// CHECK-NEXT:  return %[[R]]
// Its part for argument 2: the same records, for the one weight.
// CHECK-LABEL: func.func @forward_prepare_2(
// CHECK-SAME:    %[[G:.+]]: tensor<8xf32> {blockc_codegen.source_arg = 1 : i64, transformer.weight_name = "g"},
// CHECK-SAME:    %[[W:.+]]: tensor<12x8xf32> {blockc_codegen.source_arg = 2 : i64, transformer.weight_name = "w"},
// CHECK-SAME:    %[[D:.+]]: tensor<2x1x8x8xf32> {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 12, cols = 8, panel_k = 8, panel_n = 8>, blockc_codegen.source_arg = 2 : i64, bufferization.writable = true})
// CHECK-SAME:    -> (tensor<2x1x8x8xf32> {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 12, cols = 8, panel_k = 8, panel_n = 8>, blockc_codegen.source_arg = 2 : i64})
// CHECK-SAME:    attributes {blockc_codegen.prepare_part_of = "forward_prepare"}
// CHECK:       %[[WG:.+]] = linalg.generic {{.*}} ins(%[[W]], %[[G]] : tensor<12x8xf32>, tensor<8xf32>)
// Without a cpu_target, the pack is lowered by upstream's lowerPack: pad N
// to 16, split, transpose into the destination.
// CHECK:       %[[PAD:.+]] = tensor.pad %[[WG]] low[0, 0] high[4, 0]
// CHECK:       %[[EXP:.+]] = tensor.expand_shape %[[PAD]] {{\[\[}}0, 1], [2, 3]] output_shape [2, 8, 1, 8]
// CHECK:       %[[T:.+]] = linalg.transpose ins(%[[EXP]] : tensor<2x8x1x8xf32>) outs(%[[D]] : tensor<2x1x8x8xf32>) permutation = [0, 2, 3, 1]
// CHECK-NEXT:  return %[[T]]
// CHECK-NOT:   linalg.pack
func.func @forward(%x: tensor<4x8xf32>, %g: tensor<8xf32> {transformer.weight_name = "g"}, %w: tensor<12x8xf32> {transformer.weight_name = "w"}) -> (tensor<4x8xf32>, tensor<2x1x8x8xf32>) {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x8xf32>
  %wg = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%w, %g : tensor<12x8xf32>, tensor<8xf32>) outs(%e : tensor<12x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<12x8xf32>
  %d = tensor.empty() : tensor<2x1x8x8xf32>
  %p = linalg.pack %wg padding_value(%cst : f32) inner_dims_pos = [1, 0] inner_tiles = [8, 8] into %d {blockc_codegen.prepared = #layout} : tensor<12x8xf32> -> tensor<2x1x8x8xf32>
  return %x, %p : tensor<4x8xf32>, tensor<2x1x8x8xf32>
}

// -----

// Two weights: a part each (sharing the entry's constant and empty tensor,
// cloned into both), called in argument order; each part reads only its
// own weight.
// CHECK-LABEL: func.func @two(
// CHECK-SAME:    %[[PA:[a-z0-9]+]]: tensor<2x1x8x8xf32> {blockc_codegen.prepared
// CHECK-SAME:    %[[PB:[a-z0-9]+]]: tensor<2x1x8x8xf32> {blockc_codegen.prepared
// CHECK-NEXT:  return %[[PA]], %[[PB]]
// CHECK-LABEL: func.func @two_prepare(
// CHECK-SAME:    %[[A:[a-z0-9]+]]: tensor<16x8xf32> {blockc_codegen.source_arg = 0 : i64}
// CHECK-SAME:    %[[B:[a-z0-9]+]]: tensor<16x8xf32> {blockc_codegen.source_arg = 1 : i64}
// CHECK-SAME:    %[[DA:[a-z0-9]+]]: tensor<2x1x8x8xf32>
// CHECK-SAME:    %[[DB:[a-z0-9]+]]: tensor<2x1x8x8xf32>
// CHECK-NEXT:  %[[RA:.+]] = call @two_prepare_0(%[[A]], %[[DA]])
// CHECK-NEXT:  %[[RB:.+]] = call @two_prepare_1(%[[B]], %[[DB]])
// CHECK-NEXT:  return %[[RA]], %[[RB]]
// CHECK-LABEL: func.func @two_prepare_0(
// CHECK-SAME:    %[[A:[a-z0-9]+]]: tensor<16x8xf32> {blockc_codegen.source_arg = 0 : i64}, %[[D:[a-z0-9]+]]: tensor<2x1x8x8xf32>
// CHECK-SAME:    attributes {blockc_codegen.prepare_part_of = "two_prepare"}
// CHECK:       linalg.transpose {{.*}} outs(%[[D]]
// CHECK-LABEL: func.func @two_prepare_1(
// CHECK-SAME:    %[[B:[a-z0-9]+]]: tensor<16x8xf32> {blockc_codegen.source_arg = 1 : i64}, %[[D:[a-z0-9]+]]: tensor<2x1x8x8xf32>
// CHECK-SAME:    attributes {blockc_codegen.prepare_part_of = "two_prepare"}
// CHECK:       linalg.transpose {{.*}} outs(%[[D]]
func.func @two(%a: tensor<16x8xf32>, %b: tensor<16x8xf32>) -> (tensor<2x1x8x8xf32>, tensor<2x1x8x8xf32>) {
  %cst = arith.constant 0.0 : f32
  %d = tensor.empty() : tensor<2x1x8x8xf32>
  %p = linalg.pack %a padding_value(%cst : f32) inner_dims_pos = [1, 0] inner_tiles = [8, 8] into %d {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 16, cols = 8, panel_k = 8, panel_n = 8>} : tensor<16x8xf32> -> tensor<2x1x8x8xf32>
  %q = linalg.pack %b padding_value(%cst : f32) inner_dims_pos = [1, 0] inner_tiles = [8, 8] into %d {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 16, cols = 8, panel_k = 8, panel_n = 8>} : tensor<16x8xf32> -> tensor<2x1x8x8xf32>
  return %p, %q : tensor<2x1x8x8xf32>, tensor<2x1x8x8xf32>
}

// -----

// With a cpu_target (here AVX2, 8 lanes) the pack becomes vector code in the
// prepare function's part (the prepare function and its parts get the
// entry's target): the n-blocks in parallel into the destination, each
// 8 x 8 block one masked 2-D read of W, times the folded gain as it is
// read, one transpose, one write.
// CHECK-LABEL: func.func @vectorised_prepare(
// CHECK-SAME:    blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx2
// CHECK-LABEL: func.func @vectorised_prepare_2(
// CHECK-SAME:    %[[G:[a-z0-9]+]]: tensor<8xf32>
// CHECK-SAME:    %[[W:[a-z0-9]+]]: tensor<12x8xf32>
// CHECK-SAME:    %[[D:[a-z0-9]+]]: tensor<2x1x8x8xf32>
// CHECK-SAME:    blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx2
// CHECK-NOT:   linalg.generic
// CHECK:       scf.forall (%[[NB:.+]]) in (2) shared_outs(%[[O:.+]] = %[[D]])
// CHECK:       %[[B:.+]] = vector.transfer_read %[[W]][%{{.+}}, %{{.+}}], %{{.+}} : tensor<12x8xf32>, vector<8x8xf32>
// CHECK-NEXT:  %[[GV:.+]] = vector.transfer_read %[[G]][%{{.+}}], %{{.+}} : tensor<8xf32>, vector<8xf32>
// CHECK-NEXT:  %[[GB:.+]] = vector.broadcast %[[GV]] : vector<8xf32> to vector<8x8xf32>
// CHECK-NEXT:  %[[M:.+]] = arith.mulf %[[B]], %[[GB]] : vector<8x8xf32>
// CHECK-NEXT:  %[[T:.+]] = vector.transpose %[[M]], [1, 0] : vector<8x8xf32> to vector<8x8xf32>
// CHECK-NEXT:  vector.transfer_write %[[T]], %{{.+}} {in_bounds = [true, true]} : vector<8x8xf32>, tensor<1x8x8xf32>
// CHECK:       tensor.parallel_insert_slice %{{.+}} into %[[O]][%[[NB]], 0, 0, 0] [1, 1, 8, 8]
func.func @vectorised(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %w: tensor<12x8xf32>) -> (tensor<4x8xf32>, tensor<2x1x8x8xf32>) attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx2, vector_width = 8, registers = 16, l1_bytes = 32768, l2_bytes = 1048576>} {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x8xf32>
  %wg = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%w, %g : tensor<12x8xf32>, tensor<8xf32>) outs(%e : tensor<12x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<12x8xf32>
  %d = tensor.empty() : tensor<2x1x8x8xf32>
  %p = linalg.pack %wg padding_value(%cst : f32) inner_dims_pos = [1, 0] inner_tiles = [8, 8] into %d {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 12, cols = 8, panel_k = 8, panel_n = 8>} : tensor<12x8xf32> -> tensor<2x1x8x8xf32>
  return %x, %p : tensor<4x8xf32>, tensor<2x1x8x8xf32>
}

// -----

// A bf16 weight packs into bf16 panels: each 8 x 8 block is widened to f32
// (exact), transposed with the f32 in-register transposes and narrowed back
// (exact again).
// CHECK-LABEL: func.func @bf16_prepare_1(
// CHECK-SAME:    %[[W:[a-z0-9]+]]: tensor<12x8xbf16>
// CHECK-SAME:    %[[D:[a-z0-9]+]]: tensor<2x1x8x8xbf16>
// CHECK:       %[[B:.+]] = vector.transfer_read %[[W]][%{{.+}}, %{{.+}}], %{{.+}} : tensor<12x8xbf16>, vector<8x8xbf16>
// CHECK-NEXT:  %[[E:.+]] = arith.extf %[[B]] : vector<8x8xbf16> to vector<8x8xf32>
// CHECK-NEXT:  %[[T:.+]] = vector.transpose %[[E]], [1, 0] : vector<8x8xf32> to vector<8x8xf32>
// CHECK-NEXT:  %[[N:.+]] = arith.truncf %[[T]] : vector<8x8xf32> to vector<8x8xbf16>
// CHECK-NEXT:  vector.transfer_write %[[N]], %{{.+}} {in_bounds = [true, true]} : vector<8x8xbf16>, tensor<1x8x8xbf16>
func.func @bf16(%x: tensor<4x8xf32>, %w: tensor<12x8xbf16>) -> (tensor<4x8xf32>, tensor<2x1x8x8xbf16>) attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx2, vector_width = 8, registers = 16, l1_bytes = 32768, l2_bytes = 1048576>} {
  %cst = arith.constant 0.0 : bf16
  %d = tensor.empty() : tensor<2x1x8x8xbf16>
  %p = linalg.pack %w padding_value(%cst : bf16) inner_dims_pos = [1, 0] inner_tiles = [8, 8] into %d {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 12, cols = 8, panel_k = 8, panel_n = 8>} : tensor<12x8xbf16> -> tensor<2x1x8x8xbf16>
  return %x, %p : tensor<4x8xf32>, tensor<2x1x8x8xbf16>
}

// -----

// Panels of bf16 k pairs (packed_weight pairs = true): the pack reads the
// weight through its expansion to [N, K / 2, 2], which moves with it into
// the prepare function; upstream's pad + transpose lowers it there.
// CHECK-LABEL: func.func @pairs(
// CHECK-SAME:    %{{.+}}: tensor<4x8xf32>, %[[A:.+]]: tensor<2x1x1x4x8x2xbf16> {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 12, cols = 8, panel_k = 8, panel_n = 8, pairs = true>}
// CHECK-NEXT:  return %{{.+}}, %[[A]]
// CHECK-LABEL: func.func @pairs_prepare_1(
// CHECK-SAME:    %[[W:[a-z0-9]+]]: tensor<12x8xbf16> {blockc_codegen.source_arg = 1 : i64}
// CHECK-SAME:    %[[D:[a-z0-9]+]]: tensor<2x1x1x4x8x2xbf16> {{{.*}}bufferization.writable = true}
// CHECK:       %[[E:.+]] = tensor.expand_shape %[[W]] {{\[\[}}0], [1, 2]] output_shape [12, 4, 2]
// CHECK:       %[[P:.+]] = tensor.pad %[[E]] low[0, 0, 0] high[4, 0, 0]
// CHECK:       %[[T:.+]] = linalg.transpose ins(%{{.+}} : tensor<2x8x1x4x1x2xbf16>) outs(%[[D]] : tensor<2x1x1x4x8x2xbf16>) permutation = [0, 2, 4, 3, 1, 5]
// CHECK-NEXT:  return %[[T]]
func.func @pairs(%x: tensor<4x8xf32>, %w: tensor<12x8xbf16>) -> (tensor<4x8xf32>, tensor<2x1x1x4x8x2xbf16>) attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx512, vector_width = 16, registers = 32, l1_bytes = 32768, l2_bytes = 1048576, avx512_bf16 = true>} {
  %cst = arith.constant 0.0 : bf16
  %e = tensor.expand_shape %w [[0], [1, 2]] output_shape [12, 4, 2] : tensor<12x8xbf16> into tensor<12x4x2xbf16>
  %d = tensor.empty() : tensor<2x1x1x4x8x2xbf16>
  %p = linalg.pack %e padding_value(%cst : bf16) inner_dims_pos = [1, 0, 2] inner_tiles = [4, 8, 2] into %d {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 12, cols = 8, panel_k = 8, panel_n = 8, pairs = true>} : tensor<12x4x2xbf16> -> tensor<2x1x1x4x8x2xbf16>
  return %x, %p : tensor<4x8xf32>, tensor<2x1x1x4x8x2xbf16>
}

// -----

// The weight has another use in the entry: it stays, and so does the
// packing (per call, lowered in place; the empty pad folds away later).
// CHECK-LABEL: func.func @other_use(
// CHECK-SAME:    %[[W:.+]]: tensor<16x8xf32>)
// CHECK:       %[[PAD:.+]] = tensor.pad %[[W]] low[0, 0] high[0, 0]
// CHECK:       %[[EXP:.+]] = tensor.expand_shape %[[PAD]]
// CHECK:       linalg.transpose ins(%[[EXP]]
// CHECK-NOT:   func.func @other_use_prepare
func.func @other_use(%w: tensor<16x8xf32>) -> (tensor<16x8xf32>, tensor<2x1x8x8xf32>) {
  %cst = arith.constant 0.0 : f32
  %d = tensor.empty() : tensor<2x1x8x8xf32>
  %p = linalg.pack %w padding_value(%cst : f32) inner_dims_pos = [1, 0] inner_tiles = [8, 8] into %d {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 16, cols = 8, panel_k = 8, panel_n = 8>} : tensor<16x8xf32> -> tensor<2x1x8x8xf32>
  return %w, %p : tensor<16x8xf32>, tensor<2x1x8x8xf32>
}

// -----

// Only entries (public functions nothing calls) get a prepare function: a
// called public function and a private one pack per call; their caller has
// no pack of its own.
// CHECK-LABEL: func.func @called(
// CHECK:       linalg.transpose
// CHECK-LABEL: func.func private @hidden(
// CHECK:       linalg.transpose
// CHECK-LABEL: func.func @caller(
// CHECK-NOT:   func.func @{{.*}}_prepare
func.func @called(%w: tensor<16x8xf32>) -> tensor<2x1x8x8xf32> {
  %cst = arith.constant 0.0 : f32
  %d = tensor.empty() : tensor<2x1x8x8xf32>
  %p = linalg.pack %w padding_value(%cst : f32) inner_dims_pos = [1, 0] inner_tiles = [8, 8] into %d {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 16, cols = 8, panel_k = 8, panel_n = 8>} : tensor<16x8xf32> -> tensor<2x1x8x8xf32>
  return %p : tensor<2x1x8x8xf32>
}
func.func private @hidden(%w: tensor<16x8xf32>) -> tensor<2x1x8x8xf32> {
  %cst = arith.constant 0.0 : f32
  %d = tensor.empty() : tensor<2x1x8x8xf32>
  %p = linalg.pack %w padding_value(%cst : f32) inner_dims_pos = [1, 0] inner_tiles = [8, 8] into %d {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 16, cols = 8, panel_k = 8, panel_n = 8>} : tensor<16x8xf32> -> tensor<2x1x8x8xf32>
  return %p : tensor<2x1x8x8xf32>
}
func.func @caller(%w: tensor<16x8xf32>) -> (tensor<2x1x8x8xf32>, tensor<2x1x8x8xf32>) {
  %a = func.call @called(%w) : (tensor<16x8xf32>) -> tensor<2x1x8x8xf32>
  %b = func.call @hidden(%w) : (tensor<16x8xf32>) -> tensor<2x1x8x8xf32>
  return %a, %b : tensor<2x1x8x8xf32>, tensor<2x1x8x8xf32>
}

// -----

// A pack that is not marked is not this pass's business.
// CHECK-LABEL: func.func @unmarked(
// CHECK:       linalg.pack
// CHECK-NOT:   func.func @unmarked_prepare
func.func @unmarked(%w: tensor<16x8xf32>) -> tensor<2x1x8x8xf32> {
  %d = tensor.empty() : tensor<2x1x8x8xf32>
  %p = linalg.pack %w inner_dims_pos = [1, 0] inner_tiles = [8, 8] into %d : tensor<16x8xf32> -> tensor<2x1x8x8xf32>
  return %p : tensor<2x1x8x8xf32>
}

// -----

// expected-error @below {{blockc-cpu-prepare-weights: a function named 'taken_prepare' already exists}}
func.func @taken(%w: tensor<16x8xf32>) -> tensor<2x1x8x8xf32> {
  %cst = arith.constant 0.0 : f32
  %d = tensor.empty() : tensor<2x1x8x8xf32>
  %p = linalg.pack %w padding_value(%cst : f32) inner_dims_pos = [1, 0] inner_tiles = [8, 8] into %d {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 16, cols = 8, panel_k = 8, panel_n = 8>} : tensor<16x8xf32> -> tensor<2x1x8x8xf32>
  return %p : tensor<2x1x8x8xf32>
}
func.func private @taken_prepare()

// -----

// So is a function with the name of a part.
// expected-error @below {{blockc-cpu-prepare-weights: a function named 'taken_prepare_0' already exists}}
func.func @taken(%w: tensor<16x8xf32>) -> tensor<2x1x8x8xf32> {
  %cst = arith.constant 0.0 : f32
  %d = tensor.empty() : tensor<2x1x8x8xf32>
  %p = linalg.pack %w padding_value(%cst : f32) inner_dims_pos = [1, 0] inner_tiles = [8, 8] into %d {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 16, cols = 8, panel_k = 8, panel_n = 8>} : tensor<16x8xf32> -> tensor<2x1x8x8xf32>
  return %p : tensor<2x1x8x8xf32>
}
func.func private @taken_prepare_0()

// -----

// A quantised weight (blockc-cpu-lower-quantized-linear): a marked
// linalg.generic whose region reads the weight moves with the computation
// feeding it (here a reduction); the entry takes its i32 words.
#qlayout = #blockc_codegen.quantized_weight<rows = 4, cols = 16, bits = 8, group_size = 16>
// CHECK-LABEL: func.func @quantized(
// CHECK-SAME:    %[[X:.+]]: tensor<2x16xf32>,
// CHECK-SAME:    %[[Q:.+]]: tensor<4x5xi32> {blockc_codegen.prepared = #blockc_codegen.quantized_weight<rows = 4, cols = 16, bits = 8, group_size = 16>, transformer.weight_name = "w"})
// CHECK-NEXT:  return %[[X]], %[[Q]]
// CHECK-LABEL: func.func @quantized_prepare(
// CHECK:         call @quantized_prepare_1(
// CHECK-LABEL: func.func @quantized_prepare_1(
// CHECK-SAME:    %[[W:.+]]: tensor<4x16xf32> {blockc_codegen.source_arg = 1 : i64, transformer.weight_name = "w"},
// CHECK-SAME:    %[[D:.+]]: tensor<4x5xi32> {blockc_codegen.prepared = #blockc_codegen.quantized_weight<rows = 4, cols = 16, bits = 8, group_size = 16>, blockc_codegen.source_arg = 1 : i64, bufferization.writable = true})
// CHECK:       %[[M:.+]] = linalg.generic {{.*}} ins(%[[W]] : tensor<4x16xf32>)
// CHECK:       %[[R:.+]] = linalg.generic {{.*}} outs(%[[D]] : tensor<4x5xi32>)
// CHECK:       tensor.extract %[[W]]
// CHECK:       tensor.extract %[[M]]
// CHECK:       return %[[R]]
#rowmax = affine_map<(d0, d1) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @quantized(%x: tensor<2x16xf32>, %w: tensor<4x16xf32> {transformer.weight_name = "w"}) -> (tensor<2x16xf32>, tensor<4x5xi32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.generic {indexing_maps = [#id2, #rowmax], iterator_types = ["parallel", "reduction"]} ins(%w : tensor<4x16xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %abs = math.absf %a : f32
    %mx = arith.maximumf %acc, %abs : f32
    linalg.yield %mx : f32
  } -> tensor<4xf32>
  %eq = tensor.empty() : tensor<4x5xi32>
  %q = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%eq : tensor<4x5xi32>) attrs = {blockc_codegen.prepared = #qlayout} {
  ^bb0(%out: i32):
    %n = linalg.index 0 : index
    %k = linalg.index 1 : index
    %c0 = arith.constant 0 : index
    %v = tensor.extract %w[%n, %k] : tensor<4x16xf32>
    %s = tensor.extract %m[%n] : tensor<4xf32>
    %p = arith.mulf %v, %s : f32
    %i = arith.fptosi %p : f32 to i32
    linalg.yield %i : i32
  } -> tensor<4x5xi32>
  return %x, %q : tensor<2x16xf32>, tensor<4x5xi32>
}
