// HeadStatsView: the head-statistics table (a HeadStatsModel, usually behind a sort proxy). Every column
// is as wide as its header and its cells ask (the model's long headers are in two lines), and the last one
// also takes any room left. Shown, or given new statistics while shown, the table makes room for all its
// columns in the splitter it sits in, taking the width from its neighbours down to their minimum sizes; it
// does not raise the window's minimum width (a window too narrow for the columns scrolls them).
#pragma once

#include <QTableView>

namespace attn::ui {

class HeadStatsView : public QTableView {
  Q_OBJECT

 public:
  explicit HeadStatsView(QWidget* parent = nullptr);

  void setModel(QAbstractItemModel* model) override;
  // The width that shows every column side by side: max(header, cells) each, the frame and room for the
  // vertical scroll bar (it comes and goes with the window's height). Kept until the model, the font or the style
  // changes: measuring every cell took 100 to 260 ms for SmolLM2's 270 heads, and a layout anywhere in the window
  // (a note's new text in another tab) asked for it again (bench_patching_frames' slowest events).
  int columnsWidth() const;
  QSize sizeHint() const override;

 protected:
  void showEvent(QShowEvent* event) override;
  void changeEvent(QEvent* event) override;

 private:
  void makeRoom();
  void makeRoomLater();

  bool roomQueued_ = false;
  mutable int columnsWidth_ = -1;  // the columns' own widths summed; -1: to measure
};

}  // namespace attn::ui
