// RUN: blockc-opt %s --blockc-cpu-lower-linear="rows=0" -verify-diagnostics

// Kernel options must be positive.
// expected-error @+1 {{blockc-cpu-lower-linear: every option must be >= 1}}
func.func @bad_linear_options() {
  return
}
