// The Transformer tab's Attribution view (issue 44) on the bundled induction-gpt2: gradient x input of the prediction
// after "abcdefghijklabcdefgh" is the engine's, the shaded text's colours follow the scores' signs, the per-layer map
// and the deletion curve are drawn, the work runs on a thread of its own, exports write the scores, a session keeps the
// settings, and a generated step is explained at the position that predicted it.
#include "qt_test_registry.h"
#include "session/session.h"
#include "ui_test_support.h"
#include "views/figure_map_view.h"
#include "views/qcustomplot.h"
#include "views/token_strip_view.h"
#include "workbenches/transformer/transformer_attribution.h"
#include "workbenches/transformer/transformer_patching.h"
#include "workbenches/transformer/transformer_workbench.h"

#include "attn/models/attribution.h"

#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QSignalSpy>
#include <QSlider>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

using namespace attn::ui;
using namespace Qt::StringLiterals;
namespace am = attn::models;

namespace test_transformer_attribution {

namespace {

const QString kText = u"abcdefghijklabcdefgh"_s;

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

// Waits for the panel's next result (it computes while shown, after its debounce).
bool computed(AttributionPanel& panel, int ms = 60000) {
  QSignalSpy finished(&panel, &AttributionPanel::finished);
  if (!finished.wait(ms)) return false;
  return finished.back().front().toBool();
}

}  // namespace

class TestTransformerAttribution : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { testing::isolateSettings(settingsDir_.path()); }

