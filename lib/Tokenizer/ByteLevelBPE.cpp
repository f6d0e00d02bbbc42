//===- ByteLevelBPE.cpp - Hugging Face tokenizer.json, byte-level BPE -----===//
//
// The tokenizer of GPT-2, Llama 3 and Qwen2 as Hugging Face's tokenizer.json
// describes it (docs/Tokenizers.md):
//   1. added tokens (special or not) are split out of the text first;
//   2. the normalizer (none or NFC, through ICU) runs on the rest;
//   3. the pre-tokenizers cut it into pieces: a Split with the file's own
//      regex (through PCRE2, Unicode properties on) and/or ByteLevel, which
//      may add a prefix space and split with GPT-2's regex;
//   4. each piece's bytes become characters of the byte-level alphabet, one
//      symbol each, and the lowest-ranked adjacent pair in `merges` is merged
//      until no pair has a rank; the symbols are vocabulary entries.
// Decoding maps each token's characters back to bytes.
//
//===----------------------------------------------------------------------===//

#include "TokenizerImpl.h"

#include "blockc/Support/Error.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>

#include <array>
#include <climits>
#include <functional>

using namespace blockc;
using llvm::json::Array;
using llvm::json::Object;
using llvm::json::Value;

uint32_t blockc::byteLevelCodePoint(uint8_t byte) {
  auto printable = [](unsigned b) {
    return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
  };
  if (printable(byte))
    return byte;
  uint32_t n = 0;
  for (unsigned b = 0; b < byte; ++b)
    n += !printable(b);
  return 256 + n;
}

namespace {

/// GPT-2's split, which ByteLevel applies when `use_regex` is on.
constexpr llvm::StringLiteral kGPT2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

/// Hugging Face's regexes run on Oniguruma, whose \s is Unicode's White_Space
/// property; PCRE2's leaves out U+0085 (NEL). Spell it in.
std::string withOnigurumaWhitespace(llvm::StringRef pattern) {
  std::string out;
  bool inClass = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      char d = pattern[++i];
      if (d == 's')
        out += inClass ? R"(\s\x{85})" : R"([\s\x{85}])";
      else if (d == 'S' && !inClass)
        out += R"([^\s\x{85}])";
      else
        out += {c, d};
      continue;
    }
    out += c;
    if (!inClass && c == '[') {
      inClass = true;
      // A ']' right after '[' or '[^' is a literal.
      if (i + 1 < pattern.size() && pattern[i + 1] == '^')
        out += pattern[++i];
      if (i + 1 < pattern.size() && pattern[i + 1] == ']')
        out += pattern[++i];
    } else if (inClass && c == ']') {
      inClass = false;
    }
  }
  return out;
}

/// A compiled split regex (UTF-8, Unicode properties).
class SplitRegex {
public:
  static llvm::Expected<SplitRegex> compile(llvm::StringRef pattern) {
    std::string source = withOnigurumaWhitespace(pattern);
    int code = 0;
    PCRE2_SIZE offset = 0;
    pcre2_code *re = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(source.data()),
                                   source.size(), PCRE2_UTF | PCRE2_UCP, &code,
                                   &offset, nullptr);
    if (!re) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(code, message, sizeof(message));
      return makeError("the split regex '" + pattern + "' does not compile: " +
                       reinterpret_cast<const char *>(message));
    }
    // The JIT is an optimisation only; the interpreter runs without it.
    pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
    SplitRegex regex;
    regex.code.reset(re, pcre2_code_free);
    return regex;
  }

  /// Appends the pieces of `text` (valid UTF-8): each match and each run of
  /// text between matches (Hugging Face's "Isolated" behaviour).
  void split(llvm::StringRef text, std::vector<std::string> &pieces) const {
    std::unique_ptr<pcre2_match_data, void (*)(pcre2_match_data *)> match(
        pcre2_match_data_create_from_pattern(code.get(), nullptr),
        pcre2_match_data_free);
    auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    size_t last = 0, start = 0;
    while (start < text.size()) {
      int rc = pcre2_match(code.get(), subject, text.size(), start,
                           PCRE2_NO_UTF_CHECK, match.get(), nullptr);
      if (rc < 0)
        break;
      PCRE2_SIZE *ovector = pcre2_get_ovector_pointer(match.get());
      size_t begin = ovector[0], end = ovector[1];
      if (begin > last)
        pieces.push_back(text.slice(last, begin).str());
      if (end > begin) {
        pieces.push_back(text.slice(begin, end).str());
        last = start = end;
      } else {
        // An empty match: go on from the next character.
        last = begin;
        start = end;
        utf8::next(text, start);
      }
    }
    if (last < text.size())
      pieces.push_back(text.drop_front(last).str());
  }

