// The Captioning tab: Show, Attend and Tell (Xu et al. 2015) on the bundled soft- and hard-attention
// captioners (or an AttnScopeCaptioner folder). The side panel holds the model, the input (a generated
// scene by seed, a bundled photo, an image file), decoding (beam width, the hypotheses with their
// log-probabilities) and the overlay settings (smoothing, opacity, colour map, threshold, light mask) with
// the grid export. The main area shows the caption as a word strip (β and the entropy of α under each
// word; click, drag or Left/Right/Home/End to choose a word, play to walk through them), the image with the
// chosen word's α over it (the hard model's cell outlined) and the coverage Σ_t α_t.
// A CaptionWorker on its own thread loads, decodes, captions and smooths (newest request wins). A caption is
// computed whole and then revealed word by word. Overlay settings recompose the overlays on this thread from
// the smoothed maps; only a change of smoothing goes back to the worker, and neither captions again. A bad
// image or model names the file and the reason and keeps the previous view.
#pragma once

#include "attn/error.h"
#include "session/session.h"
#include "render/caption_render.h"
#include "workbenches/common/busy_row.h"
#include "workbenches/common/side_panel.h"
#include "workbenches/caption/caption_worker.h"
#include "workbenches/common/worker_thread.h"
#include "workbenches/common/workbench.h"

#include <QHash>
#include <QImage>
#include <QString>
#include <QStringList>
#include <QTimer>
#include <QWidget>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QGroupBox;
class QLabel;
class QPushButton;
class QScrollArea;
class QSettings;
class QSlider;
class QSpinBox;
class QToolButton;
class QTreeWidget;

namespace attn::ui {

class CaptionStripView;
class ImageOverlayView;

class CaptionWorkbench : public Workbench {
  Q_OBJECT

 public:
  static constexpr int kMaxBeam = 10;
  static constexpr int kRevealMs = 110;  // per word
  static constexpr int kPlayMs = 800;    // per word

  explicit CaptionWorkbench(QWidget* parent = nullptr);
  ~CaptionWorkbench() override;  // stops the worker thread: quit + wait

  // ---- models (asynchronous: sourceLoaded or sourceFailed follows) ----
  void openModel(const QString& nameOrFolder, bool announce = true);
  const CaptionSource* source() const { return source_.get(); }

  // ---- inputs (asynchronous: imageLoaded or imageFailed follows) ----
  void openFile(const QString& path);
  bool openSample(const QString& key);  // a bundled photo (sampleImages()); false if unknown
  void openScene(std::uint64_t seed);
  void newScene();  // the next seed
  const CaptionImage* image() const { return image_.get(); }
  void setImageLimits(const attn::ImageLimits& limits) { limits_ = limits; }
  // The bundled soft model and scene 1 unless something was asked for already; the tab calls it when first
  // shown, so a window that never shows the tab never loads it.
  void start();
  bool isLoading() const override { return loadRequested_ > loadSettled_ || openRequested_ > openSettled_; }

  // ---- decoding, words, hypotheses ----
  void setBeam(int beam);
  int beam() const;
  void selectHypothesis(int index);
  int hypothesis() const { return hypothesis_; }
  void setWord(int index);  // stops the reveal
  int word() const { return word_; }
  int wordCount() const;
  void setPlaying(bool on);
  bool isPlaying() const { return playTimer_.isActive(); }
  void setRevealInterval(int ms);  // per word; 0 shows a caption at once
  bool isRevealing() const { return revealTimer_.isActive(); }

  // ---- overlay ----
  const render::CaptionOverlayOptions& overlayOptions() const { return options_; }
  void setOverlayOptions(const render::CaptionOverlayOptions& options);
  void setSigma(double sigma);
  void setOpacity(double opacity);
  void setColormap(render::Colormap map) override;
  void setThreshold(double fraction);
  void setOverlayMode(render::CaptionOverlayMode mode);
  void setPerRow(int perRow);
  int perRow() const;

  // ---- results ----
  bool isIdle() const override;  // nothing loading, running, smoothing or waiting to be shown
  const CaptionOutcome* outcome() const { return outcome_.get(); }
  const CaptionImage* shownImage() const { return shownImage_.get(); }
  int workerRuns() const { return worker_->runs(); }
  int workerSmooths() const { return worker_->smooths(); }
  QImage currentOverlay() const;  // the image view's picture
  QStringList warnings() const;

