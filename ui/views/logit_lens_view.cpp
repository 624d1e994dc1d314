#include "views/logit_lens_view.h"

#include "views/qcustomplot.h"

#include <QHelpEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollArea>
#include <QScrollBar>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

using namespace Qt::StringLiterals;

namespace attn::ui {

namespace {

// Tokens are shown with their white space visible: a leading space as "␣", a newline as "↵".
QString visible(const std::string& text) {
  QString s = QString::fromStdString(text);
  s.replace(u' ', QChar(0x2423));
  s.replace(u'\n', QChar(0x21B5));
  s.replace(u'\t', QChar(0x21E5));
  return s;
}

bool darkBackground(QRgb c) { return 0.299 * qRed(c) + 0.587 * qGreen(c) + 0.114 * qBlue(c) < 140.0; }

}  // namespace

LensGrid::LensGrid(QWidget* parent) : QWidget(parent) {
  setObjectName(u"logitLensGrid"_s);
  setMouseTracking(true);
  setFocusPolicy(Qt::ClickFocus);
}

void LensGrid::setLens(std::shared_ptr<const attn::models::LogitLens> lens, QStringList tokens) {
  lens_ = std::move(lens);
  tokens_ = std::move(tokens);
  updateGeometry();
  resize(sizeHint());
  update();
}

void LensGrid::setColormap(render::Colormap map) {
  colormap_ = map;
  update();
}

void LensGrid::setSelectedColumn(int column) {
  selected_ = column;
  update();
}

void LensGrid::fitWidth(int width) {
  const int columns = lens_ ? static_cast<int>(lens_->positions.size()) : 0;
  const int fit = columns > 0 ? (width - kLabelWidth - 2) / columns : kCellWidth;
  const int cell = std::clamp(fit, kMinCellWidth, kCellWidth);
  if (cell == cellWidth_) return;
  cellWidth_ = cell;
  updateGeometry();
  resize(sizeHint());
  update();
}

int LensGrid::layers() const { return lens_ ? static_cast<int>(lens_->top.size()) : 0; }

QSize LensGrid::sizeHint() const {
  const int columns = lens_ ? static_cast<int>(lens_->positions.size()) : 0;
  return {kLabelWidth + columns * cellWidth_ + 2, (layers() + 1) * kCellHeight + 2};
}

std::optional<std::pair<int, int>> LensGrid::cellAt(QPoint p) const {
  if (!lens_ || p.x() < visibleRegion().boundingRect().left() + kLabelWidth || p.y() < 0) return std::nullopt;
  const int column = (p.x() - kLabelWidth) / cellWidth_;
  const int row = p.y() / kCellHeight;
  if (column >= static_cast<int>(lens_->positions.size()) || row > layers()) return std::nullopt;
  return std::pair{row == layers() ? -1 : layers() - 1 - row, column};
}

QString LensGrid::cellText(int layer, int column) const {
  if (!lens_ || column < 0 || column >= static_cast<int>(lens_->positions.size())) return {};
  const int position = lens_->positions[static_cast<std::size_t>(column)];
  const QString token = position < tokens_.size() ? tokens_[position] : QString::number(position);
  if (layer < 0)
    return tr("position %1: %2 (the input; the rows above predict what follows it)").arg(position).arg(token);
  QString text =
      tr("layer %1, position %2 (after “%3”): the next token read from this layer").arg(layer).arg(position).arg(token);
  for (const auto& c : lens_->top[static_cast<std::size_t>(layer)][static_cast<std::size_t>(column)]) {
    text += u"\n  %1  %2"_s.arg(c.probability, 0, 'f', 4).arg(visible(c.text));
  }
  const int rank = lens_->final_rank[static_cast<std::size_t>(layer)][static_cast<std::size_t>(column)];
  text += tr("\nthe model's final prediction is %1 here").arg(rank == 0 ? tr("first") : tr("number %1").arg(rank + 1));
  return text;
}

void LensGrid::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  if (!lens_) return;
  const QFontMetrics fm(font());
  const int columns = static_cast<int>(lens_->positions.size());
  for (int row = 0; row <= layers(); ++row) {
    const int layer = row == layers() ? -1 : layers() - 1 - row;
    for (int c = 0; c < columns; ++c) {
      const QRect cell(kLabelWidth + c * cellWidth_, row * kCellHeight, cellWidth_ - 1, kCellHeight - 1);
      QString text;
      if (layer < 0) {
        const int position = lens_->positions[static_cast<std::size_t>(c)];
        text = position < tokens_.size() ? tokens_[position] : QString::number(position);
        p.fillRect(cell, palette().alternateBase());
        p.setPen(palette().color(QPalette::Text));
      } else {
        const auto& best = lens_->top[static_cast<std::size_t>(layer)][static_cast<std::size_t>(c)].front();
        const QRgb colour = render::sample(colormap_, std::clamp<double>(best.probability, 0.0, 1.0));
        p.fillRect(cell, QColor(colour));
        p.setPen(darkBackground(colour) ? Qt::white : Qt::black);
        text = visible(best.text);
      }
      p.drawText(cell.adjusted(3, 0, -3, 0), Qt::AlignCenter, fm.elidedText(text, Qt::ElideRight, cell.width() - 6));
    }
  }
  // The row labels stay at the left edge of what is in view when the grid is scrolled.
  const int x0 = visibleRegion().boundingRect().left();
  p.fillRect(QRect(x0, 0, kLabelWidth, height()), palette().base());
  p.setPen(palette().color(QPalette::Text));
  for (int row = 0; row <= layers(); ++row) {
    const int layer = row == layers() ? -1 : layers() - 1 - row;
    p.drawText(QRect(x0, row * kCellHeight, kLabelWidth - 4, kCellHeight), Qt::AlignRight | Qt::AlignVCenter,
               layer < 0 ? tr("input") : tr("layer %1").arg(layer));
  }
  if (selected_ >= 0 && selected_ < columns) {
    p.setPen(QPen(palette().color(QPalette::Highlight), 2));
    p.setBrush(Qt::NoBrush);
    p.drawRect(kLabelWidth + selected_ * cellWidth_, 1, cellWidth_ - 2, (layers() + 1) * kCellHeight - 2);
  }
}

