#include "views/head_stats_view.h"

#include <QHeaderView>
#include <QScrollBar>
#include <QSplitter>
#include <QTimer>

#include <algorithm>

namespace attn::ui {

HeadStatsView::HeadStatsView(QWidget* parent) : QTableView(parent) {
  horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  horizontalHeader()->setStretchLastSection(true);
}

void HeadStatsView::setModel(QAbstractItemModel* model) {
  if (this->model()) disconnect(this->model(), nullptr, this, nullptr);
  QTableView::setModel(model);
  columnsWidth_ = -1;
  if (!model) return;
  // New statistics (other numbers) or new titles (the ViT's "class token"): the columns may need more room.
  const auto changed = [this] {
    columnsWidth_ = -1;
    updateGeometry();
    makeRoomLater();
  };
  connect(model, &QAbstractItemModel::modelReset, this, changed);
  connect(model, &QAbstractItemModel::layoutChanged, this, changed);
  connect(model, &QAbstractItemModel::rowsInserted, this, changed);
  connect(model, &QAbstractItemModel::dataChanged, this, changed);
  connect(model, &QAbstractItemModel::headerDataChanged, this, changed);
  updateGeometry();
}

int HeadStatsView::columnsWidth() const {
  if (!model()) return 0;
  if (columnsWidth_ < 0) {  // the cells' part, the costly one: every cell of every column measured
    columnsWidth_ = 0;
    for (int c = 0; c < model()->columnCount(); ++c) {
      if (isColumnHidden(c)) continue;
      columnsWidth_ += std::max(horizontalHeader()->sectionSizeHint(c), sizeHintForColumn(c));
    }
  }
  return columnsWidth_ + 2 * frameWidth() + verticalScrollBar()->sizeHint().width() +
         (verticalHeader()->isVisible() ? verticalHeader()->width() : 0);
}

void HeadStatsView::changeEvent(QEvent* event) {
  QTableView::changeEvent(event);
  if (event->type() == QEvent::FontChange || event->type() == QEvent::StyleChange) {
    columnsWidth_ = -1;
    updateGeometry();
  }
}

QSize HeadStatsView::sizeHint() const { return QTableView::sizeHint().expandedTo(QSize(columnsWidth(), 0)); }

void HeadStatsView::showEvent(QShowEvent* event) {
  QTableView::showEvent(event);
  makeRoomLater();
}

void HeadStatsView::makeRoomLater() {
  // After the events in the queue: the tab switch's layouts first, and one move for a burst of changes.
  if (roomQueued_) return;
  roomQueued_ = true;
  QTimer::singleShot(0, this, [this] {
    roomQueued_ = false;
    makeRoom();
  });
}

void HeadStatsView::makeRoom() {
  if (!isVisible()) return;
  const int missing = columnsWidth() - width();
  if (missing <= 0) return;
  // The nearest horizontal splitter above, and which of its widgets holds this table.
  QWidget* pane = this;
  QSplitter* splitter = nullptr;
  for (QWidget* up = parentWidget(); up; pane = up, up = up->parentWidget()) {
    splitter = qobject_cast<QSplitter*>(up);
    if (splitter) break;
  }
  if (!splitter || splitter->orientation() != Qt::Horizontal) return;
  const int index = splitter->indexOf(pane);
  QList<int> sizes = splitter->sizes();
  if (index < 0 || index >= sizes.size()) return;
  // Take what is missing from the other panes, each down to its minimum width.
  int wanted = missing;
  for (int i = 0; i < sizes.size() && wanted > 0; ++i) {
    if (i == index || !splitter->widget(i)->isVisible()) continue;
    const QWidget* other = splitter->widget(i);
    const int floor = std::max(other->minimumWidth(), other->minimumSizeHint().width());
    const int take = std::clamp(sizes[i] - floor, 0, wanted);
    sizes[i] -= take;
    sizes[index] += take;
    wanted -= take;
  }
  if (wanted < missing) splitter->setSizes(sizes);
}

}  // namespace attn::ui
