// The Transformer tab: a model folder (BERT, DistilBERT, GPT-2, ViT from Hugging Face safetensors) or an
// attention dump of any model, run as you type. The side panel holds the model, the input (text, a
// sentence pair for BERT, a photo for ViT), the predictions and the matrix and display options; the main
// area a warning strip and, linked by selection (layer, head, token) and hover:
//   the head view (TokenLinesView, BertViz-style), the model view (HeadGridView, every layer x head),
//   the head statistics table (HeadStatsModel behind a sort proxy), the ViT overlay (ImageOverlayView),
//   and next to them the matrix (HeatmapView: one head, the layer's head mean, or the rollout).
// A TransformerWorker on its own thread loads (progress, Cancel), decodes photos and runs (newest wins,
// every edit posted at once, the newest pending request replacing older ones); a failed load names the file and
// the reason and keeps the previous model.
#pragma once

#include "attn/analysis/attention_analysis.h"
#include "attn/error.h"
#include "session/session.h"
#include "render/colormap.h"
#include "workbenches/transformer/transformer_worker.h"
#include "workbenches/common/busy_row.h"
#include "workbenches/common/worker_thread.h"
#include "workbenches/common/workbench.h"

#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>
#include <QSize>
#include <QTimer>
#include <QWidget>

#include <memory>
#include <optional>

class QTemporaryDir;

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QGroupBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QScrollArea;
class QSlider;
class QSpinBox;
class QSortFilterProxyModel;
class QSplitter;
class QTabWidget;
class QStackedWidget;
class QTableView;

namespace attn::ui {

class HeadGridView;
class HeadStatsModel;
class LogitLensView;
class LongMapPanel;
class HeatmapView;
class ImageOverlayView;
class TokenLinesView;
class PatchingPanel;
class AttributionPanel;
class DetectorsPanel;

class TransformerWorkbench : public Workbench {
  Q_OBJECT

 public:
  enum class View { Head, Model, Statistics, Overlay, Lens, Matrix };
  enum class MatrixMode { Head, LayerMean, Rollout };
  enum class OverlaySource { Rollout, Head };

  explicit TransformerWorkbench(QWidget* parent = nullptr);
  ~TransformerWorkbench() override;  // stops the worker thread: quit + wait

  // ---- sources (asynchronous: sourceLoaded or sourceFailed follows) ----
  // A model folder (or a file in one) or a *.attn.safetensors dump, told apart by name.
  void openPath(const QString& path);
  // The bundled demo transformer (resources/models/induction-gpt2, embedded in the binary): its files are
  // written once into a private temporary folder, which then opens like any model folder; the text box,
  // unless it holds typed text, gets the demo's example (a random string typed twice). False when this
  // build does not embed it.
  // `key`: demoModelKey() (induction-gpt2) or storyModelKey() (stories260k: llama2.c's trained Llama, which
  // generates), with the story prompt as its example.
  bool openDemo(const QString& key = demoModelKey());
  static QString demoModelKey() { return QStringLiteral("induction-gpt2"); }
  static QString storyModelKey() { return QStringLiteral("stories260k"); }
  static bool isDemoKey(const QString& key) { return key == demoModelKey() || key == storyModelKey(); }
  static QString demoText() { return QStringLiteral("qwhdkeiaplzmxncbvrtsuqwhdkeiaplzmxncbvrtsu"); }
  static QString storyText() { return QStringLiteral("Once upon a time, there was a little girl named Lily. She"); }
  // The demo key of the open source, or its path.
  QString sourceKey() const;
  static bool isDumpFileName(const QString& path);
  // True for what openPath takes: a folder, or a .attn.safetensors file.
  static bool isModelOrDumpPath(const QString& path);
  void cancelLoad();
  bool isLoading() const override { return loadRequested_ > loadSettled_; }
  quint64 loadsSettled() const { return loadSettled_; }
  const TransformerSource* source() const { return source_.get(); }

  // ---- input ----
  void setText(const QString& text);
  QString text() const;
  void setPair(const QString& pair);
  // ViT photos: a bundled sample by key (sampleImages()) or a file.
  bool openSample(const QString& key);
  void openImage(const QString& path);
  const VisionInput* image() const { return image_.get(); }

  // ---- generation (decoders) ----
  // Continues the text with the settings of the Generate group; progress shows tokens and tokens per second, the
  // outcome every generated token's maps. Stop keeps what was generated.
  void generate();
  void stopGenerating();
  bool isGenerating() const { return generating_ != 0; }
  void setGeneration(const attn::models::GenerateOptions& options);  // the group's settings
  attn::models::GenerateOptions generation() const;
  // The scrubber: step s (0-based) of the generated tokens becomes the pinned query token of the views.
  void scrubTo(int step);

