// LongMapPanel: one head of a long run (attention kept on demand) as a LongMapView with, beside it, what a long map
// needs: the row strip (the selected query's attention over every key, on the text itself), the column strip (the
// attention every token receives, summed over the queries, streamed by the forward), a find box (text across token
// boundaries, views/long_map_find.h: the count of matches, next and previous, the match marked on the map), the
// head's sink mass, and the pooling and colour-scale choices. The row strip shows either the head's row or one row
// of the rollout over every layer (attn::analysis::rollout_row), computed on a background thread with its progress
// on the row's caption; a newer query cancels it, and the strip keeps the last row until the new one is there.
#pragma once

#include "attn/error.h"
#include "attn/on_demand_attention.h"
#include "render/colormap.h"
#include "views/long_map_find.h"

#include <QString>
#include <QStringList>
#include <QWidget>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

class QComboBox;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QToolButton;

namespace attn::ui {

class LongMapView;
class TokenStripView;

// One head as the panel shows it.
struct LongMapHead {
  std::shared_ptr<const attn::HeadMapReader> reader;
  std::shared_ptr<const std::vector<float>> received;  // per token: the attention it receives, over every query
  double sinkMass = 0;                                 // mean weight of a row on token 0
  QString title;                                       // "layer 3 · head 4"
};

class LongMapPanel : public QWidget {
  Q_OBJECT

 public:
  explicit LongMapPanel(QWidget* parent = nullptr);

  // The tokens of the run as their text (untruncated: the panel makes the labels, and finds in the text; shared by
  // every head: set once per run), then the head.
  void setTokens(const QStringList& texts);
  void setHead(LongMapHead head);
  void clear();
  void setColormap(render::Colormap map);

  // One row of the rollout: what the Rollout row mode computes, from any thread (`cancel` stops it, `progress(done,
  // of)` reports layers). `what` says which rollout ("30 layers, heads' mean, residual 0.5"); a new `what` or `run`
  // (the run's identity) drops the row kept.
  using RolloutRow = std::function<attn::Result<std::vector<float>>(qint64 query, const std::atomic<bool>* cancel,
                                                                    const std::function<void(int, int)>& progress)>;
  void setRollout(RolloutRow rollout, const QString& what, const void* run);
  enum class RowMode { Head, Rollout };
  void setRowMode(RowMode mode);
  RowMode rowMode() const { return rowMode_; }
  // A rollout row is being computed.
  bool isRolloutBusy() const { return rolloutJob_ != nullptr; }
  // The query whose rollout row the strip shows (-1: none).
  qint64 rolloutShown() const { return rolloutShown_; }

  // Selects query `query`: the row strip shows its attention, the map outlines its row.
  void selectQuery(qint64 query);
  std::optional<qint64> selectedQuery() const;
  // Find in the run's text (case-insensitive, across token boundaries: views/long_map_find.h). The next match (the
  // one after the match shown, or the first that starts after the selected query), wrapping, or the previous one:
  // its first token becomes the selected query, the map brings it into view (LongMapView::showTokens) and marks its
  // tokens' rows and columns. False when the text is not found.
  bool findNext(const QString& text);
  bool findPrevious(const QString& text);
  // The matches of the find box's text, and the one shown (-1: none yet).
  const std::vector<TextMatch>& matches() const { return matches_; }
  int currentMatch() const { return current_; }

  // Small: the panel shares a stack with the heatmap, which takes the size of its largest page.
  QSize sizeHint() const override { return {360, 360}; }
  QSize minimumSizeHint() const override { return {160, 160}; }

  LongMapView* map() const { return map_; }
  TokenStripView* rowStrip() const { return rowStrip_; }
  TokenStripView* columnStrip() const { return columnStrip_; }
  QLineEdit* findEdit() const { return findEdit_; }
  QLabel* findNote() const { return findNote_; }
  QToolButton* findNextButton() const { return findNextButton_; }
  QToolButton* findPreviousButton() const { return findPreviousButton_; }
  QLabel* sinkLabel() const { return sinkLabel_; }
  QLabel* rowLabel() const { return rowLabel_; }
  QComboBox* rowModeBox() const { return rowModeBox_; }

  ~LongMapPanel() override;

 signals:
  void rolloutArrived(qint64 query);

 private:
  // A rollout row on the pool's thread. What the thread hands back (its progress, then the row) goes through
  // `mutex`, and the thread posts only named calls (rolloutProgressed, rolloutFinished), whose arguments-free
  // events Qt allocates itself: a posted lambda is copied into a call object by inline code, which the TSan build
  // instruments, while Qt's event queue, which orders it, is not (a reported race, 2026-11-29).
  struct RolloutJob {
    std::atomic<bool> cancel{false};
    qint64 query = 0;
    QString caption;
    std::mutex mutex;
    int done = 0, of = 0;                                 // layers, under mutex
    std::optional<attn::Result<std::vector<float>>> row;  // the result, under mutex
  };
  Q_INVOKABLE void rolloutProgressed();
  Q_INVOKABLE void rolloutFinished();
  bool eventFilter(QObject* watched, QEvent* event) override;
  void buildFindBar(QHBoxLayout* bar);
  void updateMatches(const QString& text);
  bool find(const QString& text, bool forward);
  void showMatch();
  void showRow(qint64 query);
  void showHeadRow(qint64 query);
  void startRollout(qint64 query);
  void rolloutDone(const std::shared_ptr<RolloutJob>& job, qint64 query, attn::Result<std::vector<float>> row);
  void setRowValues(qint64 query, std::vector<float> row, const QString& caption);

  QStringList tokens_;  // the labels
  TokenText text_;      // what the tokens spell, for find
  QString matchesOf_;   // the text matches_ holds the matches of
  std::vector<TextMatch> matches_;
  int current_ = -1;
  LongMapHead head_;
  LongMapView* map_ = nullptr;
  TokenStripView* rowStrip_ = nullptr;
  TokenStripView* columnStrip_ = nullptr;
  QLineEdit* findEdit_ = nullptr;
  QToolButton* findNextButton_ = nullptr;
  QToolButton* findPreviousButton_ = nullptr;
  QComboBox* poolingBox_ = nullptr;
  QComboBox* scaleBox_ = nullptr;
  QLabel* sinkLabel_ = nullptr;
  QLabel* rowLabel_ = nullptr;
  QLabel* findNote_ = nullptr;
  QComboBox* rowModeBox_ = nullptr;
  RowMode rowMode_ = RowMode::Head;
  RolloutRow rollout_;
  QString rolloutWhat_;
  const void* rolloutRun_ = nullptr;
  std::shared_ptr<RolloutJob> rolloutJob_;  // the row being computed
  qint64 rolloutShown_ = -1;
  std::vector<float> rolloutRow_;  // the last row computed, of query rolloutShown_
};

}  // namespace attn::ui
