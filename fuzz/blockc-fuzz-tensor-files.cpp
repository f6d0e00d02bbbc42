//===- blockc-fuzz-tensor-files.cpp - fuzz the safetensors/npy readers ----===//
//
// The first byte picks the reader: even bytes go to the safetensors reader
// (which validates the header, then every tensor is loaded as f32), odd
// ones to the .npy reader. Errors are expected; crashes, out-of-bounds reads
// and undefined behaviour are findings.
//
//===----------------------------------------------------------------------===//

#include "blockc/Support/TensorFiles.h"

#include "llvm/Support/MemoryBuffer.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  llvm::StringRef bytes(reinterpret_cast<const char *>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    auto file = blockc::SafeTensorsFile::fromBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(bytes, "fuzz.safetensors"),
        "fuzz.safetensors");
    if (!file) {
      llvm::consumeError(file.takeError());
      return 0;
    }
    for (const auto &entry : file->getEntries()) {
      auto tensor = file->load(entry.getKey());
      if (!tensor)
        llvm::consumeError(tensor.takeError());
    }
    return 0;
  }
  auto tensor = blockc::parseNpy(bytes, "fuzz.npy");
  if (!tensor)
    llvm::consumeError(tensor.takeError());
  return 0;
}
