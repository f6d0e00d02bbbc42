//===- GPUProfile.cpp - per-kernel speed-of-light profile -----------------===//
//
// Aggregates the emulator's per-launch counters per kernel, adds ptxas's
// registers and the occupancy, and bounds each kernel's time on the target
// chip (docs/GPUEmulator.md#profile).
//
//===----------------------------------------------------------------------===//

#include "blockc/ExecutionEngine/GPUProfile.h"
#include "blockc/Compiler/Compiler.h"
#include "blockc/Support/Error.h"
#include "blockc/Target/CudaToolkit.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/ToolOutputFile.h"

#include <algorithm>
#include <cmath>

using namespace blockc;
using blockc::codegen::GPUTargetAttr;

namespace {

using codegen::kReservedSharedPerBlock;
using codegen::kWarpSize;
constexpr int64_t kRegisterUnit = codegen::kRegisterAllocationUnit;

/// The terms of a bound: microseconds on the tensor cores, the CUDA cores
/// and DRAM.
struct BoundTerms {
  double tensorUs = 0, fp32Us = 0, dramUs = 0;
};

BoundTerms termsOf(const GPULaunchCounters &c, GPUTargetAttr target) {
  // GFLOP/s * 1e3 = FLOP/us; GB/s * 1e3 = B/us.
  double bf16 = static_cast<double>(target.getBf16Gflops()) * 1e3;
  double fp32 = static_cast<double>(target.getFp32Gflops()) * 1e3;
  double tf32 = target.getTf32Gflops() > 0
                    ? static_cast<double>(target.getTf32Gflops()) * 1e3
                    : fp32;
  BoundTerms t;
  t.tensorUs = c.tensorFlops16 / bf16 + c.tensorFlopsTF32 / tf32;
  double cudaCore =
      std::max(0.0, c.flops - c.tensorFlops16 - c.tensorFlopsTF32);
  t.fp32Us = cudaCore / fp32;
  t.dramUs =
      c.uniqueBytes / (static_cast<double>(target.getMemoryGbps()) * 1e3);
  return t;
}

/// The largest of the units' times (tensor cores, CUDA cores and DRAM
/// work at once) plus the launch overhead, and which unit it was.
std::pair<double, std::string> boundOf(const BoundTerms &t, int64_t launches) {
  double overhead = kLaunchOverheadUs * static_cast<double>(launches);
  double most = std::max({t.tensorUs, t.fp32Us, t.dramUs});
  std::string limiter = t.dramUs >= most     ? "dram"
                        : t.tensorUs >= most ? "tensor"
                                             : "fp32";
  if (overhead > most)
    limiter = "launch";
  return {most + overhead, limiter};
}

void add(GPULaunchCounters &sum, const GPULaunchCounters &c) {
  sum.flops += c.flops;
  sum.tensorFlops16 += c.tensorFlops16;
  sum.tensorFlopsTF32 += c.tensorFlopsTF32;
  sum.globalRequests += c.globalRequests;
  sum.globalSectors += c.globalSectors;
  sum.globalBytes += c.globalBytes;
  sum.uniqueBytes += c.uniqueBytes;
  sum.sharedRequests += c.sharedRequests;
  sum.sharedWavefronts += c.sharedWavefronts;
  sum.barriers += c.barriers;
}

/// `rows` as columns padded to their widest cell, the first left-aligned,
/// the middle ones right-aligned (numbers), the last as it is, two spaces
/// apart.
void printAligned(llvm::raw_ostream &os,
                  llvm::ArrayRef<llvm::SmallVector<std::string>> rows) {
  llvm::SmallVector<size_t> widths(rows.front().size(), 0);
  for (const auto &row : rows)
    for (size_t i = 0; i < row.size(); ++i)
      widths[i] = std::max(widths[i], row[i].size());
  for (const auto &row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      if (i)
        os << "  ";
      if (i + 1 == row.size())
        os << row[i];
      else if (i == 0)
        os << llvm::left_justify(row[i], widths[i]);
      else
        os << llvm::right_justify(row[i], widths[i]);
    }
    os << "\n";
  }
}

