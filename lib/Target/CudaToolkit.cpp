//===- CudaToolkit.cpp - finding the CUDA toolkit -------------------------===//

#include "blockc/Target/CudaToolkit.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cstdlib>

std::optional<std::string>
blockc::findCudaToolkit(llvm::ArrayRef<llvm::StringRef> tools,
                        llvm::StringRef given) {
  auto hasTools = [&](llvm::StringRef dir) {
    llvm::SmallString<256> bin(dir);
    llvm::sys::path::append(bin, "bin");
    return llvm::all_of(tools, [&](llvm::StringRef tool) {
      return static_cast<bool>(llvm::sys::findProgramByName(tool, {bin}));
    });
  };
  if (!given.empty())
    return hasTools(given) ? std::optional<std::string>(given.str())
                           : std::nullopt;
  if (auto p = llvm::sys::findProgramByName(tools.front())) {
    llvm::StringRef dir =
        llvm::sys::path::parent_path(llvm::sys::path::parent_path(*p));
    if (hasTools(dir))
      return dir.str();
  }
  for (const char *var : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
    if (const char *dir = std::getenv(var))
      if (hasTools(dir))
        return std::string(dir);
  if (hasTools("/usr/local/cuda"))
    return std::string("/usr/local/cuda");
  return std::nullopt;
}
