// The Corpus tab's widgets and requests (corpus_workbench.h); what it does with the worker's outcomes is in
// corpus_results.cpp.
#include "workbenches/corpus/corpus_workbench.h"

#include "render/strings.h"
#include "views/export.h"
#include "views/figure_map_view.h"
#include "views/heatmap_view.h"
#include "workbenches/common/busy_row.h"
#include "workbenches/common/side_panel.h"
#include "workbenches/corpus/corpus_views.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTreeWidget>
#include <QVBoxLayout>

using namespace Qt::StringLiterals;

namespace attn::ui {

namespace {

// No mnemonic in the title: every letter of "Corpus" is taken by a label or a button of another tab (Alt+P: the
// Captioning tab's Photo, Alt+O: the lab's Score, ...), and a clash is worse than none (test_main_window).
Workbench::Identity corpusIdentity() {
  return {attn::ui::SessionTab::Corpus, CorpusWorkbench::tr("Corpus"),
          CorpusWorkbench::tr("What each head does over a corpus: a database written by attnscope-cli corpus"),
          CorpusWorkbench::tr("Open a corpus database (*.sqlite) written by attnscope-cli corpus"),
          CorpusWorkbench::tr("The corpus database: inputs and model")};
}

QTreeWidget* makeHitList(QWidget* parent, const QString& name) {
  auto* list = new QTreeWidget(parent);
  list->setObjectName(name);
  list->setRootIsDecorated(false);
  list->setUniformRowHeights(true);
  list->setAlternatingRowColors(true);
  list->setHeaderLabels({CorpusWorkbench::tr("input"), CorpusWorkbench::tr("Corpu&s"),
                         CorpusWorkbench::tr("query \u2192 key"), CorpusWorkbench::tr("text")});
  list->header()->setStretchLastSection(true);
  list->setColumnWidth(0, 50);
  list->setColumnWidth(1, 80);
  list->setColumnWidth(2, 150);
  list->setToolTip(CorpusWorkbench::tr("Enter or a double-click re-runs the input and shows the head's map"));
  return list;
}

}  // namespace

CorpusWorkbench::CorpusWorkbench(QWidget* parent)
    : Workbench(corpusIdentity(), 0, parent), worker_(std::make_unique<CorpusWorker>()) {
  setObjectName(u"corpusWorkbench"_s);
  connect(worker_.get(), &CorpusWorker::finished, this, &CorpusWorkbench::onFinished, Qt::QueuedConnection);
  connect(worker_.get(), &CorpusWorker::progress, this, &CorpusWorkbench::onProgress, Qt::QueuedConnection);
  thread_.host(worker_.get(), u"corpus worker"_s);
  const SidePanelFrame frame = makeWorkbenchFrame(
      this, u"corpusSidePanel"_s, [this](QWidget* p) { buildSidePanel(p); },
      [this](QWidget* area) { buildMainArea(area); });
  sideScroll_ = frame.scroll;
  connect(busyRow_, &BusyRow::cancelRequested, this, [this] {
    worker_->cancel();
    busyRow_->markCancelling();
  });
}

CorpusWorkbench::~CorpusWorkbench() {
  stopApply();
  worker_->abandon();
  thread_.stop();
  worker_.reset();
}

bool CorpusWorkbench::isCorpusFileName(const QString& path) {
  for (const auto* suffix : {".sqlite", ".sqlite3", ".db"}) {
    if (path.endsWith(QLatin1String(suffix), Qt::CaseInsensitive)) return true;
  }
  return false;
}

void CorpusWorkbench::buildSidePanel(QWidget* panel) {
  auto* layout = new QVBoxLayout(panel);
  auto* dbGroup = new QGroupBox(tr("Corpus database"), panel);
  auto* dbLayout = new QVBoxLayout(dbGroup);
  databaseLabel_ = new QLabel(tr("none open"), dbGroup);
  databaseLabel_->setWordWrap(true);
  auto* openButton = new QPushButton(tr("Open Database\u2026"), dbGroup);
  summaryLabel_ = new QLabel(dbGroup);
  summaryLabel_->setWordWrap(true);
  auto* modelRow = new QHBoxLayout;
  modelEdit_ = new QLineEdit(dbGroup);
  modelEdit_->setObjectName(u"corpusModelEdit"_s);
  modelEdit_->setPlaceholderText(tr("the database's model"));
  modelEdit_->setToolTip(tr("The model of the re-runs and the embedding; empty: the one the database names"));
  auto* modelButton = new QPushButton(tr("Model\u2026"), dbGroup);
  modelRow->addWidget(modelEdit_, 1);
  modelRow->addWidget(modelButton);
  dbLayout->addWidget(databaseLabel_);
  dbLayout->addWidget(openButton);
  dbLayout->addWidget(summaryLabel_);
  dbLayout->addLayout(modelRow);
  layout->addWidget(dbGroup);

  auto* headGroup = new QGroupBox(tr("Heads"), panel);
  auto* form = new QFormLayout(headGroup);
  statisticBox_ = new QComboBox(headGroup);
  for (const auto name : attn::io::corpus_statistics()) {
    statisticBox_->addItem(fromStd(name).replace(u'_', u' '), fromStd(name));
  }
  layerSpin_ = new QSpinBox(headGroup);
  headSpin_ = new QSpinBox(headGroup);
  layerSpin_->setRange(0, 0);
  headSpin_->setRange(0, 0);
  form->addRow(tr("Statistic"), statisticBox_);
  form->addRow(tr("Layer"), layerSpin_);
  form->addRow(tr("Head"), headSpin_);
  layout->addWidget(headGroup);

  auto* searchGroup = new QGroupBox(tr("Search the head"), panel);
  auto* searchForm = new QFormLayout(searchGroup);
  searchBox_ = new QComboBox(searchGroup);
  searchBox_->addItems({tr("highest weight on a pair"), tr("lowest entropy"), tr("highest first-token mass")});
  tokenEdit_ = new QLineEdit(searchGroup);
  tokenEdit_->setObjectName(u"corpusTokenEdit"_s);
  tokenEdit_->setPlaceholderText(tr("a query token, e.g. she"));
  tokenEdit_->setToolTip(tr("Where does the head attend from this token? Its strongest pairs whose query it is"));
  searchForm->addRow(tr("Inputs by"), searchBox_);
  searchForm->addRow(tr("From token"), tokenEdit_);
  layout->addWidget(searchGroup);

  auto* embedGroup = new QGroupBox(tr("Query/key embedding"), panel);
  auto* embedForm = new QFormLayout(embedGroup);
  sampleSpin_ = new QSpinBox(embedGroup);
  sampleSpin_->setRange(1, CorpusSection::kMaxSample);
  sampleSpin_->setValue(20);
  sampleSpin_->setToolTip(tr("Inputs of the corpus run with the model, spread evenly over it"));
  colourBox_ = new QComboBox(embedGroup);
  colourBox_->addItems({tr("position"), tr("token")});
  embedButton_ = new QPushButton(tr("Embed"), embedGroup);
  embedButton_->setToolTip(tr("Run the sample with the model and project the head's queries and keys (PCA)"));
  embedForm->addRow(tr("Inputs"), sampleSpin_);
  embedForm->addRow(tr("Colour by"), colourBox_);
  embedForm->addRow(embedButton_);
  layout->addWidget(embedGroup);
  note_ = new QLabel(panel);
  note_->setObjectName(u"corpusNote"_s);
  note_->setWordWrap(true);
  layout->addWidget(note_);
  layout->addStretch(1);

  connect(openButton, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open Corpus Database"), folderOf(database_),
                                                      tr("Corpus databases (*.sqlite *.sqlite3 *.db);;All files (*)"));
    if (!path.isEmpty()) openDatabase(path);
  });
  connect(modelButton, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getExistingDirectory(this, tr("Model of the Re-runs"), modelEdit_->text());
    if (!path.isEmpty()) setModel(path);
  });
  connect(statisticBox_, &QComboBox::currentIndexChanged, this, [this] {
    showMap();
    requestHead();
  });
  auto headChanged = [this] { selectHead(layerSpin_->value(), headSpin_->value()); };
  connect(layerSpin_, &QSpinBox::valueChanged, this, headChanged);
  connect(headSpin_, &QSpinBox::valueChanged, this, headChanged);
  connect(searchBox_, &QComboBox::currentIndexChanged, this, [this] { requestHead(); });
  connect(tokenEdit_, &QLineEdit::returnPressed, this, [this] { searchToken(tokenEdit_->text()); });
  connect(colourBox_, &QComboBox::currentIndexChanged, this,
          [this](int i) { embeddingView_->setColour(CorpusSection::Colour(i)); });
  connect(embedButton_, &QPushButton::clicked, this, [this] { embed(); });
}