/// The kernels of `bound` by name (none without it).
llvm::StringMap<const GPUKernelProfile *>
boundsByName(const GPUProfile *bound) {
  llvm::StringMap<const GPUKernelProfile *> bounds;
  if (bound)
    for (const GPUKernelProfile &k : bound->kernels)
      bounds[k.name] = &k;
  return bounds;
}

/// Writes `root` to `path`, indented.
llvm::Error writeJSON(llvm::StringRef path, llvm::json::Object root) {
  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return makeError("cannot write the profile '" + path +
                     "': " + ec.message());
  out.os() << llvm::formatv("{0:2}", llvm::json::Value(std::move(root)))
           << "\n";
  out.keep();
  return llvm::Error::success();
}

std::string dimsText(const std::array<int64_t, 3> &d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" +
         std::to_string(d[2]);
}

} // namespace

double blockc::occupancyOf(GPUTargetAttr target, int64_t threads,
                           int64_t sharedBytes, int64_t registers) {
  int64_t maxWarps = target.getMaxThreadsPerSm() / kWarpSize;
  int64_t warps = std::max<int64_t>(1, (threads + kWarpSize - 1) / kWarpSize);
  int64_t blocks = std::min(maxWarps / warps, target.getMaxBlocksPerSm());
  if (registers > 0) {
    int64_t perWarp = (registers * kWarpSize + kRegisterUnit - 1) /
                      kRegisterUnit * kRegisterUnit;
    blocks = std::min(blocks, target.getRegistersPerSm() / (perWarp * warps));
  }
  if (sharedBytes > 0)
    blocks = std::min(blocks, target.getSharedPerSm() /
                                  (sharedBytes + kReservedSharedPerBlock));
  return static_cast<double>(std::max<int64_t>(blocks, 0) * warps) /
         static_cast<double>(maxWarps);
}

GPUProfile blockc::buildGPUProfile(
    llvm::ArrayRef<GPULaunchCounters> launches, GPUTargetAttr target,
    const llvm::StringMap<PtxasKernelInfo> &ptxas, int64_t sampleBlocks) {
  GPUProfile profile;
  profile.arch = target.getArch().str();
  profile.chip = target.getName().str();
  profile.sampleBlocks = sampleBlocks;
  profile.haveRegisters = !ptxas.empty();
  llvm::StringMap<size_t> index;
  for (const GPULaunchCounters &c : launches) {
    auto [it, inserted] = index.try_emplace(c.kernel, profile.kernels.size());
    if (inserted) {
      GPUKernelProfile k;
      k.name = c.kernel;
      k.grid = c.grid;
      k.block = c.block;
      k.totals.kernel = c.kernel;
      k.totals.sharedBytes = c.sharedBytes;
      auto info = ptxas.find(c.kernel);
      if (info != ptxas.end()) {
        k.registers = info->second.registers;
        k.spillBytes = info->second.spillBytes;
      }
      // Occupancy needs the registers (ptxas): without them it is unknown.
      int64_t threads = c.block[0] * c.block[1] * c.block[2];
      if (k.registers)
        k.occupancy = occupancyOf(target, threads, c.sharedBytes, *k.registers);
      profile.kernels.push_back(std::move(k));
    }
    GPUKernelProfile &k = profile.kernels[it->second];
    ++k.launches;
    add(k.totals, c);
    // Each launch is bounded on its own: a launch cannot overlap its
    // neighbours' memory time with its compute.
    k.boundUs += boundOf(termsOf(c, target), 1).first;
  }
  for (GPUKernelProfile &k : profile.kernels) {
    k.limiter = boundOf(termsOf(k.totals, target), k.launches).second;
    profile.totalFlops += k.totals.flops;
    profile.totalUniqueBytes += k.totals.uniqueBytes;
    profile.totalBoundUs += k.boundUs;
  }
  return profile;
}

