// The Transformer tab's interventions (issue 43) on the bundled induction-gpt2: head ablation from the model view
// (the predictions before and after, the outlines, restore) and Compare (B - A, or side by side with the reason).
#include "qt_test_registry.h"
#include "attn/layered_trace.h"
#include "session/session.h"
#include "ui_test_support.h"
#include "views/head_grid_view.h"
#include "models/head_stats_model.h"
#include "views/heatmap_view.h"
#include "views/token_lines_view.h"
#include "workbenches/transformer/transformer_workbench.h"
#include "workbenches/transformer/transformer_worker.h"

#include <QCheckBox>
#include <QComboBox>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QStandardItemModel>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <cmath>

using namespace attn::ui;
using namespace Qt::StringLiterals;

namespace test_transformer_intervention {

namespace {

constexpr const char* kText = "abcdefghijklabcdefgh";     // the induction heads predict "i"
constexpr const char* kCorrupt = "abcdefghxjklabcdefgh";  // the same length, "x" where "i" was

bool settle(TransformerWorkbench& wb, int ms = 30000) {
  QElapsedTimer timer;
  timer.start();
  while (timer.elapsed() < ms) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    if (wb.isIdle() && wb.submitted() > 0 && wb.outcome()) return true;
    QTest::qWait(10);
  }
  return false;
}

// p(token) at the last position of the run in view (its top-5 list).
double probabilityOf(const attn::models::TransformerRun& run, const std::string& token) {
  if (run.predictions.empty()) return -1;
  for (const auto& c : run.predictions.back().top) {
    if (c.text == token) return double(c.probability);
  }
  return 0;
}

QStringList listed(const QListWidget& list) {
  QStringList out;
  for (int i = 0; i < list.count(); ++i) out.append(list.item(i)->text());
  return out;
}

void open(TransformerWorkbench& wb) {
  wb.resize(1320, 860);
  wb.show();
  QVERIFY(QTest::qWaitForWindowExposed(&wb));
  QVERIFY(wb.openDemo());
  QVERIFY2(settle(wb), qPrintable(wb.lastError()));
  wb.setText(QString::fromLatin1(kText));
  QVERIFY2(settle(wb), qPrintable(wb.lastError()));
  QTRY_VERIFY_WITH_TIMEOUT(wb.outcome()->request.text == kText, 30000);
}

}  // namespace

class TestTransformerIntervention : public QObject {
  Q_OBJECT

