// RUN: blockc-opt %s --blockc-cpu-fuse-norm="vector-width=0" -verify-diagnostics

// The row-scale and epilogue vectors need at least one lane.
// expected-error @+1 {{blockc-cpu-fuse-norm: vector-width must be >= 1}}
func.func @bad_width() {
  return
}
