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
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

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

//===----------------------------------------------------------------------===//
// safetensors
//===----------------------------------------------------------------------===//

Expected<SafeTensorsFile> SafeTensorsFile::open(StringRef path) {
  auto bufOr = MemoryBuffer::getFile(path, /*IsText=*/false,
                                     /*RequiresNullTerminator=*/false);
  if (!bufOr)
    return fileError(path, "cannot open safetensors file: " +
                               bufOr.getError().message());
  return fromBuffer(std::move(*bufOr), path);
}

Expected<SafeTensorsFile>
SafeTensorsFile::fromBuffer(std::unique_ptr<MemoryBuffer> contents,
                            StringRef path) {
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

Expected<HostTensor> SafeTensorsFile::load(StringRef name) const {
  auto it = entries.find(name);
  if (it == entries.end())
    return fileError(path, "no tensor named '" + name + "'");
  const Entry &e = it->second;
  HostTensor t;
  t.shape = e.shape;
  uint64_t n = e.dtype == "F32" ? (e.end - e.begin) / 4 : (e.end - e.begin) / 2;
  t.data.resize(n);
  const char *src = buffer->getBufferStart() + dataStart + e.begin;
  if (e.dtype == "F32") {
    if (n != 0) // an empty vector's data() may be null (UB for memcpy)
      std::memcpy(t.data.data(), src, n * 4);
  } else {
    bool isHalf = e.dtype == "F16";
    for (uint64_t i = 0; i < n; ++i) {
      uint16_t bits = support::endian::read16le(src + 2 * i);
      t.data[i] = isHalf ? halfToFloat(bits) : bfloat16ToFloat(bits);
    }
  }
  return t;
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

Expected<HostTensor> blockc::parseNpy(StringRef bytes, StringRef path) {
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

  std::optional<StringRef> descr = npyField(header, "descr");
  if (!descr || descr->size() < 2 || (*descr)[0] != '\'')
    return fileError(path, "malformed .npy header (no 'descr')");
  StringRef dtype = descr->drop_front().split('\'').first;
  if (dtype != "<f4" && dtype != "=f4" && dtype != "f4")
    return fileError(path, "unsupported dtype '" + dtype +
                               "' (expected '<f4', float32)");
  std::optional<StringRef> fortran = npyField(header, "fortran_order");
  if (!fortran)
    return fileError(path, "malformed .npy header (no 'fortran_order')");
  if (!fortran->starts_with("False"))
    return fileError(path, "Fortran-order arrays are not supported "
                           "(expected C order)");
  std::optional<StringRef> shapeText = npyField(header, "shape");
  if (!shapeText || !shapeText->starts_with("("))
    return fileError(path, "malformed .npy header (no 'shape')");
  StringRef dims = shapeText->drop_front().split(')').first;
  HostTensor t;
  SmallVector<StringRef> parts;
  dims.split(parts, ',', -1, /*KeepEmpty=*/false);
  for (StringRef p : parts) {
    p = p.trim();
    if (p.empty())
      continue;
    int64_t d;
    if (p.getAsInteger(10, d) || d < 0)
      return fileError(path, "malformed .npy shape '(" + dims + ")'");
    t.shape.push_back(d);
  }
  uint64_t n, need;
  if (!checkedNumElements(t.shape, n) || mulOverflows(n, 4, need))
    return fileError(path, "shape " + formatShape(t.shape) + " is too large");
  uint64_t available = bytes.size() - headerStart - headerLen;
  if (available != need)
    return fileError(path, "data size mismatch: shape " + formatShape(t.shape) +
                               " needs " + Twine(need) + " bytes, file has " +
                               Twine(available) + " (truncated or corrupt)");
  t.data.resize(n);
  if (need != 0) // found by blockc-fuzz-tensor-files: data() of an empty
                  // vector is null, and memcpy from/to null is UB
    std::memcpy(t.data.data(), bytes.data() + headerStart + headerLen, need);
  return t;
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

Error blockc::writeNpy(StringRef path, const HostTensor &tensor) {
  if (Error e = checkWritable(path))
    return e;
  std::string shape = "(";
  for (int64_t d : tensor.shape)
    shape += std::to_string(d) + ",";
  if (tensor.shape.size() > 1)
    shape.pop_back(); // "(2,7,64)" but "(7,)" for rank 1
  shape += ")";
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad so that magic + version + length + header is a multiple of 64.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';

  SmallString<256> tmp;
  int fd;
  if (std::error_code ec =
          sys::fs::createUniqueFile(path + ".tmp-%%%%%%", fd, tmp))
    return fileError(path, "cannot write output: " + ec.message());
  {
    raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << "\x93NUMPY" << char(1) << char(0);
    char len[2];
    support::endian::write16le(len, static_cast<uint16_t>(header.size()));
    os.write(len, 2);
    os << header;
    os.write(reinterpret_cast<const char *>(tensor.data.data()),
             tensor.data.size() * sizeof(float));
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
  r.data.reserve(outer * (end - begin) * inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t d = begin; d < end; ++d) {
      const float *row = t.data.data() + (o * dim + d) * inner;
      r.data.insert(r.data.end(), row, row + inner);
    }
  return r;
}

HostTensor blockc::transpose2D(const HostTensor &t) {
  int64_t rows = t.shape[0], cols = t.shape[1];
  HostTensor r;
  r.shape = {cols, rows};
  r.data.resize(t.data.size());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      r.data[j * rows + i] = t.data[i * cols + j];
  return r;
}
