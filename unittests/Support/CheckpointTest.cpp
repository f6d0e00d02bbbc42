//===- CheckpointTest.cpp - Hugging Face model folders --------------------===//
//
// Checkpoint::open on folders written here (a single model.safetensors, or
// shards and model.safetensors.index.json): every tensor is found in its
// shard, weights bind through it without a copy when stored in the
// argument's type (and stay valid after the checkpoint is gone), a folder's
// unused tensors are counted rather than refused, and every error names
// the folder, index or shard and the tensor exactly as blockc-run prints it.
//
//===----------------------------------------------------------------------===//

#include "blockc/Support/Checkpoint.h"
#include "blockc/ExecutionEngine/WeightBinding.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace blockc;

namespace {

/// A tensor to write: `values` as F32 (or BF16, rounded), or raw int64s.
struct Tensor {
  std::string name;
  std::vector<int64_t> shape;
  std::string dtype = "F32";
  float first = 0; // element i = first + i
};

class CheckpointTest : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> path;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("blockc-ckpt", path));
    dir = std::string(path);
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }

  std::string at(llvm::StringRef name) const {
    llvm::SmallString<256> p(dir);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }

  /// Writes `tensors` as the safetensors file `name` in the folder.
  void writeFile(llvm::StringRef name, const std::vector<Tensor> &tensors) {
    std::vector<std::vector<char>> storage;
    std::vector<SafeTensorsEntry> entries;
    for (const Tensor &t : tensors) {
      int64_t n = 1;
      for (int64_t d : t.shape)
        n *= d;
      std::vector<char> bytes;
      for (int64_t i = 0; i < n; ++i) {
        float v = t.first + static_cast<float>(i);
        if (t.dtype == "F32") {
          bytes.insert(bytes.end(), reinterpret_cast<char *>(&v),
                       reinterpret_cast<char *>(&v) + 4);
        } else if (t.dtype == "BF16") {
          uint16_t b = floatToBFloat16(v);
          bytes.insert(bytes.end(), reinterpret_cast<char *>(&b),
                       reinterpret_cast<char *>(&b) + 2);
        } else { // I64
          int64_t k = i;
          bytes.insert(bytes.end(), reinterpret_cast<char *>(&k),
                       reinterpret_cast<char *>(&k) + 8);
        }
      }
      storage.push_back(std::move(bytes));
      entries.push_back({t.name, t.dtype, t.shape, storage.back().data(),
                         storage.back().size()});
    }
    ASSERT_FALSE(static_cast<bool>(
        writeSafeTensors(at(name), entries, {{"format", "pt"}})));
  }

  void writeText(llvm::StringRef name, llvm::StringRef text) {
    std::error_code ec;
    llvm::raw_fd_ostream os(at(name), ec);
    ASSERT_FALSE(ec);
    os << text;
  }

  /// Two shards: embed + layer norm in the first, the rest in the second.
  void writeShardedFolder() {
    writeFile("model-00001-of-00002.safetensors",
              {{"embed", {5, 4}, "F32", 100}, {"norm", {4}, "F32", 1}});
    writeFile("model-00002-of-00002.safetensors",
              {{"proj", {4, 4}, "BF16", 0},
               {"head", {5, 4}, "F32", 0},
               {"position_ids", {1, 6}, "I64"}});
    writeText(Checkpoint::kIndexFile, R"({
  "metadata": {"total_size": 232},
  "weight_map": {
    "embed": "model-00001-of-00002.safetensors",
    "norm": "model-00001-of-00002.safetensors",
    "proj": "model-00002-of-00002.safetensors",
    "head": "model-00002-of-00002.safetensors",
    "position_ids": "model-00002-of-00002.safetensors"
  }
})");
  }

  std::string openError() {
    auto c = Checkpoint::open(dir);
    if (c) {
      ADD_FAILURE() << "expected an error";
      return "";
    }
    return llvm::toString(c.takeError());
  }

  ModelArgument weight(unsigned index, std::string name,
                       llvm::ArrayRef<int64_t> shape, mlir::Type type) {
    ModelArgument a;
    a.index = index;
    a.role = "weight";
    a.weightName = std::move(name);
    a.type = mlir::RankedTensorType::get(shape, type);
    return a;
  }

  ModelSignature signature(std::vector<ModelArgument> weights) {
    ModelSignature sig;
    sig.funcName = "forward";
    auto input = mlir::RankedTensorType::get(
        {mlir::ShapedType::kDynamic, mlir::ShapedType::kDynamic, 4},
        mlir::Float32Type::get(&ctx));
    ModelArgument in;
    in.role = "input";
    in.type = input;
    sig.args.push_back(in);
    for (ModelArgument &w : weights)
      sig.args.push_back(std::move(w));
    sig.resultType = input;
    return sig;
  }

  mlir::Type f32() { return mlir::Float32Type::get(&ctx); }
  mlir::Type bf16() { return mlir::BFloat16Type::get(&ctx); }

  std::string dir;
  mlir::MLIRContext ctx;
};

