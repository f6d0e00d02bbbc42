//===- ReportPrinter.cpp - text, markdown, JSON and HTML reports ----------===//
//
// Formats BlockReports. JSON goes through llvm::json::OStream; its schema is
// documented in docs/Report.md and is stable. The HTML page is
// self-contained: inline CSS and SVG only.
//
//===----------------------------------------------------------------------===//

#include "blockc/Analysis/BlockReport.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cmath>

using namespace blockc;
using namespace blockc::transformer;

namespace {

/// 202383360 -> "202,383,360".
std::string commas(double value) {
  bool negative = value < 0;
  auto v = static_cast<uint64_t>(std::llround(std::fabs(value)));
  std::string digits = std::to_string(v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return negative ? "-" + out : out;
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string percent(double part, double whole) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%.1f%%", whole > 0 ? 100.0 * part / whole : 0.0);
  return s;
}

std::string fixed(double v, int digits = 2) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format(("%." + std::to_string(digits) + "f").c_str(), v);
  return s;
}

std::string describe(const BlockReport &r) {
  const BlockShape &s = r.shape;
  std::string d;
  llvm::raw_string_ostream os(d);
  os << (s.preNorm ? "pre-norm" : "post-norm") << ", "
     << (s.layerNorm ? "LayerNorm" : "RMSNorm") << ", "
     << (s.gated ? "gated " : "") << stringifyActivationKind(s.activation)
     << " FFN, " << s.numHeads << " heads / " << s.numKVHeads << " kv heads x "
     << s.headDim << ", d = " << s.modelDim << ", d_ff = " << s.dff
     << (s.rope ? ", RoPE" : ", no RoPE") << (s.causal ? ", causal" : "")
     << ", weights " << s.weightStorageName();
  if (s.weightStorage == WeightStorage::Element)
    os << " (" << s.elementBytes << " bytes/weight)";
  else
    os << " (" << fixed(r.bytesPerProjectionWeight(), 3)
       << " bytes/weight with scales)";
  if (s.quantizedActivations)
    os << ", int8 activations";
  return d;
}

/// "Block 0: ..." or, for one rank's part, "Block 0 (rank's part, 1 of 2
/// ranks): ...".
std::string blockTitle(size_t i, const BlockReport &r) {
  std::string t = "Block " + std::to_string(i);
  if (r.options.ranks > 1)
    t += " (rank's part, 1 of " + std::to_string(r.options.ranks) + " ranks)";
  return t + ": " + describe(r);
}

/// " (one rank's part)" for tensor-parallel reports.
std::string rankSuffix(const ReportOptions &o) {
  return o.ranks > 1 ? " (one rank's part)" : "";
}

struct Row {
  std::vector<std::string> cells;
};

/// A table as every format prints it: the same columns and rows in text,
/// markdown and HTML. A leading "  " in a first cell marks a sub-row.
struct Table {
  std::vector<std::string> header;
  std::vector<bool> rightAlign;
  std::vector<Row> rows;
};

Table stepTable(const std::vector<ReportStep> &steps, int64_t seqLen) {
  Table t{{"#", "step", "operation", "output shape", "FLOPs/token",
           "L-dep. FLOPs/token", "bytes", "FLOP/byte"},
          {true, false, false, false, true, true, true, true},
          {}};
  int n = 0;
  for (const ReportStep &s : steps)
    t.rows.push_back(
        {{std::to_string(++n), s.name, s.operation, shapeString(s.outputShape),
          commas(s.flopsPerToken), commas(s.flopsPerTokenLDependent),
          commas(s.bytes), fixed(s.intensity(seqLen))}});
  return t;
}

Table stepTable(const BlockReport &r) {
  return stepTable(r.steps, r.options.seqLen);
}

Table componentTable(const std::vector<ReportComponent> &components) {
  Table t{{"component", "kind", "shape", "storage", "parameters", "bytes"},
          {false, false, false, false, true, true},
          {}};
  for (const ReportComponent &c : components)
    t.rows.push_back({{c.name, c.kind, shapeString(c.shape), c.storage,
                       commas(c.params), commas(c.bytes)}});
  return t;
}

Table componentTable(const BlockReport &r) {
  return componentTable(r.components);
}

Table blockTotalsTable(const BlockReport &r) {
  const ReportOptions &o = r.options;
  double total = static_cast<double>(r.totalParams());
  double attn = static_cast<double>(r.params("attention"));
  double ffn = static_cast<double>(r.params("ffn"));
  Table t{{"quantity", "value"}, {false, true}, {}};
  auto add = [&](std::string name, std::string value) {
    t.rows.push_back({{std::move(name), std::move(value)}});
  };
  add("parameters", commas(total));
  add("  attention weights (QKVO)",
      commas(attn) + " (" + percent(attn, attn + ffn) + " of weights)");
  add("  FFN weights",
      commas(ffn) + " (" + percent(ffn, attn + ffn) + " of weights)");
  add("  norm parameters", commas(static_cast<double>(r.params("norm"))));
  add("  biases", commas(static_cast<double>(r.params("bias"))));
  add("weight bytes (as stored)", commas(static_cast<double>(r.weightBytes())));
  add("static FLOPs per token (2 x weights)", commas(r.staticFlopsPerToken()));
  add("  attention projections", commas(2 * attn));
  add("  FFN", commas(2 * ffn));
  add("attention FLOPs per token (4 H d_h L)",
      commas(r.attentionFlopsPerToken()));
  add("all counted FLOPs per token", commas(r.flopsPerToken()));
  add("KV cache bytes per token (K and V)", commas(r.kvCacheBytesPerToken()));
  add("KV cache bytes for L tokens",
      commas(r.kvCacheBytesPerToken() * o.kvLen));
  return t;
}

/// The model's figures: every block repeated N times; for a tensor-parallel
/// model one rank's figures, then the whole model over all ranks.
struct ModelTotals {
  double params = 0, weightBytes = 0, staticFlops = 0, attnFlops = 0, kv = 0;
  double modelParams = 0, modelWeightBytes = 0;

