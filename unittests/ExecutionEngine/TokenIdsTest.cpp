//===- TokenIdsTest.cpp - token id tensors --------------------------------===//
//
// The int32 .npy writer and the reader round trip (and the file is what
// numpy.save writes: a header padded to 64 bytes), int64 ids convert with a
// range check, slices take columns, the vocabulary check names the first bad
// id, and the greedy token is the first of equal maxima.
//
//===----------------------------------------------------------------------===//

#include "blockc/ExecutionEngine/TokenIds.h"
#include "blockc/ExecutionEngine/DecodeSession.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace blockc;

namespace {

llvm::SmallString<128> tempPath(llvm::StringRef name) {
  llvm::SmallString<128> path;
  EXPECT_FALSE(llvm::sys::fs::createTemporaryFile(name, "npy", path));
  return path;
}

TEST(TokenIdsTest, WriteReadRoundTrip) {
  HostTensor ids = makeTokenIds({2, 3});
  int32_t values[] = {0, 1, 299, -5, 2147483647, 7};
  for (int i = 0; i < 6; ++i)
    setTokenId(ids, i, values[i]);
  llvm::SmallString<128> path = tempPath("ids");
  llvm::FileRemover remove(path);
  ASSERT_FALSE(bool(writeTokenIdsNpy(path, ids)));
  auto buffer = llvm::MemoryBuffer::getFile(path);
  ASSERT_TRUE(bool(buffer));
  llvm::StringRef bytes = (*buffer)->getBuffer();
  // Version 1.0, the header (with its newline) padded so that the data
  // starts on a 64-byte boundary, 4 bytes per id.
  EXPECT_TRUE(bytes.starts_with("\x93NUMPY\x01\x00"));
  EXPECT_EQ(bytes.size() % 64, 24u);
  EXPECT_NE(bytes.find("'descr': '<i4'"), llvm::StringRef::npos);
  EXPECT_NE(bytes.find("'shape': (2, 3)"), llvm::StringRef::npos);
  auto read = readTokenIdsNpy(path);
  ASSERT_TRUE(bool(read)) << llvm::toString(read.takeError());
  EXPECT_EQ(read->shape, (std::vector<int64_t>{2, 3}));
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(getTokenId(*read, i), values[i]);
}

/// Writes a version 1.0 .npy of int64 `values` with shape (1, n).
void writeInt64Npy(llvm::StringRef path, llvm::ArrayRef<int64_t> values) {
  std::string header =
      "{'descr': '<i8', 'fortran_order': False, 'shape': (1, " +
      std::to_string(values.size()) + "), }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  ASSERT_FALSE(ec);
  os << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xff)
     << char(header.size() >> 8) << header;
  os.write(reinterpret_cast<const char *>(values.data()),
           values.size() * sizeof(int64_t));
}

TEST(TokenIdsTest, Int64IdsConvertWithARangeCheck) {
  llvm::SmallString<128> path = tempPath("ids64");
  llvm::FileRemover remove(path);
  writeInt64Npy(path, {3, 0, 2147483647});
  auto read = readTokenIdsNpy(path);
  ASSERT_TRUE(bool(read)) << llvm::toString(read.takeError());
  EXPECT_EQ(getTokenId(*read, 0), 3);
  EXPECT_EQ(getTokenId(*read, 2), 2147483647);

  writeInt64Npy(path, {3, int64_t(1) << 31});
  auto big = readTokenIdsNpy(path);
  ASSERT_FALSE(bool(big));
  EXPECT_NE(llvm::toString(big.takeError())
                .find("token id 2147483648 at [0, 1] does not fit in int32"),
            std::string::npos);
}

TEST(TokenIdsTest, SliceAndVocabularyCheck) {
  HostTensor ids = makeTokenIds({2, 4});
  for (int i = 0; i < 8; ++i)
    setTokenId(ids, i, 10 * i);
  HostTensor column = sliceTokenIds(ids, 2, 1);
  EXPECT_EQ(column.shape, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(getTokenId(column, 0), 20);
  EXPECT_EQ(getTokenId(column, 1), 60);
  EXPECT_FALSE(bool(checkTokenIds(ids, 71, "ids")));
  llvm::Error e = checkTokenIds(ids, 70, "ids");
  ASSERT_TRUE(bool(e));
  EXPECT_EQ(llvm::toString(std::move(e)),
            "ids: token id 70 at [1, 3] is outside the vocabulary [0, 70)");
}

TEST(TokenIdsTest, GreedyTokenIsTheFirstOfEqualMaxima) {
  HostTensor logits;
  logits.shape = {2, 2, 3};
  // The last position of each sequence decides: [1, 5, 5] -> 1, [9, 0, 9]
  // -> 0; the first position (a larger maximum elsewhere) does not.
  logits.data = {9, 0, 0, 1, 5, 5, 0, 0, 99, 9, 0, 9};
  HostTensor next = greedyTokens(logits);
  EXPECT_EQ(next.shape, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(getTokenId(next, 0), 1);
  EXPECT_EQ(getTokenId(next, 1), 0);
}

} // namespace
