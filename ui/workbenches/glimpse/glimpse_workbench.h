// The Glimpse tab: DRAW's Gaussian glimpse and the spatial transformer's over any photo. The canvas in
// the middle shows the photo with the glimpse and its handles; the right column the glimpses themselves
// (magnified, crisp pixels), their difference in same-window mode, the write canvas and the filterbanks
// Fx and Fy; the left panel every parameter in both parameterisations, presets and the clamps the engine
// applied. A GlimpseWorker on its own thread decodes photos and computes every frame (newest request
// wins); during a drag it may answer with a labelled pyramid preview and the exact glimpse follows on
// release.
#pragma once

#include "attn/error.h"
#include "attn/glimpse/resolve.h"
#include "attn/glimpse/settings.h"
#include "session/session.h"
#include "workbenches/common/busy_row.h"
#include "workbenches/glimpse/glimpse_worker.h"
#include "workbenches/common/worker_thread.h"
#include "workbenches/common/workbench.h"

#include <QElapsedTimer>
#include <QList>
#include <QString>
#include <QTimer>
#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

class QButtonGroup;
class QCheckBox;
class QComboBox;
class QCustomPlot;
class QDoubleSpinBox;
class QGroupBox;
class QLabel;
class QPushButton;
class QRadioButton;
class QScrollArea;
class QSplitter;
class QStackedWidget;
class QTabWidget;
class QToolButton;

namespace attn::ui {

class GlimpseCanvas;
class ParamEdit;
class PixelView;

class GlimpseWorkbench : public Workbench {
  Q_OBJECT

 public:
  enum class Preset { WholeImage, CentreQuarter, Fine64, DrawDefault };

  explicit GlimpseWorkbench(QWidget* parent = nullptr);
  ~GlimpseWorkbench() override;  // stops the worker thread: quit + wait

  // ---- images (all asynchronous: imageLoaded or imageFailed follows) ----
  static bool isImageFileName(const QString& path);  // .png, .jpg, .jpeg, .bmp, .tif, .tiff, .webp
  // A bundled photo by key ("astronaut", "chelsea", "coffee", "rocket"). False for an unknown key.
  bool openSample(const QString& key);
  static QString defaultSampleKey() { return QStringLiteral("astronaut"); }
  // A file (any format OpenCV decodes; the engine checks the header first). A bad file leaves the previous
  // image and parameters as they were and reports the file and the reason.
  void openFile(const QString& path);
  // Loads `path` (a file or a ":/" resource) and then applies `settings` as they are (no rescaling).
  void openWithSettings(const QString& path, const attn::glimpse::GlimpseSettings& settings);
  void setImageLimits(const attn::ImageLimits& limits) { limits_ = limits; }
  bool isLoading() const override { return loadRequested_ > loadSettled_; }
  quint64 loadsSettled() const { return loadSettled_; }
  const GlimpseImage* image() const { return image_.get(); }
  std::shared_ptr<const GlimpseImage> sharedImage() const { return image_; }
  QString imagePath() const;  // a file path or a ":/" resource; empty before the first image

  // ---- parameters ----
  const attn::glimpse::GlimpseSettings& settings() const { return settings_; }
  // What the settings mean for the open image (attn::glimpse::resolve, computed when they change): the
  // canvas draws it and the panel shows it.
  const attn::glimpse::ResolvedGlimpse& geometry() const { return geometry_; }
  // Sets the panel and the canvas and runs once.
  void setSettings(const attn::glimpse::GlimpseSettings& settings);
  // The settings of a preset for an image of width x height.
  static attn::glimpse::GlimpseSettings presetSettings(Preset preset, int width, int height,
                                                       const attn::glimpse::GlimpseSettings& base = {});
  void applyPreset(Preset preset);
  // The settings attnscope-cli's --gaussian / --stn specs describe for the open image, starting from the
  // paper's default (the STN from that Gaussian's window unless --stn says otherwise). Errors name the key.
  attn::Result<attn::glimpse::GlimpseSettings> settingsFromSpecs(const QString& gaussianSpec, const QString& stnSpec,
                                                                 bool sameWindow) const;
  // The DRAW paper's default 12 x 12 glimpse over the whole image; the STN back to the identity.
  void resetParameters();
  void setSameWindow(bool on);
  void setWriteMode(bool on);
  bool writeMode() const { return writeMode_; }
  void clearCanvas();
  // Which glimpse the canvas handles edit.
  void setEditStn(bool stn);

