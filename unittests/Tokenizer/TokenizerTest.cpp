//===- TokenizerTest.cpp - Byte-level BPE, UTF-8, streaming ---------------===//
//
// Small hand-made tokenizer.json files whose ids follow from the merge
// ranks by hand; the trained files and SentencePiece models are checked
// against reference implementations by test/Tokenizer.
//
//===----------------------------------------------------------------------===//

#include "blockc/Tokenizer/Tokenizer.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <set>

using namespace blockc;
using llvm::json::Array;
using llvm::json::Object;
using llvm::json::Value;

namespace {

/// The byte-level spelling of `text`.
std::string alphabet(llvm::StringRef text) {
  std::string out;
  for (char c : text)
    utf8::append(out, byteLevelCodePoint(c));
  return out;
}

/// A folder for one test's files, removed at the end.
class TempDir {
public:
  TempDir() {
    llvm::sys::fs::createUniqueDirectory("blockc-tokenizer-test", path);
  }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  void write(llvm::StringRef name, const Value &value) const {
    llvm::SmallString<256> file(path);
    llvm::sys::path::append(file, name);
    std::error_code ec;
    llvm::raw_fd_ostream os(file, ec);
    os << value;
  }
  llvm::SmallString<128> path;
};

/// A GPT-2-style tokenizer.json: the 256 bytes as ids 0-255, then one token
/// per merge in order; `merges` are spelt in plain text ("he" "llo").
Object bpeJSON(llvm::ArrayRef<std::pair<std::string, std::string>> merges,
               bool listForm = false) {
  Object vocab;
  for (unsigned b = 0; b < 256; ++b)
    vocab[alphabet(std::string(1, char(b)))] = b;
  Array mergeList;
  for (const auto &[left, right] : merges) {
    std::string l = alphabet(left), r = alphabet(right);
    if (!vocab.get(l + r))
      vocab[l + r] = int64_t(vocab.size());
    if (listForm)
      mergeList.push_back(Array{l, r});
    else
      mergeList.push_back(l + " " + r);
  }
  return Object{{"added_tokens", Array{}},
                {"normalizer", nullptr},
                {"pre_tokenizer",
                 Object{{"type", "ByteLevel"}, {"add_prefix_space", false}}},
                {"model", Object{{"type", "BPE"},
                                 {"vocab", std::move(vocab)},
                                 {"merges", std::move(mergeList)}}}};
}

std::unique_ptr<Tokenizer> load(const TempDir &dir) {
  auto t = Tokenizer::load(dir.path);
  if (!t) {
    ADD_FAILURE() << llvm::toString(t.takeError());
    return nullptr;
  }
  return std::move(*t);
}

std::vector<int32_t> encode(const Tokenizer &t, llvm::StringRef text,
                            bool addBos = false) {
  auto ids = t.encode(text, addBos);
  if (!ids) {
    ADD_FAILURE() << llvm::toString(ids.takeError());
    return {};
  }
  return *ids;
}

using Ids = std::vector<int32_t>;

TEST(TokenizerTest, ByteLevelAlphabet) {
  EXPECT_EQ(byteLevelCodePoint('A'), uint32_t('A'));
  EXPECT_EQ(byteLevelCodePoint(' '), 0x120u);  // Ġ
  EXPECT_EQ(byteLevelCodePoint('\n'), 0x10Au); // Ċ
  EXPECT_EQ(byteLevelCodePoint(0), 0x100u);
  EXPECT_EQ(byteLevelCodePoint(0xAD), 0x143u); // the soft hyphen: Ń
  EXPECT_EQ(byteLevelCodePoint(0xE9), 0xE9u);
  std::set<uint32_t> distinct;
  for (unsigned b = 0; b < 256; ++b)
    distinct.insert(byteLevelCodePoint(b));
  EXPECT_EQ(distinct.size(), 256u);
}

TEST(TokenizerTest, SanitizeReplacesMaximalSubparts) {
  // As Python's bytes.decode("utf-8", "replace") does.
  EXPECT_EQ(utf8::sanitize("a\xE2\x82"), "a\xEF\xBF\xBD");
  EXPECT_EQ(utf8::sanitize("\xE2\x82"
                           "A"),
            "\xEF\xBF\xBD"
            "A");
  EXPECT_EQ(utf8::sanitize("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(utf8::sanitize("\xED\xA0\x80"),
            "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"); // a surrogate
  EXPECT_EQ(utf8::sanitize("\xF0\x9F\x98\x80"), "\xF0\x9F\x98\x80");
  EXPECT_EQ(utf8::sanitize("\xF0\x9F\x98"
                           "b"),
            "\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(utf8::sanitize("\xFF"), "\xEF\xBF\xBD");
}

TEST(TokenizerTest, IncompleteTail) {
  EXPECT_EQ(utf8::incompleteTailLength(""), 0u);
  EXPECT_EQ(utf8::incompleteTailLength("ab"), 0u);
  EXPECT_EQ(utf8::incompleteTailLength("a\xF0"), 1u);
  EXPECT_EQ(utf8::incompleteTailLength("a\xF0\x9F"), 2u);
  EXPECT_EQ(utf8::incompleteTailLength("a\xF0\x9F\x98"), 3u);
  EXPECT_EQ(utf8::incompleteTailLength("a\xF0\x9F\x98\x80"), 0u);
  EXPECT_EQ(utf8::incompleteTailLength("\xC3"), 1u);
  // Bytes that can never become a character are not held back.
  EXPECT_EQ(utf8::incompleteTailLength("\xE0\x80"), 0u);
  EXPECT_EQ(utf8::incompleteTailLength("a\x80"), 0u);
  EXPECT_EQ(utf8::incompleteTailLength("\xFF"), 0u);
}

/// One id per byte: decoding is sanitising.
class ByteTokenizer : public Tokenizer {
public:
  llvm::Expected<std::vector<int32_t>> encode(llvm::StringRef text,
                                              bool) const override {
    return std::vector<int32_t>(text.bytes_begin(), text.bytes_end());
  }
  std::string decode(llvm::ArrayRef<int32_t> ids) const override {
    return utf8::sanitize(bytes(ids));
  }
  std::string decodeComplete(llvm::ArrayRef<int32_t> ids) const override {
    std::string b = bytes(ids);
    return utf8::sanitize(
        llvm::StringRef(b).drop_back(utf8::incompleteTailLength(b)));
  }
  std::optional<int32_t> bosId() const override { return std::nullopt; }
  std::optional<int32_t> eosId() const override { return std::nullopt; }
  int64_t vocabSize() const override { return 256; }
  bool addsBosByDefault() const override { return false; }
  llvm::StringRef kind() const override { return "bytes"; }

private:
  static std::string bytes(llvm::ArrayRef<int32_t> ids) {
    return std::string(ids.begin(), ids.end());
  }
};

TEST(TokenizerTest, StreamingNeverSplitsACharacter) {
  ByteTokenizer t;
  StreamingDecoder d(t);
  std::vector<std::string> chunks;
  for (uint8_t b : llvm::StringRef("a\xF0\x9F\x98\x80\xC3\xA9!"))
    chunks.push_back(d.push(b));
  EXPECT_EQ(chunks,
            (std::vector<std::string>{"a", "", "", "", "\xF0\x9F\x98\x80", "",
                                      "\xC3\xA9", "!"}));
  EXPECT_EQ(d.finish(), "");
}

TEST(TokenizerTest, StreamingFinishFlushesACutOffCharacter) {
  ByteTokenizer t;
  StreamingDecoder d(t);
  EXPECT_EQ(d.push('x'), "x");
  EXPECT_EQ(d.push(0xE2), "");
  EXPECT_EQ(d.push(0x82), "");
  EXPECT_EQ(d.finish(), "\xEF\xBF\xBD");
  // An invalid byte is printed (as U+FFFD) at once.
  StreamingDecoder e(t);
  EXPECT_EQ(e.push(0xFF), "\xEF\xBF\xBD");
}

TEST(TokenizerTest, StreamingAfterAPrompt) {
  ByteTokenizer t;
  StreamingDecoder d(t);
  d.prime({'h', 'i', 0xC3});
  EXPECT_EQ(d.push(0xA9), "\xC3\xA9");
  EXPECT_EQ(d.push('!'), "!");
}

TEST(TokenizerTest, StreamingALongText) {
  // Each step decodes only the ids since the last whole character, so a
  // long stream takes linear time (re-decoding everything each step would
  // take minutes here).
  ByteTokenizer t;
  StreamingDecoder d(t);
  std::string text, streamed;
  for (int i = 0; i < 50000; ++i)
    text += i % 7 == 0 ? "\xF0\x9F\x98\x80" : i % 3 == 0 ? "\xC3\xA9" : "ab";
  for (uint8_t b : text)
    streamed += d.push(b);
  streamed += d.finish();
  EXPECT_EQ(streamed, text);
}

/// Words of a leading space each, the first word's space dropped, as
/// SentencePiece decodes.
class WordTokenizer : public ByteTokenizer {
public:
  std::string decode(llvm::ArrayRef<int32_t> ids) const override {
    std::string text;
    for (int32_t id : ids)
      text += " w" + std::to_string(id);
    return text.empty() ? text : text.substr(1);
  }
  std::string decodeComplete(llvm::ArrayRef<int32_t> ids) const override {
    return decode(ids);
  }
};

TEST(TokenizerTest, StreamingKeepsTheSpacesBetweenWords) {
  WordTokenizer t;
  StreamingDecoder d(t);
  EXPECT_EQ(d.push(1), "w1");
  EXPECT_EQ(d.push(2), " w2");
  EXPECT_EQ(d.push(3), " w3");
  StreamingDecoder primed(t);
  primed.prime({1});
  EXPECT_EQ(primed.push(2), " w2");
}

TEST(TokenizerTest, MergesByRank) {
  TempDir dir;
  // Ids 256.. in this order: lo, el, he, hel.
  dir.write("tokenizer.json",
            bpeJSON({{"l", "o"}, {"e", "l"}, {"h", "e"}, {"he", "l"}}));
  auto t = load(dir);
  ASSERT_TRUE(t);
  // "elo": (l,o) ranks before (e,l).
  EXPECT_EQ(encode(*t, "elo"), (Ids{'e', 256}));
  // "hel": (e,l) ranks before (h,e), and no merge joins h and el.
  EXPECT_EQ(encode(*t, "hel"), (Ids{'h', 257}));
  EXPECT_EQ(t->decode({'h', 257}), "hel");
  EXPECT_EQ(t->vocabSize(), 260);
  EXPECT_EQ(t->kind(), "byte-level-bpe");
}

TEST(TokenizerTest, MergesInListFormAndSpaces) {
  TempDir dir;
  dir.write(
      "tokenizer.json",
      bpeJSON(
          {{"h", "e"}, {"l", "l"}, {"he", "ll"}, {"hell", "o"}, {" ", "hello"}},
          /*listForm=*/true));
  auto t = load(dir);
  ASSERT_TRUE(t);
  // GPT-2's split keeps the space with the word after it.
  EXPECT_EQ(encode(*t, "hello hello"), (Ids{259, 260}));
  EXPECT_EQ(encode(*t, "hello  hello"), (Ids{259, ' ', 260}));
  // Equal ranks merge leftmost first.
  EXPECT_EQ(encode(*t, "lll"), (Ids{257, 'l'}));
  EXPECT_EQ(t->decode({259, ' ', 260}), "hello  hello");
}

TEST(TokenizerTest, AddPrefixSpace) {
  TempDir dir;
  Object json = bpeJSON({{"h", "i"}, {" ", "hi"}});
  (*json.getObject("pre_tokenizer"))["add_prefix_space"] = true;
  dir.write("tokenizer.json", Value(std::move(json)));
  auto t = load(dir);
  ASSERT_TRUE(t);
  // A space goes in front of text that does not start with one.
  EXPECT_EQ(encode(*t, "hi"), (Ids{257}));
  EXPECT_EQ(encode(*t, " hi"), (Ids{257}));
  EXPECT_EQ(encode(*t, "hi hi"), (Ids{257, 257}));
}

TEST(TokenizerTest, IgnoreMergesTakesWholeWords) {
  TempDir dir;
  Object json = bpeJSON({{"h", "e"}});
  Object *model = json.getObject("model");
  (*model->getObject("vocab"))[alphabet("hel")] = 257;
  dir.write("tokenizer.json", Value(Object(json)));
  auto t = load(dir);
  ASSERT_TRUE(t);
  EXPECT_EQ(encode(*t, "hel"), (Ids{256, 'l'}));
  (*model)["ignore_merges"] = true;
  dir.write("tokenizer.json", Value(std::move(json)));
  t = load(dir);
  ASSERT_TRUE(t);
  EXPECT_EQ(encode(*t, "hel"), (Ids{257}));
}

TEST(TokenizerTest, AddedTokensAndSpecialTokens) {
  TempDir dir;
  Object json = bpeJSON({});
  json["added_tokens"] = Array{
      Object{{"id", 256}, {"content", "<a>"}, {"special", true}},
      Object{{"id", 257}, {"content", "<ab>"}, {"special", false}},
  };
  dir.write("tokenizer.json", Value(std::move(json)));
  dir.write("config.json",
            Object{{"bos_token_id", 256}, {"eos_token_id", Array{257, 256}}});
  auto t = load(dir);
  ASSERT_TRUE(t);
  // Split out before BPE, the longest match first.
  EXPECT_EQ(encode(*t, "x<ab>y<a>"), (Ids{'x', 257, 'y', 256}));
  EXPECT_EQ(encode(*t, "x", /*addBos=*/true), (Ids{256, 'x'}));
  // Special tokens decode to nothing, other added tokens to their text.
  EXPECT_EQ(t->decode({'x', 257, 'y', 256}), "x<ab>y");
  EXPECT_EQ(t->bosId(), 256);
  EXPECT_EQ(t->eosId(), 257);
  EXPECT_FALSE(t->addsBosByDefault());
  // tokenizer_config.json names them and comes first.
  dir.write("tokenizer_config.json",
            Object{{"bos_token", Object{{"content", "<ab>"}}},
                   {"eos_token", nullptr},
                   {"add_bos_token", true}});
  t = load(dir);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->bosId(), 257);
  EXPECT_EQ(t->eosId(), std::nullopt);
  EXPECT_TRUE(t->addsBosByDefault());
}

TEST(TokenizerTest, EndIds) {
  TempDir dir;
  dir.write("tokenizer.json", Value(bpeJSON({})));
  auto t = load(dir);
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->eosIds().empty());
  // eosId() first, then generation_config.json's and config.json's ids,
  // each once, those outside the vocabulary left out.
  dir.write("tokenizer_config.json", Object{{"eos_token", "a"}});
  dir.write("generation_config.json", Object{{"eos_token_id", Array{5, 'a'}}});
  dir.write("config.json", Object{{"eos_token_id", 999}});
  t = load(dir);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->eosIds().vec(), (Ids{'a', 5}));
  dir.write("config.json", Object{{"eos_token_id", 7}});
  t = load(dir);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->eosIds().vec(), (Ids{'a', 5, 7}));
}

