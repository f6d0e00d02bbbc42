//===- WeightBindingTest.cpp - safetensors tensors to model arguments -----===//
//
// bindWeight/bindWeights on small in-memory safetensors files whose values
// are known (element i holds i): the slice, the transpose and both together
// give the expected elements, and every error names the file, the tensor
// and the argument exactly as blockc-run prints it.
//
//===----------------------------------------------------------------------===//

#include "blockc/ExecutionEngine/WeightBinding.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>

using namespace blockc;

namespace {

/// An F32 tensor for makeSafeTensors: `shape`, element i = i.
struct StoredTensor {
  std::string name;
  std::vector<int64_t> shape;
};

/// The bytes of a safetensors file holding `tensors` (F32, element i = i),
/// opened as the file `path`.
SafeTensorsFile makeSafeTensors(const std::vector<StoredTensor> &tensors,
                                llvm::StringRef path = "w.safetensors") {
  std::string header = "{", data;
  for (const StoredTensor &t : tensors) {
    int64_t n = 1;
    for (int64_t d : t.shape)
      n *= d;
    size_t begin = data.size();
    for (int64_t i = 0; i < n; ++i) {
      float v = static_cast<float>(i);
      data.append(reinterpret_cast<const char *>(&v), sizeof(v));
    }
    if (header.size() > 1)
      header += ",";
    header += "\"" + t.name + "\":{\"dtype\":\"F32\",\"shape\":[";
    for (size_t i = 0; i < t.shape.size(); ++i)
      header += (i ? "," : "") + std::to_string(t.shape[i]);
    header += "],\"data_offsets\":[" + std::to_string(begin) + "," +
              std::to_string(data.size()) + "]}";
  }
  header += "}";
  std::string bytes(8, '\0');
  uint64_t len = header.size();
  for (int i = 0; i < 8; ++i)
    bytes[i] = static_cast<char>((len >> (8 * i)) & 0xff);
  bytes += header + data;
  auto file = SafeTensorsFile::fromBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(bytes, path), path);
  if (!file) {
    ADD_FAILURE() << llvm::toString(file.takeError());
    std::abort();
  }
  return std::move(*file);
}

class WeightBindingTest : public ::testing::Test {
protected:
  /// A weight argument #`index` of type `shape` bound to `name`.
  ModelArgument weight(unsigned index, std::string name,
                       llvm::ArrayRef<int64_t> shape,
                       std::string role = "weight") {
    ModelArgument a;
    a.index = index;
    a.role = std::move(role);
    a.weightName = std::move(name);
    a.type = mlir::RankedTensorType::get(shape, mlir::Float32Type::get(&ctx));
    return a;
  }

  /// @forward(%x: [?, ?, 4], args...)
  ModelSignature signature(std::vector<ModelArgument> weights) {
    ModelSignature sig;
    sig.funcName = "forward";
    auto input = mlir::RankedTensorType::get(
        {mlir::ShapedType::kDynamic, mlir::ShapedType::kDynamic, 4},
        mlir::Float32Type::get(&ctx));
    ModelArgument activation;
    activation.role = "input";
    activation.type = input;
    sig.args.push_back(std::move(activation));
    for (ModelArgument &w : weights)
      sig.args.push_back(std::move(w));
    sig.resultType = input;
    return sig;
  }

  std::string errorOf(llvm::Expected<HostTensor> t) {
    if (t) {
      ADD_FAILURE() << "expected an error";
      return "";
    }
    return llvm::toString(t.takeError());
  }

  mlir::MLIRContext ctx;
};

/// The elements, through bytes(): a bound weight may borrow the file's.
std::vector<float> values(const HostTensor &t) {
  const auto *p = static_cast<const float *>(t.bytes());
  return std::vector<float>(p, p + t.numElements());
}