private:
  std::shared_ptr<pcre2_code> code;
};

/// One pre-tokenizer step: a Split by the file's regex, or ByteLevel.
struct PreTokenizer {
  std::optional<SplitRegex> regex;
  bool prefixSpace = false;
};

/// Unicode normalization form C through ICU.
llvm::Expected<std::string> toNFC(llvm::StringRef text) {
  if (llvm::all_of(text, [](char c) { return uint8_t(c) < 0x80; }))
    return text.str();
  UErrorCode status = U_ZERO_ERROR;
  const UNormalizer2 *nfc = unorm2_getNFCInstance(&status);
  std::vector<UChar> in(text.size() + 1), out;
  int32_t inLength = 0;
  if (U_SUCCESS(status))
    u_strFromUTF8(in.data(), in.size(), &inLength, text.data(), text.size(),
                  &status);
  int32_t outLength = 0;
  for (int attempt = 0; attempt < 2 && U_SUCCESS(status); ++attempt) {
    out.resize(std::max<size_t>(outLength, 2 * inLength + 16));
    outLength = unorm2_normalize(nfc, in.data(), inLength, out.data(),
                                 out.size(), &status);
    if (status == U_BUFFER_OVERFLOW_ERROR)
      status = U_ZERO_ERROR;
    else
      break;
  }
  std::string result(4 * outLength + 1, '\0');
  int32_t resultLength = 0;
  if (U_SUCCESS(status))
    u_strToUTF8(result.data(), result.size(), &resultLength, out.data(),
                outLength, &status);
  if (U_FAILURE(status))
    return makeError(llvm::Twine("NFC normalization failed: ") +
                     u_errorName(status));
  result.resize(resultLength);
  return result;
}

struct AddedToken {
  std::string content;
  int32_t id;
};

class ByteLevelBPETokenizer : public Tokenizer {
public:
  llvm::Error parse(const Object &root, llvm::StringRef path,
                    bool &notByteLevel);
  void readSpecialTokens(const Object &root, llvm::StringRef dir);

  llvm::Expected<std::vector<int32_t>> encode(llvm::StringRef text,
                                              bool addBos) const override;
  std::string decode(llvm::ArrayRef<int32_t> ids) const override {
    return utf8::sanitize(bytesOf(ids));
  }
  std::string decodeComplete(llvm::ArrayRef<int32_t> ids) const override {
    std::string bytes = bytesOf(ids);
    return utf8::sanitize(
        llvm::StringRef(bytes).drop_back(utf8::incompleteTailLength(bytes)));
  }
  std::optional<int32_t> bosId() const override { return bos; }
  std::optional<int32_t> eosId() const override { return eos; }
  int64_t vocabSize() const override { return tokenBytes.size(); }
  bool addsBosByDefault() const override { return addBos && bos; }
  llvm::StringRef kind() const override { return "byte-level-bpe"; }

private:
  std::string bytesOf(llvm::ArrayRef<int32_t> ids) const {
    std::string bytes;
    for (int32_t id : ids)
      if (id >= 0 && id < vocabSize())
        bytes += tokenBytes[id];
    return bytes;
  }
  std::optional<int32_t> lookup(llvm::StringRef token) const {
    for (const AddedToken &t : added)
      if (t.content == token)
        return t.id;
    auto it = vocab.find(token);
    if (it == vocab.end())
      return std::nullopt;
    return it->second;
  }
  llvm::Error bpe(llvm::StringRef piece, std::vector<int32_t> &ids) const;

  llvm::StringMap<int32_t> vocab;
  /// (left id, right id) -> (rank, merged id).
  llvm::DenseMap<uint64_t, std::pair<uint32_t, int32_t>> merges;
  /// Added tokens, longest first (the longest match wins).
  std::vector<AddedToken> added;
  /// What each id decodes to: its bytes; nothing for special tokens.
  std::vector<std::string> tokenBytes;
  /// The id of each byte's one-character token, -1 when there is none.
  std::array<int32_t, 256> byteIds;
  std::vector<PreTokenizer> preTokenizers;
  std::optional<int32_t> unk, bos, eos;
  bool nfc = false, ignoreMerges = false, addBos = false;
  /// The BOS a TemplateProcessing post-processor puts in front of text, and
  /// the EOS it puts after it.
  std::optional<int32_t> templateBos, templateEos;
};

