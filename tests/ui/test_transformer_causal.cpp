// The Transformer tab's Patching and Head detectors views (issue 43) on the bundled induction-gpt2: a heads sweep
// gives the engine's recoveries, Cancel stops a sweep within 200 ms keeping what it computed, the detectors find the
// model card's heads, and every result exports as the CLI writes it.
#include "qt_test_registry.h"
#include "render/causal_figures.h"
#include "session/session.h"
#include "ui_test_support.h"
#include "../bench/frame_stats.h"
#include "views/figure_map_view.h"
#include "views/heatmap_view.h"
#include "workbenches/common/worker_thread.h"
#include "workbenches/transformer/transformer_detectors.h"
#include "workbenches/transformer/transformer_patching.h"
#include "workbenches/transformer/transformer_workbench.h"

#include "attn/models/intervention.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

using namespace attn::ui;
using namespace Qt::StringLiterals;
namespace am = attn::models;

namespace test_transformer_causal {

namespace {

const QString kClean = u"abcdefghijklabcdefgh"_s;
const QString kCorrupt = u"abcdefghxjklabcdefgh"_s;

bool settle(TransformerWorkbench& wb, int ms = 30000) {
  QElapsedTimer timer;
  timer.start();
  while (timer.elapsed() < ms) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    if (!wb.isLoading() && wb.isIdle() && wb.submitted() > 0) return true;
    QTest::qWait(10);
  }
  return false;
}

void screenshot(QWidget& widget, const QString& name) {
  const QString dir = qEnvironmentVariable("ATTN_SCREENSHOT_DIR");
  if (dir.isEmpty()) return;
  QTest::qWait(200);
  widget.grab().save(QDir(dir).filePath(name));
}

// The engine's own heads sweep of the same inputs: what the panel must show.
am::SweepResult engineSweep(const std::shared_ptr<const am::TransformerModel>& model) {
  am::TransformerRunner runner(model);
  const auto run = [&](const QString& text) {
    am::RunOptions options;
    options.capture = true;
    options.top_k = 0;
    options.logits_position = int(text.size()) - 1;
    return runner.run_text(text.toStdString(), {}, options);
  };
  const auto id = [&](const char* t) { return model->tokenizer()->encode(t)->front().id; };
  auto clean = run(kClean), corrupt = run(kCorrupt);
  auto patching = am::Patching::make(std::move(*clean), std::move(*corrupt), {am::Metric::LogitDiff, id("i"), id("x")},
                                     int(kClean.size()) - 1);
  return *patching->sweep(runner, am::Sweep::Heads);
}

}  // namespace

