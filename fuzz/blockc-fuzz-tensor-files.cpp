//===- blockc-fuzz-tensor-files.cpp - fuzz the safetensors/npy readers ----===//
//
// The first byte picks the reader: even bytes go to the safetensors reader
// (which validates the header, then every tensor is loaded as f32 and
// viewed in its stored type), both as a file given directly and as a model
// folder's shard (any dtype listed, only float ones loadable); odd ones to
// the .npy reader and to the parser of a folder's
// model.safetensors.index.json. Errors are expected; crashes, out-of-bounds
// reads and undefined behaviour are findings.
//
//===----------------------------------------------------------------------===//

#include "blockc/Support/Checkpoint.h"
#include "blockc/Support/TensorFiles.h"

#include "llvm/Support/MemoryBuffer.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  llvm::StringRef bytes(reinterpret_cast<const char *>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    for (bool anyDType : {false, true}) {
      auto file = blockc::SafeTensorsFile::fromBuffer(
          llvm::MemoryBuffer::getMemBufferCopy(bytes, "fuzz.safetensors"),
          "fuzz.safetensors", anyDType);
      if (!file) {
        llvm::consumeError(file.takeError());
        continue;
      }
      for (const auto &entry : file->getEntries()) {
        auto tensor = file->load(entry.getKey());
        if (!tensor)
          llvm::consumeError(tensor.takeError());
        auto view = file->view(entry.getKey(), blockc::ElementType::BF16);
        if (!view) {
          llvm::consumeError(view.takeError());
          continue;
        }
        // Touch the last element: a view must lie inside the file.
        int64_t n = view->numElements();
        if (n > 0) {
          volatile uint16_t last =
              static_cast<const uint16_t *>(view->bytes())[n - 1];
          (void)last;
        }
      }
    }
    return 0;
  }
  auto tensor = blockc::parseNpy(bytes, "fuzz.npy");
  if (!tensor)
    llvm::consumeError(tensor.takeError());
  auto index = blockc::Checkpoint::parseIndex(bytes, "fuzz.index.json");
  if (!index)
    llvm::consumeError(index.takeError());
  return 0;
}
