// The main window: its tabs (the Alignment tab first and in view on the first start), menus and shortcuts,
// status bar messages, open / drop / recent files (model folders routed to the tab of their family),
// exports, and geometry kept across sessions.
#include "qt_test_registry.h"
#include "window/help_dialogs.h"
#include "window/main_window.h"
#include "window/status_line.h"
#include "views/qcustomplot.h"
#include "ui_test_support.h"
#include "views/heatmap_view.h"
#include "workbenches/alignment/alignment_models.h"
#include "workbenches/alignment/alignment_workbench.h"
#include "workbenches/caption/caption_workbench.h"
#include "workbenches/corpus/corpus_workbench.h"
#include "workbenches/glimpse/glimpse_workbench.h"
#include "workbenches/lab/lab_workbench.h"
#include "workbenches/transformer/transformer_workbench.h"

#include <QAction>
#include <QComboBox>
#include <QDropEvent>
#include <QFileInfo>
#include <QSignalSpy>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QSet>
#include <QSettings>
#include <QShortcut>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableWidget>
#include <QTextBrowser>
#include <QTest>

using namespace attn::ui;
using namespace Qt::StringLiterals;

namespace test_main_window {

namespace {

bool settle(LabWorkbench& lab) {
  return QTest::qWaitFor([&] { return lab.settled() == lab.submitted(); }, 20000);
}

QString writeFile(const QTemporaryDir& dir, const QString& name, const QByteArray& bytes) {
  const QString path = dir.filePath(name);
  QFile file(path);
  if (file.open(QIODevice::WriteOnly)) file.write(bytes);
  return path;
}

QAction* actionWithShortcut(QWidget& window, const QKeySequence& keys) {
  for (auto* action : window.findChildren<QAction*>()) {
    if (action->shortcuts().contains(keys)) return action;
  }
  return nullptr;
}

}  // namespace

class TestMainWindow : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir settingsDir_;
  QTemporaryDir files_;
  std::unique_ptr<MainWindow> window_;

 private slots:
  void initTestCase() {
    testing::isolateSettings(settingsDir_.path());
    window_ = std::make_unique<MainWindow>();
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
    QVERIFY(settle(*window_->lab()));
  }

  void alignmentTabFirstThenCaptionLabGlimpseTransformer() {
    auto* tabs = window_->findChild<QTabWidget*>();
    QVERIFY(tabs);
    QCOMPARE(tabs->count(), 6);
    QCOMPARE(tabs->widget(0), static_cast<QWidget*>(window_->alignment()));
    QCOMPARE(tabs->widget(1), static_cast<QWidget*>(window_->caption()));
    QCOMPARE(tabs->widget(2), window_->lab());
    QCOMPARE(tabs->widget(3), static_cast<QWidget*>(window_->glimpse()));
    QCOMPARE(tabs->widget(4), static_cast<QWidget*>(window_->transformer()));
    QCOMPARE(tabs->widget(5), static_cast<QWidget*>(window_->corpus()));
    // A first start lands on the Alignment tab with the bundled Bahdanau model and a date.
    QCOMPARE(tabs->currentWidget(), static_cast<QWidget*>(window_->alignment()));
    QCOMPARE(window_->alignment()->text(), defaultDateText());
    if (findBundledModel(defaultAlignmentModel())) {
      QTRY_VERIFY_WITH_TIMEOUT(window_->alignment()->outcome() != nullptr, 20000);
      QCOMPARE(window_->alignment()->source()->model.key, defaultAlignmentModel());
      QTRY_VERIFY(window_->runLabel()->text().startsWith(u"alignment: "_s));
    }
    // The rest of this suite is about the lab.
    window_->showLab();
  }

  // QCustomPlot replots at every resize, an empty one too, and Qt then warns on stderr for each layer of each plot
  // (13 to 20 lines at every --screenshot before ui::Plot): a window of its own, grabbed, every tab visited, two sizes.
  void noPaintWarningsOnEveryTab() {
    QTest::failOnWarning(QRegularExpression(u"QPainter::begin|paint buffer returned inactive painter"_s));
    MainWindow window;
    window.resize(1280, 860);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    // As --screenshot does: grabbing the window sends the pending resizes of the pages never shown.
    QVERIFY(!window.grab().isNull());
    auto* tabs = window.findChild<QTabWidget*>();
    QVERIFY(tabs);
    for (const QSize size : {QSize(1280, 860), QSize(640, 400)}) {
      window.resize(size);
      for (int i = 0; i < tabs->count(); ++i) {
        tabs->setCurrentIndex(i);
        QTest::qWait(50);
      }
    }
  }

