// The session file through the window: every tab set off its defaults, saved, and a fresh window opened from
// the file gives back the same state in every tab; the autosave timer writes (only when something changed);
// a bad session file opens nothing and says why; a missing file in a session falls back with a message; a
// failed save is reported; a *.attnscope.json dropped or opened with File > Open is opened as a session.
#include "qt_test_registry.h"
#include "session/session.h"
#include "window/main_window.h"
#include "ui_test_support.h"
#include "views/heatmap_view.h"
#include "workbenches/alignment/alignment_models.h"
#include "workbenches/alignment/alignment_workbench.h"
#include "workbenches/caption/caption_workbench.h"
#include "workbenches/corpus/corpus_workbench.h"
#include "attn/io/corpus_db.h"
#include "render/strings.h"
#include "workbenches/glimpse/glimpse_workbench.h"
#include "workbenches/lab/lab_workbench.h"
#include "workbenches/common/sample_images.h"
#include "workbenches/transformer/transformer_workbench.h"

#include <QApplication>
#include <QDateTime>
#include <QDropEvent>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QMessageBox>
#include <QMimeData>
#include <QStatusBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

#include <memory>

#include <sys/stat.h>

using namespace Qt::StringLiterals;

namespace test_session {
using namespace attn::ui;
namespace ui = attn::ui;
namespace {

constexpr int kTimeoutMs = 60000;

QString fromStd(const std::string& s) { return QString::fromStdString(s); }

// Nothing loading, running or waiting to be shown in any tab.
bool settleAll(MainWindow& w) {
  return QTest::qWaitFor(
      [&w] {
        return w.alignment()->isIdle() && w.lab()->settled() == w.lab()->submitted() && !w.glimpse()->isLoading() &&
               w.glimpse()->settled() == w.glimpse()->submitted() && w.transformer()->isIdle() &&
               w.caption()->isIdle() && w.corpus()->isIdle();
      },
      kTimeoutMs);
}

// Closes the session message box, if one is open, and says whether there was one.
bool closeMessageBox(MainWindow& w) {
  auto* box = w.findChild<QMessageBox*>(u"sessionMessage"_s);
  if (!box) return false;
  box->close();
  QTest::qWait(0);
  return true;
}

std::string describe(const ui::Session& s) { return ui::to_json(s); }

}  // namespace

class TestSession : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir settingsDir_;
  QTemporaryDir files_;
  ui::Session saved_;
  QString sessionPath_;

