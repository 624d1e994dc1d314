#include "views/head_grid_view.h"

#include <QContextMenuEvent>
#include <QKeyEvent>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace attn::ui {

HeadGridView::HeadGridView(QWidget* parent) : QWidget(parent) {
  setObjectName(u"headGrid"_s);
  setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);
  setToolTip(tr("Every layer and head: click a tile (or press Enter) to open it in the head view and the matrix"));
}

void HeadGridView::setThumbnails(std::shared_ptr<const render::HeadThumbnails> thumbnails) {
  thumbnails_ = std::move(thumbnails);
  if (selected_ && (selected_->y() >= layers() || selected_->x() >= heads())) selected_.reset();
  hovered_.reset();
  rebuildImages();
  updateMinimumSize();
  update();
}

void HeadGridView::setColormap(render::Colormap map) {
  if (map == colormap_) return;
  colormap_ = map;
  rebuildImages();
  update();
}

void HeadGridView::rebuildImages() {
  images_.clear();
  if (!thumbnails_) return;
  images_.reserve(thumbnails_->pooled.size());
  for (const auto& pooled : thumbnails_->pooled) images_.push_back(render::thumbnailImage(pooled, colormap_));
}

void HeadGridView::setSelected(int layer, int head) {
  std::optional<QPoint> next;
  if (layer >= 0 && head >= 0 && layer < layers() && head < heads()) next = QPoint(head, layer);
  if (next == selected_) return;
  selected_ = next;
  update();
}

render::HeadGridLayout HeadGridView::gridLayout() const { return layoutFor(size()); }

render::HeadGridLayout HeadGridView::layoutFor(QSize area) const {
  return render::HeadGridLayout::fill(layers(), heads(), area, kMinTile, 5.0,
                                      fontMetrics().horizontalAdvance(u"layer 00"_s) + 12, fontMetrics().height() + 6);
}

void HeadGridView::updateMinimumSize() {
  // The tiles follow the scroll area's viewport down to kMinTile a side; a model with more layers or heads
  // than that fits scrolls.
  setMinimumSize(thumbnails_ ? layoutFor(QSize(0, 0)).size() + QSize(4, 4) : QSize(0, 0));
}

QSize HeadGridView::sizeHint() const { return QSize(640, 480); }
QSize HeadGridView::minimumSizeHint() const { return QSize(200, 120); }

void HeadGridView::paintEvent(QPaintEvent* event) {
  QPainter painter(this);
  painter.fillRect(event->rect(), palette().base());
  if (!thumbnails_ || images_.empty()) {
    painter.setPen(palette().color(QPalette::PlaceholderText));
    painter.drawText(rect(), Qt::AlignCenter, tr("No attention yet: open a model or an attention dump"));
    return;
  }
  render::HeadGridScene scene;
  scene.tiles = &images_;
  scene.selected = selected_;
  scene.hovered = hovered_;
  scene.ablated = ablated_;
  scene.text = palette().color(QPalette::Text);
  render::paintHeadGrid(painter, scene, gridLayout(), event->rect());
}

void HeadGridView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  update();
}

void HeadGridView::setHovered(std::optional<QPoint> tile) {
  if (tile == hovered_) return;
  hovered_ = tile;
  update();
  emit headHovered(tile ? tile->y() : -1, tile ? tile->x() : -1);
}

void HeadGridView::mouseMoveEvent(QMouseEvent* event) { setHovered(gridLayout().tileAt(event->position().toPoint())); }

void HeadGridView::leaveEvent(QEvent*) { setHovered(std::nullopt); }

void HeadGridView::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return;
  const auto tile = gridLayout().tileAt(event->position().toPoint());
  if (!tile) return;
  setFocus(Qt::MouseFocusReason);
  if (event->modifiers() & Qt::ControlModifier) {
    emit ablationToggled(tile->y(), tile->x());
    return;
  }
  selected_ = tile;
  update();
  emit headActivated(tile->y(), tile->x());
}

void HeadGridView::keyPressEvent(QKeyEvent* event) {
  if (!thumbnails_ || layers() == 0 || heads() == 0) {
    QWidget::keyPressEvent(event);
    return;
  }
  QPoint at = selected_.value_or(QPoint(0, 0));
  switch (event->key()) {
    case Qt::Key_Left: at.rx() = std::max(0, at.x() - 1); break;
    case Qt::Key_Right: at.rx() = std::min(heads() - 1, at.x() + 1); break;
    case Qt::Key_Up: at.ry() = std::max(0, at.y() - 1); break;
    case Qt::Key_Down: at.ry() = std::min(layers() - 1, at.y() + 1); break;
    case Qt::Key_A:
      if (selected_) emit ablationToggled(selected_->y(), selected_->x());
      return;
    case Qt::Key_Escape:
      if (ablated_.empty()) {
        QWidget::keyPressEvent(event);
        return;
      }
      emit restoreRequested();
      return;
    case Qt::Key_Return:
    case Qt::Key_Enter:
      selected_ = at;
      update();
      emit headActivated(at.y(), at.x());
      return;
    default: QWidget::keyPressEvent(event); return;
  }
  selected_ = at;
  update();
}

QImage HeadGridView::renderImage(int width, const QString& title) const {
  render::HeadGridScene scene;
  scene.tiles = &images_;
  scene.selected = selected_;
  scene.ablated = ablated_;
  return render::headGridImage(scene, layers(), heads(), width, title, font());
}

void HeadGridView::setAblated(std::vector<QPoint> heads) {
  if (heads == ablated_) return;
  ablated_ = std::move(heads);
  update();
}

void HeadGridView::contextMenuEvent(QContextMenuEvent* event) {
  const auto tile = gridLayout().tileAt(event->pos());
  if (!tile) return;
  QMenu menu(this);
  const bool on = std::find(ablated_.begin(), ablated_.end(), *tile) != ablated_.end();
  const QString name = QStringLiteral("%1.%2").arg(tile->y()).arg(tile->x());
  menu.addAction(on ? tr("Restore head %1").arg(name) : tr("Ablate head %1").arg(name), this,
                 [this, t = *tile] { emit ablationToggled(t.y(), t.x()); });
  if (!ablated_.empty()) menu.addAction(tr("Restore all heads"), this, [this] { emit restoreRequested(); });
  menu.exec(event->globalPos());
}

}  // namespace attn::ui
