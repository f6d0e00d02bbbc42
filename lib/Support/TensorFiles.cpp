//===- TensorFiles.cpp - safetensors and .npy readers/writers -------------===//
//
// The safetensors header is parsed with llvm::json (a real JSON parser); the
// .npy header is a Python dict literal with three known keys and is parsed
// by a small dedicated scanner. All sizes are checked with overflow-safe
// arithmetic before any data is read.
//
//===----------------------------------------------------------------------===//

#include "blockc/Support/TensorFiles.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <type_traits>

#if defined(__unix__)
#include <sys/mman.h>
#include <unistd.h>
#endif

using namespace llvm;
using namespace blockc;

namespace {

Error fileError(StringRef path, const Twine &message) {
  return createStringError(inconvertibleErrorCode(), path + ": " + message);
}

/// r = a * b, returning true on unsigned overflow.
bool mulOverflows(uint64_t a, uint64_t b, uint64_t &r) {
  return __builtin_mul_overflow(a, b, &r);
}

/// Multiplies the dimensions, failing on negative sizes or overflow.
bool checkedNumElements(const std::vector<int64_t> &shape, uint64_t &n) {
  n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return false;
    if (mulOverflows(n, static_cast<uint64_t>(d), n))
      return false;
  }
  return true;
}

} // namespace

int64_t HostTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

void HostTensor::release() {
#if defined(__unix__)
  if (borrowed && borrowsMappedFile) {
    auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    auto start = reinterpret_cast<uintptr_t>(borrowed);
    uintptr_t begin = (start + page - 1) & ~(page - 1);
    uintptr_t end = (start + numElements() * elementBytes()) & ~(page - 1);
    if (end > begin)
      (void)madvise(reinterpret_cast<void *>(begin), end - begin,
                    MADV_DONTNEED);
  }
#endif
  decltype(data)().swap(data);
  decltype(bits16)().swap(bits16);
  borrowed = nullptr;
  borrowsMappedFile = false;
  keepAlive.reset();
}

void blockc::adviseHugePages(void *p, size_t bytes) {
#if defined(__linux__)
  // BLOCKC_HUGE_PAGES=0 leaves the pages as the kernel's policy makes them
  // (to measure what the advice is worth).
  static const bool enabled = [] {
    const char *env = std::getenv("BLOCKC_HUGE_PAGES");
    return !env || std::strcmp(env, "0") != 0;
  }();
  if (!enabled)
    return;
  constexpr uintptr_t kHuge = 2 << 20;
  auto begin = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kHuge - 1);
  if (end > begin)
    (void)madvise(reinterpret_cast<void *>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

void HostTensor::allocate() {
  borrowed = nullptr;
  borrowsMappedFile = false;
  keepAlive.reset();
  // The storage it has if large enough (a reset cache), else new storage,
  // reserved and advised before the zeros touch it.
  auto zeros = [](auto &kept, auto &other, size_t n) {
    std::remove_reference_t<decltype(other)>().swap(other);
    if (kept.capacity() < n) {
      std::remove_reference_t<decltype(kept)>().swap(kept);
      kept.reserve(n);
      adviseHugePages(kept.data(), n * sizeof(kept[0]));
    }
    kept.assign(n, 0);
  };
  auto n = static_cast<size_t>(numElements());
  if (elementType == ElementType::F32)
    zeros(data, bits16, n);
  else
    zeros(bits16, data, n);
}

const char *blockc::stringifyElementType(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return "f32";
  case ElementType::BF16:
    return "bf16";
  case ElementType::F16:
    return "f16";
  }
  return "?";
}

HostTensor blockc::convertElements(const HostTensor &t, ElementType type) {
  if (t.elementType == type)
    return t;
  HostTensor r;
  r.shape = t.shape;
  r.elementType = type;
  r.allocate();
  int64_t n = t.numElements();
  // Through bytes(): `t` may borrow a mapped file's elements.
  const auto *f32 = static_cast<const float *>(t.bytes());
  const auto *b16 = static_cast<const uint16_t *>(t.bytes());
  auto get = [&](int64_t i) {
    switch (t.elementType) {
    case ElementType::F32:
      return f32[i];
    case ElementType::BF16:
      return bfloat16ToFloat(b16[i]);
    case ElementType::F16:
      return halfToFloat(b16[i]);
    }
    return 0.0f;
  };
  for (int64_t i = 0; i < n; ++i) {
    float v = get(i);
    if (type == ElementType::F32)
      r.data[i] = v;
    else
      r.bits16[i] =
          type == ElementType::BF16 ? floatToBFloat16(v) : floatToHalf(v);
  }
  return r;
}

