// RUN: blockc-opt %s --blockc-cpu-lower-sdpa="prefetch-distance=0" -verify-diagnostics
// RUN: blockc-opt %s --blockc-cpu-lower-sdpa="prefetch-locality=4" -verify-diagnostics

// Prefetches go at least one key tile ahead, with an LLVM locality hint.
// expected-error @+1 {{blockc-cpu-lower-sdpa: prefetch-distance must be >= 1 and prefetch-locality in [0, 3]}}
func.func @bad_sdpa_prefetch() {
  return
}
