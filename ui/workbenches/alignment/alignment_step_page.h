// The Alignment tab's step page, shared by the kinds of model with steps (a seq2seq's output steps, an entailment
// model's hypothesis words): a figure (the decoding, or the premise shaded), room under it for a kind's own view
// (a speech model's spectrogram), the step slider with its label, and the heatmap under its title. ConvS2S has one
// heatmap per decoder layer and, last, the layers' mean (the main heatmap, which keeps the export, the CSV and the
// hypothesis list), in a grid read row by row (the date maps are wide and short: two to a row), each under its
// title and with the step in view outlined; a click on a row of any of them goes to that step. The layers' panels
// are made when a model first needs them and hidden for the models with one map.
#pragma once

#include "attn/trace.h"
#include "render/alignment_overlay.h"
#include "render/colormap.h"
#include "render/text_figure.h"

#include <QWidget>

#include <functional>
#include <memory>
#include <vector>

class QGridLayout;
class QLabel;
class QSlider;
class QVBoxLayout;

namespace attn::ui {

class HeatmapView;
class TextFigureView;

class AlignmentStepPage : public QWidget {
  Q_OBJECT

 public:
  // `addViews` puts the kinds' own views under the figure (their place in the keyboard's focus order).
  AlignmentStepPage(QWidget* parent, const std::function<void(AlignmentStepPage&, QVBoxLayout&)>& addViews);

  TextFigureView* figureView() const { return figureView_; }
  QLabel* stepTitle() const { return stepTitle_; }
  QSlider* slider() const { return slider_; }
  QLabel* stepLabel() const { return stepLabel_; }
  QLabel* heatmapTitle() const { return heatmapTitle_; }
  HeatmapView* heatmap() const { return heatmap_; }
  const std::vector<HeatmapView*>& layerHeatmaps() const { return layerViews_; }
  const std::vector<QLabel*>& layerTitles() const { return layerTitles_; }
  QLabel* meanTitle() const { return meanTitle_; }

  // The figure the text view shows (kept for the export).
  void setFigure(render::TextFigure figure);
  const render::TextFigure& figure() const { return figure_; }
  // The slider over `rows` steps, and its value, without a stepChanged.
  void setStepRange(int rows);
  void setStepValue(int step);
  // ConvS2S: each decoder layer's map beside the main heatmap (none: the main heatmap alone).
  void setLayers(const std::vector<std::shared_ptr<const attn::AttentionMap>>& maps);
  // The step's row outlined (and local-p's windows) on the main heatmap and the layers'.
  void setOverlay(const render::AlignmentOverlay& overlay);
  void setColormap(render::Colormap map);
  // A model opens: the figure and the heatmap are emptied, the figure shown.
  void clear();

 signals:
  void stepChanged(int step);  // the slider moved
  void stepClicked(int step);  // a click on a heatmap row

 private:
  QWidget* makeHeatmapPanel(HeatmapView* view, QLabel*& title, const QString& name);
  void placeHeatmapPanels(int layers);

  render::Colormap colormap_ = render::Colormap::Viridis;
  render::TextFigure figure_;
  TextFigureView* figureView_ = nullptr;
  QLabel* stepTitle_ = nullptr;
  QSlider* slider_ = nullptr;
  QLabel* stepLabel_ = nullptr;
  QLabel* heatmapTitle_ = nullptr;
  HeatmapView* heatmap_ = nullptr;
  QGridLayout* heatmapGrid_ = nullptr;
  QWidget* heatmapPanel_ = nullptr;  // heatmap_ under meanTitle_ (shown for ConvS2S only)
  QLabel* meanTitle_ = nullptr;
  std::vector<QWidget*> layerPanels_;
  std::vector<QLabel*> layerTitles_;
  std::vector<HeatmapView*> layerViews_;
};

}  // namespace attn::ui
