//===- Tokenizer.cpp - Loading a tokenizer, streaming, UTF-8 --------------===//
//
// Tokenizer::load picks the implementation from the files of a model folder;
// StreamingDecoder turns a growing list of ids into text one whole character
// at a time.
//
//===----------------------------------------------------------------------===//

#include "blockc/Tokenizer/Tokenizer.h"
#include "TokenizerImpl.h"

#include "blockc/Support/Error.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace blockc;

Tokenizer::~Tokenizer() = default;

namespace {
/// The eos_token_id of DIR/NAME: a number or a list of them.
void readEndIds(llvm::StringRef dir, llvm::StringRef name,
                std::vector<int64_t> &ids) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return;
  auto json = llvm::json::parse((*buffer)->getBuffer());
  if (!json) {
    llvm::consumeError(json.takeError());
    return;
  }
  const llvm::json::Object *root = json->getAsObject();
  const llvm::json::Value *v = root ? root->get("eos_token_id") : nullptr;
  if (!v)
    return;
  if (const llvm::json::Array *list = v->getAsArray()) {
    for (const llvm::json::Value &e : *list)
      if (std::optional<int64_t> id = e.getAsInteger())
        ids.push_back(*id);
  } else if (std::optional<int64_t> id = v->getAsInteger()) {
    ids.push_back(*id);
  }
}
} // namespace

llvm::Expected<std::unique_ptr<Tokenizer>>
Tokenizer::load(llvm::StringRef dir) {
  auto tokenizer = loadFile(dir);
  if (!tokenizer)
    return tokenizer;
  Tokenizer &t = **tokenizer;
  std::vector<int64_t> ids;
  if (t.eosId())
    ids.push_back(*t.eosId());
  readEndIds(dir, "generation_config.json", ids);
  readEndIds(dir, "config.json", ids);
  for (int64_t id : ids)
    if (id >= 0 && id < t.vocabSize() && !llvm::is_contained(t.endIds, id))
      t.endIds.push_back(id);
  return tokenizer;
}

llvm::Expected<std::unique_ptr<Tokenizer>>
Tokenizer::loadFile(llvm::StringRef dir) {
  llvm::SmallString<256> json(dir), model(dir);
  llvm::sys::path::append(json, "tokenizer.json");
  llvm::sys::path::append(model, "tokenizer.model");
  bool haveModel = llvm::sys::fs::exists(model);
  if (llvm::sys::fs::exists(json)) {
    bool notByteLevel = false;
    auto bpe = detail::loadByteLevelBPE(json, notByteLevel);
    // Llama 2 and Mistral ship a SentencePiece-style tokenizer.json beside
    // their tokenizer.model: the model is the one to read.
    if (!bpe && notByteLevel && haveModel) {
      llvm::consumeError(bpe.takeError());
      return detail::loadSentencePiece(model);
    }
    return bpe;
  }
  if (haveModel)
    return detail::loadSentencePiece(model);
  return makeError("no tokenizer in '" + dir + "': neither " + json + " nor " +
                   model + " exists");
}

//===----------------------------------------------------------------------===//
// StreamingDecoder
//===----------------------------------------------------------------------===//

StreamingDecoder::StreamingDecoder(const Tokenizer &t) : tokenizer(t) {}

void StreamingDecoder::prime(llvm::ArrayRef<int32_t> newIds) {
  for (int32_t id : newIds)
    push(id);
}

std::string StreamingDecoder::step(bool final) {
  // The window is ids[start..), decoded after one token of context (so that
  // SentencePiece keeps the window's leading space) minus the context's own
  // text.
  llvm::ArrayRef<int32_t> all(ids);
  size_t context = start > 0 ? start - 1 : 0;
  std::string prefix =
      start > 0 ? tokenizer.decode(all.slice(context, 1)) : std::string();
  std::string whole = tokenizer.decode(all.drop_front(context));
  std::string complete =
      final ? whole : tokenizer.decodeComplete(all.drop_front(context));
  std::string text;
  if (llvm::StringRef(complete).starts_with(prefix))
    text = complete.substr(prefix.size());
  // Complete text only grows; should a decoder ever rewrite what it printed,
  // the new text starts at the next whole character after what was printed.
  size_t from = printed.size();
  if (!llvm::StringRef(text).starts_with(printed)) {
    from = std::min(from, text.size());
    while (from < text.size() && (text[from] & 0xC0) == 0x80)
      ++from;
  }
  std::string out = from < text.size() ? text.substr(from) : std::string();
  printed = std::move(text);
  // Nothing held back: later text no longer depends on these ids, so the
  // next window starts here and each step decodes only a few ids.
  if (complete == whole) {
    start = ids.size();
    printed.clear();
  }
  return out;
}