  // ---- the session file ----
  // The image (a sample by key, or a file) with its size, every glimpse parameter, write mode and which
  // glimpse the handles edit. While applyState's image opens, what it asked for.
  attn::ui::GlimpseSection state() const;
  // Opens the image with the settings as they are (pixel numbers refer to that image), or sets the settings
  // when that image is already open. An unknown sample's key changes nothing but the two switches.
  void applyState(const attn::ui::GlimpseSection& state);

  // ---- results ----
  const GlimpseOutcome* outcome() const { return outcome_.get(); }
  std::shared_ptr<const GlimpseOutcome> sharedOutcome() const { return outcome_; }
  bool isBusy() const { return busy_; }
  void setBusyDelay(int ms) { busyTimer_.setInterval(ms); }
  // The busy row over the views while a photo opens (its stages, the time left) or an exact read runs longer than
  // its delay, with Cancel (or Esc), which drops that work: the previous image and glimpse stay.
  BusyRow* busyRow() const { return busyRow_; }
  void cancelRun();
  int workerRuns() const { return worker_->runs(); }
  GlimpseWorker* worker() const { return worker_.get(); }
  // Benchmarks: compute each request on the GUI thread and show it at once (no thread hop, no queue).
  void setSynchronous(bool on) { synchronous_ = on; }
  bool isSynchronous() const { return synchronous_; }
  // Time from posting a request to showing its result, for the newest shown result (ms).
  double lastFrameMs() const { return lastFrameMs_; }
  // The clamp notes the panel shows now (empty when nothing was clamped).
  QStringList clampNotes() const { return clampNotes_; }
  QString clampText() const;

  // ---- exports ----
  // The Gaussian glimpse at its own size (Nx x Ny pixels), PNG.
  attn::Result<void> exportGlimpse(const QString& path) const;
  // The photo with the glimpse drawn on it: PNG at the photo's resolution (longer side at most 4096), or
  // SVG / PDF of the canvas as shown.
  attn::Result<void> exportAnnotated(const QString& path) const;
  // to_json of the settings, with the image's size and path.
  attn::Result<void> exportParameters(const QString& path) const;
  std::string parametersJson() const;

  // ---- widgets (tests, exports, screenshots) ----
  GlimpseCanvas* canvas() const { return canvas_; }
  PixelView* glimpseView() const { return glimpseView_; }
  PixelView* stnView() const { return stnView_; }
  PixelView* differenceView() const { return differenceView_; }
  PixelView* writeView() const { return writeView_; }
  PixelView* maskedView() const { return maskedView_; }
  PixelView* cropView() const { return cropView_; }
  PixelView* matrixView() const { return matrixView_; }
  QCheckBox* formsCheck() const { return formsCheck_; }
  bool windowForms() const { return windowForms_; }
  // The soft mask a (.) I, the crop and the matrix form of the Gaussian window, side by side with their times.
  void setWindowForms(bool on);
  QCustomPlot* fxPlot() const { return fxPlot_; }
  QCustomPlot* fyPlot() const { return fyPlot_; }
  QCustomPlot* bankMapPlot() const { return bankMapPlot_; }
  QLabel* clampLabel() const { return clampLabel_; }
  QLabel* drawExactLabel() const { return drawExactLabel_; }
  QLabel* errorBanner() const { return errorBanner_; }
  QComboBox* sampleBox() const { return sampleBox_; }
  QCheckBox* sameWindowCheck() const { return sameWindowCheck_; }
  void setSidePanelVisible(bool visible) override;
  bool isSidePanelVisible() const override;

  // ---- Workbench ----
  void saveTo(attn::ui::Session& session) const override;
  QStringList restoreFrom(const attn::ui::Session& session, const QString& origin) override;
  // The annotated image (.png/.svg/.pdf) or the parameters (.json).
  attn::Result<void> exportCurrentView(const QString& path) const override;
  bool hasMatrix() const override { return false; }
  QString exportViewLabel() const override { return tr("&Export Annotated Image\u2026"); }
  QString exportViewName() const override { return QStringLiteral("glimpse-annotated.png"); }

 signals:
  void imageLoaded(const QString& path);
  void imageFailed(const QString& message);
  void settingsChanged();
  // The Open… button: the main window shows its file dialog (and keeps the recent images).
  void openRequested();

