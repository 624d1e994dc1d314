// The registry of the Alignment tab's pages: one per line of alignment_kinds.h.
#include "workbenches/alignment/alignment_page.h"

#include "workbenches/alignment/alignment_models.h"

#include <QCoreApplication>

#include <vector>

namespace attn::ui {

// Each kind's page (alignment/<kind>/<kind>_page.cpp), one per line of alignment_kinds.h.
#define ALIGNMENT_KIND(Kind) std::unique_ptr<const AlignmentPage> make##Kind##Page();
#include "workbenches/alignment/alignment_kinds.h"
#undef ALIGNMENT_KIND

namespace {

std::vector<std::unique_ptr<const AlignmentPage>> makePages() {
  std::vector<std::unique_ptr<const AlignmentPage>> pages;
#define ALIGNMENT_KIND(Kind) pages.push_back(make##Kind##Page());
#include "workbenches/alignment/alignment_kinds.h"
#undef ALIGNMENT_KIND
  return pages;
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