void LensGrid::mousePressEvent(QMouseEvent* event) {
  if (const auto cell = cellAt(event->position().toPoint())) emit columnClicked(cell->second);
}

bool LensGrid::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    if (const auto cell = cellAt(help->pos())) {
      QToolTip::showText(help->globalPos(), cellText(cell->first, cell->second), this);
    } else {
      QToolTip::hideText();
    }
    return true;
  }
  return QWidget::event(event);
}

LogitLensView::LogitLensView(QWidget* parent) : QWidget(parent) {
  setObjectName(u"logitLens"_s);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  placeholder_ = new QLabel(this);
  placeholder_->setWordWrap(true);
  placeholder_->setAlignment(Qt::AlignCenter);
  placeholder_->setForegroundRole(QPalette::PlaceholderText);
  layout->addWidget(placeholder_);
  caption_ = new QLabel(
      tr("Each cell: the token that layer's residual stream predicts next, read through the final norm and the "
         "output embedding, shaded by its probability. Click a column for its ranks below; hover for the top five."),
      this);
  caption_->setWordWrap(true);
  layout->addWidget(caption_);
  scroll_ = new QScrollArea(this);
  scroll_->setFrameShape(QFrame::NoFrame);
  grid_ = new LensGrid(scroll_);
  scroll_->setWidget(grid_);
  // The labels are painted where the view starts: scrolling repaints the grid rather than shifting pixels.
  connect(scroll_->horizontalScrollBar(), &QScrollBar::valueChanged, grid_, qOverload<>(&QWidget::update));
  layout->addWidget(scroll_);
  plot_ = new Plot(this);
  plot_->setObjectName(u"logitLensRanks"_s);
  plot_->setMinimumHeight(160);
  plot_->addGraph();
  plot_->graph(0)->setLineStyle(QCPGraph::lsLine);
  plot_->graph(0)->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 6));
  plot_->xAxis->setLabel(tr("layer"));
  // Layers are whole numbers: ticks at every layer, or every 2, 5, 10, ... when they would crowd.
  auto layerTicker = QSharedPointer<QCPAxisTickerFixed>(new QCPAxisTickerFixed);
  layerTicker->setTickStep(1.0);
  layerTicker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
  plot_->xAxis->setTicker(layerTicker);
  plot_->xAxis->setNumberFormat(u"f"_s);
  plot_->xAxis->setNumberPrecision(0);
  plot_->yAxis->setLabel(tr("rank of the final prediction (1 = first)"));
  plot_->yAxis->setScaleType(QCPAxis::stLogarithmic);
  auto ticker = QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog);
  ticker->setSubTickCount(8);
  plot_->yAxis->setTicker(ticker);
  plot_->yAxis->setNumberFormat(u"f"_s);
  plot_->yAxis->setNumberPrecision(0);
  layout->addWidget(plot_, 1);
  connect(grid_, &LensGrid::columnClicked, this, [this](int column) {
    selectColumn(column);
    if (lens_) emit columnSelected(lens_->positions[static_cast<std::size_t>(column_)]);
  });
  setLens(nullptr, {});
}

