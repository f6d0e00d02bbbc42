//===- blockc-fuzz-tokenizer.cpp - fuzz the tokenizer.json reader ---------===//
//
// The first byte picks the target. Even: the rest is a tokenizer.json, read
// and, when it loads, used to encode and decode a fixed text (errors are
// expected). Odd: the rest is text for a fixed byte-level BPE tokenizer
// (Llama 3's split regex, merges, a non-special added token); valid UTF-8
// must round-trip, decode(encode(x)) == x, and streaming it id by id must
// give whole characters only, adding up to the same text. A crash, a
// sanitizer report or a broken property is a finding.
//
//===----------------------------------------------------------------------===//

#include "blockc/Tokenizer/Tokenizer.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

using namespace blockc;

namespace {

llvm::SmallString<128> &directory() {
  static llvm::SmallString<128> dir = [] {
    llvm::SmallString<128> d;
    if (llvm::sys::fs::createUniqueDirectory("blockc-fuzz-tokenizer", d))
      abort();
    std::atexit([] { llvm::sys::fs::remove_directories(directory()); });
    return d;
  }();
  return dir;
}

void writeFile(llvm::StringRef name, llvm::StringRef bytes) {
  llvm::SmallString<256> path(directory());
  llvm::sys::path::append(path, name);
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  os << bytes;
}

std::string alphabet(llvm::StringRef text) {
  std::string out;
  for (char c : text)
    utf8::append(out, byteLevelCodePoint(c));
  return out;
}

/// The fixed tokenizer of the odd inputs.
const Tokenizer &fixedTokenizer() {
  static std::unique_ptr<Tokenizer> tokenizer = [] {
    llvm::json::Object vocab;
    for (unsigned b = 0; b < 256; ++b)
      vocab[alphabet(std::string(1, char(b)))] = b;
    llvm::json::Array merges;
    for (auto [l, r] : {std::pair<const char *, const char *>{"t", "h"},
                        {"th", "e"},
                        {" ", "the"},
                        {"\xC3", "\xA9"},
                        {"1", "2"},
                        {"\xF0", "\x9F"}}) {
      std::string left = alphabet(l), right = alphabet(r);
      if (!vocab.get(left + right))
        vocab[left + right] = int64_t(vocab.size());
      merges.push_back(left + " " + right);
    }
    int64_t added = vocab.size();
    llvm::json::Object json{
        {"added_tokens",
         llvm::json::Array{llvm::json::Object{
             {"id", added}, {"content", "<sep>"}, {"special", false}}}},
        {"pre_tokenizer",
         llvm::json::Object{
             {"type", "Sequence"},
             {"pretokenizers",
              llvm::json::Array{
                  llvm::json::Object{
                      {"type", "Split"},
                      {"pattern",
                       llvm::json::Object{
                           {"Regex",
                            R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}}},
                      {"behavior", "Isolated"}},
                  llvm::json::Object{{"type", "ByteLevel"},
                                     {"use_regex", false}}}}}},
        {"model", llvm::json::Object{{"type", "BPE"},
                                     {"vocab", std::move(vocab)},
                                     {"merges", std::move(merges)}}}};
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::json::Value(std::move(json));
    writeFile("tokenizer.json", text);
    auto t = Tokenizer::load(directory());
    if (!t)
      abort();
    return std::move(*t);
  }();
  return *tokenizer;
}

void checkText(llvm::StringRef text) {
  const Tokenizer &t = fixedTokenizer();
  auto ids = t.encode(text, /*addBos=*/false);
  if (!ids) {
    // Only text that is not UTF-8 is refused.
    if (llvm::json::isUTF8(text))
      abort();
    llvm::consumeError(ids.takeError());
    return;
  }
  if (t.decode(*ids) != text)
    abort();
  StreamingDecoder stream(t);
  std::string streamed;
  for (int32_t id : *ids) {
    std::string chunk = stream.push(id);
    if (!llvm::json::isUTF8(chunk))
      abort();
    streamed += chunk;
  }
  streamed += stream.finish();
  if (streamed != text)
    abort();
}

void checkFile(llvm::StringRef json) {
  writeFile("tokenizer.json", json);
  auto t = Tokenizer::load(directory());
  if (!t) {
    llvm::consumeError(t.takeError());
    return;
  }
  auto ids = (*t)->encode("Hello, world! 'S 123 \xC3\xA9\xF0\x9F\x98\x80 <s>",
                          /*addBos=*/true);
  if (!ids) {
    llvm::consumeError(ids.takeError());
    return;
  }
  std::string text = (*t)->decode(*ids);
  if (!llvm::json::isUTF8(text))
    abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  llvm::StringRef bytes(reinterpret_cast<const char *>(data) + 1, size - 1);
  // The fixed tokenizer is loaded before any file input overwrites its file.
  fixedTokenizer();
  if (data[0] % 2 == 0)
    checkFile(bytes);
  else
    checkText(bytes);
  return 0;
}
