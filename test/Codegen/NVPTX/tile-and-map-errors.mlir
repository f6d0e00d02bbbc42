// RUN: blockc-opt %s --blockc-gpu-tile-and-map="threads-x=64 threads-y=32" -verify-diagnostics

// A block of more than 1024 threads is refused.
// expected-error @+1 {{blockc-gpu-tile-and-map: threads-x * threads-y must be in [1, 1024]}}
func.func @too_many_threads() {
  return
}
