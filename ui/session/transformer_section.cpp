#include "session/transformer_section.h"

#include "core/try.h"

#include <array>
#include <string_view>
#include <utility>

namespace attn::ui {

namespace {
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;
constexpr std::array<std::string_view, 6> kViews = {"head", "model", "stats", "overlay", "matrix", "lens"};
constexpr std::array<std::string_view, 3> kMatrixModes = {"head", "layer-mean", "rollout"};
constexpr std::array<std::string_view, 3> kFusions = {"mean", "max", "min"};
constexpr std::array<std::string_view, 2> kOverlaySources = {"rollout", "head"};
constexpr std::array<std::string_view, 3> kAblations = {"zero", "mean", "resample"};
constexpr std::array<std::string_view, 2> kCompareShows = {"side-by-side", "difference"};
}  // namespace

ojson to_json(const TransformerSection& t) {
  return {{"source", t.source},
          {"text", t.text},
          {"pair", t.pair},
          {"image", image_json(t.image)},
          {"layer", t.layer},
          {"head", t.head},
          {"view", kViews[static_cast<std::size_t>(t.view)]},
          {"matrix", kMatrixModes[static_cast<std::size_t>(t.matrix)]},
          {"rollout",
           {{"fusion", kFusions[static_cast<std::size_t>(t.fusion)]},
            {"discard_ratio", t.discard_ratio},
            {"residual", t.residual}}},
          {"overlay", {{"source", kOverlaySources[static_cast<std::size_t>(t.overlay)]}, {"alpha", t.overlay_alpha}}},
          {"line_threshold", t.line_threshold},
          {"colormap", t.colormap},
          {"generate",
           {{"new_tokens", t.new_tokens},
            {"temperature", t.temperature},
            {"top_k", t.top_k},
            {"top_p", t.top_p},
            {"seed", t.seed},
            {"generated", t.generated},
            {"step", t.step}}},
          {"intervene",
           {{"ablated", t.ablated},
            {"ablation", kAblations[static_cast<std::size_t>(t.ablation)]},
            {"compare", t.compare},
            {"compare_text", t.compare_text},
            {"compare_show", kCompareShows[static_cast<std::size_t>(t.compare_show)]}}},
          {"causal", to_json(t.causal)}};
}

Result<TransformerSection> read_transformer_section(const io::SessionReader& reader, const nlohmann::json& j,
                                                    std::vector<Error>& warnings) {
  io::SessionMembers m(reader, j, "tabs.transformer");
  TransformerSection s;
  ATTN_TRY(m.text("source", io::kMaxSessionName, s.source, true));
  ATTN_TRY(m.text("text", io::kMaxSessionText, s.text));
  ATTN_TRY(m.text("pair", io::kMaxSessionText, s.pair));
  ATTN_TRY(read_image(m, "image", s.image));
  ATTN_TRY(m.whole("layer", 0, io::kMaxSessionIndex, s.layer));
  ATTN_TRY(m.whole("head", 0, io::kMaxSessionIndex, s.head));
  ATTN_TRY(m.choice("view", kViews, s.view));
  ATTN_TRY(m.choice("matrix", kMatrixModes, s.matrix));
  const nlohmann::json* rollout = nullptr;
  ATTN_ASSIGN(rollout, m.object("rollout"));
  if (rollout) {
    io::SessionMembers r(reader, *rollout, "tabs.transformer.rollout");
    ATTN_TRY(r.choice("fusion", kFusions, s.fusion));
    ATTN_TRY(r.number("discard_ratio", 0.0, 0.99, s.discard_ratio));
    ATTN_TRY(r.number("residual", 0.0, 1.0, s.residual));
    r.warn_unknown(warnings);
  }
  const nlohmann::json* overlay = nullptr;
  ATTN_ASSIGN(overlay, m.object("overlay"));
  if (overlay) {
    io::SessionMembers o(reader, *overlay, "tabs.transformer.overlay");
    ATTN_TRY(o.choice("source", kOverlaySources, s.overlay));
    ATTN_TRY(o.number("alpha", 0.0, 1.0, s.overlay_alpha));
    o.warn_unknown(warnings);
  }
  ATTN_TRY(m.number("line_threshold", 0.0, 0.5, s.line_threshold));
  ATTN_TRY(read_colormap(m, "colormap", s.colormap));
  const nlohmann::json* generate = nullptr;
  ATTN_ASSIGN(generate, m.object("generate"));
  if (generate) {
    io::SessionMembers g(reader, *generate, "tabs.transformer.generate");
    ATTN_TRY(g.whole("new_tokens", 1, 4096, s.new_tokens));
    ATTN_TRY(g.number("temperature", 0.0, 5.0, s.temperature));
    ATTN_TRY(g.whole("top_k", 0, 100000, s.top_k));
    ATTN_TRY(g.number("top_p", 0.01, 1.0, s.top_p));
    ATTN_TRY(g.whole("seed", 0, 1'000'000'000, s.seed));
    ATTN_TRY(g.boolean("generated", s.generated));
    ATTN_TRY(g.whole("step", 0, 4095, s.step));
    g.warn_unknown(warnings);
  }
  const nlohmann::json* intervene = nullptr;
  ATTN_ASSIGN(intervene, m.object("intervene"));
  if (intervene) {
    io::SessionMembers v(reader, *intervene, "tabs.transformer.intervene");
    ATTN_TRY(v.text("ablated", io::kMaxSessionName, s.ablated));
    ATTN_TRY(v.choice("ablation", kAblations, s.ablation));
    ATTN_TRY(v.boolean("compare", s.compare));
    ATTN_TRY(v.text("compare_text", io::kMaxSessionText, s.compare_text));
    ATTN_TRY(v.choice("compare_show", kCompareShows, s.compare_show));
    v.warn_unknown(warnings);
  }
  const nlohmann::json* causal = nullptr;
  ATTN_ASSIGN(causal, m.object("causal"));
  if (causal) ATTN_ASSIGN(s.causal, read_causal_section(reader, *causal, warnings));
  m.warn_unknown(warnings);
  return s;
}

}  // namespace attn::ui
