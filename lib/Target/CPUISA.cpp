//===- CPUISA.cpp - The CPU ISAs and their machine facts ------------------===//
//
// The ISA and extension tables, and the queries of the compiling machine
// (LLVM's host feature detection, CPUID and sysfs for the caches, Linux's
// AMX permission).
//
//===----------------------------------------------------------------------===//

#include "blockc/Target/CPUISA.h"

#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/TargetParser/Host.h"

#include <array>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__x86_64__) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

using namespace blockc;

//===----------------------------------------------------------------------===//
// The tables
//===----------------------------------------------------------------------===//

namespace {

// F16C (vcvtph2ps / vcvtps2ph: f16 <-> f32 in registers) comes with every
// AVX2 CPU (Intel Haswell and AMD Zen on).
constexpr llvm::StringRef kAVX512Features[] = {
    "+avx512f", "+avx512vl", "+avx512bw", "+avx512dq", "+f16c"};
// Disabling AVX-512F disables every AVX-512 extension with it.
constexpr llvm::StringRef kAVX2Features[] = {"+avx2", "+fma", "+f16c",
                                             "-avx512f"};
// Disabling AVX disables AVX2, FMA and AVX-512 with it.
constexpr llvm::StringRef kSSEFeatures[] = {"-avx"};

// The tuning of the pinned vector ISAs is Zen 3's model: the register tiles
// were sized and checked free of spills under it (no-spill.test). Intel's
// models prefer 256-bit vectors, which splits the AVX-512 kernels'
// registers in two (49 spills in the D = 64 attention kernel), and Zen 4's
// and 5's schedules spill one register there.
constexpr CPUISAInfo kISAs[] = {
    {CPUISA::Host,
     "host",
     "the compiling machine's (resolved when the pipeline is built)",
     "this machine's (default; --dump-pass-pipeline prints what it resolved "
     "to)",
     0,
     0,
     "",
     "",
     {}},
    {CPUISA::AVX512, "avx512", "AVX-512: 32 x 16 f32 lanes", "AVX-512", 16, 32,
     "x86-64-v4", "znver3", kAVX512Features},
    {CPUISA::AVX2, "avx2", "AVX2 + FMA: 16 x 8 f32 lanes", "AVX2 + FMA", 8, 16,
     "x86-64-v3", "znver3", kAVX2Features},
    {CPUISA::SSE, "sse", "SSE2: 16 x 4 f32 lanes", "SSE2 (any x86-64)", 4, 16,
     "x86-64", "generic", kSSEFeatures},
};

constexpr llvm::StringRef kAVX512BF16Features[] = {"+avx512bf16"};
constexpr llvm::StringRef kAVX512VNNIFeatures[] = {"+avx512vnni"};
constexpr llvm::StringRef kAVXVNNIFeatures[] = {"+avxvnni"};
constexpr llvm::StringRef kAMXBF16Features[] = {"+amx-tile", "+amx-bf16"};

constexpr CPUFeatureInfo kFeatures[] = {
    {CPUFeature::AVX512BF16, "avx512bf16", "vdpbf16ps for bf16 projections",
     CPUISA::AVX512, kAVX512BF16Features},
    {CPUFeature::AVX512VNNI, "avx512vnni", "vpdpbusd on zmm registers",
     CPUISA::AVX512, kAVX512VNNIFeatures},
    {CPUFeature::AVXVNNI, "avxvnni", "vpdpbusd on ymm registers", CPUISA::AVX2,
     kAVXVNNIFeatures},
    {CPUFeature::AMXBF16, "amx-bf16", "AMX tiles for bf16 prefill",
     CPUISA::AVX512, kAMXBF16Features},
};

} // namespace

llvm::ArrayRef<CPUISAInfo> blockc::getCPUISAs() { return kISAs; }

const CPUISAInfo &blockc::getCPUISAInfo(CPUISA isa) {
  for (const CPUISAInfo &info : kISAs)
    if (info.isa == isa)
      return info;
  llvm_unreachable("unknown ISA");
}

const CPUISAInfo &blockc::getCPUISAInfo(codegen::ISA isa) {
  switch (isa) {
  case codegen::ISA::avx512:
    return getCPUISAInfo(CPUISA::AVX512);
  case codegen::ISA::avx2:
    return getCPUISAInfo(CPUISA::AVX2);
  case codegen::ISA::sse:
    return getCPUISAInfo(CPUISA::SSE);
  }
  llvm_unreachable("unknown ISA");
}

llvm::StringRef blockc::stringifyCPUISA(CPUISA isa) {
  return getCPUISAInfo(isa).name;
}