std::vector<float> values(const HostTensor &t) {
  std::vector<float> v;
  for (int64_t i = 0; i < t.numElements(); ++i)
    v.push_back(
        t.elementType == ElementType::F32
            ? static_cast<const float *>(t.bytes())[i]
            : bfloat16ToFloat(static_cast<const uint16_t *>(t.bytes())[i]));
  return v;
}

TEST_F(CheckpointTest, ShardedFolderFindsEachTensorInItsShard) {
  writeShardedFolder();
  auto c = Checkpoint::open(dir);
  ASSERT_TRUE(static_cast<bool>(c)) << llvm::toString(c.takeError());
  EXPECT_TRUE(c->isFolder());
  EXPECT_TRUE(c->isSharded());
  ASSERT_EQ(c->getFiles().size(), 2u);
  EXPECT_EQ(c->find("norm")->getPath(), at("model-00001-of-00002.safetensors"));
  EXPECT_EQ(c->find("head")->getPath(), at("model-00002-of-00002.safetensors"));
  EXPECT_EQ(c->find("nothing"), nullptr);
  EXPECT_EQ(c->getTensorNames(),
            (std::vector<std::string>{"embed", "head", "norm", "position_ids",
                                      "proj"}));
}

TEST_F(CheckpointTest, SingleFileFolder) {
  writeFile(Checkpoint::kSingleFile, {{"norm", {4}, "F32", 1}});
  auto c = Checkpoint::open(dir);
  ASSERT_TRUE(static_cast<bool>(c)) << llvm::toString(c.takeError());
  EXPECT_TRUE(c->isFolder());
  EXPECT_FALSE(c->isSharded());
  EXPECT_EQ(c->getPath(), dir);
  EXPECT_EQ(c->find("norm")->getPath(), at(Checkpoint::kSingleFile));
}

TEST_F(CheckpointTest, BindsAcrossShardsWithoutCopies) {
  writeShardedFolder();
  auto c = Checkpoint::open(dir);
  ASSERT_TRUE(static_cast<bool>(c)) << llvm::toString(c.takeError());
  ModelSignature sig = signature(
      {weight(1, "norm", {4}, f32()), weight(2, "proj", {4, 4}, bf16()),
       weight(3, "head", {5, 4}, f32()), weight(4, "proj", {4, 4}, f32())});
  auto weights = bindWeights(*c, sig);
  ASSERT_TRUE(static_cast<bool>(weights))
      << llvm::toString(weights.takeError());
  ASSERT_EQ(weights->size(), 4u);
  // Stored in the argument's type: the shard's own bytes.
  for (unsigned i : {0u, 1u, 2u})
    EXPECT_TRUE((*weights)[i].isBorrowed()) << i;
  EXPECT_EQ((*weights)[1].elementType, ElementType::BF16);
  // A bf16 tensor for an f32 argument is widened into a copy.
  EXPECT_FALSE((*weights)[3].isBorrowed());
  EXPECT_EQ((*weights)[3].data.size(), 16u);
  // Two tensors the model does not read (embed, position_ids): allowed.
  EXPECT_EQ(countUnusedTensors(*c, sig), 2u);
  // The borrowed weights keep their shard mapped after the checkpoint goes.
  c = llvm::Expected<Checkpoint>(Checkpoint());
  EXPECT_EQ(values((*weights)[0]), (std::vector<float>{1, 2, 3, 4}));
  std::vector<float> proj = values((*weights)[1]);
  EXPECT_EQ(proj.front(), 0.0f);
  EXPECT_EQ(proj.back(), 15.0f);
  EXPECT_EQ(values((*weights)[2])[19], 19.0f);
  EXPECT_EQ(values((*weights)[3]), proj);
}

