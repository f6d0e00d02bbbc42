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
// CHECK-SAME: {transformer.kv_cache = "k", transformer.kv_layout = "bhsd", transformer.layer = 1 : i64}
// CHECK-SAME: {transformer.kv_cache = "v", transformer.kv_layout = "bshd", transformer.layer = 1 : i64}
func.func @decode_marks(%p: index {transformer.kv_position},
    %k: tensor<1x?x2x8xf32> {transformer.kv_cache = "k", transformer.layer = 1 : i64, transformer.kv_layout = "bhsd"},
    %v: tensor<1x?x2x8xf32> {transformer.kv_cache = "v", transformer.layer = 1 : i64, transformer.kv_layout = "bshd"}) {
  return
}

// -----

// expected-error @+1 {{'transformer.kv_position' on argument #0 must be a unit attribute}}
func.func @position_not_unit(%p: index {transformer.kv_position = 1}) {
  return
}

// -----

// expected-error @+1 {{'transformer.kv_cache' on argument #0 must be "k" or "v"}}
func.func @cache_kind(%k: tensor<1x?x2x8xf32> {transformer.kv_cache = "q"}) {
  return
}

// -----

// expected-error @+1 {{'transformer.kv_layout' on argument #0 must be "bhsd" or "bshd"}}
func.func @cache_layout(%k: tensor<1x?x2x8xf32> {transformer.kv_cache = "k", transformer.kv_layout = "sbhd"}) {
  return
}

// -----

// expected-error @+1 {{'transformer.layer' on argument #0 must be a non-negative integer}}
func.func @cache_layer(%k: tensor<1x?x2x8xf32> {transformer.kv_cache = "k", transformer.layer = -1 : i64}) {
  return
}
