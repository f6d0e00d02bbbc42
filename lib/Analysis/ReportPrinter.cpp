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

std::string describe(const BlockShape &s) {
  std::string d;
  llvm::raw_string_ostream os(d);
  os << (s.preNorm ? "pre-norm" : "post-norm") << ", "
     << (s.layerNorm ? "LayerNorm" : "RMSNorm") << ", "
     << (s.gated ? "gated " : "") << stringifyActivationKind(s.activation)
     << " FFN, " << s.numHeads << " heads / " << s.numKVHeads << " kv heads x "
     << s.headDim << ", d = " << s.modelDim << ", d_ff = " << s.dff
     << (s.rope ? ", RoPE" : ", no RoPE") << (s.causal ? ", causal" : "");
  return d;
}

struct Row {
  std::vector<std::string> cells;
};

/// Prints rows as an aligned text table or a markdown table.
void table(llvm::raw_ostream &os, const std::vector<std::string> &header,
           const std::vector<Row> &rows, bool markdown,
           const std::vector<bool> &rightAlign) {
  std::vector<size_t> width(header.size());
  for (size_t c = 0; c < header.size(); ++c) {
    width[c] = header[c].size();
    for (const Row &r : rows)
      width[c] = std::max(width[c], r.cells[c].size());
  }
  auto line = [&](const std::vector<std::string> &cells) {
    if (markdown)
      os << "|";
    for (size_t c = 0; c < cells.size(); ++c) {
      std::string cell = cells[c];
      std::string pad(width[c] - cell.size(), ' ');
      os << (markdown ? " " : (c ? "  " : "  "));
      os << (rightAlign[c] ? pad + cell : cell + pad);
      if (markdown)
        os << " |";
    }
    os << "\n";
  };
  line(header);
  if (markdown) {
    os << "|";
    for (size_t c = 0; c < header.size(); ++c)
      os << (rightAlign[c] ? std::string(width[c] + 1, '-') + ":|"
                           : ":" + std::string(width[c] + 1, '-') + "|");
    os << "\n";
  } else {
    std::vector<std::string> rule;
    for (size_t c = 0; c < header.size(); ++c)
      rule.push_back(std::string(width[c], '-'));
    line(rule);
  }
  for (const Row &r : rows)
    line(r.cells);
}