std::string blockc::formatShape(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

float blockc::halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400) == 0);
      bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 |
             (mant & 0x3ff) << 13;
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | mant << 13; // inf / nan
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

float blockc::bfloat16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

uint16_t blockc::floatToBFloat16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN: keep it quiet and a NaN
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  // Round to nearest even on the 16 dropped bits (a carry into the
  // exponent is correct rounding, up to infinity).
  bits += 0x7fffu + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

uint16_t blockc::floatToHalf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  uint32_t sign = (bits >> 16) & 0x8000u;
  uint32_t absBits = bits & 0x7fffffffu;
  if (absBits > 0x7f800000u) // NaN
    return static_cast<uint16_t>(sign | 0x7e00u);
  if (absBits >= 0x477ff000u) // rounds to 65520 or more: infinity
    return static_cast<uint16_t>(sign | 0x7c00u);
  int32_t exp = static_cast<int32_t>(absBits >> 23) - 127;
  if (exp < -25) // below half the smallest subnormal: zero
    return static_cast<uint16_t>(sign);
  uint32_t mant = (absBits & 0x7fffffu) | 0x800000u; // 24 bits with the 1
  // Bits to drop: 13 for a normal half, more for a subnormal one.
  int32_t shift = exp < -14 ? 13 + (-14 - exp) : 13;
  uint32_t kept = mant >> shift;
  uint32_t rest = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
  if (rest > half || (rest == half && (kept & 1)))
    ++kept;
  // A normal half: biased exponent above the 10 stored mantissa bits (the
  // implicit 1 in `kept` adds one to it, hence exp + 14); a subnormal: the
  // mantissa alone (a carry into bit 10 makes it the smallest normal).
  uint32_t h =
      exp < -14 ? kept : (static_cast<uint32_t>(exp + 14) << 10) + kept;
  return static_cast<uint16_t>(sign | h);
}

//===----------------------------------------------------------------------===//
// safetensors
//===----------------------------------------------------------------------===//

/// Bytes per element of the safetensors dtypes that are not values blockc
/// loads (0: unknown).
static uint64_t otherDTypeBytes(StringRef dtype) {
  return StringSwitch<uint64_t>(dtype)
      .Cases({"F64", "I64", "U64"}, 8)
      .Cases({"I32", "U32"}, 4)
      .Cases({"I16", "U16"}, 2)
      .Cases({"I8", "U8", "BOOL", "F8_E4M3", "F8_E5M2"}, 1)
      .Default(0);
}

bool SafeTensorsFile::isFloatDType(StringRef dtype) {
  return dtype == "F32" || dtype == "F16" || dtype == "BF16";
}

Expected<SafeTensorsFile> SafeTensorsFile::open(StringRef path, bool anyDType) {
  // Not null-terminated: a large file is memory-mapped, not read.
  auto bufOr = MemoryBuffer::getFile(path, /*IsText=*/false,
                                     /*RequiresNullTerminator=*/false);
  if (!bufOr)
    return fileError(path, "cannot open safetensors file: " +
                               bufOr.getError().message());
  return fromBuffer(std::move(*bufOr), path, anyDType);
}

