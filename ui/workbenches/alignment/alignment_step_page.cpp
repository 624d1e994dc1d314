// The step page of the Alignment tab (alignment_step_page.h): its widgets, and ConvS2S's decoder layers.
#include "workbenches/alignment/alignment_step_page.h"

#include "views/heatmap_view.h"
#include "views/text_figure_view.h"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSlider>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <utility>

using namespace Qt::StringLiterals;

namespace attn::ui {

AlignmentStepPage::AlignmentStepPage(QWidget* parent,
                                     const std::function<void(AlignmentStepPage&, QVBoxLayout&)>& addViews)
    : QWidget(parent) {
  auto* decoding = new QVBoxLayout(this);
  decoding->setContentsMargins(0, 0, 0, 0);
  figureView_ = new TextFigureView(this);
  figureView_->setObjectName(u"alignmentDecoding"_s);
  figureView_->setPlaceholder(tr("Decoding\u2026"));
  figureView_->setToolTip(QString());
  decoding->addWidget(figureView_);
  addViews(*this, *decoding);
  auto* stepRow = new QHBoxLayout();
  stepTitle_ = new QLabel(tr("St&ep:"), this);
  slider_ = new QSlider(Qt::Horizontal, this);
  slider_->setObjectName(u"alignmentStep"_s);
  slider_->setRange(0, 0);
  slider_->setSingleStep(1);
  slider_->setPageStep(1);
  slider_->setTickPosition(QSlider::TicksBelow);
  slider_->setTickInterval(1);
  slider_->setToolTip(
      tr("The output step in view (Left/Right, Home/End): its row of the heatmap is outlined "
         "and the source characters are shaded by its attention. A click on a heatmap row "
         "goes to that step."));
  stepTitle_->setBuddy(slider_);
  stepLabel_ = new QLabel(this);
  stepLabel_->setObjectName(u"alignmentStepLabel"_s);
  stepLabel_->setTextFormat(Qt::PlainText);
  stepLabel_->setMinimumWidth(stepLabel_->fontMetrics().horizontalAdvance(u"step 12 of 12 \u00b7 \u201c0\u201d  "_s));
  stepRow->addWidget(stepTitle_);
  stepRow->addWidget(slider_, 1);
  stepRow->addWidget(stepLabel_);
  decoding->addLayout(stepRow);
  heatmapTitle_ = new QLabel(this);
  heatmapTitle_->setObjectName(u"alignmentHeatmapTitle"_s);
  heatmapTitle_->setTextFormat(Qt::PlainText);
  heatmapTitle_->setWordWrap(true);
  decoding->addWidget(heatmapTitle_);
  heatmap_ = new HeatmapView(HeatmapView::Style::Full, this);
  heatmap_->setObjectName(u"alignmentHeatmap"_s);
  heatmapGrid_ = new QGridLayout();
  heatmapGrid_->setSpacing(6);
  heatmapPanel_ = makeHeatmapPanel(heatmap_, meanTitle_, u"alignmentMeanTitle"_s);
  meanTitle_->hide();
  heatmapGrid_->addWidget(heatmapPanel_, 0, 0);
  decoding->addLayout(heatmapGrid_, 1);
  connect(slider_, &QSlider::valueChanged, this, &AlignmentStepPage::stepChanged);
  connect(heatmap_, &HeatmapView::cellClicked, this, [this](int row, int) { emit stepClicked(row); });
}

void AlignmentStepPage::setFigure(render::TextFigure figure) {
  figure_ = std::move(figure);
  figureView_->setFigure(figure_);
}

void AlignmentStepPage::setStepRange(int rows) {
  const QSignalBlocker block(slider_);
  slider_->setRange(0, std::max(0, rows - 1));
}

void AlignmentStepPage::setStepValue(int step) {
  const QSignalBlocker block(slider_);
  slider_->setValue(step);
}

void AlignmentStepPage::setColormap(render::Colormap map) {
  colormap_ = map;
  heatmap_->setColormap(map);
  for (auto* view : layerViews_) view->setColormap(map);
}

void AlignmentStepPage::clear() {
  figureView_->clear();
  figureView_->setVisible(true);
  heatmap_->clear();
}

QWidget* AlignmentStepPage::makeHeatmapPanel(HeatmapView* view, QLabel*& title, const QString& name) {
  auto* panel = new QWidget(this);
  auto* layout = new QVBoxLayout(panel);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  title = new QLabel(panel);
  title->setObjectName(name);
  title->setTextFormat(Qt::PlainText);
  title->setAlignment(Qt::AlignHCenter);
  QFont bold = title->font();
  bold.setBold(true);
  title->setFont(bold);
  layout->addWidget(title);
  view->setParent(panel);
  layout->addWidget(view, 1);
  return panel;
}

void AlignmentStepPage::placeHeatmapPanels(int layers) {
  // Layers 0 .. L-1, then the mean: two to a row up to four maps, a square-ish grid beyond.
  const int maps = layers + 1;
  const int columns = layers == 0 ? 1 : maps <= 4 ? 2 : int(std::ceil(std::sqrt(double(maps))));
  for (int i = 0; i < heatmapGrid_->rowCount(); ++i) heatmapGrid_->setRowStretch(i, 0);
  for (int i = 0; i < heatmapGrid_->columnCount(); ++i) heatmapGrid_->setColumnStretch(i, 0);
  for (int i = 0; i < maps; ++i) {
    QWidget* panel = i < layers ? layerPanels_[std::size_t(i)] : heatmapPanel_;
    heatmapGrid_->removeWidget(panel);
    heatmapGrid_->addWidget(panel, i / columns, i % columns);
    heatmapGrid_->setRowStretch(i / columns, 1);
    heatmapGrid_->setColumnStretch(i % columns, 1);
  }
}

void AlignmentStepPage::setLayers(const std::vector<std::shared_ptr<const attn::AttentionMap>>& maps) {
  while (layerViews_.size() < maps.size()) {
    const auto l = layerViews_.size();
    auto* view = new HeatmapView(HeatmapView::Style::Full);
    view->setObjectName(u"alignmentLayerHeatmap%1"_s.arg(l));
    view->setColormap(colormap_);
    connect(view, &HeatmapView::cellClicked, this, [this](int row, int) { emit stepClicked(row); });
    QLabel* title = nullptr;
    layerPanels_.push_back(makeHeatmapPanel(view, title, u"alignmentLayerTitle%1"_s.arg(l)));
    layerTitles_.push_back(title);
    layerViews_.push_back(view);
  }
  const int shown = int(maps.size());
  for (std::size_t l = 0; l < layerViews_.size(); ++l) {
    layerPanels_[l]->setVisible(l < maps.size());
    if (l >= maps.size()) {
      heatmapGrid_->removeWidget(layerPanels_[l]);
      layerViews_[l]->clear();
      continue;
    }
    layerTitles_[l]->setText(tr("decoder layer %1").arg(l));
    layerViews_[l]->setMap(maps[l]);
  }
  const bool layered = !maps.empty();
  meanTitle_->setVisible(layered);
  meanTitle_->setText(layered ? tr("mean of the %1 layers (the alignment)").arg(shown) : QString());
  placeHeatmapPanels(shown);
}

void AlignmentStepPage::setOverlay(const render::AlignmentOverlay& overlay) {
  heatmap_->setOverlay(overlay);
  for (std::size_t l = 0; l < layerViews_.size(); ++l) {
    if (layerPanels_[l]->isVisibleTo(this)) layerViews_[l]->setOverlay(overlay);
  }
}

}  // namespace attn::ui
