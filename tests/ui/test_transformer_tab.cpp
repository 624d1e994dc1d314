// The Transformer tab as a new user met it (issue 41's GUI findings 1, 3, 9 and 10): a model folder without tokenizer
// files (token ids typed as numbers, a refused generation that says so, no views left over from the previous model),
// long runs that show their progress and can be cancelled, the logit lens that follows the scrubber, and the head
// view's empty state and Export View. Screenshots go to $ATTN_SCREENSHOT_DIR when it is set.
#include "qt_test_registry.h"
#include "ui_test_support.h"
#include "views/qcustomplot.h"
#include "views/head_grid_view.h"
#include "views/heatmap_view.h"
#include "views/logit_lens_view.h"
#include "views/token_lines_view.h"
#include "workbenches/transformer/transformer_workbench.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSlider>
#include <QTextBrowser>
#include <QTest>

#include <algorithm>
#include <cmath>

using namespace attn::ui;
using namespace Qt::StringLiterals;

namespace test_transformer_tab {

namespace {

QString fixture(const char* name) {
  return QStringLiteral(ATTN_SOURCE_DIR "/tests/data/transformers/") + QLatin1String(name);
}

// Waits until the workbench has shown (or refused) its newest request.
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

// A GPT-2 folder as a trained model often comes: config.json and model.safetensors, no tokenizer files.
QString bareGpt2(const QTemporaryDir& dir) {
  const QString folder = dir.filePath(u"gpt2-no-tokenizer"_s);
  QDir().mkpath(folder);
  for (const char* name : {"config.json", "model.safetensors"}) {
    QFile::copy(fixture("gpt2") + u'/' + QLatin1String(name), folder + u'/' + QLatin1String(name));
  }
  return folder;
}

// `now`: as it is this moment (a run still going), else after the plots' coalesced replots and the layouts.
void screenshot(QWidget& widget, const QString& name, bool now = false) {
  const QString dir = qEnvironmentVariable("ATTN_SCREENSHOT_DIR");
  if (dir.isEmpty()) return;
  if (!now) QTest::qWait(200);
  widget.grab().save(QDir(dir).filePath(name));
}

}  // namespace

class TestTransformerTab : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { testing::isolateSettings(settingsDir_.path()); }

  // Finding 1: opening a model clears the previous model's run at once; a model without a tokenizer opens with ids
  // in the text box and runs them; other text and bad ids are refused with the position and the reason.
  void aModelWithoutTokenizerRunsTypedIds() {
    QTemporaryDir dir;
    TransformerWorkbench wb;
    wb.resize(1400, 900);
    wb.show();
    QVERIFY(wb.openDemo());
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    QVERIFY(wb.outcome() && wb.tokenLines()->trace());

    QSignalSpy loaded(&wb, &TransformerWorkbench::sourceLoaded);
    wb.openPath(bareGpt2(dir));
    QVERIFY(loaded.wait(20000));
    // Nothing of the demo's run is left beside the new model's name.
    QVERIFY(!wb.outcome());
    QVERIFY(!wb.tokenLines()->trace());
    QCOMPARE(wb.headGrid()->layers(), 0);
    QCOMPARE(wb.predictions()->count(), 0);
    QVERIFY2(!wb.runSummary().contains(u"induction"_s) && !wb.runSummary().contains(u"tokens"_s),
             qPrintable(wb.runSummary()));
    QVERIFY2(wb.text().startsWith(u"ids: 0 1 2"_s), qPrintable(wb.text()));

    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    QVERIFY2(wb.outcome(), qPrintable(wb.lastError()));
    QCOMPARE(wb.outcome()->run->ids, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));

    wb.setText(u"ids: 5 17 3"_s);
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    QCOMPARE(wb.outcome()->run->ids, (std::vector<int>{5, 17, 3}));
    QCOMPARE(wb.outcome()->trace->tokens, (attn::Labels{"5", "17", "3"}));