  // ---- long runs ----
  // A request unanswered for longer than the busy delay shows the busy row over the views: a progress bar (layers
  // done), tokens per second and the time left, and Cancel; the empty panes say "Running...".
  void cancelRun();  // the run in progress (a generation: Stop) and any waiting; the previous view stays
  bool isBusyShown() const;
  void setBusyDelay(int ms) { busyRow_->setDelay(ms); }  // 400 ms; tests set 0
  QProgressBar* runProgressBar() const { return busyRow_->bar(); }
  QLabel* runProgressLabel() const { return busyRow_->label(); }
  QPushButton* cancelRunButton() const { return busyRow_->cancelButton(); }

  // ---- selection and views ----
  void selectHead(int layer, int head);
  // selectHead, and the head view shows that head alone (a click in the model view or the table).
  void openHead(int layer, int head);
  int layer() const { return layer_; }
  int head() const { return head_; }
  void setMatrixMode(MatrixMode mode);
  MatrixMode matrixMode() const;
  void setRolloutOptions(const attn::analysis::RolloutOptions& options);
  attn::analysis::RolloutOptions rolloutOptions() const;
  void setOverlaySource(OverlaySource source);
  void setOverlayAlpha(double alpha);
  void setView(View view);
  View currentView() const;
  bool takesColormap() const override { return true; }
  void setColormap(render::Colormap map) override;
  render::Colormap colormap() const { return colormap_; }
  void setSidePanelVisible(bool visible) override;
  bool isSidePanelVisible() const override;

  // ---- the session file ----
  // The model or dump (open or opening; the demo by its key), the input, the photo, the selection, the view
  // and every matrix and display option.
  attn::ui::TransformerSection state() const;
  // Sets the widgets, opens the source and the photo when they differ from what is open, and runs; the
  // layer and head follow with the first result of that run. An empty source leaves the open one open.
  void applyState(const attn::ui::TransformerSection& state);

  // ---- results ----
  quint64 previewed() const { return previewed_; }  // newest run whose layer in view was drawn early
  const TransformerOutcome* outcome() const { return outcome_.get(); }
  int workerRuns() const { return worker_->runs(); }
  int modelRuns() const { return worker_->modelRuns(); }
  // The map the matrix view shows now (null before a run).
  const attn::AttentionMap* currentMatrix() const { return matrixMap_.get(); }
  QStringList warnings() const;

  // ---- exports ----
  // A view as PNG/SVG/PDF under a title line (model, text, layer, head): the matrix drawn at the export size, the head
  // and model views as their standalone pictures that wide; the statistics and the lens as on screen.
  attn::Result<void> exportView(const QString& path, View view) const;
  // The Display group's export size; an empty size: the view's size on screen.
  void setExportSize(QSize size);
  QSize exportSize() const;
  // "induction-gpt2 · “qwhdkeia…” · layer 1 · head 2": what a picture exported from this tab shows.
  QString exportTitle(View view) const;
  // The current matrix as .csv or .npy.
  attn::Result<void> exportMatrix(const QString& path) const override;
  // Every head of the current layer: layer<L>-head<H>.png and .csv into `folder`. Returns the files.
  attn::Result<QStringList> exportLayer(const QString& folder) const;