 private slots:
  void ablatingTheCopyingHeadsDropsTheInductionAndRestoreBringsItBack() {
    TransformerWorkbench wb;
    open(wb);
    const double before = probabilityOf(*wb.outcome()->run, "i");
    QVERIFY2(std::abs(before - 0.541) < 0.002, qPrintable(QString::number(before)));
    QVERIFY(!wb.restoreButton()->isEnabled());

    // Ctrl+click on heads 1.1, 1.2 and 1.3 of the model view; a plain click only opens a head.
    wb.setView(TransformerWorkbench::View::Model);
    auto* grid = wb.headGrid();
    QTRY_VERIFY(grid->isVisible() && grid->layers() == 2);
    QTest::mouseClick(grid, Qt::LeftButton, {}, grid->tileRect(0, 2).center());
    QVERIFY(wb.ablatedHeads().empty());
    for (int head = 1; head <= 3; ++head) {
      QTest::mouseClick(grid, Qt::LeftButton, Qt::ControlModifier, grid->tileRect(1, head).center());
    }
    QCOMPARE(wb.ablatedHeads().size(), std::size_t(3));
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    QTRY_VERIFY_WITH_TIMEOUT(wb.outcome()->plainRun != nullptr && wb.outcome()->request.ablated.size() == 3, 30000);
    const double after = probabilityOf(*wb.outcome()->run, "i");
    QVERIFY2(std::abs(after - 0.067) < 0.002, qPrintable(QString::number(after)));
    // The plain run kept beside it (captured: the same sums in another order, within float rounding).
    QVERIFY(std::abs(probabilityOf(*wb.outcome()->plainRun, "i") - before) < 1e-5);
    const QStringList lines = listed(*wb.predictions());
    QVERIFY2(lines.filter(u"0.541 \u2192 0.067  (-0.474)"_s).size() == 1, qPrintable(lines.join(u'\n')));
    QVERIFY2(wb.matrixTitle()->text().contains(u"ablated (zero): 1.1, 1.2, 1.3"_s),
             qPrintable(wb.matrixTitle()->text()));
    QVERIFY(wb.restoreButton()->isEnabled());

    // Outlined in the model view: the dashed magenta frame inside each ablated tile, none in the others.
    QCOMPARE(grid->ablated().size(), std::size_t(3));
    const QImage shot = grid->grab().toImage();
    const auto magentaOnEdge = [&](int layer, int head) {
      const QRect r = grid->tileRect(layer, head);
      int count = 0;
      for (int x = r.left(); x <= r.right(); ++x) {
        const QColor c =
            shot.pixelColor(x * shot.width() / grid->width(), (r.top() + 2) * shot.height() / grid->height());
        if (c.red() > 200 && c.green() < 80 && c.blue() > 150) ++count;
      }
      return count;
    };
    QVERIFY(magentaOnEdge(1, 2) > 5);
    QCOMPARE(magentaOnEdge(0, 2), 0);
    // ... in the head view's swatches of layer 1, and in the statistics table's rows.
    wb.tokenLines()->setLayer(1);
    QVERIFY(wb.tokenLines()->isHeadAblated(2) && !wb.tokenLines()->isHeadAblated(0));
    wb.tokenLines()->setLayer(0);
    QVERIFY(!wb.tokenLines()->isHeadAblated(2));
    const int row = wb.statsModel()->rowOf(1, 2);
    QVERIFY(row >= 0);
    QVERIFY(wb.statsModel()->index(row, 0).data(Qt::BackgroundRole).isValid());
    QVERIFY(!wb.statsModel()->index(wb.statsModel()->rowOf(0, 2), 0).data(Qt::BackgroundRole).isValid());

    // Another head: a re-run of the same captured plain run (nothing before the ablated layer recomputed).
    const auto* captured = wb.outcome()->plainRun.get();
    QVERIFY(captured->activations != nullptr);
    wb.toggleAblation(1, 3);
    QTRY_VERIFY_WITH_TIMEOUT(settle(wb) && wb.outcome()->request.ablated.size() == 2, 30000);
    QCOMPARE(wb.outcome()->plainRun.get(), captured);
    wb.toggleAblation(1, 3);
    QTRY_VERIFY_WITH_TIMEOUT(settle(wb) && wb.outcome()->request.ablated.size() == 3, 30000);
    QCOMPARE(probabilityOf(*wb.outcome()->run, "i"), after);

    // A new text keeps the ablated heads and runs again with them.
    wb.setText(QString::fromLatin1(kCorrupt));
    QTRY_VERIFY_WITH_TIMEOUT(settle(wb) && wb.outcome()->request.text == kCorrupt, 30000);
    QCOMPARE(wb.outcome()->request.ablated.size(), std::size_t(3));
    QVERIFY(wb.outcome()->plainRun != nullptr);
    wb.setText(QString::fromLatin1(kText));
    QTRY_VERIFY_WITH_TIMEOUT(settle(wb) && wb.outcome()->request.text == kText, 30000);
    QCOMPARE(probabilityOf(*wb.outcome()->run, "i"), after);

    // One click restores, exactly.
    wb.restoreButton()->click();
    QVERIFY(wb.ablatedHeads().empty());
    QTRY_VERIFY_WITH_TIMEOUT(settle(wb) && wb.outcome()->request.ablated.empty(), 30000);
    QCOMPARE(probabilityOf(*wb.outcome()->run, "i"), before);
    QVERIFY(wb.outcome()->plainRun == nullptr);
    QVERIFY(grid->ablated().empty());
    QVERIFY(!wb.matrixTitle()->text().contains(u"ablated"_s));

    // Escape in the model view restores too.
    wb.toggleAblation(1, 2);
    QTRY_VERIFY_WITH_TIMEOUT(settle(wb) && wb.outcome()->request.ablated.size() == 1, 30000);
    grid->setFocus();
    QTest::keyClick(grid, Qt::Key_Escape);
    QVERIFY(wb.ablatedHeads().empty());
  }

