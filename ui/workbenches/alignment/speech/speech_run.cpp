#include "workbenches/alignment/speech/speech_run.h"

#include <algorithm>
#include <utility>

namespace attn::ui {

namespace {

class SpeechRunner final : public AlignmentRunner {
 public:
  explicit SpeechRunner(std::shared_ptr<const attn::models::Seq2SeqModel> model) : session_(std::move(model)) {}
  void run(const AlignmentRequest& request, AlignmentOutcome& outcome) override {
    auto input = speechInput(request.text, request.wavPath, request.voice);
    if (!input) {
      outcome.error = input.error();
      return;
    }
    outcome.speech = std::make_shared<const SpeechInput>(std::move(*input));
    attn::models::DecodeOptions options;
    options.beam = std::max(1, request.beam);
    options.shaping = request.shaping;
    setSeq2SeqRun(session_.run_frames(outcome.speech->logMel, options), outcome);
  }

 private:
  attn::models::Seq2SeqRunner session_;
};

}  // namespace

std::unique_ptr<AlignmentRunner> makeSpeechRunner(const AlignmentModel& model) {
  return std::make_unique<SpeechRunner>(model.seq2seq);
}

}  // namespace attn::ui
