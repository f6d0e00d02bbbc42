// RUN: blockc-opt %s --blockc-cpu-lower-sdpa="qk-unroll=0" -verify-diagnostics

// The multi-row kernel's q.k step must cover at least one head dim.
// expected-error @+1 {{blockc-cpu-lower-sdpa: qk-unroll must be >= 1}}
func.func @bad_sdpa_unroll() {
  return
}
