// A review classifier's views (reviews_views.h).
#include "workbenches/alignment/reviews/reviews_views.h"

#include "render/alignment_render.h"
#include "render/strings.h"
#include "workbenches/alignment/reviews/reviews_session.h"
#include "views/heatmap_view.h"
#include "views/text_figure_view.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSplitter>
#include <QStackedWidget>
#include <QVBoxLayout>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace attn::ui {

std::unique_ptr<AlignmentViews> makeReviewsViews(const AlignmentPage& page, QObject* parent) {
  return std::make_unique<ReviewsViews>(page, parent);
}

void ReviewsViews::buildDisplay(QWidget* group, QFormLayout& form) {
  readingsCheck_ = new QCheckBox(tr("Com&pare the three readings of saliency"), group);
  readingsCheck_->setObjectName(u"alignmentReadings"_s);
  readingsCheck_->setChecked(true);
  readingsCheck_->setToolTip(
      tr("Reviews: shade the same text by the three bundled classifiers whose saliency needs no query (attention "
         "pooling, an LSTM's gates, a CNN's max pooling), each with its prediction and its held-out share on the "
         "deciding words"));
  form.addRow(readingsCheck_);
  connect(readingsCheck_, &QCheckBox::toggled, this, &AlignmentViews::inputChanged);
  attribution_.build(group, form, this);
}

// The shaded text and, under it, the matrices behind a reading.
void ReviewsViews::buildPage(QStackedWidget* pages) {
  reviewScroll_ = new QScrollArea(pages);
  reviewScroll_->setWidgetResizable(true);
  reviewScroll_->setFrameShape(QFrame::NoFrame);
  reviewScroll_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  reviewView_ = new TextFigureView(reviewScroll_);
  reviewView_->setObjectName(u"alignmentReview"_s);
  reviewView_->setPlaceholder(tr("Classifying\u2026"));
  reviewScroll_->setWidget(reviewView_);
  reviewPage_ = new QSplitter(Qt::Vertical, pages);
  reviewPage_->setChildrenCollapsible(false);
  reviewPage_->addWidget(reviewScroll_);
  // The matrices behind a reading (the LSTM's gates, the CNN's activations), one at a time.
  matrixPanel_ = new QWidget(reviewPage_);
  matrixPanel_->setObjectName(u"alignmentMatrixPanel"_s);
  auto* matrixLayout = new QVBoxLayout(matrixPanel_);
  matrixLayout->setContentsMargins(0, 4, 0, 0);
  auto* matrixRow = new QHBoxLayout();
  auto* matrixTitle = new QLabel(tr("Matr&ix:"), matrixPanel_);
  matrixBox_ = new QComboBox(matrixPanel_);
  matrixBox_->setObjectName(u"alignmentMatrix"_s);
  matrixBox_->setToolTip(tr("Which of the model's matrices the heatmap shows (File > Export Matrix saves it)"));
  matrixBox_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  matrixTitle->setBuddy(matrixBox_);
  matrixRow->addWidget(matrixTitle);
  matrixRow->addWidget(matrixBox_);
  matrixRow->addStretch(1);
  matrixLayout->addLayout(matrixRow);
  reviewHeatmap_ = new HeatmapView(HeatmapView::Style::Full, matrixPanel_);
  reviewHeatmap_->setObjectName(u"alignmentReviewHeatmap"_s);
  matrixLayout->addWidget(reviewHeatmap_, 1);
  reviewPage_->addWidget(matrixPanel_);
  reviewPage_->setStretchFactor(0, 2);
  reviewPage_->setStretchFactor(1, 3);
  pages->addWidget(reviewPage_);
  connect(matrixBox_, &QComboBox::currentIndexChanged, this, [this](int) { showMatrix(); });
}

QWidget* ReviewsViews::ownPage() const { return reviewPage_; }

void ReviewsViews::setOpen(bool open) {
  readingsCheck_->setVisible(open);
  attribution_.setOpen(open);
  if (!open) return;
  outcome_.reset();
  reviewView_->clear();
  reviewHeatmap_->clear();
  matrixPanel_->setVisible(false);
}

void ReviewsViews::setPlaceholder(const QString& message) {
  reviewView_->setPlaceholder(message.isEmpty() ? tr("Classifying\u2026") : message);
}

void ReviewsViews::addToRequest(AlignmentRequest& request) const {
  request.readings = readingsCheck_->isChecked();
  attribution_.addToRequest(request);
}