void CorpusWorkbench::buildMainArea(QWidget* area) {
  area_ = area;
  auto* layout = new QVBoxLayout(area);
  layout->setContentsMargins(0, 0, 0, 0);
  busyRow_ = new BusyRow(area, this);
  layout->addWidget(busyRow_);
  auto* rows = new QSplitter(Qt::Vertical, area);
  auto* top = new QSplitter(Qt::Horizontal, rows);
  headsMap_ = new FigureMapView(top);
  headsMap_->setObjectName(u"corpusHeadsMap"_s);
  headsMap_->setEmptyText(
      tr("Open a corpus database (File > Open, or Open Database\u2026): "
         "attnscope-cli corpus --model M --input F --db D.sqlite writes one"));
  headsMap_->setToolTipText([this](int layer, int head) { return cellToolTip(layer, head); });
  connect(headsMap_, &FigureMapView::cellClicked, this, [this](int layer, int head) { selectHead(layer, head); });
  auto* headTabs = new QTabWidget(top);
  boxPlot_ = new CorpusBoxPlot(headTabs);
  headTabs->addTab(boxPlot_, tr("Distribution"));
  headsModel_ = new CorpusHeadsModel(this);
  headsProxy_ = new QSortFilterProxyModel(this);
  headsProxy_->setSourceModel(headsModel_);
  headsProxy_->setSortRole(CorpusHeadsModel::SortRole);
  headsTable_ = new QTableView(headTabs);
  headsTable_->setModel(headsProxy_);
  headsTable_->setSortingEnabled(true);
  headsTable_->setSelectionBehavior(QAbstractItemView::SelectRows);
  headsTable_->setSelectionMode(QAbstractItemView::SingleSelection);
  headsTable_->verticalHeader()->setVisible(false);
  headsTable_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  connect(headsTable_, &QTableView::activated, this, [this](const QModelIndex& index) {
    const QModelIndex source = headsProxy_->mapToSource(index);
    if (overview_) selectHead(source.row() / overview_->heads, source.row() % overview_->heads);
  });
  headTabs->addTab(headsTable_, tr("Heads by statistic"));
  top->addWidget(headsMap_);
  top->addWidget(headTabs);
  top->setStretchFactor(0, 3);
  top->setStretchFactor(1, 2);

  auto* bottom = new QSplitter(Qt::Horizontal, rows);
  searchTabs_ = new QTabWidget(bottom);
  searchList_ = makeHitList(searchTabs_, u"corpusSearchResults"_s);
  tokenList_ = makeHitList(searchTabs_, u"corpusTokenResults"_s);
  rerunView_ = new HeatmapView(HeatmapView::Style::Full, searchTabs_);
  rerunView_->setEmptyText(
      tr("Enter or double-click a search result: its input is run again and the head's map "
         "shows here"));
  searchTabs_->addTab(searchList_, tr("Strongest inputs"));
  searchTabs_->addTab(tokenList_, tr("Token search"));
  searchTabs_->addTab(rerunView_, tr("Attention map"));
  connect(searchList_, &QTreeWidget::itemActivated, this,
          [this](QTreeWidgetItem* item) { rerunRow(searchList_->indexOfTopLevelItem(item), false); });
  connect(tokenList_, &QTreeWidget::itemActivated, this,
          [this](QTreeWidgetItem* item) { rerunRow(tokenList_->indexOfTopLevelItem(item), true); });
  embeddingView_ = new CorpusEmbeddingView(bottom);
  embeddingView_->setObjectName(u"corpusEmbedding"_s);
  embeddingView_->clear(tr("Press Embed: the head's queries and keys"));
  bottom->addWidget(searchTabs_);
  bottom->addWidget(embeddingView_);
  bottom->setStretchFactor(0, 1);
  bottom->setStretchFactor(1, 1);
  bottom->setSizes({1000, 1000});  // halves, whatever the lists' size hints ask
  rows->addWidget(top);
  rows->addWidget(bottom);
  layout->addWidget(rows, 1);
}