Expected<SafeTensorsFile>
SafeTensorsFile::fromBuffer(std::unique_ptr<MemoryBuffer> contents,
                            StringRef path, bool anyDType) {
  SafeTensorsFile file;
  file.path = path.str();
  file.buffer = std::move(contents);
  StringRef bytes = file.buffer->getBuffer();
  uint64_t size = bytes.size();
  if (size < 8)
    return fileError(path, "truncated safetensors file (" + Twine(size) +
                               " bytes, no header length)");
  uint64_t headerLen = support::endian::read64le(
      reinterpret_cast<const uint8_t *>(bytes.data()));
  if (headerLen > size - 8)
    return fileError(path, "corrupt safetensors header: header length " +
                               Twine(headerLen) + " exceeds the file size (" +
                               Twine(size) + " bytes)");
  file.dataStart = 8 + headerLen;
  uint64_t dataSize = size - file.dataStart;

  Expected<json::Value> header = json::parse(bytes.substr(8, headerLen));
  if (!header)
    return fileError(path, "corrupt safetensors header: invalid JSON: " +
                               toString(header.takeError()));
  const json::Object *root = header->getAsObject();
  if (!root)
    return fileError(path, "corrupt safetensors header: not a JSON object");

  if (const json::Object *meta = root->getObject("__metadata__"))
    for (const auto &kv : *meta)
      if (std::optional<StringRef> v = kv.second.getAsString())
        file.metadata[StringRef(kv.first)] = v->str();
  for (const auto &kv : *root) {
    StringRef name = kv.first;
    if (name == "__metadata__")
      continue;
    auto bad = [&](const Twine &why) {
      return fileError(path, "tensor '" + name + "': " + why);
    };
    const json::Object *obj = kv.second.getAsObject();
    if (!obj)
      return bad("header entry is not an object");
    Entry entry;
    std::optional<StringRef> dtype = obj->getString("dtype");
    if (!dtype)
      return bad("missing 'dtype'");
    entry.dtype = dtype->str();
    uint64_t eltSize;
    if (entry.dtype == "F32")
      eltSize = 4;
    else if (entry.dtype == "F16" || entry.dtype == "BF16")
      eltSize = 2;
    else if (entry.dtype == "I32" && file.holdsPreparedWeights() &&
             file.metadata.count(
                 (SafeTensorsFile::kPreparedPrefix + name).str()))
      eltSize = 4;
    else if (anyDType && otherDTypeBytes(entry.dtype))
      eltSize = otherDTypeBytes(entry.dtype);
    else
      return bad("unsupported dtype '" + entry.dtype +
                 "' (expected F32, F16 or BF16)");
    const json::Array *shape = obj->getArray("shape");
    if (!shape)
      return bad("missing 'shape'");
    for (const json::Value &d : *shape) {
      std::optional<int64_t> v = d.getAsInteger();
      if (!v || *v < 0)
        return bad("invalid dimension in 'shape'");
      entry.shape.push_back(*v);
    }
    const json::Array *offsets = obj->getArray("data_offsets");
    if (!offsets || offsets->size() != 2)
      return bad("missing or invalid 'data_offsets'");
    std::optional<int64_t> b = (*offsets)[0].getAsInteger();
    std::optional<int64_t> e = (*offsets)[1].getAsInteger();
    if (!b || !e || *b < 0 || *e < *b)
      return bad("invalid 'data_offsets'");
    entry.begin = *b;
    entry.end = *e;
    if (entry.end > dataSize)
      return bad("data_offsets [" + Twine(entry.begin) + ", " +
                 Twine(entry.end) + "] lie outside the data buffer (" +
                 Twine(dataSize) + " bytes; file truncated?)");
    uint64_t n, bytesNeeded;
    if (!checkedNumElements(entry.shape, n) ||
        mulOverflows(n, eltSize, bytesNeeded))
      return bad("shape " + formatShape(entry.shape) + " is too large");
    if (bytesNeeded != entry.end - entry.begin)
      return bad("data_offsets cover " + Twine(entry.end - entry.begin) +
                 " bytes but shape " + formatShape(entry.shape) + " of " +
                 entry.dtype + " needs " + Twine(bytesNeeded));
    file.entries[name] = std::move(entry);
  }

  // As in the reference implementation, the tensors must tile the data
  // buffer exactly: no overlap (two tensors sharing bytes), no gap and no
  // trailing bytes.
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const auto &e : file.entries)
    if (e.second.end > e.second.begin)
      ranges.push_back({e.second.begin, e.second.end});
  llvm::sort(ranges);
  uint64_t covered = 0;
  for (auto [b, e] : ranges) {
    if (b != covered)
      return fileError(path,
                       "corrupt safetensors data: tensors " +
                           Twine(b < covered ? "overlap" : "leave a gap") +
                           " at byte " + Twine(std::min(b, covered)));
    covered = e;
  }
  if (covered != dataSize)
    return fileError(path, "corrupt safetensors data: the data buffer has " +
                               Twine(dataSize) +
                               " bytes but the tensors cover " +
                               Twine(covered));
  return std::move(file);
}

