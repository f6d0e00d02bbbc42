//===- CudaToolkit.h - finding the CUDA toolkit -----------------*- C++ -*-===//
//
// Where ptxas and fatbinary are, for the drivers (blockc -emit=cubin|fatbin)
// and the profile (ptxas -v).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_TARGET_CUDATOOLKIT_H
#define BLOCKC_TARGET_CUDATOOLKIT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace blockc {

/// The CUDA toolkit directory whose bin/ holds every tool in `tools`:
/// `given` (-cuda-toolkit) if not empty, else the directory above the first
/// tool found on PATH, else $CUDA_ROOT, $CUDA_HOME, $CUDA_PATH and
/// /usr/local/cuda. The process environment is left alone.
std::optional<std::string>
findCudaToolkit(llvm::ArrayRef<llvm::StringRef> tools,
                llvm::StringRef given = "");

} // namespace blockc

#endif // BLOCKC_TARGET_CUDATOOLKIT_H
