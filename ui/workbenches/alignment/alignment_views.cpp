// The registry of the Alignment tab's views (alignment_views.h): one line per kind of model with views of its own;
// every other kind (dates, headlines) gets the shared seq2seq views.
#include "workbenches/alignment/alignment_views.h"

#include "views/text_figure_view.h"
#include "workbenches/alignment/alignment_page.h"
#include "workbenches/alignment/alignment_seq2seq_views.h"
#include "workbenches/alignment/alignment_step_page.h"
#include "workbenches/alignment/entailment/entailment_views.h"
#include "workbenches/alignment/reviews/reviews_views.h"
#include "workbenches/alignment/speech/speech_views.h"

#include <utility>

using namespace Qt::StringLiterals;

namespace attn::ui {

namespace {

using ViewsFactory = std::unique_ptr<AlignmentViews> (*)(const AlignmentPage&, QObject*);

// The kinds with views of their own, by their page's name.
constexpr std::pair<const char*, ViewsFactory> kOwnViews[] = {
    {"reviews", makeReviewsViews},
    {"entailment", makeEntailmentViews},
    {"speech", makeSpeechViews},
};

}  // namespace

std::unique_ptr<AlignmentViews> makeAlignmentViews(const AlignmentPage& page, QObject* parent) {
  for (const auto& [name, make] : kOwnViews) {
    if (page.name() == QLatin1StringView(name)) return make(page, parent);
  }
  return std::make_unique<Seq2SeqViews>(page, parent);
}

AlignmentViews::AlignmentViews(const AlignmentPage& page, QObject* parent) : QObject(parent), page_(page) {}

void AlignmentViews::buildSteps(AlignmentStepPage& steps, QVBoxLayout& /*column*/) { steps_ = &steps; }

QString AlignmentViews::emptyInputMessage(const QString& /*text*/) const { return page_.text().emptyInput; }

const render::TextFigure& AlignmentViews::currentFigure() const { return steps_->figure(); }

TextFigureView* AlignmentViews::figureView() const { return steps_->figureView(); }

}  // namespace attn::ui
