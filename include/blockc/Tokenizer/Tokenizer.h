//===- Tokenizer.h - Text to token ids and back -----------------*- C++ -*-===//
//
// The tokenizers of Hugging Face model folders (docs/Tokenizers.md):
// SentencePiece `tokenizer.model` through libsentencepiece, and byte-level
// BPE `tokenizer.json` (GPT-2, Llama 3, Qwen2). No MLIR here.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_TOKENIZER_TOKENIZER_H
#define BLOCKC_TOKENIZER_TOKENIZER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace blockc {

class Tokenizer {
public:
  virtual ~Tokenizer();

  /// Loads DIR/tokenizer.json (Hugging Face, byte-level BPE) if present, else
  /// DIR/tokenizer.model (SentencePiece); a clear llvm::Error naming the file
  /// otherwise. A tokenizer.json that is not byte-level BPE (Llama 2's and
  /// Mistral's are SentencePiece-style BPE) gives way to a tokenizer.model
  /// beside it.
  static llvm::Expected<std::unique_ptr<Tokenizer>> load(llvm::StringRef dir);

  /// The ids of `text` (UTF-8), with bosId() in front when `addBos` and the
  /// tokenizer has one.
  virtual llvm::Expected<std::vector<int32_t>> encode(llvm::StringRef text,
                                                      bool addBos) const = 0;

  /// The text of `ids` (valid UTF-8; bytes that do not form a character
  /// become U+FFFD). Control and special tokens (BOS, EOS, ...) decode to
  /// nothing; ids outside [0, vocabSize()) are skipped.
  virtual std::string decode(llvm::ArrayRef<int32_t> ids) const = 0;

  /// Text of ids[0..n) that is complete (whole UTF-8 characters), for
  /// streaming: the caller prints decode-so-far minus what it printed before.
  /// It is decode(ids) without the bytes at the end that begin a character
  /// the next ids may complete.
  virtual std::string decodeComplete(llvm::ArrayRef<int32_t> ids) const = 0;

  virtual std::optional<int32_t> bosId() const = 0;
  virtual std::optional<int32_t> eosId() const = 0;
  virtual int64_t vocabSize() const = 0;

  /// Whether the model's own tokenizer puts BOS in front of a prompt by
  /// default (Llama 2/3: yes; GPT-2, Qwen2: no).
  virtual bool addsBosByDefault() const = 0;

  /// "sentencepiece" or "byte-level-bpe".
  virtual llvm::StringRef kind() const = 0;

  /// Every id that ends a generated sequence: eosId() first, then the
  /// `eos_token_id` ids (a number or a list) of the folder's
  /// generation_config.json and config.json (Llama 3 instruct models list
  /// several). Filled by load().
  llvm::ArrayRef<int32_t> eosIds() const { return endIds; }

private:
  static llvm::Expected<std::unique_ptr<Tokenizer>>
  loadFile(llvm::StringRef dir);

  std::vector<int32_t> endIds;
};

/// Prints text as tokens arrive, never splitting a UTF-8 character.
class StreamingDecoder {
public:
  explicit StreamingDecoder(const Tokenizer &t);

  /// Ids already shown to the user (the prompt): they give the context that
  /// decides the text of what follows (SentencePiece drops the leading space
  /// of a text's first word) but are not printed again.
  void prime(llvm::ArrayRef<int32_t> ids);

  /// The new complete text since the last push.
  std::string push(int32_t id);

  /// What is left, a trailing incomplete character as U+FFFD.
  std::string finish();

private:
  std::string step(bool final);

  const Tokenizer &tokenizer;
  std::vector<int32_t> ids;
  /// The ids from `start` on are decoded again at each step (a few at a
  /// time: the window restarts whenever nothing is held back).
  size_t start = 0;
  /// What was printed of the window's text.
  std::string printed;
};

/// UTF-8 helpers shared by the tokenizers (exposed for the tests).
namespace utf8 {
/// The number of bytes at the end of `bytes` that begin a character and may
/// still be completed by more bytes (0 to 3).
size_t incompleteTailLength(llvm::StringRef bytes);
/// `bytes` as valid UTF-8: each maximal ill-formed subpart becomes U+FFFD
/// (Unicode's "substitution of maximal subparts", as Python and Rust do).
std::string sanitize(llvm::StringRef bytes);
/// Appends the UTF-8 encoding of `codePoint`.
void append(std::string &out, uint32_t codePoint);
/// Decodes the code point at `pos` of valid UTF-8 and advances `pos`.
uint32_t next(llvm::StringRef text, size_t &pos);
} // namespace utf8

/// The code point GPT-2's byte-level alphabet spells `byte` with: printable
/// Latin-1 bytes stand for themselves, the others for U+0100 onwards in byte
/// order (the space is U+0120, the newline U+010A).
uint32_t byteLevelCodePoint(uint8_t byte);

} // namespace blockc

#endif // BLOCKC_TOKENIZER_TOKENIZER_H
