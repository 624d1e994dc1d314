// MainWindow::openPath: a path dropped on the window and the same path given as `attnscope PATH` (what a desktop's
// "Open with" and a double-click run) open the same tab with the same state, and a path that cannot be opened gives
// the same message both ways (issue 41). The window's side is a drop on a fresh window; the command line's is the
// built program (ATTNSCOPE_GUI) with a fresh configuration, its state read back from --screenshot-session.
#include "qt_test_registry.h"
#include "window/main_window.h"
#include "attn/io/attention_dump.h"
#include "session/session.h"
#include "render/strings.h"
#include "ui_test_support.h"
#include "workbenches/lab/lab_workbench.h"
#include "workbenches/common/workbench.h"

#include <QDir>
#include <QDropEvent>
#include <QFile>
#include <QMimeData>
#include <QProcess>
#include <QStatusBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>

#include <memory>

using namespace attn::ui;
using namespace Qt::StringLiterals;
using attn::ui::SessionTab;

Q_DECLARE_METATYPE(attn::ui::SessionTab)

namespace test_open_path {

namespace {

const QString kData = QStringLiteral(ATTN_TEST_DATA_DIR);

// A three-layer dump of eight tokens: each head a different pattern, so its maps are not all alike.
bool writeDump(const QString& path) {
  attn::LayeredTrace trace;
  for (int t = 0; t < 8; ++t) trace.tokens.push_back(t == 0 ? std::string("[CLS]") : "tok" + std::to_string(t));
  for (int l = 0; l < 3; ++l) {
    attn::LayerAttention layer;
    layer.stage = attn::Stage::Encoder;
    layer.layer = l;
    layer.maps = attn::HeadStack(2, 8, 8);
    for (int h = 0; h < 2; ++h) {
      attn::Matrix m = attn::Matrix::Zero(8, 8);
      for (int r = 0; r < 8; ++r) m(r, h == 0 ? r : 0) = 1.0f;
      layer.maps.set_head(h, m);
    }
    trace.layers.push_back(std::move(layer));
  }
  return bool(attn::io::write_attention_dump(toPath(path), trace, "synthetic"));
}

// What `attnscope ARGS` did, with a configuration of its own (no autosave, no settings: a first start).
struct GuiRun {
  int exitCode = -1;
  QString err;
};

GuiRun runGui(const QStringList& arguments, const QString& home, const QString& workingFolder = {}) {
  QProcess process;
  if (!workingFolder.isEmpty()) process.setWorkingDirectory(workingFolder);
  QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
  for (const char* name : {"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"}) {
    const QString folder = QDir(home).filePath(QString::fromLatin1(name));
    QDir().mkpath(folder);
    environment.insert(QString::fromLatin1(name), folder);
  }
  environment.insert(u"QT_QPA_PLATFORM"_s, u"offscreen"_s);
  process.setProcessEnvironment(environment);
  process.start(QStringLiteral(ATTNSCOPE_GUI), arguments);
  GuiRun run;
  if (!process.waitForFinished(120000)) {
    process.kill();
    process.waitForFinished();
    return run;
  }
  run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
  run.err = QString::fromLocal8Bit(process.readAllStandardError());
  return run;
}

// The sections in which two sessions differ, for the failure's message.
QString differences(const attn::ui::Session& a, const attn::ui::Session& b) {
  QStringList names;
  if (a.tab != b.tab) names.append(u"tab"_s);
  if (a.alignment != b.alignment) names.append(u"alignment"_s);
  if (a.caption != b.caption) names.append(u"caption"_s);
  if (a.lab != b.lab) names.append(u"lab"_s);
  if (a.glimpse != b.glimpse) names.append(u"glimpse"_s);
  if (a.transformer != b.transformer) names.append(u"transformer"_s);
  return u"the sections that differ: "_s + names.join(u", "_s);
}

void drop(MainWindow& window, const QString& path) {
  QMimeData mime;
  mime.setUrls({QUrl::fromLocalFile(path)});
  const QPoint centre = window.rect().center();
  QDragEnterEvent enter(centre, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(&window, &enter);
  QVERIFY(enter.isAccepted());
  QDropEvent event(centre, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(&window, &event);
}

}  // namespace

class TestOpenPath : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir settingsDir_;
  QTemporaryDir files_;
  int windows_ = 0;

  // A window as on a first start: no autosave to restore, no settings.
  std::unique_ptr<MainWindow> freshWindow() {
    MainWindow::setAutosaveFile(QDir(settingsDir_.path()).filePath(u"autosave-%1.attnscope.json"_s.arg(++windows_)));
    QSettings().clear();
    auto window = std::make_unique<MainWindow>();
    window->show();
    return window;
  }

 private slots:
  void initTestCase() {
    testing::isolateSettings(settingsDir_.path());
    QFile text(files_.filePath(u"story.txt"_s));
    QVERIFY(text.open(QIODevice::WriteOnly));
    text.write("the dog barked\nthe cat sat on the mat and the dog barked at it\n");
    text.close();
    QVERIFY(QFile::copy(kData + u"/images/pattern-64x48.png"_s, files_.filePath(u"pattern.png"_s)));
    QVERIFY(writeDump(files_.filePath(u"synthetic.attn.safetensors"_s)));
    // A session left in the lab with a query of its own, and a photo in the Glimpse tab.
    attn::ui::Session session = attn::ui::default_session();
    session.tab = SessionTab::Lab;
    session.lab->request.query = "where did the cat sit";
    session.glimpse->image = {attn::ui::ImageRef::Kind::Sample, "coffee"};
    QVERIFY(attn::ui::save_session(toPath(files_.filePath(u"saved.attnscope.json"_s)), session));
    QVERIFY(QDir().mkpath(files_.filePath(u"empty-folder"_s)));
    QFile gguf(files_.filePath(u"model.gguf"_s));
    QVERIFY(gguf.open(QIODevice::WriteOnly));
    gguf.write("GGUF");
  }

  void dropAndCommandLineOpenTheSame_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<SessionTab>("tab");
    QTest::newRow("text file") << files_.filePath(u"story.txt"_s) << SessionTab::Lab;
    QTest::newRow("photo") << files_.filePath(u"pattern.png"_s) << SessionTab::Glimpse;
    QTest::newRow("transformer folder") << kData + u"/transformers/bert"_s << SessionTab::Transformer;
    QTest::newRow("its model.safetensors")
        << kData + u"/transformers/bert/model.safetensors"_s << SessionTab::Transformer;
    QTest::newRow("seq2seq folder") << kData + u"/seq2seq/random-bahdanau"_s << SessionTab::Alignment;
    QTest::newRow("attention dump") << files_.filePath(u"synthetic.attn.safetensors"_s) << SessionTab::Transformer;
    QTest::newRow("session") << files_.filePath(u"saved.attnscope.json"_s) << SessionTab::Lab;
  }
  void dropAndCommandLineOpenTheSame() {
    QFETCH(QString, path);
    QFETCH(SessionTab, tab);

    auto window = freshWindow();
    QVERIFY(QTest::qWaitForWindowExposed(window.get()));
    drop(*window, path);
    Workbench* shown = window->currentWorkbench();
    QCOMPARE(shown->identity().tab, tab);
    QVERIFY2(QTest::qWaitFor([&] { return shown->isIdle(); }, 30000), qPrintable(shown->lastError()));
    QVERIFY2(shown->lastError().isEmpty(), qPrintable(shown->lastError()));
    // Every tab settled, as --screenshot-session waits for.
    QVERIFY(QTest::qWaitFor(
        [&] { return std::ranges::all_of(window->workbenches(), [](const Workbench* w) { return w->isIdle(); }); },
        30000));
    attn::ui::Session dropped = window->session();

    // The command line with the path as a file manager gives it (absolute).
    QTemporaryDir home;
    const QString shot = home.filePath(u"shot.png"_s), state = home.filePath(u"state.attnscope.json"_s);
    const GuiRun run = runGui({path, u"--screenshot"_s, shot, u"--screenshot-session"_s, state}, home.path());
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QVERIFY(testing::imageStats(QImage(shot)).distinctColours > 12);
    const auto opened = attn::ui::load_session(toPath(state));
    QVERIFY2(opened, opened ? "" : opened.error().message().c_str());
    QCOMPARE(opened->tab, tab);
    // Every tab's section, the Glimpse tab's photo among them (--screenshot-session waits for every tab to be idle:
    // under ASan that section was once caught half-read).
    QVERIFY2(*opened == dropped, qPrintable(differences(*opened, dropped)));
  }

