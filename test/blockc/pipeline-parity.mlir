// The driver and blockc-opt run the same named pipelines: the IR they
// produce at each stage is identical, and --dump-pass-pipeline prints the
// textual pipeline that reproduces a driver run.

// RUN: rm -rf %t && mkdir -p %t
// RUN: blockc %S/Inputs/tiny.mlir -emit=linalg -o %t/driver-linalg.mlir
// RUN: blockc-opt %S/Inputs/tiny.mlir --blockc-cpu-lower-to-linalg-pipeline -o %t/opt-linalg.mlir
// RUN: diff %t/driver-linalg.mlir %t/opt-linalg.mlir
// RUN: blockc %S/Inputs/tiny.mlir -emit=llvm-mlir -o %t/driver-llvm.mlir
// RUN: blockc-opt %S/Inputs/tiny.mlir --blockc-cpu-pipeline -o %t/opt-llvm.mlir
// RUN: diff %t/driver-llvm.mlir %t/opt-llvm.mlir
// RUN: blockc %S/Inputs/tiny.mlir -emit=llvm-mlir --dump-pass-pipeline > %t/pipeline.txt
// RUN: FileCheck %s --input-file=%t/pipeline.txt
// RUN: blockc-opt %S/Inputs/tiny.mlir --pass-pipeline="$(cat %t/pipeline.txt)" -o %t/replayed.mlir
// RUN: diff %t/driver-llvm.mlir %t/replayed.mlir

// CHECK: builtin.module(transformer-fold-empty,transformer-decompose{{.*}}convert-transformer-to-linalg{{.*}}one-shot-bufferize{{.*}}transformer-strip-metadata{{.*}}reconcile-unrealized-casts)
