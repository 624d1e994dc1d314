// The Corpus tab (issue 46) on a database the test writes from real runs of the bundled stories260k: the heads map
// holds head_summary's means, the search finds the input where the head's weight is highest (worked out here from
// the records), the token search finds the head's pairs from "she", a result re-runs to the head's map, and the
// query/key embedding has a point per query and key of the sample. Refused: a file that is not a corpus database,
// a model that is not there.
#include "qt_test_registry.h"
#include "ui_test_support.h"
#include "attn/analysis/corpus.h"
#include "attn/io/corpus_db.h"
#include "attn/models/transformer.h"
#include "render/strings.h"
#include "views/figure_map_view.h"
#include "workbenches/common/busy_row.h"
#include "views/heatmap_view.h"
#include "workbenches/corpus/corpus_views.h"
#include "workbenches/corpus/corpus_workbench.h"

#include <QComboBox>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>

#include <set>

using namespace attn::ui;
using namespace Qt::StringLiterals;

namespace test_corpus_tab {

namespace {

const char* const kModel = ATTN_SOURCE_DIR "/resources/models/stories260k";

bool settle(CorpusWorkbench& wb, int ms = 60000) {
  QElapsedTimer timer;
  timer.start();
  while (timer.elapsed() < ms) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    if (wb.isIdle() && wb.submitted() > 0) return true;
    QTest::qWait(10);
  }
  return false;
}

// The token as the database compares it: no word-start mark, lower case.
std::string bare(std::string token) {
  for (const std::string mark : {"\u2581", "\u0120", " "}) {
    while (token.starts_with(mark)) token.erase(0, mark.size());
  }
  for (char& c : token) c = char(std::tolower(static_cast<unsigned char>(c)));
  return token;
}

}  // namespace

class TestCorpusTab : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase();
  void opensAndShowsTheHeadsMeans();
  void searchFindsTheStrongestInput();
  void tokenSearchAndRerun();
  void embeddingHasAPointPerQueryAndKey();
  void refusesWhatIsNotACorpus();

 private:
  QTemporaryDir dir_;
  QString db_;
  std::vector<attn::analysis::CorpusRecord> records_;
  static constexpr int kLayer = 1, kHead = 2;
};

void TestCorpusTab::initTestCase() {
  QVERIFY(dir_.isValid());
  testing::isolateSettings(dir_.path());
  auto model = attn::models::TransformerModel::load(kModel);
  QVERIFY2(model.has_value(), model ? "" : model.error().message().c_str());
  attn::models::TransformerRunner runner(*model);
  const char* texts[] = {"Once upon a time she went to the park.",  "The cat sat on the mat and she smiled.",
                         "Tom had a red ball. He liked it.",        "She said hello to the big dog.",
                         "Lily and Ben played in the sun all day.", "Mom gave her a hug and she was happy."};
  attn::io::CorpusMeta meta;
  meta.model = kModel;
  meta.model_description = (*model)->description();
  meta.input = "stories.txt";
  meta.shard = "0/1";
  db_ = dir_.filePath(u"stories.sqlite"_s);
  auto db = attn::io::CorpusDb::open_for_run(toPath(db_), meta);
  QVERIFY(db.has_value());
  std::int64_t id = 0;
  for (const char* text : texts) {
    attn::models::RunOptions options;
    options.top_k = 0;
    auto run = runner.run_text(text, {}, options);
    QVERIFY(run.has_value());
    attn::analysis::CorpusRecord r;
    r.id = id++;
    r.text = text;
    r.tokens = int(run->attention.tokens.size());
    r.token_text = run->attention.tokens;
    r.heads = attn::analysis::corpus_head_rows(run->attention, run->ids);
    r.pairs = attn::analysis::corpus_top_pairs(run->attention, true, 5);
    QVERIFY(db->add(r).has_value());
    records_.push_back(std::move(r));
  }
  QVERIFY(db->close().has_value());
}

