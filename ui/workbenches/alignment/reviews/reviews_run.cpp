#include "workbenches/alignment/reviews/reviews_run.h"

#include <utility>

using namespace Qt::StringLiterals;

namespace attn::ui {

namespace {

class ReviewsRunner final : public AlignmentRunner {
 public:
  explicit ReviewsRunner(const AlignmentModel& model) : key_(model.key), model_(model.classifier), session_(model_) {}
  void run(const AlignmentRequest& request, AlignmentOutcome& outcome) override {
    auto run = session_.run(request.text);
    if (!run) {
      outcome.error = run.error();
      return;
    }
    auto shared = std::make_shared<const attn::models::ClassifierRun>(std::move(*run));
    for (const auto& map : shared->maps()) outcome.maps.push_back(markUnknown(*shared, map));
    outcome.wordMap = outcome.maps.front();
    outcome.classifier = std::move(shared);
    if (const auto options = attributionOptions(request)) {
      setAttribution(attn::models::attribute_words(*model_, *outcome.classifier, *options), outcome);
    }
    if (request.readings && !model_->config().hierarchical) runReadings(request, outcome);
  }

 private:
  void runReadings(const AlignmentRequest& request, AlignmentOutcome& outcome);

  QString key_;  // the bundled model's key (empty for a folder)
  std::shared_ptr<const attn::models::ClassifierModel> model_;
  attn::models::ClassifierRunner session_;
  // The readings' models, loaded on first use and kept (a few hundred kilobytes each).
  struct Reader {
    QString key;
    std::shared_ptr<const attn::models::ClassifierModel> model;
    std::unique_ptr<attn::models::ClassifierRunner> runner;
    QString error;  // it could not be loaded
  };
  std::vector<Reader> readers_;
};

void ReviewsRunner::runReadings(const AlignmentRequest& request, AlignmentOutcome& outcome) {
  if (readers_.empty()) {
    for (const char* key : kReadingModels) readers_.push_back(Reader{QString::fromLatin1(key), nullptr, nullptr, {}});
  }
  for (Reader& reader : readers_) {
    render::SaliencyReading reading;
    if (key_ == reader.key) {  // the open model: its own run
      reading.run = outcome.classifier;
      reading.model = model_;
      outcome.readings.push_back(std::move(reading));
      continue;
    }
    if (!reader.model && reader.error.isEmpty()) {
      auto loaded = loadAlignmentModel(reader.key);
      if (!loaded) {
        reader.error = QString::fromStdString(loaded.error().message());
      } else if (!loaded->classifier) {
        reader.error = u"not a classifier"_s;
      } else {
        reader.model = loaded->classifier;
        reader.runner = std::make_unique<attn::models::ClassifierRunner>(reader.model);
      }
    }
    if (!reader.model) {
      outcome.readingNotes.append(reader.key + u": "_s + reader.error);
      continue;
    }
    auto run = reader.runner->run(request.text);
    if (!run) {
      outcome.readingNotes.append(reader.key + u": "_s + QString::fromStdString(run.error().message()));
      continue;
    }
    reading.model = reader.model;
    reading.run = std::make_shared<const attn::models::ClassifierRun>(std::move(*run));
    outcome.readings.push_back(std::move(reading));
  }
}

}  // namespace

std::unique_ptr<AlignmentRunner> makeReviewsRunner(const AlignmentModel& model) {
  return std::make_unique<ReviewsRunner>(model);
}

}  // namespace attn::ui
