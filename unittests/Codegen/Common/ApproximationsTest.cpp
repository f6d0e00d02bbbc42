//===- ApproximationsTest.cpp - the approximations against libm -----------===//
//
// Builds one function per approximation with the builders of
// Codegen/Common/Approximations.h, in scalar form (a loop over f32) and in
// vector form (a loop over vector<16xf32>), JIT-compiles it and evaluates it
// on a sweep of the whole f32 range: a stride through all 2^32 bit patterns
// (every exponent, both signs, denormals, infinities and NaNs), plus the
// special values. Results are compared with the double-precision libm
// function (std::exp, std::erf, ...) rounded to f32, in ulps of that
// correctly rounded result (the ulp of the smallest normal for denormal
// results); non-finite and zero results must match exactly, signed zeros
// included.
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/Common/Approximations.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/TargetSelect.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

using namespace mlir;

namespace {

constexpr int64_t kLanes = 16;

using Builder = Value (*)(OpBuilder &, Location, Value);

float fromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}
uint32_t toBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}

/// The inputs: a stride through all bit patterns (odd, so that the low
/// mantissa bits vary too), the special values, and padding to a multiple
/// of the vector width.
std::vector<float> sweep() {
  std::vector<float> xs;
  constexpr uint64_t kStride = 4093; // ~1.05M points, all exponents
  for (uint64_t bits = 0; bits < (uint64_t(1) << 32); bits += kStride)
    xs.push_back(fromBits(static_cast<uint32_t>(bits)));
  const float inf = std::numeric_limits<float>::infinity();
  const float specials[] = {0.0f,
                            -0.0f,
                            inf,
                            -inf,
                            std::numeric_limits<float>::quiet_NaN(),
                            -std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::denorm_min(),
                            -std::numeric_limits<float>::denorm_min(),
                            fromBits(0x007fffff), // largest denormal
                            fromBits(0x807fffff),
                            std::numeric_limits<float>::min(),
                            -std::numeric_limits<float>::min(),
                            std::numeric_limits<float>::max(),
                            -std::numeric_limits<float>::max(),
                            1.0f,
                            -1.0f,
                            0.75f,
                            -0.75f,
                            88.7228394f, // ln(FLT_MAX)
                            88.72284f,
                            -87.3365479f, // ln(FLT_MIN)
                            -103.972076f, // ln(2^-150)
                            -104.0f,
                            10.5f,
                            -10.5f,
                            9.1f,
                            -9.1f};
  for (float s : specials)
    xs.push_back(s);
  while (xs.size() % kLanes)
    xs.push_back(0.0f);
  return xs;
}

/// The JIT-compiled approximation in both forms.
class Compiled {
public:
  using Fn = void (*)(StridedMemRefType<float, 1> *,
                      StridedMemRefType<float, 1> *);

  static std::unique_ptr<Compiled> compile(Builder build) {
    auto c = std::make_unique<Compiled>();
    DialectRegistry registry;
    registry.insert<arith::ArithDialect, func::FuncDialect, LLVM::LLVMDialect,
                    math::MathDialect, memref::MemRefDialect, scf::SCFDialect,
                    vector::VectorDialect>();
    registerBuiltinDialectTranslation(registry);
    registerLLVMDialectTranslation(registry);
    c->ctx.appendDialectRegistry(registry);
    c->ctx.loadAllAvailableDialects();

    OpBuilder b(&c->ctx);
    Location loc = b.getUnknownLoc();
    OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
    b.setInsertionPointToEnd(module->getBody());
    addFunction(b, loc, "scalar", build, /*lanes=*/1);
    addFunction(b, loc, "vector", build, kLanes);

    static bool registered = (registerConversionPasses(), true);
    (void)registered;
    PassManager pm(&c->ctx, ModuleOp::getOperationName());
    if (failed(parsePassPipeline(
            "convert-scf-to-cf,convert-vector-to-llvm,convert-math-to-llvm,"
            "convert-math-to-libm,finalize-memref-to-llvm,"
            "convert-arith-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,"
            "convert-index-to-llvm,reconcile-unrealized-casts",
            pm)) ||
        failed(pm.run(*module)))
      return nullptr;

    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    ExecutionEngineOptions options;
    auto engine = ExecutionEngine::create(*module, options);
    if (!engine) {
      llvm::consumeError(engine.takeError());
      return nullptr;
    }
    c->engine = std::move(*engine);
    for (auto [name, fn] : {std::pair{"_mlir_ciface_scalar", &c->scalar},
                            std::pair{"_mlir_ciface_vector", &c->vector}}) {
      auto sym = c->engine->lookup(name);
      if (!sym) {
        llvm::consumeError(sym.takeError());
        return nullptr;
      }
      *fn = reinterpret_cast<Fn>(*sym);
    }
    return c;
  }