void blockc::printGPUProfile(llvm::raw_ostream &os, const GPUProfile &profile) {
  os << "blockc profile: " << profile.kernels.size() << " kernels on "
     << profile.chip << " (" << profile.arch << "), bound = max(FLOPs / peak, "
     << "unique bytes / bandwidth) + "
     << llvm::format("%.1f", kLaunchOverheadUs) << " us per launch";
  if (profile.sampleBlocks > 0)
    os << "; sampled: " << profile.sampleBlocks
       << " thread blocks per launch emulated, counters scaled to the grid "
          "(no profile file written)";
  if (!profile.haveRegisters)
    os << "; registers unknown (no ptxas)";
  os << "\n";
  auto num = [](double v) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::format("%.4g", v);
    return text;
  };
  llvm::SmallVector<llvm::SmallVector<std::string>> rows;
  rows.push_back({"kernel", "launches", "grid", "block", "flops",
                  "tensor_flops", "global_requests", "global_sectors",
                  "global_bytes", "unique_bytes", "shared_requests",
                  "shared_wavefronts", "barriers", "registers", "spill_bytes",
                  "occupancy", "bound_us", "limiter"});
  for (const GPUKernelProfile &k : profile.kernels) {
    const GPULaunchCounters &c = k.totals;
    rows.push_back(
        {k.name, std::to_string(k.launches), dimsText(k.grid),
         dimsText(k.block), num(c.flops),
         num(c.tensorFlops16 + c.tensorFlopsTF32), num(c.globalRequests),
         num(c.globalSectors), num(c.globalBytes), num(c.uniqueBytes),
         num(c.sharedRequests), num(c.sharedWavefronts), num(c.barriers),
         k.registers ? std::to_string(*k.registers) : "-",
         k.spillBytes ? std::to_string(*k.spillBytes) : "-",
         k.occupancy ? llvm::formatv("{0:f2}", *k.occupancy).str() : "-",
         llvm::formatv("{0:f2}", k.boundUs).str(), k.limiter});
  }
  printAligned(os, rows);
  os << "total " << num(profile.totalFlops) << " "
     << num(profile.totalUniqueBytes) << " "
     << llvm::formatv("{0:f2}", profile.totalBoundUs) << "\n";
}

llvm::Error blockc::writeGPUProfileJSON(llvm::StringRef path,
                                        const GPUProfile &profile) {
  llvm::json::Array kernels;
  for (const GPUKernelProfile &k : profile.kernels) {
    const GPULaunchCounters &c = k.totals;
    auto optional = [](const auto &v) -> llvm::json::Value {
      if (v)
        return *v;
      return nullptr;
    };
    kernels.push_back(llvm::json::Object{
        {"name", k.name},
        {"launches", k.launches},
        {"grid", llvm::json::Array{k.grid[0], k.grid[1], k.grid[2]}},
        {"block", llvm::json::Array{k.block[0], k.block[1], k.block[2]}},
        {"flops", c.flops},
        {"tensor_flops", c.tensorFlops16 + c.tensorFlopsTF32},
        {"global_requests", c.globalRequests},
        {"global_sectors", c.globalSectors},
        {"global_bytes", c.globalBytes},
        {"unique_bytes", c.uniqueBytes},
        {"shared_requests", c.sharedRequests},
        {"shared_wavefronts", c.sharedWavefronts},
        {"barriers", c.barriers},
        {"registers", optional(k.registers)},
        {"spill_bytes", optional(k.spillBytes)},
        {"occupancy", optional(k.occupancy)},
        {"bound_us", k.boundUs},
        {"limiter", k.limiter}});
  }
  llvm::json::Object root{
      {"chip", profile.arch},
      {"kernels", std::move(kernels)},
      {"total", llvm::json::Object{{"flops", profile.totalFlops},
                                   {"unique_bytes", profile.totalUniqueBytes},
                                   {"bound_us", profile.totalBoundUs}}}};
  return writeJSON(path, std::move(root));
}