  void resampleWaitsForCompare() {
    TransformerWorkbench wb;
    open(wb);
    auto* items = qobject_cast<QStandardItemModel*>(wb.ablationModeBox()->model());
    QVERIFY(items);
    const int resample = wb.ablationModeBox()->findData(int(attn::models::AblationMode::Resample));
    QVERIFY(!items->item(resample)->isEnabled());
    QVERIFY(items->item(resample)->toolTip().contains(u"Compare"_s));
    wb.setCompare(true, QString::fromLatin1(kCorrupt));
    QVERIFY(items->item(resample)->isEnabled());

    // Resampled from B: the copying heads' outputs are B's, which read "x" where A has "i".
    const double before = probabilityOf(*wb.outcome()->run, "i");
    wb.setAblationMode(attn::models::AblationMode::Resample);
    wb.setAblatedHeads({{1, 1}, {1, 2}, {1, 3}});
    QTRY_VERIFY_WITH_TIMEOUT(settle(wb) && wb.outcome()->request.ablated.size() == 3, 30000);
    QVERIFY2(wb.outcome()->interventionError.isEmpty(), qPrintable(wb.outcome()->interventionError));
    QVERIFY(wb.outcome()->plainRun != nullptr);
    QVERIFY(probabilityOf(*wb.outcome()->run, "x") > 0.2);
    QVERIFY(probabilityOf(*wb.outcome()->run, "i") < before / 2);
    QVERIFY(wb.matrixTitle()->text().contains(u"ablated (resample from B): 1.1, 1.2, 1.3"_s));

    // B of another length cannot be resampled from: said, and the plain run shown.
    wb.setCompare(true, QString::fromLatin1(kCorrupt) + u"z"_s);
    QTRY_VERIFY_WITH_TIMEOUT(settle(wb) && wb.outcome()->request.compare == std::string(kCorrupt) + "z", 30000);
    QVERIFY(wb.interventionNote()->text().contains(u"same token count: A is 20 tokens, B is 21"_s));
    QCOMPARE(probabilityOf(*wb.outcome()->run, "i"), probabilityOf(*wb.outcome()->plainRun, "i"));
  }

  void compareShowsTheDifferenceOfTheTwoRuns() {
    TransformerWorkbench wb;
    open(wb);
    wb.selectHead(1, 2);
    wb.setCompare(true, QString::fromLatin1(kCorrupt));
    QTRY_VERIFY_WITH_TIMEOUT(settle(wb) && wb.outcome()->compareRun != nullptr, 30000);
    QCOMPARE(wb.compareShow(), TransformerWorkbench::CompareShow::Difference);
    const auto a = wb.outcome()->run->attention.map(wb.outcome()->stage, 1, 2);
    const auto b = wb.outcome()->compareRun->attention.map(wb.outcome()->stage, 1, 2);
    QVERIFY(a && b);
    const auto* shown = wb.currentMatrix();
    QVERIFY(shown);
    QCOMPARE(shown->weights.rows(), a->weights.rows());
    QCOMPARE(shown->weights.cols(), a->weights.cols());
    double largest = 0;
    for (int r = 0; r < a->weights.rows(); ++r) {
      for (int c = 0; c < a->weights.cols(); ++c) {
        QCOMPARE(shown->weights(r, c), b->weights(r, c) - a->weights(r, c));
        largest = std::max(largest, double(std::abs(shown->weights(r, c))));
      }
    }
    QVERIFY(largest > 0.01);  // the two inputs differ where "i" became "x"
    QCOMPARE(wb.heatmap()->colormap(), render::Colormap::RdBu);
    QCOMPARE(wb.heatmap()->rangeMode(), render::RangeMode::Symmetric);
    QVERIFY(!wb.compareHeatmap()->isVisible());
    QVERIFY(wb.matrixTitle()->text().contains(u"B \u2212 A"_s));
    // Both predictions side by side.
    const QStringList lines = listed(*wb.predictions());
    QVERIFY2(lines.filter(u"A at 19"_s).size() == 1 && lines.filter(u"\u2502"_s).size() >= 5,
             qPrintable(lines.join(u'\n')));

    // Exported as the tab's other views: the picture, and the difference as CSV.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    for (const char* name : {"diff.png", "diff.svg", "diff.pdf"}) {
      const QString path = dir.filePath(QString::fromLatin1(name));
      const auto ok = wb.exportView(path, TransformerWorkbench::View::Matrix);
      QVERIFY2(ok.has_value(), ok ? "" : ok.error().message().c_str());
      QVERIFY(QFileInfo(path).size() > 1000);
    }
    const QString csv = dir.filePath(u"diff.csv"_s);
    QVERIFY(wb.exportMatrix(csv).has_value());
    QFile file(csv);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QVERIFY(QString::fromUtf8(file.readAll()).contains(u",-0."_s));  // negative: a difference, not weights

    // Side by side on demand: A in the matrix (its own colours), B beside it.
    wb.setCompareShow(TransformerWorkbench::CompareShow::SideBySide);
    QVERIFY(wb.compareHeatmap()->isVisible());
    QCOMPARE(wb.heatmap()->colormap(), wb.colormap());
    QVERIFY(wb.compareHeatmap()->map()->weights == b->weights);
    QVERIFY(wb.currentMatrix()->weights == a->weights);
    const QString both = dir.filePath(u"both.png"_s);
    QVERIFY(wb.exportView(both, TransformerWorkbench::View::Matrix).has_value());
    QVERIFY(QImage(both).width() >= wb.heatmap()->width() + wb.compareHeatmap()->width());