  // ---- exports ----
  render::CaptionGridFigure gridFigure() const;
  // The grid of the selected hypothesis (PNG, SVG or PDF by extension), perRow() words a row.
  attn::Result<void> exportGrid(const QString& path) const;
  // The word in view over the image, PNG.
  attn::Result<void> exportOverlay(const QString& path) const;
  // The selected hypothesis' α (rows: words, columns: grid cells "row,column") as .csv or .npy.
  attn::Result<void> exportMatrix(const QString& path) const override;

  // ---- the session file ----
  // The model, the input, decoding, the word in view and every overlay setting, as asked for: a model or an
  // input still opening is reported as what it will be.
  attn::ui::CaptionSection state() const;
  // Sets the widgets and opens the model and the input when they differ from what is open (when the tab
  // has not been shown yet, start() opens them); the hypothesis and the word follow with the first caption.
  void applyState(const attn::ui::CaptionSection& state);

  // ---- settings (model, beam, overlay, grid, input) ----
  void saveSettings(QSettings& settings) const;
  void restoreSettings(const QSettings& settings);
  void setSidePanelVisible(bool visible) override;
  bool isSidePanelVisible() const override;

  // ---- widgets (tests, screenshots) ----
  QComboBox* modelBox() const { return modelBox_; }
  QSpinBox* seedSpin() const { return seedSpin_; }
  QComboBox* sampleBox() const { return sampleBox_; }
  QSpinBox* beamSpin() const { return beamSpin_; }
  QTreeWidget* hypothesisList() const { return hypotheses_; }
  CaptionStripView* strip() const { return strip_; }
  ImageOverlayView* overlayView() const { return overlayView_; }
  ImageOverlayView* coverageView() const { return coverageView_; }
  QToolButton* playButton() const { return playButton_; }
  QDoubleSpinBox* sigmaSpin() const { return sigmaSpin_; }
  QSlider* opacitySlider() const { return opacitySlider_; }
  QComboBox* colormapBox() const { return colormapBox_; }
  QDoubleSpinBox* thresholdSpin() const { return thresholdSpin_; }
  QComboBox* modeBox() const { return modeBox_; }
  QSpinBox* perRowSpin() const { return perRowSpin_; }
  QLabel* errorBanner() const { return errorBanner_; }
  // The busy row over the views while a photo opens or a caption is searched for longer than its delay: what runs
  // and the time so far, with Cancel (or Esc), which drops that work; the previous image and caption stay.
  BusyRow* busyRow() const { return busyRow_; }
  void cancelRun();
  CaptionWorker* worker() const { return worker_.get(); }
  QLabel* warningStrip() const { return warningStrip_; }
  QLabel* inputNote() const { return inputNote_; }
  QLabel* modelLabel() const { return modelLabel_; }

  // ---- Workbench ----
  void saveTo(attn::ui::Session& session) const override;
  QStringList restoreFrom(const attn::ui::Session& session, const QString& origin) override;
  // The grid (PNG, SVG or PDF).
  attn::Result<void> exportCurrentView(const QString& path) const override;
  QString exportViewLabel() const override { return tr("&Export Grid\u2026"); }
  QString exportViewName() const override { return QStringLiteral("caption-grid.png"); }

 signals:
  void sourceLoaded(const QString& path);
  void sourceFailed(const QString& message);
  void imageLoaded(const QString& path);  // a file, a ":/" resource or "scene:<seed>"
  void imageFailed(const QString& message);
  void wordChanged(int word);
  void openModelRequested();
  void openImageRequested();
  void exportGridRequested();
  void exportOverlayRequested();

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  // The side panel, group by group, and the main area (caption_panel.cpp).
  void buildSidePanel(QWidget* panel);
  QGroupBox* buildModelGroup(QWidget* panel);
  QGroupBox* buildImageGroup(QWidget* panel);
  QGroupBox* buildDecodingGroup(QWidget* panel);
  QGroupBox* buildOverlayGroup(QWidget* panel);
  void buildMainArea(QWidget* area);