std::string StreamingDecoder::push(int32_t id) {
  ids.push_back(id);
  return step(/*final=*/false);
}

std::string StreamingDecoder::finish() { return step(/*final=*/true); }

//===----------------------------------------------------------------------===//
// UTF-8
//===----------------------------------------------------------------------===//

namespace {
/// The length of the character a lead byte starts and the range its second
/// byte must lie in (Unicode Table 3-7, well-formed byte sequences); 0 when
/// `lead` cannot start a character.
struct LeadInfo {
  unsigned length;
  uint8_t lo, hi;
};
LeadInfo leadInfo(uint8_t lead) {
  if (lead < 0x80)
    return {1, 0, 0};
  if (lead >= 0xC2 && lead <= 0xDF)
    return {2, 0x80, 0xBF};
  if (lead == 0xE0)
    return {3, 0xA0, 0xBF};
  if (lead == 0xED)
    return {3, 0x80, 0x9F};
  if (lead >= 0xE1 && lead <= 0xEF)
    return {3, 0x80, 0xBF};
  if (lead == 0xF0)
    return {4, 0x90, 0xBF};
  if (lead >= 0xF1 && lead <= 0xF3)
    return {4, 0x80, 0xBF};
  if (lead == 0xF4)
    return {4, 0x80, 0x8F};
  return {0, 0, 0};
}

/// The number of bytes from `pos` that continue a well-formed prefix of the
/// character starting there (at least 1 for a valid lead byte), and whether
/// they make the whole character.
std::pair<size_t, bool> scanCharacter(llvm::StringRef bytes, size_t pos) {
  LeadInfo info = leadInfo(bytes[pos]);
  if (info.length == 0)
    return {0, false};
  size_t n = 1;
  while (n < info.length && pos + n < bytes.size()) {
    uint8_t b = bytes[pos + n];
    uint8_t lo = n == 1 ? info.lo : 0x80, hi = n == 1 ? info.hi : 0xBF;
    if (b < lo || b > hi)
      break;
    ++n;
  }
  return {n, n == info.length};
}
} // namespace

size_t utf8::incompleteTailLength(llvm::StringRef bytes) {
  // A character is at most 4 bytes: look for its start among the last 3.
  for (size_t back = 1; back <= 3 && back <= bytes.size(); ++back) {
    size_t pos = bytes.size() - back;
    uint8_t b = bytes[pos];
    if ((b & 0xC0) == 0x80)
      continue;
    auto [n, complete] = scanCharacter(bytes, pos);
    return !complete && n == back ? back : 0;
  }
  return 0;
}

std::string utf8::sanitize(llvm::StringRef bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t pos = 0; pos < bytes.size();) {
    auto [n, complete] = scanCharacter(bytes, pos);
    if (complete) {
      out.append(bytes.data() + pos, n);
      pos += n;
    } else {
      out += "\xEF\xBF\xBD";
      pos += std::max<size_t>(n, 1);
    }
  }
  return out;
}

void utf8::append(std::string &out, uint32_t cp) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xC0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += char(0xE0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  } else {
    out += char(0xF0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3F));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  }
}

uint32_t utf8::next(llvm::StringRef text, size_t &pos) {
  uint8_t b = text[pos];
  unsigned length = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
  uint32_t cp = length == 1   ? b
                : length == 2 ? b & 0x1F
                : length == 3 ? b & 0x0F
                              : b & 0x07;
  for (unsigned i = 1; i < length && pos + i < text.size(); ++i)
    cp = (cp << 6) | (uint8_t(text[pos + i]) & 0x3F);
  pos += length;
  return cp;
}
