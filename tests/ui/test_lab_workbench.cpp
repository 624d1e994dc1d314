// The Mechanism Lab: typing recomputes off the GUI thread, the newest request wins, the view holds the
// engine's matrix, bad input keeps the previous view, every mechanism of the catalogue draws.
#include "qt_test_registry.h"
#include "views/qcustomplot.h"
#include "ui_test_support.h"
#include "views/heatmap_view.h"
#include "views/map_grid_view.h"
#include "workbenches/lab/lab_workbench.h"
#include "workbenches/lab/lab_worker.h"
#include "workbenches/common/busy_row.h"
#include "workbenches/common/worker_thread.h"

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QToolButton>
#include <QTest>

using namespace attn::ui;
using namespace Qt::StringLiterals;

namespace test_lab_workbench {

namespace {

bool settle(LabWorkbench& lab, int timeoutMs = 20000) {
  return QTest::qWaitFor([&] { return lab.settled() == lab.submitted(); }, timeoutMs);
}

std::string words(int count) {
  std::string text;
  for (int i = 0; i < count; ++i) text += "word" + std::to_string(i % 97) + (i % 13 == 12 ? ". " : " ");
  return text;
}

}  // namespace

class TestLabWorkbench : public QObject {
  Q_OBJECT

 private:
  std::unique_ptr<LabWorkbench> lab_;

  // The tab as drawn now (the plots replot on the event loop), for ATTN_TEST_SHOTS.
  void saveLabShot(const QString& name) {
    lab_->heatmap()->replotNow();
    lab_->grid()->replotNow();
    testing::saveShot(lab_->grab().toImage(), name);
  }

  // The main view must show exactly what run_lab returns for the widgets' request.
  void verifyViewMatchesEngine() {
    const auto* outcome = lab_->outcome();
    QVERIFY(outcome && outcome->ok());
    const auto expected = testing::runOrNull(lab_->request());
    QVERIFY2(expected, "run_lab refused the request the lab shows");
    const int index = lab_->currentMapIndex();
    QVERIFY(index >= 0 && index < int(expected->trace.size()));
    const auto& whole = expected->trace.maps()[std::size_t(index)];
    // The view holds the engine's map; a map with more cells than the pixels it is drawn on is drawn max-pooled
    // to them (issue 41, finding 4): then the cells drawn are the engine's map max-pooled to that shape.
    QCOMPARE(lab_->heatmap()->map()->weights, whole.weights);
    auto* data = lab_->heatmap()->colorMap()->data();
    const auto pooled = attn::pooled_map(whole, data->valueSize(), data->keySize(), attn::Pool::Max);
    const auto& map = pooled ? *pooled : whole;
    QCOMPARE(data->keySize(), int(map.weights.cols()));
    QCOMPARE(data->valueSize(), int(map.weights.rows()));
    for (int r = 0; r < map.weights.rows(); ++r) {
      for (int c = 0; c < map.weights.cols(); ++c) {
        if (std::abs(data->cell(c, r) - double(map.weights(r, c))) > 1e-6) {
          QFAIL(qPrintable(
              u"cell (%1, %2): view %3, engine %4"_s.arg(r).arg(c).arg(data->cell(c, r)).arg(map.weights(r, c))));
        }
      }
    }
    QCOMPARE(lab_->heatmap()->map()->row_labels, whole.row_labels);
    QCOMPARE(lab_->heatmap()->map()->col_labels, whole.col_labels);
  }

 private slots:
  void initTestCase() {
    lab_ = std::make_unique<LabWorkbench>();
    lab_->resize(1200, 800);
    lab_->show();
    QVERIFY(QTest::qWaitForWindowExposed(lab_.get()));
    QVERIFY(settle(*lab_));
    QVERIFY2(lab_->lastError().isEmpty(), qPrintable(lab_->lastError()));
  }

  void startsWithTheDefaultSentences() {
    QCOMPARE(lab_->queryEdit()->text().toStdString(), std::string(attn::lab::kDefaultQuery));
    QCOMPARE(lab_->sourceEdit()->toPlainText().toStdString(), std::string(attn::lab::kDefaultSource));
    QVERIFY(lab_->outcome() && lab_->outcome()->ok());
    QVERIFY(lab_->runSummary().startsWith(u"lab: "_s));
    QVERIFY(lab_->runSummary().endsWith(u" ms"_s));
  }

  void typingRecomputesAndTheHeatmapHoldsTheEnginesMatrix() {
    lab_->queryEdit()->setFocus();
    lab_->queryEdit()->end(false);
    QTest::keyClicks(lab_->queryEdit(), u" today"_s);
    QVERIFY(settle(*lab_));
    QVERIFY(lab_->request().query.ends_with("today"));
    QCOMPARE(lab_->heatmap()->map()->row_labels.back(), std::string("today"));
    verifyViewMatchesEngine();
    lab_->heatmap()->replotNow();
    QVERIFY(testing::looksDrawn(lab_->heatmap()->grab().toImage()));
  }