  // A relative path is opened as the absolute one (the recent lists and the session keep it so).
  void commandLinePathsAreMadeAbsolute() {
    QTemporaryDir home;
    const QString state = home.filePath(u"state.attnscope.json"_s);
    const GuiRun run =
        runGui({u"bert"_s, u"--screenshot"_s, home.filePath(u"shot.png"_s), u"--screenshot-session"_s, state},
               home.path(), kData + u"/transformers"_s);
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    const auto opened = attn::ui::load_session(toPath(state));
    QVERIFY(opened);
    QCOMPARE(opened->tab, SessionTab::Transformer);
    QCOMPARE(QString::fromStdString(opened->transformer->source), QDir(kData).filePath(u"transformers/bert"_s));
  }

  // What cannot be opened says why, on the status bar or in its tab after a drop, and the same words on the
  // command line: at once (exit 2, nothing opened) or once the tab has tried (exit 1, as for --model).
  void aBadPathGivesTheSameMessage_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("atOnce");
    QTest::addColumn<QString>("expected");
    QTest::newRow("no such file") << files_.filePath(u"no-such.txt"_s) << true << u"does not exist"_s;
    QTest::newRow("no such photo") << files_.filePath(u"no-such.png"_s) << true << u"does not exist"_s;
    QTest::newRow("no such model file") << files_.filePath(u"gone/model.safetensors"_s) << true << u"does not exist"_s;
    QTest::newRow("gguf cut short") << files_.filePath(u"model.gguf"_s) << false
                                    << u"model.gguf: byte 4: the file ends inside the version"_s;
    QTest::newRow("folder without a model") << files_.filePath(u"empty-folder"_s) << false << u"config.json"_s;
  }
  void aBadPathGivesTheSameMessage() {
    QFETCH(QString, path);
    QFETCH(bool, atOnce);
    QFETCH(QString, expected);

    auto window = freshWindow();
    QCOMPARE(window->openPath(path), !atOnce);
    QString message;
    if (atOnce) {
      message = window->statusBar()->currentMessage();
    } else {
      Workbench* shown = window->currentWorkbench();
      QVERIFY(QTest::qWaitFor([&] { return !shown->lastError().isEmpty(); }, 30000));
      message = shown->lastError();
    }
    QVERIFY2(message.contains(expected), qPrintable(message));

    QTemporaryDir home;
    const GuiRun run = runGui({path, u"--screenshot"_s, home.filePath(u"shot.png"_s)}, home.path());
    QCOMPARE(run.exitCode, atOnce ? 2 : 1);
    QVERIFY2(run.err.contains(u"attnscope: "_s + message), qPrintable(run.err + u" | "_s + message));
  }
};

ATTN_QT_TEST(TestOpenPath, Widgets);

}  // namespace test_open_path
#include "test_open_path.moc"
