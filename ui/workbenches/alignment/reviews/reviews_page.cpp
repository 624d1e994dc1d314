#include "workbenches/alignment/reviews/reviews_page.h"

#include "workbenches/alignment/alignment_models.h"
#include "workbenches/alignment/reviews/reviews_cli.h"
#include "workbenches/alignment/reviews/reviews_run.h"

#include <QCoreApplication>

namespace attn::ui {

namespace {

class ReviewsPage final : public AlignmentPage {
 public:
  QString name() const override { return QStringLiteral("reviews"); }
  bool shows(const AlignmentModel& model) const override { return model.classifier != nullptr; }
  AlignmentTaskText text() const override {
    return {tr("&Review: a few sentences"),
            tr("Classified as you type; the shading follows every keystroke"),
            tr("A review of a few sentences"),
            QString(),
            tr("The input is empty: type a review to see its word attention. The view shows the "
               "last input."),
            tr("words")};
  }
  AlignmentPageParts parts() const override { return {.readings = true, .attribution = true}; }
  std::unique_ptr<AlignmentRunner> runner(const AlignmentModel& model) const override {
    return makeReviewsRunner(model);
  }
  AlignStep runCli(const AlignJob& job, const AlignmentModel& model, const QElapsedTimer& timer,
                   RenderReport& report) const override {
    return runReviewsCli(job, model, timer, report);
  }
  QStringList examples() const override { return reviewExamples(); }

 private:
  // Under the translation context the tab's texts have always had.
  static QString tr(const char* text) { return QCoreApplication::translate("AlignmentModels", text); }
};

}  // namespace

std::unique_ptr<const AlignmentPage> makeReviewsPage() { return std::make_unique<ReviewsPage>(); }

}  // namespace attn::ui