  void manyQuickEditsEndOnTheLastOne() {
    // A long source makes each run take a while, so the edits pile up behind it and coalesce.
    lab_->sourceEdit()->setPlainText(QString::fromStdString(words(1500)));
    const int runsBefore = lab_->workerRuns();
    constexpr int kEdits = 40;
    for (int i = 0; i < kEdits; ++i) lab_->queryEdit()->setText(u"edit number %1 of the query"_s.arg(i));
    QVERIFY(settle(*lab_, 60000));
    const int runs = lab_->workerRuns() - runsBefore;
    QVERIFY2(runs < kEdits, qPrintable(u"%1 runs for %2 edits"_s.arg(runs).arg(kEdits)));
    QCOMPARE(lab_->shown(), lab_->submitted());
    QCOMPARE(lab_->outcome()->request.query, std::string("edit number 39 of the query"));
    QCOMPARE(lab_->heatmap()->map()->row_labels.at(2), std::string("39"));
    verifyViewMatchesEngine();
    lab_->setRequest(testing::defaultRequest());
    QVERIFY(settle(*lab_));
  }

  void badInputKeepsThePreviousView_data() {
    QTest::addColumn<QByteArray>("query");
    QTest::addColumn<QByteArray>("source");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("empty source") << QByteArray("she ate") << QByteArray("") << u"source"_s;
    QTest::newRow("blank query") << QByteArray("   ") << QByteArray("the apple fell") << u"query"_s;
    QTest::newRow("invalid UTF-8") << QByteArray("she \xff ate") << QByteArray("the apple") << u"byte"_s;
  }
  void badInputKeepsThePreviousView() {
    QFETCH(QByteArray, query);
    QFETCH(QByteArray, source);
    QFETCH(QString, mentions);
    lab_->setRequest(testing::defaultRequest());
    QVERIFY(settle(*lab_));
    const quint64 shownBefore = lab_->shown();
    const attn::AttentionMap* mapBefore = lab_->heatmap()->map();
    QVERIFY(mapBefore);
    const attn::Matrix weightsBefore = mapBefore->weights;

    auto request = lab_->request();
    request.query = query.toStdString();
    request.source = source.toStdString();
    lab_->submitRequest(request);
    QVERIFY(settle(*lab_));
    QVERIFY2(!lab_->lastError().isEmpty(), "the engine accepted bad input");
    QVERIFY2(lab_->lastError().contains(mentions, Qt::CaseInsensitive), qPrintable(lab_->lastError()));
    QCOMPARE(lab_->shown(), shownBefore);
    QCOMPARE(lab_->heatmap()->map(), mapBefore);
    QCOMPARE(lab_->heatmap()->map()->weights, weightsBefore);
    QVERIFY(lab_->findChild<QLabel*>(u"inputError"_s)->isVisibleTo(lab_.get()));
  }

  // A paste longer than the lab takes is cut to kMaxTokens and run, with the warning the other tabs give
  // (it used to be refused whole: "byte 8569: has 12707 tokens").
  void longPasteIsTruncatedWithAWarning() {
    auto request = testing::defaultRequest();
    request.source = words(5000);
    lab_->submitRequest(request);
    QVERIFY(settle(*lab_));
    QVERIFY2(lab_->lastError().isEmpty(), qPrintable(lab_->lastError()));
    QCOMPARE(lab_->shown(), lab_->submitted());
    QCOMPARE(lab_->heatmap()->map()->weights.cols(), attn::Index(attn::lab::kMaxTokens));
    const auto* strip = lab_->findChild<QLabel*>(u"labWarnings"_s);
    QVERIFY(strip);
    QVERIFY(strip->isVisibleTo(lab_.get()));
    QVERIFY2(strip->text().contains(u"source truncated to 2048 tokens (of "_s), qPrintable(strip->text()));
    // A short input again: the warning goes.
    lab_->setRequest(testing::defaultRequest());
    QVERIFY(settle(*lab_));
    QVERIFY(!strip->isVisibleTo(lab_.get()));
  }

  void invalidUtf8FromAFileNamesTheByte() {
    QSignalSpy messages(lab_.get(), &LabWorkbench::statusMessage);
    const quint64 shownBefore = lab_->shown();
    QVERIFY(!lab_->loadText(QByteArray("\n  she \xc3\x28 ate\nthe apple fell\n"), u"bad.txt"_s));
    QVERIFY(settle(*lab_));
    QCOMPARE(lab_->shown(), shownBefore);
    QVERIFY2(lab_->lastError().startsWith(u"bad.txt: "_s), qPrintable(lab_->lastError()));
    QVERIFY(lab_->lastError().contains(u"byte"_s));
    QTRY_VERIFY(!messages.isEmpty());
    QVERIFY(messages.last().front().toString().contains(u"bad.txt"_s));
    // The editors never received the bad bytes.
    QCOMPARE(lab_->queryEdit()->text().toStdString(), std::string(attn::lab::kDefaultQuery));
  }