  std::vector<float> run(Fn fn, std::vector<float> &xs) {
    std::vector<float> ys(xs.size());
    StridedMemRefType<float, 1> in{
        xs.data(), xs.data(), 0, {static_cast<int64_t>(xs.size())}, {1}};
    StridedMemRefType<float, 1> out{
        ys.data(), ys.data(), 0, {static_cast<int64_t>(ys.size())}, {1}};
    fn(&in, &out);
    return ys;
  }

  MLIRContext ctx;
  std::unique_ptr<ExecutionEngine> engine;
  Fn scalar = nullptr, vector = nullptr;

private:
  /// func @name(%in: memref<?xf32>, %out: memref<?xf32>): out = f(in),
  /// `lanes` elements per iteration.
  static void addFunction(OpBuilder &b, Location loc, StringRef name,
                          Builder build, int64_t lanes) {
    auto memrefType = MemRefType::get({ShapedType::kDynamic}, b.getF32Type());
    auto func = func::FuncOp::create(
        b, loc, name, b.getFunctionType({memrefType, memrefType}, {}));
    func->setAttr("llvm.emit_c_interface", b.getUnitAttr());
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(func.addEntryBlock());
    Value in = func.getArgument(0), out = func.getArgument(1);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value step = arith::ConstantIndexOp::create(b, loc, lanes);
    Value n = memref::DimOp::create(b, loc, in, 0);
    scf::ForOp::create(
        b, loc, zero, n, step, ValueRange{},
        [&](OpBuilder &lb, Location l, Value i, ValueRange) {
          if (lanes == 1) {
            Value x = memref::LoadOp::create(lb, l, in, ValueRange{i});
            memref::StoreOp::create(lb, l, build(lb, l, x), out, ValueRange{i});
          } else {
            auto vt = VectorType::get({lanes}, lb.getF32Type());
            Value x = vector::LoadOp::create(lb, l, vt, in, ValueRange{i});
            vector::StoreOp::create(lb, l, build(lb, l, x), out, ValueRange{i});
          }
          scf::YieldOp::create(lb, l);
        });
    func::ReturnOp::create(b, loc);
  }
};

/// |y - ref| in ulps of ref rounded to f32 (ulps of FLT_MIN below it).
double ulpError(float y, double ref) {
  float r = static_cast<float>(ref);
  int exp;
  std::frexp(std::fabs(r) > 0 ? r : std::numeric_limits<float>::min(), &exp);
  exp = std::max(exp, std::numeric_limits<float>::min_exponent);
  double ulp = std::ldexp(1.0, exp - std::numeric_limits<float>::digits);
  return std::fabs(static_cast<double>(y) - ref) / ulp;
}

struct Report {
  double maxUlps = 0; // normal results, |x| <= coreLimit
  float worstX = 0;
  double maxTailUlps = 0; // normal results, |x| > coreLimit
  float worstTailX = 0;
  double maxDenormalUlps = 0; // results below FLT_MIN
  float worstDenormalX = 0;
  int64_t mismatches = 0; // non-finite / zero / sign mismatches
  std::string firstMismatch;
};

/// Compares `ys` with `reference` (double) over `xs`.
Report compare(const std::vector<float> &xs, const std::vector<float> &ys,
               double (*reference)(double), double coreLimit) {
  Report rep;
  for (size_t k = 0; k < xs.size(); ++k) {
    double ref = reference(xs[k]);
    float r = static_cast<float>(ref);
    float y = ys[k];
    bool exact = std::isnan(r) || std::isinf(r) || r == 0.0f;
    bool ok;
    if (std::isnan(r))
      ok = std::isnan(y);
    else if (exact)
      ok = toBits(y) == toBits(r);
    else
      ok = std::isfinite(y);
    if (!ok) {
      if (rep.mismatches++ == 0)
        rep.firstMismatch = "f(" + std::to_string(xs[k]) + " [0x" +
                            llvm::utohexstr(toBits(xs[k])) +
                            "]) = " + std::to_string(y) + ", expected " +
                            std::to_string(r);
      continue;
    }
    if (exact)
      continue;
    double e = ulpError(y, ref);
    auto record = [&](double &maxUlps, float &worstX) {
      if (e > maxUlps) {
        maxUlps = e;
        worstX = xs[k];
      }
    };
    if (std::fabs(r) < std::numeric_limits<float>::min())
      record(rep.maxDenormalUlps, rep.worstDenormalX);
    else if (std::fabs(xs[k]) <= coreLimit)
      record(rep.maxUlps, rep.worstX);
    else
      record(rep.maxTailUlps, rep.worstTailX);
  }
  return rep;
}

