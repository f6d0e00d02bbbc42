//===- TensorFiles.h - safetensors and .npy readers/writers -----*- C++ -*-===//
//
// Host-side tensor files used by blockc-run: safetensors weights (f32, f16
// and bf16, converted to f32 on load) and NumPy .npy activations (f32, C
// order). Every reader validates sizes and offsets against the file before
// touching data and reports errors that name the file (and tensor).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_SUPPORT_TENSORFILES_H
#define BLOCKC_SUPPORT_TENSORFILES_H

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace blockc {

/// Allocates on `Align`-byte boundaries (cache lines by default).
template <typename T, std::size_t Align = 64> struct AlignedAllocator {
  using value_type = T;
  template <typename U> struct rebind {
    using other = AlignedAllocator<U, Align>;
  };
  AlignedAllocator() = default;
  template <typename U>
  AlignedAllocator(const AlignedAllocator<U, Align> &) noexcept {}
  T *allocate(std::size_t n) {
    return static_cast<T *>(
        ::operator new(n * sizeof(T), std::align_val_t(Align)));
  }
  void deallocate(T *p, std::size_t) noexcept {
    ::operator delete(p, std::align_val_t(Align));
  }
  template <typename U>
  bool operator==(const AlignedAllocator<U, Align> &) const {
    return true;
  }
  template <typename U>
  bool operator!=(const AlignedAllocator<U, Align> &) const {
    return false;
  }
};

/// The element types of host tensors: f32, and the two 16-bit floats that
/// checkpoints ship in (kept as their bits; never widened on the way).
enum class ElementType { F32, BF16, F16 };

/// "f32", "bf16" or "f16".
const char *stringifyElementType(ElementType type);

/// A dense, row-major tensor on the host. The data starts on a 64-byte
/// boundary: compiled kernels read whole cache lines with 64-byte vectors
/// (a std::vector's default 16-byte alignment would split every such load
/// across two lines). f32 elements are in `data`, bf16 and f16 elements
/// (their bits) in `bits16`; the other vector is empty.
///
/// A weight read from a memory-mapped checkpoint may instead borrow the
/// file's bytes (SafeTensorsFile::view): `borrowed` points at its elements
/// (aligned to the element size only), `keepAlive` holds the mapping, and
/// both vectors are empty. Such a tensor is read-only.
struct HostTensor {
  std::vector<int64_t> shape;
  ElementType elementType = ElementType::F32;
  std::vector<float, AlignedAllocator<float>> data;
  std::vector<uint16_t, AlignedAllocator<uint16_t>> bits16;
  const void *borrowed = nullptr;
  std::shared_ptr<const void> keepAlive;
  /// The borrowed bytes are a view of a memory-mapped file (read-only).
  bool borrowsMappedFile = false;

  int64_t numElements() const;
  /// Bytes per element (4 or 2).
  size_t elementBytes() const {
    return elementType == ElementType::F32 ? 4 : 2;
  }
  /// The elements borrow a mapped file's bytes.
  bool isBorrowed() const { return borrowed != nullptr; }
  /// The elements' storage.
  const void *bytes() const {
    if (borrowed)
      return borrowed;
    return elementType == ElementType::F32
               ? static_cast<const void *>(data.data())
               : static_cast<const void *>(bits16.data());
  }
  void *bytes() { return const_cast<void *>(std::as_const(*this).bytes()); }
  /// Allocates numElements() elements of elementType (zeros), advising
  /// transparent huge pages (adviseHugePages) before they are touched: the
  /// one allocation of every weight the runtime makes (loaded, converted,
  /// sliced, transposed, random, prepared), so that the kernels stream
  /// them through 2 MiB pages.
  void allocate();
  /// Gives the elements' memory back, leaving the tensor empty (its shape
  /// and type stay): owned storage is freed; a view of a mapped file drops
  /// its whole pages from the process (madvise MADV_DONTNEED: they stay in
  /// the page cache, and a view of the same bytes faults them in again).
  void release();
};

/// Asks Linux for transparent huge pages (madvise MADV_HUGEPAGE) over the
/// 2 MiB-aligned interior of [p, p + bytes), before it is first touched:
/// the memory then faults in 2 MiB at a time and a kernel streaming it
/// misses the TLB 512 times less often. Matters where THP is `madvise`
/// (Debian's default), not `always`; best effort (nothing for a buffer
/// smaller than 2 MiB, nothing off Linux; BLOCKC_HUGE_PAGES=0 in the
/// environment turns it off).
void adviseHugePages(void *p, size_t bytes);

/// `t` with its elements converted to `type`: widening is exact, narrowing
/// rounds to nearest even (NaN stays NaN).
HostTensor convertElements(const HostTensor &t, ElementType type);

/// Formats a shape as "[2, 7, 64]".
std::string formatShape(const std::vector<int64_t> &shape);

/// A validated safetensors file, mapped in memory.
class SafeTensorsFile {
public:
  struct Entry {
    /// "F32", "F16" or "BF16"; "I32" only for a tensor that the header's
    /// metadata names as prepared (kPreparedPrefix + name).
    std::string dtype;
    std::vector<int64_t> shape;
    uint64_t begin = 0, end = 0; // offsets in the data buffer
  };

  /// Opens and validates `path`, memory-mapped: header length, JSON
  /// header, dtypes, shapes and offsets (inside the file, consistent with
  /// shape and dtype). Only F32, F16 and BF16 tensors are accepted, unless
  /// `anyDType`: then the other safetensors dtypes (F64, I64, I32, I16, I8,
  /// U8, BOOL, ...) are checked the same way and listed, but not loadable
  /// (a checkpoint's integer buffers that no argument reads).
  static llvm::Expected<SafeTensorsFile> open(llvm::StringRef path,
                                              bool anyDType = false);

  /// As open, on bytes already in memory; `path` names them in errors.
  static llvm::Expected<SafeTensorsFile>
  fromBuffer(std::unique_ptr<llvm::MemoryBuffer> contents, llvm::StringRef path,
             bool anyDType = false);

  /// "F32", "F16" and "BF16": the dtypes that load as values.
  static bool isFloatDType(llvm::StringRef dtype);

  const std::string &getPath() const { return path; }
  const llvm::StringMap<Entry> &getEntries() const { return entries; }
  /// The file is memory-mapped, not read into memory (open maps any file
  /// but a small one, as llvm::MemoryBuffer decides).
  bool isMemoryMapped() const {
    return buffer->getBufferKind() == llvm::MemoryBuffer::MemoryBuffer_MMap;
  }
  /// The header's "__metadata__" strings.
  const llvm::StringMap<std::string> &getMetadata() const { return metadata; }

  /// The metadata of a file of prepared weights (docs/RuntimeABI.md):
  /// "format" is kPreparedFormat and kPreparedPrefix + <tensor> gives the
  /// prepared layout of each prepared tensor.
  static constexpr const char *kPreparedFormat = "blockc-prepared";
  static constexpr const char *kPreparedPrefix = "blockc.prepared.";
  bool holdsPreparedWeights() const {
    auto it = metadata.find("format");
    return it != metadata.end() && it->second == kPreparedFormat;
  }

  /// Loads tensor `name` as `type`: a tensor stored in that type is copied
  /// as it is, any other is converted (see convertElements). An I32 tensor
  /// (prepared words) loads as its bits into an F32-typed tensor.
  llvm::Expected<HostTensor> load(llvm::StringRef name,
                                  ElementType type = ElementType::F32) const;

  /// As load, but a tensor stored in `type` whose bytes in the file are
  /// aligned to the element size is not copied: the result borrows them
  /// (HostTensor::borrowed) and keeps the file's mapping alive.
  llvm::Expected<HostTensor> view(llvm::StringRef name,
                                  ElementType type = ElementType::F32) const;

  /// Loads the rows `rows` x columns `cols` of the 1-D or 2-D tensor `name`
  /// as `type` (a 1-D tensor is one row: `rows` must be empty), each given
  /// as [begin, end) pairs concatenated in order, reading only those
  /// elements' bytes (a tensor-parallel rank's part of a weight). The
  /// ranges must lie inside the tensor.
  llvm::Expected<HostTensor> loadRegion(llvm::StringRef name, ElementType type,
                                        llvm::ArrayRef<int64_t> rows,
                                        llvm::ArrayRef<int64_t> cols) const;

private:
  std::string path;
  std::shared_ptr<llvm::MemoryBuffer> buffer;
  uint64_t dataStart = 0;
  llvm::StringMap<Entry> entries;
  llvm::StringMap<std::string> metadata;
};

/// One tensor of a safetensors file to write: `bytes` bytes at `data`, of
/// safetensors `dtype` ("F32", "BF16", "F16", "I32") and `shape`.
struct SafeTensorsEntry {
  std::string name, dtype;
  std::vector<int64_t> shape;
  const void *data = nullptr;
  uint64_t bytes = 0;
};

/// Writes `entries` (in order) and `metadata` (the header's "__metadata__")
/// as a safetensors file, atomically like writeNpy.
llvm::Error writeSafeTensors(
    llvm::StringRef path, llvm::ArrayRef<SafeTensorsEntry> entries,
    const std::vector<std::pair<std::string, std::string>> &metadata);

/// Reads a C-order .npy file of f32, or f16 (widened to f32).
llvm::Expected<HostTensor> readNpy(llvm::StringRef path);

/// The header of a .npy file (format versions 1 to 3): the dtype as numpy
/// spells it ('<f4', '<i8', ...), the memory order, the shape, and where the
/// data starts. Errors (bad magic, a truncated or malformed header) name
/// `path`; the data's size is the caller's to check.
struct NpyHeader {
  std::string dtype;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
  uint64_t dataOffset = 0;
};
llvm::Expected<NpyHeader> parseNpyHeader(llvm::StringRef bytes,
                                         llvm::StringRef path);

/// As readNpy, on the bytes of a .npy file; `path` names them in errors.
llvm::Expected<HostTensor> parseNpy(llvm::StringRef bytes,
                                    llvm::StringRef path);

/// Writes `tensor` as an f32 .npy file atomically: the data goes to a
/// temporary file in the same directory that is renamed over `path`, so a
/// failure never leaves a partial file.
llvm::Error writeNpy(llvm::StringRef path, const HostTensor &tensor);

/// Writes `data` (little-endian elements, C order) as a .npy file of numpy
/// type `descr` ("<f4", "<i4") and `shape`, atomically like writeNpy.
llvm::Error writeNpyBytes(llvm::StringRef path, llvm::StringRef descr,
                          llvm::ArrayRef<int64_t> shape, llvm::StringRef data);

/// Checks up front that `path` can be created (its directory exists and is
/// writable), without creating it.
llvm::Error checkWritable(llvm::StringRef path);

/// The elements [begin, end) of `t` along `axis` (bounds checked by the
/// caller).
HostTensor sliceTensor(const HostTensor &t, int64_t axis, int64_t begin,
                       int64_t end);

/// The transpose of a rank-2 tensor.
HostTensor transpose2D(const HostTensor &t);

/// IEEE half and bfloat16 to float conversions, and back (round to
/// nearest even; overflow to infinity, NaN stays NaN).
float halfToFloat(uint16_t bits);
float bfloat16ToFloat(uint16_t bits);
uint16_t floatToHalf(float value);
uint16_t floatToBFloat16(float value);

} // namespace blockc

#endif // BLOCKC_SUPPORT_TENSORFILES_H
