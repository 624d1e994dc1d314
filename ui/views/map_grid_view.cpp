#include "views/map_grid_view.h"

#include "views/heatmap_view.h"

#include <QGridLayout>
#include <QKeyEvent>
#include <QLabel>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace attn::ui {

MapGrid::MapGrid(QWidget* parent) : QWidget(parent) {
  layout_ = new QGridLayout(this);
  layout_->setContentsMargins(4, 4, 4, 4);
  layout_->setSpacing(6);
  overflow_ = new QLabel(this);
  overflow_->setVisible(false);
  overflow_->setWordWrap(true);
  setFocusPolicy(Qt::StrongFocus);
  setAutoFillBackground(true);
  setBackgroundRole(QPalette::Base);
}

HeatmapView* MapGrid::tile(int index) const {
  return index >= 0 && index < count() ? tiles_[std::size_t(index)] : nullptr;
}

void MapGrid::setColumns(int columns) {
  columns_ = std::max(0, columns);
  relayout();
}

void MapGrid::setMaps(std::vector<std::shared_ptr<const attn::AttentionMap>> maps) {
  total_ = int(maps.size());
  const int wanted = std::min(total_, kMaxTiles);
  // Reuse tiles: a replot of an existing QCustomPlot is far cheaper than building a new one.
  while (count() > wanted) {
    delete tiles_.back();
    tiles_.pop_back();
  }
  while (count() < wanted) {
    auto* view = new HeatmapView(HeatmapView::Style::Compact, this);
    const int index = count();
    view->setColormap(colormap_);
    view->setRangeMode(rangeMode_);
    view->setColorBarShown(colorBars_);
    view->setSquareCells(squareCells_);
    connect(view, &HeatmapView::clicked, this, [this, index] {
      setCurrent(index);
      setFocus(Qt::MouseFocusReason);
      emit mapActivated(index);
    });
    tiles_.push_back(view);
  }
  for (int i = 0; i < wanted; ++i) {
    const auto& map = maps[std::size_t(i)];
    tiles_[std::size_t(i)]->setMinimumHeight(0);  // undo packRows
    tiles_[std::size_t(i)]->setMaximumHeight(QWIDGETSIZE_MAX);
    tiles_[std::size_t(i)]->setTitle(QString::fromStdString(map->title()));
    tiles_[std::size_t(i)]->setMap(map);
  }
  overflow_->setText(
      total_ > wanted
          ? tr("Showing the first %1 of %2 maps; choose the others in the selector.").arg(wanted).arg(total_)
          : QString());
  overflow_->setVisible(total_ > wanted);
  if (current_ >= wanted) current_ = -1;
  setCurrent(current_ < 0 && wanted > 0 ? 0 : current_);
  relayout();
}

void MapGrid::relayout() {
  for (auto* view : tiles_) layout_->removeWidget(view);
  layout_->removeWidget(overflow_);
  const int n = count();
  const int columns = columns_ > 0 ? columns_ : std::max(1, n);
  for (int i = 0; i < n; ++i) layout_->addWidget(tiles_[std::size_t(i)], i / columns, i % columns);
  const int rows = (n + columns - 1) / std::max(1, columns);
  layout_->addWidget(overflow_, rows, 0, 1, columns);
}

void MapGrid::setCurrent(int index) {
  current_ = index;
  for (int i = 0; i < count(); ++i) tiles_[std::size_t(i)]->setHighlighted(i == index);
}

void MapGrid::setColormap(render::Colormap map) {
  colormap_ = map;
  for (auto* view : tiles_) view->setColormap(map);
}

void MapGrid::setRangeMode(render::RangeMode mode) {
  rangeMode_ = mode;
  for (auto* view : tiles_) view->setRangeMode(mode);
}

void MapGrid::setColorBars(bool on) {
  colorBars_ = on;
  for (auto* view : tiles_) view->setColorBarShown(on);
}

void MapGrid::setSquareCells(bool on) {
  squareCells_ = on;
  for (auto* view : tiles_) view->setSquareCells(on);
}

void MapGrid::replotNow() {
  for (auto* view : tiles_) view->replotNow();
}

int MapGrid::packRows() {
  layout_->activate();
  replotNow();
  const int n = count();
  const int columns = columns_ > 0 ? columns_ : std::max(1, n);
  const QMargins margins = layout_->contentsMargins();
  int height = margins.top() + margins.bottom();
  for (int first = 0; first < n; first += columns) {
    int row = 0;
    for (int i = first; i < std::min(n, first + columns); ++i)
      row = std::max(row, tiles_[std::size_t(i)]->contentHeight());
    for (int i = first; i < std::min(n, first + columns); ++i) tiles_[std::size_t(i)]->setFixedHeight(row);
    height += row + (first > 0 ? layout_->verticalSpacing() : 0);
  }
  if (overflow_->isVisibleTo(this)) {
    height += layout_->verticalSpacing() + overflow_->heightForWidth(width() - margins.left() - margins.right());
  }
  if (height < this->height()) resize(width(), height);
  layout_->activate();
  replotNow();
  return this->height();
}

void MapGrid::keyPressEvent(QKeyEvent* event) {
  const int n = count();
  const int columns = columns_ > 0 ? columns_ : std::max(1, n);
  int next = current_;
  switch (event->key()) {
    case Qt::Key_Left: next = current_ - 1; break;
    case Qt::Key_Right: next = current_ + 1; break;
    case Qt::Key_Up: next = current_ - columns; break;
    case Qt::Key_Down: next = current_ + columns; break;
    case Qt::Key_Home: next = 0; break;
    case Qt::Key_End: next = n - 1; break;
    default: QWidget::keyPressEvent(event); return;
  }
  if (n == 0 || next < 0 || next >= n || next == current_) return;
  setCurrent(next);
  emit mapActivated(next);
}

}  // namespace attn::ui
