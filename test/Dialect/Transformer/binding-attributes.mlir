// RUN: blockc-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// Weight-name and layer attributes that bind weights to tensor names.
// CHECK-LABEL: func.func @named
// CHECK-SAME: {transformer.weight_name = "model.layers.3.input_layernorm.weight"}
// CHECK: transformer.rms_norm {{.*}} {transformer.layer = 3 : i64}
func.func @named(%x: tensor<?x?x8xf32>,
    %g: tensor<8xf32> {transformer.weight_name = "model.layers.3.input_layernorm.weight"})
    -> tensor<?x?x8xf32> {
  %y = transformer.rms_norm %x, %g {transformer.layer = 3 : i64}
      : tensor<?x?x8xf32>, tensor<8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// expected-error @+1 {{'transformer.weight_name' on argument #1 must be a non-empty string}}
func.func @empty_name(%x: tensor<?x?x8xf32>, %g: tensor<8xf32> {transformer.weight_name = ""}) {
  return
}

// -----

// expected-error @+1 {{'transformer.weight_name' on argument #1 must be a non-empty string}}
func.func @non_string_name(%x: tensor<?x?x8xf32>, %g: tensor<8xf32> {transformer.weight_name = 3}) {
  return
}

// -----

// expected-error @+1 {{unknown transformer argument attribute 'transformer.weight'}}
func.func @unknown_arg_attr(%x: tensor<?x?x8xf32>, %g: tensor<8xf32> {transformer.weight = "w"}) {
  return
}

// -----

func.func @negative_layer(%x: tensor<?x?x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'transformer.layer' must be a non-negative integer}}
  %y = transformer.rms_norm %x, %g {transformer.layer = -1 : i64}
      : tensor<?x?x8xf32>, tensor<8xf32>
  return
}

// -----

func.func @unknown_op_attr(%x: tensor<?x?x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{unknown transformer attribute 'transformer.bogus'}}
  %y = transformer.rms_norm %x, %g {transformer.bogus = 1 : i64}
      : tensor<?x?x8xf32>, tensor<8xf32>
  return
}

// -----

// Slice and transpose bindings (GPT-2's fused [in, out] weights).
// CHECK-LABEL: func.func @sliced
// CHECK-SAME: transformer.weight_slice = array<i64: 1, 0, 8>, transformer.weight_transpose
func.func @sliced(%x: tensor<?x?x8xf32>,
    %w: tensor<8x8xf32> {transformer.weight_name = "h.0.attn.c_attn.weight", transformer.weight_slice = array<i64: 1, 0, 8>, transformer.weight_transpose}) {
  return
}

// -----

// expected-error @+1 {{'transformer.weight_transpose' on argument #1 must be a unit attribute}}
func.func @transpose_not_unit(%x: tensor<?x?x8xf32>, %w: tensor<8x8xf32> {transformer.weight_transpose = 1 : i64}) {
  return
}

// -----

// expected-error @+1 {{'transformer.weight_slice' on argument #1 must be array<i64: axis, begin, end> with axis >= 0 and 0 <= begin < end}}
func.func @slice_empty(%x: tensor<?x?x8xf32>, %w: tensor<8x8xf32> {transformer.weight_slice = array<i64: 1, 8, 8>}) {
  return
}

// -----

// expected-error @+1 {{'transformer.weight_slice' on argument #1 must be array<i64: axis, begin, end> with axis >= 0 and 0 <= begin < end}}
func.func @slice_wrong_arity(%x: tensor<?x?x8xf32>, %w: tensor<8x8xf32> {transformer.weight_slice = array<i64: 0, 8>}) {
  return
}

// -----

