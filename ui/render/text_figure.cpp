#include "render/text_figure.h"

#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>
#include <cmath>

using namespace Qt::StringLiterals;

namespace attn::ui::render {
namespace {

constexpr double kElementGap = 14.0;
constexpr double kLinePadding = 3.0;  // above and below the characters of a line box
constexpr double kLineGap = 5.0;
constexpr double kBarRowPadding = 6.0;

QFont textFont(const QFont& base, bool large) {
  QFont f = base;
  if (!large) return f;
  if (f.pointSizeF() > 0) {
    f.setPointSizeF(f.pointSizeF() * 1.6);
  } else {
    f.setPixelSize(int(std::lround(f.pixelSize() * 1.6)));
  }
  return f;
}

QFont headingFont(const QFont& base) {
  QFont f = base;
  f.setBold(true);
  if (f.pointSizeF() > 0) {
    f.setPointSizeF(f.pointSizeF() * 1.15);
  } else {
    f.setPixelSize(int(std::lround(f.pixelSize() * 1.15)));
  }
  return f;
}

QFont captionFont(const QFont& base) {
  QFont f = base;
  f.setBold(true);
  return f;
}

float effectiveScale(const ShadedText& text) {
  if (text.scale > 0.0f) return text.scale;
  float top = 0.0f;
  for (const auto& r : text.ranges) {
    if (std::isfinite(r.weight)) top = std::max(top, text.signedWeights ? std::abs(r.weight) : r.weight);
  }
  return top > 0.0f ? top : 1.0f;
}

QColor mix(const QColor& a, const QColor& b, double t) {
  t = std::clamp(t, 0.0, 1.0);
  return QColor::fromRgbF(float(a.redF() + (b.redF() - a.redF()) * t),
                          float(a.greenF() + (b.greenF() - a.greenF()) * t),
                          float(a.blueF() + (b.blueF() - a.blueF()) * t));
}

double luminance(const QColor& c) { return 0.2126 * c.redF() + 0.7152 * c.greenF() + 0.0722 * c.blueF(); }

bool isBreakSpace(QChar c) { return c.isSpace() && c != u'\n'; }

// Lays `text` out from (x, y) within `width`: words (runs without white space) move to the next line when
// they do not fit, a word wider than the line is cut at character boundaries, '\n' starts a line.
void flow(const QString& text, int from, bool tail, const QFontMetricsF& fm, double width, double lineStep, double& x,
          int& line, double top, std::vector<FigureLayout::Piece>& pieces) {
  const int n = int(text.size());
  int i = from;
  while (i < n) {
    const QChar c = text[i];
    if (c == u'\n') {
      ++line;
      x = 0.0;
      ++i;
      continue;
    }
    const bool space = isBreakSpace(c);
    int j = i + 1;
    while (j < n && text[j] != u'\n' && isBreakSpace(text[j]) == space) ++j;
    double w = fm.horizontalAdvance(text.mid(i, j - i));
    if (!space && x > 0.0 && x + w > width) {
      ++line;
      x = 0.0;
    }
    if (!space && w > width) {
      // Cut the word: as many characters as fit (at least one code point).
      int k = i + 1;
      if (text[i].isHighSurrogate() && k < j) ++k;
      while (k < j) {
        const int next = k + (text[k].isHighSurrogate() && k + 1 < j ? 2 : 1);
        if (fm.horizontalAdvance(text.mid(i, next - i)) > width) break;
        k = next;
      }
      j = k;
      w = fm.horizontalAdvance(text.mid(i, j - i));
    }
    pieces.push_back({i, j, QPointF(x, top + line * lineStep), w, tail});
    x += w;
    i = j;
  }
}

QString barValueText(const Bar& bar) {
  return bar.valueText.isEmpty() ? QString::number(double(bar.value), 'f', 3) : bar.valueText;
}

}  // namespace

Utf16Text toUtf16(std::string_view utf8) {
  Utf16Text out;
  out.offsets.assign(utf8.size() + 1, 0);
  out.text.reserve(qsizetype(utf8.size()));
  std::size_t i = 0;
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(utf8[k]); };
  while (i < utf8.size()) {
    const unsigned char b = byte(i);
    int length = 0;
    char32_t cp = 0;
    if (b < 0x80) {
      length = 1;
      cp = b;
    } else if ((b & 0xe0) == 0xc0) {
      length = 2;
      cp = b & 0x1f;
    } else if ((b & 0xf0) == 0xe0) {
      length = 3;
      cp = b & 0x0f;
    } else if ((b & 0xf8) == 0xf0) {
      length = 4;
      cp = b & 0x07;
    }
    bool valid = length > 0 && i + std::size_t(length) <= utf8.size();
    for (int k = 1; valid && k < length; ++k) {
      const unsigned char cont = byte(i + std::size_t(k));
      if ((cont & 0xc0) != 0x80) valid = false;
      cp = (cp << 6) | (cont & 0x3f);
    }
    // Overlong forms, surrogates and values beyond U+10FFFF are invalid too.
    if (valid && ((length == 2 && cp < 0x80) || (length == 3 && cp < 0x800) || (length == 4 && cp < 0x10000) ||
                  (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)) {
      valid = false;
    }
    if (!valid) {
      out.offsets[i] = int(out.text.size());
      out.text.append(QChar(0xfffd));
      ++i;
      continue;
    }
    for (int k = 0; k < length; ++k) out.offsets[i + std::size_t(k)] = int(out.text.size());
    const char32_t one[1] = {cp};
    out.text.append(QString::fromUcs4(one, 1));
    i += std::size_t(length);
  }
  out.offsets[utf8.size()] = int(out.text.size());
  return out;
}

QColor rangeFill(const ShadedText& text, float weight, const FigureStyle& style) {
  if (!std::isfinite(weight) || weight == 0.0f || (weight < 0.0f && !text.signedWeights)) return QColor(0, 0, 0, 0);
  if (text.signedWeights) {
    const double w = std::clamp(double(weight) / double(effectiveScale(text)), -1.0, 1.0);
    const QColor at = QColor::fromRgb(sample(text.colormap.value_or(Colormap::RdBu), 0.5 * (1.0 + w)));
    return mix(style.background, at, std::abs(w));
  }
  const double t = std::clamp(double(weight) / double(effectiveScale(text)), 0.0, 1.0);
  if (text.colormap) return mix(style.background, QColor::fromRgb(sample(*text.colormap, t)), t);
  return mix(style.background, text.tint, t);
}

QColor textOn(const QColor& fill, const FigureStyle& style) {
  if (fill.alpha() == 0) return style.text;
  const double l = luminance(fill);
  return std::abs(l - luminance(style.text)) >= std::abs(l - luminance(style.background)) ? style.text
                                                                                          : style.background;
}

double contrastRatio(const QColor& a, const QColor& b) {
  const auto linear = [](float c) { return c <= 0.04045f ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4); };
  const auto relative = [&](const QColor& c) {
    const QColor rgb = c.toRgb();
    return 0.2126 * linear(rgb.redF()) + 0.7152 * linear(rgb.greenF()) + 0.0722 * linear(rgb.blueF());
  };
  const double la = relative(a), lb = relative(b);
  return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

QColor unknownOn(const QColor& fill, const FigureStyle& style) {
  // WCAG's minimum for large text and graphics. The style's red where it reaches it (paper, light shading);
  // otherwise the same red much darker or much paler, whichever stands out more: one of the two reaches 3 on
  // any fill (the dark one on fills of relative luminance 0.17 and up, the pale one up to 0.25).
  constexpr double kMinContrast = 3.0;
  const QColor on = fill.alpha() == 0 ? style.background : fill;
  if (contrastRatio(style.unknown, on) >= kMinContrast) return style.unknown;
  const QColor dark(0x5c, 0x00, 0x00);
  const QColor pale(0xff, 0xeb, 0xee);
  return contrastRatio(dark, on) >= contrastRatio(pale, on) ? dark : pale;
}

FigureLayout layoutFigure(const TextFigure& figure, const QFont& font, double width) {
  FigureLayout layout;
  layout.font = font;
  layout.width = width;
  double y = 0.0;
  if (!figure.heading.isEmpty()) {
    const QFontMetricsF fm(headingFont(font));
    const QRectF r = fm.boundingRect(QRectF(0, 0, width, 1e6), Qt::TextWordWrap, figure.heading);
    layout.headingRect = QRectF(0, y, width, r.height());
    y += r.height() + kElementGap * 0.6;
  }
  for (std::size_t e = 0; e < figure.elements.size(); ++e) {
    FigureLayout::Block block;
    block.element = int(e);
    const double top = y;
    if (const auto* text = std::get_if<ShadedText>(&figure.elements[e])) {
      block.font = textFont(font, text->large);
      const QFontMetricsF fm(block.font);
      if (!text->caption.isEmpty()) {
        block.captionHeight = QFontMetricsF(captionFont(font)).height() + 3.0;
      }
      block.lineHeight = fm.height() + 2 * kLinePadding;
      const double lineStep = block.lineHeight + kLineGap;
      const double textTop = y + block.captionHeight;
      block.laidOut = text->text;
      double x = 0.0;
      int line = 0;
      flow(block.laidOut, 0, false, fm, width, lineStep, x, line, textTop, block.pieces);
      if (!text->tail.isEmpty()) {
        const int from = int(block.laidOut.size()) + 1;
        block.laidOut += u' ' + text->tail;
        if (x > 0.0) x += fm.horizontalAdvance(u' ');
        flow(block.laidOut, from, true, fm, width, lineStep, x, line, textTop, block.pieces);
      }
      const int lines = block.pieces.empty() ? 1 : line + 1;
      block.ranges.resize(text->ranges.size());
      for (std::size_t r = 0; r < text->ranges.size(); ++r) {
        const auto& range = text->ranges[r];
        for (const auto& piece : block.pieces) {
          if (piece.tail) continue;
          const int b = std::max(range.begin, piece.begin);
          const int en = std::min(range.end, piece.end);
          if (b >= en) continue;
          const double x0 = piece.origin.x() + fm.horizontalAdvance(block.laidOut.mid(piece.begin, b - piece.begin));
          const double x1 = piece.origin.x() + fm.horizontalAdvance(block.laidOut.mid(piece.begin, en - piece.begin));
          block.ranges[r].push_back(QRectF(x0, piece.origin.y(), x1 - x0, block.lineHeight));
        }
      }
      y = textTop + lines * block.lineHeight + (lines - 1) * kLineGap;
    } else if (const auto* chart = std::get_if<BarChart>(&figure.elements[e])) {
      const QFontMetricsF fm(font);
      QFont bold = font;
      bold.setBold(true);
      const QFontMetricsF fmBold(bold);
      if (!chart->caption.isEmpty()) block.captionHeight = QFontMetricsF(captionFont(font)).height() + 3.0;
      double labelWidth = 0.0;
      double valueWidth = fm.horizontalAdvance(u"0.000"_s);
      for (const auto& bar : chart->bars) {
        labelWidth = std::max(labelWidth, fmBold.horizontalAdvance(bar.label));
        valueWidth = std::max(valueWidth, fm.horizontalAdvance(barValueText(bar)));
      }
      block.labelWidth = std::min(labelWidth + 12.0, width * 0.45);
      const double valueColumn = valueWidth + 10.0;
      const double barArea = std::max(20.0, width - block.labelWidth - valueColumn);
      block.barArea = barArea;
      const double rowHeight = fm.height() + kBarRowPadding;
      double rowTop = y + block.captionHeight;
      const float maximum = chart->maximum > 0.0f ? chart->maximum : 1.0f;
      for (const auto& bar : chart->bars) {
        const QRectF row(0, rowTop, width, rowHeight);
        block.ranges.push_back({row});
        const double fraction = std::clamp(double(bar.value) / double(maximum), 0.0, 1.0);
        const double barHeight = std::max(6.0, fm.height() * 0.62);
        block.barRects.push_back(
            QRectF(block.labelWidth, rowTop + (rowHeight - barHeight) / 2.0, barArea * fraction, barHeight));
        rowTop += rowHeight;
      }
      y = rowTop;
    } else if (const auto* note = std::get_if<FigureNote>(&figure.elements[e])) {
      const QFontMetricsF fm(font);
      const QRectF r = fm.boundingRect(QRectF(0, 0, width, 1e6), Qt::TextWordWrap, note->text);
      y += r.height();
    }
    block.rect = QRectF(0, top, width, y - top);
    layout.blocks.push_back(std::move(block));
    if (e + 1 < figure.elements.size()) y += kElementGap;
  }
  layout.height = std::ceil(y + 2.0);
  return layout;
}

namespace {

// A ShadedText element: its caption, the fills behind the characters, the characters in the colour of
// their fill, then the marks, underlines and focus outlines.
void paintShadedText(QPainter& painter, const ShadedText& text, const FigureLayout::Block& block,
                     const FigureLayout& layout, const FigureStyle& style) {
  if (!text.caption.isEmpty()) {
    painter.setFont(captionFont(layout.font));
    painter.setPen(style.muted);
    painter.drawText(QRectF(0, block.rect.top(), layout.width, block.captionHeight), Qt::AlignLeft | Qt::AlignTop,
                     text.caption);
  }
  const QFontMetricsF fm(block.font);
  painter.setFont(block.font);
  // Fills first, so neighbouring characters' boxes never cover each other's text.
  painter.setPen(Qt::NoPen);
  for (std::size_t r = 0; r < text.ranges.size(); ++r) {
    const QColor fill = rangeFill(text, text.ranges[r].weight, style);
    if (fill.alpha() == 0) continue;
    for (const auto& box : block.ranges[r]) painter.fillRect(box, fill);
  }
  // Which range each character belongs to, for its colour.
  std::vector<int> rangeOf(std::size_t(block.laidOut.size()), -1);
  for (std::size_t r = 0; r < text.ranges.size(); ++r) {
    const auto& range = text.ranges[r];
    for (int k = std::max(0, range.begin); k < std::min(range.end, int(rangeOf.size())); ++k) {
      rangeOf[std::size_t(k)] = int(r);
    }
  }
  const auto colourOf = [&](const FigureLayout::Piece& piece, int k) {
    if (piece.tail) return style.muted;
    const int r = rangeOf[std::size_t(k)];
    if (r < 0) return style.text;
    if (text.ranges[std::size_t(r)].unknown) {
      return unknownOn(rangeFill(text, text.ranges[std::size_t(r)].weight, style), style);
    }
    return textOn(rangeFill(text, text.ranges[std::size_t(r)].weight, style), style);
  };
  for (const auto& piece : block.pieces) {
    const double baseline = piece.origin.y() + kLinePadding + fm.ascent();
    int start = piece.begin;
    while (start < piece.end) {
      const QColor colour = colourOf(piece, start);
      int stop = start + 1;
      while (stop < piece.end && colourOf(piece, stop) == colour) ++stop;
      const double x = piece.origin.x() + fm.horizontalAdvance(block.laidOut.mid(piece.begin, start - piece.begin));
      painter.setPen(colour);
      painter.drawText(QPointF(x, baseline), block.laidOut.mid(start, stop - start));
      start = stop;
    }
  }
  for (std::size_t r = 0; r < text.ranges.size(); ++r) {
    const auto& range = text.ranges[r];
    for (const auto& box : block.ranges[r]) {
      if (range.marked) painter.fillRect(QRectF(box.left(), box.bottom() - 2.5, box.width(), 2.5), style.focus);
      if (range.unknown) {
        const double y = box.top() + kLinePadding + fm.ascent() + std::max(2.0, fm.descent() * 0.6);
        painter.setPen(QPen(unknownOn(rangeFill(text, range.weight, style), style), 1.6));
        painter.drawLine(QPointF(box.left() + 1, y), QPointF(box.right() - 1, y));
      }
      if (range.focus) {
        painter.setPen(QPen(style.focus, 2.4));
        painter.setBrush(Qt::NoBrush);
        painter.drawRoundedRect(box.adjusted(-1.5, -0.5, 1.5, 0.5), 3, 3);
      }
    }
  }
}

// A BarChart element: its caption, then per bar the track, the label, the filled part and the value.
void paintBarChart(QPainter& painter, const BarChart& chart, const FigureLayout::Block& block,
                   const FigureLayout& layout, const FigureStyle& style) {
  if (!chart.caption.isEmpty()) {
    painter.setFont(captionFont(layout.font));
    painter.setPen(style.muted);
    painter.drawText(QRectF(0, block.rect.top(), layout.width, block.captionHeight), Qt::AlignLeft | Qt::AlignTop,
                     chart.caption);
  }
  QFont regular = layout.font;
  QFont bold = layout.font;
  bold.setBold(true);
  for (std::size_t b = 0; b < chart.bars.size(); ++b) {
    const auto& bar = chart.bars[b];
    const QRectF row = block.ranges[b].front();
    const QRectF filled = block.barRects[b];
    painter.fillRect(QRectF(filled.left(), filled.top(), block.barArea, filled.height()), style.barTrack);
    painter.setFont(bar.strong ? bold : regular);
    painter.setPen(style.text);
    const QFontMetricsF fm(painter.font());
    painter.drawText(QRectF(0, row.top(), block.labelWidth - 8.0, row.height()), Qt::AlignLeft | Qt::AlignVCenter,
                     fm.elidedText(bar.label, Qt::ElideRight, block.labelWidth - 8.0));
    painter.fillRect(filled, bar.colour);
    painter.setFont(regular);
    painter.setPen(style.muted);
    const double valueLeft = filled.left() + block.barArea + 6.0;
    painter.drawText(QRectF(valueLeft, row.top(), layout.width - valueLeft, row.height()),
                     Qt::AlignLeft | Qt::AlignVCenter, barValueText(bar));
  }
}

}  // namespace

void paintFigure(QPainter& painter, const TextFigure& figure, const FigureLayout& layout, const FigureStyle& style) {
  painter.save();
  painter.setRenderHint(QPainter::Antialiasing, true);
  painter.setRenderHint(QPainter::TextAntialiasing, true);
  if (!figure.heading.isEmpty()) {
    painter.setFont(headingFont(layout.font));
    painter.setPen(style.text);
    painter.drawText(layout.headingRect, Qt::TextWordWrap, figure.heading);
  }
  for (const auto& block : layout.blocks) {
    const auto& element = figure.elements[std::size_t(block.element)];
    if (const auto* text = std::get_if<ShadedText>(&element)) {
      paintShadedText(painter, *text, block, layout, style);
    } else if (const auto* chart = std::get_if<BarChart>(&element)) {
      paintBarChart(painter, *chart, block, layout, style);
    } else if (const auto* note = std::get_if<FigureNote>(&element)) {
      painter.setFont(layout.font);
      painter.setPen(note->warning ? style.warning : style.muted);
      painter.drawText(block.rect, Qt::TextWordWrap, note->text);
    }
  }
  painter.restore();
}

QImage figureImage(const TextFigure& figure, const QFont& font, int width, const FigureStyle& style) {
  constexpr int kMargin = 16;
  const FigureLayout layout = layoutFigure(figure, font, double(width - 2 * kMargin));
  QImage image(width, int(layout.height) + 2 * kMargin, QImage::Format_ARGB32_Premultiplied);
  image.fill(style.background);
  QPainter painter(&image);
  painter.translate(kMargin, kMargin);
  paintFigure(painter, figure, layout, style);
  painter.end();
  return image;
}

std::optional<FigureHit> hitTest(const FigureLayout& layout, QPointF point) {
  for (const auto& block : layout.blocks) {
    if (!block.rect.adjusted(0, -2, 0, 2).contains(point)) continue;
    for (std::size_t i = 0; i < block.ranges.size(); ++i) {
      for (const auto& box : block.ranges[i]) {
        if (box.contains(point)) return FigureHit{block.element, int(i)};
      }
    }
  }
  return std::nullopt;
}

QString hitToolTip(const TextFigure& figure, const FigureHit& hit) {
  if (hit.element < 0 || std::size_t(hit.element) >= figure.elements.size() || hit.index < 0) return {};
  const auto& element = figure.elements[std::size_t(hit.element)];
  if (const auto* text = std::get_if<ShadedText>(&element)) {
    return std::size_t(hit.index) < text->ranges.size() ? text->ranges[std::size_t(hit.index)].toolTip : QString();
  }
  if (const auto* chart = std::get_if<BarChart>(&element)) {
    if (std::size_t(hit.index) >= chart->bars.size()) return {};
    const auto& bar = chart->bars[std::size_t(hit.index)];
    return bar.toolTip.isEmpty() ? bar.label + u": "_s + barValueText(bar) : bar.toolTip;
  }
  return {};
}

}  // namespace attn::ui::render