uint64_t pairKey(int32_t left, int32_t right) {
  return (uint64_t(uint32_t(left)) << 32) | uint32_t(right);
}

/// Whether `v` (a pre-tokenizer) is or holds a ByteLevel pre-tokenizer.
bool hasByteLevel(const Value *v) {
  const Object *o = v ? v->getAsObject() : nullptr;
  if (!o)
    return false;
  if (o->getString("type") == "ByteLevel")
    return true;
  if (const Array *steps = o->getArray("pretokenizers"))
    return llvm::any_of(*steps,
                        [](const Value &s) { return hasByteLevel(&s); });
  return false;
}

/// An optional string field that must be empty or null.
bool isEmptyString(const Object &o, llvm::StringRef key) {
  const Value *v = o.get(key);
  return !v || v->getAsNull() || v->getAsString() == "";
}

llvm::Error ByteLevelBPETokenizer::parse(const Object &root,
                                         llvm::StringRef path,
                                         bool &notByteLevel) {
  auto fail = [&](const llvm::Twine &message) {
    return makeError(path + ": " + message);
  };
  const Object *model = root.getObject("model");
  if (!model)
    return fail("no \"model\" object");
  std::optional<llvm::StringRef> type = model->getString("type");
  if (type != "BPE") {
    notByteLevel = true;
    return fail("model type '" + type.value_or("") +
                "' is not supported (byte-level BPE only)");
  }
  if (!hasByteLevel(root.get("pre_tokenizer"))) {
    notByteLevel = true;
    return fail("not a byte-level BPE tokenizer (no ByteLevel pre-tokenizer)");
  }
  if (!isEmptyString(*model, "continuing_subword_prefix") ||
      !isEmptyString(*model, "end_of_word_suffix"))
    return fail("BPE with a subword prefix or suffix is not supported");
  ignoreMerges = model->getBoolean("ignore_merges").value_or(false);

  // The vocabulary and the added tokens give the ids.
  const Object *vocabObject = model->getObject("vocab");
  if (!vocabObject)
    return fail("the model has no \"vocab\" object");
  int64_t size = 0;
  for (const auto &[token, id] : *vocabObject) {
    std::optional<int64_t> value = id.getAsInteger();
    if (!value || *value < 0 || *value > INT32_MAX)
      return fail("vocabulary entry '" + token.str() + "' has no valid id");
    vocab[token.str()] = *value;
    size = std::max(size, *value + 1);
  }
  if (const Array *addedTokens = root.getArray("added_tokens")) {
    for (const Value &v : *addedTokens) {
      const Object *t = v.getAsObject();
      std::optional<int64_t> id = t ? t->getInteger("id") : std::nullopt;
      std::optional<llvm::StringRef> content =
          t ? t->getString("content") : std::nullopt;
      if (!id || *id < 0 || *id > INT32_MAX || !content || content->empty())
        return fail("an added token without a valid id and content");
      added.push_back({content->str(), int32_t(*id)});
      size = std::max(size, *id + 1);
    }
  }
  // Ids are dense in published files; a stray large one would make the id
  // table huge (a few gaps are let through).
  int64_t count = vocab.size() + added.size();
  if (size > 2 * count + 1024)
    return fail("token id " + llvm::Twine(size - 1) + " is far beyond the " +
                llvm::Twine(count) +
                " tokens of the vocabulary and the added tokens");
  llvm::sort(added, [](const AddedToken &a, const AddedToken &b) {
    return std::make_pair(b.content.size(), a.id) <
           std::make_pair(a.content.size(), b.id);
  });

  // What each id decodes to.
  llvm::DenseMap<uint32_t, uint8_t> byteOf;
  for (unsigned b = 0; b < 256; ++b)
    byteOf[byteLevelCodePoint(b)] = b;
  tokenBytes.assign(size, "");
  for (const auto &entry : vocab) {
    std::string &bytes = tokenBytes[entry.second];
    llvm::StringRef token = entry.first();
    for (size_t pos = 0; pos < token.size();) {
      uint32_t cp = utf8::next(token, pos);
      auto it = byteOf.find(cp);
      if (it != byteOf.end())
        bytes += char(it->second);
      else
        utf8::append(bytes, cp);
    }
  }
  if (const Array *addedTokens = root.getArray("added_tokens")) {
    for (const Value &v : *addedTokens) {
      const Object *t = v.getAsObject();
      bool special = t->getBoolean("special").value_or(false);
      tokenBytes[*t->getInteger("id")] =
          special ? "" : t->getString("content")->str();
    }
  }
  for (unsigned b = 0; b < 256; ++b) {
    std::string character;
    utf8::append(character, byteLevelCodePoint(b));
    auto it = vocab.find(character);
    byteIds[b] = it == vocab.end() ? -1 : it->second;
  }

  // Merges: "left right" strings, or [left, right] pairs in newer files.
  const Array *mergeList = model->getArray("merges");
  if (!mergeList)
    return fail("the model has no \"merges\" list");
  for (const auto &[rank, v] : llvm::enumerate(*mergeList)) {
    llvm::StringRef left, right;
    if (std::optional<llvm::StringRef> s = v.getAsString()) {
      std::tie(left, right) = s->split(' ');
    } else if (const Array *pair = v.getAsArray(); pair && pair->size() == 2 &&
                                                   (*pair)[0].getAsString() &&
                                                   (*pair)[1].getAsString()) {
      left = *(*pair)[0].getAsString();
      right = *(*pair)[1].getAsString();
    } else {
      return fail("merge " + llvm::Twine(rank) +
                  " is neither \"a b\" nor [\"a\", \"b\"]");
    }
    auto l = vocab.find(left), r = vocab.find(right),
         m = vocab.find((left + right).str());
    if (l == vocab.end() || r == vocab.end() || m == vocab.end())
      return fail("merge '" + left + " " + right +
                  "' names a token that is not in the vocabulary");
    merges.try_emplace(pairKey(l->second, r->second), rank, m->second);
  }
  if (std::optional<llvm::StringRef> unkToken = model->getString("unk_token"))
    unk = lookup(*unkToken);

  // The normalizer: none or NFC (Qwen2).
  if (const Object *normalizer = root.getObject("normalizer")) {
    std::optional<llvm::StringRef> kind = normalizer->getString("type");
    const Array *sequence = normalizer->getArray("normalizers");
    if (kind == "NFC")
      nfc = true;
    else if (!(kind == "Sequence" && sequence && sequence->empty()))
      return fail("normalizer '" + kind.value_or("") +
                  "' is not supported (none or NFC only)");
  }

  // The pre-tokenizers, in order.
  const Object *pre = root.getObject("pre_tokenizer");
  std::vector<const Object *> steps;
  if (const Array *list = pre->getArray("pretokenizers")) {
    for (const Value &v : *list)
      if (const Object *o = v.getAsObject())
        steps.push_back(o);
  } else {
    steps.push_back(pre);
  }
  for (const Object *step : steps) {
    llvm::StringRef kind = step->getString("type").value_or("");
    PreTokenizer p;
    if (kind == "ByteLevel") {
      p.prefixSpace = step->getBoolean("add_prefix_space").value_or(false);
      if (step->getBoolean("use_regex").value_or(true)) {
        auto regex = SplitRegex::compile(kGPT2Pattern);
        if (!regex)
          return regex.takeError();
        p.regex = *regex;
      }
    } else if (kind == "Split") {
      const Object *pattern = step->getObject("pattern");
      std::optional<llvm::StringRef> source =
          pattern ? pattern->getString("Regex") : std::nullopt;
      if (!source)
        return fail("only Split pre-tokenizers with a \"Regex\" pattern are "
                    "supported");
      if (step->getString("behavior") != "Isolated" ||
          step->getBoolean("invert").value_or(false))
        return fail("only Split pre-tokenizers with the Isolated behavior "
                    "are supported");
      auto regex = SplitRegex::compile(*source);
      if (!regex)
        return fail(llvm::toString(regex.takeError()));
      p.regex = *regex;
    } else {
      return fail("pre-tokenizer '" + kind + "' is not supported");
    }
    preTokenizers.push_back(std::move(p));
  }

  // BOS and EOS of a TemplateProcessing post-processor (Llama 3), possibly
  // inside a Sequence.
  std::function<void(const Object *)> readTemplate = [&](const Object *o) {
    if (!o)
      return;
    if (const Array *list = o->getArray("processors"))
      for (const Value &v : *list)
        readTemplate(v.getAsObject());
    if (o->getString("type") != "TemplateProcessing")
      return;
    const Array *single = o->getArray("single");
    const Object *special = o->getObject("special_tokens");
    if (!single || !special)
      return;
    bool seenText = false;
    for (const Value &v : *single) {
      const Object *item = v.getAsObject();
      if (!item)
        continue;
      if (item->getObject("Sequence")) {
        seenText = true;
        continue;
      }
      const Object *token = item->getObject("SpecialToken");
      std::optional<llvm::StringRef> name =
          token ? token->getString("id") : std::nullopt;
      const Object *entry = name ? special->getObject(*name) : nullptr;
      const Array *ids = entry ? entry->getArray("ids") : nullptr;
      if (!ids || ids->empty() || !(*ids)[0].getAsInteger())
        continue;
      int32_t id = *(*ids)[0].getAsInteger();
      if (!seenText && !templateBos)
        templateBos = id;
      if (seenText && !templateEos)
        templateEos = id;
    }
  };
  readTemplate(root.getObject("post_processor"));
  return llvm::Error::success();
}

