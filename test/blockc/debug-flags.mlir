// The driver accepts the usual MLIR debugging flags.

// RUN: blockc %S/Inputs/tiny.mlir -emit=linalg --mlir-print-ir-after-all -o /dev/null 2>&1 | FileCheck %s --check-prefix=PRINT
// RUN: blockc %S/Inputs/tiny.mlir -emit=linalg --mlir-timing -o /dev/null 2>&1 | FileCheck %s --check-prefix=TIMING
// The parse is timed too.
// RUN: blockc %S/Inputs/tiny.mlir -emit=linalg --mlir-timing --mlir-timing-display=list -o /dev/null 2>&1 | FileCheck %s --check-prefix=PARSE

// PRINT: IR Dump After TransformerDecomposePass (transformer-decompose)
// PRINT: IR Dump After ConvertTransformerToLinalgPass (convert-transformer-to-linalg)
// TIMING: Execution time report
// TIMING: TransformerDecomposePass
// PARSE: {{%\) +parse$}}
