// A run's predictions checked for what a view cannot show: probabilities that are NaN or infinite come from logits
// that are (a checkpoint holding NaN weights), and predict nothing. The window and attnscope-cli both say so, from
// run.warnings.
#include "transformer_impl.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace attn::models {

void warn_nonfinite_predictions(TransformerRun& run) {
  std::size_t bad = 0;
  int first = -1;
  for (const Prediction& p : run.predictions) {
    const bool finite = std::ranges::all_of(p.top, [](const auto& c) { return std::isfinite(c.probability); });
    if (finite) continue;
    if (first < 0) first = p.position;
    ++bad;
  }
  if (bad == 0) return;
  run.warnings.push_back(std::string(kNonFinitePredictions) + std::to_string(bad) + " of the " +
                         std::to_string(run.predictions.size()) +
                         " positions are not finite (NaN or infinite probabilities; the first at position " +
                         std::to_string(first) + "): the model's logits are not finite, so they predict nothing");
}

}  // namespace attn::models
