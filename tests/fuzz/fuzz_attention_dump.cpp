// The attention-dump reader (*.attn.safetensors) over arbitrary bytes, then what the app does with a dump
// it opened: every map, the head average, attention rollout and the head statistics. A dump's numbers come
// from anywhere (NaN, negative, rows that do not sum to 1): the analysis must survive them.
#include "fuzz_util.h"

#include "attn/analysis/attention_analysis.h"
#include "attn/io/attention_dump.h"

#include <cstddef>
#include <cstdint>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attn;
  constexpr const char* kName = "fuzz.attn.safetensors";
  auto dump = io::parse_attention_dump(std::vector<std::uint8_t>(data, data + size), kName);
  if (!dump) {
    fuzz::check_error(dump.error(), kName);
    return 0;
  }
  const LayeredTrace& trace = dump->trace;
  const auto tokens = static_cast<Index>(trace.tokens.size());
  fuzz::require(tokens > 0 && !trace.layers.empty());
  fuzz::require(trace.spans.empty() || trace.spans.size() == trace.tokens.size());
  for (const LayerAttention& l : trace.layers) {
    fuzz::require(trace.find(l.stage, l.layer) == &l);
    const HeadStack& maps = l.maps;
    const Index rows = l.stage == Stage::Cross ? static_cast<Index>(trace.cross_rows.size()) : tokens;
    fuzz::require(maps.heads() >= 1 && maps.rows() == rows && maps.cols() == tokens);
    for (int h = 0; h < maps.heads(); ++h) {
      const Matrix m = maps.head(h);
      fuzz::require(m.rows() == rows && m.cols() == tokens);
    }
    (void)maps.mean();
    for (int head : {-1, 0, maps.heads() - 1}) fuzz::require(trace.map(l.stage, l.layer, head) != nullptr);
  }
  for (Stage stage : {Stage::Encoder, Stage::Decoder}) {
    if (trace.layer_count(stage) == 0) continue;
    for (auto fusion : {analysis::HeadFusion::Mean, analysis::HeadFusion::Max, analysis::HeadFusion::Min}) {
      analysis::RolloutOptions options;
      options.stage = stage;
      options.fusion = fusion;
      options.discard_ratio = fusion == analysis::HeadFusion::Mean ? 0.0f : 0.5f;
      auto rolled = analysis::rollout(trace, options);
      if (rolled) fuzz::require(rolled->rows() == tokens && rolled->cols() == tokens);
    }
    analysis::StatsOptions stats;
    stats.stage = stage;
    stats.special_positions = {static_cast<int>(tokens) - 1};
    (void)analysis::head_statistics(trace, stats);
  }
  return 0;
}
