// The Transformer tab's Head detectors view (issue 43): attn::analysis::detect_heads on the open text model, on its
// own thread with a progress bar and Cancel, drawn as one layers x heads map per detector (previous token, duplicate
// token, induction, sink; viridis on 0..1, as attnscope-cli heads draws them), the induction offset written in its
// cells ("+2") and every score and offset in a cell's tool tip. A click on a cell selects that head in the tab.
#pragma once

#include "attn/analysis/head_detectors.h"
#include "session/causal_section.h"

#include <QWidget>

#include <array>
#include <atomic>
#include <memory>
#include <optional>

class QLabel;
class QProgressBar;
class QPushButton;
class QThread;

namespace attn::ui {

class FigureMapView;
class TransformerWorkbench;

class DetectorsPanel : public QWidget {
  Q_OBJECT

 public:
  explicit DetectorsPanel(TransformerWorkbench* workbench, QWidget* parent = nullptr);
  ~DetectorsPanel() override;  // cancels a running detection and waits for its thread

  // Starts the detection (default options: 4 random sequences of 20 tokens, seed 0); false when refused (the
  // note says why).
  bool detect();
  void cancel();
  bool isRunning() const { return thread_ != nullptr; }
  const attn::analysis::HeadDetection* result() const { return result_ ? &*result_ : nullptr; }
  // Shows a detection (a session's); null clears the maps.
  void setResult(std::optional<attn::analysis::HeadDetection> result);

  // PNG, SVG or PDF: the four maps side by side at `size` (empty: as on screen); CSV: as attnscope-cli heads.
  attn::Result<void> exportTo(const QString& path, QSize size = {}) const;

  // The detection in view, into / from the session's section.
  void saveTo(attn::ui::CausalSection& section) const;
  // `source`: the model the session's detection was made with (its key, as TransformerWorkbench::sourceKey).
  void restoreFrom(const attn::ui::CausalSection& section, const QString& source);

  // The map of one detector (in the order of attn::analysis::head_detectors()).
  FigureMapView* view(attn::analysis::HeadDetector detector) const { return views_[std::size_t(detector)]; }
  QProgressBar* progressBar() const { return progress_; }
  QPushButton* detectButton() const { return detectButton_; }
  QPushButton* cancelButton() const { return cancelButton_; }
  QLabel* note() const { return note_; }
  QString cellText(int layer, int head) const;

 signals:
  void finished(bool complete);

 private:
  void onEnded(quint64 serial, std::optional<attn::analysis::HeadDetection> result, const QString& error);
  void redraw();
  void updateControls();

  TransformerWorkbench* workbench_;
  QPushButton* detectButton_ = nullptr;
  QPushButton* cancelButton_ = nullptr;
  QPushButton* exportButton_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* note_ = nullptr;
  std::array<FigureMapView*, 4> views_{};

  QThread* thread_ = nullptr;
  std::shared_ptr<std::atomic<bool>> cancel_;
  quint64 serial_ = 0;
  std::optional<attn::analysis::HeadDetection> result_;
  QString resultSource_;  // the model the detection in view was made with: another model's opening clears it
};

}  // namespace attn::ui
