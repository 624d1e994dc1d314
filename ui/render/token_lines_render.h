// The head view's drawing (BertViz-style, Vig 2019): the tokens of a layer in two columns, queries on the
// left and keys on the right, one line per (query, key, head) with opacity = the attention weight, one
// colour per head. A pure function of the stack, the layout and the clip, so the view, the CLI and the
// tests draw the same picture.
//
// Lines below `threshold` are skipped (at alpha 0.01 a line is invisible anyway) and lines outside the
// clip are culled; beyond a line budget only the strongest are kept; the rest are bucketed by opacity and drawn with
// one drawLines call per bucket, which keeps 512 tokens x 12 heads interactive.
#pragma once

#include "attn/core.h"
#include "attn/layered_trace.h"

#include <QColor>
#include <QFont>
#include <QImage>
#include <QPointF>
#include <QRectF>
#include <QString>

#include <optional>
#include <vector>

class QPainter;

namespace attn::ui::render {

// A categorical colour per head (matplotlib's tab10, then six more); cycles beyond 16.
QColor headColor(int head);

enum class TokenSide { Query, Key };  // left column (rows of the map) / right column (columns)

struct TokenHit {
  TokenSide side = TokenSide::Query;
  int index = -1;
  friend bool operator==(const TokenHit&, const TokenHit&) = default;
};

struct TokenLinesLayout {
  int rows = 0;     // query tokens (left)
  int cols = 0;     // key tokens (right)
  int width = 600;  // the drawing's width
  int top = 0;      // y of the first token row
  int rowHeight = 18;
  int labelWidth = 120;  // each token column

  double leftEdge() const { return labelWidth; }           // where lines start
  double rightEdge() const { return width - labelWidth; }  // where lines end
  double rowY(int index) const { return top + (index + 0.5) * rowHeight; }
  QRectF tokenRect(TokenSide side, int index) const;
  int height() const;  // top + the longer column
  std::optional<TokenHit> tokenAt(QPointF point) const;
};

struct TokenLinesScene {
  const attn::HeadStack* stack = nullptr;  // [heads, rows, cols]
  const attn::Labels* rowTokens = nullptr;
  const attn::Labels* colTokens = nullptr;  // null: the same as rowTokens
  std::vector<int> heads;                   // the heads drawn, in drawing order
  std::optional<TokenHit> focus;            // only this token's lines (hover isolation)
  float threshold = 0.01f;                  // weights below are not drawn
  // At most this many lines inside the clip (the strongest); 0 = no limit. The head view repaints on
  // every keystroke while the model runs on both cores: 6,000 lines paint in about 15 ms there, 12,000
  // in about 29 ms (bench_transformer_typing, 126 tokens x 12 heads); the lines left out are the
  // faintest, drawn at 4% opacity. Antialiasing only below 4,000 lines; random-looking heads at 512
  // tokens would otherwise ask for 50,000.
  qint64 maxLines = 6000;
  QColor text = QColor(20, 20, 20);
  QColor focusFill = QColor(255, 214, 102);
};

struct TokenLinesStats {
  qint64 considered = 0;  // weights of the drawn heads inside the clip
  qint64 drawn = 0;       // lines painted
  float cutoff = 0.0f;    // the weight below which lines were skipped (threshold, or higher over budget)
};

// Paints token labels and lines inside `clip` (widget coordinates of the layout).
TokenLinesStats paintTokenLines(QPainter& painter, const TokenLinesScene& scene, const TokenLinesLayout& layout,
                                const QRectF& clip);

// A standalone picture (CLI, exports): a title line and a head legend on top, then the lines.
QImage tokenLinesImage(const TokenLinesScene& scene, int width, const QString& title, const QFont& font = QFont());

}  // namespace attn::ui::render
