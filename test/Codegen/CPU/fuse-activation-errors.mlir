// RUN: blockc-opt %s --blockc-cpu-fuse-activation="vector-width=0" -verify-diagnostics

// The epilogue's vectors need at least one lane.
// expected-error @+1 {{blockc-cpu-fuse-activation: vector-width must be >= 1}}
func.func @bad_width() {
  return
}
