// The registry of the Alignment tab's pages: one line per kind of model.
#include "workbenches/alignment/alignment_page.h"

#include "workbenches/alignment/alignment_models.h"
#include "workbenches/alignment/dates/dates_page.h"
#include "workbenches/alignment/entailment/entailment_page.h"
#include "workbenches/alignment/headlines/headlines_page.h"
#include "workbenches/alignment/reviews/reviews_page.h"
#include "workbenches/alignment/speech/speech_page.h"

#include <QCoreApplication>

#include <array>

namespace attn::ui {

namespace {

std::array<std::unique_ptr<const AlignmentPage>, 5> makePages() {
  return {makeDatesPage(), makeHeadlinesPage(), makeReviewsPage(), makeEntailmentPage(), makeSpeechPage()};
}

}  // namespace

QString AlignmentPage::stepToolTip(const QString& units) {
  return QCoreApplication::translate("AlignmentModels",
                                     "The output step in view (Left/Right, Home/End): its row of the heatmap is "
                                     "outlined and the source %1 are shaded by its attention. A click on a heatmap "
                                     "row goes to that step.")
      .arg(units);
}

std::span<const std::unique_ptr<const AlignmentPage>> alignmentPages() {
  static const auto pages = makePages();
  return pages;
}

const AlignmentPage* findAlignmentPage(const QString& name) {
  for (const auto& page : alignmentPages()) {
    if (page->name() == name) return page.get();
  }
  return nullptr;
}

const AlignmentPage& alignmentPageFor(const AlignmentModel& model) {
  for (const auto& page : alignmentPages()) {
    if (page->shows(model)) return *page;
  }
  return *alignmentPages().front();
}

}  // namespace attn::ui
