#include "workbenches/alignment/reviews/reviews_session.h"

namespace attn::ui {

namespace {

constexpr const char* kReadings = "readings";

class ReviewsSession final : public AlignmentKindSession {
 public:
  void defaults(nlohmann::json& kinds) const override { kinds[kReadings] = true; }
  Result<void> read(io::SessionMembers& m, nlohmann::json& kinds, std::vector<Error>& /*warnings*/) const override {
    bool readings = kinds.value(kReadings, true);
    auto got = m.boolean(kReadings, readings);
    if (got) kinds[kReadings] = readings;
    return got;
  }
};

}  // namespace

const AlignmentKindSession& reviews_session() {
  static const ReviewsSession part;
  return part;
}

bool reviewsReadings(const AlignmentSection& section) { return section.kinds.value(kReadings, true); }
void setReviewsReadings(AlignmentSection& section, bool readings) { section.kinds[kReadings] = readings; }

}  // namespace attn::ui