 private:
  // Construction: the side panel and its parts (glimpse_panel.cpp), the right column (glimpse_results.cpp).
  void buildSidePanel(QWidget* panel);
  QGroupBox* buildImageGroup(QWidget* panel);
  QGroupBox* buildGlimpseGroup(QWidget* panel);
  void buildRightColumn(QWidget* column);
  void buildFormsRow(QWidget* parent);
  QWidget* buildGaussianPage();
  QGroupBox* buildPixelGroup(QWidget* page);
  QGroupBox* buildDrawGroup(QWidget* page);
  QWidget* buildStnPage();
  void buildFamilyStack(QWidget* page);  // familyStack_ and the family pages' stnEdits_
  QGroupBox* buildStnOutputGroup(QWidget* page);
  void startLoad(GlimpseSource source);
  void onLoaded(std::shared_ptr<const GlimpseImage> image);
  void onLoadFailed(quint64 serial, const QString& message);
  void onFinished(std::shared_ptr<const GlimpseOutcome> outcome);
  void applyPending() override;
  void applyPlots(const GlimpseOutcome& outcome);
  void endBusy();
  void updateBusyRow();  // the row goes once nothing is opening or running
  void post();
  // The single path of every edit: canvas, panel and worker follow `settings`.
  void edit(const attn::glimpse::GlimpseSettings& settings, bool dragging);
  // Where settings enter: stores them and resolves them for the open image (geometry_).
  void adopt(const attn::glimpse::GlimpseSettings& settings);
  void syncPanel();
  void updateSliderRanges();
  void updateStnControls();
  void showClamps(const GlimpseOutcome& outcome);
  void showWindowForms(const GlimpseOutcome& outcome);
  // The error banner and status message; `previousName` names the image that stays (default: the open one).
  void showError(const QString& message, const QString& previousName = {});
  // Why a session's image cannot be opened (empty: it can), by GlimpseWorker::probe, as File > Open would find.
  QString sessionImageProblem(const attn::ui::ImageRef& image) const;
  attn::glimpse::GlimpseSettings rescaled(const attn::glimpse::GlimpseSettings& settings, int fromW, int fromH, int toW,
                                          int toH) const;

  // The panel's parameters, named. Each enum's order is the order of its rows and of its edits' array.
  // A row of the Gaussian page, per axis (0 = x, 1 = y).
  enum class AxisField { Centre, First, Stride, Sigma, Count /* N */ };
  static constexpr int kAxisFields = int(AxisField::Count) + 1;
  // The paper's five parameters (eq. 21-24).
  enum class DrawField { GxTilde, GyTilde, LogSigma2, LogDeltaTilde, LogGamma };
  static constexpr int kDrawFields = int(DrawField::LogGamma) + 1;
  // The STN page: each family's parameters, affine's theta, the output size.
  enum class StnField {
    NoShearScaleX,
    NoShearScaleY,
    NoShearShiftX,
    NoShearShiftY,
    SimilarityScale,
    SimilarityRotation,  // degrees in the panel, radians in the settings
    SimilarityShiftX,
    SimilarityShiftY,
    TranslationScaleScale,
    TranslationScaleShiftX,
    TranslationScaleShiftY,
    Affine0,
    Affine1,
    Affine2,
    Affine3,
    Affine4,
    Affine5,
    OutW,
    OutH,
  };
  static constexpr int kStnFields = int(StnField::OutH) + 1;
  ParamEdit* axisEdit(int axis, AxisField field) const { return gaussianEdits_[axis][int(field)]; }
  ParamEdit* drawEdit(DrawField field) const { return drawEdits_[int(field)]; }
  ParamEdit* stnEdit(StnField field) const { return stnEdits_[std::size_t(field)]; }
  static double stnValue(const attn::glimpse::StnSettings& stn, StnField field);  // as shown: rotation in degrees

  // Panel edits.
  void editGaussianAxis(int axis, AxisField field, double value, bool dragging);
  void editDraw(DrawField field, double value, bool dragging);
  void editStn(StnField field, double value, bool dragging);

  WorkerThread thread_;
  std::unique_ptr<GlimpseWorker> worker_;
  QTimer busyTimer_;
  QTimer plotTimer_;
  bool busy_ = false;