Expected<HostTensor> SafeTensorsFile::load(StringRef name,
                                           ElementType type) const {
  auto it = entries.find(name);
  if (it == entries.end())
    return fileError(path, "no tensor named '" + name + "'");
  const Entry &e = it->second;
  bool prepared = e.dtype == "I32" && holdsPreparedWeights() &&
                  metadata.count((kPreparedPrefix + name).str());
  if (!isFloatDType(e.dtype) && !prepared)
    return fileError(path, "tensor '" + name + "' has dtype " + e.dtype +
                               ", not F32, F16 or BF16");
  HostTensor t;
  t.shape = e.shape;
  // I32 (prepared words) keeps its 4-byte bits in an F32-typed tensor.
  t.elementType = e.dtype == "F32" || e.dtype == "I32" ? ElementType::F32
                  : e.dtype == "F16"                   ? ElementType::F16
                                                       : ElementType::BF16;
  if (e.dtype == "I32" && type != ElementType::F32)
    return fileError(path, "tensor '" + name +
                               "' holds prepared int32 words, not " +
                               stringifyElementType(type) + " values");
  t.allocate();
  uint64_t bytes = e.end - e.begin;
  const char *src = buffer->getBufferStart() + dataStart + e.begin;
  if (bytes != 0) // an empty vector's data() may be null (UB for memcpy)
    std::memcpy(t.bytes(), src, bytes); // safetensors are little-endian
  if (t.elementType == type)
    return t;
  return convertElements(t, type);
}

Expected<HostTensor> SafeTensorsFile::view(StringRef name,
                                           ElementType type) const {
  auto it = entries.find(name);
  if (it == entries.end() || !isFloatDType(it->second.dtype))
    return load(name, type);
  const Entry &e = it->second;
  ElementType stored = e.dtype == "F32"   ? ElementType::F32
                       : e.dtype == "F16" ? ElementType::F16
                                          : ElementType::BF16;
  const char *src = buffer->getBufferStart() + dataStart + e.begin;
  size_t width = stored == ElementType::F32 ? 4 : 2;
  if (stored != type || e.end == e.begin ||
      reinterpret_cast<uintptr_t>(src) % width != 0)
    return load(name, type);
  HostTensor t;
  t.shape = e.shape;
  t.elementType = type;
  t.borrowed = src;
  t.keepAlive = buffer;
  t.borrowsMappedFile = isMemoryMapped();
  return t;
}

