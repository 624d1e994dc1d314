// The Alignment tab: the bundled models of every kind (alignment_kinds.h: dates, headlines, reviews, entailment,
// speech), or any such model folder, run as you type. The side panel holds the model (the bundled models by name,
// Open Model…, About This Model), the input (examples), decoding (beam width, the hypotheses with their
// log-probabilities, best first) and display options; the main area, the views of the kind open.
// The tab names no kind of model: each page (alignment_page.h) has its views (alignment_views.h), which build their
// own widgets into the tab's (a speech model's spectrogram and audio, a review's page and readings) and show its
// runs; the kinds with steps share the step page (alignment_step_page.h: the figure with the step in view, the step
// slider, the heatmap with that row outlined, ConvS2S's layers).
// An AlignmentWorker on its own thread loads and runs (newest request wins); a failed load names the file
// and the reason and keeps the previous model; an empty input keeps the previous view with a message.
#pragma once

#include "attn/error.h"
#include "session/session.h"
#include "render/colormap.h"
#include "workbenches/common/busy_row.h"
#include "workbenches/common/side_panel.h"
#include "workbenches/alignment/alignment_step_page.h"
#include "workbenches/alignment/alignment_views.h"
#include "workbenches/alignment/alignment_worker.h"
#include "workbenches/common/worker_thread.h"
#include "workbenches/common/workbench.h"

#include <QString>
#include <QStringList>
#include <QTimer>
#include <QWidget>

#include <map>
#include <memory>
#include <vector>

class QCheckBox;
class QComboBox;
class QGroupBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QScrollArea;
class QSlider;
class QSpinBox;
class QStackedWidget;
class QTreeWidget;

namespace attn::ui {

class HeatmapView;
class TextFigureView;
class SpeechView;

class AlignmentWorkbench : public Workbench {
  Q_OBJECT

 public:
  enum class View { Heatmap, Shading };
  static constexpr int kMaxBeam = 16;

  explicit AlignmentWorkbench(QWidget* parent = nullptr);
  ~AlignmentWorkbench() override;  // stops the worker thread: quit + wait

  // ---- models (asynchronous: sourceLoaded or sourceFailed follows) ----
  // A bundled model's key ("date-bahdanau") or a model folder. `announce`: report "Opened …" on the status
  // bar when it has loaded (the window's first model leaves the status bar to its greeting).
  void openModel(const QString& nameOrFolder, bool announce = true);
  bool isLoading() const override { return loadRequested_ > loadSettled_; }
  const AlignmentSource* source() const { return source_.get(); }

  // ---- input ----
  void setText(const QString& text);  // the source, the review or the premise
  QString text() const;
  void setPairText(const QString& text);  // the second input: an entailment model's hypothesis
  QString pairText() const;
  void setBeam(int beam);
  int beam() const;

  // ---- steps and hypotheses (seq2seq) ----
  // The output step in view (0-based; "</s>" is the last step of a finished hypothesis).
  void setStep(int step);
  int step() const;
  int stepCount() const;
  void selectHypothesis(int index);
  int hypothesis() const { return hypothesis_; }

  // ---- the session file ----
  // The model (open or opening), the input, the beam, the hypothesis and step in view, the colour map.
  attn::ui::AlignmentSection state() const;
  // Sets the widgets, opens the model when it is not the one open, and runs; the hypothesis and the step
  // follow with the first result of that run.
  void applyState(const attn::ui::AlignmentSection& state);

  // ---- results ----
  const AlignmentOutcome* outcome() const { return outcome_.get(); }
  int workerRuns() const { return worker_->runs(); }
  QStringList warnings() const;
  // Why the input is not run (empty input), shown above the view; empty otherwise.
  QString inputMessage() const { return inputMessage_; }
  // The heatmap's map (seq2seq: the selected hypothesis' alignment; classifier: the matrix selected, heads x
  // words or the saliency row first).
  const attn::AttentionMap* currentMap() const;
  // What the shading view shows (the decoding step's figure or the review's).
  const render::TextFigure& currentFigure() const;

  // ---- exports ----
  // The heatmap (with the step and local-p windows drawn on it) or the text shading as PNG/SVG/PDF.
  attn::Result<void> exportView(const QString& path, View view) const;
  View currentView() const;  // the heatmap for date models, the shading for reviews
  // The current map as .csv or .npy (declared with the Workbench's below).

  bool takesColormap() const override { return true; }
  void setColormap(render::Colormap map) override;
  render::Colormap colormap() const { return colormap_; }
  void setSidePanelVisible(bool visible) override;
  bool isSidePanelVisible() const override;

