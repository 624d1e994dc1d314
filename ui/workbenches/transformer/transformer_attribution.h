// The Transformer tab's Attribution view (issue 44): which input tokens a prediction depends on, by one of
// attn::models::attribute's methods (gradient x input, integrated gradients, attention x gradient, AttnLRP, rollout,
// attention flow, raw attention, random), for a target token at the explained position (a causal model's last token,
// BERT's [MASK], a generated step the scrubber picks) as its logit or log-probability. The input text is shaded by the
// scores (RdBu centred on 0, the scale said), the attention of the head in view from the same position beneath it, a
// per-layer heatmap for the methods that give one, and the deletion curve of this input (the top-k tokens removed, the
// target's probability re-measured). It computes on a thread of its own (transformer_attribution_job.h), debounced,
// while the view is shown, again when the input, the target or a setting changes; a newer request cancels an older.
#pragma once

#include "attn/models/attribution.h"
#include "session/causal_section.h"
#include "workbenches/transformer/transformer_attribution_job.h"

#include <QWidget>

#include <atomic>
#include <memory>
#include <optional>

class QComboBox;
class QCPTextElement;
class QCustomPlot;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QThread;
class QTimer;

namespace attn::ui {

class FigureMapView;
class TokenStripView;
class TransformerWorkbench;

class AttributionPanel : public QWidget {
  Q_OBJECT

 public:
  explicit AttributionPanel(TransformerWorkbench* workbench, QWidget* parent = nullptr);
  ~AttributionPanel() override;  // cancels a running attribution and waits for its thread

  void setMethod(attn::models::AttributionMethod method);
  attn::models::AttributionMethod method() const;
  void setKind(attn::models::AttributionTarget::Kind kind);  // Logit or LogProb
  attn::models::AttributionTarget::Kind kind() const;
  void setSteps(int steps);
  int steps() const;
  void setBaseline(attn::models::AttributeOptions::Baseline baseline);
  attn::models::AttributeOptions::Baseline baseline() const;
  // The explained token by its text (a candidate of the prediction list, or any one token); empty: the top prediction
  // (a generated step: the generated token).
  void setTargetToken(const QString& text);
  QString targetToken() const;

  // Starts now (cancelling one running); false, with the note saying why, when there is nothing to explain.
  bool run();
  void cancel();
  bool isRunning() const { return thread_ != nullptr; }
  const AttributionResult* result() const { return result_ ? &*result_ : nullptr; }
  // The thread the last computation ran on (tests: never the GUI thread).
  Qt::HANDLE lastWorkerThread() const { return workerThread_->load(); }

  // PNG, SVG or PDF: the panel's figures as on screen; CSV: index, token, score (the score last).
  attn::Result<void> exportTo(const QString& path) const;
  void saveTo(attn::ui::AttributionState& state) const;
  void restoreFrom(const attn::ui::AttributionState& state);

  TokenStripView* scoresView() const { return scores_; }
  TokenStripView* attentionView() const { return attention_; }
  FigureMapView* layerView() const { return layers_; }
  QCustomPlot* deletionPlot() const { return deletion_; }
  QComboBox* tokenBox() const { return tokenBox_; }
  QLabel* note() const { return note_; }
  QLabel* valueLabel() const { return value_; }

 signals:
  void finished(bool ok);  // a computation ended (false: refused, failed or cancelled)

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void buildControls();
  QWidget* buildFigures();
  void schedule();     // a re-run after the debounce, if the view is shown
  void fillTargets();  // the token box from the run in view
  std::optional<AttributionJob> makeJob(QString& why) const;
  void onEnded(quint64 serial, std::optional<AttributionResult> result, const QString& error);
  void showResult();
  void showAttention();  // the strip of the head in view
  void showDeletion();
  void updateControls();

  TransformerWorkbench* workbench_;
  QComboBox* methodBox_ = nullptr;
  QComboBox* tokenBox_ = nullptr;
  QComboBox* kindBox_ = nullptr;
  QSpinBox* stepsSpin_ = nullptr;
  QComboBox* baselineBox_ = nullptr;
  QPushButton* cancelButton_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* note_ = nullptr;
  QLabel* value_ = nullptr;
  QLabel* scoresTitle_ = nullptr;
  QLabel* attentionTitle_ = nullptr;
  TokenStripView* scores_ = nullptr;
  TokenStripView* attention_ = nullptr;
  FigureMapView* layers_ = nullptr;
  QCustomPlot* deletion_ = nullptr;
  QCPTextElement* deletionTitle_ = nullptr;
  QWidget* figures_ = nullptr;  // what Export View writes
  QTimer* debounce_ = nullptr;

  QThread* thread_ = nullptr;
  std::shared_ptr<std::atomic<bool>> cancel_;
  std::shared_ptr<std::atomic<Qt::HANDLE>> workerThread_ = std::make_shared<std::atomic<Qt::HANDLE>>(nullptr);
  quint64 serial_ = 0;
  bool again_ = false;   // a request came while a computation ran: run once it ends
  bool stale_ = true;    // the input or a setting changed while the view was hidden
  std::string lastKey_;  // the job in view or running (jobKey): the same request is not computed twice
  QString wantedToken_;  // the token asked for by text, kept across runs of new inputs
  std::optional<AttributionResult> result_;
  QString resultToken_;   // "“x”"
  QString resultTarget_;  // "“x” at position 7": what the result explains
};

}  // namespace attn::ui