  // Gradient x input of the demo's prediction: the engine's scores on the same ids, each token red where its score is
  // positive and blue where negative (RdBu about 0), the explained position outlined, the per-layer relevance as
  // layers + 1 rows, and the deletion curve starting at the prediction's probability.
  void gradientTimesInputShadesTheText() {
    TransformerWorkbench wb;
    wb.resize(1320, 860);
    wb.show();
    QVERIFY(wb.openDemo());
    wb.setText(kText);
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    auto* panel = wb.attributionPanel();
    QVERIFY(panel);
    QCOMPARE(wb.viewTabs()->tabText(wb.viewTabs()->indexOf(panel)), u"Attribution"_s);
    QCOMPARE(wb.viewTabs()->indexOf(panel), wb.viewTabs()->indexOf(wb.patchingPanel()) + 1);
    panel->setMethod(am::AttributionMethod::GradXInput);
    wb.selectHead(1, 1);
    wb.viewTabs()->setCurrentWidget(panel);  // it computes while shown
    QVERIFY2(computed(*panel), qPrintable(panel->note()->text()));
    const auto* result = panel->result();
    QVERIFY(result);
    // Never on the GUI thread.
    QVERIFY(panel->lastWorkerThread() != nullptr);
    QVERIFY(panel->lastWorkerThread() != QThread::currentThreadId());

    // The engine's own attribution of the same input.
    const auto& model = wb.source()->model;
    am::TransformerRunner runner(model);
    am::RunOptions options;
    options.top_k = 0;
    auto run = runner.run_text(kText.toStdString(), {}, options);
    QVERIFY(run);
    auto expected = am::attribute(*model, *run, {}, {});
    QVERIFY(expected);
    const auto& a = result->attribution;
    QCOMPARE(a.position, int(kText.size()) - 1);
    QCOMPARE(a.token, expected->token);
    QCOMPARE(model->tokenizer()->display(a.token), std::string("i"));
    QCOMPARE(a.scores.size(), expected->scores.size());
    for (std::size_t i = 0; i < a.scores.size(); ++i) QCOMPARE(a.scores[i], expected->scores[i]);

    // The colours follow the signs: red above 0, blue below, on a scale symmetric about 0.
    float max = 0;
    for (float s : a.scores) max = std::max(max, std::abs(s));
    int positive = 0, negative = 0;
    for (std::size_t i = 0; i < a.scores.size(); ++i) {
      const float s = a.scores[i];
      if (std::abs(s) < 0.05f * max) continue;
      const QColor c = panel->scoresView()->tokenColor(qint64(i));
      if (s > 0) {
        ++positive;
        QVERIFY2(c.red() > c.blue(), qPrintable(u"token %1, score %2: %3"_s.arg(i).arg(s).arg(c.name())));
      } else {
        ++negative;
        QVERIFY2(c.blue() > c.red(), qPrintable(u"token %1, score %2: %3"_s.arg(i).arg(s).arg(c.name())));
      }
    }
    // Here "h" (twice) and "j" lower the logit of "i" most (gradient x input of induction-gpt2, as torch has it).
    QVERIFY2(negative >= 3, qPrintable(u"%1 positive, %2 negative"_s.arg(positive).arg(negative)));
    // The same strip on scores of both signs: blue, white at 0, red.
    TokenStripView strip;
    strip.setColormap(render::Colormap::RdBu);
    strip.setTokens({u"a"_s, u"b"_s, u"c"_s});
    strip.setValues({-2.0f, 0.0f, 1.0f}, 2.0f, true);
    QVERIFY(strip.tokenColor(0).blue() > strip.tokenColor(0).red() + 50);
    QVERIFY(std::abs(strip.tokenColor(1).red() - strip.tokenColor(1).blue()) < 8);
    QVERIFY(strip.tokenColor(2).red() > strip.tokenColor(2).blue() + 50);
    // The largest score is the scale's end: the deepest red or blue.
    QVERIFY2(panel->scoresView()->values() == a.scores, "the strip shows the scores themselves");
    QVERIFY(panel->valueLabel()->text().contains(u"F = "_s));
    QVERIFY(!panel->valueLabel()->toolTip().isEmpty());

    // Beside it, the attention of the head in view from the explained position.
    const auto& attention = panel->attentionView()->values();
    QCOMPARE(attention.size(), a.scores.size());
    const auto map = run->attention.map(run->attention.layers.front().stage, 1, 1);
    for (std::size_t k = 0; k < attention.size(); ++k) QCOMPARE(attention[k], map->weights(a.position, attn::Index(k)));

    // The per-layer relevance: layers + 1 rows, RdBu centred on 0.
    const auto& figure = panel->layerView()->figure();
    QVERIFY(figure.map);
    QCOMPARE(figure.map->weights.rows(), attn::Index(model->config().layers + 1));
    QCOMPARE(figure.colormap, render::Colormap::RdBu);
    QCOMPARE(figure.rangeMode, render::RangeMode::Symmetric);

    // The deletion curve: k = 0 .. 19 removable tokens (the explained position stays), starting at p("i").
    QVERIFY(result->deletion);
    QCOMPARE(result->deletion->removed.front(), 0);
    QCOMPARE(result->deletion->removed.back(), int(a.scores.size()) - 1);
    QCOMPARE(result->deletion->probability.front(), result->probability);
    QCOMPARE(panel->deletionPlot()->graph(0)->dataCount(), int(result->deletion->removed.size()));
    QVERIFY(result->probability > 0.3);

    // Export: the figures as a picture, the scores as index, token, score.
    QTemporaryDir dir;
    const QString png = dir.filePath(u"attribution.png"_s), csv = dir.filePath(u"attribution.csv"_s);
    auto written = wb.exportCurrentView(png);
    QVERIFY2(written, written ? "" : written.error().message().c_str());
    QVERIFY(testing::looksDrawn(QImage(png)));
    for (const char* format : {"svg", "pdf"}) {
      const QString path = dir.filePath(u"attribution."_s + QLatin1String(format));
      written = wb.exportCurrentView(path);
      QVERIFY2(written, written ? "" : written.error().message().c_str());
      QVERIFY(QFileInfo(path).size() > 1000);
    }
    written = wb.exportMatrix(csv);
    QVERIFY2(written, written ? "" : written.error().message().c_str());
    QFile file(csv);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const auto lines = QString::fromUtf8(file.readAll()).split(u"\r\n"_s, Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), int(a.scores.size()) + 1);
    QCOMPARE(lines.front(), u"index,token,score"_s);
    QCOMPARE(lines.at(1).section(u',', 2).toFloat(), a.scores[0]);
    QCOMPARE(lines.at(1).section(u',', 1, 1), u"a"_s);