TEST(TokenizerTest, BosFromTheTemplate) {
  TempDir dir;
  Object json = bpeJSON({});
  json["added_tokens"] =
      Array{Object{{"id", 256}, {"content", "<s>"}, {"special", true}}};
  json["post_processor"] = Object{
      {"type", "Sequence"},
      {"processors",
       Array{Object{{"type", "ByteLevel"}},
             Object{{"type", "TemplateProcessing"},
                    {"single",
                     Array{Object{{"SpecialToken", Object{{"id", "<s>"}}}},
                           Object{{"Sequence", Object{{"id", "A"}}}}}},
                    {"special_tokens",
                     Object{{"<s>", Object{{"ids", Array{256}}}}}}}}}};
  dir.write("tokenizer.json", Value(std::move(json)));
  auto t = load(dir);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->bosId(), 256);
  EXPECT_EQ(t->eosId(), std::nullopt);
  EXPECT_TRUE(t->addsBosByDefault());
  EXPECT_EQ(encode(*t, "a", /*addBos=*/true), (Ids{256, 'a'}));
}

TEST(TokenizerTest, SplitRegexAndNFC) {
  TempDir dir;
  Object json = bpeJSON({{"\xC3", "\xA9"}}); // é
  // Qwen2's pre-tokenizer: its own regex (one digit per piece), then the
  // byte-level alphabet; and NFC first.
  json["normalizer"] = Object{{"type", "NFC"}};
  json["pre_tokenizer"] = Object{
      {"type", "Sequence"},
      {"pretokenizers",
       Array{Object{{"type", "Split"},
                    {"pattern", Object{{"Regex", R"(\p{N}|\p{L}+|\s+)"}}},
                    {"behavior", "Isolated"},
                    {"invert", false}},
             Object{{"type", "ByteLevel"}, {"use_regex", false}}}}};
  dir.write("tokenizer.json", Value(std::move(json)));
  auto t = load(dir);
  ASSERT_TRUE(t);
  // e + U+0301 (combining acute) is é after NFC, one token.
  EXPECT_EQ(encode(*t, "e\xCC\x81"), (Ids{256}));
  EXPECT_EQ(encode(*t, "12"), (Ids{'1', '2'}));
}