llvm::Expected<std::string>
blockc::compileToPTX(mlir::ModuleOp module, const CompileOptions &options) {
  mlir::OwningOpRef<mlir::ModuleOp> clone = module.clone();
  CompileOptions ptxOptions = options;
  ptxOptions.emulate = ptxOptions.checkBounds = ptxOptions.profile = false;
  ptxOptions.gpuBinary = GPUBinaryFormat::ISA;
  mlir::PassManager pm(module.getContext(), mlir::ModuleOp::getOperationName());
  buildCompilePipeline(pm, ptxOptions, CompileStage::LLVMDialect,
                       ptxOptions.entry);
  if (mlir::failed(pm.run(*clone)))
    return makeError("compiling the kernels to PTX for the profile failed");
  std::string ptx;
  clone->walk([&](mlir::gpu::BinaryOp binary) {
    for (mlir::Attribute attr : binary.getObjects())
      ptx += mlir::cast<mlir::gpu::ObjectAttr>(attr).getObject().getValue();
  });
  return ptx;
}

llvm::Expected<GPUProfile>
blockc::profileRun(mlir::ModuleOp module, const CompileOptions &options,
                   llvm::ArrayRef<GPULaunchCounters> launches,
                   int64_t sampleBlocks) {
  // The module's own target if it has one (blockc-gpu-set-target keeps
  // it), else the options'.
  std::string error;
  GPUTargetAttr target = module->getAttrOfType<GPUTargetAttr>(
      codegen::CodegenDialect::kGpuTargetAttrName);
  if (!target)
    target = GPUTargetAttr::lookup(module.getContext(), options.gpuArch,
                                   options.gpuChip, error);
  if (!target)
    return makeError(error);
  llvm::StringMap<PtxasKernelInfo> ptxas;
  auto ptx = compileToPTX(module, options);
  if (!ptx)
    return ptx.takeError();
  auto info = runPtxasVerbose(*ptx, target.getArch(), options.cudaToolkit);
  if (info)
    ptxas = std::move(*info);
  else
    llvm::consumeError(info.takeError());
  return buildGPUProfile(launches, target, ptxas, sampleBlocks);
}

llvm::Expected<GPUProfile> blockc::readGPUProfile(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return makeError("cannot read the profile '" + path +
                     "': " + buffer.getError().message());
  llvm::StringRef text = (*buffer)->getBuffer();
  GPUProfile profile;
  auto bad = [&](const llvm::Twine &what) {
    return makeError("the profile '" + path + "' " + what);
  };
  if (text.ltrim().starts_with("{")) {
    llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
    if (!json)
      return bad("is not JSON: " + llvm::toString(json.takeError()));
    const llvm::json::Object *root = json->getAsObject();
    const llvm::json::Array *kernels =
        root ? root->getArray("kernels") : nullptr;
    if (!kernels)
      return bad("has no \"kernels\" array");
    if (auto chip = root->getString("chip"))
      profile.arch = chip->str();
    for (const llvm::json::Value &v : *kernels) {
      const llvm::json::Object *k = v.getAsObject();
      auto name = k ? k->getString("name") : std::nullopt;
      auto launches = k ? k->getInteger("launches") : std::nullopt;
      auto boundUs = k ? k->getNumber("bound_us") : std::nullopt;
      if (!name || !launches || !boundUs)
        return bad("has a kernel without name, launches or bound_us");
      GPUKernelProfile kernel;
      kernel.name = name->str();
      kernel.launches = *launches;
      kernel.boundUs = *boundUs;
      if (auto limiter = k->getString("limiter"))
        kernel.limiter = limiter->str();
      profile.totalBoundUs += kernel.boundUs;
      profile.kernels.push_back(std::move(kernel));
    }
    return profile;
  }
  // The printed table: the columns named by its "kernel" header line.
  llvm::SmallVector<llvm::StringRef> lines, header;
  text.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    llvm::SmallVector<llvm::StringRef> fields;
    line.split(fields, ' ', -1, /*KeepEmpty=*/false);
    if (fields.empty())
      continue;
    if (fields[0] == "kernel") {
      header = fields;
      continue;
    }
    if (header.empty() || fields[0] == "total")
      continue;
    if (fields.size() != header.size())
      continue;
    GPUKernelProfile kernel;
    kernel.name = fields[0].str();
    for (size_t i = 1; i < header.size(); ++i) {
      if (header[i] == "launches")
        fields[i].getAsInteger(10, kernel.launches);
      else if (header[i] == "bound_us")
        fields[i].getAsDouble(kernel.boundUs);
      else if (header[i] == "limiter")
        kernel.limiter = fields[i].str();
    }
    profile.totalBoundUs += kernel.boundUs;
    profile.kernels.push_back(std::move(kernel));
  }
  if (profile.kernels.empty())
    return bad("has no kernel table (a --profile JSON file or the table "
               "blockc-run --emulate --profile prints)");
  return profile;
}

