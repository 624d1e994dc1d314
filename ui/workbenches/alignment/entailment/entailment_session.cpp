#include "workbenches/alignment/entailment/entailment_session.h"

#include <utility>

namespace attn::ui {

namespace {

constexpr const char* kPair = "pair";

class EntailmentSession final : public AlignmentKindSession {
 public:
  void defaults(nlohmann::json& kinds) const override { kinds[kPair] = std::string(); }
  Result<void> read(io::SessionMembers& m, nlohmann::json& kinds, std::vector<Error>& /*warnings*/) const override {
    std::string pair = kinds.value(kPair, std::string());
    auto got = m.text(kPair, io::kMaxSessionText, pair);
    if (got) kinds[kPair] = std::move(pair);
    return got;
  }
};

}  // namespace

const AlignmentKindSession& entailment_session() {
  static const EntailmentSession part;
  return part;
}

std::string entailmentPair(const AlignmentSection& section) { return section.kinds.value(kPair, std::string()); }
void setEntailmentPair(AlignmentSection& section, std::string pair) { section.kinds[kPair] = std::move(pair); }

}  // namespace attn::ui
