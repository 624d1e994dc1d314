// TextFigureView: a render::TextFigure (shaded text, bars, notes) drawn in the palette's colours, as tall as
// its width needs (heightForWidth), with each range's and bar's tool tip on hover.
#pragma once

#include "render/text_figure.h"

#include <QWidget>

#include <optional>

namespace attn::ui {

class TextFigureView : public QWidget {
  Q_OBJECT

 public:
  explicit TextFigureView(QWidget* parent = nullptr);

  void setFigure(render::TextFigure figure);
  const render::TextFigure& figure() const { return figure_; }
  void clear();
  // Shown in the muted colour while there is no figure.
  void setPlaceholder(const QString& text);
  // The colours of the current palette (the exports use render::FigureStyle's paper colours).
  render::FigureStyle style() const;
  // The layout at the current width, in widget coordinates minus the margin.
  const render::FigureLayout& figureLayout() const { return layout_; }
  static constexpr int kMargin = 8;
  static constexpr int kMinLayoutWidth = 360;

  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override;
  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  bool event(QEvent* event) override;

 private:
  void relayout();

  render::TextFigure figure_;
  render::FigureLayout layout_;
  QString placeholder_;
};

}  // namespace attn::ui