/// A token named in tokenizer_config.json: a string, {"content": ...} or
/// null.
std::optional<std::optional<std::string>> configToken(const Object *config,
                                                      llvm::StringRef key) {
  const Value *v = config ? config->get(key) : nullptr;
  if (!v)
    return std::nullopt;
  if (std::optional<llvm::StringRef> s = v->getAsString())
    return std::optional<std::string>(s->str());
  if (const Object *o = v->getAsObject())
    if (std::optional<llvm::StringRef> s = o->getString("content"))
      return std::optional<std::string>(s->str());
  return std::optional<std::string>();
}

/// An id in config.json: a number, the first of a list, or null.
std::optional<std::optional<int32_t>> configId(const Object *config,
                                               llvm::StringRef key) {
  const Value *v = config ? config->get(key) : nullptr;
  if (!v)
    return std::nullopt;
  if (const Array *list = v->getAsArray())
    v = list->empty() ? nullptr : &(*list)[0];
  if (std::optional<int64_t> id = v ? v->getAsInteger() : std::nullopt)
    return std::optional<int32_t>(*id);
  return std::optional<int32_t>();
}

std::optional<Value> readJSONFile(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return std::nullopt;
  auto value = llvm::json::parse((*buffer)->getBuffer());
  if (!value) {
    llvm::consumeError(value.takeError());
    return std::nullopt;
  }
  return std::move(*value);
}

