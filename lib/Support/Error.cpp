//===- Error.cpp - blockc's llvm::Error helpers ---------------------------===//

#include "blockc/Support/Error.h"

llvm::Error blockc::makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}
