#include "render/token_lines_render.h"

#include "render/heatmap_render.h"

#include <QFontMetrics>
#include <QLineF>
#include <QPainter>

#include <algorithm>
#include <array>
#include <cmath>

namespace attn::ui::render {
namespace {

constexpr std::array<QRgb, 16> kHeadColours = {0xff1f77b4, 0xffff7f0e, 0xff2ca02c, 0xffd62728, 0xff9467bd, 0xff8c564b,
                                               0xffe377c2, 0xff7f7f7f, 0xffbcbd22, 0xff17becf, 0xff393b79, 0xffad494a,
                                               0xff637939, 0xff7b4173, 0xffe7ba52, 0xff3182bd};

constexpr int kAlphaBuckets = 32;
// Above this many lines antialiasing costs more than it shows.
constexpr qint64 kAntialiasLimit = 4000;

}  // namespace

QColor headColor(int head) {
  const int n = int(kHeadColours.size());
  const QColor base = QColor::fromRgb(kHeadColours[std::size_t(((head % n) + n) % n)]);
  const int cycle = head >= 0 ? head / n : 0;
  return cycle == 0 ? base : base.darker(100 + 25 * cycle);
}

QRectF TokenLinesLayout::tokenRect(TokenSide side, int index) const {
  const double x = side == TokenSide::Query ? 0.0 : rightEdge();
  return QRectF(x, top + double(index) * rowHeight, labelWidth, rowHeight);
}

int TokenLinesLayout::height() const { return top + std::max(rows, cols) * rowHeight; }

std::optional<TokenHit> TokenLinesLayout::tokenAt(QPointF point) const {
  if (rowHeight <= 0 || point.y() < top) return std::nullopt;
  const int index = int(std::floor((point.y() - top) / rowHeight));
  if (point.x() >= 0 && point.x() < leftEdge() && index < rows) return TokenHit{TokenSide::Query, index};
  if (point.x() >= rightEdge() && point.x() < width && index < cols) return TokenHit{TokenSide::Key, index};
  return std::nullopt;
}

namespace {

// The token labels of both columns in the clip, the focused one filled and the others of its side faded.
void paintTokenLabels(QPainter& painter, const TokenLinesScene& scene, const TokenLinesLayout& layout, int firstVisible,
                      int lastVisible) {
  const attn::Labels* rowTokens = scene.rowTokens;
  const attn::Labels* colTokens = scene.colTokens ? scene.colTokens : scene.rowTokens;
  const auto label = [](const attn::Labels* labels, int i) {
    if (labels && std::size_t(i) < labels->size()) return tokenLabel((*labels)[std::size_t(i)], 16);
    return QString::number(i);
  };
  painter.save();
  const QFontMetrics metrics(painter.font());
  for (int side = 0; side < 2; ++side) {
    const TokenSide s = side == 0 ? TokenSide::Query : TokenSide::Key;
    const int count = side == 0 ? layout.rows : layout.cols;
    for (int i = firstVisible; i < std::min(count, lastVisible + 1); ++i) {
      const QRectF rect = layout.tokenRect(s, i);
      const bool focused = scene.focus && scene.focus->side == s && scene.focus->index == i;
      if (focused) painter.fillRect(rect.adjusted(1, 1, -1, -1), scene.focusFill);
      QColor text = scene.text;
      if (scene.focus && !focused && scene.focus->side == s) text.setAlphaF(0.45f);
      painter.setPen(text);
      const QRectF textRect = rect.adjusted(4, 0, -6, 0);
      const QString elided =
          metrics.elidedText(label(side == 0 ? rowTokens : colTokens, i), Qt::ElideRight, int(textRect.width()));
      painter.drawText(textRect, Qt::AlignVCenter | (side == 0 ? Qt::AlignRight : Qt::AlignLeft), elided);
    }
  }
  painter.restore();
}

// One head's lines, sorted into alpha buckets so that each bucket is one drawLines call.
struct HeadLines {
  QColor colour;
  std::array<std::vector<QLineF>, kAlphaBuckets> buckets;
};

// A line that passed the threshold: its weight, its head (index into the HeadLines) and its two tokens.
struct Candidate {
  float weight;
  int slot;
  int row;
  int col;
};

// Every line of the scene's heads that crosses the band [top, bottom] and passes the threshold; `all` gets
// one entry per head drawn.
std::vector<Candidate> gatherLines(const TokenLinesScene& scene, const TokenLinesLayout& layout, double top,
                                   double bottom, std::vector<HeadLines>& all, TokenLinesStats& stats) {
  const attn::HeadStack* stack = scene.stack;
  const int rows = int(std::min<Index>(stack->rows(), layout.rows));
  const int cols = int(std::min<Index>(stack->cols(), layout.cols));
  all.reserve(scene.heads.size());
  std::vector<Candidate> candidates;
  for (int head : scene.heads) {
    if (head < 0 || head >= stack->heads()) continue;
    const int slot = int(all.size());
    all.push_back(HeadLines{headColor(head), {}});
    const float* f32 = stack->precision() == attn::Precision::F32 ? stack->f32(head) : nullptr;
    const Eigen::half* f16 = f32 ? nullptr : stack->f16(head);
    int r0 = 0, r1 = rows;
    if (scene.focus && scene.focus->side == TokenSide::Query) {
      r0 = std::clamp(scene.focus->index, 0, rows);
      r1 = std::min(rows, r0 + 1);
    }
    for (int r = r0; r < r1; ++r) {
      const double y0 = layout.rowY(r);
      const std::size_t offset = std::size_t(r) * std::size_t(stack->cols());
      int c0 = 0, c1 = cols;
      if (scene.focus && scene.focus->side == TokenSide::Key) {
        c0 = std::clamp(scene.focus->index, 0, cols);
        c1 = std::min(cols, c0 + 1);
      }
      for (int c = c0; c < c1; ++c) {
        const double y1 = layout.rowY(c);
        if (std::max(y0, y1) < top || std::min(y0, y1) > bottom) continue;  // outside the clip
        ++stats.considered;
        const float w = f32 ? f32[offset + std::size_t(c)] : float(f16[offset + std::size_t(c)]);
        if (w >= scene.threshold) candidates.push_back(Candidate{w, slot, r, c});
      }
    }
  }
  // Over budget: keep the strongest lines (the faint ones are the least visible anyway).
  stats.cutoff = scene.threshold;
  if (scene.maxLines > 0 && qint64(candidates.size()) > scene.maxLines) {
    auto nth = candidates.begin() + scene.maxLines;
    std::nth_element(candidates.begin(), nth, candidates.end(),
                     [](const Candidate& a, const Candidate& b) { return a.weight > b.weight; });
    stats.cutoff = nth->weight;
    candidates.erase(nth, candidates.end());
  }
  return candidates;
}

}  // namespace

TokenLinesStats paintTokenLines(QPainter& painter, const TokenLinesScene& scene, const TokenLinesLayout& layout,
                                const QRectF& clip) {
  TokenLinesStats stats;
  const int firstVisible = std::max(0, int(std::floor((clip.top() - layout.top) / layout.rowHeight)));
  const int lastVisible = int(std::ceil((clip.bottom() - layout.top) / layout.rowHeight));
  paintTokenLabels(painter, scene, layout, firstVisible, lastVisible);

  if (!scene.stack || scene.stack->empty()) return stats;
  const double x0 = layout.leftEdge();
  const double x1 = layout.rightEdge();
  const double top = clip.top();
  const double bottom = clip.bottom();
  std::vector<HeadLines> all;
  const std::vector<Candidate> candidates = gatherLines(scene, layout, top, bottom, all, stats);
  for (const auto& k : candidates) {
    const double y0 = layout.rowY(k.row), y1 = layout.rowY(k.col);
    // Clip to the visible band ourselves: at 512 tokens a line can be thousands of pixels long and the
    // rasteriser would walk all of it.
    double ta = 0.0, tb = 1.0;
    if (y1 != y0) {
      const double tTop = (top - y0) / (y1 - y0), tBottom = (bottom - y0) / (y1 - y0);
      ta = std::clamp(std::min(tTop, tBottom), 0.0, 1.0);
      tb = std::clamp(std::max(tTop, tBottom), 0.0, 1.0);
    }
    const int bucket = std::clamp(int(k.weight * kAlphaBuckets), 0, kAlphaBuckets - 1);
    all[std::size_t(k.slot)].buckets[std::size_t(bucket)].emplace_back(x0 + (x1 - x0) * ta, y0 + (y1 - y0) * ta,
                                                                       x0 + (x1 - x0) * tb, y0 + (y1 - y0) * tb);
  }
  stats.drawn = qint64(candidates.size());

  painter.save();
  painter.setClipRect(QRectF(x0 - 1, top, x1 - x0 + 2, bottom - top));
  painter.setRenderHint(QPainter::Antialiasing, stats.drawn <= kAntialiasLimit);
  for (const auto& lines : all) {
    for (int b = 0; b < kAlphaBuckets; ++b) {
      const auto& bucket = lines.buckets[std::size_t(b)];
      if (bucket.empty()) continue;
      QColor colour = lines.colour;
      colour.setAlphaF(std::clamp((float(b) + 0.5f) / float(kAlphaBuckets), 0.04f, 1.0f));
      QPen pen(colour, b >= kAlphaBuckets / 2 ? 2.0 : 1.0);
      pen.setCosmetic(true);
      pen.setCapStyle(Qt::FlatCap);
      painter.setPen(pen);
      painter.drawLines(bucket.data(), int(bucket.size()));
    }
  }
  painter.restore();
  return stats;
}

QImage tokenLinesImage(const TokenLinesScene& scene, int width, const QString& title, const QFont& font) {
  TokenLinesLayout layout;
  layout.rows = scene.stack ? int(scene.stack->rows()) : (scene.rowTokens ? int(scene.rowTokens->size()) : 0);
  layout.cols = scene.stack ? int(scene.stack->cols()) : layout.rows;
  layout.width = std::max(width, 240);
  const QFontMetrics metrics(font);
  layout.rowHeight = std::max(16, metrics.height() + 4);
  layout.labelWidth = std::clamp(layout.width / 5, 80, 160);
  const int titleHeight = metrics.height() + 8;
  const int legendHeight = metrics.height() + 8;
  layout.top = titleHeight + legendHeight + 6;
  const int height = layout.height() + 8;

  QImage image(layout.width, height, QImage::Format_ARGB32_Premultiplied);
  image.fill(Qt::white);
  QPainter painter(&image);
  painter.setFont(font);
  painter.setPen(scene.text);
  painter.drawText(QRectF(8, 4, layout.width - 16, titleHeight), Qt::AlignLeft | Qt::AlignVCenter, title);
  // Legend: one swatch per drawn head.
  double x = 8;
  const double y = titleHeight + 4;
  const double swatch = metrics.height() - 2;
  for (int head : scene.heads) {
    const QString text = QString::number(head);
    const double w = swatch + 4 + metrics.horizontalAdvance(text) + 10;
    if (x + w > layout.width - 8) break;
    painter.fillRect(QRectF(x, y + 1, swatch, swatch), headColor(head));
    painter.setPen(scene.text);
    painter.drawText(QRectF(x + swatch + 4, y, w, metrics.height()), Qt::AlignLeft | Qt::AlignVCenter, text);
    x += w;
  }
  paintTokenLines(painter, scene, layout, QRectF(0, 0, layout.width, height));
  painter.end();
  return image;
}

}  // namespace attn::ui::render