void CorpusWorkbench::submit(CorpusRequest request) {
  const auto job = std::size_t(request.job);
  latest_[job] = ++submitted_;
  // Every job says what it does where it takes longer than the row's delay (a token search scans every top pair of
  // a million-input corpus: 10 s); the row goes once every job is answered (applyOne).
  switch (request.job) {
    case CorpusJob::Open: busyRow_->start(tr("Opening %1\u2026").arg(fileNameOf(request.database))); break;
    case CorpusJob::Head: busyRow_->start(tr("Reading L%1.H%2 over the corpus\u2026").arg(layer_).arg(head_)); break;
    case CorpusJob::Token:
      busyRow_->start(tr("Searching L%1.H%2's top pairs for the query %3\u2026")
                          .arg(layer_)
                          .arg(head_)
                          .arg(quoted(request.token.trimmed())));
      break;
    case CorpusJob::Embed: busyRow_->start(tr("Running the sample for the embedding\u2026")); break;
    case CorpusJob::Rerun: busyRow_->start(tr("Running the input again\u2026")); break;
  }
  worker_->submit(submitted_, std::move(request));
}

bool CorpusWorkbench::outstanding() const {
  for (int i = 0; i < kCorpusJobs; ++i) {
    if (answered_[std::size_t(i)] < latest_[std::size_t(i)]) return true;
  }
  return false;
}