void printTextOrMarkdown(llvm::raw_ostream &os, llvm::StringRef title,
                         const std::vector<BlockReport> &blocks,
                         bool markdown) {
  const ReportOptions &o = blocks.front().options;
  std::string h1 = markdown ? "# " : "", h2 = markdown ? "## " : "",
              h3 = markdown ? "### " : "";
  os << h1 << "blockc report: " << title << "\n\n";
  os << "T = " << o.seqLen << " token(s) per pass, L = " << o.kvLen
     << " attended key(s), N = " << o.layers << " layer(s). FLOPs are per "
     << "token; bytes and FLOP/byte are for the T tokens of one pass.\n\n";
  for (size_t i = 0; i < blocks.size(); ++i) {
    const BlockReport &r = blocks[i];
    double e = static_cast<double>(r.shape.elementBytes);
    os << h2 << "Block " << i << ": " << describe(r.shape) << "\n\n";
    std::vector<Row> rows;
    int n = 0;
    for (const ReportStep &s : r.steps)
      rows.push_back({{std::to_string(++n), s.name, s.operation,
                       shapeString(s.outputShape), commas(s.flopsPerToken),
                       commas(s.flopsPerTokenLDependent), commas(s.bytes),
                       fixed(s.intensity(o.seqLen))}});
    table(os,
          {"#", "step", "operation", "output shape", "FLOPs/token",
           "L-dep. FLOPs/token", "bytes", "FLOP/byte"},
          rows, markdown, {true, false, false, false, true, true, true, true});

    os << "\n" << h3 << "Parameters\n\n";
    rows.clear();
    for (const ReportComponent &c : r.components)
      rows.push_back({{c.name, c.kind, shapeString(c.shape), commas(c.params),
                       commas(c.bytes)}});
    table(os, {"component", "kind", "shape", "parameters", "bytes"}, rows,
          markdown, {false, false, false, true, true});

    double total = static_cast<double>(r.totalParams());
    double attn = static_cast<double>(r.params("attention"));
    double ffn = static_cast<double>(r.params("ffn"));
    double staticFlops = r.staticFlopsPerToken();
    os << "\n" << h3 << "Totals per block\n\n";
    rows.clear();
    rows.push_back({{"parameters", commas(total)}});
    rows.push_back(
        {{"  attention weights (QKVO)",
          commas(attn) + " (" + percent(attn, attn + ffn) + " of weights)"}});
    rows.push_back(
        {{"  FFN weights",
          commas(ffn) + " (" + percent(ffn, attn + ffn) + " of weights)"}});
    rows.push_back({{"  norm parameters", commas(r.params("norm"))}});
    rows.push_back({{"  biases", commas(r.params("bias"))}});
    rows.push_back({{"weight bytes", commas(total * e)}});
    rows.push_back(
        {{"static FLOPs per token (2 x weights)", commas(staticFlops)}});
    rows.push_back({{"  attention projections", commas(2 * attn)}});
    rows.push_back({{"  FFN", commas(2 * ffn)}});
    rows.push_back({{"attention FLOPs per token (4 H d_h L)",
                     commas(r.attentionFlopsPerToken())}});
    rows.push_back(
        {{"all counted FLOPs per token", commas(r.flopsPerToken())}});
    rows.push_back({{"KV cache bytes per token (K and V)",
                     commas(r.kvCacheBytesPerToken())}});
    rows.push_back({{"KV cache bytes for L tokens",
                     commas(r.kvCacheBytesPerToken() * o.kvLen)}});
    table(os, {"quantity", "value"}, rows, markdown, {false, true});
    os << "\n";
  }
  // The model: every block repeated N times.
  double params = 0, staticFlops = 0, attnFlops = 0, kv = 0, bytes = 0;
  for (const BlockReport &r : blocks) {
    params += r.totalParams();
    bytes += r.totalParams() * static_cast<double>(r.shape.elementBytes);
    staticFlops += r.staticFlopsPerToken();
    attnFlops += r.attentionFlopsPerToken();
    kv += r.kvCacheBytesPerToken();
  }
  double n = static_cast<double>(o.layers);
  os << h2 << "Totals for N = " << o.layers << " layer(s)\n\n";
  std::vector<Row> rows = {
      {{"parameters", commas(n * params)}},
      {{"weight bytes", commas(n * bytes)}},
      {{"static FLOPs per token", commas(n * staticFlops)}},
      {{"attention FLOPs per token at L", commas(n * attnFlops)}},
      {{"KV cache bytes per token", commas(n * kv)}},
      {{"KV cache bytes for L tokens", commas(n * kv * o.kvLen)}}};
  table(os, {"quantity", "value"}, rows, markdown, {false, true});
}

