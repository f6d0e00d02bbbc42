// RUN: blockc-opt %s --transformer-strip-metadata | FileCheck %s --implicit-check-not=transformer.weight_name --implicit-check-not=transformer.layer --implicit-check-not=transformer.kv_

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
