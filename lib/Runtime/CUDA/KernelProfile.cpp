//===- KernelProfile.cpp - per-kernel GPU times of the CUDA runtime -------===//
//
// See KernelProfile.h.
//
//===----------------------------------------------------------------------===//

#include "KernelProfile.h"

#include <cstdio>

namespace blockc::cuda {

void KernelProfile::record(std::string_view kernel, double microseconds) {
  auto it = kernels.find(kernel);
  if (it == kernels.end())
    it = kernels.emplace(std::string(kernel), Kernel()).first;
  ++it->second.launches;
  it->second.microseconds += microseconds;
}

double KernelProfile::totalMicroseconds() const {
  double total = 0;
  for (const auto &entry : kernels)
    total += entry.second.microseconds;
  return total;
}

std::string jsonString(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        char escaped[8];
        std::snprintf(escaped, sizeof(escaped), "\\u%04x",
                      static_cast<unsigned>(static_cast<unsigned char>(c)));
        out += escaped;
      } else {
        out += c;
      }
    }
  }
  return out + "\"";
}

namespace {
std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", decimals, value);
  return text;
}
} // namespace

std::string KernelProfile::toJSON() const {
  std::string out = "{\"kernels\": [";
  const char *separator = "\n  ";
  for (const auto &[name, kernel] : kernels) {
    out += separator;
    out += "{\"name\": " + jsonString(name) +
           ", \"launches\": " + std::to_string(kernel.launches) +
           ", \"measured_us\": " + fixed(kernel.microseconds, 3) + "}";
    separator = ",\n  ";
  }
  out += kernels.empty() ? "]" : "\n]";
  out += ", \"total_us\": " + fixed(totalMicroseconds(), 3) + "}\n";
  return out;
}

std::string KernelProfile::toText() const {
  double total = totalMicroseconds();
  std::string out;
  for (const auto &[name, kernel] : kernels) {
    std::string padded = name;
    if (padded.size() < 40)
      padded.resize(40, ' ');
    char numbers[128];
    std::snprintf(
        numbers, sizeof(numbers), " %6lld launches %10.4f ms (%5.1f%%)\n",
        static_cast<long long>(kernel.launches), kernel.microseconds / 1000,
        total > 0 ? 100.0 * kernel.microseconds / total : 0.0);
    out += "blockc CUDA profile: " + padded + numbers;
  }
  out += "blockc CUDA profile: total " + fixed(total / 1000, 4) + " ms\n";
  return out;
}

} // namespace blockc::cuda
