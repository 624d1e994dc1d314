#include "views/heatmap_view.h"

#include "views/plot_data.h"
#include "views/qcustomplot.h"

#include <QFontMetrics>
#include <QFontMetricsF>
#include <QLabel>
#include <QMouseEvent>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <functional>

using namespace Qt::StringLiterals;

namespace attn::ui {

// Places one tick per cell centre, labelled with its token, keeping every stride-th one so labels never
// overlap; QCustomPlot's numeric tickers would put ticks between cells.
class TokenTicker : public QCPAxisTicker {
 public:
  void setLabels(QStringList labels) { labels_ = std::move(labels); }
  const QStringList& labels() const { return labels_; }
  void setStride(int stride) { stride_ = std::max(1, stride); }
  int stride() const { return stride_; }

  void generate(const QCPRange& range, const QLocale&, QChar, int, QVector<double>& ticks, QVector<double>* subTicks,
                QVector<QString>* tickLabels) override {
    ticks.clear();
    if (subTicks) subTicks->clear();
    if (tickLabels) tickLabels->clear();
    const auto n = int(labels_.size());
    if (n == 0) return;
    const int first = std::clamp(int(std::ceil(range.lower - 1e-9)), 0, n - 1);
    const int last = std::clamp(int(std::floor(range.upper + 1e-9)), 0, n - 1);
    // Align to multiples of the stride so labels do not jump while panning.
    for (int i = (first + stride_ - 1) / stride_ * stride_; i <= last; i += stride_) {
      ticks.append(double(i));
      if (tickLabels) tickLabels->append(labels_[i]);
    }
  }

 private:
  QStringList labels_;
  int stride_ = 1;
};

// QCustomPlot lays out axes from tick labels generated before the layout; the label stride depends on
// the cell size that layout produces. Re-running the layout once when the stride changes makes every
// replot and every export (which lays out at the export size) settle on the right labels.
class TokenPlot : public Plot {
 public:
  using Plot::Plot;
  std::function<void()> beforeLayout;
  std::function<bool()> afterLayout;  // true: something changed that needs the layout again

 protected:
  void updateLayout() override {
    if (beforeLayout) beforeLayout();
    QCustomPlot::updateLayout();
    // Label strides and square cells depend on each other's outcome; two more passes settle them.
    for (int pass = 0; pass < 3 && afterLayout && afterLayout(); ++pass) QCustomPlot::updateLayout();
  }
};

// Paints render::paintAlignmentOverlay in the plot's cell coordinates. The axes are linear, so two points
// per axis give the transform; the layer clips it to the axis rect like the cells.
class AlignmentOverlayItem : public QCPAbstractItem {
 public:
  AlignmentOverlayItem(QCustomPlot* plot, QCPAxis* columns, QCPAxis* rows)
      : QCPAbstractItem(plot), columns_(columns), rows_(rows) {
    setSelectable(false);
  }
  render::AlignmentOverlay overlay;

  double selectTest(const QPointF&, bool, QVariant*) const override { return -1.0; }

 protected:
  void draw(QCPPainter* painter) override {
    if (overlay.empty()) return;
    const double x0 = columns_->coordToPixel(0.0), x1 = columns_->coordToPixel(1.0);
    const double y0 = rows_->coordToPixel(0.0), y1 = rows_->coordToPixel(1.0);
    render::paintAlignmentOverlay(*painter, overlay, QTransform(x1 - x0, 0.0, 0.0, y1 - y0, x0, y0));
  }

 private:
  QCPAxis* columns_;
  QCPAxis* rows_;
};

namespace {

constexpr int kCompactLabelMinHeight = 280;
// Below the cells: room for the colour bar's last tick label (there is no bottom axis).
constexpr int kFullBottomMargin = 14;
constexpr int kCompactBottomMargin = 4;
constexpr int kCompactBarBottomMargin = 8;

}  // namespace

HeatmapView::HeatmapView(Style style, QWidget* parent)
    : QWidget(parent), style_(style), rowNoun_(u"row"_s), columnNoun_(u"column"_s) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  plot_ = new TokenPlot(this);
  layout->addWidget(plot_);
  plot_->setNoAntialiasingOnDrag(true);
  plot_->setPlottingHint(QCP::phCacheLabels, true);
  plot_->setToolTipDuration(-1);

