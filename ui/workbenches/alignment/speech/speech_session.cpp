#include "workbenches/alignment/speech/speech_session.h"

namespace attn::ui {

namespace {

constexpr const char* kShaping = "shaping";

nlohmann::json shapingJson(const models::AttentionShaping& s) {
  return {{"sharpen", s.sharpen}, {"smooth", s.smooth}, {"top_k", s.top_k}, {"window", s.window}};
}

models::AttentionShaping shapingOf(const nlohmann::json& kinds) {
  models::AttentionShaping s;
  const auto at = kinds.find(kShaping);
  if (at == kinds.end() || !at->is_object()) return s;
  s.sharpen = at->value("sharpen", s.sharpen);
  s.smooth = at->value("smooth", s.smooth);
  s.top_k = at->value("top_k", s.top_k);
  s.window = at->value("window", s.window);
  return s;
}

class SpeechSession final : public AlignmentKindSession {
 public:
  void defaults(nlohmann::json& kinds) const override { kinds[kShaping] = shapingJson({}); }
  Result<void> read(io::SessionMembers& m, nlohmann::json& kinds, std::vector<Error>& warnings) const override {
    const auto shaping = m.object(kShaping);
    if (!shaping) return std::unexpected(shaping.error());
    if (!*shaping) return {};
    models::AttentionShaping s = shapingOf(kinds);
    io::SessionMembers o(m.reader(), **shaping, "tabs.alignment.shaping");
    // Read in this order; the first refusal is the session's.
    for (const auto& got :
         {o.number("sharpen", 0.01, 100.0, s.sharpen), o.boolean("smooth", s.smooth),
          o.whole("top_k", 0, io::kMaxSessionIndex, s.top_k), o.whole("window", 0, io::kMaxSessionIndex, s.window)}) {
      if (!got) return got;
    }
    o.warn_unknown(warnings);
    if (s.smooth) s.sharpen = 1.0f;  // the sigmoid has no beta
    kinds[kShaping] = shapingJson(s);
    return {};
  }
};

}  // namespace

const AlignmentKindSession& speech_session() {
  static const SpeechSession part;
  return part;
}

models::AttentionShaping speechShaping(const AlignmentSection& section) { return shapingOf(section.kinds); }
void setSpeechShaping(AlignmentSection& section, const models::AttentionShaping& shaping) {
  section.kinds[kShaping] = shapingJson(shaping);
}

}  // namespace attn::ui