void ReviewsViews::save(AlignmentSection& section, const QString& /*pair*/) const {
  setReviewsReadings(section, readingsCheck_->isChecked());
  attribution_.save(section);
}

void ReviewsViews::restore(const AlignmentSection& section, QString& /*pair*/) {
  const QSignalBlocker block(readingsCheck_);  // the tab's run reads it
  readingsCheck_->setChecked(reviewsReadings(section));
  attribution_.restore(section);
}

void ReviewsViews::showMaps(const AlignmentViewState& state) {
  const auto& outcome = state.outcome;
  if (!outcome || !outcome->classifier || !state.source || !state.source->model.classifier) return;
  outcome_ = outcome;
  figure_ = render::reviewFigure(*outcome->classifier, state.source->model.classifier->config(), outcome->request.text,
                                 state.colormap, outcome->readings, attributionShading(*outcome));
  reviewView_->setFigure(figure_);
  // The matrix selector lists the run's matrices by name; the one in view stays when it is still there.
  const QString current = matrixBox_->currentText();
  {
    const QSignalBlocker block(matrixBox_);
    matrixBox_->clear();
    for (const auto& map : outcome->maps) {
      matrixBox_->addItem(
          tr("%1 \u00b7 %2 \u00d7 %3").arg(fromStd(map->name), fromStd(map->row_axis), fromStd(map->col_axis)));
    }
    const int keep = matrixBox_->findText(current);
    matrixBox_->setCurrentIndex(keep >= 0 ? keep : (outcome->maps.size() > 1 ? 1 : 0));
  }
  // Attention pooling's heads x words map is the shading above; the LSTM and the CNN have matrices of their own.
  const bool matrices = outcome->maps.size() > 1;
  if (matrices && !matrixPanel_->isVisibleTo(qobject_cast<QWidget*>(parent()))) {
    // On showing, the figure keeps the larger part: the matrix's size hint would take nearly all of it.
    const int total = std::max(400, reviewPage_->height());
    reviewPage_->setSizes({total * 11 / 20, total * 9 / 20});
  }
  matrixPanel_->setVisible(matrices);
  showMatrix();
}

void ReviewsViews::showMatrix() {
  if (!outcome_ || !outcome_->classifier) return;
  const int index = matrixBox_->currentIndex();
  if (index < 0 || std::size_t(index) >= outcome_->maps.size()) {
    reviewHeatmap_->clear();
    return;
  }
  reviewHeatmap_->setMap(outcome_->maps[std::size_t(index)]);
}

const attn::AttentionMap* ReviewsViews::currentMap(const AlignmentViewState& state) const {
  const auto& outcome = state.outcome;
  if (!outcome) return nullptr;
  const int selected = matrixPanel_->isVisibleTo(qobject_cast<QWidget*>(parent())) ? matrixBox_->currentIndex() : 0;
  return selected >= 0 && std::size_t(selected) < outcome->maps.size() ? outcome->maps[std::size_t(selected)].get()
                                                                       : outcome->wordMap.get();
}

QString ReviewsViews::summary(const AlignmentViewState& state) const {
  const auto& run = *state.outcome->classifier;
  const auto& config = state.source->model.classifier->config();
  const QString label = std::size_t(run.predicted) < config.labels.size()
                            ? fromStd(config.labels[std::size_t(run.predicted)])
                            : QString::number(run.predicted);
  const float p =
      std::size_t(run.predicted) < run.probabilities.size() ? run.probabilities[std::size_t(run.predicted)] : 0.0f;
  return tr("alignment: %1 \u00b7 %2 words \u2192 %3 (%4) \u00b7 %5 ms")
      .arg(state.source->model.name)
      .arg(run.input.words.size())
      .arg(label, render::percentText(p))
      .arg(state.outcome->runMs, 0, 'f', 1);
}

AlignmentInputCount ReviewsViews::inputCount(const AlignmentViewState& state) const {
  const auto& run = *state.outcome->classifier;
  QString read = tr("%1 words").arg(run.input.words.size());
  if (run.input.sentences > 1) read += tr(" in %1 sentences").arg(run.input.sentences);
  return {read, std::count(run.unknown.begin(), run.unknown.end(), true), std::int64_t(run.unknown.size())};
}

void ReviewsViews::setColormap(render::Colormap map) { reviewHeatmap_->setColormap(map); }

}  // namespace attn::ui