bool CorpusWorkbench::isIdle() const { return Workbench::isIdle() && !outstanding(); }

bool CorpusWorkbench::showsNewest(quint64) const { return !outstanding() && !isApplyScheduled(); }

void CorpusWorkbench::openDatabase(const QString& path) {
  database_ = absolutePath(path);
  overview_.reset();
  databaseLabel_->setText(fileNameOf(database_));
  databaseLabel_->setToolTip(database_);
  note_->setText(tr("Opening %1\u2026").arg(fileNameOf(database_)));
  CorpusRequest r;
  r.job = CorpusJob::Open;
  r.database = database_;
  submit(std::move(r));
}

void CorpusWorkbench::setModel(const QString& path) { modelEdit_->setText(path); }

QString CorpusWorkbench::model() const { return modelEdit_->text().trimmed(); }

void CorpusWorkbench::setStatistic(const QString& name) {
  const int index = statisticBox_->findData(name);
  if (index >= 0) statisticBox_->setCurrentIndex(index);
}

QString CorpusWorkbench::statistic() const { return statisticBox_->currentData().toString(); }

int CorpusWorkbench::statisticIndex() const { return std::max(0, statisticBox_->currentIndex()); }

void CorpusWorkbench::selectHead(int layer, int head) {
  if (layer == layer_ && head == head_ && layerSpin_->value() == layer && headSpin_->value() == head) return;
  layer_ = layer;
  head_ = head;
  {
    const QSignalBlocker a(layerSpin_), b(headSpin_);
    layerSpin_->setValue(layer);
    headSpin_->setValue(head);
  }
  if (!overview_) return;
  showMap();
  requestHead();
  if (!tokenEdit_->text().trimmed().isEmpty()) searchToken(tokenEdit_->text());
}