  void emojiAndCjkJustWork() {
    auto request = testing::defaultRequest();
    request.query = "\xe5\xa5\xb9 ate the \xf0\x9f\x8d\x8e";  // 她 ate the 🍎
    request.source = "\xe8\x8b\xb9\xe6\x9e\x9c fell \xf0\x9f\x8c\xb3 in the garden";
    lab_->setRequest(request);
    QVERIFY(settle(*lab_));
    QVERIFY2(lab_->lastError().isEmpty(), qPrintable(lab_->lastError()));
    const auto& rows = lab_->heatmap()->map()->row_labels;
    QVERIFY(std::find(rows.begin(), rows.end(), std::string("\xf0\x9f\x8d\x8e")) != rows.end());
    verifyViewMatchesEngine();
    lab_->setRequest(testing::defaultRequest());
    QVERIFY(settle(*lab_));
  }

  void goodInputAfterBadClearsTheError() {
    auto request = lab_->request();
    request.source.clear();
    lab_->submitRequest(request);
    QVERIFY(settle(*lab_));
    QVERIFY(!lab_->lastError().isEmpty());
    lab_->sourceEdit()->setPlainText(u"the apple fell from the tree"_s);
    QVERIFY(settle(*lab_));
    QVERIFY(lab_->lastError().isEmpty());
    QVERIFY(!lab_->findChild<QLabel*>(u"inputError"_s)->isVisibleTo(lab_.get()));
    verifyViewMatchesEngine();
  }

  void everyMechanismDraws_data() {
    QTest::addColumn<int>("index");
    const auto catalogue = attn::lab::mechanisms();
    for (std::size_t i = 0; i < catalogue.size(); ++i) {
      QTest::newRow(std::string(catalogue[i].key).c_str()) << int(i);
    }
  }
  void everyMechanismDraws() {
    QFETCH(int, index);
    lab_->setRequest(testing::defaultRequest());
    QVERIFY(settle(*lab_));
    const auto& info = attn::lab::mechanisms()[std::size_t(index)];
    lab_->mechanismBox()->setCurrentIndex(index);
    QVERIFY(settle(*lab_));
    if (info.uses_target) {
      // Issue 41, finding 7: the default source marked no target, and the choice ended in "no target marked" under
      // the previous mechanism's map. The Lab now marks the example target itself.
      const std::string_view example = attn::lab::kTargetExample;
      QCOMPARE(lab_->sourceEdit()->toPlainText(), QString::fromUtf8(example.data(), qsizetype(example.size())));
    }
    QVERIFY2(lab_->lastError().isEmpty(), qPrintable(lab_->lastError()));
    QCOMPARE(lab_->outcome()->request.params.mechanism, info.id);
    verifyViewMatchesEngine();
    lab_->heatmap()->replotNow();
    QVERIFY2(testing::looksDrawn(lab_->heatmap()->grab().toImage()), "the heatmap is blank");

    // Only the controls the mechanism uses are shown.
    QCOMPARE(lab_->findChild<QWidget*>(u"heads"_s)->isVisibleTo(lab_.get()), info.uses_heads);
    QCOMPARE(lab_->findChild<QWidget*>(u"hops"_s)->isVisibleTo(lab_.get()), info.uses_hops);
    QCOMPARE(lab_->findChild<QWidget*>(u"window"_s)->isVisibleTo(lab_.get()), info.uses_window);
    QCOMPARE(lab_->findChild<QWidget*>(u"classes"_s)->isVisibleTo(lab_.get()), info.uses_classes);
    QCOMPARE(lab_->findChild<QWidget*>(u"causal"_s)->isVisibleTo(lab_.get()), info.uses_causal);
    QCOMPARE(lab_->findChild<QWidget*>(u"score"_s)->isVisibleTo(lab_.get()), info.uses_score);
    QCOMPARE(lab_->queryEdit()->isEnabled(), info.uses_query);
    QCOMPARE(lab_->findChild<QLabel*>(u"formula"_s)->text().toStdString(), std::string(info.formula));

    // Issue 41, finding 5: the step slider counts from 0 like every index ("step 0 (0–2)").
    if (lab_->stepSlider()->isVisibleTo(lab_.get())) {
      lab_->stepSlider()->setValue(0);
      QCOMPARE(lab_->findChild<QLabel*>(u"stepLabel"_s)->text(),
               u"step 0 (0\u2013%1)"_s.arg(lab_->stepSlider()->maximum()));
    }

    // Several maps: a selector with every title and a tile per map.
    const auto& trace = lab_->outcome()->result->trace;
    if (trace.size() > 1) {
      QCOMPARE(lab_->mapBox()->count(), int(trace.size()));
      for (int i = 0; i < int(trace.size()); ++i) {
        QCOMPARE(lab_->mapBox()->itemText(i).toStdString(), trace.maps()[std::size_t(i)].title());
      }
      QCOMPARE(lab_->grid()->count(), std::min(int(trace.size()), MapGrid::kMaxTiles));
      QVERIFY(lab_->mapBox()->isVisibleTo(lab_.get()));
    } else {
      QVERIFY(!lab_->mapBox()->isVisibleTo(lab_.get()));
    }
  }