void blockc::printMeasuredProfile(llvm::raw_ostream &os,
                                  llvm::ArrayRef<MeasuredKernel> measured,
                                  const GPUProfile *bound) {
  llvm::StringMap<const GPUKernelProfile *> bounds = boundsByName(bound);
  os << "blockc profile: " << measured.size()
     << " kernels measured on the GPU (CUDA events)"
     << (bound ? "" : "; no bound (--profile-bound=FILE)") << "\n";
  llvm::SmallVector<llvm::SmallVector<std::string>> rows;
  rows.push_back({"kernel", "launches", "measured_us", "bound_us",
                  "measured/bound", "limiter"});
  double total = 0, totalBound = 0;
  for (const MeasuredKernel &m : measured) {
    const GPUKernelProfile *b = bounds.lookup(m.name);
    total += m.measuredUs;
    if (b)
      totalBound += b->boundUs;
    rows.push_back(
        {m.name, std::to_string(m.launches),
         llvm::formatv("{0:f2}", m.measuredUs).str(),
         b ? llvm::formatv("{0:f2}", b->boundUs).str() : "-",
         b && b->boundUs > 0
             ? llvm::formatv("{0:f2}", m.measuredUs / b->boundUs).str()
             : "-",
         b ? b->limiter : "-"});
  }
  printAligned(os, rows);
  os << "total " << llvm::formatv("{0:f2}", total) << " us measured";
  if (bound)
    os << ", " << llvm::formatv("{0:f2}", totalBound) << " us bound ("
       << llvm::formatv("{0:f2}", totalBound > 0 ? total / totalBound : 0.0)
       << "x)";
  os << "\n";
}

llvm::Error
blockc::writeMeasuredProfileJSON(llvm::StringRef path, llvm::StringRef arch,
                                 llvm::ArrayRef<MeasuredKernel> measured,
                                 const GPUProfile *bound) {
  llvm::StringMap<const GPUKernelProfile *> bounds = boundsByName(bound);
  llvm::json::Array kernels;
  double total = 0, totalBound = 0;
  for (const MeasuredKernel &m : measured) {
    const GPUKernelProfile *b = bounds.lookup(m.name);
    total += m.measuredUs;
    totalBound += b ? b->boundUs : 0;
    kernels.push_back(llvm::json::Object{
        {"name", m.name},
        {"launches", m.launches},
        {"measured_us", m.measuredUs},
        {"bound_us", b ? llvm::json::Value(b->boundUs) : nullptr},
        {"limiter", b ? llvm::json::Value(b->limiter) : nullptr}});
  }
  llvm::json::Object root{
      {"chip", arch},
      {"kernels", std::move(kernels)},
      {"total",
       llvm::json::Object{
           {"measured_us", total},
           {"bound_us", bound ? llvm::json::Value(totalBound) : nullptr}}}};
  return writeJSON(path, std::move(root));
}

