// RUN: blockc-opt %s --transformer-strip-metadata | FileCheck %s --implicit-check-not=transformer.weight_name --implicit-check-not=transformer.layer --implicit-check-not=transformer.kv_ --implicit-check-not=transformer.seq_ --implicit-check-not=transformer.block_table --implicit-check-not=transformer.page_size --implicit-check-not=blockc_codegen

// The binding attributes are removed; everything else is kept.
// CHECK-LABEL: func.func @f
// CHECK-SAME: (%{{.*}}: tensor<?x?x8xf32>, %{{.*}}: tensor<8xf32> {other.attr})
// CHECK: transformer.rms_norm {{.*}} {epsilon = 1.000000e-05 : f64}
func.func @f(%x: tensor<?x?x8xf32>,
    %g: tensor<8xf32> {transformer.weight_name = "g", other.attr})
    -> tensor<?x?x8xf32> {
  %y = transformer.rms_norm %x, %g {epsilon = 1.0e-5 : f64, transformer.layer = 2 : i64}
      : tensor<?x?x8xf32>, tensor<8xf32>
  return %y : tensor<?x?x8xf32>
}

// Decode-entry marks (position, caches with their layer and layout) go too.
// CHECK-LABEL: func.func @decode
// CHECK-SAME: (%{{.*}}: index, %{{.*}}: tensor<1x?x2x8xf32>)
func.func @decode(%p: index {transformer.kv_position},
    %k: tensor<1x?x2x8xf32> {transformer.kv_cache = #transformer.kv_cache<key>, transformer.layer = 0 : i64, transformer.kv_layout = #transformer.kv_layout<bhsd>}) {
  return
}

// Paged-entry marks (the ragged batch, the pools' page size) go too.
// CHECK-LABEL: func.func @paged
// CHECK-SAME: (%{{.*}}: tensor<?xi32>, %{{.*}}: tensor<?xi32>, %{{.*}}: tensor<?x?xi32>, %{{.*}}: tensor<?x4x2x8xf32>)
func.func @paged(%cu: tensor<?xi32> {transformer.seq_offsets}, %sp: tensor<?xi32> {transformer.seq_positions},
    %bt: tensor<?x?xi32> {transformer.block_table},
    %k: tensor<?x4x2x8xf32> {transformer.kv_cache = #transformer.kv_cache<key>, transformer.layer = 0 : i64, transformer.page_size = 4 : i64}) {
  return
}

// The codegen configuration on functions and ops goes as well (the LLVM
// dialect must parse without blockc's dialects); other attributes stay.
// CHECK-LABEL: func.func @configured
// CHECK-SAME: attributes {other.attr}
// CHECK: arith.addf %{{.*}}, %{{.*}} {other.op_attr} : f32
func.func @configured(%a: f32) -> f32 attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx2, vector_width = 8, registers = 16, l1_bytes = 32768, l2_bytes = 1048576>, other.attr} {
  %b = arith.addf %a, %a {blockc_codegen.kernel = #blockc_codegen.kernel<linear>, other.op_attr} : f32
  return %b : f32
}

// Prepared-weight records on arguments and results go too.
// CHECK-LABEL: func.func @prepared
// CHECK-SAME: (%{{.*}}: tensor<8x8xf32> {other.attr}) -> (tensor<1x1x8x8xf32> {other.result})
// CHECK-NOT: attributes
func.func @prepared(%w: tensor<8x8xf32> {blockc_codegen.source_arg = 2 : i64, other.attr}) -> (tensor<1x1x8x8xf32> {blockc_codegen.source_arg = 2 : i64, blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 8, cols = 8, panel_k = 8, panel_n = 8>, other.result}) attributes {blockc_codegen.prepare_for = "forward"} {
  %e = tensor.empty() : tensor<1x1x8x8xf32>
  return %e : tensor<1x1x8x8xf32>
}
