//===- DeriveEntry.cpp - shared part of the derived cached entries --------===//
//
// See DeriveEntry.h.
//
//===----------------------------------------------------------------------===//

#include "DeriveEntry.h"
#include "blockc/Dialect/Transformer/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace blockc::transformer;

FailureOr<blockc::transformer::detail::DerivedEntry>
blockc::transformer::detail::cloneAndDecompose(ModuleOp module,
                                               StringRef entryName,
                                               StringRef suffix, StringRef pass,
                                               StringRef what) {
  MLIRContext *ctx = module.getContext();
  auto forward = module.lookupSymbol<func::FuncOp>(entryName);
  if (!forward || forward.isExternal()) {
    module.emitError() << pass << ": no function @" << entryName
                       << " with a body";
    return failure();
  }
  std::string name = (entryName + suffix).str();
  if (module.lookupSymbol(name)) {
    forward.emitError() << pass << ": @" << name << " already exists";
    return failure();
  }
  auto derived = cast<func::FuncOp>(forward->clone());
  derived.setName(name);
  derived.setPublic();
  module.insert(std::next(Block::iterator(forward)), derived);

  // The derived entry is the forward function decomposed: the caches are
  // threaded through its primitive ops.
  RewritePatternSet patterns(ctx);
  populateDecomposeBlockPatterns(patterns);
  populateDecomposeSubLayerPatterns(patterns);
  GreedyRewriteConfig config;
  config.setUseTopDownTraversal(true);
  if (failed(applyPatternsGreedily(derived, std::move(patterns), config))) {
    derived.emitError() << pass << ": decomposition of @" << name
                        << " did not converge";
    derived.erase();
    return failure();
  }

  DerivedEntry result{forward, derived, {}, {}, {}};
  derived.walk([&](Operation *op) {
    if (auto sdpa = dyn_cast<SDPAOp>(op))
      result.attentions.push_back(sdpa);
    else if (auto rope = dyn_cast<RoPEOp>(op))
      result.ropes.push_back(rope);
    else if (auto embedding = dyn_cast<EmbeddingOp>(op))
      result.embeddings.push_back(embedding);
  });
  if (result.attentions.empty()) {
    forward.emitError() << pass << ": @" << entryName
                        << " has no attention to cache";
    derived.erase();
    return failure();
  }
  for (SDPAOp sdpa : result.attentions) {
    if (!sdpa.getCausal()) {
      sdpa.emitOpError() << "is not causal: " << what
                         << " needs causal attention (" << pass << ")";
      derived.erase();
      return failure();
    }
  }
  return result;
}

LogicalResult blockc::transformer::detail::removeEntry(ModuleOp module,
                                                       func::FuncOp entry,
                                                       StringRef pass) {
  if (!SymbolTable::symbolKnownUseEmpty(entry, module)) {
    entry.emitError() << pass << ": @" << entry.getSymName()
                      << " is still referenced, so keep-entry=false "
                         "cannot remove it";
    return failure();
  }
  entry.erase();
  return success();
}
