#include "render/heatmap_figure.h"

#include <QFontMetricsF>
#include <QGuiApplication>
#include <QPainter>
#include <QPalette>
#include <QStringList>

#include <algorithm>
#include <cmath>
#include <optional>

using namespace Qt::StringLiterals;

namespace attn::ui::render {
namespace {

// HeatmapView's measures: QCustomPlot's paddings and tick lengths as the view sets them.
constexpr int kFullBottomMargin = 14;
constexpr int kCompactBottomMargin = 4;
constexpr int kCompactBarBottomMargin = 8;
constexpr int kCompactLabelMinHeight = 280;
constexpr int kTitleGap = 4;     // between an axis title and the labels
constexpr int kBarGap = 14;      // between the cells and the colour bar
constexpr int kRightMargin = 6;  // right of the colour bar's label
constexpr int kTopPadding = 6;   // above a full figure's column title

struct Measures {
  QFont tick, title, axis;
  double line = 0.0;  // a tick label's line height
  int tickLength = 4, labelPadding = 4, barWidth = 12;
};

Measures measuresFor(const HeatmapFigure& figure, const QFont& font) {
  Measures m;
  m.tick = font;
  m.axis = font;
  if (figure.compact) {
    m.tick.setPointSizeF(std::max(6.0, (font.pointSizeF() > 0 ? font.pointSizeF() : 9.0) - 2.0));
    m.tickLength = 2;
    m.labelPadding = 2;
    m.barWidth = 8;
  }
  m.title = font;
  m.title.setBold(true);
  m.line = QFontMetricsF(m.tick).height();
  return m;
}

QStringList labelsFor(const attn::Labels& labels, Index count) {
  QStringList out;
  out.reserve(qsizetype(count));
  for (Index i = 0; i < count; ++i) {
    out.append(std::size_t(i) < labels.size() ? tokenLabel(labels[std::size_t(i)]) : QString::number(i));
  }
  return out;
}

QString tickText(double value) {
  if (std::abs(value) < 1e-12) return u"0"_s;
  return QString::number(value, 'g', 4);
}

// Where everything goes: computed once for painting and for the height alone.
struct Layout {
  std::shared_ptr<const attn::AttentionMap> map;  // pooled when it had to be
  QStringList rows, columns;
  QString rowTitle, columnTitle, title;
  QFont titleFont;
  bool labels = true;
  int rowStride = 1, columnStride = 1;
  QRectF cells;
  QRect bar;
  ValueRange range;
  std::vector<double> ticks;
  int bottom = 0;  // the figure's last row of pixels + 1, from area.top()
};

// The title as HeatmapView::fitTitle fits it: smaller type down to 80% (6 pt at least), then cut in the middle.
void fitTitle(Layout& layout, const QString& title, const QFont& font, int available) {
  layout.titleFont = font;
  layout.title = title;
  if (title.isEmpty() || available <= 0) return;
  const double base = font.pointSizeF() > 0 ? font.pointSizeF() : 9.0;
  const double smallest = std::max(6.0, base * 0.8);
  for (double size = base;; size -= 0.5) {
    layout.titleFont.setPointSizeF(size);
    const QFontMetrics metrics(layout.titleFont);
    if (metrics.horizontalAdvance(title) <= available) return;
    if (size - 0.5 < smallest) {
      layout.title = metrics.elidedText(title, Qt::ElideMiddle, available);
      return;
    }
  }
}

double widestShown(const QStringList& labels, int stride, const QFont& font) {
  const QFontMetricsF metrics(font);
  double widest = 0.0;
  for (qsizetype i = 0; i < labels.size(); i += std::max(1, stride)) {
    widest = std::max(widest, metrics.horizontalAdvance(labels[i]));
  }
  return widest;
}

// Where the cells of `shown` (the map as drawn: pooled already) and everything around them go.
Layout layOutCells(const QRect& area, const HeatmapFigure& figure, const Measures& m,
                   std::shared_ptr<const attn::AttentionMap> shown) {
  Layout out;
  out.map = std::move(shown);
  const auto& map = *out.map;
  const Index rowCount = map.weights.rows(), columnCount = map.weights.cols();
  out.rows = labelsFor(map.row_labels, rowCount);
  out.columns = labelsFor(map.col_labels, columnCount);
  out.range = valueRange(map.weights, figure.rangeMode);
  const bool bar = figure.colorBar || !figure.compact;
  const QFontMetricsF tickMetrics(m.tick);
  const QFontMetricsF axisMetrics(m.axis);

  fitTitle(out, figure.title, m.title, area.width() - 2);
  const double titleHeight = out.title.isEmpty() ? 0.0 : QFontMetricsF(out.titleFont).height() + 2.0;
  const double axisTitle = figure.compact ? 0.0 : axisMetrics.height() + kTitleGap;
  const double topPadding = figure.compact ? 0.0 : double(kTopPadding);
  out.labels = !figure.compact || area.height() >= kCompactLabelMinHeight ||
               (figure.squareCells && area.width() >= kCompactLabelMinHeight);
  const int bottomMargin = figure.compact ? (bar ? kCompactBarBottomMargin : kCompactBottomMargin) : kFullBottomMargin;

  // The colour bar's block: the bar, its ticks, the widest number and (full figures) the label.
  double barBlock = 0.0;
  if (bar) {
    barBlock = (figure.compact ? 6.0 : double(kBarGap)) + m.barWidth + m.tickLength + m.labelPadding;
    double widest = 0.0;
    for (double v : colorBarTicks(out.range, 5)) widest = std::max(widest, tickMetrics.horizontalAdvance(tickText(v)));
    barBlock += widest + (figure.compact ? 2.0 : m.labelPadding + 4.0 + axisMetrics.height() + kRightMargin);
  } else {
    barBlock = 4.0;
  }

  // Label strides depend on the cells' size, which depends on the labels shown: three passes settle it, as
  // QCustomPlot's layout does for the view.
  for (int pass = 0; pass < 3; ++pass) {
    const double rowWidth = out.labels ? widestShown(out.rows, out.rowStride, m.tick) : 0.0;
    const double columnHeight = out.labels ? widestShown(out.columns, out.columnStride, m.tick) : 0.0;
    const double left = area.left() + axisTitle + rowWidth + m.labelPadding + m.tickLength;
    const double top = area.top() + topPadding + titleHeight + axisTitle + columnHeight + m.labelPadding + m.tickLength;
    const double right = area.right() + 1 - barBlock;
    double bottom = area.bottom() + 1 - bottomMargin;
    const double width = std::max(1.0, right - left);
    double height = std::max(1.0, bottom - top);
    if (figure.squareCells) height = std::min(height, double(rowCount) * width / double(columnCount));
    out.cells = QRectF(left, top, width, height);
    const int rowStride = labelStride(height / double(rowCount), m.line * 1.1);
    const int columnStride = labelStride(width / double(columnCount), m.line * 1.1);
    if (rowStride == out.rowStride && columnStride == out.columnStride && pass > 0) break;
    out.rowStride = rowStride;
    out.columnStride = columnStride;
  }
  const QRect cells = out.cells.toAlignedRect();
  if (bar) {
    out.bar = QRect(int(std::lround(out.cells.right())) + (figure.compact ? 6 : kBarGap), cells.top(), m.barWidth,
                    cells.height());
    const int count = std::clamp(int(double(out.bar.height()) / (2.5 * m.line)), 1, 5);
    out.ticks = colorBarTicks(out.range, count);
  }
  out.bottom = int(std::ceil(out.cells.bottom())) + bottomMargin - area.top();
  return out;
}

// The axis titles, saying the pooling (render::pooledAxisTitle, as HeatmapView's axes say it) when `shown` is
// pooled, counted from the map given (its own pooling, the size cap to `base` and the pixels).
void sayPooling(Layout& layout, const attn::AttentionMap& given, const attn::AttentionMap& base) {
  const attn::AttentionMap& shown = *layout.map;
  layout.rowTitle = QString::fromStdString(shown.row_axis);
  layout.columnTitle = QString::fromStdString(shown.col_axis);
  const auto& pooled = shown.pooled;
  if (!pooled) return;
  const auto original = [&](attn::Index attn::MapPooling::*axis) {
    return given.pooled ? std::optional<attn::Index>((*given.pooled).*axis) : std::nullopt;
  };
  const auto rowStarts = composedStarts(original(&attn::MapPooling::rows), given.weights.rows(), base.weights.rows(),
                                        shown.weights.rows());
  const auto colStarts = composedStarts(original(&attn::MapPooling::cols), given.weights.cols(), base.weights.cols(),
                                        shown.weights.cols());
  layout.rowTitle = pooledAxisTitle(layout.rowTitle, QObject::tr("rows"), pooled->pool, rowStarts);
  layout.columnTitle = pooledAxisTitle(layout.columnTitle, QObject::tr("columns"), pooled->pool, colStarts);
}

// The rule HeatmapView follows (render/map_pooling.h): a map past kMaxCellsPerSide a side is pooled to that, and
// then to the cells' pixels whenever it has more cells than pixels, at every size. The cells' area depends on the
// labels of the map drawn, so the figure is laid out, pooled to its cells' pixels and laid out again until the
// cells fit; each pass pools to fewer cells than the last, so it ends.
Layout layOut(const QRect& area, const HeatmapFigure& figure, const Measures& m) {
  if (!figure.map || figure.map->weights.size() == 0) {
    Layout out;
    out.map = figure.map;
    return out;
  }
  const auto base = pooledToCells(figure.map, {kMaxCellsPerSide, kMaxCellsPerSide});
  Layout out = layOutCells(area, figure, m, base);
  for (int pass = 0; pass < 4; ++pass) {
    const QSize pixels(std::max(1, int(out.cells.width())), std::max(1, int(out.cells.height())));
    const CellShape drawn{out.map->weights.rows(), out.map->weights.cols()};
    const CellShape need = cellsForPixels(drawn.rows, drawn.cols, pixels);
    if (need == drawn) break;
    out = layOutCells(area, figure, m, pooledToCells(base, need));
  }
  sayPooling(out, *figure.map, *base);
  return out;
}

// HeatmapFigure::cellText, in the tick labels' font, left out when a cell is smaller than a line of it (a pooled map
// has other cells than the notes were written for).
void paintCellText(QPainter& painter, const Layout& layout, const HeatmapFigure& figure, const QFont& font) {
  const auto& weights = layout.map->weights;
  if (layout.map->pooled || figure.cellText.size() != std::size_t(weights.size())) return;
  const double cellWidth = layout.cells.width() / double(weights.cols());
  const double cellHeight = layout.cells.height() / double(weights.rows());
  const QFontMetricsF metrics(font);
  if (cellHeight < metrics.height()) return;
  painter.save();
  painter.setFont(font);
  const double span = std::max(1e-12, layout.range.upper - layout.range.lower);
  for (Index r = 0; r < weights.rows(); ++r) {
    for (Index c = 0; c < weights.cols(); ++c) {
      const QString& text = figure.cellText[std::size_t(r * weights.cols() + c)];
      if (text.isEmpty() || metrics.horizontalAdvance(text) > cellWidth - 2.0) continue;
      const QColor under =
          QColor::fromRgb(sample(figure.colormap, (double(weights(r, c)) - layout.range.lower) / span));
      // Relative luminance (ITU-R BT.709 weights): viridis' yellow-green is light though its HSL lightness is 0.5.
      const double luminance = 0.2126 * under.redF() + 0.7152 * under.greenF() + 0.0722 * under.blueF();
      painter.setPen(luminance > 0.45 ? QColor(20, 20, 20) : QColor(250, 250, 250));
      painter.drawText(QRectF(layout.cells.left() + double(c) * cellWidth, layout.cells.top() + double(r) * cellHeight,
                              cellWidth, cellHeight),
                       Qt::AlignCenter, text);
    }
  }
  painter.restore();
}

void paintCells(QPainter& painter, const Layout& layout, const HeatmapFigure& figure) {
  const QImage image = matrixImage(layout.map->weights, figure.colormap, layout.range);
  painter.save();
  painter.setRenderHint(QPainter::SmoothPixmapTransform, false);
  painter.drawImage(layout.cells, image);
  if (!figure.overlay.empty()) {
    // Cell centres at integer coordinates, as the view's plot axes have them.
    const double cellWidth = layout.cells.width() / double(layout.map->weights.cols());
    const double cellHeight = layout.cells.height() / double(layout.map->weights.rows());
    painter.setClipRect(layout.cells);
    paintAlignmentOverlay(painter, figure.overlay,
                          QTransform(cellWidth, 0.0, 0.0, cellHeight, layout.cells.left() + cellWidth / 2.0,
                                     layout.cells.top() + cellHeight / 2.0));
  }
  painter.restore();
}

void paintAxes(QPainter& painter, const Layout& layout, const Measures& m, const QPalette& palette) {
  const QRectF& cells = layout.cells;
  const QPen frame(palette.color(QPalette::Mid));
  painter.setPen(frame);
  painter.drawLine(QPointF(cells.left(), cells.top()), QPointF(cells.right(), cells.top()));
  painter.drawLine(QPointF(cells.left(), cells.top()), QPointF(cells.left(), cells.bottom()));
  if (!layout.labels) return;
  painter.setFont(m.tick);
  const QFontMetricsF metrics(m.tick);
  const double cellWidth = cells.width() / double(layout.columns.size());
  const double cellHeight = cells.height() / double(layout.rows.size());
  for (qsizetype i = 0; i < layout.rows.size(); i += layout.rowStride) {
    const double y = cells.top() + (double(i) + 0.5) * cellHeight;
    painter.setPen(frame);
    painter.drawLine(QPointF(cells.left() - m.tickLength, y), QPointF(cells.left(), y));
    painter.setPen(palette.color(QPalette::WindowText));
    const double right = cells.left() - m.tickLength - m.labelPadding;
    painter.drawText(QRectF(right - 4096.0, y - metrics.height() / 2.0, 4096.0, metrics.height()),
                     Qt::AlignRight | Qt::AlignVCenter, layout.rows[i]);
  }
  for (qsizetype i = 0; i < layout.columns.size(); i += layout.columnStride) {
    const double x = cells.left() + (double(i) + 0.5) * cellWidth;
    painter.setPen(frame);
    painter.drawLine(QPointF(x, cells.top() - m.tickLength), QPointF(x, cells.top()));
    painter.setPen(palette.color(QPalette::WindowText));
    // Read from the bottom up, ending at the tick.
    painter.save();
    painter.translate(x, cells.top() - m.tickLength - m.labelPadding);
    painter.rotate(-90.0);
    painter.drawText(QRectF(0.0, -metrics.height() / 2.0, 4096.0, metrics.height()), Qt::AlignLeft | Qt::AlignVCenter,
                     layout.columns[i]);
    painter.restore();
  }
}

void paintAxisTitles(QPainter& painter, const QRect& area, const Layout& layout, const Measures& m,
                     const QPalette& palette, double titleHeight) {
  painter.setFont(m.axis);
  painter.setPen(palette.color(QPalette::PlaceholderText));
  const QFontMetricsF metrics(m.axis);
  const QRectF& cells = layout.cells;
  painter.drawText(QRectF(cells.left(), area.top() + kTopPadding + titleHeight, cells.width(), metrics.height()),
                   Qt::AlignHCenter | Qt::AlignTop, layout.columnTitle);
  painter.save();
  painter.translate(area.left(), cells.bottom());
  painter.rotate(-90.0);
  painter.drawText(QRectF(0.0, 0.0, cells.height(), metrics.height()), Qt::AlignHCenter | Qt::AlignTop,
                   layout.rowTitle);
  painter.restore();
}

void paintColorBar(QPainter& painter, const Layout& layout, const HeatmapFigure& figure, const Measures& m,
                   const QPalette& palette) {
  const QRect& bar = layout.bar;
  if (bar.height() <= 0) return;
  QImage strip(1, bar.height(), QImage::Format_ARGB32);
  const ColorTable& table = colorTable(figure.colormap);
  for (int y = 0; y < bar.height(); ++y) {
    const float t = bar.height() > 1 ? 1.0f - float(y) / float(bar.height() - 1) : 1.0f;
    strip.setPixel(0, y, table(t));
  }
  painter.save();
  painter.setRenderHint(QPainter::SmoothPixmapTransform, false);
  painter.drawImage(bar, strip);
  painter.restore();
  const QPen frame(palette.color(QPalette::Mid));
  painter.setPen(frame);
  painter.drawLine(bar.topRight() + QPoint(1, 0), bar.bottomRight() + QPoint(1, 1));
  painter.setFont(m.tick);
  const QFontMetricsF metrics(m.tick);
  const double span = std::max(layout.range.upper - layout.range.lower, 1e-12);
  double widest = 0.0;
  for (double v : layout.ticks) {
    const double y = bar.top() + (layout.range.upper - v) / span * double(bar.height() - 1) + 0.5;
    painter.setPen(frame);
    painter.drawLine(QPointF(bar.right() + 1, y), QPointF(bar.right() + 1 + m.tickLength, y));
    painter.setPen(palette.color(QPalette::WindowText));
    const QString text = tickText(v);
    widest = std::max(widest, metrics.horizontalAdvance(text));
    painter.drawText(
        QRectF(bar.right() + 1 + m.tickLength + m.labelPadding, y - metrics.height() / 2.0, 4096.0, metrics.height()),
        Qt::AlignLeft | Qt::AlignVCenter, text);
  }
  if (figure.compact) return;
  // The label reads from the top down, as QCustomPlot's right-hand axis label does.
  painter.setFont(m.axis);
  painter.setPen(palette.color(QPalette::PlaceholderText));
  const double x = bar.right() + 1 + m.tickLength + m.labelPadding + widest + m.labelPadding + 4.0;
  painter.save();
  painter.translate(x, bar.top());
  painter.rotate(90.0);
  painter.drawText(QRectF(0.0, -QFontMetricsF(m.axis).height(), double(bar.height()), QFontMetricsF(m.axis).height()),
                   Qt::AlignHCenter | Qt::AlignBottom,
                   layout.map->quantity.empty() ? QObject::tr("weight") : QString::fromStdString(layout.map->quantity));
  painter.restore();
}

// The rows of a grid: `columns` tiles each, every tile `tile` pixels wide and at most `maxRow` tall.
struct GridLayout {
  int tileWidth = 0, maxRow = 0;
  std::vector<int> rowHeights;
};
constexpr int kGridMargin = 4;
constexpr int kGridSpacing = 6;

GridLayout gridLayout(const std::vector<HeatmapFigure>& tiles, int columns, QSize size, const QFont& font) {
  GridLayout grid;
  const int n = int(tiles.size());
  columns = std::max(1, columns);
  const int rows = (n + columns - 1) / columns;
  grid.tileWidth = std::max(1, (size.width() - 2 * kGridMargin - (columns - 1) * kGridSpacing) / columns);
  grid.maxRow =
      std::max(1, (size.height() - 2 * kGridMargin - std::max(0, rows - 1) * kGridSpacing) / std::max(1, rows));
  for (int first = 0; first < n; first += columns) {
    int row = 0;
    for (int i = first; i < std::min(n, first + columns); ++i) {
      row = std::max(row, heatmapFigureHeight(QRect(0, 0, grid.tileWidth, grid.maxRow), tiles[std::size_t(i)], font));
    }
    grid.rowHeights.push_back(std::min(row, grid.maxRow));
  }
  return grid;
}

}  // namespace

std::vector<double> colorBarTicks(ValueRange range, int count) {
  std::vector<double> ticks;
  const double span = range.upper - range.lower;
  if (!(span > 0.0) || !std::isfinite(span)) return {range.lower};
  const double raw = span / double(std::max(1, count));
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  // The step is nice * magnitude, nice the mantissa nearest the raw step's (by ratio), as QCustomPlot's readable
  // ticks: a short bar over 0 .. 0.55 asks for one step of 0.55 and gets 0 and 0.5.
  double nice = 1.0;
  for (double candidate : {2.0, 2.5, 5.0, 10.0}) {
    if (std::abs(std::log(candidate * magnitude / raw)) < std::abs(std::log(nice * magnitude / raw))) nice = candidate;
  }
  const double step = nice * magnitude;
  // Whole multiples of the step, divided rather than multiplied by a power of ten below 1, so that 3 steps of 0.2
  // are 0.6 and not 0.6000000000000001.
  const double per = magnitude < 1.0 ? std::round(1.0 / magnitude) : 1.0;
  const auto value = [&](double i) { return magnitude < 1.0 ? i * nice / per : i * nice * magnitude; };
  for (double i = std::ceil(range.lower / step - 1e-9); i <= std::floor(range.upper / step + 1e-9); i += 1.0) {
    ticks.push_back(i == 0.0 ? 0.0 : value(i));
  }
  return ticks;
}

int heatmapFigureHeight(const QRect& area, const HeatmapFigure& figure, const QFont& font) {
  const Layout layout = layOut(area, figure, measuresFor(figure, font));
  return layout.map && layout.map->weights.size() > 0 ? std::min(area.height(), layout.bottom) : area.height();
}

QSize heatmapFigureCellPixels(const QRect& area, const HeatmapFigure& figure, const QFont& font) {
  const Layout layout = layOut(area, figure, measuresFor(figure, font));
  if (!layout.map || layout.map->weights.size() == 0) return {};
  return QSize(std::max(1, int(layout.cells.width())), std::max(1, int(layout.cells.height())));
}

QRectF heatmapFigureCellArea(const QRect& area, const HeatmapFigure& figure, const QFont& font) {
  const Layout layout = layOut(area, figure, measuresFor(figure, font));
  if (!layout.map || layout.map->weights.size() == 0) return {};
  return layout.cells;
}

int paintHeatmapFigure(QPainter& painter, const QRect& area, const HeatmapFigure& figure, const QFont& font) {
  const Measures m = measuresFor(figure, font);
  const Layout layout = layOut(area, figure, m);
  if (!layout.map || layout.map->weights.size() == 0) return area.height();
  const QPalette palette = QGuiApplication::palette();
  painter.save();
  const double titleHeight = layout.title.isEmpty() ? 0.0 : QFontMetricsF(layout.titleFont).height() + 2.0;
  if (!layout.title.isEmpty()) {
    painter.setFont(layout.titleFont);
    painter.setPen(palette.color(QPalette::WindowText));
    painter.drawText(QRectF(area.left(), area.top(), area.width(), titleHeight), Qt::AlignCenter, layout.title);
  }
  paintCells(painter, layout, figure);
  paintCellText(painter, layout, figure, m.tick);
  paintAxes(painter, layout, m, palette);
  if (!figure.compact) paintAxisTitles(painter, area, layout, m, palette, titleHeight);
  if (!layout.bar.isEmpty()) paintColorBar(painter, layout, figure, m, palette);
  painter.restore();
  return std::min(area.height(), layout.bottom);
}

int heatmapGridHeight(const std::vector<HeatmapFigure>& tiles, int columns, QSize size, const QFont& font) {
  const GridLayout grid = gridLayout(tiles, columns, size, font);
  int height = 2 * kGridMargin;
  for (std::size_t r = 0; r < grid.rowHeights.size(); ++r) height += grid.rowHeights[r] + (r > 0 ? kGridSpacing : 0);
  return std::min(height, size.height());
}

void paintHeatmapGrid(QPainter& painter, const std::vector<HeatmapFigure>& tiles, int columns, QSize size,
                      const QFont& font) {
  const GridLayout grid = gridLayout(tiles, columns, size, font);
  columns = std::max(1, columns);
  int y = kGridMargin;
  for (std::size_t r = 0; r < grid.rowHeights.size(); ++r) {
    for (int c = 0; c < columns; ++c) {
      const std::size_t i = r * std::size_t(columns) + std::size_t(c);
      if (i >= tiles.size()) break;
      // The tile's full share, as the figure was measured in it; square cells use only the row's height of it.
      const QRect area(kGridMargin + c * (grid.tileWidth + kGridSpacing), y, grid.tileWidth, grid.maxRow);
      paintHeatmapFigure(painter, area, tiles[i], font);
    }
    y += grid.rowHeights[r] + kGridSpacing;
  }
}

}  // namespace attn::ui::render