TEST_F(CheckpointTest, ShardsAreMappedAndWeightsBorrowTheMapping) {
  // 64 KiB shards: memory-mapped (a few KiB may be read instead).
  writeFile("model-00001-of-00002.safetensors", {{"a", {128, 128}}});
  writeFile("model-00002-of-00002.safetensors", {{"b", {128, 128}, "BF16"}});
  writeText(Checkpoint::kIndexFile,
            R"({"weight_map": {"a": "model-00001-of-00002.safetensors",
                "b": "model-00002-of-00002.safetensors"}})");
  auto c = Checkpoint::open(dir);
  ASSERT_TRUE(static_cast<bool>(c)) << llvm::toString(c.takeError());
  for (const SafeTensorsFile &file : c->getFiles())
    EXPECT_TRUE(file.isMemoryMapped()) << file.getPath();
  auto weights =
      bindWeights(*c, signature({weight(1, "a", {128, 128}, f32()),
                                 weight(2, "b", {128, 128}, bf16())}));
  ASSERT_TRUE(static_cast<bool>(weights))
      << llvm::toString(weights.takeError());
  for (const HostTensor &t : *weights) {
    EXPECT_TRUE(t.isBorrowed());
    EXPECT_TRUE(t.data.empty() && t.bits16.empty());
  }
  EXPECT_EQ(values((*weights)[0])[16383], 16383.0f);
  EXPECT_EQ(values((*weights)[1])[200], 200.0f);
}

TEST_F(CheckpointTest, LoadRunWeightsLabelsAFolder) {
  writeShardedFolder();
  ModelSignature sig = signature({weight(1, "head", {5, 4}, f32())});
  WeightRequest request;
  request.file = dir;
  auto weights = loadRunWeights(sig, request);
  ASSERT_TRUE(static_cast<bool>(weights))
      << llvm::toString(weights.takeError());
  EXPECT_EQ(weights->label, dir + " (2 shards, 4 tensors unused)");
  ASSERT_EQ(weights->tensors.size(), 1u);
  EXPECT_EQ(values(weights->tensors[0])[4], 4.0f);
}

TEST_F(CheckpointTest, BindingErrorsNameTheShard) {
  writeShardedFolder();
  auto c = Checkpoint::open(dir);
  ASSERT_TRUE(static_cast<bool>(c)) << llvm::toString(c.takeError());
  auto error = [&](ModelArgument arg) {
    auto t = bindWeight(*c, arg, "forward");
    return t ? std::string("no error") : llvm::toString(t.takeError());
  };
  EXPECT_EQ(error(weight(3, "lm_head.weight", {5, 4}, f32())),
            dir + ": missing tensor 'lm_head.weight' (argument #3, weight, of "
                  "@forward): model.safetensors.index.json does not list it");
  EXPECT_EQ(error(weight(2, "head", {4, 5}, f32())),
            at("model-00002-of-00002.safetensors") +
                ": tensor 'head' has shape [5, 4], the model expects [4, 5]");
  EXPECT_EQ(error(weight(1, "position_ids", {1, 6}, f32())),
            at("model-00002-of-00002.safetensors") +
                ": tensor 'position_ids' has dtype I64, argument #1 (weight, "
                "of @forward) needs F32, F16 or BF16 values");
}

TEST_F(CheckpointTest, SingleFileFolderMissingTensor) {
  writeFile(Checkpoint::kSingleFile, {{"norm", {4}, "F32", 1}});
  auto c = Checkpoint::open(dir);
  ASSERT_TRUE(static_cast<bool>(c)) << llvm::toString(c.takeError());
  auto t = bindWeight(*c, weight(1, "head", {5, 4}, f32()), "forward");
  ASSERT_FALSE(static_cast<bool>(t));
  EXPECT_EQ(llvm::toString(t.takeError()),
            dir + ": missing tensor 'head' (argument #1, weight, of "
                  "@forward): model.safetensors does not hold it");
}

