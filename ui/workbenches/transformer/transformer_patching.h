// The Transformer tab's Patching view (issue 43): activation patching from the text in the tab's input box (the clean
// run) into a corrupted input of the same token count, one sweep at a time (every head, every layer x position, every
// head x position), measured by a metric of the model's output (logit difference of an answer and a wrong token, the
// answer's log-probability or logit, or the KL divergence from the clean run). The sweep runs on its own thread
// (attn::models::Patching::sweep) with a progress bar and Cancel (stopped within one cell); the heatmap (RdBu,
// centred on 0, the recovery on its colour bar) fills in as cells arrive, at most once a frame. The corrupted input
// is B, the Compare box's (TransformerWorkbench::compareText): the panel's line shows it and types into it. A click
// on a cell opens that layer and head in the tab's views, its map of A and of B side by side in the matrix.
#pragma once

#include "attn/models/intervention.h"
#include "session/causal_section.h"

#include <QElapsedTimer>
#include <QWidget>

#include <atomic>
#include <memory>
#include <optional>

class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QThread;

namespace attn::ui {

struct TransformerSection;
class FigureMapView;
class TransformerWorkbench;

class PatchingPanel : public QWidget {
  Q_OBJECT

 public:
  explicit PatchingPanel(TransformerWorkbench* workbench, QWidget* parent = nullptr);
  ~PatchingPanel() override;  // cancels a running sweep and waits for its thread

  // The corrupted input: the Compare box's text (setting it sets the box; a run follows when Compare is on).
  void setCorruptText(const QString& text);
  QString corruptText() const;
  // The panel's line shows the Compare box's text again (after the box was set with its signals blocked).
  void syncCorruptText();
  // The Compare box's text a session restores: its compare_text, or the corrupted input of a session written when
  // this view had a line of its own. When both are set and differ, the one in use wins (the Compare box's with
  // Compare on, else the sweep's) and the note names the other.
  QString restoredCorrupt(const attn::ui::TransformerSection& state);
  // What a click on cell (row, column) of the sweep does: that layer and head (a layers x positions cell: that layer,
  // the head in view) selected, the matrix showing its map of A and of B side by side, Compare on.
  void openCell(int row, int column);
  void setAnswer(const QString& text);  // one token of the model's tokenizer (or a ViT class)
  void setWrong(const QString& text);
  QString answer() const;
  QString wrong() const;
  void setMetric(attn::models::Metric metric);
  attn::models::Metric metric() const;
  void setSweep(attn::models::Sweep sweep);
  attn::models::Sweep sweep() const;

  // Checks the settings (the panel's note says what is wrong) and starts the sweep; false when refused.
  bool run();
  void cancel();  // the sweep stops after the cell in progress; the cells done stay drawn
  bool isRunning() const { return thread_ != nullptr; }
  // The sweep in view (partial while running, or after Cancel); null before the first.
  const attn::models::SweepResult* result() const { return result_ ? &*result_ : nullptr; }
  double cleanMetric() const { return cleanMetric_; }
  double corruptMetric() const { return corruptMetric_; }
  const std::vector<std::string>& tokens() const { return tokens_; }

  // PNG, SVG or PDF: the heatmap at `size` (empty: as on screen); CSV: as attnscope-cli patch writes it.
  attn::Result<void> exportTo(const QString& path, QSize size = {}) const;

  // The settings and the sweep in view, into / from the session's section.
  void saveTo(attn::ui::CausalSection& section) const;
  // `source`: the model the session's sweep was made with (its key, as TransformerWorkbench::sourceKey).
  void restoreFrom(const attn::ui::CausalSection& section, const QString& source);

  FigureMapView* view() const { return view_; }
  QProgressBar* progressBar() const { return progress_; }
  QPushButton* runButton() const { return runButton_; }
  QPushButton* cancelButton() const { return cancelButton_; }
  QLabel* note() const { return note_; }

 signals:
  void partialShown(int done);   // the heatmap was redrawn with `done` cells
  void finished(bool complete);  // the sweep ended (complete, or cancelled/failed)

 private:
  void buildControls();
  void onPartial(quint64 serial, const attn::models::SweepResult& result);
  void onPrepared(quint64 serial, std::vector<std::string> tokens, double clean, double corrupt, int cells);
  void onEnded(quint64 serial, std::optional<attn::models::SweepResult> result, const QString& error);
  void redraw();
  void updateControls();
  QString cellText(int row, int column) const;
  std::optional<int> tokenIndex(const QString& text, const QString& what, QString& why) const;
  void useFromPredictions(bool answer);

  TransformerWorkbench* workbench_;
  QLineEdit* corruptEdit_ = nullptr;
  QComboBox* metricBox_ = nullptr;
  QLineEdit* answerEdit_ = nullptr;
  QLineEdit* wrongEdit_ = nullptr;
  QComboBox* sweepBox_ = nullptr;
  QPushButton* runButton_ = nullptr;
  QPushButton* cancelButton_ = nullptr;
  QPushButton* exportButton_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* note_ = nullptr;
  FigureMapView* view_ = nullptr;

  QThread* thread_ = nullptr;
  std::shared_ptr<std::atomic<bool>> cancel_;
  quint64 serial_ = 0;
  std::optional<attn::models::SweepResult> result_;
  std::vector<std::string> tokens_;
  double cleanMetric_ = 0, corruptMetric_ = 0;
  int cells_ = 0;
  QString title_;
  QString resultSource_;  // the model the sweep in view was made with: another model's opening clears it
};

}  // namespace attn::ui