  void clickingATileShowsItsMap() {
    auto request = testing::defaultRequest(attn::lab::Mechanism::MultiHead);
    request.params.heads = 4;
    lab_->setRequest(request);
    QVERIFY(settle(*lab_));
    QVERIFY2(lab_->lastError().isEmpty(), qPrintable(lab_->lastError()));
    QCOMPARE(lab_->grid()->count(), 4);
    // Heads count from 0, as in the Transformer tab and on the command line: tile 2 is head 2.
    QVERIFY2(lab_->mapBox()->itemText(0).endsWith(u"head 0"_s), qPrintable(lab_->mapBox()->itemText(0)));
    QVERIFY2(lab_->mapBox()->itemText(3).endsWith(u"head 3"_s), qPrintable(lab_->mapBox()->itemText(3)));
    auto* tile = lab_->grid()->tile(2);
    QTest::mouseClick(tile->plot(), Qt::LeftButton, {}, tile->plot()->rect().center());
    QCOMPARE(lab_->currentMapIndex(), 2);
    QCOMPARE(lab_->mapBox()->currentIndex(), 2);
    QCOMPARE(lab_->heatmap()->map(), &lab_->outcome()->result->trace.maps()[2]);
    verifyViewMatchesEngine();
    // The selector works the other way round.
    lab_->mapBox()->setCurrentIndex(1);
    QCOMPARE(lab_->currentMapIndex(), 1);
    QCOMPARE(lab_->grid()->current(), 1);
    // A parameter change keeps the chosen head.
    lab_->findChild<QSpinBox*>(u"seed"_s)->setValue(7);
    QVERIFY(settle(*lab_));
    QCOMPARE(lab_->currentMapIndex(), 1);
    verifyViewMatchesEngine();
  }

  // Issue 19: routing keeps every iteration's coupling; a slider steps through them and Play animates them,
  // stopping at the last. A map outside any series (multi-head's heads) shows no slider.
  void stepSliderAndPlayWalkASeries() {
    auto request = testing::defaultRequest(attn::lab::Mechanism::CapsuleRouting);
    request.params.iterations = 4;
    lab_->setRequest(request);
    QVERIFY(settle(*lab_));
    QVERIFY2(lab_->lastError().isEmpty(), qPrintable(lab_->lastError()));
    QSlider* slider = lab_->stepSlider();
    QVERIFY(slider->isVisibleTo(lab_.get()));
    QCOMPARE(slider->maximum(), 3);
    // Issue 41: it opens on the routed result, the last iteration (the first is uniform by definition).
    QCOMPARE(slider->value(), 3);
    QCOMPARE(lab_->currentMap()->name, std::string("iteration 3"));  // from 0
    slider->setValue(2);
    QCOMPARE(lab_->currentMap()->name, std::string("iteration 2"));
    verifyViewMatchesEngine();
    lab_->setCurrentMapIndex(1);  // the grid and the selector move the slider too
    QCOMPARE(slider->value(), 1);
    QCOMPARE(lab_->findChild<QLabel*>(u"stepLabel"_s)->text(), u"step 1 (0\u20133)"_s);
    lab_->setPlayInterval(5);
    lab_->playButton()->click();
    QVERIFY(lab_->isPlaying());
    QTRY_VERIFY_WITH_TIMEOUT(!lab_->isPlaying(), 5000);
    QCOMPARE(slider->value(), 3);
    QCOMPARE(lab_->currentMap()->name, std::string("iteration 3"));  // from 0
    QVERIFY(!lab_->playButton()->isChecked());
    lab_->playButton()->click();  // at the end, Play starts again from the first
    QCOMPARE(slider->value(), 0);
    QTRY_VERIFY_WITH_TIMEOUT(!lab_->isPlaying(), 5000);
    request = testing::defaultRequest(attn::lab::Mechanism::MultiHead);
    lab_->setRequest(request);
    QVERIFY(settle(*lab_));
    QVERIFY(!slider->isVisibleTo(lab_.get()));
    QVERIFY(!lab_->playButton()->isVisibleTo(lab_.get()));
  }

