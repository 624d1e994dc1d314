// The Corpus tab (issue 46): a corpus database written by `attnscope-cli corpus`, opened read-only on a worker thread.
//   - the heads map: a layers x heads map of one statistic's mean over the corpus (the statistic chosen in a combo
//     box; a cell's tool tip gives layer, head, mean, sd and n; a click selects the head), the selected head's
//     distribution of the statistic as a box plot, and every head in a table sortable by any statistic's mean;
//   - search (exBERT): the inputs where the selected head is strongest (highest weight on one query -> key pair,
//     lowest entropy or highest first-token mass), each row the input's text with the pair's tokens; Enter or a
//     double-click re-runs the input with the model and shows the head's map; and a token search, the head's top
//     pairs whose query is a given token ("where does L3.H2 attend from 'she'?");
//   - the query/key embedding (AttentionViz): the head's queries and keys over a sample of N inputs, run with the
//     model and projected by analysis::qk_embedding, drawn as a scatter (queries round, keys triangles, coloured by
//     position or by token), a point's tool tip its token in context.
// The model is the one the database names (its meta), unless another is chosen.
#pragma once

#include "workbenches/common/workbench.h"
#include "workbenches/common/worker_thread.h"
#include "workbenches/corpus/corpus_worker.h"

#include <QPointer>

#include <array>
#include <memory>
#include <optional>

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QScrollArea;
class QSortFilterProxyModel;
class QSpinBox;
class QTabWidget;
class QTableView;
class QTreeWidget;
class QTreeWidgetItem;

namespace attn::ui {

class BusyRow;
class CorpusBoxPlot;
class CorpusEmbeddingView;
class CorpusHeadsModel;
class FigureMapView;
class HeatmapView;

class CorpusWorkbench : public Workbench {
  Q_OBJECT

 public:
  explicit CorpusWorkbench(QWidget* parent = nullptr);
  ~CorpusWorkbench() override;

  // A corpus database's name (*.sqlite, *.sqlite3, *.db): what File > Open hands this tab.
  static bool isCorpusFileName(const QString& path);

  // Opens a database (asynchronously; a file that is not one is refused on the status bar and by failed()).
  void openDatabase(const QString& path);
  QString database() const { return database_; }
  // The model of the re-runs and the embedding; empty: the database's.
  void setModel(const QString& path);
  QString model() const;
  void setStatistic(const QString& name);
  QString statistic() const;
  // The head in view (applied once the database is open when it is not yet).
  void selectHead(int layer, int head);
  int layer() const { return layer_; }
  int head() const { return head_; }
  void setSearch(attn::io::CorpusSearch search);
  void searchToken(const QString& token);
  // Runs the embedding of the selected head over `sample` inputs (0: the spin box's).
  void embed(int sample = 0);
  // Re-runs row `row` of the search results (or, with `tokens`, of the token search) and shows its map.
  void rerunRow(int row, bool tokens = false);

  const CorpusOverview* overview() const { return overview_.get(); }
  FigureMapView* headsMap() const { return headsMap_; }
  CorpusBoxPlot* boxPlot() const { return boxPlot_; }
  QTableView* headsTable() const { return headsTable_; }
  QTreeWidget* searchResults() const { return searchList_; }
  QTreeWidget* tokenResults() const { return tokenList_; }
  HeatmapView* rerunView() const { return rerunView_; }
  CorpusEmbeddingView* embeddingView() const { return embeddingView_; }
  QLabel* note() const { return note_; }
  BusyRow* busyRow() const { return busyRow_; }

  bool isIdle() const override;
  bool showsNewest(quint64 generation) const override;
  void saveTo(attn::ui::Session& session) const override;
  QStringList restoreFrom(const attn::ui::Session& session, const QString& origin) override;
  attn::Result<void> exportCurrentView(const QString& path) const override;
  bool hasMatrix() const override { return false; }
  void setSidePanelVisible(bool visible) override;
  bool isSidePanelVisible() const override;

 protected:
  void applyPending() override;

 private:
  void buildSidePanel(QWidget* panel);
  void buildMainArea(QWidget* area);
  void submit(CorpusRequest request);
  void onFinished(const attn::ui::CorpusOutcome& outcome);
  void onProgress(quint64 generation, int done, int of);
  void applyOne(const CorpusOutcome& outcome);
  void showOverview(std::shared_ptr<const CorpusOverview> overview);
  void showHead(const CorpusOutcome& outcome);
  void showHits(QTreeWidget* list, const std::vector<attn::io::CorpusHit>& hits, bool byWeight);
  void showMap();
  void showError(const CorpusOutcome& outcome);
  void requestHead();
  int statisticIndex() const;
  QString cellToolTip(int layer, int head) const;
  bool outstanding() const;

  WorkerThread thread_;
  std::unique_ptr<CorpusWorker> worker_;
  std::array<quint64, kCorpusJobs> latest_{};    // the newest request of each job
  std::array<quint64, kCorpusJobs> answered_{};  // its outcome shown (or refused)
  std::array<std::optional<CorpusOutcome>, kCorpusJobs> pending_;

  QString database_;
  std::shared_ptr<const CorpusOverview> overview_;
  int layer_ = 0, head_ = 0;
  std::optional<int> embedWanted_;  // an embedding asked for before the database was open
  std::vector<attn::io::CorpusHit> searchHits_, tokenHits_;

  QScrollArea* sideScroll_ = nullptr;
  QLabel* databaseLabel_ = nullptr;
  QLabel* summaryLabel_ = nullptr;
  QLineEdit* modelEdit_ = nullptr;
  QComboBox* statisticBox_ = nullptr;
  QSpinBox* layerSpin_ = nullptr;
  QSpinBox* headSpin_ = nullptr;
  QComboBox* searchBox_ = nullptr;
  QLineEdit* tokenEdit_ = nullptr;
  QSpinBox* sampleSpin_ = nullptr;
  QComboBox* colourBox_ = nullptr;
  QPushButton* embedButton_ = nullptr;
  QLabel* note_ = nullptr;
  BusyRow* busyRow_ = nullptr;
  FigureMapView* headsMap_ = nullptr;
  CorpusBoxPlot* boxPlot_ = nullptr;
  CorpusHeadsModel* headsModel_ = nullptr;
  QSortFilterProxyModel* headsProxy_ = nullptr;
  QTableView* headsTable_ = nullptr;
  QTabWidget* searchTabs_ = nullptr;
  QTreeWidget* searchList_ = nullptr;
  QTreeWidget* tokenList_ = nullptr;
  HeatmapView* rerunView_ = nullptr;
  CorpusEmbeddingView* embeddingView_ = nullptr;
  QWidget* area_ = nullptr;
};

}  // namespace attn::ui
