// TokenLinesView: the head view (BertViz-style, Vig 2019) of one layer. A layer selector and a bar of
// head swatches on top (click a swatch to show or hide that head, double-click to show it alone), the
// tokens in two columns below (queries left, keys right) joined by lines whose opacity is the weight.
// Hovering a token isolates its lines; clicking it pins that (the selected token), clicking again unpins.
// The drawing is render::paintTokenLines; the columns scroll when the tokens do not fit.
#pragma once

#include "attn/layered_trace.h"
#include "render/token_lines_render.h"

#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

class QComboBox;
class QLabel;
class QScrollArea;

namespace attn::ui {

class TokenLinesView : public QWidget {
  Q_OBJECT

 public:
  explicit TokenLinesView(QWidget* parent = nullptr);
  ~TokenLinesView() override;

  // The view shares the trace; `stage` picks the stack (Encoder for BERT/ViT, Decoder for GPT-2).
  void setTrace(std::shared_ptr<const attn::LayeredTrace> trace, attn::Stage stage);
  // What the view says while the trace has no maps (default: open a model or a dump).
  void setEmptyText(const QString& text);
  QString emptyText() const;
  bool isShowingEmptyText() const;  // the empty text is up (no maps), whether the view is on screen or not
  void clear();
  const attn::LayeredTrace* trace() const { return trace_.get(); }
  int layerCount() const;
  int headCount() const;  // of the current layer

  void setLayer(int layer);
  int layer() const { return layer_; }
  void setHeadEnabled(int head, bool on);
  bool isHeadEnabled(int head) const;
  std::vector<int> enabledHeads() const;
  void setAllHeadsEnabled(bool on);
  void soloHead(int head);  // only `head` drawn
  // Ablated heads (x = head, y = layer; the Transformer tab's ablation): the swatches of the layer in view outline
  // them in dashed magenta.
  void setAblatedHeads(std::vector<QPoint> heads);
  bool isHeadAblated(int head) const;

  // Hover isolation from outside (a hovered heatmap row): the same as hovering that token here.
  void setHoverToken(std::optional<render::TokenHit> hit);
  std::optional<render::TokenHit> hoverToken() const { return hover_; }
  void setSelectedToken(std::optional<render::TokenHit> hit);  // pinned
  std::optional<render::TokenHit> selectedToken() const { return pinned_; }
  // The token whose lines are isolated now: the hovered one, else the pinned one.
  std::optional<render::TokenHit> focus() const { return hover_ ? hover_ : pinned_; }

  void setThreshold(float threshold);
  float threshold() const { return threshold_; }

  // Geometry for tests and exports.
  QWidget* canvas() const;
  QWidget* swatchBar() const;
  QComboBox* layerBox() const { return layerBox_; }
  QRect swatchRect(int head) const;                           // swatchBar() coordinates
  QRectF tokenRect(render::TokenSide side, int index) const;  // canvas() coordinates
  render::TokenLinesLayout canvasLayout() const;
  render::TokenLinesScene scene() const;
  const render::TokenLinesStats& lastStats() const { return stats_; }
  double lastPaintMs() const { return lastPaintMs_; }
  // The current layer and heads as a standalone picture (render::tokenLinesImage).
  QImage renderImage(int width) const;

 signals:
  void layerChanged(int layer);
  void headsChanged();
  void headSoloed(int head);
  void tokenHovered(int side, int index);   // index -1: no token
  void tokenSelected(int side, int index);  // index -1: unpinned

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  friend class TokenLinesCanvas;
  friend class HeadSwatchBar;
  void updateCanvasSize();
  void hoverFromCanvas(std::optional<render::TokenHit> hit);
  void clickFromCanvas(std::optional<render::TokenHit> hit);
  const attn::HeadStack* stack() const;

  std::shared_ptr<const attn::LayeredTrace> trace_;
  attn::Stage stage_ = attn::Stage::Encoder;
  int layer_ = 0;
  std::vector<bool> heads_;
  std::vector<QPoint> ablated_;
  std::optional<render::TokenHit> hover_;
  std::optional<render::TokenHit> pinned_;
  float threshold_ = 0.01f;
  render::TokenLinesStats stats_;
  double lastPaintMs_ = 0.0;

  QComboBox* layerBox_ = nullptr;
  QWidget* swatches_ = nullptr;
  QScrollArea* scroll_ = nullptr;
  QWidget* canvas_ = nullptr;
  QLabel* empty_ = nullptr;
};

}  // namespace attn::ui