void CorpusWorkbench::setSearch(attn::io::CorpusSearch search) { searchBox_->setCurrentIndex(int(search)); }

void CorpusWorkbench::requestHead() {
  if (!overview_) return;
  CorpusRequest r;
  r.job = CorpusJob::Head;
  r.layer = layer_;
  r.head = head_;
  r.statistic = statistic();
  r.search = attn::io::CorpusSearch(searchBox_->currentIndex());
  submit(std::move(r));
}

void CorpusWorkbench::searchToken(const QString& token) {
  if (tokenEdit_->text() != token) tokenEdit_->setText(token);
  if (!overview_ || token.trimmed().isEmpty()) return;
  CorpusRequest r;
  r.job = CorpusJob::Token;
  r.layer = layer_;
  r.head = head_;
  r.token = token;
  submit(std::move(r));
}

void CorpusWorkbench::embed(int sample) {
  if (sample > 0) sampleSpin_->setValue(sample);
  if (!overview_) {
    embedWanted_ = sampleSpin_->value();
    return;
  }
  CorpusRequest r;
  r.job = CorpusJob::Embed;
  r.layer = layer_;
  r.head = head_;
  r.model = model();
  r.sample = sampleSpin_->value();
  submit(std::move(r));
}

void CorpusWorkbench::rerunRow(int row, bool tokens) {
  const auto& hits = tokens ? tokenHits_ : searchHits_;
  if (row < 0 || std::size_t(row) >= hits.size()) return;
  CorpusRequest r;
  r.job = CorpusJob::Rerun;
  r.layer = layer_;
  r.head = head_;
  r.model = model();
  r.input = hits[std::size_t(row)].input;
  submit(std::move(r));
}

void CorpusWorkbench::saveTo(attn::ui::Session& session) const {
  CorpusSection s;
  s.database = toPath(database_).string();
  s.model = toPath(model()).string();
  s.statistic = statistic().toStdString();
  s.layer = layer_;
  s.head = head_;
  s.search = CorpusSection::Search(searchBox_->currentIndex());
  s.token = tokenEdit_->text().toStdString();
  s.sample = sampleSpin_->value();
  s.colour = CorpusSection::Colour(colourBox_->currentIndex());
  session.corpus = s;
}

QStringList CorpusWorkbench::restoreFrom(const attn::ui::Session& session, const QString& origin) {
  const CorpusSection s = session.corpus.value_or(CorpusSection{});
  QStringList notes;
  setModel(pathFromBytes(s.model));
  setStatistic(fromStd(s.statistic));
  searchBox_->setCurrentIndex(int(s.search));
  tokenEdit_->setText(fromStd(s.token));
  sampleSpin_->setValue(s.sample);
  colourBox_->setCurrentIndex(int(s.colour));
  layer_ = s.layer;
  head_ = s.head;
  const QString db = pathFromBytes(s.database);
  if (!db.isEmpty() && !pathExists(db)) {
    notes << goneNote(origin, db, tr("the Corpus tab"));
  } else if (!db.isEmpty()) {
    openDatabase(db);
  }
  return notes;
}

attn::Result<void> CorpusWorkbench::exportCurrentView(const QString& path) const { return exportWidget(*area_, path); }

void CorpusWorkbench::setSidePanelVisible(bool visible) { sideScroll_->setVisible(visible); }

bool CorpusWorkbench::isSidePanelVisible() const { return !sideScroll_->isHidden(); }

}  // namespace attn::ui