Expected<HostTensor> SafeTensorsFile::loadRegion(StringRef name,
                                                 ElementType type,
                                                 ArrayRef<int64_t> rows,
                                                 ArrayRef<int64_t> cols) const {
  auto it = entries.find(name);
  if (it == entries.end())
    return fileError(path, "no tensor named '" + name + "'");
  const Entry &e = it->second;
  if (e.dtype == "I32")
    return fileError(path, "tensor '" + name +
                               "' holds prepared int32 words: it cannot be "
                               "split over ranks");
  if (e.shape.size() != 1 && e.shape.size() != 2)
    return fileError(path, "tensor '" + name + "' has rank " +
                               Twine(e.shape.size()) +
                               ": only 1-D and 2-D tensors are split");
  bool matrix = e.shape.size() == 2;
  int64_t numRows = matrix ? e.shape[0] : 1, numCols = e.shape.back();
  SmallVector<int64_t> allRows = {0, numRows};
  if (!matrix && !rows.empty())
    return fileError(path, "tensor '" + name + "' is 1-D: no rows to select");
  if (rows.empty())
    rows = allRows;
  auto total = [&](ArrayRef<int64_t> ranges, int64_t limit,
                   StringRef what) -> Expected<int64_t> {
    if (ranges.size() % 2 != 0)
      return fileError(path, "tensor '" + name + "': the " + what +
                                 " are not [begin, end) pairs");
    int64_t n = 0;
    for (size_t i = 0; i + 1 < ranges.size(); i += 2) {
      if (ranges[i] < 0 || ranges[i + 1] < ranges[i] || ranges[i + 1] > limit)
        return fileError(path, "tensor '" + name + "': " + what + " [" +
                                   Twine(ranges[i]) + ", " +
                                   Twine(ranges[i + 1]) + ") not within [0, " +
                                   Twine(limit) + ")");
      n += ranges[i + 1] - ranges[i];
    }
    return n;
  };
  Expected<int64_t> outRows = total(rows, numRows, "rows");
  if (!outRows)
    return outRows.takeError();
  Expected<int64_t> outCols = total(cols, numCols, "columns");
  if (!outCols)
    return outCols.takeError();
  HostTensor t;
  t.shape = matrix ? std::vector<int64_t>{*outRows, *outCols}
                   : std::vector<int64_t>{*outCols};
  t.elementType = e.dtype == "F32"   ? ElementType::F32
                  : e.dtype == "F16" ? ElementType::F16
                                     : ElementType::BF16;
  t.allocate();
  size_t bytes = t.elementBytes();
  const char *src = buffer->getBufferStart() + dataStart + e.begin;
  char *dst = static_cast<char *>(t.bytes());
  for (size_t r = 0; r + 1 < rows.size(); r += 2)
    for (int64_t row = rows[r]; row < rows[r + 1]; ++row)
      for (size_t c = 0; c + 1 < cols.size(); c += 2) {
        size_t n = (cols[c + 1] - cols[c]) * bytes;
        if (n == 0)
          continue;
        std::memcpy(dst, src + (row * numCols + cols[c]) * bytes, n);
        dst += n;
      }
  if (t.elementType == type)
    return t;
  return convertElements(t, type);
}

//===----------------------------------------------------------------------===//
// .npy
//===----------------------------------------------------------------------===//

namespace {

/// Finds `'key':` in a .npy header dict and returns the text after it.
std::optional<StringRef> npyField(StringRef header, StringRef key) {
  std::string pattern = "'" + key.str() + "'";
  size_t pos = header.find(pattern);
  if (pos == StringRef::npos)
    return std::nullopt;
  StringRef rest = header.drop_front(pos + pattern.size()).ltrim();
  if (!rest.consume_front(":"))
    return std::nullopt;
  return rest.ltrim();
}

} // namespace

Expected<HostTensor> blockc::readNpy(StringRef path) {
  auto bufOr = MemoryBuffer::getFile(path, /*IsText=*/false,
                                     /*RequiresNullTerminator=*/false);
  if (!bufOr)
    return fileError(path,
                     "cannot open .npy file: " + bufOr.getError().message());
  return parseNpy((*bufOr)->getBuffer(), path);
}