TEST(TokenizerTest, Errors) {
  TempDir dir;
  auto message = [&] {
    auto t = Tokenizer::load(dir.path);
    return t ? std::string("loaded") : llvm::toString(t.takeError());
  };
  std::string json = (dir.path + "/tokenizer.json").str();
  Object bad = bpeJSON({});
  bad["pre_tokenizer"] = Object{{"type", "Split"},
                                {"pattern", Object{{"Regex", "("}}},
                                {"behavior", "Isolated"}};
  bad["pre_tokenizer"] =
      Object{{"type", "Sequence"},
             {"pretokenizers",
              Array{*bad.get("pre_tokenizer"), Object{{"type", "ByteLevel"}}}}};
  dir.write("tokenizer.json", Value(std::move(bad)));
  EXPECT_EQ(message(), json + ": the split regex '(' does not compile: "
                              "missing closing parenthesis");
  Object merges = bpeJSON({});
  (*merges.getObject("model"))["merges"] = Array{Array{"a"}};
  dir.write("tokenizer.json", Value(std::move(merges)));
  EXPECT_EQ(message(),
            json + ": merge 0 is neither \"a b\" nor [\"a\", \"b\"]");

  Object sparse = bpeJSON({});
  (*sparse.getObject("model")->getObject("vocab"))["xyz"] = 1 << 30;
  dir.write("tokenizer.json", Value(std::move(sparse)));
  EXPECT_EQ(message(), json + ": token id 1073741824 is far beyond the 257 "
                              "tokens of the vocabulary and the added tokens");

  Object noZ = bpeJSON({});
  // The id of z goes to another token.
  noZ.getObject("model")->getObject("vocab")->erase("z");
  (*noZ.getObject("model")->getObject("vocab"))["zz"] = int('z');
  dir.write("tokenizer.json", Value(std::move(noZ)));
  auto withoutZ = load(dir);
  ASSERT_TRUE(withoutZ);
  auto z = withoutZ->encode("az", false);
  ASSERT_FALSE(z);
  EXPECT_EQ(llvm::toString(z.takeError()),
            "the vocabulary has no token for byte 7A and no unknown token");

  dir.write("tokenizer.json", Value(bpeJSON({})));
  auto t = load(dir);
  ASSERT_TRUE(t);
  auto ids = t->encode("a\xFF", false);
  ASSERT_FALSE(ids);
  EXPECT_EQ(llvm::toString(ids.takeError()),
            "the text is not valid UTF-8 (byte 1)");
}

} // namespace