void TestCorpusTab::opensAndShowsTheHeadsMeans() {
  CorpusWorkbench wb;
  wb.resize(1400, 900);
  wb.show();
  QVERIFY(!wb.headsMap()->hasMap());
  wb.openDatabase(db_);
  QVERIFY(settle(wb));
  QVERIFY2(wb.overview() != nullptr, qPrintable(wb.note()->text()));
  auto db = attn::io::CorpusDb::open_read(toPath(db_));
  QVERIFY(db.has_value());
  for (const QString& statistic : {u"entropy"_s, u"first_token_mass"_s}) {
    wb.setStatistic(statistic);
    QVERIFY(settle(wb));
    const auto summary = db->head_summary(statistic.toStdString());
    QVERIFY(summary.has_value());
    const auto& map = *wb.headsMap()->figure().map;
    QCOMPARE(map.weights.rows(), 5);  // stories260k: 5 layers of 8 heads
    QCOMPARE(map.weights.cols(), 8);
    QCOMPARE(summary->size(), std::size_t(40));
    for (const auto& h : *summary) {
      QCOMPARE(map.weights(h.layer, h.head), float(h.mean));
    }
    const auto& cell = summary->back();
    const QString tip = wb.headsMap()->cellToolTip(cell.layer, cell.head);
    QVERIFY2(
        tip.contains(QString::number(cell.n)) && tip.contains(u"layer %1, head %2"_s.arg(cell.layer).arg(cell.head)),
        qPrintable(tip));
  }
  // The box plot is the selected head's values; the table sorts by a statistic.
  wb.selectHead(kLayer, kHead);
  QVERIFY(settle(wb));
  QCOMPARE(wb.boxPlot()->count(), int(records_.size()));
  QCOMPARE(wb.headsTable()->model()->rowCount(), wb.overview()->layers * wb.overview()->heads);
  wb.headsTable()->sortByColumn(2, Qt::DescendingOrder);  // entropy, highest first
  const double first = wb.headsTable()->model()->index(0, 2).data(CorpusHeadsModel::SortRole).toDouble();
  const double last = wb.headsTable()
                          ->model()
                          ->index(wb.headsTable()->model()->rowCount() - 1, 2)
                          .data(CorpusHeadsModel::SortRole)
                          .toDouble();
  QVERIFY(first >= last);
  testing::saveShot(wb.grab().toImage(), u"corpus_tab"_s);
}

void TestCorpusTab::searchFindsTheStrongestInput() {
  CorpusWorkbench wb;
  wb.selectHead(kLayer, kHead);
  wb.openDatabase(db_);
  QVERIFY(settle(wb));
  QCOMPARE(wb.layer(), kLayer);
  // Where the head's strongest pair is strongest, from the records themselves.
  std::int64_t strongest = -1;
  float best = -1;
  for (const auto& r : records_) {
    for (const auto& p : r.pairs) {
      if (p.layer == kLayer && p.head == kHead && p.rank == 0 && p.weight > best) {
        best = p.weight;
        strongest = r.id;
      }
    }
  }
  QVERIFY(wb.searchResults()->topLevelItemCount() > 0);
  QCOMPARE(wb.searchResults()->topLevelItem(0)->text(0).toLongLong(), strongest);
  QCOMPARE(wb.searchResults()->topLevelItem(0)->text(3), fromStd(records_[std::size_t(strongest)].text));
  QVERIFY(wb.searchResults()->topLevelItem(0)->text(2).contains(u"\u2192"_s));
  // Lowest entropy first.
  wb.setSearch(attn::io::CorpusSearch::LowEntropy);
  QVERIFY(settle(wb));
  std::int64_t sharpest = -1;
  float lowest = 1e9f;
  for (const auto& r : records_) {
    for (const auto& h : r.heads) {
      if (h.layer == kLayer && h.head == kHead && h.entropy < lowest) {
        lowest = h.entropy;
        sharpest = r.id;
      }
    }
  }
  QCOMPARE(wb.searchResults()->topLevelItem(0)->text(0).toLongLong(), sharpest);
}