void LogitLensView::setPlaceholder(const QString& empty) { placeholder_->setText(empty); }

void LogitLensView::setColormap(render::Colormap map) { grid_->setColormap(map); }

void LogitLensView::setLens(std::shared_ptr<const attn::models::LogitLens> lens, QStringList tokens) {
  lens_ = std::move(lens);
  tokens_ = std::move(tokens);
  const bool shown = lens_ && !lens_->positions.empty();
  placeholder_->setVisible(!shown);
  caption_->setVisible(shown);
  scroll_->setVisible(shown);
  plot_->setVisible(shown);
  grid_->setLens(lens_, tokens_);
  grid_->fitWidth(scroll_->width());
  // As tall as the grid (and its scroll bar): the plot below takes the rest.
  scroll_->setFixedHeight(grid_->sizeHint().height() + scroll_->horizontalScrollBar()->sizeHint().height() + 4);
  selectColumn(-1);  // the newest position; the tab's scrubber picks another
}

void LogitLensView::selectColumn(int column) {
  const int columns = lens_ ? static_cast<int>(lens_->positions.size()) : 0;
  column_ = columns == 0 ? -1 : std::clamp(column < 0 ? columns - 1 : column, 0, columns - 1);
  grid_->setSelectedColumn(column_);
  if (column_ >= 0) {
    // In the middle of what the row labels leave of the view, where the scroll range allows: the tokens before it and
    // after it in view.
    const int cell = grid_->cellWidth();
    const int centre = LensGrid::kLabelWidth + column_ * cell + cell / 2;
    scroll_->horizontalScrollBar()->setValue(centre - (LensGrid::kLabelWidth + scroll_->viewport()->width()) / 2);
  }
  updatePlot();
}

void LogitLensView::fitColumns() {
  grid_->fitWidth(scroll_->width());
  if (column_ >= 0) {
    selectColumn(column_);  // in view again at the new width
  } else {
    updatePlot();
  }
}

void LogitLensView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  fitColumns();
}

void LogitLensView::updatePlot() {
  QVector<double> x, y;
  if (lens_ && column_ >= 0) {
    for (std::size_t l = 0; l < lens_->final_rank.size(); ++l) {
      x.append(static_cast<double>(l));
      y.append(lens_->final_rank[l][static_cast<std::size_t>(column_)] + 1.0);
    }
  }
  plot_->graph(0)->setData(x, y, true);
  // Whole decades, so that 1 and 10 (and 100, ...) are always labelled.
  const double highest = y.isEmpty() ? 1.0 : *std::max_element(y.begin(), y.end());
  const double top = std::pow(10.0, std::max(1.0, std::ceil(std::log10(highest) + 0.01)));
  plot_->xAxis->setRange(-0.5, std::max(0.5, x.size() - 0.5));
  plot_->yAxis->setRange(0.7, top * 1.4);
  if (lens_ && column_ >= 0) {
    const int position = lens_->positions[static_cast<std::size_t>(column_)];
    plot_->xAxis2->setLabel(QString());
    plot_->setToolTip(tr("position %1: the rank the model's final prediction has at each layer").arg(position));
  }
  // A hidden plot (another tab in view) has no paint buffer yet: it is drawn when shown.
  if (plot_->isVisible() && plot_->width() > 0 && plot_->height() > 0) plot_->replot();
}

void LogitLensView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  fitColumns();
}

}  // namespace attn::ui