  // Every tab of `w` off its defaults.
  void setEverything(MainWindow& w) {
    auto* alignment = w.alignment();
    alignment->openModel(u"date-luong-general"_s);
    alignment->setText(u"3 March 1999"_s);
    alignment->setBeam(3);
    alignment->setColormap(render::Colormap::Magma);
    QVERIFY(settleAll(w));
    QVERIFY2(alignment->outcome(), qPrintable(alignment->lastError()));
    alignment->selectHypothesis(1);
    alignment->setStep(4);

    w.showCaption();  // starts the tab
    auto* caption = w.caption();
    caption->setRevealInterval(0);
    caption->openModel(QStringLiteral(ATTN_SOURCE_DIR "/tests/data/captioner/random-hard"));
    caption->openSample(u"chelsea"_s);
    caption->setBeam(2);
    render::CaptionOverlayOptions options;
    options.sigma = 4.5;
    options.opacity = 0.55;
    options.colormap = render::Colormap::Plasma;
    options.threshold = 0.3;
    options.mode = render::CaptionOverlayMode::LightMask;
    caption->setOverlayOptions(options);
    caption->setPerRow(7);
    QVERIFY(settleAll(w));
    QVERIFY2(caption->outcome(), qPrintable(caption->lastError()));
    caption->selectHypothesis(1);
    caption->setWord(2);

    auto request = w.lab()->request();
    request.query = "the cat sat";
    request.source = "a cat sat on the mat";
    request.params.mechanism = attn::lab::Mechanism::MultiHead;
    request.params.heads = 3;
    request.params.seed = 99;
    request.params.dim = 48;
    request.params.causal = true;
    w.lab()->setRequest(request);
    w.lab()->setColormap(render::Colormap::Cividis);
    w.lab()->setRangeMode(render::RangeMode::Unit);
    QVERIFY(settleAll(w));
    w.lab()->setCurrentMapIndex(2);

    auto* glimpse = w.glimpse();
    QVERIFY(glimpse->openSample(u"chelsea"_s));
    QVERIFY(settleAll(w));
    QVERIFY(glimpse->image());
    auto settings = glimpse->settings();
    settings.gaussian = attn::glimpse::centred_glimpse(100.0, 80.0, 16, 3.0, 1.5, 0.75);
    settings.stn.family = attn::glimpse::Family::Similarity;
    settings.stn.similarity.scale = 0.5;
    settings.stn.similarity.rotation = 0.25;
    settings.stn.out_w = 48;
    glimpse->setSettings(settings);
    glimpse->setWriteMode(true);
    glimpse->setEditStn(true);

    auto* transformer = w.transformer();
    QVERIFY(transformer->openDemo());
    QVERIFY(settleAll(w));
    QVERIFY2(transformer->outcome(), qPrintable(transformer->lastError()));
    transformer->setText(u"abcdefabcdef"_s);
    attn::analysis::RolloutOptions rollout;
    rollout.fusion = attn::analysis::HeadFusion::Max;
    rollout.discard_ratio = 0.25f;
    rollout.residual = 0.75f;
    transformer->setRolloutOptions(rollout);
    transformer->setMatrixMode(TransformerWorkbench::MatrixMode::Rollout);
    transformer->setOverlaySource(TransformerWorkbench::OverlaySource::Head);
    transformer->setOverlayAlpha(0.4);
    transformer->setColormap(render::Colormap::Greys);
    transformer->setView(TransformerWorkbench::View::Statistics);
    QVERIFY(settleAll(w));
    transformer->selectHead(1, 1);

    // A corpus database of two inputs of a 1 x 2 heads model, written here (no model is run: the heads map only).
    const QString corpus = files_.filePath(u"tiny corpus.sqlite"_s);
    {
      attn::io::CorpusMeta meta;
      meta.model = "no-model-needed";
      meta.shard = "0/1";
      auto db = attn::io::CorpusDb::open_for_run(toPath(corpus), meta);
      QVERIFY(db.has_value());
      for (std::int64_t id = 0; id < 2; ++id) {
        attn::analysis::CorpusRecord r;
        r.id = id;
        r.text = "input";
        r.tokens = 2;
        r.heads.resize(2);
        r.heads[1].head = 1;
        QVERIFY(db->add(r).has_value());
      }
      QVERIFY(db->close().has_value());
    }
    auto* c = w.corpus();
    c->setStatistic(u"mean_distance"_s);
    c->setSearch(attn::io::CorpusSearch::SinkMass);
    c->setModel(files_.filePath(u"another model"_s));
    c->selectHead(0, 1);
    c->openDatabase(corpus);
    QVERIFY(settleAll(w));
    QVERIFY2(c->overview(), qPrintable(c->lastError()));

    w.showGlimpse();
    QVERIFY(settleAll(w));
  }

 private slots:
  void initTestCase() { testing::isolateSettings(settingsDir_.path()); }

