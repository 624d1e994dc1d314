// The Mechanism Lab tab: two sentences, a side panel with the mechanism and its parameters, and the
// trace drawn as a heatmap plus small multiples. Every edit posts a request to a LabWorker on its own
// thread; the newest request wins and a short single-shot timer applies the latest result, so typing
// never waits for the engine.
#pragma once

#include "session/session.h"
#include "attn/lab/lab.h"
#include "render/colormap.h"
#include "render/heatmap_render.h"
#include "workbenches/common/busy_row.h"
#include "workbenches/lab/lab_worker.h"
#include "workbenches/common/workbench.h"
#include "workbenches/common/worker_thread.h"

#include <QString>
#include <QTimer>

#include <memory>
#include <string>
#include <utility>
#include <vector>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QGroupBox;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QScrollArea;
class QSlider;
class QToolButton;
class QSpinBox;
class QSplitter;

namespace attn::ui {

class DivisorSpinBox;
class HeatmapView;
class MapGrid;

class LabWorkbench : public Workbench {
  Q_OBJECT

 public:
  explicit LabWorkbench(QWidget* parent = nullptr);
  ~LabWorkbench() override;  // stops the worker thread: quit + wait

  // The request the widgets describe now.
  attn::lab::LabRequest request() const;
  // Sets every widget from `request` and runs it once.
  void setRequest(const attn::lab::LabRequest& request);
  // The tab as a session file keeps it: the request, the colour map, the range and the map in view.
  attn::ui::LabSection state() const;
  // Sets every widget from `state` and runs it; the map in view follows when that run's maps are shown.
  void applyState(const attn::ui::LabSection& state);
  // Runs `request` as given (bytes untouched, so the engine reports bad UTF-8 with its offset); the
  // widgets are not changed. `origin` prefixes error messages (a file name), may be empty.
  void submitRequest(attn::lab::LabRequest request, const QString& origin = {});
  // A text file's content: the first non-empty line is the query, the rest the source. Returns false
  // (and reports on the status bar) when the text cannot go into the editors.
  bool loadText(const QByteArray& bytes, const QString& origin);

  // Generations (Workbench): settled() reaches submitted() once the newest request has been shown or refused.
  int workerRuns() const;
  // True while "computing…" is shown for a request that has not come back yet.
  bool isBusy() const { return busy_; }
  void setBusyDelay(int ms) { busyTimer_.setInterval(ms); }
  // The busy row over the views (what runs, the steps done and the time left where the mechanism has steps, Cancel)
  // shows once a run is out for longer than its delay; Cancel (or Esc) drops the run at once (Transformer-XL's stops
  // at its next segment, the others finish in the background) and the previous map stays.
  BusyRow* busyRow() const { return busyRow_; }
  void cancelRun();
  const LabOutcome* outcome() const { return outcome_.get(); }

  const attn::AttentionMap* currentMap() const;
  int currentMapIndex() const { return currentMap_; }
  void setCurrentMapIndex(int index);

  bool takesColormap() const override { return true; }
  void setColormap(render::Colormap map) override;
  render::Colormap colormap() const { return colormap_; }
  void setRangeMode(render::RangeMode mode);
  render::RangeMode rangeMode() const { return rangeMode_; }
  void setSidePanelVisible(bool visible) override;
  bool isSidePanelVisible() const override;
  void resetParameters();

  // ---- Workbench ----
  void saveTo(attn::ui::Session& session) const override;
  QStringList restoreFrom(const attn::ui::Session& session, const QString& origin) override;
  // The heatmap as drawn (PNG, SVG or PDF).
  attn::Result<void> exportCurrentView(const QString& path) const override;
  // The map in view as CSV or NumPy.
  attn::Result<void> exportMatrix(const QString& path) const override;

  HeatmapView* heatmap() const { return heatmap_; }
  MapGrid* grid() const { return grid_; }
  QLineEdit* queryEdit() const { return queryEdit_; }
  QPlainTextEdit* sourceEdit() const { return sourceEdit_; }
  QComboBox* mechanismBox() const { return mechanismBox_; }
  QComboBox* mapBox() const { return mapBox_; }
  // The step slider over the current map's series (routing iterations, hops, rounds, segments...) and its
  // Play button; hidden when the map has no series.
  QSlider* stepSlider() const { return stepSlider_; }
  QToolButton* playButton() const { return playButton_; }
  bool isPlaying() const;
  void setPlaying(bool on);
  void setPlayInterval(int ms) { playTimer_.setInterval(ms); }

 signals:
  void colormapChanged(attn::ui::render::Colormap map);
  void currentMapChanged(int index);