  // ---- widgets (tests, screenshots) ----
  QPlainTextEdit* textEdit() const { return textEdit_; }
  QLineEdit* pairEdit() const { return pairEdit_; }
  TokenLinesView* tokenLines() const { return tokenLines_; }
  HeadGridView* headGrid() const { return headGrid_; }
  HeatmapView* heatmap() const { return heatmap_; }
  // The matrix of a run kept on demand (a long input): one head, zoomable, in place of the heatmap.
  LongMapPanel* longMap() const { return longMap_; }
  // The run in view keeps its attention on demand (no maps: see RunOptions::Keep::Auto).
  bool isOnDemand() const;
  // Above this many bytes of maps a decoder's run keeps its attention on demand (RunOptions::on_demand_above; tests
  // set it low to get long-input behaviour from a tiny model).
  void setOnDemandAbove(std::size_t bytes) { onDemandAbove_ = bytes; }
  QTableView* statsTable() const { return statsTable_; }
  HeadStatsModel* statsModel() const { return statsModel_; }
  QSortFilterProxyModel* statsProxy() const { return statsProxy_; }
  ImageOverlayView* overlay() const { return overlay_; }
  QLabel* warningStrip() const { return warningStrip_; }
  QLabel* errorBanner() const { return errorBanner_; }
  QProgressBar* progressBar() const { return loadProgress_; }
  QPushButton* cancelButton() const { return cancelButton_; }
  QPushButton* aboutModelButton() const { return aboutModel_; }
  QListWidget* predictions() const { return predictions_; }
  QComboBox* matrixModeBox() const { return matrixModeBox_; }
  QTabWidget* viewTabs() const { return viewTabs_; }
  QLabel* modelLabel() const { return modelLabel_; }
  LogitLensView* lensView() const { return lensView_; }
  QSlider* scrubber() const { return scrubber_; }
  QLabel* generationLabel() const { return generationLabel_; }
  QPushButton* generateButton() const { return generateButton_; }
  PatchingPanel* patchingPanel() const { return patching_; }           // the Patching tab (transformer_patching.h)
  DetectorsPanel* detectorsPanel() const { return detectors_; }        // the Head detectors tab
  AttributionPanel* attributionPanel() const { return attribution_; }  // the Attribution tab

  // ---- Workbench ----
  void saveTo(attn::ui::Session& session) const override;
  QStringList restoreFrom(const attn::ui::Session& session, const QString& origin) override;
  attn::Result<void> exportCurrentView(const QString& path) const override;

  // ---- interventions (transformer_intervention.cpp) ----
  // Ablated heads: Ctrl+click a tile of the model view (its context menu, or A on its keyboard selection) toggles one;
  // the run in view is then the ablated one (a re-run of the captured plain run from the first ablated layer), the
  // predictions say each token's probability without and with the ablation, every view of heads outlines them.
  // Escape in the model view, or Restore all heads, restores.
  enum class CompareShow { SideBySide, Difference };
  void toggleAblation(int layer, int head);
  void setAblatedHeads(std::vector<attn::models::HeadRef> heads);
  const std::vector<attn::models::HeadRef>& ablatedHeads() const { return ablated_; }
  void restoreHeads();
  void setAblationMode(attn::models::AblationMode mode);
  attn::models::AblationMode ablationMode() const;
  // Compare: a second input run beside the first; the matrix shows both maps of the head in view side by side, or
  // B - A (RdBu, symmetric about 0) when their token counts match.
  void setCompare(bool on, const QString& text);
  bool isComparing() const;
  QString compareText() const;
  void setCompareShow(CompareShow show);
  CompareShow compareShow() const;
  // B's map (side by side), and what the Intervene group says (why a difference cannot be drawn, ...).
  HeatmapView* compareHeatmap() const { return compareHeatmap_; }
  QLabel* interventionNote() const { return interventionNote_; }
  QComboBox* ablationModeBox() const { return ablationModeBox_; }
  QPushButton* restoreButton() const { return restoreButton_; }
  QCheckBox* compareCheck() const { return compareCheck_; }
  QLineEdit* compareEdit() const { return compareEdit_; }
  QLabel* matrixTitle() const { return matrixTitle_; }

