// The registry of the Alignment tab's views (alignment_views.h): each kind's, one per line of alignment_kinds.h, by
// its page.
#include "workbenches/alignment/alignment_views.h"

#include "views/text_figure_view.h"
#include "workbenches/alignment/alignment_page.h"
#include "workbenches/alignment/alignment_seq2seq_views.h"
#include "workbenches/alignment/alignment_step_page.h"

namespace attn::ui {

// Each kind's views (alignment/<kind>/<kind>_views.cpp), one per line of alignment_kinds.h.
#define ALIGNMENT_KIND(Kind) std::unique_ptr<AlignmentViews> make##Kind##Views(const AlignmentPage&, QObject*);
#include "workbenches/alignment/alignment_kinds.h"
#undef ALIGNMENT_KIND

std::unique_ptr<AlignmentViews> makeAlignmentViews(const AlignmentPage& page, QObject* parent) {
  using Factory = std::unique_ptr<AlignmentViews> (*)(const AlignmentPage&, QObject*);
  static constexpr Factory kViews[] = {
#define ALIGNMENT_KIND(Kind) make##Kind##Views,
#include "workbenches/alignment/alignment_kinds.h"
#undef ALIGNMENT_KIND
  };
  // The pages and the views come from the same list, in the same order.
  const auto pages = alignmentPages();
  for (std::size_t k = 0; k < pages.size() && k < std::size(kViews); ++k) {
    if (pages[k].get() == &page) return kViews[k](page, parent);
  }
  return std::make_unique<Seq2SeqViews>(page, parent);
}

AlignmentViews::AlignmentViews(const AlignmentPage& page, QObject* parent) : QObject(parent), page_(page) {}

void AlignmentViews::buildSteps(AlignmentStepPage& steps, QVBoxLayout& /*column*/) { steps_ = &steps; }

QString AlignmentViews::emptyInputMessage(const QString& /*text*/) const { return page_.text().emptyInput; }

const render::TextFigure& AlignmentViews::currentFigure() const { return steps_->figure(); }

TextFigureView* AlignmentViews::figureView() const { return steps_->figureView(); }

}  // namespace attn::ui