  const bool compact = style_ == Style::Compact;
  QFont tickFont = font();
  if (compact) tickFont.setPointSizeF(std::max(6.0, tickFont.pointSizeF() - 2.0));

  auto* rect = plot_->axisRect();
  setUpAxes(tickFont);
  // Keys along the top (like a table header), queries down the left.
  auto* top = plot_->xAxis2;
  auto* left = plot_->yAxis;
  const QColor ink = palette().color(QPalette::WindowText);

  colorMap_ = new QCPColorMap(top, left);
  colorMap_->setInterpolate(false);  // one flat colour per cell: weights are discrete
  colorMap_->setTightBoundary(false);
  colorMap_->setAntialiased(false);

  if (compact) {
    QFont titleFont = font();
    titleFont.setBold(true);
    title_ = new QCPTextElement(plot_, QString(), titleFont);
    title_->setTextColor(ink);
    plot_->plotLayout()->insertRow(0);
    plot_->plotLayout()->addElement(0, 0, title_);
    plot_->plotLayout()->setRowSpacing(0);
    // The bottom margin is automatic (there is no axis, so its minimum) so that a colour bar's margin group
    // and square cells (setSquareCells) can set it; the right one is fixed.
    rect->setAutoMargins(QCP::msLeft | QCP::msTop | QCP::msBottom);
    rect->setMargins(QMargins(0, 0, 4, kCompactBottomMargin));
    rect->setMinimumMargins(QMargins(0, 0, 0, kCompactBottomMargin));
  } else {
    addColorScale(0, tickFont, 12);
    colorScale_->setLabel(tr("weight"));
    // Automatic margins on every side so the margin group can align the colour bar with the cells; the
    // minimum keeps the bottom row off the widget's edge (no axis there to make room).
    rect->setAutoMargins(QCP::msAll);
    rect->setMinimumMargins(QMargins(0, 0, 12, kFullBottomMargin));
    plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    rect->setRangeDrag(Qt::Horizontal | Qt::Vertical);
    rect->setRangeZoom(Qt::Horizontal | Qt::Vertical);
    rect->setRangeDragAxes(top, left);
    rect->setRangeZoomAxes(top, left);
    connect(top, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [this] { clampRanges(); });
    connect(left, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [this] { clampRanges(); });
  }

  overlay_ = new AlignmentOverlayItem(plot_, top, left);
  overlay_->setClipAxisRect(rect);

  addHoverOutline();

  plot_->beforeLayout = [this] { fitTitle(); };
  plot_->afterLayout = [this] {
    const bool pooled = fitToPixels();
    const bool square = squareTheCells();
    return syncTickStrides() || square || pooled;
  };
  connect(plot_, &QCustomPlot::mouseMove, this, &HeatmapView::onMouseMove);
  connect(plot_, &QCustomPlot::mousePress, this, &HeatmapView::onMousePress);
  connect(plot_, &QCustomPlot::mouseDoubleClick, this, &HeatmapView::onDoubleClick);
  plot_->setMouseTracking(true);
  plot_->installEventFilter(this);
  setAxisTitles(tr("queries"), tr("keys"));
  updateColors();
  if (compact) setCursor(Qt::PointingHandCursor);

  emptyLabel_ = new QLabel(this);
  emptyLabel_->setObjectName(u"emptyState"_s);
  emptyLabel_->setAlignment(Qt::AlignCenter);
  emptyLabel_->setWordWrap(true);
  emptyLabel_->setTextFormat(Qt::PlainText);
  emptyLabel_->setMargin(24);
  emptyLabel_->setAutoFillBackground(true);
  emptyLabel_->setBackgroundRole(QPalette::Base);
  emptyLabel_->setForegroundRole(QPalette::PlaceholderText);
  emptyLabel_->hide();
  // No map yet: no cells (QCPColorMap's default data would draw one flat square in the lowest colour).
  colorMap_->setVisible(false);
}