    wb.setText(u"ids: 5 17 abc"_s);
    QVERIFY(settle(wb));
    QVERIFY(wb.errorBanner()->isVisible());
    QVERIFY2(wb.lastError().contains(u"id 2 \"abc\": not a whole number"_s), qPrintable(wb.lastError()));
    wb.setText(u"ids: 5 64"_s);
    QVERIFY(settle(wb));
    QVERIFY2(wb.lastError().contains(u"id 1 \"64\": outside the vocabulary (0-63)"_s), qPrintable(wb.lastError()));
    wb.setText(u"plain words"_s);
    QVERIFY(settle(wb));
    QVERIFY2(wb.lastError().contains(u"no tokenizer"_s) && wb.lastError().contains(u"ids: 5 17 3"_s),
             qPrintable(wb.lastError()));
  }

  // A GGUF file opens like a folder; its description names its quantisation, and About Model shows its card (the
  // tensors by type, the metadata). The bundled demo's card is its MODEL_CARD.md.
  void aGgufFileOpensWithItsCard() {
    TransformerWorkbench wb;
    wb.resize(1400, 900);
    wb.show();
    QSignalSpy loaded(&wb, &TransformerWorkbench::sourceLoaded);
    wb.openPath(QDir(QStringLiteral(ATTN_TEST_DATA_DIR)).filePath(u"gguf/stories260k-Q8_0.gguf"_s));
    QVERIFY(loaded.wait(20000));
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    QVERIFY2(wb.source()->description.endsWith(u"GGUF Q8_0"_s), qPrintable(wb.source()->description));
    QVERIFY(wb.aboutModelButton()->isVisible());
    wb.aboutModelButton()->click();
    auto* browser = wb.findChild<QTextBrowser*>();
    QVERIFY(browser);
    const QString card = browser->toPlainText();
    QVERIFY2(card.contains(u"Tensor types"_s) && card.contains(u"Q8_0"_s) && card.contains(u"llama.block_count"_s),
             qPrintable(card));
    screenshot(*browser->window(), u"transformer-gguf-card.png"_s);
    browser->window()->close();

    QVERIFY(wb.openDemo());
    QVERIFY(loaded.wait(20000));
    QVERIFY(wb.aboutModelButton()->isVisible());
    QVERIFY(wb.source()->card.contains(u"induction"_s));
  }

  // Finding 1: Generate on a text the model cannot read says why and is done (it said "Generating..." forever with
  // Stop disabled); on typed ids it generates, and the continuation is shown as ids.
  void generationWithoutTokenizerEndsAndSaysWhy() {
    QTemporaryDir dir;
    TransformerWorkbench wb;
    wb.resize(1400, 900);
    wb.show();
    wb.openPath(bareGpt2(dir));
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    wb.setText(u"Once upon a time"_s);
    QVERIFY(settle(wb));
    QVERIFY(wb.generateButton()->isVisible());
    wb.generateButton()->click();
    QTRY_VERIFY_WITH_TIMEOUT(!wb.isGenerating(), 10000);
    QVERIFY(settle(wb));
    QVERIFY2(wb.generationLabel()->text().startsWith(u"Generation refused"_s) &&
                 wb.generationLabel()->text().contains(u"no tokenizer"_s),
             qPrintable(wb.generationLabel()->text()));
    QVERIFY(wb.generateButton()->isEnabled());
    screenshot(wb, u"transformer-no-tokenizer-refused.png"_s);

    wb.setText(u"ids: 5 17 3"_s);
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    auto g = wb.generation();
    g.max_new_tokens = 6;
    g.stop_at_eos = false;
    wb.setGeneration(g);
    wb.generateButton()->click();
    QTRY_VERIFY_WITH_TIMEOUT(!wb.isGenerating(), 20000);
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    QVERIFY2(wb.outcome() && wb.outcome()->run->prompt_tokens == 3, qPrintable(wb.lastError()));
    const int generated = int(wb.outcome()->run->ids.size()) - 3;
    QVERIFY(generated >= 1);
    QCOMPARE(wb.scrubber()->maximum(), generated - 1);
    QVERIFY2(wb.generationLabel()->text().contains(u"ids: "_s), qPrintable(wb.generationLabel()->text()));
    screenshot(wb, u"transformer-no-tokenizer-generated.png"_s);
  }

  // Finding 3: a run shows the busy row (progress, tokens per second, Cancel) while it runs and the empty panes say
  // "Running..."; every layer is reported; Cancel stops it and the views keep what they had.
  void longRunsShowProgressAndCanBeCancelled() {
    TransformerWorkbench wb;
    wb.resize(1400, 900);
    wb.show();
    wb.setBusyDelay(0);  // the row at once, however short the run
    QString story;
    for (int i = 0; i < 9; ++i) story += TransformerWorkbench::storyText() + u" played in the park. "_s;
    wb.setText(story);  // typed: kept when the model opens
    QSignalSpy loaded(&wb, &TransformerWorkbench::sourceLoaded);
    QVERIFY(wb.openDemo(TransformerWorkbench::storyModelKey()));
    QVERIFY(loaded.wait(20000));
    // The first run is on its way: the busy row shows, the panes say so.
    QVERIFY(!wb.outcome());
    QVERIFY(wb.isBusyShown());
    QVERIFY(wb.cancelRunButton()->isEnabled());
    QCOMPARE(wb.tokenLines()->emptyText(), u"Running\u2026"_s);
    screenshot(wb, u"transformer-running.png"_s, true);
    wb.cancelRunButton()->click();
    QVERIFY(settle(wb));
    QVERIFY(!wb.outcome());
    QVERIFY(!wb.isBusyShown());
    QVERIFY(!wb.errorBanner()->isVisible());  // a cancel is not an error
    QVERIFY2(wb.tokenLines()->emptyText().startsWith(u"Run cancelled"_s), qPrintable(wb.tokenLines()->emptyText()));

    // A run to its end reports each of the 5 layers, then the row goes.
    wb.setText(story + u"The end."_s);
    QVERIFY(wb.isBusyShown());
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    QVERIFY(wb.outcome());
    QVERIFY(!wb.isBusyShown());
    QCOMPARE(wb.runProgressBar()->maximum(), 5);
    QCOMPARE(wb.runProgressBar()->value(), 5);
    QVERIFY2(wb.runProgressLabel()->text().startsWith(u"5 of 5 layers done"_s) &&
                 wb.runProgressLabel()->text().contains(u"tokens/s"_s),
             qPrintable(wb.runProgressLabel()->text()));

    // Cancelled over a result: that result stays.
    const std::string shown = wb.outcome()->request.text;
    wb.setText(u"Later. "_s + story);  // another start: nothing of the last run's cache is reused
    wb.cancelRun();
    QVERIFY(settle(wb));
    QCOMPARE(wb.outcome()->request.text, shown);
    QVERIFY(!wb.isBusyShown());
  }

  // Finding 9: the logit lens follows the scrubber (a pinned token early in a long generation was not among its
  // columns), its columns fit the view or scroll with the pinned one in view, and its layer axis counts whole layers.
  void logitLensFollowsTheScrubberAndFits() {
    TransformerWorkbench wb;
    wb.resize(1400, 900);
    wb.show();
    QVERIFY(wb.openDemo(TransformerWorkbench::storyModelKey()));
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    wb.setView(TransformerWorkbench::View::Lens);
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    auto g = wb.generation();
    g.max_new_tokens = 40;
    g.stop_at_eos = false;
    wb.setGeneration(g);
    wb.generateButton()->click();
    QTRY_VERIFY_WITH_TIMEOUT(!wb.isGenerating(), 30000);
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    const auto* run = wb.outcome()->run.get();
    QVERIFY(int(run->ids.size()) - run->prompt_tokens >= 30);
    wb.scrubber()->setValue(10);
    const int pinned = run->prompt_tokens + 10;
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    const auto* lens = wb.lensView()->lens();
    QVERIFY(lens);
    const auto at = std::find(lens->positions.begin(), lens->positions.end(), pinned);
    QVERIFY2(at != lens->positions.end(),
             qPrintable(
                 u"position %1 not in %2..%3"_s.arg(pinned).arg(lens->positions.front()).arg(lens->positions.back())));
    const int column = int(at - lens->positions.begin());
    QCOMPARE(wb.lensView()->selectedColumn(), column);
    // The pinned column is in view (the grid scrolls when the 16 columns do not fit).
    auto* grid = wb.lensView()->grid();
    const QRect visible = grid->visibleRegion().boundingRect();
    const int left = LensGrid::kLabelWidth + column * grid->cellWidth();
    QVERIFY2(left >= visible.left() && left + grid->cellWidth() <= visible.right() + 1,
             qPrintable(u"column at %1..%2, in view %3..%4"_s.arg(left)
                            .arg(left + grid->cellWidth())
                            .arg(visible.left())
                            .arg(visible.right())));
    // With the tokens before it in view too, not behind the row labels at the edge.
    if (column > 0) QVERIFY(left - grid->cellWidth() >= visible.left() + LensGrid::kLabelWidth);
    screenshot(wb, u"transformer-lens-follows.png"_s);

    // Given room, all 16 columns fit; the rank plot's ticks are whole layers.
    LogitLensView wide;
    wide.resize(720, 520);
    wide.setLens(wb.outcome()->lens, {});
    wide.show();
    QVERIFY(QTest::qWaitForWindowExposed(&wide));
    const int room = wide.grid()->parentWidget()->width();  // the scroll area's viewport
    QVERIFY2(LensGrid::kLabelWidth + 16 * wide.grid()->cellWidth() + 2 <= room,
             qPrintable(u"cell width %1 in %2 pixels"_s.arg(wide.grid()->cellWidth()).arg(room)));
    wide.rankPlot()->replot();
    const auto ticks = wide.rankPlot()->xAxis->tickVector();
    QVERIFY(!ticks.isEmpty());
    for (const double t : ticks) QVERIFY2(t == std::round(t), qPrintable(QString::number(t)));
  }

  // Finding 10: the head view's empty text goes when it draws, even when it was not on screen at the time; Export
  // View writes the view last used (a press in the head view after one in the matrix: the head view) at the chosen
  // size under a title line naming the model, the text, the layer and the head.
  void emptyTextHidesAndExportsHaveTitleAndSize() {
    TransformerWorkbench wb;
    wb.resize(1400, 900);
    wb.show();
    QVERIFY(wb.openDemo());
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));

    TokenLinesView hidden;  // a view given its maps before it is shown
    hidden.setTrace(wb.outcome()->trace, wb.outcome()->stage);
    hidden.resize(600, 400);
    hidden.show();
    QVERIFY(QTest::qWaitForWindowExposed(&hidden));
    QVERIFY(!hidden.isShowingEmptyText());
    QVERIFY(!wb.tokenLines()->isShowingEmptyText());

    QTemporaryDir dir;
    wb.setExportSize(QSize(1200, 900));
    QCOMPARE(wb.exportSize(), QSize(1200, 900));
    QTest::mouseClick(wb.heatmap()->plot(), Qt::LeftButton, {}, QPoint(40, 40));
    QCOMPARE(wb.currentView(), TransformerWorkbench::View::Matrix);
    QTest::mouseClick(wb.tokenLines()->canvas(), Qt::LeftButton, {}, QPoint(5, 5));
    QCOMPARE(wb.currentView(), TransformerWorkbench::View::Head);
    const QString title = wb.exportTitle(TransformerWorkbench::View::Head);
    QVERIFY2(title.startsWith(u"induction-gpt2 \u00b7 \u201cqwhdkeia"_s) && title.contains(u"layer 0"_s),
             qPrintable(title));
    const QString head = dir.filePath(u"head.png"_s);
    QVERIFY2(wb.exportCurrentView(head), qPrintable(head));
    const QImage headImage(head);
    QCOMPARE(headImage.width(), 1200);

    wb.setView(TransformerWorkbench::View::Matrix);
    const QString matrix = dir.filePath(u"matrix.png"_s);
    QVERIFY(wb.exportCurrentView(matrix));
    const QImage matrixImage(matrix);
    QCOMPARE(matrixImage.width(), 1200);
    QVERIFY2(matrixImage.height() > 900 && matrixImage.height() < 960,
             qPrintable(QString::number(matrixImage.height())));
    QVERIFY(testing::looksDrawn(matrixImage));
    int dark = 0;  // the title line's text, over the plot
    for (int y = 0; y < matrixImage.height() - 900; ++y) {
      for (int x = 0; x < 400; ++x) dark += qGray(matrixImage.pixel(x, y)) < 100 ? 1 : 0;
    }
    QVERIFY2(dark > 50, qPrintable(QString::number(dark)));
    const QString svg = dir.filePath(u"matrix.svg"_s);
    QVERIFY(wb.exportCurrentView(svg));
    QFile file(svg);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QVERIFY(file.readAll().contains("induction-gpt2"));
    const QString outDir = qEnvironmentVariable("ATTN_SCREENSHOT_DIR");
    if (!outDir.isEmpty()) {
      QFile::copy(head, QDir(outDir).filePath(u"export-head.png"_s));
      QFile::copy(matrix, QDir(outDir).filePath(u"export-matrix.png"_s));
    }
  }

 private:
  QTemporaryDir settingsDir_;
};

ATTN_QT_TEST(TestTransformerTab, Widgets);

}  // namespace test_transformer_tab
#include "test_transformer_tab.moc"
