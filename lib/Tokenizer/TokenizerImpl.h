//===- TokenizerImpl.h - The tokenizer implementations ----------*- C++ -*-===//
//
// Private to lib/Tokenizer: the constructors Tokenizer::load chooses from.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_LIB_TOKENIZER_TOKENIZERIMPL_H
#define BLOCKC_LIB_TOKENIZER_TOKENIZERIMPL_H

#include "blockc/Tokenizer/Tokenizer.h"

namespace blockc::detail {

/// Reads a Hugging Face tokenizer.json with byte-level BPE, and the
/// tokenizer_config.json and config.json beside it when present. Sets
/// `notByteLevel` when the file is a tokenizer of another kind.
llvm::Expected<std::unique_ptr<Tokenizer>>
loadByteLevelBPE(llvm::StringRef path, bool &notByteLevel);

/// Reads a SentencePiece model (tokenizer.model).
llvm::Expected<std::unique_ptr<Tokenizer>>
loadSentencePiece(llvm::StringRef path);

} // namespace blockc::detail

#endif // BLOCKC_LIB_TOKENIZER_TOKENIZERIMPL_H
