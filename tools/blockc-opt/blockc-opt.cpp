//===- blockc-opt.cpp - blockc optimizer driver ---------------------------===//
//
// The lit workhorse: MlirOptMain with every blockc dialect, pass and named
// pipeline registered (through the same registration as the drivers).
//
//===----------------------------------------------------------------------===//

#include "blockc/InitAllDialects.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  blockc::registerAllDialects(registry);
  blockc::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "blockc optimizer driver\n", registry));
}