 private:
  // The side panel, group by group, and the main area (lab_panel.cpp).
  void buildSidePanel(QWidget* panel);
  QGroupBox* buildMechanismGroup(QWidget* panel);
  QGroupBox* buildParamsGroup(QWidget* panel);
  QGroupBox* buildDisplayGroup(QWidget* panel);
  void buildMainArea(QWidget* area);
  QHBoxLayout* buildMapRow(QWidget* area);

  void setParamsToWidgets(const attn::lab::LabParams& params);
  void updateMechanismControls();
  void updateHeadsDividend();
  void post();
  void onFinished(LabOutcome outcome);
  void onProgress(quint64 generation, int done, int steps);
  void settleCancelled(quint64 generation);  // the map on screen stays; "Cancelled" on the status bar
  void applyPending() override;
  void showNothing(const QString& why);  // no map: the views empty, `why` in the heatmap's place
  void endBusy();
  void showMap(int index);
  void updateStepControls();  // the step slider follows the map in view
  void advanceStep();         // Play: the next map of the series, stopping at the last
  void setInputError(const QString& message);
  // A mechanism that attends around a target phrase, and a source that marks none: marks one in brackets.
  void markExampleTarget();
  const attn::lab::MechanismInfo& currentInfo() const;

  // Worker and thread: the worker lives on thread_ and is deleted after the thread has stopped.
  WorkerThread thread_;
  std::unique_ptr<LabWorker> worker_;
  // Shows "computing…" when the newest request has not come back within 150 ms (setBusyDelay): a
  // 2,048-token additive run takes about 0.3 s, long enough to look frozen, too short for a progress bar.
  QTimer busyTimer_;
  bool busy_ = false;
  QString idleShapeText_;
  BusyRow* busyRow_ = nullptr;
  quint64 cancelledUpTo_ = 0;  // cancelRun(): every request up to this one is not shown

  quint64 originGeneration_ = 0;
  QString origin_;
  std::shared_ptr<const LabOutcome> pending_;
  std::shared_ptr<const LabOutcome> outcome_;
  int currentMap_ = -1;
  int pendingMap_ = -1;            // applyState's map, shown with the result of the request it set
  quint64 restoreGeneration_ = 0;  // applyState's request: refused, it empties the views
  render::Colormap colormap_ = render::Colormap::Viridis;
  // Distributions on 0..1 unless the user asks for each map's own range (Fixed range 0–1 off).
  render::RangeMode rangeMode_ = render::RangeMode::Unit;

  QSplitter* splitter_ = nullptr;
  QScrollArea* sideScroll_ = nullptr;
  QComboBox* mechanismBox_ = nullptr;
  QLabel* formulaLabel_ = nullptr;
  QLabel* paperLabel_ = nullptr;
  QFormLayout* paramsForm_ = nullptr;
  QComboBox* scoreBox_ = nullptr;
  QComboBox* normaliserBox_ = nullptr;
  QDoubleSpinBox* temperatureSpin_ = nullptr;
  QSpinBox* windowSpin_ = nullptr;
  QDoubleSpinBox* sigmaSpin_ = nullptr;
  DivisorSpinBox* headsSpin_ = nullptr;
  std::vector<QSpinBox*> countSpins_;  // one per attn::lab::count_params() entry, in its order
  QLabel* stepLabel_ = nullptr;
  QSlider* stepSlider_ = nullptr;
  QToolButton* playButton_ = nullptr;
  QTimer playTimer_;
  std::vector<int> series_;  // map indices of the series the map in view belongs to, in order
  QCheckBox* causalCheck_ = nullptr;
  QPushButton* shuffleButton_ = nullptr;
  QComboBox* positionsBox_ = nullptr;
  QSpinBox* seedSpin_ = nullptr;
  QSpinBox* dimSpin_ = nullptr;
  QComboBox* colormapBox_ = nullptr;
  QCheckBox* unitRangeCheck_ = nullptr;

  QLineEdit* queryEdit_ = nullptr;
  QLabel* queryNote_ = nullptr;
  QPlainTextEdit* sourceEdit_ = nullptr;
  QLabel* inputError_ = nullptr;
  QLabel* mapLabel_ = nullptr;
  QComboBox* mapBox_ = nullptr;
  QLabel* shapeLabel_ = nullptr;
  HeatmapView* heatmap_ = nullptr;
  QScrollArea* gridScroll_ = nullptr;
  MapGrid* grid_ = nullptr;
  QLabel* notesLabel_ = nullptr;
  QLabel* warningStrip_ = nullptr;  // the run's warnings (input truncated); hidden when there are none
};

}  // namespace attn::ui