double refExp(double x) { return std::exp(x); }
double refErf(double x) { return std::erf(x); }
double refErfc(double x) { return std::erfc(x); }
double refTanh(double x) { return std::tanh(x); }
/// x sigmoid(v), in the form that neither overflows nor loses the tail;
/// -0 at x = -inf (the limit).
double xSigmoid(double x, double v) {
  if (x == -std::numeric_limits<double>::infinity())
    return -0.0;
  double s = std::exp(-std::fabs(v));
  return (v < 0 ? x * s : x) / (1 + s);
}
double refSilu(double x) { return xSigmoid(x, x); }
double refGelu(double x) {
  if (x == -std::numeric_limits<double>::infinity())
    return -0.0;
  return 0.5 * x * std::erfc(-x / std::sqrt(2.0));
}
double refGeluTanh(double x) {
  double u = std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
  return xSigmoid(x, 2 * u);
}

Value buildSilu(OpBuilder &b, Location l, Value x) {
  return blockc::buildSilu(b, l, x);
}
Value buildGelu(OpBuilder &b, Location l, Value x) {
  return blockc::buildGelu(b, l, x);
}
Value buildGeluTanh(OpBuilder &b, Location l, Value x) {
  return blockc::buildGeluTanh(b, l, x);
}

/// The bounds this test enforces, in ulps of the correctly rounded result.
struct Case {
  const char *name;
  Builder build;
  double (*reference)(double);
  double maxUlps;         // normal results, |x| <= coreLimit
  double maxTailUlps;     // normal results, |x| > coreLimit
  double maxDenormalUlps; // results below FLT_MIN (ulps of 2^-149)
  double coreLimit = std::numeric_limits<double>::infinity();
};

class ApproximationsTest : public ::testing::TestWithParam<Case> {};

TEST_P(ApproximationsTest, MatchesLibmOverTheWholeRange) {
  const Case &c = GetParam();
  std::unique_ptr<Compiled> compiled = Compiled::compile(c.build);
  ASSERT_TRUE(compiled) << "lowering or JIT compilation failed";
  std::vector<float> xs = sweep();
  std::vector<float> scalar = compiled->run(compiled->scalar, xs);
  std::vector<float> vector = compiled->run(compiled->vector, xs);
  for (auto [form, ys] :
       {std::pair{"scalar", &scalar}, std::pair{"vector", &vector}}) {
    Report rep = compare(xs, *ys, c.reference, c.coreLimit);
    EXPECT_EQ(rep.mismatches, 0)
        << c.name << " (" << form << "): " << rep.firstMismatch;
    EXPECT_LE(rep.maxUlps, c.maxUlps)
        << c.name << " (" << form << ") at x = " << rep.worstX;
    EXPECT_LE(rep.maxTailUlps, c.maxTailUlps)
        << c.name << " (" << form << ") at x = " << rep.worstTailX;
    EXPECT_LE(rep.maxDenormalUlps, c.maxDenormalUlps)
        << c.name << " (" << form << ") at x = " << rep.worstDenormalX;
    std::printf("%-9s %-6s max error %.2f ulp (x = %.9g), tail %.2f ulp "
                "(x = %.9g), denormal results %.2f ulp (x = %.9g)\n",
                c.name, form, rep.maxUlps, rep.worstX, rep.maxTailUlps,
                rep.worstTailX, rep.maxDenormalUlps, rep.worstDenormalX);
  }
  // Both forms are the same arithmetic.
  for (size_t k = 0; k < xs.size(); ++k)
    if (toBits(scalar[k]) != toBits(vector[k]) &&
        !(std::isnan(scalar[k]) && std::isnan(vector[k]))) {
      ADD_FAILURE() << c.name << ": scalar and vector differ at x = " << xs[k];
      break;
    }
}

// The bounds are the measured maxima of docs/Pipelines.md ("Math
// approximations") rounded up. silu's tail (x < -87, where e^x is itself a
// denormal and has lost bits) and gelu_tanh's tail (the rounding of u in f32
// is amplified by e^{2u} for x << 0; PyTorch's f32 formula has the same
// error) have bounds of their own.
INSTANTIATE_TEST_SUITE_P(
    All, ApproximationsTest,
    ::testing::Values(Case{"exp", &blockc::buildExp, &refExp, 1.5, 1.5, 1},
                      Case{"erf", &blockc::buildErf, &refErf, 2.5, 2.5, 1},
                      Case{"erfc", &blockc::buildErfc, &refErfc, 5, 5, 1},
                      Case{"tanh", &blockc::buildTanh, &refTanh, 1.5, 1.5, 1},
                      Case{"silu", &buildSilu, &refSilu, 3, 48, 56, 87.0},
                      Case{"gelu", &buildGelu, &refGelu, 5, 5, 5},
                      Case{"gelu_tanh", &buildGeluTanh, &refGeluTanh, 8, 160,
                           96, 2.0}),
    [](const ::testing::TestParamInfo<Case> &info) {
      std::string name = info.param.name;
      for (char &ch : name)
        if (ch == '_')
          ch = 'X';
      return name;
    });

} // namespace
