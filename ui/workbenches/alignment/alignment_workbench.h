// The Alignment tab: the bundled seq2seq date models (Bahdanau; Luong dot, general, concat; Luong local-p)
// and review classifiers (attention pooling, hierarchical), or any such model folder, run as you type.
// The side panel holds the model (the bundled models by name, Open Model…, About This Model), the input
// (examples), decoding (beam width, the hypotheses with their log-probabilities, best first) and display
// options. The main area shows, for a date model, the output with the step in view outlined, the source
// characters shaded by that step's attention, a slider over the output steps (Left/Right) and the
// alignment heatmap with that row outlined and, for local-p, each step's p_t and window (ConvS2S: one heatmap
// per decoder layer side by side, then their mean); for a review, the
// predicted label and probabilities, the text shaded per pooling head and the sentence weights; for an
// entailment model, a second input (the hypothesis), the label with its probabilities, the premise shaded by
// the attention of the hypothesis word in view, a slider over the hypothesis words and the hypothesis x premise
// heatmap.
// An AlignmentWorker on its own thread loads and runs (newest request wins); a failed load names the file
// and the reason and keeps the previous model; an empty input keeps the previous view with a message.
#pragma once

#include "attn/error.h"
#include "session/session.h"
#include "render/alignment_overlay.h"
#include "render/colormap.h"
#include "workbenches/common/busy_row.h"
#include "workbenches/common/side_panel.h"
#include "render/text_figure.h"
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
class QDoubleSpinBox;
class QGroupBox;
class QGridLayout;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QScrollArea;
class QSlider;
class QSpinBox;
class QSplitter;
class QStackedWidget;
class QTreeWidget;

namespace attn::ui {

class HeatmapView;
class TextFigureView;
class SpeechView;
class AudioPlayback;

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
  // A speech model's weights: sharpened, smoothed, top k, windowed (speech/speech_views.cpp; hidden for the others).
  void setShaping(const attn::models::AttentionShaping& shaping);
  attn::models::AttentionShaping shaping() const;

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
  // The current map as .csv or .npy.
  attn::Result<void> exportMatrix(const QString& path) const override;

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
  QSlider* stepSlider() const { return stepSlider_; }
  QTreeWidget* hypothesisList() const { return hypotheses_; }
  HeatmapView* heatmap() const { return heatmap_; }
  // ConvS2S: the decoder layers' heatmaps, shown beside heatmap() (empty, or hidden, for the other models).
  const std::vector<HeatmapView*>& layerHeatmaps() const { return layerViews_; }
  const std::vector<QLabel*>& layerTitles() const { return layerTitles_; }
  QLabel* meanTitle() const { return meanTitle_; }
  TextFigureView* decodingView() const { return decodingView_; }
  // A speech model's spectrogram with the step's attention (hidden for the other models).
  SpeechView* speechView() const { return speechView_; }
  // Its audio's playback (Qt Multimedia when built with it): the button, the time or the reason it cannot play.
  QPushButton* playButton() const { return playButton_; }
  QLabel* playbackLabel() const { return playbackLabel_; }
  // Where playback is, in seconds: the line over the spectrogram, and the step that attends there (the player's
  // positionChanged; tests call it directly, having no audio output).
  void followPlayback(double seconds);
  // A speech model reads this audio file (WAV, FLAC, Ogg, AIFF) instead of the typed words until they are edited.
  void openAudio(const QString& path);
  QString audioPath() const { return audioPath_; }
  TextFigureView* reviewView() const { return reviewView_; }
  QCheckBox* readingsCheck() const { return readingsCheck_; }
  QComboBox* matrixBox() const { return matrixBox_; }
  HeatmapView* reviewHeatmap() const { return reviewHeatmap_; }
  QWidget* matrixPanel() const { return matrixPanel_; }
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
  void buildReviewPage();

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
  void updateHeatmap();
  void updateReview();
  void updateReviewMatrix();
  // ConvS2S's decoder layers side by side (alignment_layers.cpp).
  void updateLayerHeatmaps();
  // A speech model's spectrogram view (hidden until one is open), and its update for the hypothesis and step in view
  // (speech/speech_views.cpp).
  QWidget* makeSpeechView();
  QPushButton* makeAudioButton(QWidget* parent);
  QGroupBox* makeShapingGroup(QWidget* parent);
  void updateSpeechView();
  QString playbackTime(double seconds) const;  // "0.84 / 1.95 s"; negative: "1.95 s of audio"
  void stopPlayback();
  void updateLayerOverlays(const render::AlignmentOverlay& overlay);
  QWidget* makeHeatmapPanel(HeatmapView* view, QLabel*& title, const QString& name);
  void placeHeatmapPanels(int layers);
  // The entailment model's parts (entailment/entailment_views.cpp).
  void updateEntailmentHeatmap(const attn::AttentionMap& map);
  void updateEntailmentStep();
  QString entailmentSummary() const;
  QString emptyInputMessage() const;
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
  std::map<QString, KindText> kindTexts_;  // by the page's name()
  bool textForLoad_ = false;               // applyState's input is for the model it opens, not the open model's kind
  KindText textAtOpen_;  // the input when the newest load was asked for: an edit since is for that model
  void switchKindText(const AlignmentPage& was, const AlignmentPage& now, bool hadSource);
  int pendingHypothesis_ = -1;  // applyState's, applied with the first result after it
  int pendingStep_ = -1;
  QString inputMessage_;
  render::Colormap colormap_ = render::Colormap::Viridis;
  render::TextFigure decodingFigure_;
  render::TextFigure reviewFigure_;

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
  QCheckBox* readingsCheck_ = nullptr;