// Decode entries (transformer-derive-decode) mark the position and the
// caches; the marks are verified like the weight bindings.
// CHECK-LABEL: func.func @decode_marks
// CHECK-SAME: %{{.*}}: index {transformer.kv_position}
// CHECK-SAME: {transformer.kv_cache = #transformer.kv_cache<key>, transformer.kv_layout = #transformer.kv_layout<bhsd>, transformer.layer = 1 : i64}
// CHECK-SAME: {transformer.kv_cache = #transformer.kv_cache<value>, transformer.kv_layout = #transformer.kv_layout<bshd>, transformer.layer = 1 : i64}
func.func @decode_marks(%p: index {transformer.kv_position},
    %k: tensor<1x?x2x8xf32> {transformer.kv_cache = #transformer.kv_cache<key>, transformer.layer = 1 : i64, transformer.kv_layout = #transformer.kv_layout<bhsd>},
    %v: tensor<1x?x2x8xf32> {transformer.kv_cache = #transformer.kv_cache<value>, transformer.layer = 1 : i64, transformer.kv_layout = #transformer.kv_layout<bshd>}) {
  return
}

// -----

// expected-error @+1 {{'transformer.kv_position' on argument #0 must be a unit attribute}}
func.func @position_not_unit(%p: index {transformer.kv_position = 1}) {
  return
}

// -----

// The cache kind and layout are enum attributes: a value outside the enum
// does not parse.
// expected-error @+2 {{expected ::blockc::transformer::KVCacheKind to be one of: key, value}}
// expected-error @+1 {{failed to parse Transformer_KVCacheKindAttr parameter 'value'}}
func.func @cache_kind(%k: tensor<1x?x2x8xf32> {transformer.kv_cache = #transformer.kv_cache<query>}) {
  return
}

// -----

// expected-error @+2 {{expected ::blockc::transformer::KVLayout to be one of: bhsd, bshd}}
// expected-error @+1 {{failed to parse Transformer_KVLayoutAttr parameter 'value'}}
func.func @cache_layout(%k: tensor<1x?x2x8xf32> {transformer.kv_cache = #transformer.kv_cache<key>, transformer.kv_layout = #transformer.kv_layout<sbhd>}) {
  return
}

// -----

// The discardable attribute names hold any attribute; the dialect checks
// the kind.
// expected-error @+1 {{'transformer.kv_cache' on argument #0 must be a #transformer.kv_cache}}
func.func @cache_kind_string(%k: tensor<1x?x2x8xf32> {transformer.kv_cache = "k"}) {
  return
}

// -----

// expected-error @+1 {{'transformer.kv_layout' on argument #0 must be a #transformer.kv_layout}}
func.func @cache_layout_kind(%k: tensor<1x?x2x8xf32> {transformer.kv_cache = #transformer.kv_cache<key>, transformer.kv_layout = #transformer.kv_cache<key>}) {
  return
}

// -----

// A cache is [B, L_max, H_kv, D]: rank 4, tensor or (after bufferization)
// memref.
// expected-error @+1 {{'transformer.kv_cache' on argument #1 needs a rank-4 tensor or memref [B, L_max, H_kv, D], not 'tensor<?x8xf32>'}}
func.func @cache_rank(%p: index, %k: tensor<?x8xf32> {transformer.kv_cache = #transformer.kv_cache<key>}) {
  return
}

// -----

// expected-error @+1 {{'transformer.kv_layout' on argument #0 needs a rank-4 tensor or memref [B, L_max, H_kv, D], not 'index'}}
func.func @layout_rank(%p: index {transformer.kv_layout = #transformer.kv_layout<bhsd>}) {
  return
}

// -----

// expected-error @+1 {{'transformer.kv_layout' on argument #0 needs 'transformer.kv_cache' on the same argument}}
func.func @layout_without_cache(%k: tensor<1x?x2x8xf32> {transformer.kv_layout = #transformer.kv_layout<bshd>}) {
  return
}

// -----

// Bufferized decode entries keep the marks on memref arguments, and
// declarations are checked like definitions.
// CHECK-LABEL: func.func private @cache_memref
// CHECK-SAME: memref<1x?x2x8xf32> {transformer.kv_cache = #transformer.kv_cache<value>, transformer.kv_layout = #transformer.kv_layout<bhsd>}
func.func private @cache_memref(memref<1x?x2x8xf32> {transformer.kv_cache = #transformer.kv_cache<value>, transformer.kv_layout = #transformer.kv_layout<bhsd>})

// -----

// expected-error @+1 {{'transformer.layer' on argument #0 must be a non-negative integer}}
func.func @cache_layer(%k: tensor<1x?x2x8xf32> {transformer.kv_cache = #transformer.kv_cache<key>, transformer.layer = -1 : i64}) {
  return
}

// -----

// The arguments of a paged entry (transformer-derive-paged-decode).
// CHECK-LABEL: func.func @paged_arguments
// CHECK-SAME: {transformer.seq_offsets}
// CHECK-SAME: {transformer.seq_positions}
// CHECK-SAME: {transformer.block_table}
// CHECK-SAME: transformer.page_size = 16 : i64
func.func @paged_arguments(%cu: tensor<?xi32> {transformer.seq_offsets},
    %sp: tensor<?xi32> {transformer.seq_positions},
    %bt: tensor<?x?xi32> {transformer.block_table},
    %kp: tensor<?x16x2x8xf32> {transformer.kv_cache = #transformer.kv_cache<key>,
                               transformer.layer = 0 : i64, transformer.page_size = 16 : i64}) {
  return
}

// -----

// expected-error @+1 {{'transformer.seq_offsets' on argument #0 must be a unit attribute}}
func.func @seq_offsets_not_unit(%cu: tensor<?xi32> {transformer.seq_offsets = 1 : i64}) {
  return
}

// -----

// expected-error @+1 {{'transformer.block_table' on argument #0 needs a rank-2 i32 tensor, not 'tensor<?xi32>'}}
func.func @block_table_rank(%bt: tensor<?xi32> {transformer.block_table}) {
  return
}

// -----

// expected-error @+1 {{'transformer.seq_positions' on argument #0 needs a rank-1 i32 tensor, not 'tensor<?xi64>'}}
func.func @seq_positions_type(%sp: tensor<?xi64> {transformer.seq_positions}) {
  return
}

// -----

// expected-error @+1 {{'transformer.page_size' on argument #0 must be a positive integer}}
func.func @page_size_zero(%kp: tensor<?x16x2x8xf32> {transformer.kv_cache = #transformer.kv_cache<key>, transformer.page_size = 0 : i64}) {
  return
}

// -----

// expected-error @+1 {{'transformer.page_size' on argument #0 needs 'transformer.kv_cache' on the same argument}}
func.func @page_size_without_cache(%kp: tensor<?x16x2x8xf32> {transformer.page_size = 16 : i64}) {
  return
}