  void fillModelBox();
  void openInput(CaptionInput input);
  void onLoaded(std::shared_ptr<const CaptionSource> source);
  void onLoadFailed(quint64 serial, const QString& message);
  void onOpened(std::shared_ptr<const CaptionImage> image);
  void onOpenFailed(quint64 serial, const QString& message);
  void onFinished(std::shared_ptr<const CaptionOutcome> outcome);
  void onSmoothed(quint64 generation, std::shared_ptr<const CaptionMaps> maps);
  void applyPending() override;
  void post();
  void updateBusyRow();  // the row goes once nothing is opening or running
  void showError(const QString& message);
  void showAbout();
  void updateHypotheses();
  void updateStrip();
  void updateOverlays();
  void updateWarnings();
  void updateInputNote();
  void revealNext();
  void playNext();
  void requestMaps();
  void overlaySettingsChanged();
  void editOptions(const std::function<void(render::CaptionOverlayOptions&)>& edit);
  const CaptionMaps* currentMaps() const;
  const attn::models::CaptionHypothesis* currentHypothesis() const;
  std::string shownWordText() const;  // the current hypothesis's word at word_, or empty

  WorkerThread thread_;
  std::unique_ptr<CaptionWorker> worker_;
  QTimer revealTimer_;
  QTimer playTimer_;

  std::shared_ptr<const CaptionSource> source_;
  quint64 loadRequested_ = 0;
  quint64 loadSettled_ = 0;
  QString loadingName_;
  bool announceLoad_ = true;
  std::shared_ptr<const CaptionImage> image_;
  quint64 openRequested_ = 0;
  quint64 openSettled_ = 0;
  quint64 cancelledOpen_ = 0;  // cancelRun(): the photos opened up to this one are not shown
  quint64 cancelledRun_ = 0;   // cancelRun(): the captions up to this one are not shown
  QString openingName_;
  attn::ImageLimits limits_;
  bool started_ = false;
  QString pendingModel_;  // restored settings, opened by start()
  QString pendingInput_;
  QString requestedModel_;       // the model open or opening (a bundled key or a folder)
  CaptionInput requestedInput_;  // the input open or opening
  int pendingHypothesis_ = -1;   // applyState's, applied with the first caption after it
  int pendingWord_ = -1;

  std::shared_ptr<const CaptionOutcome> pending_;
  std::shared_ptr<const CaptionOutcome> outcome_;
  std::shared_ptr<const CaptionImage> shownImage_;          // the image outcome_ captions
  std::map<int, std::shared_ptr<const CaptionMaps>> maps_;  // per hypothesis, at options_.sigma
  bool mapsRequested_ = false;
  mutable QHash<qint64, QImage> composed_;  // (hypothesis, word) -> overlay; cleared when a setting changes
  int hypothesis_ = 0;
  int word_ = 0;
  int revealed_ = 0;
  int openingWord_ = 0;  // where a new caption settles once revealed: the kept word, or the first content word
  render::CaptionOverlayOptions options_;

  // Side panel.
  QScrollArea* sideScroll_ = nullptr;
  ModelGroup modelGroup_;
  QComboBox* modelBox_ = nullptr;
  QLabel* modelLabel_ = nullptr;
  QPushButton* aboutButton_ = nullptr;
  QSpinBox* seedSpin_ = nullptr;
  QComboBox* sampleBox_ = nullptr;
  QLabel* imageLabel_ = nullptr;
  QSpinBox* beamSpin_ = nullptr;
  QTreeWidget* hypotheses_ = nullptr;
  QDoubleSpinBox* sigmaSpin_ = nullptr;
  QSlider* opacitySlider_ = nullptr;
  QComboBox* colormapBox_ = nullptr;
  QDoubleSpinBox* thresholdSpin_ = nullptr;
  QComboBox* modeBox_ = nullptr;
  QSpinBox* perRowSpin_ = nullptr;

  // Main area.
  QLabel* errorBanner_ = nullptr;
  BusyRow* busyRow_ = nullptr;
  QLabel* warningStrip_ = nullptr;
  CaptionStripView* strip_ = nullptr;
  QToolButton* playButton_ = nullptr;
  QLabel* captionLabel_ = nullptr;
  QLabel* inputNote_ = nullptr;
  ImageOverlayView* overlayView_ = nullptr;
  ImageOverlayView* coverageView_ = nullptr;
};

}  // namespace attn::ui