TEST_F(WeightBindingTest, BindsByNameInArgumentOrder) {
  SafeTensorsFile file = makeSafeTensors({{"b", {3}}, {"a", {2, 2}}});
  auto weights = bindWeights(
      file, signature({weight(1, "a", {2, 2}), weight(2, "b", {3})}));
  ASSERT_TRUE(static_cast<bool>(weights))
      << llvm::toString(weights.takeError());
  ASSERT_EQ(weights->size(), 2u);
  EXPECT_EQ((*weights)[0].shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(values((*weights)[0]), (std::vector<float>{0, 1, 2, 3}));
  EXPECT_EQ((*weights)[1].shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(values((*weights)[1]), (std::vector<float>{0, 1, 2}));
}

TEST_F(WeightBindingTest, SliceAlongEachAxis) {
  // [3, 4] = [[0 1 2 3] [4 5 6 7] [8 9 10 11]].
  SafeTensorsFile file = makeSafeTensors({{"w", {3, 4}}});
  ModelArgument rows = weight(1, "w", {2, 4});
  rows.sliceAxis = 0;
  rows.sliceBegin = 1;
  rows.sliceEnd = 3;
  auto t = bindWeight(file, rows, "forward");
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(t->shape, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(values(*t), (std::vector<float>{4, 5, 6, 7, 8, 9, 10, 11}));

  ModelArgument cols = weight(1, "w", {3, 2});
  cols.sliceAxis = 1;
  cols.sliceBegin = 1;
  cols.sliceEnd = 3;
  t = bindWeight(file, cols, "forward");
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(t->shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(values(*t), (std::vector<float>{1, 2, 5, 6, 9, 10}));
}

TEST_F(WeightBindingTest, Transpose) {
  // [2, 3] = [[0 1 2] [3 4 5]] read as its [3, 2] transpose.
  SafeTensorsFile file = makeSafeTensors({{"w", {2, 3}}});
  ModelArgument a = weight(1, "w", {3, 2});
  a.transpose = true;
  auto t = bindWeight(file, a, "forward");
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(t->shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(values(*t), (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

TEST_F(WeightBindingTest, SliceThenTranspose) {
  // GPT-2's fused c_attn: rows 1..2 of [3, 4], then transposed to [4, 2].
  SafeTensorsFile file = makeSafeTensors({{"w", {3, 4}}});
  ModelArgument a = weight(1, "w", {4, 2});
  a.sliceAxis = 0;
  a.sliceBegin = 1;
  a.sliceEnd = 3;
  a.transpose = true;
  auto t = bindWeight(file, a, "forward");
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(t->shape, (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(values(*t), (std::vector<float>{4, 8, 5, 9, 6, 10, 7, 11}));
}

// Tensor parallelism (ModelArgument::shardAxis): each rank reads its ranges
// of the argument's view.
TEST_F(WeightBindingTest, ShardRowsAndColumnsPerRank) {
  // [4, 3] = [[0 1 2] [3 4 5] [6 7 8] [9 10 11]].
  SafeTensorsFile file = makeSafeTensors({{"w", {4, 3}}});
  ModelArgument rows = weight(1, "w", {2, 3});
  rows.shardAxis = 0;
  rows.shardRanges = {{0, 2}, {2, 4}};
  auto t = bindWeight(file, rows, "forward", /*rank=*/1);
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(t->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values(*t), (std::vector<float>{6, 7, 8, 9, 10, 11}));
  // Two ranges, one repeated (K/V heads replicated per query head).
  ModelArgument heads = weight(1, "w", {3, 3});
  heads.shardAxis = 0;
  heads.shardRanges = {{0, 1, 0, 1, 1, 2}, {1, 2, 3, 4, 3, 4}};
  t = bindWeight(file, heads, "forward", /*rank=*/1);
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(values(*t), (std::vector<float>{3, 4, 5, 9, 10, 11, 9, 10, 11}));
  ModelArgument cols = weight(1, "w", {4, 1});
  cols.shardAxis = 1;
  cols.shardRanges = {{0, 1}, {2, 3}};
  t = bindWeight(file, cols, "forward", /*rank=*/1);
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(values(*t), (std::vector<float>{2, 5, 8, 11}));
}

TEST_F(WeightBindingTest, ShardOfASlicedTransposedView) {
  // GPT-2's c_attn [3, 8] stored [in, out]: the argument takes columns
  // 4..8 transposed ([4, 3]); rank 1 reads rows 2..4 of that view, i.e.
  // stored columns 6 and 7.
  SafeTensorsFile file = makeSafeTensors({{"w", {3, 8}}});
  ModelArgument a = weight(1, "w", {2, 3});
  a.sliceAxis = 1;
  a.sliceBegin = 4;
  a.sliceEnd = 8;
  a.transpose = true;
  a.shardAxis = 0;
  a.shardRanges = {{0, 2}, {2, 4}};
  auto t = bindWeight(file, a, "forward", /*rank=*/1);
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(t->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values(*t), (std::vector<float>{6, 14, 22, 7, 15, 23}));
  // Its bias [8], columns 4..8, rank 0's half.
  SafeTensorsFile biasFile = makeSafeTensors({{"b", {8}}});
  ModelArgument b = weight(2, "b", {2});
  b.sliceAxis = 0;
  b.sliceBegin = 4;
  b.sliceEnd = 8;
  b.shardAxis = 0;
  b.shardRanges = {{0, 2}, {2, 4}};
  t = bindWeight(biasFile, b, "forward", /*rank=*/0);
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(values(*t), (std::vector<float>{4, 5}));
}

TEST_F(WeightBindingTest, ShardWithoutRangesIsZeros) {
  SafeTensorsFile file = makeSafeTensors({{"b", {3}}});
  ModelArgument b = weight(1, "b", {3});
  b.shardAxis = 0;
  b.shardRanges = {{0, 3}, {}};
  auto t = bindWeight(file, b, "forward", /*rank=*/1);
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(values(*t), (std::vector<float>{0, 0, 0}));
  t = bindWeight(file, b, "forward", /*rank=*/0);
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(values(*t), (std::vector<float>{0, 1, 2}));
}

TEST_F(WeightBindingTest, ShardOfAWrongSizedTensor) {
  // The ranks cover 4 rows; a stored tensor of 5 (or 3) rows is the wrong
  // weight, not one to read a part of.
  for (int64_t stored : {3, 5}) {
    SafeTensorsFile file = makeSafeTensors({{"w", {stored, 2}}});
    ModelArgument a = weight(1, "w", {2, 2}, "w_q");
    a.shardAxis = 0;
    a.shardRanges = {{0, 2}, {2, 4}};
    EXPECT_EQ(errorOf(bindWeight(file, a, "forward", 0)),
              "w.safetensors: tensor 'w' has shape [" + std::to_string(stored) +
                  ", 2], the model split over 2 ranks expects [4, 2] "
                  "(argument #1, w_q, of @forward)");
  }
}

TEST_F(WeightBindingTest, RegionsAreChecked) {
  SafeTensorsFile file = makeSafeTensors({{"w", {2, 3}}});
  auto t = file.loadRegion("w", ElementType::F32, {0, 1}, {1, 4});
  ASSERT_FALSE(static_cast<bool>(t));
  EXPECT_EQ(llvm::toString(t.takeError()),
            "w.safetensors: tensor 'w': columns [1, 4) not within [0, 3)");
  t = file.loadRegion("w", ElementType::F32, {0}, {0, 3});
  ASSERT_FALSE(static_cast<bool>(t));
  EXPECT_EQ(llvm::toString(t.takeError()),
            "w.safetensors: tensor 'w': the rows are not [begin, end) pairs");
  t = file.loadRegion("w", ElementType::F32, {1, 2}, {0, 1, 2, 3});
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(t->shape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(values(*t), (std::vector<float>{3, 5}));
}

TEST_F(WeightBindingTest, MissingTensor) {
  SafeTensorsFile file = makeSafeTensors({{"w", {2}}}, "dir/w.safetensors");
  EXPECT_EQ(errorOf(bindWeight(file, weight(3, "nope", {2}, "w_q"), "fwd")),
            "dir/w.safetensors: missing tensor 'nope' (argument #3, w_q, of "
            "@fwd)");
}

TEST_F(WeightBindingTest, SliceTooSmall) {
  SafeTensorsFile file = makeSafeTensors({{"w", {32}}});
  ModelArgument a = weight(1, "w", {32});
  a.sliceAxis = 0;
  a.sliceBegin = 16;
  a.sliceEnd = 48;
  EXPECT_EQ(errorOf(bindWeight(file, a, "forward")),
            "w.safetensors: tensor 'w' has shape [32], too small for the "
            "slice [16, 48) along axis 0 that argument #1 reads");
  // An axis the tensor does not have.
  a.sliceAxis = 1;
  a.sliceBegin = 0;
  a.sliceEnd = 1;
  EXPECT_EQ(errorOf(bindWeight(file, a, "forward")),
            "w.safetensors: tensor 'w' has shape [32], too small for the "
            "slice [0, 1) along axis 1 that argument #1 reads");
}

TEST_F(WeightBindingTest, TransposeNeedsRank2) {
  SafeTensorsFile file = makeSafeTensors({{"w", {32}}});
  ModelArgument a = weight(1, "w", {32});
  a.transpose = true;
  EXPECT_EQ(errorOf(bindWeight(file, a, "forward")),
            "w.safetensors: tensor 'w' has shape [32] but argument #1 "
            "transposes it (needs rank 2)");
}

TEST_F(WeightBindingTest, ShapeMismatch) {
  SafeTensorsFile file = makeSafeTensors({{"w", {3, 4}}});
  EXPECT_EQ(errorOf(bindWeight(file, weight(2, "w", {4, 3}), "forward")),
            "w.safetensors: tensor 'w' has shape [3, 4], the model expects "
            "[4, 3]");
  // The view after the slice and the transpose is shown too.
  ModelArgument a = weight(2, "w", {2, 4});
  a.sliceAxis = 0;
  a.sliceBegin = 0;
  a.sliceEnd = 2;
  a.transpose = true;
  EXPECT_EQ(errorOf(bindWeight(file, a, "forward")),
            "w.safetensors: tensor 'w' has shape [3, 4] ([4, 2] sliced and "
            "transposed), the model expects [2, 4]");
  ModelArgument t = weight(2, "w", {3, 4});
  t.transpose = true;
  EXPECT_EQ(errorOf(bindWeight(file, t, "forward")),
            "w.safetensors: tensor 'w' has shape [3, 4] ([4, 3] transposed), "
            "the model expects [3, 4]");
}

TEST_F(WeightBindingTest, ExtraTensors) {
  SafeTensorsFile file = makeSafeTensors({{"a", {2}}, {"extra", {3, 4}}});
  ModelSignature sig = signature({weight(1, "a", {2})});
  auto weights = bindWeights(file, sig);
  ASSERT_FALSE(static_cast<bool>(weights));
  EXPECT_EQ(llvm::toString(weights.takeError()),
            "w.safetensors: unexpected tensor 'extra' binds to no argument of "
            "@forward (--allow-extra-weights ignores it)");

  WeightBindingOptions allow;
  allow.allowExtraTensors = true;
  weights = bindWeights(file, sig, allow);
  ASSERT_TRUE(static_cast<bool>(weights))
      << llvm::toString(weights.takeError());
  ASSERT_EQ(weights->size(), 1u);
  EXPECT_EQ(values(weights->front()), (std::vector<float>{0, 1}));
}

TEST_F(WeightBindingTest, TwoSlicesOfOneTensorAreNotExtra) {
  // Fused QKV: two arguments read halves of one tensor.
  SafeTensorsFile file = makeSafeTensors({{"qkv", {4, 2}}});
  ModelArgument q = weight(1, "qkv", {2, 2}), k = weight(2, "qkv", {2, 2});
  q.sliceAxis = k.sliceAxis = 0;
  q.sliceEnd = 2;
  k.sliceBegin = 2;
  k.sliceEnd = 4;
  auto weights = bindWeights(file, signature({q, k}));
  ASSERT_TRUE(static_cast<bool>(weights))
      << llvm::toString(weights.takeError());
  EXPECT_EQ(values((*weights)[0]), (std::vector<float>{0, 1, 2, 3}));
  EXPECT_EQ(values((*weights)[1]), (std::vector<float>{4, 5, 6, 7}));
}

TEST_F(WeightBindingTest, BindingStopsAtTheFirstError) {
  // The first bad argument is reported, even when a later one is fine.
  SafeTensorsFile file = makeSafeTensors({{"a", {2}}, {"b", {2}}});
  auto weights = bindWeights(
      file, signature({weight(1, "a", {3}), weight(2, "missing", {2})}));
  ASSERT_FALSE(static_cast<bool>(weights));
  EXPECT_EQ(llvm::toString(weights.takeError()),
            "w.safetensors: tensor 'a' has shape [2], the model expects [3]");
}

TEST_F(WeightBindingTest, RandomWeightsAreDeterministicPerArgument) {
  ModelArgument norm = weight(1, "n", {64}, "attn_norm");
  ModelArgument matrix = weight(2, "m", {8, 16}, "w_q");
  ModelArgument bias = weight(3, "b", {8}, "b_q");
  HostTensor n = makeRandomWeight(norm, 7), m = makeRandomWeight(matrix, 7),
             b = makeRandomWeight(bias, 7);
  EXPECT_EQ(m.shape, (std::vector<int64_t>{8, 16}));
  // Norm gains in [0.9, 1.1), matrices within 1/sqrt(16), vectors 0.1.
  for (float v : n.data)
    EXPECT_TRUE(v >= 0.9f && v < 1.1f) << v;
  for (float v : m.data)
    EXPECT_LE(std::fabs(v), 0.25f);
  for (float v : b.data)
    EXPECT_LE(std::fabs(v), 0.1f);
  // The same seed and argument give the same values; another seed or
  // another argument index does not.
  EXPECT_EQ(values(makeRandomWeight(matrix, 7)), values(m));
  EXPECT_NE(values(makeRandomWeight(matrix, 8)), values(m));
  ModelArgument moved = matrix;
  moved.index = 5;
  EXPECT_NE(values(makeRandomWeight(moved, 7)), values(m));

  std::vector<HostTensor> all =
      makeRandomWeights(signature({norm, matrix, bias}), 7);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(values(all[1]), values(m));
}

TEST_F(WeightBindingTest, RandomTensorIsSplitMix64) {
  HostTensor t = makeRandomTensor({2, 3}, 5);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
  SplitMix64 rng(5);
  for (float v : t.data) {
    EXPECT_EQ(v, rng.uniform());
    EXPECT_TRUE(v >= -1.0f && v < 1.0f);
  }
  // The first outputs of splitmix64 seeded with state 1 (seed 0): the
  // generator stays the one every blockc-run --random-* run used.
  SplitMix64 zero(0);
  EXPECT_EQ(zero.next(), 0x910a2dec89025cc1ull);
}

} // namespace