  attn::ImageLimits limits_;
  std::shared_ptr<const GlimpseImage> image_;
  quint64 loadRequested_ = 0;
  quint64 loadSettled_ = 0;
  quint64 cancelledLoad_ = 0;  // cancelRun(): the loads up to this one are not shown
  quint64 cancelledRun_ = 0;   // cancelRun(): the reads up to this one are not shown
  QString loadingName_;
  // Settings to apply as they are when load number `first` succeeds (openWithSettings).
  std::optional<std::pair<quint64, attn::glimpse::GlimpseSettings>> settingsForLoad_;
  // applyState's, while its image opens (state() reports it until the load settles).
  std::optional<attn::ui::GlimpseSection> pendingState_;
  // The source of the newest load, and a load it replaced before that one had finished (reopened if the
  // newer one fails, so that "the previous image stays" holds).
  struct SupersededLoad {
    GlimpseSource source;
    std::optional<attn::glimpse::GlimpseSettings> settings;
    std::optional<attn::ui::GlimpseSection> state;
  };
  std::optional<GlimpseSource> currentLoad_;
  std::optional<SupersededLoad> superseded_;
  quint64 fallbackLoad_ = 0;  // the load that reopens a superseded one after a failure

  attn::glimpse::GlimpseSettings settings_;
  attn::glimpse::ResolvedGlimpse geometry_;  // resolve(settings_, the open image's size), set by adopt()
  bool dragging_ = false;
  bool writeMode_ = false;
  bool windowForms_ = false;
  bool syncing_ = false;
  bool synchronous_ = false;

  QElapsedTimer clock_;
  std::vector<std::pair<quint64, qint64>> postTimes_;  // generation -> clock_ ns, recent only
  double lastFrameMs_ = 0.0;
  std::shared_ptr<const GlimpseOutcome> pending_;
  std::shared_ptr<const GlimpseOutcome> outcome_;
  std::shared_ptr<const GlimpseOutcome> plotPending_;
  qint64 lastPlotNs_ = 0;
  QStringList clampNotes_;

  // Layout.
  QSplitter* splitter_ = nullptr;
  QScrollArea* sideScroll_ = nullptr;
  GlimpseCanvas* canvas_ = nullptr;
  QLabel* errorBanner_ = nullptr;
  QLabel* busyLabel_ = nullptr;
  BusyRow* busyRow_ = nullptr;

  // Image group.
  QComboBox* sampleBox_ = nullptr;
  QPushButton* openButton_ = nullptr;
  QLabel* imageInfo_ = nullptr;

  // Glimpse group.
  QComboBox* presetBox_ = nullptr;
  QCheckBox* sameWindowCheck_ = nullptr;
  QRadioButton* editGaussianRadio_ = nullptr;
  QRadioButton* editStnRadio_ = nullptr;
  QCheckBox* writeCheck_ = nullptr;
  QCheckBox* formsCheck_ = nullptr;
  QPushButton* clearCanvasButton_ = nullptr;
  QLabel* clampLabel_ = nullptr;
  QTabWidget* paramTabs_ = nullptr;

  // Gaussian page: [axis][AxisField].
  ParamEdit* gaussianEdits_[2][kAxisFields] = {};
  ParamEdit* gammaEdit_ = nullptr;
  QCheckBox* linkAxesCheck_ = nullptr;
  ParamEdit* drawEdits_[kDrawFields] = {};  // [DrawField]
  QLabel* drawExactLabel_ = nullptr;

  // STN page.
  QComboBox* familyBox_ = nullptr;
  QLabel* familyNote_ = nullptr;
  QStackedWidget* familyStack_ = nullptr;
  std::vector<ParamEdit*> stnEdits_;  // [StnField]
  QComboBox* samplingBox_ = nullptr;
  QComboBox* paddingBox_ = nullptr;
  QLabel* thetaLabel_ = nullptr;

  // Right column.
  PixelView* glimpseView_ = nullptr;
  PixelView* stnView_ = nullptr;
  PixelView* differenceView_ = nullptr;
  PixelView* writeView_ = nullptr;
  QWidget* formsRow_ = nullptr;
  PixelView* maskedView_ = nullptr;
  PixelView* cropView_ = nullptr;
  PixelView* matrixView_ = nullptr;
  QString formsSummary_;  // the last exact forms' line under the glimpses (kept through a drag)
  QLabel* errorSummary_ = nullptr;
  QTabWidget* plotTabs_ = nullptr;
  QCustomPlot* fxPlot_ = nullptr;
  QCustomPlot* fyPlot_ = nullptr;
  QCustomPlot* bankMapPlot_ = nullptr;
  QLabel* plotNote_ = nullptr;
};

}  // namespace attn::ui
