// RUN: blockc-opt %s --blockc-cpu-lower-sdpa="vector-width=0" -verify-diagnostics

// The vector width must be positive.
// expected-error @+1 {{blockc-cpu-lower-sdpa: vector-width must be >= 1}}
func.func @bad_sdpa_options() {
  return
}