void ByteLevelBPETokenizer::readSpecialTokens(const Object &root,
                                              llvm::StringRef dir) {
  // tokenizer_config.json names the tokens, config.json gives ids, and the
  // post-processor's template is the last word.
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, "tokenizer_config.json");
  std::optional<Value> tokenizerConfig = readJSONFile(path);
  path = dir;
  llvm::sys::path::append(path, "config.json");
  std::optional<Value> modelConfig = readJSONFile(path);
  const Object *tc = tokenizerConfig ? tokenizerConfig->getAsObject() : nullptr;
  const Object *mc = modelConfig ? modelConfig->getAsObject() : nullptr;

  auto choose = [&](llvm::StringRef tokenKey, llvm::StringRef idKey,
                    std::optional<int32_t> fromTemplate) {
    if (auto token = configToken(tc, tokenKey))
      return *token ? lookup(**token) : std::nullopt;
    if (auto id = configId(mc, idKey)) {
      if (*id && **id >= 0 && **id < vocabSize())
        return *id;
      return std::optional<int32_t>();
    }
    return fromTemplate;
  };
  bos = choose("bos_token", "bos_token_id", templateBos);
  eos = choose("eos_token", "eos_token_id", templateEos);
  std::optional<bool> addBosToken =
      tc ? tc->getBoolean("add_bos_token") : std::nullopt;
  addBos = addBosToken.value_or(templateBos.has_value());
}

