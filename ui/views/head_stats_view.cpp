#include "views/head_stats_view.h"

#include <QHeaderView>
#include <QScrollBar>

#include <algorithm>

namespace attn::ui {

HeadStatsView::HeadStatsView(QWidget* parent) : QTableView(parent) {
  horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  horizontalHeader()->setStretchLastSection(true);
}

void HeadStatsView::setModel(QAbstractItemModel* model) {
  if (this->model()) disconnect(this->model(), nullptr, this, nullptr);
  QTableView::setModel(model);
  if (!model) return;
  // New statistics (other numbers) or new titles (the ViT's "class token"): the layouts ask again.
  const auto changed = [this] { updateGeometry(); };
  connect(model, &QAbstractItemModel::modelReset, this, changed);
  connect(model, &QAbstractItemModel::layoutChanged, this, changed);
  connect(model, &QAbstractItemModel::rowsInserted, this, changed);
  connect(model, &QAbstractItemModel::dataChanged, this, changed);
  connect(model, &QAbstractItemModel::headerDataChanged, this, changed);
  updateGeometry();
}

int HeadStatsView::columnsWidth() const {
  if (!model()) return 0;
  int width = 0;
  for (int c = 0; c < model()->columnCount(); ++c) {
    if (isColumnHidden(c)) continue;
    width += std::max(horizontalHeader()->sectionSizeHint(c), sizeHintForColumn(c));
  }
  return width;
}

QSize HeadStatsView::minimumSizeHint() const {
  if (!isVisible()) return QTableView::minimumSizeHint();
  // Room for the vertical scroll bar as well: it comes and goes with the window's height.
  const int width = columnsWidth() + 2 * frameWidth() + verticalScrollBar()->sizeHint().width() +
                    (verticalHeader()->isVisible() ? verticalHeader()->width() : 0);
  return QSize(width, QTableView::minimumSizeHint().height());
}

QSize HeadStatsView::sizeHint() const { return QTableView::sizeHint().expandedTo(minimumSizeHint()); }

void HeadStatsView::showEvent(QShowEvent* event) {
  QTableView::showEvent(event);
  updateGeometry();
}

void HeadStatsView::hideEvent(QHideEvent* event) {
  QTableView::hideEvent(event);
  updateGeometry();
}

}  // namespace attn::ui