class TestTransformerCausal : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { testing::isolateSettings(settingsDir_.path()); }

  // Heads sweep, clean "abcdefghijklabcdefgh" vs corrupted "...x...": layer 1 head 1 recovers over half of the
  // logit difference of "i" over "x" (attnscope-cli patch: 0.713), every cell the engine's value; CSV as the CLI's.
  void aHeadsSweepShowsTheEnginesRecoveries() {
    TransformerWorkbench wb;
    wb.resize(1320, 860);
    wb.show();
    QVERIFY(wb.openDemo());
    wb.setText(kClean);
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    auto* panel = wb.patchingPanel();
    QVERIFY(panel);
    wb.viewTabs()->setCurrentWidget(panel);
    panel->setCorruptText(kCorrupt);
    panel->setMetric(am::Metric::LogitDiff);
    panel->setSweep(am::Sweep::Heads);
    // The prediction list's candidates carry their token text, which its context menu's "Use as answer" / "Use as
    // wrong" put in the panel: the demo predicts "i" after this text.
    bool offered = false;
    for (int i = 0; i < wb.predictions()->count(); ++i)
      offered |= wb.predictions()->item(i)->data(Qt::UserRole) == u"i"_s;
    QVERIFY(offered);
    // A text of several tokens is refused, saying how it tokenises.
    panel->setAnswer(u"ij"_s);
    panel->setWrong(u"x"_s);
    QVERIFY(!panel->run());
    QVERIFY2(panel->note()->text().contains(u"2 tokens"_s), qPrintable(panel->note()->text()));
    panel->setAnswer(u"i"_s);
    QSignalSpy finished(panel, &PatchingPanel::finished);
    QVERIFY(panel->run());
    QVERIFY(finished.wait(30000));
    QCOMPARE(finished.front().front().toBool(), true);
    const auto* result = panel->result();
    QVERIFY(result);
    QCOMPARE(result->done, 8);
    QVERIFY2(result->at(1, 1, 0) > 0.5, qPrintable(QString::number(result->at(1, 1, 0))));
    const auto expected = engineSweep(wb.source()->model);
    for (std::size_t i = 0; i < expected.values.size(); ++i) QCOMPARE(result->values[i], expected.values[i]);
    // The heatmap: RdBu centred on 0, a cell's tool tip with its layer, head and recovery.
    const auto& figure = panel->view()->figure();
    QCOMPARE(figure.colormap, render::Colormap::RdBu);
    QCOMPARE(figure.rangeMode, render::RangeMode::Symmetric);
    const QString tip = panel->view()->cellToolTip(1, 1);
    QVERIFY2(tip.contains(u"layer 1"_s) && tip.contains(u"head 1"_s) &&
                 tip.contains(QString::number(result->at(1, 1, 0), 'f', 4)),
             qPrintable(tip));
    // A click on a cell selects that head.
    emit panel->view()->cellClicked(1, 2);
    QCOMPARE(wb.layer(), 1);
    QCOMPARE(wb.head(), 2);
    QTemporaryDir dir;
    QVERIFY(panel->exportTo(dir.filePath(u"sweep.csv"_s)));
    QFile csv(dir.filePath(u"sweep.csv"_s));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    QCOMPARE(csv.readAll(), render::sweepCsv(expected, panel->tokens()));
    // File > Export View with the Patching tab in view exports the sweep.
    const auto exported = wb.exportCurrentView(dir.filePath(u"view.csv"_s));
    QVERIFY2(exported, exported ? "" : exported.error().message().c_str());
    QFile viewCsv(dir.filePath(u"view.csv"_s));
    QVERIFY(viewCsv.open(QIODevice::ReadOnly));
    QCOMPARE(viewCsv.readAll(), render::sweepCsv(expected, panel->tokens()));
    QVERIFY(panel->exportTo(dir.filePath(u"sweep.png"_s), QSize(600, 400)));
    QCOMPARE(QImage(dir.filePath(u"sweep.png"_s)).size(), QSize(600, 400));
  }

  // One corrupted input: the Patching view's line is the Compare box (B); typing in either types in both.
  void theCorruptedInputIsTheCompareBox() {
    TransformerWorkbench wb;
    wb.resize(1320, 860);
    wb.show();
    auto* panel = wb.patchingPanel();
    wb.viewTabs()->setCurrentWidget(panel);
    auto* line = panel->findChild<QLineEdit*>(u"patchingCorrupt"_s);
    QVERIFY(line);
    QTest::keyClicks(line, kCorrupt);
    QCOMPARE(wb.compareText(), kCorrupt);
    QCOMPARE(wb.compareEdit()->text(), kCorrupt);
    QCOMPARE(panel->corruptText(), kCorrupt);
    QVERIFY(!wb.isComparing());  // typing B turns nothing on
    wb.compareEdit()->setText(u"abcdefghyjklabcdefgh"_s);
    QCOMPARE(line->text(), u"abcdefghyjklabcdefgh"_s);
    wb.setCompare(false, u"abcdefghzjklabcdefgh"_s);  // sets the box with its signals blocked
    QCOMPARE(line->text(), u"abcdefghzjklabcdefgh"_s);
    panel->setCorruptText(kCorrupt);
    QCOMPARE(wb.compareText(), kCorrupt);
    QCOMPARE(line->text(), kCorrupt);
    // A session keeps it once, as the Compare box's text, and as the corrupted input for older readers.
    const auto state = wb.state();
    QCOMPARE(QString::fromStdString(state.compare_text), kCorrupt);
    QCOMPARE(QString::fromStdString(state.causal.corrupt), kCorrupt);
  }

  // A session written when the Patching view had a line of its own may hold two second inputs: the Compare box takes
  // the patching one when it was empty; when both are set and differ, the one in use stays (the Compare box's with
  // Compare on, else the sweep's) and the Patching view's note names the other, so that neither is lost.
  void anOlderSessionsCorruptedInputIsKept_data() {
    QTest::addColumn<bool>("compare");
    QTest::addColumn<QString>("compareText");
    QTest::addColumn<QString>("corrupt");
    QTest::addColumn<QString>("kept");
    QTest::addColumn<QString>("noted");
    const QString y = u"abcdefghyjklabcdefgh"_s;
    QTest::newRow("Compare box empty") << false << QString() << kCorrupt << kCorrupt << QString();
    QTest::newRow("Compare box empty, on") << true << QString() << kCorrupt << kCorrupt << QString();
    QTest::newRow("the same text") << true << kCorrupt << kCorrupt << kCorrupt << QString();
    QTest::newRow("no corrupted input") << false << y << QString() << y << QString();
    QTest::newRow("two, Compare on") << true << y << kCorrupt << y << kCorrupt;
    QTest::newRow("two, Compare off") << false << y << kCorrupt << kCorrupt << y;
  }
  void anOlderSessionsCorruptedInputIsKept() {
    QFETCH(bool, compare);
    QFETCH(QString, compareText);
    QFETCH(QString, corrupt);
    QFETCH(QString, kept);
    QFETCH(QString, noted);
    TransformerSection section;
    section.compare = compare;
    section.compare_text = compareText.toStdString();
    section.causal.corrupt = corrupt.toStdString();
    Session session = default_session();
    session.transformer = section;
    auto read = read_session(to_json(session), "old.attnscope.json");
    QVERIFY2(read, read ? "" : read.error().message().c_str());
    TransformerWorkbench wb;
    wb.restoreFrom(*read, u"old"_s);
    QCOMPARE(wb.compareText(), kept);
    QCOMPARE(wb.patchingPanel()->corruptText(), kept);
    QCOMPARE(wb.patchingPanel()->findChild<QLineEdit*>(u"patchingCorrupt"_s)->text(), kept);
    QCOMPARE(wb.isComparing(), compare);
    const QString note = wb.patchingPanel()->note()->text();
    if (noted.isEmpty()) {
      QVERIFY2(note.isEmpty(), qPrintable(note));
    } else {
      QVERIFY2(note.contains(u"\u201c%1\u201d"_s.arg(noted)) && note.contains(u"\u201c%1\u201d"_s.arg(kept)),
               qPrintable(note));
    }
  }

  // A click on a cell of the sweep opens that head for both inputs: Compare on, side by side, the matrix beside the
  // sweep showing the head's map of A and of B (B's the engine's own run of B), the sweep still in view to click the
  // next cell. A layers x positions cell selects its layer and keeps the head in view.
  void aClickOnACellOpensThatHeadsMapOfBothInputs() {
    TransformerWorkbench wb;
    wb.resize(1320, 860);
    wb.show();
    QVERIFY(QTest::qWaitForWindowExposed(&wb));
    QVERIFY(wb.openDemo());
    wb.setText(kClean);
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    auto* panel = wb.patchingPanel();
    wb.viewTabs()->setCurrentWidget(panel);
    panel->setCorruptText(kCorrupt);
    panel->setAnswer(u"i"_s);
    panel->setWrong(u"x"_s);
    panel->setMetric(am::Metric::LogitDiff);
    panel->setSweep(am::Sweep::Heads);
    QSignalSpy finished(panel, &PatchingPanel::finished);
    QVERIFY(panel->run());
    QVERIFY(finished.wait(30000));
    QVERIFY(!wb.isComparing());
    QCOMPARE(wb.compareShow(), TransformerWorkbench::CompareShow::Difference);
    // A mouse click in cell (row 1, column 2): layer 1, head 2.
    auto* view = panel->view();
    std::optional<QPoint> at;
    for (int y = 0; y < view->height() && !at; y += 2) {
      for (int x = 0; x < view->width() && !at; x += 2) {
        if (view->cellAt(QPointF(x, y)) == QPoint(2, 1)) at = QPoint(x + 4, y + 4);
      }
    }
    QVERIFY(at && view->cellAt(QPointF(*at)) == QPoint(2, 1));
    QTest::mouseClick(view, Qt::LeftButton, {}, *at);
    QCOMPARE(wb.layer(), 1);
    QCOMPARE(wb.head(), 2);
    QVERIFY(wb.isComparing());
    QCOMPARE(wb.compareText(), kCorrupt);
    QCOMPARE(wb.compareShow(), TransformerWorkbench::CompareShow::SideBySide);
    QCOMPARE(wb.matrixMode(), TransformerWorkbench::MatrixMode::Head);
    QTRY_VERIFY_WITH_TIMEOUT(settle(wb) && wb.outcome()->compareRun != nullptr, 30000);
    am::TransformerRunner runner(wb.source()->model);
    const auto mapOf = [&](const QString& text, int layer, int head) {
      auto run = runner.run_text(text.toStdString(), {}, am::RunOptions{});
      return run ? run->attention.map(wb.outcome()->stage, layer, head) : nullptr;
    };
    const auto same = [](const attn::AttentionMap* shown, const std::shared_ptr<const attn::AttentionMap>& want) {
      return shown && want && shown->weights.rows() == want->weights.rows() &&
             shown->weights.cols() == want->weights.cols() &&
             (shown->weights - want->weights).cwiseAbs().maxCoeff() < 1e-6f;
    };
    QVERIFY(same(wb.compareHeatmap()->map(), mapOf(kCorrupt, 1, 2)));
    QVERIFY(same(wb.currentMatrix(), mapOf(kClean, 1, 2)));
    QVERIFY(!same(wb.currentMatrix(), mapOf(kCorrupt, 1, 2)));  // two different maps
    // Both in view: the matrix pane beside the tabs, A left and B right; the sweep stays the tab in view.
    QVERIFY(wb.heatmap()->isVisible());
    QVERIFY(wb.compareHeatmap()->isVisible());
    QVERIFY2(wb.matrixTitle()->text().contains(u"layer 1 \u00b7 head 2"_s) &&
                 wb.matrixTitle()->text().contains(u"left A, right B"_s),
             qPrintable(wb.matrixTitle()->text()));
    QCOMPARE(wb.viewTabs()->currentWidget(), panel);
    QVERIFY(panel->isVisible());
    screenshot(wb, u"transformer-patching.png"_s);

    // Layers x positions: a cell is a layer and a position; the head in view stays.
    panel->setSweep(am::Sweep::LayersPositions);
    QVERIFY(panel->run());
    QVERIFY(finished.wait(30000));
    QCOMPARE(render::sweepCellAt(*panel->result(), 0, 5).layer, 0);
    QCOMPARE(render::sweepCellAt(*panel->result(), 0, 5).head, -1);
    emit view->cellClicked(0, 5);
    QCOMPARE(wb.layer(), 0);
    QCOMPARE(wb.head(), 2);
    QVERIFY(wb.isComparing());
    QTRY_VERIFY_WITH_TIMEOUT(settle(wb) && same(wb.compareHeatmap()->map(), mapOf(kCorrupt, 0, 2)), 30000);
    QVERIFY(same(wb.currentMatrix(), mapOf(kClean, 0, 2)));
  }

  // Cancel during a sweep: the thread stops within 200 ms, the cells computed stay drawn, the others NaN.
  void cancelStopsASweepAndKeepsItsCells() {
    TransformerWorkbench wb;
    wb.resize(1320, 860);
    wb.show();
    QVERIFY(wb.openDemo());
    QString clean, corrupt;
    for (int i = 0; i < 6; ++i) clean += u"qwhdkeiaplzmxncbvrtsu"_s;
    corrupt = clean;
    corrupt[40] = u'y';
    wb.setText(clean);
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    auto* panel = wb.patchingPanel();
    wb.viewTabs()->setCurrentWidget(panel);
    panel->setCorruptText(corrupt);
    panel->setMetric(am::Metric::KL);
    panel->setSweep(am::Sweep::HeadsPositions);
    QSignalSpy finished(panel, &PatchingPanel::finished);
    QElapsedTimer sinceCancel;
    connect(panel, &PatchingPanel::partialShown, this, [&](int) {
      if (!sinceCancel.isValid()) {
        panel->cancel();
        sinceCancel.start();
      }
    });
    QVERIFY(panel->run());
    QVERIFY(finished.wait(30000));
    const qint64 ms = sinceCancel.isValid() ? sinceCancel.elapsed() : -1;
    QVERIFY2(ms >= 0 && ms < 200, qPrintable(QString::number(ms)));
    QCOMPARE(finished.front().front().toBool(), false);
    QVERIFY(!panel->isRunning());
    const auto* result = panel->result();
    QVERIFY(result);
    const int total = 2 * 4 * int(clean.size());
    QVERIFY2(result->done > 0 && result->done < total, qPrintable(QString::number(result->done)));
    QVERIFY(std::isfinite(result->values.front()));
    QVERIFY(std::isnan(result->values.back()));
    QVERIFY(panel->note()->text().contains(u"cancelled"_s));
    QVERIFY(panel->runButton()->isEnabled());
  }

  // The detectors find what the model card says: layer 1 heads 1-3 copy at offset +2, layer 0 heads 1 and 3 read
  // the previous token; the offsets are written in the induction map's cells and said in the tool tip.
  void theDetectorsFindTheCardsHeads() {
    TransformerWorkbench wb;
    wb.resize(1320, 860);
    wb.show();
    QVERIFY(wb.openDemo());
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    auto* panel = wb.detectorsPanel();
    QVERIFY(panel);
    wb.viewTabs()->setCurrentWidget(panel);
    QSignalSpy finished(panel, &DetectorsPanel::finished);
    QVERIFY(panel->detect());
    QVERIFY(finished.wait(30000));
    QCOMPARE(finished.front().front().toBool(), true);
    const auto* found = panel->result();
    QVERIFY(found);
    QCOMPARE(found->layers, 2);
    QCOMPARE(found->heads, 4);
    for (int h = 1; h <= 3; ++h) QCOMPARE(found->scores[std::size_t(4 + h)].induction_offset, 2);
    for (int h : {1, 3}) QVERIFY(found->scores[std::size_t(h)].previous_token > 0.8f);
    const auto& induction = panel->view(attn::analysis::HeadDetector::Induction)->figure();
    QCOMPARE(induction.cellText.at(4 + 1), u"+2"_s);
    QCOMPARE(induction.colormap, render::Colormap::Viridis);
    QVERIFY2(panel->cellText(1, 1).contains(u"offset +2"_s), qPrintable(panel->cellText(1, 1)));
    QTemporaryDir dir;
    QVERIFY(panel->exportTo(dir.filePath(u"heads.csv"_s)));
    QFile csv(dir.filePath(u"heads.csv"_s));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    QVERIFY(csv.readAll().startsWith("layer,head,previous_token,duplicate_token,induction,induction_offset,sink\r\n"));
    QVERIFY(panel->exportTo(dir.filePath(u"heads.svg"_s)));
    screenshot(wb, u"transformer-detectors.png"_s);
  }

  // The GUI thread during a whole heads x positions sweep: the gaps between turns of its event loop (printed, not
  // asserted: the machine is shared; bench_patching_frames measures the frames on a real model), and the partial
  // maps drawn as they came. Two repeats (42 tokens, 336 cells, 193 ms in Release): six (126 tokens, 1,008 cells) took
  // 1,147 ms, several times that under the sanitizers.
  void theEventLoopTurnsDuringASweep() {
    TransformerWorkbench wb;
    wb.resize(1320, 860);
    wb.show();
    QVERIFY(wb.openDemo());
    QString clean;
    for (int i = 0; i < 2; ++i) clean += u"qwhdkeiaplzmxncbvrtsu"_s;
    QString corrupt = clean;
    corrupt[40] = u'y';
    wb.setText(clean);
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    auto* panel = wb.patchingPanel();
    wb.viewTabs()->setCurrentWidget(panel);
    panel->setCorruptText(corrupt);
    panel->setMetric(am::Metric::KL);
    panel->setSweep(am::Sweep::HeadsPositions);
    QSignalSpy partials(panel, &PatchingPanel::partialShown);
    QSignalSpy finished(panel, &PatchingPanel::finished);
    std::vector<double> gaps;
    QElapsedTimer clock;
    QTimer tick;
    tick.setInterval(0);
    connect(&tick, &QTimer::timeout, this, [&] {
      if (clock.isValid()) gaps.push_back(double(clock.nsecsElapsed()) / 1e6);
      clock.start();
    });
    QElapsedTimer total;
    total.start();
    tick.start();
    QVERIFY(panel->run());
    QVERIFY(finished.wait(60000));
    tick.stop();
    QCOMPARE(finished.front().front().toBool(), true);
    QVERIFY(partials.size() >= 1);
    qInfo(
        "sweep of %d cells in %lld ms, %d partial maps drawn; event-loop gaps (ms): p50 %.2f p95 %.2f p99 %.2f max "
        "%.2f over %zu turns; load %s",
        panel->result()->done, total.elapsed(), int(partials.size()), attn::bench::percentile(gaps, 50),
        attn::bench::percentile(gaps, 95), attn::bench::percentile(gaps, 99), attn::bench::percentile(gaps, 100),
        gaps.size(), attn::bench::load_average().c_str());
  }

  // A session keeps the patching settings, the sweep and the detection; an older session without them loads with
  // both views empty.
  void aSessionKeepsTheSweepAndTheDetection() {
    TransformerWorkbench wb;
    wb.resize(1320, 860);
    wb.show();
    QVERIFY(wb.openDemo());
    wb.setText(kClean);
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    auto* patching = wb.patchingPanel();
    patching->setCorruptText(kCorrupt);
    patching->setAnswer(u"i"_s);
    patching->setWrong(u"x"_s);
    patching->setMetric(am::Metric::LogitDiff);
    patching->setSweep(am::Sweep::LayersPositions);
    QSignalSpy swept(patching, &PatchingPanel::finished);
    QVERIFY(patching->run());
    QVERIFY(swept.wait(30000));
    QSignalSpy detected(wb.detectorsPanel(), &DetectorsPanel::finished);
    QVERIFY(wb.detectorsPanel()->detect());
    QVERIFY(detected.wait(30000));

    Session session = default_session();
    wb.saveTo(session);
    const std::string text = to_json(session);
    auto read = read_session(text, "test.attnscope.json");
    QVERIFY2(read, read ? "" : read.error().message().c_str());
    QVERIFY(*read == session);

    TransformerWorkbench other;
    other.resize(1320, 860);
    other.restoreFrom(*read, u"test"_s);
    auto* restored = other.patchingPanel();
    QCOMPARE(restored->corruptText(), kCorrupt);
    QCOMPARE(restored->answer(), u"i"_s);
    QCOMPARE(restored->sweep(), am::Sweep::LayersPositions);
    QVERIFY(restored->result());
    QCOMPARE(restored->result()->values, patching->result()->values);
    QCOMPARE(restored->tokens(), patching->tokens());
    QVERIFY(restored->view()->hasMap());
    const auto* found = other.detectorsPanel()->result();
    QVERIFY(found);
    QCOMPARE(found->scores[5].induction_offset, 2);
    QCOMPARE(found->scores[5].induction, wb.detectorsPanel()->result()->scores[5].induction);
    QCOMPARE(other.detectorsPanel()->view(attn::analysis::HeadDetector::Induction)->figure().cellText.at(5), u"+2"_s);

    // The restored model opens: the restored views stay; another model clears them.
    QVERIFY2(settle(other), qPrintable(other.lastError()));
    QVERIFY(other.patchingPanel()->result());
    QVERIFY(other.detectorsPanel()->result());
    QSignalSpy loaded(&other, &TransformerWorkbench::sourceLoaded);
    QVERIFY(other.openDemo(TransformerWorkbench::storyModelKey()));
    QVERIFY(loaded.wait(20000));
    QVERIFY(!other.patchingPanel()->result());
    QVERIFY(!other.patchingPanel()->view()->hasMap());
    QVERIFY(!other.detectorsPanel()->result());

    // A session written before these views: no "causal" member; both views start empty.
    auto old = nlohmann::json::parse(text);
    old["tabs"]["transformer"].erase("causal");
    auto oldRead = read_session(old.dump(), "old.attnscope.json");
    QVERIFY2(oldRead, oldRead ? "" : oldRead.error().message().c_str());
    QVERIFY(oldRead->warnings.empty());
    TransformerWorkbench third;
    third.restoreFrom(*oldRead, u"old"_s);
    QVERIFY(!third.patchingPanel()->result());
    QVERIFY(!third.detectorsPanel()->result());
  }

  // A sweep's thread runs below the GUI thread (lowerThisThreadsPriority): the thread's own nice value goes up by the
  // steps asked (at most to 19), the calling thread's, the GUI's, stays.
  void aSweepsThreadYieldsToTheGuiThread() {
    const int gui = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
    int before = 0, after = 0;
    bool lowered = false;
    std::thread worker([&] {
      before = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
      lowered = lowerThisThreadsPriority(3);
      after = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
    });
    worker.join();
    QVERIFY(lowered);
    QCOMPARE(before, gui);
    QCOMPARE(after, std::min(before + 3, 19));
    QCOMPARE(getpriority(PRIO_PROCESS, static_cast<id_t>(gettid())), gui);
  }

 private:
  QTemporaryDir settingsDir_;
};

ATTN_QT_TEST(TestTransformerCausal, Widgets);

}  // namespace test_transformer_causal
#include "test_transformer_causal.moc"