llvm::Error ByteLevelBPETokenizer::bpe(llvm::StringRef piece,
                                       std::vector<int32_t> &ids) const {
  if (ignoreMerges) {
    std::string word;
    for (char c : piece)
      utf8::append(word, byteLevelCodePoint(c));
    auto it = vocab.find(word);
    if (it != vocab.end()) {
      ids.push_back(it->second);
      return llvm::Error::success();
    }
  }
  std::vector<int32_t> symbols;
  for (char c : piece) {
    int32_t id = byteIds[uint8_t(c)];
    if (id < 0 && !unk)
      return makeError("the vocabulary has no token for byte " +
                       llvm::utohexstr(uint8_t(c), false, 2) +
                       " and no unknown token");
    symbols.push_back(id < 0 ? *unk : id);
  }
  // The rank of each adjacent pair; merge the lowest, leftmost first.
  constexpr uint32_t kNone = UINT32_MAX;
  auto rankOf = [&](size_t i) {
    auto it = merges.find(pairKey(symbols[i], symbols[i + 1]));
    return it == merges.end() ? kNone : it->second.first;
  };
  std::vector<uint32_t> ranks;
  for (size_t i = 0; i + 1 < symbols.size(); ++i)
    ranks.push_back(rankOf(i));
  while (!ranks.empty()) {
    size_t best = 0;
    for (size_t i = 1; i < ranks.size(); ++i)
      if (ranks[i] < ranks[best])
        best = i;
    if (ranks[best] == kNone)
      break;
    symbols[best] =
        merges.find(pairKey(symbols[best], symbols[best + 1]))->second.second;
    symbols.erase(symbols.begin() + best + 1);
    ranks.erase(ranks.begin() + best);
    if (best < ranks.size())
      ranks[best] = rankOf(best);
    if (best > 0)
      ranks[best - 1] = rankOf(best - 1);
  }
  ids.insert(ids.end(), symbols.begin(), symbols.end());
  return llvm::Error::success();
}

llvm::Expected<std::vector<int32_t>>
ByteLevelBPETokenizer::encode(llvm::StringRef text, bool withBos) const {
  size_t bad = 0;
  if (!llvm::json::isUTF8(text, &bad))
    return makeError("the text is not valid UTF-8 (byte " + llvm::Twine(bad) +
                     ")");
  std::vector<int32_t> ids;
  if (withBos && bos)
    ids.push_back(*bos);
  auto encodeText = [&](llvm::StringRef segment) -> llvm::Error {
    if (segment.empty())
      return llvm::Error::success();
    std::vector<std::string> pieces{segment.str()};
    if (nfc) {
      auto normalized = toNFC(segment);
      if (!normalized)
        return normalized.takeError();
      pieces = {std::move(*normalized)};
    }
    for (const PreTokenizer &p : preTokenizers) {
      std::vector<std::string> next;
      for (std::string &piece : pieces) {
        if (p.prefixSpace && !llvm::StringRef(piece).starts_with(" "))
          piece.insert(0, " ");
        if (p.regex)
          p.regex->split(piece, next);
        else
          next.push_back(std::move(piece));
      }
      pieces = std::move(next);
    }
    for (const std::string &piece : pieces)
      if (llvm::Error error = bpe(piece, ids))
        return error;
    return llvm::Error::success();
  };
  // Added tokens first: the leftmost, and of those the longest, match.
  size_t start = 0;
  for (size_t pos = 0; pos < text.size();) {
    const AddedToken *match = nullptr;
    for (const AddedToken &t : added)
      if (text.drop_front(pos).starts_with(t.content)) {
        match = &t;
        break;
      }
    if (!match) {
      ++pos;
      continue;
    }
    if (llvm::Error error = encodeText(text.slice(start, pos)))
      return std::move(error);
    ids.push_back(match->id);
    pos += match->content.size();
    start = pos;
  }
  if (llvm::Error error = encodeText(text.drop_front(start)))
    return std::move(error);
  return ids;
}

} // namespace

llvm::Expected<std::unique_ptr<Tokenizer>>
detail::loadByteLevelBPE(llvm::StringRef path, bool &notByteLevel) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return makeError(path + ": " + buffer.getError().message());
  auto json = llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return makeError(path +
                     ": malformed JSON: " + llvm::toString(json.takeError()));
  const Object *root = json->getAsObject();
  if (!root)
    return makeError(path + ": not a JSON object");
  auto tokenizer = std::make_unique<ByteLevelBPETokenizer>();
  if (llvm::Error error = tokenizer->parse(*root, path, notByteLevel))
    return std::move(error);
  tokenizer->readSpecialTokens(*root, llvm::sys::path::parent_path(path));
  return std::unique_ptr<Tokenizer>(std::move(tokenizer));
}