  explicit ModelTotals(const std::vector<BlockReport> &blocks) {
    double n = static_cast<double>(blocks.front().options.layers);
    for (const BlockReport &r : blocks) {
      params += n * r.totalParams();
      weightBytes += n * r.weightBytes();
      staticFlops += n * r.staticFlopsPerToken();
      attnFlops += n * r.attentionFlopsPerToken();
      kv += n * r.kvCacheBytesPerToken();
      modelParams += n * r.modelParams();
      modelWeightBytes += n * r.modelWeightBytes();
    }
  }
};

Table modelTotalsTable(const std::vector<BlockReport> &blocks) {
  const ReportOptions &o = blocks.front().options;
  ModelTotals m(blocks);
  std::string part = rankSuffix(o);
  Table t{{"quantity", "value"}, {false, true}, {}};
  auto add = [&](std::string name, double value) {
    t.rows.push_back({{std::move(name), commas(value)}});
  };
  add("parameters" + part, m.params);
  add("weight bytes (as stored)" + part, m.weightBytes);
  add("static FLOPs per token" + part, m.staticFlops);
  add("attention FLOPs per token at L" + part, m.attnFlops);
  add("KV cache bytes per token" + part, m.kv);
  add("KV cache bytes for L tokens" + part, m.kv * o.kvLen);
  if (o.ranks > 1) {
    double ranks = static_cast<double>(o.ranks);
    std::string all = "all " + std::to_string(o.ranks) + " ranks";
    add("parameters, whole model (each once)", m.modelParams);
    add("weight bytes, whole model (each once)", m.modelWeightBytes);
    add("parameters held by " + all, ranks * m.params);
    add("weight bytes held by " + all, ranks * m.weightBytes);
    add("KV cache bytes per token, " + all, ranks * m.kv);
    add("KV cache bytes for L tokens, " + all, ranks * m.kv * o.kvLen);
  }
  return t;
}

/// The whole causal language model: the blocks (N times) and the ops
/// outside them.
Table wholeModelTable(const std::vector<BlockReport> &blocks,
                      const ModelPartsReport &parts) {
  ModelTotals m(blocks);
  Table t{{"quantity", "value"}, {false, true}, {}};
  auto add = [&](std::string name, double value) {
    t.rows.push_back({{std::move(name), commas(value)}});
  };
  double flops = m.staticFlops + m.attnFlops;
  for (const BlockReport &r : blocks)
    flops += static_cast<double>(r.options.layers) *
             (r.flopsPerToken() - r.staticFlopsPerToken() -
              r.attentionFlopsPerToken());
  add("parameters (blocks, embedding, final norm, LM head)",
      m.params + static_cast<double>(parts.params()));
  add("weight bytes (as stored)",
      m.weightBytes + static_cast<double>(parts.weightBytes()));
  add("all counted FLOPs per token at L", flops + parts.flopsPerToken());
  return t;
}

/// Prints a table aligned as text, or as a markdown table.
void printTable(llvm::raw_ostream &os, const Table &t, bool markdown) {
  const std::vector<std::string> &header = t.header;
  std::vector<size_t> width(header.size());
  for (size_t c = 0; c < header.size(); ++c) {
    width[c] = header[c].size();
    for (const Row &r : t.rows)
      width[c] = std::max(width[c], r.cells[c].size());
  }
  auto line = [&](const std::vector<std::string> &cells) {
    if (markdown)
      os << "|";
    for (size_t c = 0; c < cells.size(); ++c) {
      const std::string &cell = cells[c];
      std::string pad(width[c] - cell.size(), ' ');
      os << (markdown ? " " : "  ");
      os << (t.rightAlign[c] ? pad + cell : cell + pad);
      if (markdown)
        os << " |";
    }
    os << "\n";
  };
  line(header);
  if (markdown) {
    os << "|";
    for (size_t c = 0; c < header.size(); ++c)
      os << (t.rightAlign[c] ? std::string(width[c] + 1, '-') + ":|"
                             : ":" + std::string(width[c] + 1, '-') + "|");
    os << "\n";
  } else {
    std::vector<std::string> rule;
    for (size_t c = 0; c < header.size(); ++c)
      rule.push_back(std::string(width[c], '-'));
    line(rule);
  }
  for (const Row &r : t.rows)
    line(r.cells);
}

/// The paragraph under the title.
std::string preamble(const ReportOptions &o) {
  std::string p;
  llvm::raw_string_ostream os(p);
  os << "T = " << o.seqLen << " token(s) per pass, L = " << o.kvLen
     << " attended key(s), N = " << o.layers << " layer(s). FLOPs are per "
     << "token; bytes and FLOP/byte are for the T tokens of one pass; "
     << "weights count as stored.";
  if (o.ranks > 1)
    os << " Tensor parallel over " << o.ranks << " ranks: every per-block "
       << "figure is one rank's part (its heads and d_ff / " << o.ranks
       << "; the two all-reduces per block are not listed); the N-layer "
       << "totals add the whole model over all ranks.";
  return p;
}

constexpr const char *kPartsTitle =
    "Outside the blocks: embedding, final norm, LM head";

void printTextOrMarkdown(llvm::raw_ostream &os, llvm::StringRef title,
                         const std::vector<BlockReport> &blocks,
                         const ModelPartsReport *parts, bool markdown) {
  const ReportOptions &o = blocks.front().options;
  std::string h1 = markdown ? "# " : "", h2 = markdown ? "## " : "",
              h3 = markdown ? "### " : "";
  std::string part = rankSuffix(o);
  os << h1 << "blockc report: " << title << "\n\n";
  os << preamble(o) << "\n\n";
  for (size_t i = 0; i < blocks.size(); ++i) {
    const BlockReport &r = blocks[i];
    os << h2 << blockTitle(i, r) << "\n\n";
    printTable(os, stepTable(r), markdown);
    os << "\n" << h3 << "Parameters" << part << "\n\n";
    printTable(os, componentTable(r), markdown);
    os << "\n" << h3 << "Totals per block" << part << "\n\n";
    printTable(os, blockTotalsTable(r), markdown);
    os << "\n";
  }
  if (parts) {
    os << h2 << kPartsTitle << "\n\n";
    printTable(os, stepTable(parts->steps, o.seqLen), markdown);
    os << "\n" << h3 << "Parameters\n\n";
    printTable(os, componentTable(parts->components), markdown);
    os << "\n";
  }
  os << h2 << "Totals for N = " << o.layers << " layer(s)\n\n";
  printTable(os, modelTotalsTable(blocks), markdown);
  if (parts) {
    os << "\n" << h2 << "Totals for the whole model\n\n";
    printTable(os, wholeModelTable(blocks, *parts), markdown);
  }
}

void printJSON(llvm::raw_ostream &os, llvm::StringRef title,
               const std::vector<BlockReport> &blocks,
               const ModelPartsReport *parts) {
  const ReportOptions &o = blocks.front().options;
  llvm::json::OStream j(os, 2);
  auto shapeArray = [&](const std::vector<int64_t> &shape) {
    j.array([&] {
      for (int64_t d : shape)
        j.value(d);
    });
  };
  // The fields every step and every component starts with (a block's and
  // the model parts').
  auto stepHead = [&](const ReportStep &st) {
    j.attribute("name", st.name);
    j.attribute("operation", st.operation);
    j.attribute("component", st.component);
    j.attributeBegin("output_shape");
    shapeArray(st.outputShape);
    j.attributeEnd();
    j.attribute("flops_per_token", st.flopsPerToken);
  };
  auto componentHead = [&](const ReportComponent &c) {
    j.attribute("name", c.name);
    j.attribute("kind", c.kind);
    j.attributeBegin("shape");
    shapeArray(c.shape);
    j.attributeEnd();
  };
  j.object([&] {
    j.attribute("schema", "blockc-report/1");
    j.attribute("model", title);
    j.attribute("seq_len", o.seqLen);
    j.attribute("kv_len", o.kvLen);
    j.attribute("layers", o.layers);
    j.attribute("tensor_parallel_ranks", o.ranks);
    j.attributeArray("blocks", [&] {
      for (const BlockReport &r : blocks) {
        const BlockShape &s = r.shape;
        j.object([&] {
          j.attributeObject("config", [&] {
            j.attribute("d_model", s.modelDim);
            j.attribute("num_heads", s.numHeads);
            j.attribute("num_kv_heads", s.numKVHeads);
            j.attribute("head_dim", s.headDim);
            j.attribute("d_ff", s.dff);
            j.attribute("norm", s.layerNorm ? "layer" : "rms");
            j.attribute("norm_placement", s.preNorm ? "pre" : "post");
            j.attribute("activation", stringifyActivationKind(s.activation));
            j.attribute("gated", s.gated);
            j.attribute("rope", s.rope);
            j.attribute("causal", s.causal);
            j.attribute("element_bytes", s.elementBytes);
            j.attribute("element_type", s.elementType);
            j.attribute("weight_storage",
                        s.weightStorage == WeightStorage::Element
                            ? s.elementType
                        : s.weightStorage == WeightStorage::Int8 ? "int8"
                                                                 : "int4");
            j.attribute(
                "weight_group_size",
                s.weightStorage == WeightStorage::Int4 ? s.quantGroupSize : 0);
            j.attribute("activation_quant",
                        s.quantizedActivations ? "int8" : "none");
            j.attribute("bytes_per_projection_weight",
                        r.bytesPerProjectionWeight());
          });
          j.attributeArray("steps", [&] {
            for (const ReportStep &st : r.steps)
              j.object([&] {
                stepHead(st);
                j.attribute("flops_per_token_l_dependent",
                            st.flopsPerTokenLDependent);
                j.attribute("bytes", st.bytes);
                j.attribute("arithmetic_intensity", st.intensity(o.seqLen));
              });
          });
          j.attributeArray("components", [&] {
            for (const ReportComponent &c : r.components)
              j.object([&] {
                componentHead(c);
                j.attribute("params", c.params);
                j.attribute("bytes", c.bytes);
                j.attribute("storage", c.storage);
                j.attribute("model_params", c.modelParams);
                j.attribute("model_bytes", c.modelBytes);
              });
          });
          j.attributeObject("totals", [&] {
            j.attribute("params", r.totalParams());
            j.attribute("attention_params", r.params("attention"));
            j.attribute("ffn_params", r.params("ffn"));
            j.attribute("norm_params", r.params("norm"));
            j.attribute("bias_params", r.params("bias"));
            j.attribute("weight_bytes", r.weightBytes());
            j.attribute("static_flops_per_token", r.staticFlopsPerToken());
            j.attribute("attention_flops_per_token",
                        r.attentionFlopsPerToken());
            j.attribute("flops_per_token", r.flopsPerToken());
            j.attribute("kv_cache_bytes_per_token", r.kvCacheBytesPerToken());
            j.attribute("model_params", r.modelParams());
            j.attribute("model_weight_bytes", r.modelWeightBytes());
          });
        });
      }
    });
    ModelTotals m(blocks);
    double ranks = static_cast<double>(o.ranks);
    j.attributeObject("model_totals", [&] {
      j.attribute("params", m.params);
      j.attribute("static_flops_per_token", m.staticFlops);
      j.attribute("attention_flops_per_token", m.attnFlops);
      j.attribute("kv_cache_bytes_per_token", m.kv);
      j.attribute("kv_cache_bytes", m.kv * o.kvLen);
      j.attribute("weight_bytes", m.weightBytes);
      j.attributeObject("whole_model", [&] {
        j.attribute("ranks", o.ranks);
        j.attribute("params", m.modelParams);
        j.attribute("weight_bytes", m.modelWeightBytes);
        j.attribute("params_held", ranks * m.params);
        j.attribute("weight_bytes_held", ranks * m.weightBytes);
        j.attribute("kv_cache_bytes_per_token", ranks * m.kv);
        j.attribute("kv_cache_bytes", ranks * m.kv * o.kvLen);
      });
    });
    if (!parts)
      return;
    // The causal language model's ops outside the blocks.
    j.attributeObject("model_parts", [&] {
      j.attributeArray("steps", [&] {
        for (const ReportStep &st : parts->steps)
          j.object([&] {
            stepHead(st);
            j.attribute("bytes", st.bytes);
          });
      });
      j.attributeArray("components", [&] {
        for (const ReportComponent &c : parts->components)
          j.object([&] {
            componentHead(c);
            j.attribute("storage", c.storage);
            j.attribute("params", c.params);
            j.attribute("bytes", c.bytes);
          });
      });
      j.attribute("params", parts->params());
      j.attribute("weight_bytes", parts->weightBytes());
      j.attribute("flops_per_token", parts->flopsPerToken());
    });
  });
  os << "\n";
}

std::string escape(llvm::StringRef s) {
  std::string out;
  for (char c : s) {
    switch (c) {
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '&':
      out += "&amp;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

/// An upper bound of the width in pixels of `text` in the SVGs' 12px
/// sans-serif: the advance widths of DejaVu Sans (the widest common
/// default sans-serif; Liberation Sans and Arial are narrower), in em, 10%
/// more for bold. Boxes and canvases are sized from it, so that no label is
/// clipped whichever of these fonts the browser picks.
int textWidth(llvm::StringRef text, bool bold = false) {
  double em = 0;
  for (char c : text) {
    if (llvm::isDigit(c))
      em += 0.637;
    else if (llvm::StringRef(" ,.:;").contains(c))
      em += 0.337;
    else if (llvm::StringRef("ijl").contains(c))
      em += 0.278;
    else if (llvm::StringRef("frt").contains(c))
      em += 0.411;
    else if (c == 'm' || c == 'w')
      em += 0.974;
    else if (llvm::isLower(c))
      em += 0.635;
    else if (c == 'M' || c == 'W')
      em += 0.989;
    else if (llvm::isUpper(c))
      em += 0.787;
    else if (llvm::StringRef("()[]/-").contains(c))
      em += 0.39;
    else if (c == '_' || c == '*')
      em += 0.5;
    else
      em += 1.0; // = + ^ % and anything else
  }
  return static_cast<int>(std::ceil(em * 12.0 * (bold ? 1.1 : 1.0))) + 2;
}

/// The dataflow diagram: one box per step, top to bottom, the output shape
/// on each edge, and the residual connections as side arcs.
void svgDiagram(llvm::raw_ostream &os, const BlockReport &r) {
  const int boxH = 34, gap = 30, left = 140, top = 40;
  int n = static_cast<int>(r.steps.size());
  // The boxes are as wide as the longest "step: operation" label; the shape
  // labels sit right of the centre line, inside the canvas.
  std::string input = "input x  [" + std::to_string(r.options.seqLen) + ", " +
                      std::to_string(r.shape.modelDim) + "]";
  int boxW = std::max(300, textWidth(input, /*bold=*/true) + 24);
  int shapeW = 0;
  for (const ReportStep &s : r.steps) {
    boxW = std::max(boxW, textWidth(s.name + ": " + s.operation) + 24);
    shapeW = std::max(shapeW, textWidth(shapeString(s.outputShape)));
  }
  int width = left + std::max(boxW, boxW / 2 + 8 + shapeW) + 20;
  int height = top + (n + 1) * (boxH + gap) + 20;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width
     << "\" height=\"" << height << "\" viewBox=\"0 0 " << width << " "
     << height
     << "\" overflow=\"visible\" font-family=\"sans-serif\" "
        "font-size=\"12\">\n";
  os << "<defs><marker id=\"arrow\" markerWidth=\"8\" markerHeight=\"8\" "
        "refX=\"6\" refY=\"3\" orient=\"auto\"><path d=\"M0,0 L6,3 L0,6 z\" "
        "fill=\"#555\"/></marker></defs>\n";
  auto colour = [](const std::string &component) {
    if (component == "attention")
      return "#dbe9f6";
    if (component == "ffn")
      return "#fde2c8";
    if (component == "norm")
      return "#e3f1dc";
    return "#eeeeee";
  };
  int centre = left + boxW / 2;
  auto yOf = [&](int i) { return top + (i + 1) * (boxH + gap); };
  // Input.
  os << "<text x=\"" << centre << "\" y=\"" << top + 14
     << "\" text-anchor=\"middle\" font-weight=\"bold\">" << escape(input)
     << "</text>\n";
  int prevBottom = top + 20;
  std::vector<int> residualRows;
  for (int i = 0; i < n; ++i) {
    const ReportStep &s = r.steps[i];
    int y = yOf(i);
    os << "<line x1=\"" << centre << "\" y1=\"" << prevBottom << "\" x2=\""
       << centre << "\" y2=\"" << y - 2
       << "\" stroke=\"#555\" marker-end=\"url(#arrow)\"/>\n";
    if (i > 0)
      os << "<text x=\"" << centre + 8 << "\" y=\"" << (prevBottom + y) / 2 + 4
         << "\" fill=\"#333\">"
         << escape(shapeString(r.steps[i - 1].outputShape)) << "</text>\n";
    os << "<rect x=\"" << left << "\" y=\"" << y << "\" width=\"" << boxW
       << "\" height=\"" << boxH << "\" rx=\"6\" fill=\"" << colour(s.component)
       << "\" stroke=\"#777\"/>\n";
    os << "<text x=\"" << centre << "\" y=\"" << y + 21
       << "\" text-anchor=\"middle\">" << escape(s.name) << ": "
       << escape(s.operation) << "</text>\n";
    if (s.component == "residual")
      residualRows.push_back(i);
    prevBottom = y + boxH;
  }
  // Output edge.
  int yEnd = yOf(n);
  os << "<line x1=\"" << centre << "\" y1=\"" << prevBottom << "\" x2=\""
     << centre << "\" y2=\"" << yEnd - 10
     << "\" stroke=\"#555\" marker-end=\"url(#arrow)\"/>\n";
  os << "<text x=\"" << centre + 8 << "\" y=\"" << (prevBottom + yEnd) / 2
     << "\" fill=\"#333\">" << escape(shapeString(r.steps.back().outputShape))
     << "</text>\n";
  os << "<text x=\"" << centre << "\" y=\"" << yEnd + 8
     << "\" text-anchor=\"middle\" font-weight=\"bold\">output</text>\n";
  // Residual arcs: from the input of each sub-layer to its add; the label
  // ends left of the arc (left - 36 >= the label's width).
  int from = top + 20;
  for (int row : residualRows) {
    int yTo = yOf(row) + boxH / 2;
    int x = left - 30;
    os << "<path d=\"M" << centre - 60 << "," << from << " L" << x << ","
       << from << " L" << x << "," << yTo << " L" << left - 2 << "," << yTo
       << "\" fill=\"none\" stroke=\"#b03030\" stroke-dasharray=\"4 3\" "
       << "marker-end=\"url(#arrow)\"/>\n";
    os << "<text x=\"" << x - 6 << "\" y=\"" << (from + yTo) / 2
       << "\" text-anchor=\"end\" fill=\"#b03030\">residual</text>\n";
    from = yOf(row) + boxH + 4;
  }
  os << "</svg>\n";
}

/// Horizontal bars of parameters per component, labelled with their
/// parameters, stored bytes and static FLOPs.
void svgChart(llvm::raw_ostream &os, const BlockReport &r) {
  double maxParams = 1;
  for (const ReportComponent &c : r.components)
    maxParams = std::max(maxParams, static_cast<double>(c.params));
  const int rowH = 22, barW = 380;
  std::string title = "parameters (bar), bytes as stored and static FLOPs "
                      "per token (= 2 x parameters for weights)";
  int labelW = 0;
  std::vector<std::string> values;
  for (const ReportComponent &c : r.components) {
    labelW = std::max(labelW, textWidth(c.name));
    std::string flops =
        c.kind == "attention" || c.kind == "ffn" ? commas(2.0 * c.params) : "-";
    values.push_back(commas(c.params) + " params, " + commas(c.bytes) +
                     " bytes (" + c.storage + "), " + flops + " FLOPs/token");
  }
  labelW += 12;
  // Each value label starts right of its bar: the widest bar plus the
  // longest label bounds the canvas.
  int width = textWidth(title, /*bold=*/true);
  for (size_t i = 0; i < values.size(); ++i) {
    int w = static_cast<int>(barW * r.components[i].params / maxParams);
    width = std::max(width, labelW + std::max(w, 1) + 6 + textWidth(values[i]));
  }
  width += 10;
  int height = 30 + static_cast<int>(r.components.size()) * rowH + 10;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width
     << "\" height=\"" << height << "\" viewBox=\"0 0 " << width << " "
     << height
     << "\" overflow=\"visible\" font-family=\"sans-serif\" "
        "font-size=\"12\">\n";
  os << "<text x=\"0\" y=\"16\" font-weight=\"bold\">" << escape(title)
     << "</text>\n";
  for (size_t i = 0; i < r.components.size(); ++i) {
    const ReportComponent &c = r.components[i];
    int y = 30 + static_cast<int>(i) * rowH;
    int w = std::max(static_cast<int>(barW * c.params / maxParams), 1);
    os << "<text x=\"0\" y=\"" << y + 14 << "\">" << escape(c.name)
       << "</text>\n";
    os << "<rect x=\"" << labelW << "\" y=\"" << y + 3 << "\" width=\"" << w
       << "\" height=\"" << rowH - 6 << "\" fill=\""
       << (c.kind == "attention" ? "#4a7fb5"
           : c.kind == "ffn"     ? "#e08a3c"
                                 : "#8a8a8a")
       << "\"/>\n";
    os << "<text x=\"" << labelW + w + 6 << "\" y=\"" << y + 14 << "\">"
       << escape(values[i]) << "</text>\n";
  }
  os << "</svg>\n";
}

/// The table as HTML, in a box that scrolls sideways on narrow screens.
void htmlTable(llvm::raw_ostream &os, const Table &t) {
  os << "<div class=\"scroll\"><table>\n<tr>";
  for (const std::string &h : t.header)
    os << "<th>" << escape(h) << "</th>";
  os << "</tr>\n";
  for (const Row &r : t.rows) {
    os << "<tr>";
    for (size_t c = 0; c < r.cells.size(); ++c) {
      llvm::StringRef cell = r.cells[c];
      os << "<td";
      if (t.rightAlign[c])
        os << " class=\"n\"";
      else if (c == 0 && cell.starts_with("  "))
        os << " class=\"sub\"";
      os << ">" << escape(cell.trim(' ')) << "</td>";
    }
    os << "</tr>\n";
  }
  os << "</table></div>\n";
}

void printHTML(llvm::raw_ostream &os, llvm::StringRef title,
               const std::vector<BlockReport> &blocks,
               const ModelPartsReport *parts) {
  const ReportOptions &o = blocks.front().options;
  std::string part = rankSuffix(o);
  // The page takes the window's width; wide tables scroll inside their box.
  os << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
     << "<meta name=\"viewport\" content=\"width=device-width, "
        "initial-scale=1\">\n"
     << "<title>blockc report: " << escape(title) << "</title>\n"
     << "<style>body{font-family:sans-serif;margin:1.5em}"
        "table{border-collapse:collapse}td,th{border:1px solid "
        "#ccc;padding:3px 8px;font-size:13px;white-space:nowrap}"
        "th{background:#f4f4f4;text-align:left}td.n{text-align:right;"
        "font-variant-numeric:tabular-nums}td.sub{padding-left:2em}"
        ".scroll{overflow-x:auto;max-width:100%;margin:1em 0}"
        "h1,h2{overflow-wrap:anywhere}h2{margin-top:2em}"
        "h3{margin:1.2em 0 0}"
        ".flex{display:flex;gap:2em;flex-wrap:wrap;align-items:flex-start}"
        ".flex>div{min-width:0;max-width:100%;overflow-x:auto}"
        "</style></head><body>\n";
  os << "<h1>blockc report: " << escape(title) << "</h1>\n";
  os << "<p>" << escape(preamble(o)) << "</p>\n";
  for (size_t i = 0; i < blocks.size(); ++i) {
    const BlockReport &r = blocks[i];
    os << "<h2>" << escape(blockTitle(i, r)) << "</h2>\n";
    os << "<div class=\"flex\"><div>\n";
    svgDiagram(os, r);
    os << "</div><div>\n";
    svgChart(os, r);
    os << "<h3>Parameters" << escape(part) << "</h3>\n";
    htmlTable(os, componentTable(r));
    os << "<h3>Totals per block" << escape(part) << "</h3>\n";
    htmlTable(os, blockTotalsTable(r));
    os << "</div></div>\n";
    os << "<h3>Steps" << escape(part) << "</h3>\n";
    htmlTable(os, stepTable(r));
  }
  if (parts) {
    os << "<h2>" << escape(kPartsTitle) << "</h2>\n";
    htmlTable(os, stepTable(parts->steps, o.seqLen));
    os << "<h3>Parameters</h3>\n";
    htmlTable(os, componentTable(parts->components));
  }
  os << "<h2>Totals for N = " << o.layers << " layer(s)</h2>\n";
  htmlTable(os, modelTotalsTable(blocks));
  if (parts) {
    os << "<h2>Totals for the whole model</h2>\n";
    htmlTable(os, wholeModelTable(blocks, *parts));
  }
  os << "</body></html>\n";
}

} // namespace

void blockc::printReport(llvm::raw_ostream &os, llvm::StringRef title,
                         const std::vector<BlockReport> &blocks,
                         ReportFormat format, const ModelPartsReport *parts) {
  if (blocks.empty())
    return;
  if (parts && parts->empty())
    parts = nullptr;
  switch (format) {
  case ReportFormat::Text:
    return printTextOrMarkdown(os, title, blocks, parts, /*markdown=*/false);
  case ReportFormat::Markdown:
    return printTextOrMarkdown(os, title, blocks, parts, /*markdown=*/true);
  case ReportFormat::JSON:
    return printJSON(os, title, blocks, parts);
  case ReportFormat::HTML:
    return printHTML(os, title, blocks, parts);
  }
}