  // Issue 19: the Shuffle button adds pooling on the shuffled words, with and without positions; it is there
  // only for the pooling mechanisms, and sessions keep it (request()).
  void shuffleButtonComparesOrders() {
    lab_->setRequest(testing::defaultRequest(attn::lab::Mechanism::Pooling));
    QVERIFY(settle(*lab_));
    auto* shuffle = lab_->findChild<QPushButton*>(u"shuffle"_s);
    QVERIFY(shuffle && shuffle->isVisibleTo(lab_.get()));
    QCOMPARE(lab_->grid()->count(), 0);  // one map: no small multiples
    shuffle->click();
    QVERIFY(settle(*lab_));
    QVERIFY(lab_->request().params.shuffle);
    QCOMPARE(lab_->grid()->count(), 5);
    QVERIFY2(lab_->mapBox()->itemText(2).startsWith(u"no positions \u00b7 shuffled"_s),
             qPrintable(lab_->mapBox()->itemText(2)));
    lab_->setRequest(testing::defaultRequest(attn::lab::Mechanism::Global));
    QVERIFY(settle(*lab_));
    QVERIFY(!shuffle->isVisibleTo(lab_.get()));
  }

  // Issue 17: with 8 heads the small multiples' titles ("self-attention \u00b7 head 1") were wider than their
  // tiles and cut off at both ends. Each title now fits its tile (smaller type first, then elided in the
  // middle so that the head number stays), and an elided title has its whole text in the tile's tool tip.
  void smallMultipleTitlesFitTheirTiles() {
    auto request = testing::defaultRequest(attn::lab::Mechanism::MultiHead);
    request.params.heads = 8;
    lab_->setRequest(request);
    QVERIFY(settle(*lab_));
    QVERIFY2(lab_->lastError().isEmpty(), qPrintable(lab_->lastError()));
    QCOMPARE(lab_->grid()->count(), 8);
    QTest::qWait(50);
    lab_->grid()->replotNow();
    for (int i = 0; i < lab_->grid()->count(); ++i) {
      auto* tile = lab_->grid()->tile(i);
      auto* title = qobject_cast<QCPTextElement*>(tile->plot()->plotLayout()->element(0, 0));
      QVERIFY(title);
      const QString full = QString::fromStdString(lab_->outcome()->result->trace.maps()[std::size_t(i)].title());
      const int width = QFontMetrics(title->font()).horizontalAdvance(title->text());
      QVERIFY2(width <= title->rect().width(), qPrintable(u"tile %1: \u201c%2\u201d is %3 px in a %4 px title"_s.arg(i)
                                                              .arg(title->text())
                                                              .arg(width)
                                                              .arg(title->rect().width())));
      QVERIFY2(title->text() == full || tile->plot()->toolTip().contains(full), qPrintable(tile->plot()->toolTip()));
      QVERIFY2(title->text().endsWith(QString::number(i)), qPrintable(title->text()));  // heads from 0
    }
    // A title too long even for the smaller type is cut in the middle, and the tool tip has all of it.
    HeatmapView narrow(HeatmapView::Style::Compact);
    narrow.resize(150, 140);
    narrow.show();
    QVERIFY(QTest::qWaitForWindowExposed(&narrow));
    const QString longTitle = u"word attention within sentence 12 of the review \u00b7 head 3"_s;
    narrow.setTitle(longTitle);
    narrow.replotNow();
    auto* title = qobject_cast<QCPTextElement*>(narrow.plot()->plotLayout()->element(0, 0));
    QVERIFY(title);
    QVERIFY2(title->text().contains(u'\u2026') && title->text().endsWith(u"head 3"_s), qPrintable(title->text()));
    QVERIFY(QFontMetrics(title->font()).horizontalAdvance(title->text()) <= title->rect().width());
    QVERIFY(narrow.plot()->toolTip().contains(longTitle));
    QCOMPARE(narrow.title(), longTitle);
  }

