// RUN: blockc-opt %s --blockc-cpu-lower-sdpa="pv-chunk=-2" -verify-diagnostics

// The multi-row kernel's P.V step must accumulate at least one head dim.
// expected-error @+1 {{blockc-cpu-lower-sdpa: pv-chunk must be >= 1}}
func.func @bad_sdpa_chunk() {
  return
}