    const QString shots = qEnvironmentVariable("ATTN_SCREENSHOT_DIR");
    if (!shots.isEmpty()) {
      // The README's picture: AttnLRP, whose strongest positive token is the "i" after the first "h", the token the
      // induction head in view (layer 1 head 1) copies.
      panel->setMethod(am::AttributionMethod::AttnLrp);
      QVERIFY2(computed(*panel), qPrintable(panel->note()->text()));
      QTest::qWait(200);
      wb.grab().save(QDir(shots).filePath(u"transformer-attribution.png"_s));
    }
  }

  // A change of method re-runs by itself (debounced); integrated gradients says its completeness gap.
  void aChangedSettingRunsAgain() {
    TransformerWorkbench wb;
    wb.resize(1320, 860);
    wb.show();
    QVERIFY(wb.openDemo());
    wb.setText(kText);
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    auto* panel = wb.attributionPanel();
    wb.viewTabs()->setCurrentWidget(panel);
    QVERIFY2(computed(*panel), qPrintable(panel->note()->text()));
    panel->setSteps(16);
    panel->setMethod(am::AttributionMethod::IntegratedGradients);
    QVERIFY2(computed(*panel), qPrintable(panel->note()->text()));
    const auto& a = panel->result()->attribution;
    QCOMPARE(a.method, am::AttributionMethod::IntegratedGradients);
    QVERIFY(std::isfinite(a.gap));
    QVERIFY2(panel->valueLabel()->text().contains(u"gap"_s), qPrintable(panel->valueLabel()->text()));
    // Another target: the second candidate of the prediction list, explained by its own scores.
    QVERIFY(panel->tokenBox()->count() > 2);
    const QString second = panel->tokenBox()->itemData(2, Qt::UserRole + 1).toString();
    panel->setTargetToken(second);
    QVERIFY2(computed(*panel), qPrintable(panel->note()->text()));
    QCOMPARE(QString::fromStdString(wb.source()->model->tokenizer()->display(panel->result()->attribution.token)),
             second);
    // An ablation changes the tab's run, not the model explained: the same scores, and the note says so.
    const auto scores = panel->result()->attribution.scores;
    wb.toggleAblation(1, 1);
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    QTRY_VERIFY_WITH_TIMEOUT(panel->note()->text().contains(u"ablated"_s), 5000);
    QCOMPARE(panel->result()->attribution.scores, scores);
  }

  // Every method of the box either computes its scores (one per token) or says in the note why it cannot (flow's
  // bound, a method the family cannot support): never a silent or stale view.
  void everyMethodComputesOrSaysWhy() {
    TransformerWorkbench wb;
    wb.resize(1320, 860);
    wb.show();
    QVERIFY(wb.openDemo());
    wb.setText(kText);
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    auto* panel = wb.attributionPanel();
    wb.viewTabs()->setCurrentWidget(panel);
    QVERIFY2(computed(*panel), qPrintable(panel->note()->text()));
    for (const auto method : am::all_methods()) {
      if (method == am::AttributionMethod::GradXInput) continue;  // computed above
      QSignalSpy finished(panel, &AttributionPanel::finished);
      panel->setMethod(method);
      QVERIFY(finished.wait(60000));
      const bool ok = finished.back().front().toBool();
      const std::string name(am::method_name(method));
      if (ok) {
        QCOMPARE(panel->result()->attribution.method, method);
        QCOMPARE(panel->result()->attribution.scores.size(), std::size_t(kText.size()));
        QVERIFY2(!panel->scoresView()->values().empty(), name.c_str());
      } else {
        QVERIFY2(!panel->result(), name.c_str());
        QVERIFY2(!panel->note()->text().isEmpty(), name.c_str());
        QVERIFY2(panel->scoresView()->values().empty(), name.c_str());
      }
    }
  }

  // BERT explains its [MASK] (the engine's scores on the same ids), and its deletion curve replaces the top tokens by
  // [MASK], never [CLS] or [SEP]; a ViT explains its class from the photo (the run made again with capture), with no
  // deletion curve.
  void bertExplainsItsMaskAndViTItsClass() {
    TransformerWorkbench wb;
    wb.resize(1320, 860);
    wb.show();
    wb.openPath(QStringLiteral(ATTN_SOURCE_DIR "/tests/data/transformers/bert"));
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    wb.setText(u"the dog sat on the [MASK] ."_s);
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    auto* panel = wb.attributionPanel();
    wb.viewTabs()->setCurrentWidget(panel);
    QVERIFY2(computed(*panel), qPrintable(panel->note()->text()));
    const auto& run = *wb.outcome()->run;
    const auto* tokenizer = wb.source()->model->tokenizer();
    const int mask = int(std::find(run.ids.begin(), run.ids.end(), *tokenizer->specials().mask) - run.ids.begin());
    const auto* result = panel->result();
    QCOMPARE(result->attribution.position, mask);
    auto expected = am::attribute(*wb.source()->model, run, {}, {});
    QVERIFY(expected);
    QCOMPARE(result->attribution.scores, expected->scores);
    QVERIFY(result->deletion);
    // The engine's curve (models::deletion_curve, whose order its unit tests check): [MASK] put in, and every token
    // but [CLS], [SEP] and the [MASK] itself removed by the last point.
    QVERIFY2(result->deletion->how.find("[MASK]") != std::string::npos, result->deletion->how.c_str());
    QCOMPARE(result->deletion->removed.back(), int(run.ids.size()) - 3);

    wb.openPath(QStringLiteral(ATTN_SOURCE_DIR "/tests/data/transformers/vit"));
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    QVERIFY(wb.source()->isVision());
    QVERIFY2(computed(*panel), qPrintable(panel->note()->text()));
    QCOMPARE(panel->result()->attribution.scores.size(), std::size_t(17));
    QVERIFY(!panel->result()->deletion);
    QCOMPARE(panel->result()->deletionNote, std::string("a photo has no tokens to remove"));
    QVERIFY(panel->deletionPlot()->graph(0)->dataCount() == 0);
    if (const QString shots = qEnvironmentVariable("ATTN_SCREENSHOT_DIR"); !shots.isEmpty()) {
      QTest::qWait(200);  // the labels' new lines laid out
      wb.grab().save(QDir(shots).filePath(u"transformer-attribution-vit.png"_s));
    }
  }

  // The worker's job stops on its cancel flag with an error of kind Cancelled (the panel's Cancel and a newer request
  // set it), and without one it gives the same scores as the panel's first run.
  void theJobStopsOnItsCancelFlag() {
    TransformerWorkbench wb;
    QVERIFY(wb.openDemo());
    wb.setText(kText);
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    AttributionJob job;
    job.model = wb.source()->model;
    job.ids = wb.outcome()->run->ids;
    job.options.method = am::AttributionMethod::IntegratedGradients;
    job.options.steps = 8;
    std::atomic<bool> cancel{true};
    int reports = 0;
    auto stopped = computeAttribution(job, &cancel, [&](int, int) { ++reports; });
    QVERIFY(!stopped);
    QCOMPARE(stopped.error().kind, attn::ErrorKind::Cancelled);
    cancel = false;
    int last = -1, of = 0;
    auto done = computeAttribution(job, &cancel, [&](int d, int o) {
      QVERIFY(d >= last);
      last = d;
      of = o;
    });
    QVERIFY2(done, done ? "" : done.error().message().c_str());
    QCOMPARE(last, of);  // the bar ends full
    QCOMPARE(done->attribution.scores.size(), std::size_t(kText.size()));
    QCOMPARE(int(done->deletion->removed.size()), int(kText.size()));  // k = 0 .. 19
  }

  // The method, the target, the steps and the baseline go into the session and come back.
  void aSessionKeepsTheSettings() {
    TransformerWorkbench wb;
    auto* panel = wb.attributionPanel();
    panel->setMethod(am::AttributionMethod::IntegratedGradients);
    panel->setKind(am::AttributionTarget::Kind::LogProb);
    panel->setSteps(64);
    panel->setBaseline(am::AttributeOptions::Baseline::Pad);
    panel->setTargetToken(u"i"_s);
    Session session = default_session();
    wb.saveTo(session);
    const auto& kept = session.transformer->causal.attribution;
    QCOMPARE(kept.method, std::string("integrated-gradients"));
    QCOMPARE(kept.kind, std::string("logprob"));
    QCOMPARE(kept.steps, 64);
    QCOMPARE(kept.baseline, std::string("pad"));
    QCOMPARE(kept.token, std::string("i"));
    const std::string text = to_json(session);
    auto read = read_session(text, "test.attnscope.json");
    QVERIFY2(read, read ? "" : read.error().message().c_str());
    QVERIFY(*read == session);
    TransformerWorkbench other;
    other.restoreFrom(*read, u"test"_s);
    auto* restored = other.attributionPanel();
    QCOMPARE(restored->method(), am::AttributionMethod::IntegratedGradients);
    QCOMPARE(restored->kind(), am::AttributionTarget::Kind::LogProb);
    QCOMPARE(restored->steps(), 64);
    QCOMPARE(restored->baseline(), am::AttributeOptions::Baseline::Pad);
    QCOMPARE(restored->targetToken(), u"i"_s);

    // Steps out of 1..1024 are refused with the key named; a session without the member has the defaults.
    auto bad = nlohmann::json::parse(text);
    bad["tabs"]["transformer"]["causal"]["attribution"]["steps"] = 0;
    auto refused = read_session(bad.dump(), "bad.attnscope.json");
    QVERIFY(!refused);
    QVERIFY2(refused.error().message().find("steps") != std::string::npos, refused.error().message().c_str());
    auto old = nlohmann::json::parse(text);
    old["tabs"]["transformer"]["causal"].erase("attribution");
    auto oldRead = read_session(old.dump(), "old.attnscope.json");
    QVERIFY2(oldRead, oldRead ? "" : oldRead.error().message().c_str());
    QVERIFY(oldRead->transformer->causal.attribution == AttributionState{});
  }

  // A generated run: the scrubbed step's token, explained at the position before it (stories260k).
  void aGeneratedStepIsExplainedWhereItWasPredicted() {
    TransformerWorkbench wb;
    wb.resize(1320, 860);
    wb.show();
    QVERIFY(wb.openDemo(TransformerWorkbench::storyModelKey()));
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    auto options = wb.generation();
    options.max_new_tokens = 6;
    options.temperature = 0;
    wb.setGeneration(options);
    wb.generate();
    QVERIFY2(settle(wb, 60000), qPrintable(wb.lastError()));
    const auto run = wb.outcome()->run;
    QVERIFY(run->prompt_tokens > 0);
    wb.scrubber()->setValue(2);
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    auto* panel = wb.attributionPanel();
    wb.viewTabs()->setCurrentWidget(panel);
    QVERIFY2(computed(*panel), qPrintable(panel->note()->text()));
    const auto& a = panel->result()->attribution;
    QCOMPARE(a.position, run->prompt_tokens + 2 - 1);
    QCOMPARE(a.token, run->ids[std::size_t(run->prompt_tokens + 2)]);
    QCOMPARE(int(a.scores.size()), run->prompt_tokens + 2);
    QVERIFY(panel->tokenBox()->itemText(0).startsWith(u"generated"_s));
  }

 private:
  QTemporaryDir settingsDir_;
};

ATTN_QT_TEST(TestTransformerAttribution, Widgets);

}  // namespace test_transformer_attribution
#include "test_transformer_attribution.moc"
