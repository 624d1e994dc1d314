// A review classifier's views: a page of its own with the predicted label and probabilities, the text shaded per
// pooling head and the sentence weights (or the three readings of saliency side by side, a Display option of its
// own), the words shaded by an attribution of the predicted label (a Display option shared with entailment) and, under
// it, the matrices behind a reading (the LSTM's gates, the CNN's activations), one at a time.
#pragma once

#include "workbenches/alignment/alignment_attribution.h"
#include "workbenches/alignment/alignment_views.h"

class QCheckBox;
class QComboBox;
class QScrollArea;
class QSplitter;

namespace attn::ui {

class HeatmapView;

class ReviewsViews : public AlignmentViews {
  Q_OBJECT

 public:
  using AlignmentViews::AlignmentViews;

  void buildDisplay(QWidget* group, QFormLayout& form) override;
  void buildPage(QStackedWidget* pages) override;
  QWidget* ownPage() const override;
  void setOpen(bool open) override;
  void setPlaceholder(const QString& message) override;
  void addToRequest(AlignmentRequest& request) const override;
  void save(AlignmentSection& section, const QString& pair) const override;
  void restore(const AlignmentSection& section, QString& pair) override;
  void showMaps(const AlignmentViewState& state) override;
  const attn::AttentionMap* currentMap(const AlignmentViewState& state) const override;
  const render::TextFigure& currentFigure() const override { return figure_; }
  TextFigureView* figureView() const override { return reviewView_; }
  QString summary(const AlignmentViewState& state) const override;
  AlignmentInputCount inputCount(const AlignmentViewState& state) const override;
  void setColormap(render::Colormap map) override;

 private:
  void showMatrix();

  std::shared_ptr<const AlignmentOutcome> outcome_;  // the run the matrices are of
  render::TextFigure figure_;
  QCheckBox* readingsCheck_ = nullptr;
  AttributionDisplay attribution_;
  QScrollArea* reviewScroll_ = nullptr;
  TextFigureView* reviewView_ = nullptr;
  QSplitter* reviewPage_ = nullptr;  // the figure over the matrix panel
  QWidget* matrixPanel_ = nullptr;
  QComboBox* matrixBox_ = nullptr;
  HeatmapView* reviewHeatmap_ = nullptr;
};

std::unique_ptr<AlignmentViews> makeReviewsViews(const AlignmentPage& page, QObject* parent);

}  // namespace attn::ui
