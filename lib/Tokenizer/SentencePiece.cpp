//===- SentencePiece.cpp - tokenizer.model through libsentencepiece -------===//
//
// Encoding, decoding, byte fallback and the leading-space (U+2581)
// convention are the library's; this file adds BOS and the streaming rule
// (a character spread over byte-fallback pieces is complete only when its
// last byte has come).
//
//===----------------------------------------------------------------------===//

#include "TokenizerImpl.h"

#include "blockc/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <sentencepiece_processor.h>

using namespace blockc;

namespace {
class SentencePieceTokenizer : public Tokenizer {
public:
  llvm::Error load(llvm::StringRef path) {
    sentencepiece::util::Status status = processor.Load(path.str());
    // The library's message names its own source lines; say what it means.
    if (!status.ok())
      return makeError(path + ": not a valid SentencePiece model");
    return llvm::Error::success();
  }

  llvm::Expected<std::vector<int32_t>> encode(llvm::StringRef text,
                                              bool addBos) const override {
    size_t bad = 0;
    if (!llvm::json::isUTF8(text, &bad))
      return makeError("the text is not valid UTF-8 (byte " + llvm::Twine(bad) +
                       ")");
    std::vector<int> pieces;
    sentencepiece::util::Status status = processor.Encode(text.str(), &pieces);
    if (!status.ok())
      return makeError("SentencePiece could not encode the text: " +
                       status.ToString());
    std::vector<int32_t> ids;
    if (addBos && bosId())
      ids.push_back(*bosId());
    ids.insert(ids.end(), pieces.begin(), pieces.end());
    return ids;
  }

  std::string decode(llvm::ArrayRef<int32_t> ids) const override {
    std::vector<int> valid;
    valid.reserve(ids.size());
    for (int32_t id : ids)
      if (id >= 0 && id < vocabSize())
        valid.push_back(id);
    std::string text;
    // The ids are in range, the only failure the library reports.
    (void)processor.Decode(valid, &text);
    return text;
  }

  std::string decodeComplete(llvm::ArrayRef<int32_t> ids) const override {
    // The bytes of the byte-fallback pieces at the end; those that begin a
    // character still to come are left for later.
    std::string bytes;
    size_t run = 0;
    while (run < ids.size()) {
      int32_t id = ids[ids.size() - 1 - run];
      if (id < 0 || id >= vocabSize() || !processor.IsByte(id))
        break;
      ++run;
    }
    for (size_t i = ids.size() - run; i < ids.size(); ++i)
      bytes += char(byteOf(ids[i]));
    return decode(ids.drop_back(utf8::incompleteTailLength(bytes)));
  }

  std::optional<int32_t> bosId() const override {
    return validId(processor.bos_id());
  }
  std::optional<int32_t> eosId() const override {
    return validId(processor.eos_id());
  }
  int64_t vocabSize() const override { return processor.GetPieceSize(); }
  bool addsBosByDefault() const override { return bosId().has_value(); }
  llvm::StringRef kind() const override { return "sentencepiece"; }

private:
  std::optional<int32_t> validId(int id) const {
    if (id < 0 || id >= vocabSize())
      return std::nullopt;
    return id;
  }

  /// The byte of a byte-fallback piece, spelled <0xAB>.
  uint8_t byteOf(int32_t id) const {
    std::string piece = processor.IdToPiece(id);
    unsigned value = 0;
    llvm::StringRef(piece).drop_front(3).drop_back(1).getAsInteger(16, value);
    return value;
  }

  sentencepiece::SentencePieceProcessor processor;
};
} // namespace

llvm::Expected<std::unique_ptr<Tokenizer>>
detail::loadSentencePiece(llvm::StringRef path) {
  auto tokenizer = std::make_unique<SentencePieceTokenizer>();
  if (llvm::Error error = tokenizer->load(path))
    return std::move(error);
  return std::unique_ptr<Tokenizer>(std::move(tokenizer));
}