TEST_F(CheckpointTest, AFileGivenDirectlyKeepsItsRules) {
  writeFile("w.safetensors", {{"norm", {4}, "F32", 1}, {"extra", {2}}});
  auto c = Checkpoint::open(at("w.safetensors"));
  ASSERT_TRUE(static_cast<bool>(c)) << llvm::toString(c.takeError());
  EXPECT_FALSE(c->isFolder());
  ModelSignature sig = signature({weight(1, "norm", {4}, f32())});
  auto weights = bindWeights(*c, sig);
  ASSERT_FALSE(static_cast<bool>(weights));
  EXPECT_EQ(llvm::toString(weights.takeError()),
            at("w.safetensors") +
                ": unexpected tensor 'extra' binds to no argument of @forward "
                "(--allow-extra-weights ignores it)");
  WeightBindingOptions allow;
  allow.allowExtraTensors = true;
  EXPECT_TRUE(static_cast<bool>(bindWeights(*c, sig, allow)));
  auto missing = bindWeight(*c, weight(2, "head", {5, 4}, f32()), "forward");
  ASSERT_FALSE(static_cast<bool>(missing));
  EXPECT_EQ(llvm::toString(missing.takeError()),
            at("w.safetensors") +
                ": missing tensor 'head' (argument #2, weight, of @forward)");
  // Outside a folder, only F32, F16 and BF16 tensors are accepted.
  writeFile("i.safetensors", {{"ids", {2}, "I64"}});
  auto ints = Checkpoint::open(at("i.safetensors"));
  ASSERT_FALSE(static_cast<bool>(ints));
  EXPECT_EQ(llvm::toString(ints.takeError()),
            at("i.safetensors") + ": tensor 'ids': unsupported dtype 'I64' "
                                  "(expected F32, F16 or BF16)");
}

TEST_F(CheckpointTest, MissingShard) {
  writeShardedFolder();
  ASSERT_FALSE(llvm::sys::fs::remove(at("model-00002-of-00002.safetensors")));
  EXPECT_EQ(openError(),
            at("model-00002-of-00002.safetensors") +
                ": missing shard (model.safetensors.index.json puts 'head' "
                "and 2 more tensors in it)");
}

TEST_F(CheckpointTest, TensorAbsentFromItsShard) {
  writeShardedFolder();
  writeText(Checkpoint::kIndexFile,
            R"({"weight_map": {"embed": "model-00001-of-00002.safetensors",
                "head": "model-00001-of-00002.safetensors"}})");
  EXPECT_EQ(openError(), at("model-00001-of-00002.safetensors") +
                             ": tensor 'head' is not in this shard, where "
                             "model.safetensors.index.json puts it");
}

TEST_F(CheckpointTest, MalformedIndex) {
  writeShardedFolder();
  std::string index = at(Checkpoint::kIndexFile);
  struct Case {
    const char *json, *why;
  } cases[] = {
      {R"({"weight_map": )", "invalid JSON: "},
      {R"({"metadata": {}})", "no \"weight_map\" object"},
      {R"({"weight_map": []})", "no \"weight_map\" object"},
      {R"({"weight_map": {}})", "\"weight_map\" lists no tensors"},
      {R"({"weight_map": {"head": 2}})",
       "the shard of tensor 'head' is not a string"},
      {R"({"weight_map": {"head": "../w.safetensors"}})",
       "the shard '../w.safetensors' of tensor 'head' is not a file name in "
       "the folder"},
  };
  for (const Case &c : cases) {
    writeText(Checkpoint::kIndexFile, c.json);
    std::string error = openError();
    EXPECT_EQ(error.rfind(index + ": malformed index: " + c.why, 0), 0u)
        << error;
  }
}

TEST_F(CheckpointTest, NotAModelFolder) {
  EXPECT_EQ(openError(), dir + ": not a Hugging Face model folder (no "
                               "model.safetensors or "
                               "model.safetensors.index.json)");
}

} // namespace
