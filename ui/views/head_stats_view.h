// HeadStatsView: the head-statistics table (a HeadStatsModel, usually behind a sort proxy). Every column
// is as wide as its header and its cells ask (the model's long headers are in two lines), the last one also
// takes any room left, and while the table is shown its minimum width holds all the columns, so the
// splitter it sits in never cuts the last ones off behind a scroll bar.
#pragma once

#include <QTableView>

namespace attn::ui {

class HeadStatsView : public QTableView {
  Q_OBJECT

 public:
  explicit HeadStatsView(QWidget* parent = nullptr);

  void setModel(QAbstractItemModel* model) override;
  // The width every column needs side by side: max(header, cells) each.
  int columnsWidth() const;

  // While the table is shown: wide enough for every column. Hidden (another page of its tab widget in view),
  // it asks for no more than a plain table, so it does not narrow the views beside the tabs.
  QSize minimumSizeHint() const override;
  QSize sizeHint() const override;

 protected:
  void showEvent(QShowEvent* event) override;
  void hideEvent(QHideEvent* event) override;
};

}  // namespace attn::ui