 signals:
  // The head view and matrix show the layer in view of run `generation`, ahead of its outcome.
  void previewShown(quint64 generation);
  void sourceLoaded(const QString& path);
  void sourceFailed(const QString& message);
  void loadingChanged(bool loading);
  void selectionChanged(int layer, int head);
  void openModelRequested();
  void openDumpRequested();
  void openImageRequested();

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  // The widgets (transformer_workbench_panel.cpp): the side panel's groups, top to bottom, and the main area.
  void buildSidePanel(QWidget* panel);
  QGroupBox* buildModelGroup(QWidget* panel);
  QGroupBox* buildInputGroup(QWidget* panel);
  QGroupBox* buildPredictionGroup(QWidget* panel);
  QGroupBox* buildGenerateGroup(QWidget* panel);  // transformer_generation.cpp
  void buildLensTab();                            // the Logit Lens tab, and its reading when it comes into view
  void onGenerationProgress(quint64 generation, int tokens, const QString& text, double ms);
  void updateGenerationControls();
  QWidget* buildBusyRow(QWidget* area);  // the progress bar, its label and Cancel
  void armBusy();                        // a request was sent: the busy row shows if it is still running later
  void updateBusy();
  void onRunProgress(quint64 generation, int done, int layers, qint64 tokens, double ms);
  void updateScrubber();
  void updateLens();
  bool generates() const;  // GPT-2 or a decoder, with its head: the Generate group applies
  bool readsLens() const;  // the lens tab is in view and the model has a next-token head
  QString continuation(const attn::models::TransformerRun& run) const;  // the generated tokens' text
  static QString memoryText(const attn::models::TransformerRun& run);   // the generation's memory estimate
  QGroupBox* buildMatrixGroup(QWidget* panel);
  QGroupBox* buildDisplayGroup(QWidget* panel);
  void buildMainArea(QWidget* area);
  QWidget* buildMatrixPane(QWidget* parent);
  void onLoadProgress(quint64 serial, int percent, const QString& what);
  void onLoaded(std::shared_ptr<const TransformerSource> source);
  void onLoadFailed(quint64 serial, const QString& message, bool cancelled);
  void onImageLoaded(std::shared_ptr<const VisionInput> image);
  void onImageFailed(quint64 serial, const QString& message);
  void onFinished(std::shared_ptr<const TransformerOutcome> outcome);
  void onPreview(std::shared_ptr<const TransformerPreview> preview);
  void applyPending() override;
  void post();
  void updateInputControls();
  void updateMatrix();
  bool updateLongMap();  // the matrix of a run kept on demand; false when the run has maps
  // Layers, and heads of a layer, of the outcome in view (its maps', or its on-demand layers').
  int layerCount(const TransformerOutcome& outcome) const;
  int headCount(const TransformerOutcome& outcome, int layer) const;
  QString emptyMatrixText() const;  // what the matrix says before it has a map
  void updateOverlay();
  void updatePredictions();
  void updateWarnings();
  void updateSelectionLabel();
  // A new source: every view of the previous run emptied, so nothing on screen mixes two models.
  void clearRunViews();
  void selectStatsRow();
  void showError(const QString& message);
  void setLoadingUi(bool loading);
  // The text a newly loaded model starts with: each kind of model keeps its own last text (textKindOf); the box is
  // changed as one undoable edit, so Ctrl+Z in it brings back what was there. True when the text was changed.
  bool takeTextForSource();
  // "induction-gpt2" and "stories260k" for the demos, "ids" for a model without a tokenizer, else its family
  // ("gpt2", "bert", ...); empty for what reads no text (a dump, ViT).
  QString textKindOf(const TransformerSource& source) const;
  QString exampleTextFor(const QString& kind, const TransformerSource& source);

  WorkerThread thread_;
  std::unique_ptr<TransformerWorker> worker_;

  std::shared_ptr<const TransformerSource> source_;
  quint64 loadRequested_ = 0;
  quint64 loadSettled_ = 0;
  QString loadingPath_;
  std::shared_ptr<const VisionInput> image_;
  quint64 imageRequested_ = 0;

  quint64 previewed_ = 0;
  std::shared_ptr<const TransformerOutcome> pending_;
  std::shared_ptr<const TransformerOutcome> outcome_;
  std::shared_ptr<const attn::AttentionMap> matrixMap_;
  int layer_ = 0;
  int head_ = 0;
  QString requestedSource_;  // the source open or opening: a folder, a dump or demoModelKey()
  QString idsExample_;       // the example ids put in the text box for a model without a tokenizer
  QString textKind_;         // the kind of model the text in the box was written for (textKindOf); empty at first
  QHash<QString, QString> kindTexts_;  // each other kind's last text, given back when a model of it opens
  bool textChosenForLoad_ = false;     // a session set the text for the model it opens: it stays
  QString requestedImage_;             // the photo open or opening: a file or a ":/" resource
  int pendingLayer_ = -1;              // applyState's selection, applied with the first result after it
  int pendingHead_ = -1;
  bool selecting_ = false;
  bool matrixActive_ = false;  // the last view used was the matrix (File > Export View)
  render::Colormap colormap_ = render::Colormap::Viridis;

