#include "workbenches/alignment/entailment/entailment_run.h"

#include <utility>

namespace attn::ui {

namespace {

class EntailmentRunner final : public AlignmentRunner {
 public:
  explicit EntailmentRunner(std::shared_ptr<const attn::models::EntailmentModel> model)
      : model_(model), session_(std::move(model)) {}
  void run(const AlignmentRequest& request, AlignmentOutcome& outcome) override {
    auto run = session_.run(request.text, request.hypothesis);
    if (!run) {
      outcome.error = run.error();
      return;
    }
    auto shared = std::make_shared<const attn::models::EntailmentRun>(std::move(*run));
    outcome.entailmentMap = shared->map();
    outcome.entailment = std::move(shared);
    if (const auto options = attributionOptions(request)) {
      setAttribution(attn::models::attribute_words(*model_, *outcome.entailment, *options), outcome);
    }
  }

 private:
  std::shared_ptr<const attn::models::EntailmentModel> model_;
  attn::models::EntailmentRunner session_;
};

}  // namespace

std::unique_ptr<AlignmentRunner> makeEntailmentRunner(const AlignmentModel& model) {
  return std::make_unique<EntailmentRunner>(model.entailment);
}

}  // namespace attn::ui