  // Multi-head self-attention splits the dimension among the heads: the heads box offers only divisors of
  // it (it used to accept 5 heads of d = 64 and then refuse the run), and follows a new dimension.
  void headsOfferOnlyDivisorsOfTheDimension() {
    auto request = testing::defaultRequest(attn::lab::Mechanism::MultiHead);
    request.params.dim = 64;
    request.params.heads = 4;
    lab_->setRequest(request);
    QVERIFY(settle(*lab_));
    auto* heads = lab_->findChild<QSpinBox*>(u"heads"_s);
    auto* dim = lab_->findChild<QSpinBox*>(u"dim"_s);
    QVERIFY(heads && dim);
    heads->stepBy(1);
    QCOMPARE(heads->value(), 8);  // not 5, 6 or 7
    heads->stepBy(-2);
    QCOMPARE(heads->value(), 2);
    // Typing a value that does not divide 64 is not acceptable input.
    QString typed = u"5"_s;
    int pos = 1;
    QCOMPARE(static_cast<QAbstractSpinBox*>(heads)->validate(typed, pos), QValidator::Intermediate);
    typed = u"16"_s;
    pos = 2;
    QCOMPARE(static_cast<QAbstractSpinBox*>(heads)->validate(typed, pos), QValidator::Acceptable);
    // A dimension the heads no longer divide moves them to the nearest divisor, and the run goes through.
    heads->setValue(16);
    QVERIFY(settle(*lab_));
    dim->setValue(40);
    QVERIFY(settle(*lab_));
    QCOMPARE(heads->value(), 10);  // 40's divisors near 16: 10 (distance 6), 20 is over the box's range
    QVERIFY2(lab_->lastError().isEmpty(), qPrintable(lab_->lastError()));
    QCOMPARE(lab_->outcome()->request.params.heads, 10);
    QCOMPARE(lab_->outcome()->request.params.dim, 40);
    // Other mechanisms with heads do not split the dimension: any count is offered.
    lab_->setRequest(testing::defaultRequest());
    QVERIFY(settle(*lab_));
  }

  void workerCoalescesPendingRequests() {
    // With its thread not yet running, every submit replaces the pending request: exactly one run,
    // the newest, happens once the thread starts (host() moves the queued drain along with the worker).
    LabWorker worker;
    WorkerThread thread;  // after the worker: stopped before the worker goes, even when a check fails
    QList<LabOutcome> outcomes;
    connect(
        &worker, &LabWorker::finished, this, [&](const LabOutcome& outcome) { outcomes.append(outcome); },
        Qt::QueuedConnection);
    for (quint64 g = 1; g <= 25; ++g) {
      auto request = testing::defaultRequest();
      request.query = "request " + std::to_string(g);
      worker.submit(g, request);
    }
    thread.host(&worker, u"coalescing lab worker"_s);
    QTRY_COMPARE(outcomes.size(), 1);
    QTest::qWait(50);
    QCOMPARE(outcomes.size(), 1);
    QCOMPARE(worker.runs(), 1);
    QCOMPARE(outcomes.front().generation, quint64(25));
    QCOMPARE(outcomes.front().request.query, std::string("request 25"));
    QVERIFY(outcomes.front().ok());
    thread.stop();
  }

  void colormapAndRangeReachEveryView() {
    QSignalSpy changed(lab_.get(), &LabWorkbench::colormapChanged);
    lab_->setColormap(render::Colormap::Inferno);
    QCOMPARE(changed.size(), 1);
    QCOMPARE(lab_->heatmap()->colormap(), render::Colormap::Inferno);
    for (int i = 0; i < lab_->grid()->count(); ++i)
      QCOMPARE(lab_->grid()->tile(i)->colormap(), render::Colormap::Inferno);
    QCOMPARE(lab_->findChild<QComboBox*>(u"colormap"_s)->currentData().toInt(), int(render::Colormap::Inferno));
    lab_->setRangeMode(render::RangeMode::Unit);
    QCOMPARE(lab_->heatmap()->colorMap()->dataRange(), QCPRange(0.0, 1.0));
    lab_->setRangeMode(render::RangeMode::Data);
    lab_->setColormap(render::Colormap::Viridis);
  }