llvm::StringMap<PtxasKernelInfo>
blockc::parsePtxasVerbose(llvm::StringRef text) {
  llvm::StringMap<PtxasKernelInfo> kernels;
  std::string current;
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  // "ptxas info    : Compiling entry function 'k' for 'sm_90a'", then
  // "... 0 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads"
  // and "ptxas info    : Used 40 registers, ...".
  auto numberBefore = [](llvm::StringRef line, llvm::StringRef what) {
    size_t at = line.find(what);
    if (at == llvm::StringRef::npos)
      return int64_t(-1);
    llvm::StringRef head = line.take_front(at).rtrim();
    llvm::StringRef digits =
        head.substr(head.find_last_not_of("0123456789") + 1);
    int64_t v = -1;
    if (digits.getAsInteger(10, v))
      return int64_t(-1);
    return v;
  };
  for (llvm::StringRef line : lines) {
    size_t entry = line.find("Compiling entry function '");
    if (entry != llvm::StringRef::npos) {
      llvm::StringRef rest =
          line.drop_front(entry + strlen("Compiling entry function '"));
      current = rest.take_until([](char c) { return c == '\''; }).str();
      kernels[current];
      continue;
    }
    if (current.empty())
      continue;
    PtxasKernelInfo &info = kernels[current];
    int64_t stores = numberBefore(line, "bytes spill stores");
    int64_t loads = numberBefore(line, "bytes spill loads");
    if (stores >= 0 || loads >= 0)
      info.spillBytes =
          std::max<int64_t>(stores, 0) + std::max<int64_t>(loads, 0);
    int64_t used = numberBefore(line, "registers");
    if (line.contains("Used ") && used >= 0)
      info.registers = used;
  }
  return kernels;
}

llvm::Expected<llvm::StringMap<PtxasKernelInfo>>
blockc::runPtxasVerbose(llvm::StringRef ptx, llvm::StringRef arch,
                        llvm::StringRef toolkit) {
  std::optional<std::string> dir = findCudaToolkit({"ptxas"}, toolkit);
  if (!dir)
    return makeError("ptxas not found (" +
                     (toolkit.empty() ? llvm::Twine("PATH, $CUDA_ROOT, "
                                                    "$CUDA_HOME, $CUDA_PATH, "
                                                    "/usr/local/cuda")
                                      : llvm::Twine(toolkit) + "/bin") +
                     ")");
  llvm::SmallString<128> ptxasPath(*dir);
  llvm::sys::path::append(ptxasPath, "bin", "ptxas");
  std::string ptxas = ptxasPath.str().str();
  llvm::SmallString<128> input, output, log;
  if (auto ec =
          llvm::sys::fs::createTemporaryFile("blockc-profile", "ptx", input))
    return makeError("cannot create a temporary file: " + ec.message());
  llvm::FileRemover removeInput(input);
  (void)llvm::sys::fs::createTemporaryFile("blockc-profile", "cubin", output);
  llvm::FileRemover removeOutput(output);
  (void)llvm::sys::fs::createTemporaryFile("blockc-profile", "log", log);
  llvm::FileRemover removeLog(log);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(input, ec);
    if (ec)
      return makeError("cannot write " + input + ": " + ec.message());
    os << ptx;
  }
  std::string archFlag = ("-arch=" + arch).str();
  llvm::SmallVector<llvm::StringRef> args = {ptxas, "-v", archFlag,
                                             input, "-o", output};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log.str(),
                                                log.str()};
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, 120,
                                     0, &error);
  auto text = llvm::MemoryBuffer::getFile(log);
  if (rc != 0)
    return makeError("ptxas -v failed (exit " + llvm::Twine(rc) + ")" +
                     (error.empty() ? "" : ": " + error) +
                     (text ? ": " + (*text)->getBuffer().take_front(400) : ""));
  if (!text)
    return makeError("cannot read ptxas's report");
  return parsePtxasVerbose((*text)->getBuffer());
}
