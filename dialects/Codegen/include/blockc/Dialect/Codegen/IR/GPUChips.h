//===- GPUChips.h - The GPU chip table and CUDA's limits --------*- C++ -*-===//
//
// The GPU machine facts of blockc: the limits every CUDA chip since sm_50
// shares, which the kernel passes, the attribute verifiers and the profile
// read, and the table of known chips and architectures (GPUChips.cpp)
// behind #blockc_codegen.gpu_target (GPUTargetAttr::lookup / getKnown).
//
// The table lives in the codegen dialect, not in lib/Target: the dialect's
// verifiers check GPU configurations against it (the largest opt-in shared
// memory of any known chip) and GPUTargetAttr is built from its rows, while
// dialects depend on MLIR only. The runtimes (C libraries without MLIR)
// keep their own copy of CUDA's launch limits.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_DIALECT_CODEGEN_IR_GPUCHIPS_H
#define BLOCKC_DIALECT_CODEGEN_IR_GPUCHIPS_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <utility>

namespace blockc::codegen {

/// Threads of a warp.
constexpr int64_t kWarpSize = 32;
/// Threads of a block.
constexpr int64_t kMaxThreadsPerBlock = 1024;
/// Static shared memory of a block (more needs dynamic shared memory and
/// the chip's opt-in limit, GPUTargetAttr::getSharedPerBlock).
constexpr int64_t kMaxStaticSharedBytes = 48 * 1024;
/// gridDim.y and gridDim.z.
constexpr int64_t kMaxGridYZ = 65535;
/// 32-bit registers of a multiprocessor and of a thread.
constexpr int64_t kRegistersPerSM = 65536;
constexpr int64_t kMaxRegistersPerThread = 255;
/// Registers are allocated per warp in units of 256.
constexpr int64_t kRegisterAllocationUnit = 256;
/// Shared memory the driver reserves per block (sm_80 and newer).
constexpr int64_t kReservedSharedPerBlock = 1024;

/// {N, arch-specific} of "sm_N" / "sm_Na".
std::pair<int64_t, bool> parseGPUArch(llvm::StringRef arch);

/// The PTX ISA version (e.g. 80 for PTX 8.0) that code for the known
/// architecture `arch` needs (the table of known architectures); 0 if
/// unknown.
int64_t getKnownArchPtxVersion(llvm::StringRef arch);

/// Why the GPU architecture `arch` and chip `name` (either may be empty:
/// the other's default) are not a known target, naming the known ones; ""
/// if they are.
std::string checkKnownGPU(llvm::StringRef arch, llvm::StringRef name);

} // namespace blockc::codegen

#endif // BLOCKC_DIALECT_CODEGEN_IR_GPUCHIPS_H