Expected<NpyHeader> blockc::parseNpyHeader(StringRef bytes, StringRef path) {
  if (bytes.size() < 10 || !bytes.starts_with("\x93NUMPY"))
    return fileError(path, "not a .npy file (bad magic)");
  uint8_t major = bytes[6];
  uint64_t headerLen, headerStart;
  if (major == 1) {
    headerLen = support::endian::read16le(bytes.data() + 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return fileError(path, "truncated .npy header");
    headerLen = support::endian::read32le(bytes.data() + 8);
    headerStart = 12;
  } else {
    return fileError(path, "unsupported .npy version " + Twine(major));
  }
  if (headerStart + headerLen > bytes.size())
    return fileError(path, "truncated .npy header");
  StringRef header = bytes.substr(headerStart, headerLen);

  NpyHeader result;
  result.dataOffset = headerStart + headerLen;
  std::optional<StringRef> descr = npyField(header, "descr");
  if (!descr || descr->size() < 2 || (*descr)[0] != '\'')
    return fileError(path, "malformed .npy header (no 'descr')");
  result.dtype = descr->drop_front().split('\'').first.str();
  std::optional<StringRef> fortran = npyField(header, "fortran_order");
  if (!fortran)
    return fileError(path, "malformed .npy header (no 'fortran_order')");
  result.fortranOrder = !fortran->starts_with("False");
  std::optional<StringRef> shapeText = npyField(header, "shape");
  if (!shapeText || !shapeText->starts_with("("))
    return fileError(path, "malformed .npy header (no 'shape')");
  StringRef dims = shapeText->drop_front().split(')').first;
  SmallVector<StringRef> parts;
  dims.split(parts, ',', -1, /*KeepEmpty=*/false);
  for (StringRef p : parts) {
    p = p.trim();
    if (p.empty())
      continue;
    int64_t d;
    if (p.getAsInteger(10, d) || d < 0)
      return fileError(path, "malformed .npy shape '(" + dims + ")'");
    result.shape.push_back(d);
  }
  return std::move(result);
}

Expected<HostTensor> blockc::parseNpy(StringRef bytes, StringRef path) {
  Expected<NpyHeader> header = parseNpyHeader(bytes, path);
  if (!header)
    return header.takeError();
  StringRef dtype = header->dtype;
  bool isHalf = dtype == "<f2" || dtype == "=f2" || dtype == "f2";
  if (dtype == "<f8" || dtype == "=f8" || dtype == "f8")
    return fileError(path, "holds float64 ('" + dtype +
                               "'), which blockc does not read: save it as "
                               "float32 (numpy: "
                               "numpy.save(path, x.astype(numpy.float32)))");
  if (dtype != "<f4" && dtype != "=f4" && dtype != "f4" && !isHalf)
    return fileError(path, "unsupported dtype '" + dtype +
                               "' (expected '<f4', float32, or '<f2', "
                               "float16)");
  if (header->fortranOrder)
    return fileError(path, "Fortran-order arrays are not supported "
                           "(expected C order)");
  HostTensor t;
  t.shape = header->shape;
  uint64_t n, need;
  if (!checkedNumElements(t.shape, n) || mulOverflows(n, isHalf ? 2 : 4, need))
    return fileError(path, "shape " + formatShape(t.shape) + " is too large");
  uint64_t available = bytes.size() - header->dataOffset;
  if (available != need)
    return fileError(path, "data size mismatch: shape " + formatShape(t.shape) +
                               " needs " + Twine(need) + " bytes, file has " +
                               Twine(available) + " (truncated or corrupt)");
  if (isHalf)
    t.elementType = ElementType::F16;
  t.allocate();
  if (need != 0) // found by blockc-fuzz-tensor-files: data() of an empty
                 // vector is null, and memcpy from/to null is UB
    std::memcpy(t.bytes(), bytes.data() + header->dataOffset, need);
  // Activations are f32 on the host; f16 files are widened.
  return isHalf ? convertElements(t, ElementType::F32) : t;
}

/// Writes a file through `write` into a temporary file in the same
/// directory that is renamed over `path`: a failure never leaves a partial
/// file.
static Error writeAtomically(StringRef path,
                             function_ref<void(raw_ostream &)> write) {
  SmallString<256> tmp;
  int fd;
  if (std::error_code ec =
          sys::fs::createUniqueFile(path + ".tmp-%%%%%%", fd, tmp))
    return fileError(path, "cannot write output: " + ec.message());
  {
    raw_fd_ostream os(fd, /*shouldClose=*/true);
    write(os);
    os.close();
    if (os.has_error()) {
      std::error_code ec = os.error();
      os.clear_error();
      sys::fs::remove(tmp);
      return fileError(path, "cannot write output: " + ec.message());
    }
  }
  if (std::error_code ec = sys::fs::rename(tmp, path)) {
    sys::fs::remove(tmp);
    return fileError(path, "cannot write output: " + ec.message());
  }
  return Error::success();
}

Error blockc::writeSafeTensors(
    StringRef path, ArrayRef<SafeTensorsEntry> entries,
    const std::vector<std::pair<std::string, std::string>> &metadata) {
  if (Error e = checkWritable(path))
    return e;
  json::Object header;
  json::Object meta;
  for (const auto &[k, v] : metadata)
    meta[k] = v;
  if (!metadata.empty())
    header["__metadata__"] = std::move(meta);
  uint64_t offset = 0;
  for (const SafeTensorsEntry &e : entries) {
    json::Array shape;
    for (int64_t d : e.shape)
      shape.push_back(d);
    header[e.name] =
        json::Object{{"dtype", e.dtype},
                     {"shape", std::move(shape)},
                     {"data_offsets", json::Array{offset, offset + e.bytes}}};
    offset += e.bytes;
  }
  std::string text;
  raw_string_ostream(text) << json::Value(std::move(header));
  text.append((8 - text.size() % 8) % 8, ' ');

  return writeAtomically(path, [&](raw_ostream &os) {
    char len[8];
    support::endian::write64le(len, text.size());
    os.write(len, 8);
    os << text;
    for (const SafeTensorsEntry &e : entries)
      if (e.bytes)
        os.write(static_cast<const char *>(e.data), e.bytes);
  });
}

Error blockc::checkWritable(StringRef path) {
  SmallString<256> dir(path);
  sys::path::remove_filename(dir);
  if (dir.empty())
    dir = ".";
  if (!sys::fs::is_directory(dir))
    return fileError(path, "cannot write output: directory '" + dir +
                               "' does not exist");
  if (sys::fs::access(dir, sys::fs::AccessMode::Write))
    return fileError(path, "cannot write output: directory '" + dir +
                               "' is not writable");
  if (sys::fs::is_directory(path))
    return fileError(path, "cannot write output: path is a directory");
  return Error::success();
}

Error blockc::writeNpyBytes(StringRef path, StringRef descr,
                            ArrayRef<int64_t> shape, StringRef data) {
  // The shape as numpy.save writes it: "(2, 7, 64)", "(7,)", "()".
  std::string dims = "(";
  for (int64_t d : shape)
    dims += std::to_string(d) + ", ";
  if (shape.size() > 1)
    dims.resize(dims.size() - 2);
  else if (shape.size() == 1)
    dims.pop_back();
  dims += ")";
  std::string header = "{'descr': '" + descr.str() +
                       "', 'fortran_order': False, 'shape': " + dims + ", }";
  // Magic (6) + version (2) + length (2) + header, padded with spaces and
  // ending in a newline to a multiple of 64 bytes.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';

  return writeAtomically(path, [&](raw_ostream &os) {
    os << "\x93NUMPY" << char(1) << char(0);
    char len[2];
    support::endian::write16le(len, static_cast<uint16_t>(header.size()));
    os.write(len, 2);
    os << header << data;
  });
}

Error blockc::writeNpy(StringRef path, const HostTensor &tensor) {
  if (Error e = checkWritable(path))
    return e;
  return writeNpyBytes(
      path, "<f4", tensor.shape,
      StringRef(reinterpret_cast<const char *>(tensor.data.data()),
                tensor.data.size() * sizeof(float)));
}

HostTensor blockc::sliceTensor(const HostTensor &t, int64_t axis, int64_t begin,
                               int64_t end) {
  // View the tensor as [outer, dim, inner] around `axis`.
  int64_t outer = 1, inner = 1, dim = t.shape[axis];
  for (int64_t i = 0; i < axis; ++i)
    outer *= t.shape[i];
  for (size_t i = axis + 1; i < t.shape.size(); ++i)
    inner *= t.shape[i];
  HostTensor r;
  r.shape = t.shape;
  r.shape[axis] = end - begin;
  r.elementType = t.elementType;
  r.allocate();
  size_t e = t.elementBytes(), rowBytes = inner * e;
  auto *dst = static_cast<char *>(r.bytes());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t d = begin; d < end; ++d, dst += rowBytes)
      std::memcpy(
          dst, static_cast<const char *>(t.bytes()) + (o * dim + d) * rowBytes,
          rowBytes);
  return r;
}

HostTensor blockc::transpose2D(const HostTensor &t) {
  int64_t rows = t.shape[0], cols = t.shape[1];
  HostTensor r;
  r.shape = {cols, rows};
  r.elementType = t.elementType;
  r.allocate();
  const auto *f32 = static_cast<const float *>(t.bytes());
  const auto *b16 = static_cast<const uint16_t *>(t.bytes());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      if (t.elementType == ElementType::F32)
        r.data[j * rows + i] = f32[i * cols + j];
      else
        r.bits16[j * rows + i] = b16[i * cols + j];
    }
  return r;
}
