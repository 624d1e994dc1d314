// The run-time side of non-finite model weights: a model whose file holds NaN or infinite weights loads with a
// warning naming the file and the tensor (io::nonfinite_warning), and every run whose attention weights come
// out non-finite says so in its own warnings, which the tabs' warning strips and attnscope-cli show next to
// the maps (whose heatmaps leave such cells blank). Not part of the public API.
#pragma once

#include "attn/core.h"

#include <cstdint>
#include <optional>
#include <string>

namespace attn::detail {

template <class Derived>
std::int64_t count_nonfinite(const Eigen::MatrixBase<Derived>& m) {
  return static_cast<std::int64_t>((!m.derived().array().isFinite()).count());
}

// "the attention weights hold 12 non-finite values (NaN or infinite) of 48 ...", or nothing when count is 0.
inline std::optional<std::string> nonfinite_attention_warning(std::int64_t count, std::int64_t total) {
  if (count == 0) return std::nullopt;
  return "the attention weights hold " + std::to_string(count) + " non-finite value" + (count == 1 ? "" : "s") +
         " (NaN or infinite) of " + std::to_string(total) +
         ", from non-finite model weights: those cells are left blank, not drawn as attention";
}

}  // namespace attn::detail