// Keys along the top (like a table header), queries down the left; the bottom and right axes only close the
// frame.
void HeatmapView::setUpAxes(const QFont& tickFont) {
  const bool compact = style_ == Style::Compact;
  auto* rect = plot_->axisRect();
  auto* top = plot_->xAxis2;
  auto* left = plot_->yAxis;
  top->setVisible(true);
  plot_->xAxis->setVisible(false);
  plot_->yAxis2->setVisible(false);
  rowTicker_ = QSharedPointer<TokenTicker>::create();
  columnTicker_ = QSharedPointer<TokenTicker>::create();
  left->setTicker(rowTicker_);
  top->setTicker(columnTicker_);
  left->setRangeReversed(true);  // row 0 on top, as in the matrix
  const QColor ink = palette().color(QPalette::WindowText);
  for (QCPAxis* axis : {top, left}) {
    axis->setTickLabelFont(tickFont);
    axis->setTickLabelColor(ink);
    axis->setSubTicks(false);
    axis->setTickLengthIn(0);
    axis->setTickLengthOut(compact ? 2 : 4);
    axis->setBasePen(QPen(palette().color(QPalette::Mid)));
    axis->setTickPen(QPen(palette().color(QPalette::Mid)));
    axis->grid()->setVisible(false);
    axis->setLabelColor(palette().color(QPalette::PlaceholderText));
  }
  top->setTickLabelRotation(-90);
  top->setTickLabelPadding(compact ? 2 : 4);
  left->setTickLabelPadding(compact ? 2 : 4);
  plot_->setBackground(palette().brush(QPalette::Base));
  rect->setBackground(palette().brush(QPalette::Base));
}

// The hover outline lives on its own buffered layer so moving the mouse repaints only that layer.
void HeatmapView::addHoverOutline() {
  const bool compact = style_ == Style::Compact;
  auto* rect = plot_->axisRect();
  auto* top = plot_->xAxis2;
  auto* left = plot_->yAxis;
  plot_->addLayer(u"hover"_s, nullptr, QCustomPlot::limAbove);
  plot_->layer(u"hover"_s)->setMode(QCPLayer::lmBuffered);
  hover_ = new QCPItemRect(plot_);
  hover_->setLayer(u"hover"_s);
  hover_->setClipAxisRect(rect);
  for (auto* position : {hover_->topLeft, hover_->bottomRight}) position->setAxes(top, left);
  hover_->setPen(QPen(QColor(255, 255, 255), compact ? 1.0 : 2.0));
  hover_->setBrush(Qt::NoBrush);
  hover_->setSelectable(false);
  hover_->setVisible(false);
}

void HeatmapView::addColorScale(int row, const QFont& tickFont, int barWidth) {
  colorScale_ = new QCPColorScale(plot_);
  plot_->plotLayout()->addElement(row, 1, colorScale_);
  colorScale_->setType(QCPAxis::atRight);
  colorScale_->setBarWidth(barWidth);
  colorScale_->axis()->setTickLabelFont(tickFont);
  colorScale_->axis()->setTickLabelColor(palette().color(QPalette::WindowText));
  colorScale_->axis()->setLabelColor(palette().color(QPalette::PlaceholderText));
  colorScale_->axis()->setBasePen(QPen(palette().color(QPalette::Mid)));
  colorScale_->axis()->setTickPen(QPen(palette().color(QPalette::Mid)));
  colorScale_->axis()->setSubTickPen(QPen(palette().color(QPalette::Mid)));
  colorScale_->setRangeDrag(false);
  colorScale_->setRangeZoom(false);
  colorMap_->setColorScale(colorScale_);
  // Keep the colour bar exactly as tall as the cells.
  if (!marginGroup_) marginGroup_ = new QCPMarginGroup(plot_);
  plot_->axisRect()->setMarginGroup(QCP::msTop | QCP::msBottom, marginGroup_);
  colorScale_->setMarginGroup(QCP::msTop | QCP::msBottom, marginGroup_);
  colorScale_->setMinimumMargins(QMargins(0, 0, 0, bottomMargin()));
}