    // Off: the matrix is A's alone again.
    wb.setCompareShow(TransformerWorkbench::CompareShow::Difference);
    wb.setCompare(false, QString::fromLatin1(kCorrupt));
    QTRY_VERIFY_WITH_TIMEOUT(settle(wb) && !wb.outcome()->compareRun, 30000);
    QVERIFY(wb.currentMatrix()->weights == a->weights);
    QCOMPARE(wb.heatmap()->rangeMode(), render::RangeMode::Data);
  }

  void unequalTokenCountsSayWhyAndShowBothSideBySide() {
    TransformerWorkbench wb;
    open(wb);
    wb.setCompare(true, QString::fromLatin1(kCorrupt) + u"z"_s);
    QTRY_VERIFY_WITH_TIMEOUT(settle(wb) && wb.outcome()->compareRun != nullptr, 30000);
    const auto nA = wb.outcome()->run->attention.tokens.size();
    const auto nB = wb.outcome()->compareRun->attention.tokens.size();
    QCOMPARE(nB, nA + 1);
    QVERIFY(wb.interventionNote()->isVisible());
    QCOMPARE(wb.interventionNote()->text(),
             u"A is %1 tokens, B is %2: the maps cannot be aligned by position"_s.arg(nA).arg(nB));
    QVERIFY(wb.compareHeatmap()->isVisible());
    QVERIFY(wb.heatmap()->rangeMode() != render::RangeMode::Symmetric);

    // A head the model does not have (a session of another model): said, nothing ablated, no frame drawn off grid.
    wb.setAblatedHeads({{5, 0}});
    QTRY_VERIFY_WITH_TIMEOUT(settle(wb) && wb.outcome()->request.ablated.size() == 1, 30000);
    QVERIFY2(wb.interventionNote()->text().contains(
                 u"head 5.0 is not in this model (2 layers x 4 heads): nothing is ablated"_s),
             qPrintable(wb.interventionNote()->text()));
    QCOMPARE(probabilityOf(*wb.outcome()->run, "i"), probabilityOf(*wb.outcome()->plainRun, "i"));
  }

  void aSessionKeepsTheInterventions() {
    attn::ui::TransformerSection saved;
    {
      TransformerWorkbench wb;
      open(wb);
      wb.setAblationMode(attn::models::AblationMode::Mean);
      wb.setAblatedHeads({{1, 1}, {0, 3}});
      wb.setCompare(true, QString::fromLatin1(kCorrupt));
      wb.setCompareShow(TransformerWorkbench::CompareShow::SideBySide);
      QVERIFY(settle(wb));
      saved = wb.state();
    }
    QVERIFY(saved.ablated == "0.3,1.1");
    QCOMPARE(saved.ablation, attn::ui::TransformerSection::Ablation::Mean);
    QVERIFY(saved.compare);
    QVERIFY(saved.compare_text == kCorrupt);
    QCOMPARE(saved.compare_show, attn::ui::TransformerSection::CompareShow::SideBySide);

    // Through the file's JSON and back.
    auto session = attn::ui::default_session();
    session.transformer = saved;
    const std::string json = attn::ui::to_json(session);
    auto read = attn::ui::read_session(json, "round.attnscope.json");
    QVERIFY2(read.has_value(), read ? "" : read.error().message().c_str());
    QVERIFY(read->transformer == saved);

    TransformerWorkbench restored;
    restored.resize(1320, 860);
    restored.show();
    restored.applyState(*read->transformer);
    QVERIFY2(settle(restored), qPrintable(restored.lastError()));
    QTRY_VERIFY_WITH_TIMEOUT(settle(restored) && restored.outcome()->request.ablated.size() == 2 &&
                                 restored.outcome()->compareRun != nullptr,
                             30000);
    QCOMPARE(restored.ablationMode(), attn::models::AblationMode::Mean);
    QVERIFY(restored.isComparing());
    QCOMPARE(restored.compareText(), QString::fromLatin1(kCorrupt));
    QCOMPARE(restored.compareShow(), TransformerWorkbench::CompareShow::SideBySide);
    const auto again = restored.state();
    QVERIFY(again.ablated == saved.ablated);
    QVERIFY(again.compare_text == saved.compare_text);

    // A session written before the interventions existed loads with none.
    auto old = nlohmann::json::parse(json);
    old["tabs"]["transformer"].erase("intervene");
    auto oldRead = attn::ui::read_session(old.dump(), "old.attnscope.json");
    QVERIFY(oldRead.has_value());
    QVERIFY(oldRead->transformer->ablated.empty());
    QVERIFY(!oldRead->transformer->compare);
    QVERIFY(oldRead->warnings.empty());
  }
};

ATTN_QT_TEST(TestTransformerIntervention, Widgets);

}  // namespace test_transformer_intervention
#include "test_transformer_intervention.moc"