  void standardShortcuts_data() {
    QTest::addColumn<QKeySequence>("keys");
    const auto standardOr = [](QKeySequence::StandardKey key, QKeySequence fallback) {
      const QKeySequence standard(key);
      return standard.isEmpty() ? fallback : standard;
    };
    QTest::newRow("open") << QKeySequence(QKeySequence::Open);
    QTest::newRow("save/export") << QKeySequence(QKeySequence::Save);
    QTest::newRow("quit") << standardOr(QKeySequence::Quit, QKeySequence(Qt::CTRL | Qt::Key_Q));
    QTest::newRow("full screen") << standardOr(QKeySequence::FullScreen, QKeySequence(Qt::Key_F11));
    QTest::newRow("open model") << QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_M);
  }
  void standardShortcuts() {
    QFETCH(QKeySequence, keys);
    QVERIFY(!keys.isEmpty());
    QVERIFY(actionWithShortcut(*window_, keys));
  }

  void statusBarShowsTheLastRun() {
    QTRY_VERIFY(window_->runLabel()->text().startsWith(u"lab: "_s));
    QVERIFY(window_->runLabel()->text().contains(u" ms"_s));
    QVERIFY(window_->runLabel()->text().contains(u" x "_s));
  }

  void badInputShowsAStatusMessageAndKeepsTheView() {
    auto* lab = window_->lab();
    const auto* before = lab->heatmap()->map();
    lab->sourceEdit()->clear();
    QVERIFY(settle(*lab));
    QTRY_VERIFY(window_->statusBar()->currentMessage().contains(u"source"_s));
    QCOMPARE(lab->heatmap()->map(), before);
    lab->sourceEdit()->setPlainText(
        QString::fromUtf8(attn::lab::kDefaultSource.data(), attn::lab::kDefaultSource.size()));
    QVERIFY(settle(*lab));
    QVERIFY(lab->lastError().isEmpty());
  }

  // A message belongs to its tab: the lab's refusal is not shown on the Transformer tab, and is back on the
  // lab. A long one is cut at a word's end, the whole text in the tooltip, clear of the run label.
  void statusMessagesBelongToTheirTab() {
    auto* lab = window_->lab();
    window_->showLab();
    lab->sourceEdit()->clear();
    QVERIFY(settle(*lab));
    QTRY_VERIFY(window_->statusBar()->currentMessage().contains(u"source"_s));
    const QString refusal = window_->statusBar()->currentMessage();
    window_->showTransformer();
    QVERIFY2(window_->statusBar()->currentMessage() != refusal, qPrintable(window_->statusBar()->currentMessage()));
    window_->showLab();
    QCOMPARE(window_->statusBar()->currentMessage(), refusal);
    lab->sourceEdit()->setPlainText(
        QString::fromUtf8(attn::lab::kDefaultSource.data(), attn::lab::kDefaultSource.size()));
    QVERIFY(settle(*lab));
    QVERIFY(!window_->statusBar()->currentMessage().contains(u"Input refused"_s));

    QStringList words;
    for (int i = 0; i < 120; ++i) words << u"message%1"_s.arg(i);
    const QString longText = words.join(u' ');
    emit lab->statusMessage(longText, 0);
    auto* line = window_->findChild<ElidedLabel*>(u"statusLine"_s);
    QVERIFY(line);
    QTRY_VERIFY(line->isElided());
    QCOMPARE(line->toolTip(), longText);
    QVERIFY(line->text().endsWith(u"\u2026"_s));
    const QString kept = line->text().chopped(1);
    QVERIFY2(longText.startsWith(kept) && longText.at(kept.size()) == u' ', qPrintable(line->text()));  // a whole word
    QVERIFY(line->fontMetrics().horizontalAdvance(line->text()) <= line->contentsRect().width());
    QVERIFY(line->geometry().right() < window_->runLabel()->geometry().left());
    lab->statusMessage(QString(), 1);
  }

  void openingATextFileFillsTheLab() {
    const QString path =
        writeFile(files_, u"pair.txt"_s, "\n\n  the cat sat  \nle chat \xc3\xa9tait assis\nsur le tapis\n");
    QVERIFY(window_->openFile(path));
    auto* lab = window_->lab();
    QCOMPARE(lab->queryEdit()->text(), u"the cat sat"_s);
    QCOMPARE(lab->sourceEdit()->toPlainText(), u"le chat \u00e9tait assis\nsur le tapis"_s);
    QVERIFY(settle(*lab));
    QVERIFY(lab->lastError().isEmpty());
    QCOMPARE(lab->heatmap()->map()->row_labels.front(), std::string("the"));
    QCOMPARE(window_->recentFiles().front(), QFileInfo(path).absoluteFilePath());
  }

  void droppingAFileOpensIt() {
    const QString path = writeFile(files_, u"dropped.txt"_s, "a dog barked\nthe dog barked at the cat\n");
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(path)});
    const QPoint centre = window_->rect().center();
    QDragEnterEvent enter(centre, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(window_.get(), &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(centre, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(window_.get(), &drop);
    QCOMPARE(window_->lab()->queryEdit()->text(), u"a dog barked"_s);
    QVERIFY(settle(*window_->lab()));
  }

  void droppingAModelFolderOpensTheTransformerTab() {
    const QString folder = QStringLiteral(ATTN_SOURCE_DIR "/tests/data/transformers/distilbert");
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(folder)});
    const QPoint centre = window_->rect().center();
    QDragEnterEvent enter(centre, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(window_.get(), &enter);
    QVERIFY(enter.isAccepted());
    QSignalSpy loaded(window_->transformer(), &TransformerWorkbench::sourceLoaded);
    QDropEvent drop(centre, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(window_.get(), &drop);
    QCOMPARE(window_->tabs()->currentWidget(), static_cast<QWidget*>(window_->transformer()));
    QTRY_COMPARE_WITH_TIMEOUT(loaded.size(), 1, 20000);
    QTRY_VERIFY_WITH_TIMEOUT(window_->runLabel()->text().startsWith(u"transformer: "_s), 20000);
    QCOMPARE(window_->recentModels().value(0), QFileInfo(folder).absoluteFilePath());
    QVERIFY(!window_->openModel(files_.filePath(u"no-such-model"_s)));
    window_->showLab();
  }

  void alignmentModelFoldersOpenInTheAlignmentTab() {
    const QString folder = QStringLiteral(ATTN_SOURCE_DIR "/tests/data/seq2seq/random-bahdanau");
    auto* alignment = window_->alignment();
    QSignalSpy loaded(alignment, &AlignmentWorkbench::sourceLoaded);
    QVERIFY(window_->openModel(folder));
    QCOMPARE(window_->tabs()->currentWidget(), static_cast<QWidget*>(alignment));
    QTRY_COMPARE_WITH_TIMEOUT(loaded.size(), 1, 20000);
    QCOMPARE(alignment->source()->model.path, QFileInfo(folder).absoluteFilePath());
    QCOMPARE(window_->recentModels().value(0), QFileInfo(folder).absoluteFilePath());
    QTRY_VERIFY_WITH_TIMEOUT(alignment->outcome() != nullptr, 20000);
    // Export View writes the alignment heatmap; Export Matrix its CSV.
    const QString png = files_.filePath(u"alignment.png"_s);
    QVERIFY(window_->exportTo(png));
    QVERIFY(QFileInfo(png).size() > 100);
    QVERIFY(window_->exportTo(files_.filePath(u"alignment.csv"_s)));
    // A transformer folder still goes to the Transformer tab.
    QVERIFY(window_->openModel(QStringLiteral(ATTN_SOURCE_DIR "/tests/data/transformers/gpt2")));
    QCOMPARE(window_->tabs()->currentWidget(), static_cast<QWidget*>(window_->transformer()));
    QTRY_VERIFY_WITH_TIMEOUT(!window_->transformer()->isLoading(), 20000);
    window_->showLab();
  }

  void recentFilesKeepEightAndDropMissingOnes() {
    QStringList paths;
    for (int i = 0; i < 10; ++i) {
      paths.append(
          writeFile(files_, u"recent-%1.txt"_s.arg(i), "query " + QByteArray::number(i) + "\nsource words here\n"));
      QVERIFY(window_->openFile(paths.back()));
    }
    QVERIFY(settle(*window_->lab()));
    QCOMPARE(window_->recentFiles().size(), MainWindow::kMaxRecentFiles);
    QCOMPARE(window_->recentFiles().front(), QFileInfo(paths.back()).absoluteFilePath());
    QVERIFY(QFile::remove(paths[9]));
    QVERIFY(!window_->openFile(paths[9]));
    QVERIFY(!window_->recentFiles().contains(QFileInfo(paths[9]).absoluteFilePath()));
    QVERIFY(window_->statusBar()->currentMessage().contains(u"recent"_s));
  }

  // Issue 41: a bundled model was kept by the temporary folder it is written into, gone after a restart, so it
  // vanished from the list. It is kept by its key, shown by its name, and opens after a restart.
  void recentModelsKeepABundledModelByItsKey() {
    const QString entry = u"bundled:"_s + TransformerWorkbench::demoModelKey();
    QVERIFY(window_->openModel(TransformerWorkbench::demoModelKey()));
    QTRY_VERIFY_WITH_TIMEOUT(!window_->transformer()->isLoading(), 20000);
    QCOMPARE(window_->transformer()->sourceKey(), TransformerWorkbench::demoModelKey());
    QCOMPARE(window_->recentModels().front(), entry);
    for (const QString& path : window_->recentModels())
      QVERIFY2(!path.contains(u"/induction-gpt2"_s), qPrintable(path));

    // A restart, with the entry an older version wrote (the temporary folder, gone) still in the settings, and no
    // autosave to open the demo by itself.
    QVERIFY(window_->close());
    window_.reset();
    QSettings().setValue(u"recentModels"_s, QStringList{u"/tmp/attnscope-gone-Ab12/induction-gpt2"_s, entry});
    QFile::remove(MainWindow::autosaveFile());
    window_ = std::make_unique<MainWindow>();
    QVERIFY(settle(*window_->lab()));
    QCOMPARE(window_->recentModels(), QStringList{entry});
    QMenu* recent = nullptr;
    for (auto* menu : window_->findChildren<QMenu*>()) {
      if (menu->title() == u"Open Recent Mo&del"_s) recent = menu;
    }
    QVERIFY(recent);
    emit recent->aboutToShow();
    QVERIFY(!recent->actions().isEmpty());
    QAction* first = recent->actions().front();
    QCOMPARE(first->text(), u"&1 induction-gpt2 (bundled)"_s);
    QVERIFY(window_->transformer()->sourceKey().isEmpty());
    first->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(window_->transformer()->source() != nullptr && !window_->transformer()->isLoading(),
                             20000);
    QCOMPARE(window_->transformer()->sourceKey(), TransformerWorkbench::demoModelKey());
    QCOMPARE(window_->currentWorkbench(), static_cast<Workbench*>(window_->transformer()));
    QCOMPARE(window_->recentModels(), QStringList{entry});

    // Every tab's bundled models open by key; a key this build lacks is said and forgotten.
    QVERIFY(window_->openModel(u"bundled:"_s + bundledModelKeys().front()));
    QCOMPARE(window_->currentWorkbench(), static_cast<Workbench*>(window_->alignment()));
    QTRY_VERIFY_WITH_TIMEOUT(!window_->alignment()->isLoading(), 20000);
    QSettings().setValue(u"recentModels"_s, QStringList{u"bundled:no-such-model"_s, entry});
    QVERIFY(!window_->openModel(u"bundled:no-such-model"_s));
    QVERIFY(window_->statusBar()->currentMessage().contains(u"no-such-model"_s));
    QCOMPARE(window_->recentModels(), QStringList{entry});
    window_->showLab();
  }

  void exportWritesEveryFormat_data() {
    QTest::addColumn<QString>("name");
    QTest::newRow("png") << u"out.png"_s;
    QTest::newRow("svg") << u"out.svg"_s;
    QTest::newRow("pdf") << u"out.pdf"_s;
    QTest::newRow("csv") << u"out.csv"_s;
  }
  void exportWritesEveryFormat() {
    QFETCH(QString, name);
    const QString path = files_.filePath(name);
    QVERIFY(window_->exportTo(path));
    QVERIFY(QFileInfo(path).size() > 100);
    QVERIFY(window_->statusBar()->currentMessage().contains(u"Exported"_s));
  }

  void geometryIsRemembered() {
    window_->resize(1111, 777);
    QVERIFY(window_->close());
    window_.reset();
    QVERIFY(QSettings().contains(u"window/geometry"_s));
    window_ = std::make_unique<MainWindow>();
    QCOMPARE(window_->size(), QSize(1111, 777));
    QVERIFY(settle(*window_->lab()));
  }

  void labIsRememberedAcrossSessions() {
    auto request = window_->lab()->request();
    request.query = "remember this query";
    request.params.mechanism = attn::lab::Mechanism::Capsule;
    request.params.classes = 5;
    request.params.seed = 777;
    window_->lab()->setRequest(request);
    QVERIFY(window_->close());
    window_.reset();
    window_ = std::make_unique<MainWindow>();
    const auto back = window_->lab()->request();
    QCOMPARE(back.query, std::string("remember this query"));
    QVERIFY(back.params == request.params);
    QVERIFY(settle(*window_->lab()));
  }

  void corruptLabSettingsFallBackToDefaultsWithAMessage() {
    QVERIFY(window_->close());
    window_.reset();
    // The first start after an upgrade: no autosave yet, the lab's key of an older version.
    QVERIFY(QFile::remove(MainWindow::autosaveFile()));
    QSettings().setValue(u"lab/request"_s, u"{\"mechanism\": \"teleport\"}"_s);
    window_ = std::make_unique<MainWindow>();
    QVERIFY(window_->statusBar()->currentMessage().contains(u"teleport"_s));
    QCOMPARE(window_->lab()->request().params.mechanism, attn::lab::LabParams{}.mechanism);
    QVERIFY(settle(*window_->lab()));
  }

  // Issue 41 (finding 12): Help > Keyboard Shortcuts lists every shortcut the window defines, read from the window
  // itself so that it cannot fall behind, and the keys the views read; Help > Glossary says what the words mean.
  void helpListsEveryShortcutAndAGlossary() {
    QAction* shortcuts = nullptr;
    QAction* glossary = nullptr;
    for (auto* menu : window_->findChildren<QMenu*>()) {
      if (menu->title() != u"&Help"_s) continue;
      for (auto* action : menu->actions()) {
        if (action->text() == u"&Keyboard Shortcuts"_s) shortcuts = action;
        if (action->text() == u"&Glossary"_s) glossary = action;
      }
    }
    QVERIFY(shortcuts && glossary);
    shortcuts->trigger();
    auto* dialog = window_->findChild<ShortcutsDialog*>();
    QVERIFY(dialog && dialog->isVisible());
    QSet<QString> rows;  // "keys | does"
    for (int r = 0; r < dialog->table()->rowCount(); ++r) {
      rows.insert(dialog->table()->item(r, 0)->text() + u" | "_s + dialog->table()->item(r, 1)->text());
    }
    const auto keysOf = [](const QKeySequence& key) { return key.toString(QKeySequence::NativeText); };
    int listed = 0;
    for (const QAction* action : window_->findChildren<QAction*>()) {
      QString text = action->text().remove(u'&');
      if (text.endsWith(u'\u2026')) text.chop(1);
      for (const QKeySequence& key : action->shortcuts()) {
        QVERIFY2(!text.isEmpty(), qPrintable(u"an action without a name has "_s + keysOf(key)));
        QVERIFY2(rows.contains(keysOf(key) + u" | "_s + text), qPrintable(keysOf(key) + u" "_s + text));
        ++listed;
      }
    }
    for (const QShortcut* shortcut : window_->findChildren<QShortcut*>()) {
      QVERIFY2(!shortcut->whatsThis().isEmpty(), qPrintable(keysOf(shortcut->key())));
      QVERIFY(rows.contains(keysOf(shortcut->key()) + u" | "_s + shortcut->whatsThis()));
      ++listed;
    }
    QVERIFY2(listed >= 12, qPrintable(QString::number(listed)));
    QVERIFY(rows.contains(keysOf(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_M)) + u" | Open Model"_s));
    QVERIFY(rows.contains(u"Ctrl+Up, Ctrl+Down | Move the long map's selected query"_s));  // a view's own keys
    // A key that does the same in several tabs is one row naming them (Esc cancels long work in four).
    QStringList escapeRows;
    for (int r = 0; r < dialog->table()->rowCount(); ++r) {
      if (dialog->table()->item(r, 0)->text() == u"Esc"_s) escapeRows << dialog->table()->item(r, 2)->text();
    }
    QCOMPARE(escapeRows.size(), 1);
    QVERIFY2(escapeRows[0].contains(u"Glimpse"_s) && escapeRows[0].contains(u"Captioning"_s),
             qPrintable(escapeRows[0]));
    testing::saveShot(dialog->grab().toImage(), u"help-shortcuts"_s);
    dialog->close();

    glossary->trigger();
    auto* words = window_->findChild<GlossaryDialog*>();
    QVERIFY(words && words->isVisible());
    const QString text = words->findChild<QTextBrowser*>()->toPlainText();
    for (const QString& term : {u"Entropy"_s, u"Attention rollout"_s, u"Attention sink"_s, u"Logit lens"_s, u"Head"_s,
                                u"Layer"_s, u"Query, key, value"_s, u"Max-pooling in the maps"_s, u"Saliency"_s}) {
      QVERIFY2(text.contains(term), qPrintable(term));
    }
    testing::saveShot(words->grab().toImage(), u"help-glossary"_s);
    words->close();
    QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
  }

  // Issue 41: Alt+L was both "Mechanism &Lab" and "Logit &Lens", so the lens could not be reached from the keyboard.
  // In every main tab, and in every page of the tab widgets shown in it, no two things the window shows at once
  // (the menu bar's menus, tab titles, buttons, labels with a buddy, group boxes) share an Alt+letter.
  void noTwoVisibleMnemonicsClash() {
    QStringList clashes;
    QTabWidget* tabs = window_->tabs();
    for (int t = 0; t < tabs->count(); ++t) {
      tabs->setCurrentIndex(t);
      QCoreApplication::processEvents();
      const auto inner = tabs->currentWidget()->findChildren<QTabWidget*>();
      QList<QPair<QTabWidget*, int>> pages{{nullptr, -1}};
      for (QTabWidget* w : inner) {
        if (!w->isVisibleTo(window_.get())) continue;
        for (int p = 0; p < w->count(); ++p) pages.append({w, p});
      }
      for (const auto& [widget, page] : pages) {
        if (widget) widget->setCurrentIndex(page);
        QCoreApplication::processEvents();
        const QString where =
            tabs->tabText(t).remove(u'&') + (widget ? u" \u203a "_s + widget->tabText(page).remove(u'&') : QString());
        for (const QString& clash : testing::mnemonicClashes(*window_)) clashes.append(where + u": "_s + clash);
      }
    }
    // The Lab's parameters change with the mechanism: every mechanism's form, shown beside the tab bar and menus.
    window_->showLab();
    QComboBox* mechanisms = window_->lab()->mechanismBox();
    const int chosen = mechanisms->currentIndex();
    for (int m = 0; m < mechanisms->count(); ++m) {
      mechanisms->setCurrentIndex(m);
      QCoreApplication::processEvents();
      for (const QString& clash : testing::mnemonicClashes(*window_)) {
        clashes.append(u"Mechanism Lab \u203a "_s + mechanisms->itemText(m) + u": "_s + clash);
      }
    }
    mechanisms->setCurrentIndex(chosen);
    QVERIFY(settle(*window_->lab()));
    clashes.removeDuplicates();
    for (const QString& clash : clashes) qWarning("%s", qPrintable(clash));  // QVERIFY2 cuts a long message
    QVERIFY2(clashes.isEmpty(), qPrintable(u"%1 clashes (above)"_s.arg(clashes.size())));
    window_->showLab();
  }

  void cleanupTestCase() { window_.reset(); }
};

ATTN_QT_TEST(TestMainWindow, Widgets);

}  // namespace test_main_window
#include "test_main_window.moc"