void printJSON(llvm::raw_ostream &os, llvm::StringRef title,
               const std::vector<BlockReport> &blocks) {
  const ReportOptions &o = blocks.front().options;
  llvm::json::OStream j(os, 2);
  auto shapeArray = [&](const std::vector<int64_t> &shape) {
    j.array([&] {
      for (int64_t d : shape)
        j.value(d);
    });
  };
  j.object([&] {
    j.attribute("schema", "blockc-report/1");
    j.attribute("model", title);
    j.attribute("seq_len", o.seqLen);
    j.attribute("kv_len", o.kvLen);
    j.attribute("layers", o.layers);
    double params = 0, staticFlops = 0, attnFlops = 0, kv = 0;
    j.attributeArray("blocks", [&] {
      for (const BlockReport &r : blocks) {
        const BlockShape &s = r.shape;
        params += r.totalParams();
        staticFlops += r.staticFlopsPerToken();
        attnFlops += r.attentionFlopsPerToken();
        kv += r.kvCacheBytesPerToken();
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
          });
          j.attributeArray("steps", [&] {
            for (const ReportStep &st : r.steps)
              j.object([&] {
                j.attribute("name", st.name);
                j.attribute("operation", st.operation);
                j.attribute("component", st.component);
                j.attributeBegin("output_shape");
                shapeArray(st.outputShape);
                j.attributeEnd();
                j.attribute("flops_per_token", st.flopsPerToken);
                j.attribute("flops_per_token_l_dependent",
                            st.flopsPerTokenLDependent);
                j.attribute("bytes", st.bytes);
                j.attribute("arithmetic_intensity", st.intensity(o.seqLen));
              });
          });
          j.attributeArray("components", [&] {
            for (const ReportComponent &c : r.components)
              j.object([&] {
                j.attribute("name", c.name);
                j.attribute("kind", c.kind);
                j.attributeBegin("shape");
                shapeArray(c.shape);
                j.attributeEnd();
                j.attribute("params", c.params);
                j.attribute("bytes", c.bytes);
              });
          });
          j.attributeObject("totals", [&] {
            j.attribute("params", r.totalParams());
            j.attribute("attention_params", r.params("attention"));
            j.attribute("ffn_params", r.params("ffn"));
            j.attribute("norm_params", r.params("norm"));
            j.attribute("bias_params", r.params("bias"));
            j.attribute("weight_bytes", r.totalParams() * s.elementBytes);
            j.attribute("static_flops_per_token", r.staticFlopsPerToken());
            j.attribute("attention_flops_per_token",
                        r.attentionFlopsPerToken());
            j.attribute("flops_per_token", r.flopsPerToken());
            j.attribute("kv_cache_bytes_per_token", r.kvCacheBytesPerToken());
          });
        });
      }
    });
    double n = static_cast<double>(o.layers);
    j.attributeObject("model_totals", [&] {
      j.attribute("params", n * params);
      j.attribute("static_flops_per_token", n * staticFlops);
      j.attribute("attention_flops_per_token", n * attnFlops);
      j.attribute("kv_cache_bytes_per_token", n * kv);
      j.attribute("kv_cache_bytes", n * kv * o.kvLen);
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

/// The dataflow diagram: one box per step, top to bottom, the output shape
/// on each edge, and the residual connections as side arcs.
void svgDiagram(llvm::raw_ostream &os, const BlockReport &r) {
  const int boxW = 300, boxH = 34, gap = 30, left = 140, top = 40;
  int n = static_cast<int>(r.steps.size());
  int height = top + (n + 1) * (boxH + gap) + 20;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"640\" height=\""
     << height << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
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
  auto yOf = [&](int i) { return top + (i + 1) * (boxH + gap); };
  // Input.
  os << "<text x=\"" << left + boxW / 2 << "\" y=\"" << top + 14
     << "\" text-anchor=\"middle\" font-weight=\"bold\">input x  ["
     << r.options.seqLen << ", " << r.shape.modelDim << "]</text>\n";
  int prevBottom = top + 20;
  std::vector<int> residualRows;
  for (int i = 0; i < n; ++i) {
    const ReportStep &s = r.steps[i];
    int y = yOf(i);
    os << "<line x1=\"" << left + boxW / 2 << "\" y1=\"" << prevBottom
       << "\" x2=\"" << left + boxW / 2 << "\" y2=\"" << y - 2
       << "\" stroke=\"#555\" marker-end=\"url(#arrow)\"/>\n";
    if (i > 0)
      os << "<text x=\"" << left + boxW / 2 + 8 << "\" y=\""
         << (prevBottom + y) / 2 + 4 << "\" fill=\"#333\">"
         << escape(shapeString(r.steps[i - 1].outputShape)) << "</text>\n";
    os << "<rect x=\"" << left << "\" y=\"" << y << "\" width=\"" << boxW
       << "\" height=\"" << boxH << "\" rx=\"6\" fill=\"" << colour(s.component)
       << "\" stroke=\"#777\"/>\n";
    os << "<text x=\"" << left + boxW / 2 << "\" y=\"" << y + 21
       << "\" text-anchor=\"middle\">" << escape(s.name) << ": "
       << escape(s.operation) << "</text>\n";
    if (s.component == "residual")
      residualRows.push_back(i);
    prevBottom = y + boxH;
  }
  // Output edge.
  int yEnd = yOf(n);
  os << "<line x1=\"" << left + boxW / 2 << "\" y1=\"" << prevBottom
     << "\" x2=\"" << left + boxW / 2 << "\" y2=\"" << yEnd - 10
     << "\" stroke=\"#555\" marker-end=\"url(#arrow)\"/>\n";
  os << "<text x=\"" << left + boxW / 2 + 8 << "\" y=\""
     << (prevBottom + yEnd) / 2 << "\" fill=\"#333\">"
     << escape(shapeString(r.steps.back().outputShape)) << "</text>\n";
  os << "<text x=\"" << left + boxW / 2 << "\" y=\"" << yEnd + 8
     << "\" text-anchor=\"middle\" font-weight=\"bold\">output</text>\n";
  // Residual arcs: from the input of each sub-layer to its add.
  int from = top + 20;
  for (int row : residualRows) {
    int yTo = yOf(row) + boxH / 2;
    int x = left - 30;
    os << "<path d=\"M" << left + boxW / 2 - 60 << "," << from << " L" << x
       << "," << from << " L" << x << "," << yTo << " L" << left - 2 << ","
       << yTo << "\" fill=\"none\" stroke=\"#b03030\" stroke-dasharray=\"4 3\" "
       << "marker-end=\"url(#arrow)\"/>\n";
    os << "<text x=\"" << x - 6 << "\" y=\"" << (from + yTo) / 2
       << "\" text-anchor=\"end\" fill=\"#b03030\">residual</text>\n";
    from = yOf(row) + boxH + 4;
  }
  os << "</svg>\n";
}

/// Horizontal bars of parameters and static FLOPs per weight component.
void svgChart(llvm::raw_ostream &os, const BlockReport &r) {
  std::vector<const ReportComponent *> weights;
  for (const ReportComponent &c : r.components)
    weights.push_back(&c);
  double maxParams = 1;
  for (const ReportComponent *c : weights)
    maxParams = std::max(maxParams, static_cast<double>(c->params));
  const int rowH = 22, labelW = 110, barW = 380;
  int height = 30 + static_cast<int>(weights.size()) * rowH + 10;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"720\" height=\""
     << height << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  os << "<text x=\"0\" y=\"16\" font-weight=\"bold\">parameters (bar) and "
        "static FLOPs per token (= 2 x parameters for weights)</text>\n";
  for (size_t i = 0; i < weights.size(); ++i) {
    const ReportComponent &c = *weights[i];
    int y = 30 + static_cast<int>(i) * rowH;
    int w = static_cast<int>(barW * c.params / maxParams);
    os << "<text x=\"0\" y=\"" << y + 14 << "\">" << escape(c.name)
       << "</text>\n";
    os << "<rect x=\"" << labelW << "\" y=\"" << y + 3 << "\" width=\""
       << std::max(w, 1) << "\" height=\"" << rowH - 6 << "\" fill=\""
       << (c.kind == "attention" ? "#4a7fb5"
           : c.kind == "ffn"     ? "#e08a3c"
                                 : "#8a8a8a")
       << "\"/>\n";
    std::string flops =
        c.kind == "attention" || c.kind == "ffn" ? commas(2.0 * c.params) : "-";
    os << "<text x=\"" << labelW + std::max(w, 1) + 6 << "\" y=\"" << y + 14
       << "\">" << commas(c.params) << " params, " << flops
       << " FLOPs/token</text>\n";
  }
  os << "</svg>\n";
}

void printHTML(llvm::raw_ostream &os, llvm::StringRef title,
               const std::vector<BlockReport> &blocks) {
  os << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
     << "<title>blockc report: " << escape(title) << "</title>\n"
     << "<style>body{font-family:sans-serif;margin:2em;max-width:1200px}"
        "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid "
        "#ccc;padding:3px 8px;font-size:13px}td.n{text-align:right}"
        "h2{margin-top:2em}.flex{display:flex;gap:2em;flex-wrap:wrap}"
        "</style></head><body>\n";
  os << "<h1>blockc report: " << escape(title) << "</h1>\n";
  const ReportOptions &o = blocks.front().options;
  os << "<p>T = " << o.seqLen << " token(s) per pass, L = " << o.kvLen
     << " attended key(s), N = " << o.layers
     << " layer(s). FLOPs are per token.</p>\n";
  for (size_t i = 0; i < blocks.size(); ++i) {
    const BlockReport &r = blocks[i];
    os << "<h2>Block " << i << ": " << escape(describe(r.shape)) << "</h2>\n";
    os << "<div class=\"flex\"><div>\n";
    svgDiagram(os, r);
    os << "</div><div>\n";
    svgChart(os, r);
    os << "<table><tr><th>#</th><th>step</th><th>output shape</th>"
          "<th>FLOPs/token</th><th>L-dep. FLOPs/token</th><th>FLOP/byte</th>"
          "</tr>\n";
    int n = 0;
    for (const ReportStep &s : r.steps)
      os << "<tr><td class=n>" << ++n << "</td><td>" << escape(s.name)
         << "</td><td>" << escape(shapeString(s.outputShape))
         << "</td><td class=n>" << commas(s.flopsPerToken)
         << "</td><td class=n>" << commas(s.flopsPerTokenLDependent)
         << "</td><td class=n>" << fixed(s.intensity(o.seqLen))
         << "</td></tr>\n";
    os << "</table>\n";
    double attn = static_cast<double>(r.params("attention"));
    double ffn = static_cast<double>(r.params("ffn"));
    os << "<table><tr><th>parameters per block</th><td class=n>"
       << commas(r.totalParams()) << "</td></tr>"
       << "<tr><th>attention / FFN weights</th><td class=n>" << commas(attn)
       << " (" << percent(attn, attn + ffn) << ") / " << commas(ffn) << " ("
       << percent(ffn, attn + ffn) << ")</td></tr>"
       << "<tr><th>static FLOPs per token</th><td class=n>"
       << commas(r.staticFlopsPerToken()) << "</td></tr>"
       << "<tr><th>attention FLOPs per token (4 H d_h L)</th><td class=n>"
       << commas(r.attentionFlopsPerToken()) << "</td></tr>"
       << "<tr><th>KV cache bytes per token</th><td class=n>"
       << commas(r.kvCacheBytesPerToken()) << "</td></tr></table>\n";
    os << "</div></div>\n";
  }
  double params = 0;
  for (const BlockReport &r : blocks)
    params += r.totalParams();
  os << "<p>For N = " << o.layers << " layer(s): " << commas(params * o.layers)
     << " parameters.</p>\n</body></html>\n";
}

} // namespace

void blockc::printReport(llvm::raw_ostream &os, llvm::StringRef title,
                         const std::vector<BlockReport> &blocks,
                         ReportFormat format) {
  if (blocks.empty())
    return;
  switch (format) {
  case ReportFormat::Text:
    return printTextOrMarkdown(os, title, blocks, /*markdown=*/false);
  case ReportFormat::Markdown:
    return printTextOrMarkdown(os, title, blocks, /*markdown=*/true);
  case ReportFormat::JSON:
    return printJSON(os, title, blocks);
  case ReportFormat::HTML:
    return printHTML(os, title, blocks);
  }
}