codegen::ISA blockc::getCodegenISA(CPUISA isa) {
  switch (isa) {
  case CPUISA::AVX512:
    return codegen::ISA::avx512;
  case CPUISA::AVX2:
    return codegen::ISA::avx2;
  case CPUISA::SSE:
  case CPUISA::Host:
    break;
  }
  assert(isa == CPUISA::SSE && "the host's ISA is resolved first");
  return codegen::ISA::sse;
}

llvm::StringRef blockc::stringifyCPUVendor(CPUVendor vendor) {
  switch (vendor) {
  case CPUVendor::Auto:
    return "auto";
  case CPUVendor::Generic:
    return "generic";
  case CPUVendor::Intel:
    return "intel";
  case CPUVendor::AMD:
    return "amd";
  }
  llvm_unreachable("unknown vendor");
}

llvm::StringRef CPUVendorOptionValues::getHelp(CPUVendor vendor) {
  switch (vendor) {
  case CPUVendor::Auto:
    return "this machine's with isa=host, generic with a pinned ISA "
           "(default)";
  case CPUVendor::Generic:
    return "any x86-64 CPU (the choices measured on Intel's cores)";
  case CPUVendor::Intel:
    return "Intel's cores";
  case CPUVendor::AMD:
    return "AMD's Zen cores";
  }
  llvm_unreachable("unknown vendor");
}

codegen::CPUVendor blockc::getCodegenCPUVendor(CPUVendor vendor) {
  switch (vendor) {
  case CPUVendor::Intel:
    return codegen::CPUVendor::intel;
  case CPUVendor::AMD:
    return codegen::CPUVendor::amd;
  case CPUVendor::Generic:
  case CPUVendor::Auto:
    break;
  }
  assert(vendor == CPUVendor::Generic && "the vendor is resolved first");
  return codegen::CPUVendor::generic;
}

bool blockc::cpuISAIncludes(CPUISA isa, CPUISA needs) {
  if (isa == needs)
    return true;
  return isa == CPUISA::AVX512 && needs == CPUISA::AVX2;
}

llvm::ArrayRef<CPUFeatureInfo> blockc::getCPUFeatures() { return kFeatures; }

const CPUFeatureInfo &blockc::getCPUFeatureInfo(CPUFeature feature) {
  for (const CPUFeatureInfo &info : kFeatures)
    if (info.feature == feature)
      return info;
  llvm_unreachable("no row for this CPU feature");
}

llvm::StringRef blockc::stringifyCPUFeature(CPUFeature feature) {
  if (feature == CPUFeature::None)
    return "none";
  return getCPUFeatureInfo(feature).name;
}

llvm::StringRef blockc::getCPUFeatureISAs(CPUFeature feature) {
  return getCPUFeatureInfo(feature).needs == CPUISA::AVX512 ? "avx512"
                                                            : "avx2 or avx512";
}

llvm::StringRef blockc::getCPUFeatureOptionHelp(CPUFeature feature,
                                                bool commandLine) {
  // The option parsers keep the help by reference: built once.
  static const auto helps = [] {
    std::array<std::array<std::string, 2>, std::size(kFeatures)> texts;
    for (auto [i, info] : llvm::enumerate(kFeatures))
      for (bool dash : {false, true})
        texts[i][dash] = (info.help + " (" + (dash ? "-" : "") +
                          "isa=" + getCPUFeatureISAs(info.feature) + ")")
                             .str();
    return texts;
  }();
  for (auto [i, info] : llvm::enumerate(kFeatures))
    if (info.feature == feature)
      return helps[i][commandLine];
  llvm_unreachable("no row for this CPU feature");
}

//===----------------------------------------------------------------------===//
// The compiling machine
//===----------------------------------------------------------------------===//

namespace {

/// Whether this process may use the AMX tile registers: Linux hands out the
/// tile data state on request (arch_prctl ARCH_REQ_XCOMP_PERM), once per
/// process; the kernels ask again before their first tile instruction.
bool amxPermitted() {
#if defined(__x86_64__) && defined(__linux__)
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}

/// Whether the host has `f` (LLVM's name), AMX also granted by the OS.
bool hostHas(const llvm::StringMap<bool> &hostFeatures, CPUFeature f) {
  if (f == CPUFeature::AMXBF16)
    return hostFeatures.lookup("amx-bf16") && hostFeatures.lookup("amx-tile") &&
           amxPermitted();
  return hostFeatures.lookup(stringifyCPUFeature(f));
}

#if defined(__x86_64__) || defined(__i386__)
/// Size in bytes of the host's data or unified cache of `level` from the
/// CPUID deterministic cache parameters (leaf 4 on Intel, 0x8000001D on
/// AMD), else the legacy AMD leaves (which some hypervisors keep when they
/// hide the others), or 0.
int64_t cpuidCacheBytes(int level) {
  for (unsigned leaf : {4u, 0x8000001Du}) {
    if (__get_cpuid_max(leaf & 0x80000000u, nullptr) < leaf)
      continue;
    for (unsigned i = 0; i < 16; ++i) {
      unsigned a, b, c, d;
      __cpuid_count(leaf, i, a, b, c, d);
      unsigned type = a & 0x1f; // 0: no more caches, 2: instruction
      if (type == 0)
        break;
      if (((a >> 5) & 7) != static_cast<unsigned>(level) || type == 2)
        continue;
      int64_t ways = ((b >> 22) & 0x3ff) + 1;
      int64_t partitions = ((b >> 12) & 0x3ff) + 1;
      int64_t line = (b & 0xfff) + 1;
      int64_t sets = static_cast<int64_t>(c) + 1;
      return ways * partitions * line * sets;
    }
  }
  // The older extended leaves (AMD; Intel fills in the L2 one).
  unsigned a, b, c, d;
  if (level == 1 && __get_cpuid(0x80000005u, &a, &b, &c, &d))
    return static_cast<int64_t>(c >> 24) * 1024;
  if (level == 2 && __get_cpuid(0x80000006u, &a, &b, &c, &d))
    return static_cast<int64_t>(c >> 16) * 1024;
  return 0;
}
#else
int64_t cpuidCacheBytes(int) { return 0; }
#endif

} // namespace

