// AlignmentWorkbench's ConvS2S part: one heatmap per decoder layer and, last, the layers' mean (the main heatmap,
// which keeps the export, the CSV and the hypothesis list), in a grid read row by row (the date maps are wide and
// short: two to a row), each under its title and with the step in view outlined; a click on a row of any of them
// goes to that step. The panels are made when a model first needs them and hidden for the models with one map.
#include "workbenches/alignment/alignment_workbench.h"

#include "views/heatmap_view.h"

#include <QGridLayout>
#include <QLabel>
#include <QVBoxLayout>

#include <cmath>

using namespace Qt::StringLiterals;

namespace attn::ui {

QWidget* AlignmentWorkbench::makeHeatmapPanel(HeatmapView* view, QLabel*& title, const QString& name) {
  auto* panel = new QWidget(decodingPage_);
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

void AlignmentWorkbench::placeHeatmapPanels(int layers) {
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

void AlignmentWorkbench::updateLayerHeatmaps() {
  static const std::vector<std::shared_ptr<const attn::AttentionMap>> none;
  const auto h = std::size_t(hypothesis_);
  const bool layered =
      outcome_ && outcome_->seq2seq && h < outcome_->layerAlignments.size() && !outcome_->layerAlignments[h].empty();
  const auto& maps = layered ? outcome_->layerAlignments[h] : none;
  while (layerViews_.size() < maps.size()) {
    const auto l = layerViews_.size();
    auto* view = new HeatmapView(HeatmapView::Style::Full);
    view->setObjectName(u"alignmentLayerHeatmap%1"_s.arg(l));
    view->setColormap(colormap_);
    connect(view, &HeatmapView::cellClicked, this, [this](int row, int) { goToClickedStep(row); });
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
  meanTitle_->setVisible(layered);
  meanTitle_->setText(layered ? tr("mean of the %1 layers (the alignment)").arg(shown) : QString());
  placeHeatmapPanels(shown);
}

void AlignmentWorkbench::updateLayerOverlays(const render::AlignmentOverlay& overlay) {
  for (std::size_t l = 0; l < layerViews_.size(); ++l) {
    if (layerPanels_[l]->isVisibleTo(this)) layerViews_[l]->setOverlay(overlay);
  }
}

}  // namespace attn::ui