void TestCorpusTab::tokenSearchAndRerun() {
  // A head with a top pair from "she" in the records (the first such pair's).
  int layer = -1, head = -1;
  for (const auto& r : records_) {
    for (const auto& p : r.pairs) {
      if (layer < 0 && bare(r.token_text[std::size_t(p.query)]) == "she") {
        layer = p.layer;
        head = p.head;
      }
    }
  }
  QVERIFY2(layer >= 0, "the sample texts have a pair from 'she' in some head's top 5");
  CorpusWorkbench wb;
  wb.openDatabase(db_);
  QVERIFY(settle(wb));
  wb.resize(1200, 800);
  wb.show();
  wb.selectHead(layer, head);
  QVERIFY(settle(wb));
  QVERIFY2(!wb.busyRow()->isRunning(), "the row goes once every request is answered");
  wb.busyRow()->setDelay(0);
  wb.searchToken(u"she"_s);
  // The search says what it does while it is out (shown past the row's delay: a million inputs take seconds).
  QVERIFY(wb.busyRow()->isRunning());
  testing::saveShot(wb.grab().toImage(), u"corpus-token-search-busy"_s);
  QVERIFY2(wb.busyRow()->label()->text().contains(u"\u201cshe\u201d"_s), qPrintable(wb.busyRow()->label()->text()));
  QVERIFY(settle(wb));
  QVERIFY2(!wb.busyRow()->isRunning(), "the row goes once every request is answered");
  // The head's top pairs whose query token is "she", from the records.
  std::multiset<std::int64_t> expected;
  for (const auto& r : records_) {
    for (const auto& p : r.pairs) {
      if (p.layer == layer && p.head == head && bare(r.token_text[std::size_t(p.query)]) == "she") {
        expected.insert(r.id);
      }
    }
  }
  QVERIFY2(!expected.empty(), "the sample texts have pairs from 'she' in the head's top 5");
  std::multiset<std::int64_t> found;
  for (int i = 0; i < wb.tokenResults()->topLevelItemCount(); ++i) {
    found.insert(wb.tokenResults()->topLevelItem(i)->text(0).toLongLong());
    QVERIFY(wb.tokenResults()->topLevelItem(i)->text(2).startsWith(u"\u201cshe\u201d"_s, Qt::CaseInsensitive));
  }
  QVERIFY(found == expected);
  // Enter on the first row: the input is run again and the head's map shows.
  wb.rerunRow(0, true);
  QVERIFY(settle(wb));
  QVERIFY2(wb.rerunView()->map() != nullptr, qPrintable(wb.note()->text()));
  const std::int64_t input = wb.tokenResults()->topLevelItem(0)->text(0).toLongLong();
  QCOMPARE(wb.rerunView()->map()->weights.rows(), records_[std::size_t(input)].tokens);
  QCOMPARE(wb.rerunView()->map()->layer, layer);
  QCOMPARE(wb.rerunView()->map()->head, head);
  wb.resize(1400, 900);
  testing::saveShot(wb.grab().toImage(), u"corpus_rerun"_s);
}

void TestCorpusTab::embeddingHasAPointPerQueryAndKey() {
  CorpusWorkbench wb;
  wb.resize(1400, 900);
  wb.show();
  wb.selectHead(kLayer, kHead);
  wb.embed(4);  // asked before the database is open: run once it is
  wb.openDatabase(db_);
  QVERIFY(settle(wb));
  const CorpusEmbedding* e = wb.embeddingView()->embedding();
  QVERIFY2(e != nullptr, qPrintable(wb.note()->text()));
  QCOMPARE(int(e->inputs.size()), 4);
  int tokens = 0;
  for (const auto id : e->inputs) tokens += records_[std::size_t(id)].tokens;
  QCOMPARE(wb.embeddingView()->pointCount(), 2 * tokens);
  const QString tip = wb.embeddingView()->pointToolTip(0);
  QVERIFY2(tip.startsWith(u"query"_s) && tip.contains(u"<b>"_s), qPrintable(tip));
  QVERIFY(wb.embeddingView()->pointToolTip(wb.embeddingView()->pointCount() - 1).startsWith(u"key"_s));
  testing::saveShot(wb.grab().toImage(), u"corpus_embedding"_s);
  // A re-run asked for while an embedding runs leaves the embedding be: both arrive.
  wb.embed(6);
  wb.rerunRow(0);
  QVERIFY(settle(wb));
  QVERIFY2(wb.embeddingView()->embedding() && wb.embeddingView()->embedding()->inputs.size() == 6,
           qPrintable(wb.note()->text()));
  QVERIFY(wb.rerunView()->map() != nullptr);
}

void TestCorpusTab::refusesWhatIsNotACorpus() {
  CorpusWorkbench wb;
  QSignalSpy failed(&wb, &CorpusWorkbench::failed);
  const QString junk = dir_.filePath(u"notes.sqlite"_s);
  {
    QFile f(junk);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("just some text, not a database at all...........................................");
  }
  wb.openDatabase(junk);
  QVERIFY(settle(wb));
  QCOMPARE(failed.count(), 1);
  QVERIFY(wb.overview() == nullptr);
  QVERIFY2(wb.note()->text().contains(u"notes.sqlite"_s), qPrintable(wb.note()->text()));
  // A model that is not there: the database opens, the embedding says which model is missing.
  wb.openDatabase(db_);
  QVERIFY(settle(wb));
  QVERIFY(wb.overview() != nullptr);
  wb.setModel(dir_.filePath(u"no-such-model"_s));
  wb.embed(2);
  QVERIFY(settle(wb));
  QVERIFY(wb.embeddingView()->embedding() == nullptr);
  QVERIFY2(wb.note()->text().contains(u"no-such-model"_s), qPrintable(wb.note()->text()));
}

ATTN_QT_TEST(TestCorpusTab, Widgets);

}  // namespace test_corpus_tab
#include "test_corpus_tab.moc"