void HeatmapView::setColorBarShown(bool on) {
  if (style_ == Style::Full || on == (colorScale_ != nullptr)) return;
  if (on) {
    addColorScale(1, plot_->yAxis->tickLabelFont(), 8);
  } else {
    colorMap_->setColorScale(nullptr);
    plot_->axisRect()->setMarginGroup(QCP::msTop | QCP::msBottom, nullptr);
    plot_->plotLayout()->remove(colorScale_);  // deletes it
    plot_->plotLayout()->simplify();
    colorScale_ = nullptr;
  }
  updateBottomMargin();
  updateColors();
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

void HeatmapView::setSquareCells(bool on) {
  if (on == squareCells_) return;
  squareCells_ = on;
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

int HeatmapView::bottomMargin() const {
  if (style_ == Style::Full) return kFullBottomMargin;
  return colorScale_ ? kCompactBarBottomMargin : kCompactBottomMargin;
}

void HeatmapView::updateBottomMargin() {
  const int bottom = bottomMargin() + extraBottom_;
  // The margins as well as their minimums: an element outside the axis rect (the colour bar) takes its current
  // margin as its automatic one, so a margin group would otherwise never let the margin shrink again.
  for (QCPLayoutElement* element :
       {static_cast<QCPLayoutElement*>(plot_->axisRect()), static_cast<QCPLayoutElement*>(colorScale_)}) {
    if (!element) continue;
    QMargins minimum = element->minimumMargins();
    minimum.setBottom(bottom);
    element->setMinimumMargins(minimum);
    QMargins margins = element->margins();
    margins.setBottom(bottom);
    element->setMargins(margins);
  }
}

bool HeatmapView::squareTheCells() {
  int extra = 0;
  if (squareCells_ && map_) {
    // The cells at the width they get, and no taller: the room below them stays empty.
    const QRect cells = plot_->axisRect()->rect();
    const double columns = std::max(plot_->xAxis2->range().size(), 1e-9);
    const double rows = std::max(plot_->yAxis->range().size(), 1e-9);
    const double natural = double(cells.height() + extraBottom_);
    const double square = rows * double(cells.width()) / columns;
    if (square < natural) extra = int(std::floor(natural - square));
  }
  if (extra == extraBottom_) return false;
  extraBottom_ = extra;
  updateBottomMargin();
  return true;
}

int HeatmapView::contentHeight() const {
  return std::min(plot_->height(), plot_->axisRect()->rect().bottom() + 1 + bottomMargin());
}

void HeatmapView::setEmptyText(const QString& text) {
  emptyLabel_->setText(text);
  updateEmptyState();
}

QString HeatmapView::emptyText() const { return emptyLabel_->text(); }

bool HeatmapView::isShowingEmptyText() const { return !emptyLabel_->isHidden(); }

void HeatmapView::updateEmptyState() {
  const bool show = !map_ && !emptyLabel_->text().isEmpty();
  emptyLabel_->setGeometry(rect());
  emptyLabel_->setVisible(show);
  if (show) emptyLabel_->raise();
}

void HeatmapView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (map_) plot_->replot(QCustomPlot::rpQueuedReplot);  // pools the cells to the pixels they are shown on
}

void HeatmapView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  emptyLabel_->setGeometry(rect());
}

HeatmapView::~HeatmapView() = default;

QCustomPlot* HeatmapView::plot() const { return plot_; }

QSize HeatmapView::sizeHint() const { return style_ == Style::Compact ? QSize(220, 200) : QSize(720, 560); }

QSize HeatmapView::minimumSizeHint() const { return style_ == Style::Compact ? QSize(140, 130) : QSize(240, 200); }

void HeatmapView::setTickLabels(QStringList rows, QStringList columns) {
  rowTicker_->setLabels(std::move(rows));
  columnTicker_->setLabels(std::move(columns));
}

