// TokenStripView: a long text as its tokens, flowing in lines like the text itself, each token's background the
// colour of one value (the selected query's attention over every key, or the attention each token receives),
// scrollable over 32,768 tokens and more: the layout is computed once per width and only the lines in view are
// painted. A click on a token emits tokenClicked; hovering shows its index and exact value.
#pragma once

#include "render/colormap.h"

#include <QAbstractScrollArea>
#include <QColor>
#include <QRectF>
#include <QStringList>

#include <optional>
#include <vector>

namespace attn::ui {

class TokenStripView : public QAbstractScrollArea {
  Q_OBJECT

 public:
  explicit TokenStripView(QWidget* parent = nullptr);

  void setTokens(QStringList tokens);
  // One value per token (fewer: the rest count as 0), coloured from 0 to `max` (> 0), or, `symmetric`, from -max to
  // max with 0 in the colour map's middle (signed scores on a diverging map such as RdBu).
  void setValues(std::vector<float> values, float max, bool symmetric = false);
  // The background a token is painted with.
  QColor tokenColor(qint64 token) const;
  const std::vector<float>& values() const { return values_; }
  void setMarked(std::optional<qint64> token);  // outlined (the selected query)
  void setColormap(render::Colormap map);
  void scrollToToken(qint64 token);
  // The token at a point of the viewport, if any.
  std::optional<qint64> tokenAt(QPoint viewportPos) const;
  QRectF tokenRect(qint64 token) const;  // in content coordinates

  QSize sizeHint() const override { return {480, 96}; }

 signals:
  void tokenClicked(qint64 token);
  void tokenHovered(qint64 token, float value);  // -1 when the cursor leaves the tokens

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;

 private:
  void layoutTokens();
  QString shown(qint64 token) const;

  QStringList tokens_;
  std::vector<float> values_;
  float max_ = 1.0f;
  bool symmetric_ = false;
  std::optional<qint64> marked_;
  render::Colormap colormap_ = render::Colormap::Viridis;
  std::vector<QRectF> boxes_;  // per token, in content coordinates
  std::vector<qint64> lineStarts_;
  double lineHeight_ = 16.0;
  int laidOutWidth_ = -1;
};

}  // namespace attn::ui