  // Side panel.
  QSplitter* splitter_ = nullptr;
  QScrollArea* sideScroll_ = nullptr;
  QLabel* modelLabel_ = nullptr;
  QProgressBar* loadProgress_ = nullptr;
  QPushButton* cancelButton_ = nullptr;
  QPushButton* aboutModel_ = nullptr;  // the open model's card, when it has one
  QLabel* loadNote_ = nullptr;
  QGroupBox* inputGroup_ = nullptr;
  QPlainTextEdit* textEdit_ = nullptr;
  QLabel* textLabel_ = nullptr;
  QLabel* pairLabel_ = nullptr;
  QLineEdit* pairEdit_ = nullptr;
  QWidget* imageRow_ = nullptr;
  QComboBox* sampleBox_ = nullptr;
  QLabel* imageInfo_ = nullptr;
  QLabel* inputNote_ = nullptr;
  QListWidget* predictions_ = nullptr;
  QComboBox* matrixModeBox_ = nullptr;
  QComboBox* fusionBox_ = nullptr;
  QDoubleSpinBox* discardSpin_ = nullptr;
  QDoubleSpinBox* residualSpin_ = nullptr;
  QComboBox* colormapBox_ = nullptr;
  QDoubleSpinBox* thresholdSpin_ = nullptr;
  QComboBox* overlaySourceBox_ = nullptr;
  QSlider* alphaSlider_ = nullptr;
  QComboBox* exportSizeBox_ = nullptr;
  QGroupBox* generateGroup_ = nullptr;
  QSpinBox* newTokensSpin_ = nullptr;
  QDoubleSpinBox* temperatureSpin_ = nullptr;
  QSpinBox* topKSpin_ = nullptr;
  QDoubleSpinBox* topPSpin_ = nullptr;
  QSpinBox* seedSpin_ = nullptr;
  QPushButton* generateButton_ = nullptr;
  QPushButton* stopButton_ = nullptr;
  QLabel* generationLabel_ = nullptr;
  QSlider* scrubber_ = nullptr;
  QLabel* scrubLabel_ = nullptr;
  quint64 generating_ = 0;                                         // the request of the generation running (0: none)
  std::weak_ptr<const attn::models::TransformerRun> scrubbedRun_;  // the generated run the scrubber spans
  std::optional<int> requestedStep_;                               // the step last asked of the worker for that run
  struct PendingGeneration {
    attn::models::GenerateOptions options;
    int step = 0;
  };
  std::optional<PendingGeneration> pendingGeneration_;  // applyState's generated run, made once its model is in

  // Main area.
  BusyRow* busyRow_ = nullptr;  // the shared busy row (workbenches/common/busy_row.h)
  QLabel* errorBanner_ = nullptr;
  QString headDamage_;  // the banner's message about a damaged head of a version-2 dump, while it is shown
  QLabel* warningStrip_ = nullptr;
  QLabel* selectionLabel_ = nullptr;
  QTabWidget* viewTabs_ = nullptr;
  TokenLinesView* tokenLines_ = nullptr;
  QScrollArea* gridScroll_ = nullptr;
  HeadGridView* headGrid_ = nullptr;
  QTableView* statsTable_ = nullptr;
  HeadStatsModel* statsModel_ = nullptr;
  QSortFilterProxyModel* statsProxy_ = nullptr;
  ImageOverlayView* overlay_ = nullptr;
  QLabel* matrixTitle_ = nullptr;
  HeatmapView* heatmap_ = nullptr;
  QStackedWidget* matrixStack_ = nullptr;  // heatmap_, or longMap_ for a run kept on demand
  LongMapPanel* longMap_ = nullptr;
  std::size_t onDemandAbove_ = attn::models::kOnDemandAbove;
  std::shared_ptr<const attn::models::TransformerRun> longMapRun_;  // the run longMap_'s tokens are of
  LogitLensView* lensView_ = nullptr;
  std::unique_ptr<QTemporaryDir> demoDir_;  // the demo model's files, written on first use

  // Interventions (transformer_intervention.cpp).
  QGroupBox* buildInterventionGroup(QWidget* panel);
  QWidget* buildComparePane(QWidget* parent, QWidget* matrix);  // the matrix beside B's map
  void fillIntervention(TransformerRequest& request) const;
  void updateInterventionViews();        // outlines, the matrix title, B's map or the difference, the note
  bool updateInterventionPredictions();  // false: no intervention in view, the plain list applies
  void applyInterventionState(const attn::ui::TransformerSection& state);
  void saveInterventionState(attn::ui::TransformerSection& state) const;
  std::vector<attn::models::HeadRef> ablated_;
  QComboBox* ablationModeBox_ = nullptr;
  QPushButton* restoreButton_ = nullptr;
  QCheckBox* compareCheck_ = nullptr;
  QLineEdit* compareEdit_ = nullptr;
  QComboBox* compareShowBox_ = nullptr;
  QLabel* interventionNote_ = nullptr;
  HeatmapView* compareHeatmap_ = nullptr;
  QWidget* comparePane_ = nullptr;
  bool differenceShown_ = false;  // heatmap_ holds B - A (RdBu, symmetric) rather than A
  PatchingPanel* patching_ = nullptr;
  AttributionPanel* attribution_ = nullptr;
  DetectorsPanel* detectors_ = nullptr;
};

}  // namespace attn::ui