  // Issue 41, finding 7: choosing rotatory attention or IAN with a text that marks no target gave "no target marked"
  // and left the previous mechanism's map under the new name. The Lab marks a target (the example on the default
  // text, the longest word of the user's own); and a refused request of another mechanism or other parameters
  // empties the view and says why instead of keeping a stale map.
  void targetMechanismsMarkATargetAndErrorsClearTheMap() {
    lab_->setRequest(testing::defaultRequest());
    QVERIFY(settle(*lab_));
    const auto& catalogue = attn::lab::mechanisms();
    const auto indexOf = [&](attn::lab::Mechanism m) {
      return int(std::find_if(catalogue.begin(), catalogue.end(), [&](const auto& i) { return i.id == m; }) -
                 catalogue.begin());
    };
    lab_->mechanismBox()->setCurrentIndex(indexOf(attn::lab::Mechanism::Rotatory));
    QVERIFY(settle(*lab_));
    QVERIFY2(lab_->lastError().isEmpty(), qPrintable(lab_->lastError()));
    QCOMPARE(lab_->outcome()->request.params.mechanism, attn::lab::Mechanism::Rotatory);
    QVERIFY(lab_->sourceEdit()->toPlainText().contains(u"[battery life]"_s));
    verifyViewMatchesEngine();
    saveLabShot(u"lab-rotatory"_s);

    lab_->mechanismBox()->setCurrentIndex(indexOf(attn::lab::Mechanism::Global));
    QVERIFY(settle(*lab_));
    lab_->sourceEdit()->setPlainText(u"the screen of this phone is bright"_s);
    QVERIFY(settle(*lab_));
    lab_->mechanismBox()->setCurrentIndex(indexOf(attn::lab::Mechanism::Interactive));
    QVERIFY(settle(*lab_));
    QCOMPARE(lab_->sourceEdit()->toPlainText(), u"the [screen] of this phone is bright"_s);
    QVERIFY2(lab_->lastError().isEmpty(), qPrintable(lab_->lastError()));
    QCOMPARE(lab_->outcome()->request.params.mechanism, attn::lab::Mechanism::Interactive);
    verifyViewMatchesEngine();

    // Linformer with k past the source's 7 words: refused, and IAN's map does not stay under Linformer's name.
    auto request = lab_->request();
    request.params.mechanism = attn::lab::Mechanism::Linformer;
    request.params.rank = 64;
    lab_->setRequest(request);
    QVERIFY(settle(*lab_));
    QVERIFY2(lab_->lastError().contains(u"k = 64"_s), qPrintable(lab_->lastError()));
    QVERIFY(!lab_->heatmap()->map());
    QVERIFY(!lab_->currentMap());
    QVERIFY(lab_->heatmap()->isShowingEmptyText());
    QVERIFY2(lab_->heatmap()->emptyText().contains(u"k = 64"_s), qPrintable(lab_->heatmap()->emptyText()));
    saveLabShot(u"lab-refused"_s);
    lab_->setRequest(testing::defaultRequest());
    QVERIFY(settle(*lab_));
    QVERIFY(lab_->heatmap()->map());
    QVERIFY(!lab_->heatmap()->isShowingEmptyText());
  }

  // Issue 41, finding 6: near-uniform weights (routing's first iteration, all 1/3; IAN's 0.05-0.12) were stretched
  // to the whole colour map. Distributions are drawn on 0..1 unless "Fixed range 0-1" is turned off; maps that are
  // not distributions keep their own range, and the colour bar names what they hold.
  void distributionsOnTheFixedRangeAndTheColourBarSaysWhat() {
    auto routing = testing::defaultRequest(attn::lab::Mechanism::CapsuleRouting);
    routing.params.iterations = 3;
    lab_->setRequest(routing);
    QVERIFY(settle(*lab_));
    {
      const LabWorkbench fresh;  // the default: Fixed range 0-1 on
      QCOMPARE(fresh.rangeMode(), render::RangeMode::Unit);
      QVERIFY(fresh.findChild<QCheckBox*>(u"unitRange"_s)->isChecked());
    }
    const render::RangeMode before = lab_->rangeMode();  // an earlier test may have turned it off
    lab_->setRangeMode(render::RangeMode::Unit);
    lab_->setCurrentMapIndex(0);  // iteration 0: every coupling 1/3
    QVERIFY(lab_->heatmap()->isDistribution());
    QCOMPARE(lab_->heatmap()->colorMap()->dataRange(), QCPRange(0.0, 1.0));
    QCOMPARE(lab_->heatmap()->colorScale()->label(), u"weight"_s);
    saveLabShot(u"lab-routing-iteration0"_s);
    lab_->setRangeMode(render::RangeMode::Data);  // the user's toggle still stretches
    QVERIFY(std::abs(lab_->heatmap()->colorMap()->dataRange().upper - 1.0 / 3.0) < 1e-6);
    lab_->setRangeMode(render::RangeMode::Unit);

    auto ian = testing::defaultRequest(attn::lab::Mechanism::Interactive);
    ian.source = std::string(attn::lab::kTargetExample);
    lab_->setRequest(ian);
    QVERIFY(settle(*lab_));
    QVERIFY(lab_->heatmap()->map()->weights.maxCoeff() < 0.5f);
    QCOMPARE(lab_->heatmap()->colorMap()->dataRange(), QCPRange(0.0, 1.0));

    // Transformer-XL's score terms are not distributions: their own (signed) range, named "score".
    auto xl = testing::defaultRequest(attn::lab::Mechanism::TransformerXL);
    xl.params.segment = 4;
    lab_->setRequest(xl);
    QVERIFY(settle(*lab_));
    const auto& maps = lab_->outcome()->result->trace.maps();
    const auto term = std::find_if(maps.begin(), maps.end(), [](const auto& m) { return m.name.starts_with("(a)"); });
    QVERIFY(term != maps.end());
    lab_->setCurrentMapIndex(int(term - maps.begin()));
    QVERIFY(!lab_->heatmap()->isDistribution());
    QCOMPARE(lab_->heatmap()->colorScale()->label(), u"score"_s);
    QVERIFY(lab_->heatmap()->colorMap()->dataRange() != QCPRange(0.0, 1.0));
    saveLabShot(u"lab-xl-score"_s);
    lab_->setRangeMode(before);
    lab_->setRequest(testing::defaultRequest());
    QVERIFY(settle(*lab_));
  }

