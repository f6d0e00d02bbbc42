// RUN: blockc-opt %s --transformer-compute-in-f32 -verify-diagnostics

// Composites are decomposed first.
func.func @composite(%x: tensor<2x4x16xbf16>, %wu: tensor<32x16xbf16>, %wd: tensor<16x32xbf16>) -> tensor<2x4x16xbf16> {
  // expected-error @+1 {{'transformer.ffn' op must be decomposed before transformer-compute-in-f32}}
  %0 = transformer.ffn %x up(%wu : tensor<32x16xbf16>) down(%wd : tensor<16x32xbf16>) : tensor<2x4x16xbf16>
  return %0 : tensor<2x4x16xbf16>
}