void HeatmapView::clear() {
  distribution_ = false;
  source_.reset();
  base_.reset();
  map_.reset();
  rowStarts_.clear();
  colStarts_.clear();
  poolNote_.clear();
  fitTitle();
  overlay_->overlay = {};
  setHover(std::nullopt);
  colorMap_->data()->clear();
  colorMap_->setVisible(false);
  rowTicker_->setLabels({});
  columnTicker_->setLabels({});
  updateEmptyState();
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

void HeatmapView::setOverlay(const render::AlignmentOverlay& overlay) {
  if (overlay == overlay_->overlay) return;
  overlay_->overlay = overlay;
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

const render::AlignmentOverlay& HeatmapView::overlay() const { return overlay_->overlay; }

void HeatmapView::setColormap(render::Colormap map) {
  colormap_ = map;
  updateColors();
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

void HeatmapView::setRangeMode(render::RangeMode mode) {
  rangeMode_ = mode;
  updateColors();
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

void HeatmapView::setAxisTitles(const QString& rows, const QString& columns) {
  if (style_ == Style::Full) {
    plot_->yAxis->setLabel(rows);
    plot_->xAxis2->setLabel(columns);
  }
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

void HeatmapView::setTitle(const QString& title) {
  fullTitle_ = title;
  fitTitle();
  plot_->setToolTip(style_ == Style::Compact ? title + tr("\nClick to show it in the main view.") : QString());
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

void HeatmapView::fitTitle() {
  if (!title_) return;
  // The plot's width less the title's margins and a pixel either side for rounding.
  const int available = plot_->width() - title_->margins().left() - title_->margins().right() - 2;
  QFont titleFont = font();
  titleFont.setBold(true);
  const QString whole = fullTitle_ + poolNote_;
  QString text = whole;
  if (available > 0) {
    // Smaller type first, down to 80% of the tile's font (6 pt at least); then cut in the middle, which keeps
    // the end of titles such as "self-attention \u00b7 head 8". The tool tip has the whole title.
    const double base = titleFont.pointSizeF() > 0 ? titleFont.pointSizeF() : 9.0;
    const double smallest = std::max(6.0, base * 0.8);
    for (double size = base;; size -= 0.5) {
      titleFont.setPointSizeF(size);
      const QFontMetrics metrics(titleFont);
      if (metrics.horizontalAdvance(whole) <= available) break;
      if (size - 0.5 < smallest) {
        text = metrics.elidedText(whole, Qt::ElideMiddle, available);
        break;
      }
    }
  }
  if (title_->font() != titleFont) title_->setFont(titleFont);
  if (title_->text() != text) title_->setText(text);
}

void HeatmapView::setHighlighted(bool on) {
  highlighted_ = on;
  if (style_ != Style::Compact) return;
  QColor background = palette().color(QPalette::Base);
  if (on) {
    QColor tint = palette().color(QPalette::Highlight);
    tint.setAlpha(70);
    QPixmap swatch(1, 1);
    swatch.fill(background);
    QPainter painter(&swatch);
    painter.fillRect(0, 0, 1, 1, tint);
    painter.end();
    background = swatch.toImage().pixelColor(0, 0);
  }
  plot_->setBackground(background);
  if (title_)
    title_->setTextColor(on ? palette().color(QPalette::Highlight).darker(130) : palette().color(QPalette::WindowText));
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

void HeatmapView::updateColors() {
  // The fixed 0..1 range is for distributions only: a score or an activation on it would be clipped or washed out.
  const auto mode = distribution_ ? rangeMode_ : render::RangeMode::Data;
  const auto range = map_ ? render::valueRange(map_->weights, mode) : render::ValueRange{};
  const auto gradient = render::gradient(colormap_);
  colorMap_->setGradient(gradient);
  colorMap_->setDataRange(QCPRange(range.lower, range.upper));
  // Outline the hovered cell in a colour that contrasts with the bright end of the map.
  hover_->setPen(QPen(colormap_ == render::Colormap::Greys ? QColor(220, 40, 40) : QColor(255, 64, 64),
                      style_ == Style::Compact ? 1.0 : 2.0));
}

void HeatmapView::resetRanges() {
  const int rows = map_ ? int(map_->weights.rows()) : 1;
  const int cols = map_ ? int(map_->weights.cols()) : 1;
  clamping_ = true;
  plot_->xAxis2->setRange(render::cellAxisRange(cols));
  plot_->yAxis->setRange(render::cellAxisRange(rows));
  clamping_ = false;
}

void HeatmapView::clampRanges() {
  if (clamping_ || !map_) return;
  clamping_ = true;
  // Zooming out past the matrix or dragging it off screen shows nothing useful.
  for (auto [axis, cells] :
       {std::pair{plot_->xAxis2, int(map_->weights.cols())}, std::pair{plot_->yAxis, int(map_->weights.rows())}}) {
    const QCPRange full = render::cellAxisRange(cells);
    QCPRange r = axis->range();
    if (r.size() >= full.size()) {
      r = full;
    } else if (r.lower < full.lower) {
      r = QCPRange(full.lower, full.lower + r.size());
    } else if (r.upper > full.upper) {
      r = QCPRange(full.upper - r.size(), full.upper);
    }
    if (r.size() < 1.0) r = QCPRange(r.center() - 0.5, r.center() + 0.5);
    axis->setRange(r);
  }
  clamping_ = false;
}

bool HeatmapView::syncTickStrides() {
  const QRect area = plot_->axisRect()->rect();
  const double lineHeight = QFontMetricsF(plot_->yAxis->tickLabelFont()).height();
  const auto stride = [&](QCPAxis* axis, int pixels) {
    const double cellsShown = std::max(axis->range().size(), 1e-9);
    return render::labelStride(double(pixels) / cellsShown, lineHeight * 1.1);
  };
  const int rowStride = stride(plot_->yAxis, area.height());
  const int columnStride = stride(plot_->xAxis2, area.width());
  bool changed = rowStride != rowTicker_->stride() || columnStride != columnTicker_->stride();
  if (style_ == Style::Compact) {
    // A small tile is a thumbnail: token labels would take more room than the cells (hovering still
    // names the tokens). Larger tiles, as in exported grids, keep them; so do wide ones with square cells,
    // whose height is only what the cells need.
    const bool labels =
        plot_->height() >= kCompactLabelMinHeight || (squareCells_ && plot_->width() >= kCompactLabelMinHeight);
    if (labels != plot_->yAxis->tickLabels()) {
      plot_->yAxis->setTickLabels(labels);
      plot_->xAxis2->setTickLabels(labels);
      changed = true;
    }
  }
  if (colorScale_) {
    // As many numbers on the colour bar as fit with a line between them (five at most, QCustomPlot's default).
    const auto ticker = colorScale_->axis()->ticker();
    const double barLine = QFontMetricsF(colorScale_->axis()->tickLabelFont()).height();
    const int ticks = std::clamp(int(double(colorScale_->axis()->axisRect()->rect().height()) / (2.5 * barLine)), 1, 5);
    if (ticker->tickCount() != ticks) {
      ticker->setTickCount(ticks);
      changed = true;
    }
  }
  rowTicker_->setStride(rowStride);
  columnTicker_->setStride(columnStride);
  return changed;
}

int HeatmapView::rowLabelStride() const { return rowTicker_->stride(); }
int HeatmapView::columnLabelStride() const { return columnTicker_->stride(); }

void HeatmapView::replotNow() { plot_->replot(QCustomPlot::rpImmediateRefresh); }

std::optional<QPoint> HeatmapView::cellAt(QPointF plotPos) const {
  if (!map_ || !plot_->axisRect()->rect().contains(plotPos.toPoint())) return std::nullopt;
  const double x = plot_->xAxis2->pixelToCoord(plotPos.x());
  const double y = plot_->yAxis->pixelToCoord(plotPos.y());
  const int col = int(std::floor(x + 0.5));
  const int row = int(std::floor(y + 0.5));
  if (row < 0 || col < 0 || row >= map_->weights.rows() || col >= map_->weights.cols()) return std::nullopt;
  return QPoint(col, row);
}

void HeatmapView::setHover(std::optional<QPoint> cell) {
  if (cell == hoverCell_) return;
  hoverCell_ = cell;
  hover_->setVisible(cell.has_value());
  if (cell) {
    hover_->topLeft->setCoords(cell->x() - 0.5, cell->y() - 0.5);
    hover_->bottomRight->setCoords(cell->x() + 0.5, cell->y() + 0.5);
  }
  plot_->layer(u"hover"_s)->replot();
}

void HeatmapView::onMouseMove(QMouseEvent* event) {
  const auto cell = cellAt(event->position());
  if (cell != hoverCell_) {
    setHover(cell);
    if (cell) {
      const QPoint source = sourceCell(*cell);
      emit cellHovered(source.y(), source.x());
      QToolTip::showText(event->globalPosition().toPoint(), cellToolTip(cell->y(), cell->x()), plot_);
    } else if (style_ == Style::Full) {
      QToolTip::hideText();
    }
  }
}

bool HeatmapView::eventFilter(QObject* watched, QEvent* event) {
  if (watched == plot_ && event->type() == QEvent::Leave) setHover(std::nullopt);
  return QWidget::eventFilter(watched, event);
}

void HeatmapView::onMousePress(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return;
  emit clicked();
  if (const auto cell = cellAt(event->position())) {
    const QPoint source = sourceCell(*cell);
    emit cellClicked(source.y(), source.x());
  }
}

void HeatmapView::onDoubleClick(QMouseEvent*) {
  if (style_ == Style::Full) {
    resetRanges();
    plot_->replot(QCustomPlot::rpQueuedReplot);
  }
}

}  // namespace attn::ui