  void showsComputingWhileALongRunIsInFlight() {
    // A ~1,900-token additive run takes about 0.25 s here; with no delay the busy timer must fire first.
    auto lab = std::make_unique<LabWorkbench>();
    QSignalSpy shown(lab.get(), &LabWorkbench::resultShown);
    QTRY_VERIFY(!shown.isEmpty());
    lab->setBusyDelay(0);
    auto request = lab->request();
    request.params.mechanism = attn::lab::Mechanism::Global;
    request.params.score = attn::ScoreKind::Additive;
    request.query = words(1800);  // 1,800 words and 138 full stops: 1,938 tokens, under the limit
    request.source = words(1800);
    lab->setRequest(request);
    QTRY_VERIFY_WITH_TIMEOUT(lab->isBusy(), 2000);
    QVERIFY(lab->heatmap()->cursor().shape() == Qt::BusyCursor);
    QTRY_VERIFY_WITH_TIMEOUT(!lab->isBusy(), 20000);  // generous: sanitizer builds are slow
    QCOMPARE(lab->heatmap()->colorMap()->data()->keySize(), 1938);
    QVERIFY(lab->heatmap()->cursor().shape() != Qt::BusyCursor);
  }

  // Issue 41: a long run shows the busy row (segments done, time left) and Cancel (or Esc) stops it; the previous
  // map stays and the status bar says "Cancelled".
  void aLongRunShowsProgressAndCancelKeepsThePreviousMap() {
    auto lab = std::make_unique<LabWorkbench>();
    lab->resize(1200, 800);
    QSignalSpy shown(lab.get(), &LabWorkbench::resultShown);
    lab->show();
    QTRY_VERIFY(!shown.isEmpty());
    QVERIFY(settle(*lab));
    QVERIFY(lab->outcome());
    const attn::lab::LabRequest before = lab->outcome()->request;
    const QString mapTitle = lab->mapBox()->currentText();
    lab->busyRow()->setDelay(0);
    QSignalSpy status(lab.get(), &LabWorkbench::statusMessage);
    auto request = lab->request();
    request.params.mechanism = attn::lab::Mechanism::TransformerXL;
    request.params.segment = 32;
    request.params.layers = 6;
    request.params.dim = 512;      // 1.2 s on one thread here, far longer than the 64 progress reports take to come
    request.source = words(2000);  // cut to 2,048 tokens: 64 segments
    lab->setRequest(request);
    QVERIFY(lab->busyRow()->isShown());
    QVERIFY(lab->busyRow()->cancelButton()->isEnabled());
    QVERIFY2(lab->busyRow()->label()->text().startsWith(u"Running Transformer-XL"_s),
             qPrintable(lab->busyRow()->label()->text()));
    QTRY_VERIFY_WITH_TIMEOUT(lab->busyRow()->bar()->value() >= 1, 20000);
    QCOMPARE(lab->busyRow()->bar()->maximum(), 64);
    QVERIFY2(lab->busyRow()->label()->text().contains(u" of 64 segments done"_s),
             qPrintable(lab->busyRow()->label()->text()));
    testing::saveShot(lab->grab().toImage(), u"lab-busy"_s);
    lab->busyRow()->cancelButton()->click();
    QVERIFY(settle(*lab, 20000));
    QVERIFY(!lab->busyRow()->isShown());
    QCOMPARE(lab->outcome()->request.params, before.params);  // the previous map stays
    QCOMPARE(lab->outcome()->request.source, before.source);
    QCOMPARE(lab->mapBox()->currentText(), mapTitle);
    QVERIFY(!status.isEmpty());
    QCOMPARE(status.last().first().toString(), u"Cancelled: the previous map stays"_s);

    // Esc anywhere in the tab cancels too.
    request.params.layers = 5;
    lab->setRequest(request);
    QVERIFY(lab->busyRow()->isShown());
    lab->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(lab.get()));
    lab->sourceEdit()->setFocus();
    QTest::keyClick(lab->sourceEdit(), Qt::Key_Escape);
    QVERIFY(settle(*lab, 20000));
    QCOMPARE(lab->outcome()->request.params, before.params);
    QVERIFY(!lab->busyRow()->isShown());
  }

  void shutsDownCleanlyWhileBusy() {
    auto lab = std::make_unique<LabWorkbench>();
    lab->sourceEdit()->setPlainText(QString::fromStdString(words(2000)));
    for (int i = 0; i < 5; ++i) lab->queryEdit()->setText(u"busy %1"_s.arg(i));
    lab.reset();  // must not hang or crash with a run in flight
  }

  void cleanupTestCase() { lab_.reset(); }
};

ATTN_QT_TEST(TestLabWorkbench, Widgets);

}  // namespace test_lab_workbench
#include "test_lab_workbench.moc"
