//===- blockc-tokenize.cpp - a model folder's tokenizer from the shell ----===//
//
//   blockc-tokenize --tokenizer=DIR --encode="text" [--add-bos=true|false]
//   blockc-tokenize --tokenizer=DIR --decode="1,2,3" [--stream]
//   blockc-tokenize --tokenizer=DIR --info
//
// Encodes text to ids or decodes ids to text with the tokenizer of a Hugging
// Face model folder (docs/Tokenizers.md).
//
//===----------------------------------------------------------------------===//

#include "blockc/Tokenizer/Tokenizer.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace blockc;
namespace cl = llvm::cl;

namespace {
cl::OptionCategory category("blockc-tokenize options");
cl::opt<std::string>
    tokenizerDir("tokenizer",
                 cl::desc("Model folder with tokenizer.json (byte-level BPE) "
                          "or tokenizer.model (SentencePiece)"),
                 cl::value_desc("dir"), cl::Required, cl::cat(category));
cl::opt<std::string> encodeText("encode",
                                cl::desc("Print the ids of this text, comma "
                                         "separated"),
                                cl::value_desc("text"), cl::cat(category));
cl::opt<std::string>
    decodeIds("decode", cl::desc("Print the text of these comma-separated ids"),
              cl::value_desc("ids"), cl::cat(category));
cl::opt<cl::boolOrDefault>
    addBos("add-bos",
           cl::desc("With --encode: put BOS in front (default: as the "
                    "model's tokenizer does)"),
           cl::cat(category));
cl::opt<bool> stream("stream",
                     cl::desc("With --decode: decode one id at a time as a "
                              "generator streams, printing each step's new "
                              "text as a JSON string on its own line, then "
                              "what is left at the end"),
                     cl::init(false), cl::cat(category));
cl::opt<bool> info("info",
                   cl::desc("Print the kind, vocabulary size, BOS, EOS, "
                            "whether BOS goes in front by default and the "
                            "ids that end a generated sequence"),
                   cl::init(false), cl::cat(category));

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "blockc-tokenize") << message << "\n";
  return 1;
}

/// `text` as a JSON string; bytes from 0x80 on are copied as they are.
std::string quoted(llvm::StringRef text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (uint8_t(c) < 0x20 || c == 0x7F) {
      out += "\\u00" + llvm::utohexstr(uint8_t(c), /*LowerCase=*/true, 2);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string idOrNone(std::optional<int32_t> id) {
  return id ? std::to_string(*id) : "none";
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "blockc tokenizer: text to ids and back\n");
  int actions = (encodeText.getNumOccurrences() > 0) +
                (decodeIds.getNumOccurrences() > 0) + info;
  if (actions != 1)
    return fail("give exactly one of --encode, --decode and --info");

  auto tokenizer = Tokenizer::load(tokenizerDir);
  if (!tokenizer)
    return fail(llvm::toString(tokenizer.takeError()));
  const Tokenizer &t = **tokenizer;

  if (info) {
    llvm::outs() << "kind: " << t.kind() << "\nvocab-size: " << t.vocabSize()
                 << "\nbos: " << idOrNone(t.bosId())
                 << "\neos: " << idOrNone(t.eosId())
                 << "\nadds-bos: " << (t.addsBosByDefault() ? "yes" : "no")
                 << "\nend-ids: "
                 << llvm::join(llvm::map_range(t.eosIds(),
                                               [](int32_t id) {
                                                 return std::to_string(id);
                                               }),
                               ",")
                 << "\n";
    return 0;
  }

  if (encodeText.getNumOccurrences()) {
    bool bos =
        addBos == cl::BOU_UNSET ? t.addsBosByDefault() : addBos == cl::BOU_TRUE;
    auto ids = t.encode(encodeText, bos);
    if (!ids)
      return fail(llvm::toString(ids.takeError()));
    llvm::outs() << llvm::join(llvm::map_range(*ids,
                                               [](int32_t id) {
                                                 return std::to_string(id);
                                               }),
                               ",")
                 << "\n";
    return 0;
  }

  std::vector<int32_t> ids;
  llvm::SmallVector<llvm::StringRef> fields;
  llvm::StringRef(decodeIds).split(fields, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef field : fields) {
    int64_t id = 0;
    if (field.trim().getAsInteger(10, id))
      return fail("'" + field.trim() + "' is not a token id");
    if (id < 0 || id >= t.vocabSize())
      return fail("token id " + llvm::Twine(id) +
                  " is outside the vocabulary (size " +
                  llvm::Twine(t.vocabSize()) + ")");
    ids.push_back(id);
  }
  if (!stream) {
    llvm::outs() << t.decode(ids) << "\n";
    return 0;
  }
  StreamingDecoder decoder(t);
  for (int32_t id : ids)
    llvm::outs() << quoted(decoder.push(id)) << "\n";
  llvm::outs() << quoted(decoder.finish()) << "\n";
  return 0;
}