std::string blockc::missingHostFeature(CPUISA isa) {
  // The features the code is compiled with ("+f") must be the host's.
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  for (llvm::StringRef f : getCPUISAInfo(isa).llvmFeatures)
    if (f.consume_front("+") && !features.lookup(f))
      return f.str();
  return "";
}

CPUISA blockc::getHostISA() {
  for (CPUISA isa : {CPUISA::AVX512, CPUISA::AVX2})
    if (missingHostFeature(isa).empty())
      return isa;
  return CPUISA::SSE;
}

bool blockc::hostHasFeature(CPUFeature feature) {
  return hostHas(llvm::sys::getHostCPUFeatures(), feature);
}

/// AMD's vdpbf16ps (Zen 4 and 5 issue it at the FMA rate, twice the
/// products). Intel's AVX512_BF16 CPUs issue the zmm form at half the FMA
/// rate (measured on a Xeon VM, family 6 model 167: 113 against 226 GFLOP/s
/// of FMAs), where the f32 kernels are as fast; -cpu-features=avx512bf16
/// still selects it.
bool blockc::hostHasFastBF16Dot() {
  return llvm::StringRef(llvm::sys::getHostCPUName()).starts_with("znver");
}

llvm::SmallVector<CPUFeature> blockc::getHostFeatures(CPUISA isa) {
  llvm::SmallVector<CPUFeature> enabled;
  llvm::StringMap<bool> hostFeatures = llvm::sys::getHostCPUFeatures();
  for (const CPUFeatureInfo &info : kFeatures) {
    CPUFeature f = info.feature;
    if (cpuISAIncludes(isa, info.needs) && hostHas(hostFeatures, f) &&
        (f != CPUFeature::AVX512BF16 || hostHasFastBF16Dot() ||
         hostHas(hostFeatures, CPUFeature::AMXBF16)))
      enabled.push_back(f);
  }
  return enabled;
}

CPUVendor blockc::getHostCPUVendor() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned maxLeaf, b, c, d;
  if (!__get_cpuid(0, &maxLeaf, &b, &c, &d))
    return CPUVendor::Generic;
  char name[13];
  std::memcpy(name, &b, 4);
  std::memcpy(name + 4, &d, 4);
  std::memcpy(name + 8, &c, 4);
  name[12] = 0;
  llvm::StringRef vendor(name);
  if (vendor == "GenuineIntel")
    return CPUVendor::Intel;
  // Hygon's Dhyana is a Zen core.
  if (vendor == "AuthenticAMD" || vendor == "HygonGenuine")
    return CPUVendor::AMD;
#endif
  return CPUVendor::Generic;
}

int64_t blockc::getHostCacheBytes(int level) {
  if (int64_t bytes = cpuidCacheBytes(level))
    return bytes;
  for (int index = 0; index < 8; ++index) {
    std::string dir =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    auto read = [&](const char *file) -> std::string {
      auto buffer = llvm::MemoryBuffer::getFile(dir + "/" + file,
                                                /*IsText=*/true);
      return buffer ? (*buffer)->getBuffer().trim().str() : std::string();
    };
    std::string levelText = read("level");
    if (levelText.empty())
      return 0;
    if (levelText != std::to_string(level) || read("type") == "Instruction")
      continue;
    std::string sizeText = read("size");
    llvm::StringRef size = sizeText;
    int64_t scale = 1;
    if (size.consume_back("K"))
      scale = 1024;
    else if (size.consume_back("M"))
      scale = 1024 * 1024;
    int64_t value = 0;
    if (size.getAsInteger(10, value))
      return 0;
    return value * scale;
  }
  return 0;
}