  void everyTabComesBackFromTheFile() {
    sessionPath_ = files_.filePath(u"every tab.attnscope.json"_s);
    {
      MainWindow w;
      w.show();
      QVERIFY(QTest::qWaitForWindowExposed(&w));
      setEverything(w);
      if (QTest::currentTestFailed()) return;
      saved_ = w.session();
      QVERIFY(w.saveSession(sessionPath_));
      QCOMPARE(w.sessionFile(), QFileInfo(sessionPath_).absoluteFilePath());
      QVERIFY(w.statusBar()->currentMessage().contains(u"Saved"_s));
    }
    // Each section is off its default, so the comparison below means something.
    const ui::Session defaults = ui::default_session();
    QCOMPARE(saved_.tab, ui::SessionTab::Glimpse);
    QVERIFY(saved_.alignment != defaults.alignment);
    QCOMPARE(fromStd(saved_.alignment->model), u"date-luong-general"_s);
    QCOMPARE(saved_.alignment->beam, 3);
    QVERIFY(saved_.alignment->step > 0);
    QVERIFY(saved_.caption != defaults.caption);
    QCOMPARE(saved_.caption->input, ui::CaptionSection::Input::Sample);
    QCOMPARE(saved_.caption->per_row, 7);
    QVERIFY(saved_.lab != defaults.lab);
    QCOMPARE(saved_.lab->map, 2);
    QVERIFY(saved_.lab->unit_range);
    QVERIFY(saved_.glimpse != defaults.glimpse);
    QVERIFY(saved_.glimpse->write_mode && saved_.glimpse->edit_stn);
    QCOMPARE(fromStd(saved_.glimpse->image.value), u"chelsea"_s);
    QVERIFY(saved_.transformer != defaults.transformer);
    QCOMPARE(fromStd(saved_.transformer->source), TransformerWorkbench::demoModelKey());
    QCOMPARE(saved_.transformer->layer, 1);
    QCOMPARE(saved_.transformer->view, ui::TransformerSection::View::Statistics);
    QVERIFY(saved_.corpus != defaults.corpus);
    QCOMPARE(saved_.corpus->head, 1);
    QCOMPARE(saved_.corpus->statistic, std::string("mean_distance"));
    // What was written is what the window held.
    const auto file = ui::load_session(QFile::encodeName(sessionPath_).toStdString());
    QVERIFY2(file, file ? "" : file.error().message().c_str());
    QVERIFY2(*file == saved_, describe(*file).c_str());

    // A fresh window (no autosave to restore) opened from the file.
    QFile::remove(MainWindow::autosaveFile());
    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openSession(sessionPath_));
    QCOMPARE(w.tabs()->currentWidget(), static_cast<QWidget*>(w.glimpse()));
    // Every tab shown once, so the lazily started Captioning tab opens what it was given.
    w.showCaption();
    w.caption()->setRevealInterval(0);
    QVERIFY(settleAll(w));
    w.showGlimpse();
    QVERIFY(settleAll(w));
    const ui::Session back = w.session();
    QVERIFY2(back.alignment == saved_.alignment, describe(back).c_str());
    QVERIFY2(back.caption == saved_.caption, describe(back).c_str());
    QVERIFY2(back.lab == saved_.lab, describe(back).c_str());
    QVERIFY2(back.glimpse == saved_.glimpse, describe(back).c_str());
    QVERIFY2(back.transformer == saved_.transformer, describe(back).c_str());
    QVERIFY2(back.corpus == saved_.corpus, describe(back).c_str());
    QCOMPARE(back.tab, saved_.tab);
    // And what the widgets show agrees (not only the state the tab reports).
    QCOMPARE(w.alignment()->source()->model.key, u"date-luong-general"_s);
    QCOMPARE(w.alignment()->hypothesis(), saved_.alignment->hypothesis);
    QCOMPARE(w.lab()->currentMapIndex(), 2);
    QCOMPARE(w.transformer()->layer(), 1);
    QCOMPARE(w.transformer()->head(), saved_.transformer->head);
    QVERIFY(w.corpus()->overview() != nullptr);
    QCOMPARE(w.corpus()->head(), 1);
    QCOMPARE(w.caption()->word(), saved_.caption->word);
    QVERIFY(w.glimpse()->settings() == saved_.glimpse->settings);
  }

  void theAutosaveTimerWritesWhenSomethingChanged() {
    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(settleAll(w));
    const QString autosave = MainWindow::autosaveFile();
    QFile::remove(autosave);
    QCOMPARE(w.autosaveTimer()->interval(), MainWindow::kAutosaveMs);
    QVERIFY(w.autosaveTimer()->isActive());
    w.autosaveTimer()->setInterval(50);
    QTRY_VERIFY_WITH_TIMEOUT(QFileInfo::exists(autosave), 5000);
    QVERIFY(settleAll(w));
    QTest::qWait(200);  // a tick for whatever the settling changed

    // Nothing changed: no write.
    const QDateTime written = QFileInfo(autosave).lastModified();
    QTest::qWait(400);
    QCOMPARE(QFileInfo(autosave).lastModified(), written);

    // A change: the next tick writes it.
    auto request = w.lab()->request();
    request.query = "autosaved query";
    w.lab()->setRequest(request);
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
          const auto s = ui::load_session(QFile::encodeName(autosave).toStdString());
          return s && s->lab && s->lab->request.query == "autosaved query";
        }(),
        5000);
    w.autosaveTimer()->setInterval(MainWindow::kAutosaveMs);

    // A new window restores the autosave.
    w.close();
    MainWindow next;
    QCOMPARE(next.lab()->request().query, std::string("autosaved query"));
    QVERIFY(settleAll(next));
  }

  void aBadSessionOpensNothingAndSaysWhy() {
    MainWindow w;
    w.show();
    QVERIFY(settleAll(w));
    auto request = w.lab()->request();
    request.query = "keep me";
    w.lab()->setRequest(request);
    QVERIFY(settleAll(w));
    const ui::Session before = w.session();
    const QString bad = files_.filePath(u"bad.attnscope.json"_s);
    QFile file(bad);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(R"({"format": "attnscope.session", "version": 1, "tabs": {"alignment": {"beam": 99}}})");
    file.close();
    QVERIFY(!w.openSession(bad));
    const QString message = w.statusBar()->currentMessage();
    QVERIFY2(message.contains(u"bad.attnscope.json"_s) && message.contains(u"beam"_s) && message.contains(u"byte"_s),
             qPrintable(message));
    QVERIFY(closeMessageBox(w));
    QVERIFY(w.session() == before);
    QCOMPARE(w.lab()->request().query, std::string("keep me"));
    QVERIFY(w.sessionFile().isEmpty());

    // Not JSON at all, and a file that is not there.
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("not json");
    file.close();
    QVERIFY(!w.openSession(bad));
    QVERIFY(w.statusBar()->currentMessage().contains(u"not valid JSON"_s));
    QVERIFY(closeMessageBox(w));
    QVERIFY(!w.openSession(files_.filePath(u"none.attnscope.json"_s)));
    QVERIFY(w.statusBar()->currentMessage().contains(u"none.attnscope.json"_s));
    QVERIFY(closeMessageBox(w));
    QVERIFY(w.session() == before);
  }

  void aMissingFileFallsBackAndIsNamed() {
    ui::Session s = ui::default_session();
    s.glimpse->image = {ui::ImageRef::Kind::File, (files_.path() + u"/gone.png"_s).toStdString()};
    s.lab->request.query = "the rest still opens";
    s.tab = ui::SessionTab::Lab;
    const QString path = files_.filePath(u"missing.attnscope.json"_s);
    QVERIFY(ui::save_session(QFile::encodeName(path).toStdString(), s));
    MainWindow w;
    w.show();
    QVERIFY(w.openSession(path));
    QVERIFY2(w.statusBar()->currentMessage().contains(u"gone.png"_s), qPrintable(w.statusBar()->currentMessage()));
    QVERIFY(settleAll(w));
    QCOMPARE(w.glimpse()->imagePath(), sampleImageResource(u"astronaut"_s));
    QCOMPARE(w.lab()->request().query, std::string("the rest still opens"));
    QCOMPARE(w.tabs()->currentWidget(), static_cast<QWidget*>(w.lab()));
  }

  // Issue 42: a session whose Glimpse photo is missing or is a FIFO said, once the default photo had opened, only
  // "Opened astronaut.png". The restore checks the photo as File > Open's load does (GlimpseWorker::probe), the note
  // says what happened, and the default photo opens as a fallback that does not cover it.
  void aMissingOrFifoGlimpseImageIsSaidAfterTheFallbackOpens() {
    const QString fifo = files_.filePath(u"pipe.png"_s);
    QVERIFY(::mkfifo(QFile::encodeName(fifo).constData(), 0600) == 0);
    const struct {
      QString image;
      QString says;
    } cases[] = {{files_.filePath(u"gone.png"_s), files_.filePath(u"gone.png"_s) + u": not found"_s},
                 {fifo, u"refused: "_s + fifo + u": is not a regular file"_s}};
    for (const auto& c : cases) {
      ui::Session s = ui::default_session();
      s.glimpse->image = {ui::ImageRef::Kind::File, c.image.toStdString()};
      s.tab = ui::SessionTab::Glimpse;
      const QString path = files_.filePath(u"glimpse-image.attnscope.json"_s);
      QVERIFY(ui::save_session(QFile::encodeName(path).toStdString(), s));
      MainWindow w;
      w.show();
      QVERIFY(w.openSession(path));
      QVERIFY(settleAll(w));
      QCOMPARE(w.glimpse()->imagePath(), sampleImageResource(u"astronaut"_s));
      const QString message = w.statusBar()->currentMessage();
      QVERIFY2(message.contains(u"glimpse-image.attnscope.json: the Glimpse tab's image, "_s + c.says +
                                u"; it opens astronaut.png instead"_s),
               qPrintable(message));
      QVERIFY2(!message.startsWith(u"Opened astronaut.png"_s), qPrintable(message));
      QVERIFY2(w.glimpse()->lastError().contains(c.says), qPrintable(w.glimpse()->lastError()));
      QVERIFY(w.glimpse()->errorBanner()->isVisible());
      if (const QString shot = qEnvironmentVariable("ATTN_TEST_SCREENSHOTS"); !shot.isEmpty())
        w.grab().save(shot + u"/glimpse-restore-"_s + QFileInfo(c.image).baseName() + u".png"_s);
    }
  }

  // After a restore, what is drawn is what the panels say. The Lab restored attention-over-attention over a
  // 50,000-character source and drew the default map of the default sentences (the source was refused);
  // a long source is now truncated and run, and a request the engine refuses leaves no map behind at all.
  void aRestoredLabDrawsWhatItsPanelSays() {
    std::string longSource;
    while (longSource.size() < 50000) longSource += "the apple fell from the tree and she ate it ";
    ui::Session s = ui::default_session();
    s.lab->request.params.mechanism = attn::lab::Mechanism::AttentionOverAttention;
    s.lab->request.source = longSource;
    s.tab = ui::SessionTab::Lab;
    const QString path = files_.filePath(u"long lab.attnscope.json"_s);
    QVERIFY(ui::save_session(QFile::encodeName(path).toStdString(), s));
    {
      MainWindow w;
      w.show();
      QVERIFY(w.openSession(path));
      QVERIFY(settleAll(w));
      QVERIFY2(w.lab()->lastError().isEmpty(), qPrintable(w.lab()->lastError()));
      QCOMPARE(w.lab()->outcome()->request.params.mechanism, attn::lab::Mechanism::AttentionOverAttention);
      QCOMPARE(w.lab()->outcome()->request.source, longSource);
      QCOMPARE(w.lab()->heatmap()->map(), w.lab()->currentMap());
      QCOMPARE(w.lab()->outcome()->result->source_tokens.size(), std::size_t(attn::lab::kMaxTokens));
    }
    // A request the session file allows but the engine refuses (5 heads do not divide d = 64).
    s.lab->request.params.mechanism = attn::lab::Mechanism::MultiHead;
    s.lab->request.params.dim = 64;
    s.lab->request.params.heads = 5;
    s.lab->request.source = "the apple fell";
    QVERIFY(ui::save_session(QFile::encodeName(path).toStdString(), s));
    MainWindow w;
    w.show();
    QVERIFY(w.openSession(path));
    QVERIFY(settleAll(w));
    QVERIFY2(w.lab()->lastError().contains(u"not divisible"_s), qPrintable(w.lab()->lastError()));
    QVERIFY(!w.lab()->heatmap()->map());
    QVERIFY(w.lab()->heatmap()->isShowingEmptyText());
    QVERIFY2(w.lab()->heatmap()->emptyText().contains(u"not divisible"_s), qPrintable(w.lab()->heatmap()->emptyText()));
  }

  // `attnscope --image /nonexistent.png` over a restored session: the session's photo was still opening
  // and the bad file replaced that load, so the status bar's "the previous image stays" was untrue. The
  // photo it replaced now opens after all, with the session's parameters.
  void aBadImageOverARestoredSessionKeepsTheSessionsPhoto() {
    ui::Session s = ui::default_session();
    s.glimpse->image = {ui::ImageRef::Kind::Sample, "chelsea"};
    s.tab = ui::SessionTab::Glimpse;
    const QString path = files_.filePath(u"photo.attnscope.json"_s);
    QVERIFY(ui::save_session(QFile::encodeName(path).toStdString(), s));
    MainWindow w;
    w.show();
    QVERIFY(w.openSession(path));
    w.glimpse()->openFile(files_.filePath(u"nonexistent.png"_s));
    QVERIFY(settleAll(w));
    QVERIFY2(w.glimpse()->lastError().contains(u"nonexistent.png"_s), qPrintable(w.glimpse()->lastError()));
    QCOMPARE(w.glimpse()->imagePath(), sampleImageResource(u"chelsea"_s));
    QVERIFY(w.glimpse()->settings() == s.glimpse->settings);
  }

  void aFailedSaveIsReported() {
    MainWindow w;
    w.show();
    QVERIFY(settleAll(w));
    const QString nowhere = files_.filePath(u"no/such/folder/x.attnscope.json"_s);
    QVERIFY(!w.saveSession(nowhere));
    QVERIFY2(w.statusBar()->currentMessage().contains(u"not saved"_s) &&
                 w.statusBar()->currentMessage().contains(u"x.attnscope.json"_s),
             qPrintable(w.statusBar()->currentMessage()));
    QVERIFY(closeMessageBox(w));
    QVERIFY(!QFileInfo::exists(nowhere));
    // The autosave's failure too (its folder is a file here).
    const QString blocker = files_.filePath(u"blocker"_s);
    QVERIFY(QFile(blocker).open(QIODevice::WriteOnly));
    MainWindow::setAutosaveFile(blocker + u"/autosave.attnscope.json"_s);
    QVERIFY(!w.autosave(true));
    QVERIFY(w.statusBar()->currentMessage().contains(u"autosave failed"_s));
    QVERIFY(closeMessageBox(w));
    MainWindow::setAutosaveFile(settingsDir_.path() + u"/autosave.attnscope.json"_s);
  }

  void sessionFilesOpenFromFileOpenAndDrops() {
    QVERIFY(!sessionPath_.isEmpty());
    MainWindow w;
    w.show();
    QVERIFY(settleAll(w));
    QVERIFY(w.openFile(sessionPath_));  // File > Open Text… hands a session to openSession
    QCOMPARE(w.sessionFile(), QFileInfo(sessionPath_).absoluteFilePath());
    QCOMPARE(w.tabs()->currentWidget(), static_cast<QWidget*>(w.glimpse()));
    QVERIFY(settleAll(w));
    w.showLab();
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(sessionPath_)});
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&w, &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&w, &drop);
    QCOMPARE(w.tabs()->currentWidget(), static_cast<QWidget*>(w.glimpse()));
    QVERIFY(settleAll(w));
  }
};

ATTN_QT_TEST(TestSession, Widgets);
}  // namespace test_session

#include "test_session.moc"