  // ---- widgets (tests, screenshots) ----
  QComboBox* modelBox() const { return modelBox_; }
  QPlainTextEdit* textEdit() const { return textEdit_; }
  QPlainTextEdit* hypothesisEdit() const { return hypothesisEdit_; }
  QSpinBox* beamSpin() const { return beamSpin_; }
  QSlider* stepSlider() const { return steps_->slider(); }
  QTreeWidget* hypothesisList() const { return hypotheses_; }
  // The step page's (alignment_step_page.h).
  HeatmapView* heatmap() const { return steps_->heatmap(); }
  // ConvS2S: the decoder layers' heatmaps, shown beside heatmap() (empty, or hidden, for the other models).
  const std::vector<HeatmapView*>& layerHeatmaps() const { return steps_->layerHeatmaps(); }
  const std::vector<QLabel*>& layerTitles() const { return steps_->layerTitles(); }
  QLabel* meanTitle() const { return steps_->meanTitle(); }
  TextFigureView* decodingView() const { return steps_->figureView(); }
  // The kinds' widgets, by their names (the kinds' views own them: speech/speech_views.h, reviews/reviews_views.h).
  SpeechView* speechView() const;
  QPushButton* playButton() const;
  QLabel* playbackLabel() const;
  TextFigureView* reviewView() const;
  QCheckBox* readingsCheck() const;
  QComboBox* matrixBox() const;
  HeatmapView* reviewHeatmap() const;
  QWidget* matrixPanel() const;
  // The views of the kind open (the first page's before a model opens).
  AlignmentViews& views() const;
  QLabel* warningStrip() const { return warningStrip_; }
  QLabel* errorBanner() const { return errorBanner_; }
  QLabel* inputNote() const { return inputNote_; }
  QLabel* modelLabel() const { return modelLabel_; }
  QPushButton* aboutButton() const { return aboutButton_; }
  // The busy row over the views while a run takes longer than its delay (a speech model saying a long text with
  // espeak-ng, a long review): what runs, the time so far, Cancel and Esc (alignment_busy.cpp).
  BusyRow* busyRow() const { return busyRow_; }
  AlignmentWorker* worker() const { return worker_.get(); }
  // Drops the run out (its result is not shown when it comes); the previous view stays.
  void cancelRun();

  // ---- Workbench ----
  void saveTo(attn::ui::Session& session) const override;
  QStringList restoreFrom(const attn::ui::Session& session, const QString& origin) override;
  attn::Result<void> exportCurrentView(const QString& path) const override;
  attn::Result<void> exportMatrix(const QString& path) const override;

 signals:
  void sourceLoaded(const QString& path);
  void sourceFailed(const QString& message);
  void loadingChanged(bool loading);
  void stepChanged(int step);
  void openModelRequested();

 private:
  // The side panel and the main area (alignment_panel.cpp).
  void buildSidePanel(QWidget* panel);
  QGroupBox* buildInputGroup(QWidget* panel);
  void buildMainArea(QWidget* area);

  void onLoaded(std::shared_ptr<const AlignmentSource> source);
  void onLoadFailed(quint64 serial, const QString& message);
  void onFinished(std::shared_ptr<const AlignmentOutcome> outcome);
  void applyPending() override;
  void post();
  void updateBusyRow();  // the row goes once nothing is running (alignment_busy.cpp)
  void fillModelBox();
  // A click on a heatmap row: that step, and the keys that move it (alignment_panel.cpp).
  void goToClickedStep(int step);
  void updateForSource();
  void updateHypotheses();
  void updateStepViews();
  // The page of the model open (the first page before one opens), and what its views show.
  const AlignmentPage& page() const;
  AlignmentViewState viewState() const;
  void updateWarnings();
  void updateInputNote();
  void showError(const QString& message);
  void showAbout();
  int hypothesisSteps() const;

  WorkerThread thread_;
  std::unique_ptr<AlignmentWorker> worker_;

  std::shared_ptr<const AlignmentSource> source_;
  quint64 loadRequested_ = 0;
  quint64 loadSettled_ = 0;
  QString loadingName_;
  bool announceLoad_ = true;

  quint64 stale_ = 0;  // outcomes up to this generation are for an input that is gone (emptied) or were cancelled
  std::shared_ptr<const AlignmentOutcome> pending_;
  std::shared_ptr<const AlignmentOutcome> outcome_;
  int hypothesis_ = 0;
  int step_ = 0;
  QString requestedModel_;  // the model open or opening: a bundled key or a folder
  // Each kind's last input (the text, an entailment model's hypothesis): a model of another kind does not read it,
  // and a model of that kind gets it back.
  struct KindText {
    QString text, pair;
  };
  std::map<QString, KindText> kindTexts_;  // by the page's name
  bool textForLoad_ = false;               // applyState's input is for the model it opens, not the open model's kind
  KindText textAtOpen_;  // the input when the newest load was asked for: an edit since is for that model
  void switchKindText(const AlignmentPage& was, const AlignmentPage& now, bool hadSource);
  int pendingHypothesis_ = -1;  // applyState's, applied with the first result after it
  int pendingStep_ = -1;
  QString inputMessage_;
  render::Colormap colormap_ = render::Colormap::Viridis;
  // Every page's views, in the pages' order (alignment_views.h).
  std::vector<std::unique_ptr<AlignmentViews>> kinds_;

  // Side panel.
  QScrollArea* sideScroll_ = nullptr;
  ModelGroup modelGroup_;
  QComboBox* modelBox_ = nullptr;
  QLabel* modelLabel_ = nullptr;
  QPushButton* aboutButton_ = nullptr;
  QPlainTextEdit* textEdit_ = nullptr;
  QLabel* textLabel_ = nullptr;
  QLabel* hypothesisLabel_ = nullptr;
  QPlainTextEdit* hypothesisEdit_ = nullptr;
  QComboBox* exampleBox_ = nullptr;
  QLabel* inputNote_ = nullptr;
  QGroupBox* decodingGroup_ = nullptr;
  QSpinBox* beamSpin_ = nullptr;
  QTreeWidget* hypotheses_ = nullptr;
  QComboBox* colormapBox_ = nullptr;

  // Main area.
  QLabel* errorBanner_ = nullptr;
  QLabel* warningStrip_ = nullptr;
  QStackedWidget* pages_ = nullptr;
  AlignmentStepPage* steps_ = nullptr;  // the step page: a figure, the step slider, the heatmaps
  QLabel* placeholder_ = nullptr;
  BusyRow* busyRow_ = nullptr;
};

}  // namespace attn::ui
