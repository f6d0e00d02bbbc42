//===- Error.h - blockc's llvm::Error helpers -------------------*- C++ -*-===//
//
// The one way blockc's libraries make an error that carries only a message
// (what the tools print after "error: ").
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_SUPPORT_ERROR_H
#define BLOCKC_SUPPORT_ERROR_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

namespace blockc {

/// An llvm::StringError with `message` and no error code.
llvm::Error makeError(const llvm::Twine &message);

} // namespace blockc

#endif // BLOCKC_SUPPORT_ERROR_H