  // Main area.
  QLabel* errorBanner_ = nullptr;
  QLabel* warningStrip_ = nullptr;
  QStackedWidget* pages_ = nullptr;
  QWidget* decodingPage_ = nullptr;
  TextFigureView* decodingView_ = nullptr;
  QGroupBox* shapingGroup_ = nullptr;  // a speech model's sharpening, smoothing, top k and window
  QDoubleSpinBox* sharpenSpin_ = nullptr;
  QCheckBox* smoothCheck_ = nullptr;
  QSpinBox* topKSpin_ = nullptr;
  QSpinBox* windowSpin_ = nullptr;
  QWidget* speechPanel_ = nullptr;  // the play row and the spectrogram (hidden for the models of text)
  SpeechView* speechView_ = nullptr;
  QPushButton* playButton_ = nullptr;
  QLabel* playbackLabel_ = nullptr;
  AudioPlayback* playback_ = nullptr;
  QPushButton* audioButton_ = nullptr;  // a speech model's "Open Audio File..." (hidden for the others)
  QString audioPath_;                   // the audio file a speech model reads; empty: the typed words, said
  QLabel* stepTitle_ = nullptr;
  QSlider* stepSlider_ = nullptr;
  QLabel* stepLabel_ = nullptr;
  QLabel* heatmapTitle_ = nullptr;
  HeatmapView* heatmap_ = nullptr;
  // ConvS2S: one heatmap per decoder layer, then heatmap_ (their mean), in a grid read row by row; each panel is
  // a title over its heatmap. Made as a model needs them; hidden for the other models.
  QGridLayout* heatmapGrid_ = nullptr;
  QWidget* heatmapPanel_ = nullptr;  // heatmap_ under meanTitle_ (shown for ConvS2S only)
  QLabel* meanTitle_ = nullptr;
  std::vector<QWidget*> layerPanels_;
  std::vector<QLabel*> layerTitles_;
  std::vector<HeatmapView*> layerViews_;
  QScrollArea* reviewScroll_ = nullptr;
  TextFigureView* reviewView_ = nullptr;
  QSplitter* reviewPage_ = nullptr;  // the figure over the matrix panel
  QWidget* matrixPanel_ = nullptr;
  QComboBox* matrixBox_ = nullptr;
  HeatmapView* reviewHeatmap_ = nullptr;
  QLabel* placeholder_ = nullptr;
  BusyRow* busyRow_ = nullptr;
};

}  // namespace attn::ui
