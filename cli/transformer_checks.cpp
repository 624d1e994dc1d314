#include "cli/transformer_checks.h"

#include <QObject>

#include <algorithm>
#include <cmath>
#include <string_view>

namespace attn::ui {

std::optional<RenderFailure> onDemandRefusal(const TransformerJob& job, const RenderSpec& spec, Index tokens) {
  if (spec.kind != RenderSpec::Kind::Head) {
    return inputFailure(
        QObject::tr("the run's attention is kept on demand (%1 tokens; no map is stored): draw one head at a time "
                    "(--render layer=L,head=H); the head mean and rollout need every map")
            .arg(tokens));
  }
  if (job.view != TransformerView::Matrix) {
    return inputFailure(
        QObject::tr("the run's attention is kept on demand (%1 tokens): --view matrix draws it; the head, model and "
                    "overlay views need stored maps")
            .arg(tokens));
  }
  return std::nullopt;
}

std::optional<Index> jobTokens(const TransformerJob& job, const attn::models::TransformerModel& model,
                               const std::optional<std::vector<int>>& ids) {
  Index tokens = 0;
  if (ids) {
    tokens = Index(ids->size());
  } else {
    const auto* tokenizer = model.tokenizer();
    if (tokenizer == nullptr) return std::nullopt;
    auto encoded = tokenizer->encode_for_model(
        job.text, job.pair.empty() ? std::nullopt : std::optional<std::string_view>(job.pair));
    if (!encoded) return std::nullopt;
    tokens = Index(encoded->tokens.size());
  }
  return std::min(tokens, model.config().context());
}

std::optional<RenderFailure> refusedBeforeForward(const TransformerJob& job,
                                                  const attn::models::TransformerModel& model,
                                                  const std::optional<std::vector<int>>& ids) {
  const bool modelViewAlone = job.render.empty() && job.view == TransformerView::Model && !job.outPath.isEmpty();
  if ((job.render.empty() && !modelViewAlone) || (job.outPath.isEmpty() && job.csvPath.isEmpty())) return std::nullopt;
  RenderSpec spec{};
  if (!job.render.empty()) {
    auto parsed = parseRenderSpec(job.render);
    if (!parsed) return std::nullopt;  // checkJob said so already
    spec = *parsed;
  }
  const auto counted = jobTokens(job, model, ids);
  if (!counted) return std::nullopt;  // the run says why
  const Index tokens = *counted;
  attn::models::RunOptions options;
  options.keep = job.onDemand ? attn::models::RunOptions::Keep::OnDemand : attn::models::RunOptions::Keep::Auto;
  auto keep = options.keep;
  attn::models::run_bytes(model.config(), tokens, options, &keep);
  if (keep != attn::models::RunOptions::Keep::OnDemand) return std::nullopt;
  return onDemandRefusal(job, spec, tokens);
}

}  // namespace attn::ui
