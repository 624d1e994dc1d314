// The Alignment tab: its pure renderers (local-p windows and the step outline over a matrix, text shaded by
// weight with unknown characters flagged), and the workbench end to end over the random fixture models of
// tests/data/seq2seq and tests/data/classifier (and the bundled models when the build has them): load,
// type -> run, the step slider and its row, beam hypotheses, local-p bands, unknown characters, an empty
// and a 10,000-character input, a bad folder that keeps the previous model, review word shading, exports, and an
// entailment model's two sentences (tests/data/entailment).
#include "qt_test_registry.h"
#include "cli/align_cli.h"
#include "render/alignment_overlay.h"
#include "render/alignment_render.h"
#include "views/qcustomplot.h"
#include "render/text_figure.h"
#include "session/session.h"
#include "render/token_lines_render.h"
#include "ui_test_support.h"
#include "views/audio_playback.h"
#include "views/export.h"
#include "views/heatmap_view.h"
#include "views/speech_view.h"
#include "views/text_figure_view.h"
#include "workbenches/alignment/alignment_models.h"
#include "workbenches/alignment/alignment_run.h"
#include "workbenches/alignment/alignment_workbench.h"
#include "workbenches/alignment/entailment/entailment_session.h"
#include "workbenches/alignment/reviews/reviews_session.h"
#include "workbenches/alignment/speech/speech_session.h"
#include "workbenches/alignment/speech/speech_views.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDialog>
#include <QDir>
#include <QDirIterator>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QGroupBox>
#include <QLabel>
#include <QLibraryInfo>
#include <QPainter>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QTreeWidget>

#include <algorithm>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

using namespace attn::ui;
using namespace Qt::StringLiterals;

namespace test_alignment_workbench {

namespace {

// A speech model's views: its audio file, shaping and playback (speech/speech_views.h).
attn::ui::SpeechViews& speechOf(const attn::ui::AlignmentWorkbench& wb) {
  return *wb.findChild<attn::ui::SpeechViews*>();
}

QString seq2seqFixture(const char* variant) {
  return QStringLiteral(ATTN_SOURCE_DIR "/tests/data/seq2seq/random-") + QLatin1String(variant);
}
QString classifierFixture(const char* variant) {
  return QStringLiteral(ATTN_SOURCE_DIR "/tests/data/classifier/random-") + QLatin1String(variant);
}

// Waits until the workbench has shown (or refused) its newest request.
bool settle(AlignmentWorkbench& wb, int ms = 30000) {
  QElapsedTimer timer;
  timer.start();
  while (timer.elapsed() < ms) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    if (wb.isIdle() && wb.source() && wb.submitted() > 0 && (wb.outcome() || !wb.lastError().isEmpty())) return true;
    QTest::qWait(10);
  }
  return false;
}

// The random speech fixture open in `wb` (shown at 1300 x 820), over `text` said by espeak-ng.
bool openSpeech(AlignmentWorkbench& wb, const QString& text) {
  wb.resize(1300, 820);
  wb.show();
  wb.openModel(seq2seqFixture("speech"));
  if (!settle(wb)) return false;
  wb.setText(text);
  return settle(wb);
}

bool near(QRgb pixel, const QColor& colour, int tolerance = 40) {
  return std::abs(qRed(pixel) - colour.red()) + std::abs(qGreen(pixel) - colour.green()) +
             std::abs(qBlue(pixel) - colour.blue()) <=
         tolerance;
}

const render::ShadedText* shadedElement(const render::TextFigure& figure, int index) {
  int seen = 0;
  for (const auto& element : figure.elements) {
    if (const auto* text = std::get_if<render::ShadedText>(&element)) {
      if (seen++ == index) return text;
    }
  }
  return nullptr;
}

std::vector<const render::BarChart*> charts(const render::TextFigure& figure) {
  std::vector<const render::BarChart*> out;
  for (const auto& element : figure.elements) {
    if (const auto* chart = std::get_if<render::BarChart>(&element)) out.push_back(chart);
  }
  return out;
}

// A figure of shaded text is mostly paper: many colours and a fair share of ink, not a blank.
bool looksInked(const QImage& image) {
  const auto stats = testing::imageStats(image);
  return stats.distinctColours >= 12 && stats.nonBackgroundFraction >= 0.02;
}

int shadedCount(const render::TextFigure& figure) {
  return int(std::count_if(figure.elements.begin(), figure.elements.end(),
                           [](const auto& e) { return std::holds_alternative<render::ShadedText>(e); }));
}

}  // namespace

class TestAlignmentWorkbench : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir settingsDir_;

 private slots:
  void initTestCase() { testing::isolateSettings(settingsDir_.path()); }

  // Every kind of model is one page of the registry (alignment_pages.cpp), found by its kind, with its words and
  // examples; the bundled models open on their kinds' pages.
  void everyKindIsOnePageOfTheRegistry() {
    std::vector<QString> seen;
    for (const auto& page : alignmentPages()) {
      QVERIFY(std::find(seen.begin(), seen.end(), page->name()) == seen.end());
      seen.push_back(page->name());
      QCOMPARE(findAlignmentPage(page->name()), page.get());
      QVERIFY(!page->text().sourceLabel.isEmpty());
      QVERIFY(!page->examples().isEmpty());
    }
    QCOMPARE(seen.size(), std::size_t(5));
    for (const auto& [key, kind] :
         {std::pair{u"date-bahdanau"_s, u"dates"_s}, std::pair{u"headlines-gru"_s, u"headlines"_s},
          std::pair{u"sentiment-pooling"_s, u"reviews"_s}, std::pair{u"entailment-wbw"_s, u"entailment"_s},
          std::pair{u"speech-location"_s, u"speech"_s}}) {
      auto model = loadAlignmentModel(key);
      QVERIFY2(model.has_value(), qPrintable(key));
      QCOMPARE(model->page().name(), kind);
      QVERIFY(alignmentPageFor(*model).shows(*model));
    }
  }

  // Each page's run is found through the registry alone: every bundled model has exactly one page, whose runner
  // runs the page's own first example without a word from the tab or the worker about the kind.
  void everyBundledModelRunsThroughItsPageAlone() {
    const auto bundled = bundledModels();
    if (bundled.empty()) QSKIP("this build bundles no models");
    int ran = 0;
    for (const auto& entry : bundled) {
      auto model = loadAlignmentModel(entry.key);
      if (!model) continue;  // not one of this tab's models (the captioning ones, the Transformer's demo)
      const auto showing = std::count_if(alignmentPages().begin(), alignmentPages().end(),
                                         [&](const auto& page) { return page->shows(*model); });
      QCOMPARE(showing, 1);
      const AlignmentPage& page = alignmentPageFor(*model);
      QCOMPARE(&page, &model->page());
      QVERIFY(!page.name().isEmpty());
      AlignmentRequest request;
      request.text = page.examples().front().toStdString();
      if (page.name() == u"entailment"_s) {
        request.hypothesis = entailmentExamples().front().hypothesis.toStdString();
      }
      AlignmentOutcome outcome;
      page.runner(*model)->run(request, outcome);
      const QString error = outcome.error ? QString::fromStdString(outcome.error->message()) : QString();
      QVERIFY2(!outcome.error, qPrintable(entry.key + u": "_s + error));
      QVERIFY2(outcome.ok(), qPrintable(entry.key));
      ++ran;
    }
    QVERIFY(ran >= 5);
    // `attnscope-cli align` names the kinds from the same registry.
    QStringList names;
    for (const auto& page : alignmentPages()) names.append(page->name());
    QCOMPARE(alignKinds(), names.join(u", "_s));
  }

  // `attnscope-cli align`'s part of each kind is behind its page too: the page of every bundled model runs a job of
  // its first example on the model (no word from cli/ about the kind) and writes the matrix and the summary.
  void everyBundledModelRunsItsCommandLineJobThroughItsPage() {
    const auto bundled = bundledModels();
    if (bundled.empty()) QSKIP("this build bundles no models");
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    int ran = 0;
    for (const auto& entry : bundled) {
      QElapsedTimer timer;
      timer.start();
      auto model = loadAlignmentModel(entry.key);
      if (!model) continue;  // not one of this tab's models
      const AlignmentPage& page = model->page();
      AlignJob job;
      job.model = entry.key;
      job.text = page.examples().front().toStdString();
      job.hasText = true;
      job.pair = page.examplePair(0).toStdString();
      job.hasPair = !job.pair.empty();
      job.csvPath = dir.filePath(entry.key + u".csv"_s);
      RenderReport report;
      const auto done = page.runCli(job, *model, timer, report);
      QVERIFY2(done.has_value(), qPrintable(entry.key + u": "_s + (done ? QString() : failureText(done.error()))));
      QVERIFY2(report.summary.startsWith(u"align: "_s + model->name + u" \u00b7 "_s), qPrintable(report.summary));
      QCOMPARE(report.written, QStringList{job.csvPath});
      QVERIFY(QFileInfo(job.csvPath).size() > 0);
      ++ran;
    }
    QVERIFY(ran >= 5);
  }

  // The naming rule of the kind folders (alignment/<kind>/): only *_views.{h,cpp} may include widgets or views; every
  // other file of a kind (page, run, input, command-line part) includes QtCore/QtGui, the engine, render/, session/ and
  // the tab's widget-free headers only, so that the command line can link it without Qt Widgets (the CMake glob sends
  // the two lists to their targets by that suffix).
  void kindFilesOutsideTheirViewsIncludeNoWidgets() {
    const QString headers = QLibraryInfo::path(QLibraryInfo::HeadersPath);
    const QDir root(QStringLiteral(ATTN_SOURCE_DIR "/ui/workbenches/alignment"));
    static const QRegularExpression include(u"^\\s*#\\s*include\\s*([<\"])([^>\"]+)[>\"]"_s,
                                            QRegularExpression::MultilineOption);
    int checked = 0;
    QDirIterator it(root.path(), {u"*.h"_s, u"*.cpp"_s}, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
      const QString path = it.next();
      const QString relative = root.relativeFilePath(path);
      if (!relative.contains(u'/') || QFileInfo(path).completeBaseName().endsWith(u"_views"_s)) continue;
      QFile file(path);
      QVERIFY(file.open(QIODevice::ReadOnly));
      const QString text = QString::fromUtf8(file.readAll());
      for (auto match = include.globalMatch(text); match.hasNext();) {
        const auto m = match.next();
        const QString name = m.captured(2);
        bool allowed = false;
        if (m.captured(1) == u"<"_s) {
          allowed = !name.startsWith(u'Q') || QFile::exists(headers + u"/QtCore/"_s + name) ||
                    QFile::exists(headers + u"/QtGui/"_s + name);
        } else {
          allowed = name.startsWith(u"attn/"_s) || name.startsWith(u"render/"_s) || name.startsWith(u"session/"_s) ||
                    (name.startsWith(u"workbenches/alignment/"_s) && !name.endsWith(u"_views.h"_s) &&
                     !name.endsWith(u"alignment_workbench.h"_s));
        }
        QVERIFY2(allowed, qPrintable(relative + u" includes "_s + name));
      }
      ++checked;
    }
    QVERIFY(checked >= 10);
  }

  // The tab names no kind: each page has its views (alignment_views.h; the kinds are one list, alignment_kinds.h),
  // and the tab's own files include no kind's folder, nor ask which kind a model or a run is.
  void theTabNamesNoKind() {
    QObject owner;
    int pages = 0;
    for (const auto& page : attn::ui::alignmentPages()) {
      const auto views = attn::ui::makeAlignmentViews(*page, &owner);
      QCOMPARE(&views->page(), page.get());
      QCOMPARE(dynamic_cast<attn::ui::SpeechViews*>(views.get()) != nullptr, page->name() == u"speech"_s);
      ++pages;
    }
    QCOMPARE(pages, 5);
    static const QRegularExpression kind(
        u"workbenches/alignment/[a-z]+/|AlignmentTask\\b|\\b(Seq2Seq|Speech|Reviews|Entailment)Views\\b|"
        "outcome_->(classifier|entailment|speech)\\b|model\\.(task|isEntailment)\\(\\)"_s);
    for (const char* name : {"alignment_workbench.h", "alignment_workbench.cpp", "alignment_panel.cpp",
                             "alignment_busy.cpp", "alignment_step_page.h", "alignment_step_page.cpp"}) {
      QFile file(QStringLiteral(ATTN_SOURCE_DIR "/ui/workbenches/alignment/") + QLatin1String(name));
      QVERIFY(file.open(QIODevice::ReadOnly));
      const auto match = kind.match(QString::fromUtf8(file.readAll()));
      QVERIFY2(!match.hasMatch(), qPrintable(QLatin1String(name) + u" names a kind: "_s + match.captured()));
    }
    // Nor does the session's section: each kind's keys are its session part's (<kind>/<kind>_session.cpp).
    static const QRegularExpression kindKey(
        u"\"(pair|readings|shaping)\"|\\.(pair|readings|shaping)\\b|AttentionShaping"_s);
    for (const char* name : {"alignment_section.h", "alignment_section.cpp"}) {
      QFile file(QStringLiteral(ATTN_SOURCE_DIR "/ui/session/") + QLatin1String(name));
      QVERIFY(file.open(QIODevice::ReadOnly));
      const auto match = kindKey.match(QString::fromUtf8(file.readAll()));
      QVERIFY2(!match.hasMatch(), qPrintable(QLatin1String(name) + u" names a kind's key: "_s + match.captured()));
    }
  }

  // Each kind keeps its own last input (GUI finding 8): a speech sentence is not run as a date, and coming back to
  // the speech model brings the sentence back; models of one kind share it.
  void eachKindKeepsItsOwnText() {
    AlignmentWorkbench wb;
    QVERIFY2(openSpeech(wb, u"seven green apples on the table"_s), qPrintable(wb.lastError()));
    wb.openModel(seq2seqFixture("bahdanau"));
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    QCOMPARE(wb.text(), defaultDateText());
    QCOMPARE(QString::fromStdString(wb.outcome()->request.text), defaultDateText());
    wb.setText(u"1 May 2020"_s);
    QVERIFY(settle(wb));
    wb.openModel(seq2seqFixture("speech"));
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    QCOMPARE(wb.text(), u"seven green apples on the table"_s);
    QCOMPARE(QString::fromStdString(wb.outcome()->request.text), u"seven green apples on the table"_s);
    wb.openModel(seq2seqFixture("luong-dot"));
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    QCOMPARE(wb.text(), u"1 May 2020"_s);
    // Typed while a model of another kind loads: the input is for that model, and the dates keep theirs.
    wb.openModel(seq2seqFixture("speech"));
    wb.setText(u"a red boat"_s);
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    QCOMPARE(wb.text(), u"a red boat"_s);
    QCOMPARE(QString::fromStdString(wb.outcome()->request.text), u"a red boat"_s);
    wb.openModel(seq2seqFixture("bahdanau"));
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    QCOMPARE(wb.text(), u"1 May 2020"_s);
  }

  // Long work shows the busy row (a speech model saying a long text takes seconds; here a dates model with the row's
  // delay at 0), and Cancel drops the run: its result is not shown when it comes, the previous view stays.
  void aRunShowsTheBusyRowAndCancelKeepsTheView() {
    AlignmentWorkbench wb;
    wb.resize(1100, 700);
    wb.show();
    wb.openModel(seq2seqFixture("bahdanau"));
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    const auto* outcome = wb.outcome();
    QVERIFY(!wb.busyRow()->isShown());
    wb.busyRow()->setDelay(0);
    QSignalSpy finished(wb.worker(), &AlignmentWorker::finished);
    QSignalSpy status(&wb, &Workbench::statusMessage);
    wb.setText(u"2 June 2021"_s);
    QVERIFY(wb.busyRow()->isShown());
    QVERIFY2(wb.busyRow()->label()->text().startsWith(u"Running "_s), qPrintable(wb.busyRow()->label()->text()));
    QVERIFY(!wb.isIdle());
    testing::saveShot(wb.grab().toImage(), u"alignment-busy"_s);
    wb.busyRow()->cancelButton()->click();
    QVERIFY(!wb.busyRow()->isShown());
    QVERIFY(wb.isIdle());
    QCOMPARE(status.last().first().toString(), u"Cancelled: the previous view stays"_s);
    QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 30000);  // the worker's answer comes, and is dropped
    QTest::qWait(50);
    QCOMPARE(wb.outcome(), outcome);
    // The next input runs and is shown as ever, and the row goes with its result.
    wb.setText(u"3 July 2022"_s);
    QVERIFY(settle(wb));
    QCOMPARE(QString::fromStdString(wb.outcome()->request.text), u"3 July 2022"_s);
    QVERIFY(!wb.busyRow()->isShown());
    wb.busyRow()->setDelay(400);
  }

  // After a click on a heatmap row the arrow keys move the step at once (GUI finding 12), not only once the
  // slider has been given the focus.
  void arrowKeysMoveTheStepAfterAHeatmapClick() {
    AlignmentWorkbench wb;
    wb.resize(1300, 820);
    wb.show();
    QVERIFY(QTest::qWaitForWindowExposed(&wb));
    QApplication::setActiveWindow(&wb);
    wb.openModel(seq2seqFixture("bahdanau"));
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    wb.setText(u"21 Nov 2026"_s);
    QVERIFY(settle(wb));
    QVERIFY(wb.stepCount() > 3);
    wb.textEdit()->setFocus();
    QTRY_VERIFY(wb.textEdit()->hasFocus());
    // A real click on the cells of row 1.
    HeatmapView* view = wb.heatmap();
    view->replotNow();
    std::optional<QPoint> at;
    for (int y = 0; y < view->plot()->height() && !at; y += 2) {
      for (int x = 0; x < view->plot()->width() && !at; x += 4) {
        const auto cell = view->cellAt(QPointF(x, y));
        if (cell && cell->y() == 1) at = QPoint(x, y);
      }
    }
    QVERIFY(at);
    QTest::mouseClick(view->plot(), Qt::LeftButton, {}, *at);
    QCOMPARE(wb.step(), 1);
    QWidget* focus = QApplication::focusWidget();
    QVERIFY(focus);
    QTest::keyClick(focus, Qt::Key_Right);
    QCOMPARE(wb.step(), 2);
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_Left);
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_Left);
    QCOMPARE(wb.step(), 0);
  }

  // ---- renderers ----

  void localWindowBandsAreClippedToTheSource() {
    const std::vector<float> positions{0.4f, 5.0f, 9.6f};
    const auto bands = render::localWindowBands(positions, 2, 10);
    QCOMPARE(bands.size(), std::size_t(3));
    QCOMPARE(bands[0].row, 0);
    QCOMPARE(bands[0].centre, double(0.4f));
    QCOMPARE(bands[0].lower, -0.5);  // 0.4 - 2, clipped to the first cell's edge
    QCOMPARE(bands[0].upper, double(0.4f) + 2.0);
    QCOMPARE(bands[1].lower, 3.0);
    QCOMPARE(bands[1].upper, 7.0);
    QCOMPARE(bands[2].upper, 9.5);  // the last cell's edge
    QVERIFY(render::localWindowBands(positions, 2, 0).empty());
  }

  void overlayPaintsTheBandTheMarkerAndTheStep() {
    // A dark matrix: every cell at the low end of the map, so what the overlay adds stands out.
    const attn::Matrix weights = attn::Matrix::Constant(4, 12, 0.0f);
    render::AlignmentOverlay overlay;
    overlay.rows = 4;
    overlay.columns = 12;
    overlay.bands = render::localWindowBands(std::vector<float>{2.0f, 4.0f, 6.0f, 8.0f}, 2, 12);
    overlay.focusRow = 2;
    constexpr int cell = 20;
    const render::OverlayStyle style;
    const QImage plain = render::alignmentImage(weights, render::Colormap::Viridis, {}, cell);
    const QImage image = render::alignmentImage(weights, render::Colormap::Viridis, overlay, cell);
    QCOMPARE(image.size(), QSize(12 * cell, 4 * cell));
    const auto centre = [&](double x, double y) {
      const QPointF p = render::cellTransform(cell).map(QPointF(x, y));
      return QPoint(int(p.x()), int(p.y()));
    };
    // Row 0: inside the window [0, 4] the band lightens the cell; outside it the cell is untouched.
    const QPoint inside = centre(3.4, 0.0);
    const QPoint outside = centre(9.0, 0.0);
    QVERIFY(qGray(image.pixel(inside)) > qGray(plain.pixel(inside)) + 10);
    QCOMPARE(image.pixel(outside), plain.pixel(outside));
    // p_t's marker sits on (p_t, row).
    QVERIFY2(near(image.pixel(centre(4.0, 1.0)), style.marker), "no marker at p_1 = 4");
    // The step in view is outlined along its top edge, across the whole row.
    const int top = 2 * cell + 1;
    QVERIFY(near(image.pixel(centre(10.5, 2.0).x(), top), style.focus));
    QVERIFY(!near(image.pixel(centre(10.5, 0.0).x(), 1), style.focus));
  }

  void textIsShadedByWeightAndUnknownCharactersAreRed() {
    // UTF-8 byte offsets map to QString indices (é is two bytes, one QChar; 😀 four bytes, two QChars).
    const auto utf = render::toUtf16(
        "a\xc3\xa9"
        "b\xf0\x9f\x98\x80"
        "c");
    QCOMPARE(utf.text, u"a\u00e9b\U0001F600c"_s);
    QCOMPARE(utf.offsets[1], 1);
    QCOMPARE(utf.offsets[3], 2);
    QCOMPARE(utf.offsets[4], 3);
    QCOMPARE(utf.offsets[8], 5);
    QCOMPARE(utf.offsets.back(), 6);
    QCOMPARE(render::toUtf16("x\xffy").text, u"x\ufffdy"_s);

    render::TextFigure figure;
    render::ShadedText text;
    text.text = u"WWWW  WWWW  WWWW"_s;
    text.colormap = render::Colormap::Viridis;
    text.ranges = {{0, 4, 1.0f, false, false, false, {}},
                   {6, 10, 0.0f, false, false, false, {}},
                   {12, 16, 0.5f, true, false, false, {}}};
    figure.elements.emplace_back(text);
    QFont font;
    font.setPixelSize(20);
    const render::FigureStyle style;
    const auto layout = render::layoutFigure(figure, font, 600);
    QCOMPARE(layout.blocks.size(), std::size_t(1));
    QCOMPARE(layout.blocks[0].ranges.size(), std::size_t(3));
    const QRectF heavy = layout.blocks[0].ranges[0].front();
    const QRectF none = layout.blocks[0].ranges[1].front();
    const QRectF unknown = layout.blocks[0].ranges[2].front();
    QVERIFY(heavy.right() <= none.left() && none.right() <= unknown.left());
    const QImage image = render::figureImage(figure, font, 640, style);
    const QPointF origin(16, 16);  // figureImage's margin
    const auto corner = [&](const QRectF& r) { return (origin + r.topLeft() + QPointF(1.5, 1.5)).toPoint(); };
    // The heaviest range in the map's top colour, the zero one left on the background.
    QVERIFY(near(image.pixel(corner(heavy)), QColor::fromRgb(render::sample(render::Colormap::Viridis, 1.0)), 12));
    QVERIFY(near(image.pixel(corner(none)), style.background, 6));
    QCOMPARE(render::rangeFill(text, 1.0f, style).rgb(), render::sample(render::Colormap::Viridis, 1.0));
    // Out-of-vocabulary characters: red glyphs on their range.
    int red = 0;
    const QRect area = unknown.translated(origin).toRect();
    for (int y = area.top(); y <= area.bottom(); ++y) {
      for (int x = area.left(); x <= area.right(); ++x) red += near(image.pixel(x, y), style.unknown, 60) ? 1 : 0;
    }
    QVERIFY2(red > 20, qPrintable(u"%1 red pixels"_s.arg(red)));
    // The hit test names the range under the point.
    const auto hit = render::hitTest(layout, heavy.center());
    QVERIFY(hit);
    QCOMPARE(hit->index, 0);
  }

  // Issue 17: out-of-vocabulary words were red on any shading: on a review head's blue at full weight
  // (sentiment-hierarchical, "Great zorblax. Terrible qwerty flimflam.") red on dark blue could not be read.
  // Their glyphs and underline now keep a WCAG contrast of at least 3 on every fill: each colour map from its
  // darkest to its brightest end, the shading of every weight, each head's tint, on a light and on a dark
  // background; and they stay red where red reads.
  void unknownWordsStayReadableOnEveryShading() {
    std::vector<std::pair<render::FigureStyle, QString>> styles(2);
    styles[1].first.background = QColor(0x2b, 0x2b, 0x2b);  // a dark theme's base
    styles[1].first.text = QColor(0xee, 0xee, 0xee);
    styles[0].second = u"light"_s;
    styles[1].second = u"dark"_s;
    for (const auto& [style, name] : styles) {
      std::vector<QColor> fills = {style.background};
      for (const auto& info : render::colormaps()) {
        render::ShadedText shaded;
        shaded.colormap = info.id;
        shaded.scale = 1.0f;
        for (int i = 0; i <= 20; ++i) {
          fills.push_back(QColor::fromRgb(render::sample(info.id, i / 20.0)));  // the map itself, end to end
          fills.push_back(render::rangeFill(shaded, float(i) / 20.0f, style));  // a weight's shading
        }
      }
      for (int head = 0; head < 12; ++head) {
        render::ShadedText shaded;
        shaded.tint = render::headColor(head);
        shaded.scale = 1.0f;
        for (int i = 1; i <= 10; ++i) fills.push_back(render::rangeFill(shaded, float(i) / 10.0f, style));
      }
      for (const QColor& fill : fills) {
        const QColor ink = render::unknownOn(fill, style);
        QVERIFY2(render::contrastRatio(ink, fill) >= 3.0,
                 qPrintable(u"%1 background: %2 on %3, contrast %4"_s.arg(name, ink.name(), fill.name())
                                .arg(render::contrastRatio(ink, fill), 0, 'f', 2)));
      }
      QCOMPARE(render::unknownOn(QColor(0, 0, 0, 0), style) == style.unknown,
               render::contrastRatio(style.unknown, style.background) >= 3.0);
    }
    QCOMPARE(render::unknownOn(Qt::white), render::FigureStyle().unknown);  // red on paper
    QVERIFY(std::abs(render::contrastRatio(Qt::white, Qt::black) - 21.0) < 1e-9);

    // As painted: an unknown word at full weight in the first head's tint has glyph and underline pixels
    // that stand out from the tint (red on that blue had none).
    render::TextFigure figure;
    render::ShadedText text;
    text.text = u"good zorblax"_s;
    text.tint = render::headColor(0);
    text.ranges = {{0, 4, 0.2f, false, false, false, {}}, {5, 12, 1.0f, true, false, false, {}}};
    figure.elements.emplace_back(text);
    QFont font;
    font.setPixelSize(20);
    const auto layout = render::layoutFigure(figure, font, 400);
    const QImage image = render::figureImage(figure, font, 432);
    const QColor fill = render::rangeFill(text, 1.0f);
    const QRect area = layout.blocks[0].ranges[1].front().translated(16, 16).toRect().adjusted(1, 1, -1, -1);
    int readable = 0;
    for (int y = area.top(); y <= area.bottom(); ++y) {
      for (int x = area.left(); x <= area.right(); ++x) {
        readable += render::contrastRatio(QColor::fromRgb(image.pixel(x, y)), fill) >= 3.0 ? 1 : 0;
      }
    }
    QVERIFY2(readable > 60, qPrintable(u"%1 pixels stand out from %2"_s.arg(readable).arg(fill.name())));
  }

  void longWordsWrapAndBarsFillTheirShare() {
    render::TextFigure figure;
    render::ShadedText text;
    text.text = QString(200, u'x');
    figure.elements.emplace_back(text);
    render::BarChart chart;
    chart.bars = {{u"first"_s, 0.25f, {}, false, Qt::black, {}}, {u"second"_s, 1.0f, {}, true, Qt::black, {}}};
    figure.elements.emplace_back(chart);
    const auto layout = render::layoutFigure(figure, QFont(), 300);
    const auto& pieces = layout.blocks[0].pieces;
    QVERIFY(pieces.size() > 1);  // a word wider than the line is cut
    for (const auto& piece : pieces) QVERIFY(piece.width <= 300.0 + 1e-6);
    const auto& bars = layout.blocks[1].barRects;
    QCOMPARE(bars.size(), std::size_t(2));
    QVERIFY(std::abs(bars[0].width() * 4.0 - bars[1].width()) < 1.0);
  }

  // ---- the workbench ----

  void loadsASeq2SeqModelAndDecodesAsYouType() {
    AlignmentWorkbench wb;
    wb.resize(1300, 820);
    wb.show();
    QSignalSpy loaded(&wb, &AlignmentWorkbench::sourceLoaded);
    wb.openModel(seq2seqFixture("bahdanau"));
    QVERIFY(wb.isLoading());
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    QCOMPARE(loaded.size(), 1);
    QVERIFY(wb.source()->isSeq2Seq());
    QVERIFY2(wb.modelLabel()->text().contains(u"Bahdanau"_s), qPrintable(wb.modelLabel()->text()));
    QVERIFY(wb.modelBox()->currentText().contains(u"random-bahdanau"_s));
    const auto* outcome = wb.outcome();
    QVERIFY(outcome && outcome->ok());
    QCOMPARE(QString::fromStdString(outcome->request.text), defaultDateText());
    const auto& run = *outcome->seq2seq;
    QCOMPARE(int(run.source.size()), int(defaultDateText().size()));
    QVERIFY(wb.currentMap());
    QCOMPARE(wb.currentMap()->weights.rows(), attn::Index(run.hypotheses.front().ids.size()));
    QCOMPARE(wb.currentMap()->weights.cols(), attn::Index(run.source.size()));
    QCOMPARE(wb.heatmap()->map(), wb.currentMap());
    QVERIFY(wb.runSummary().contains(u" ms"_s));
    QCOMPARE(wb.hypothesisList()->topLevelItemCount(), 1);  // greedy

    // A burst of keystrokes ends in one run of the last text; the GUI never waits for it.
    const quint64 before = wb.shown();
    const int runsBefore = wb.workerRuns();
    for (const QString& text : {u"2"_s, u"21"_s, u"21 N"_s, u"21 Nov"_s, u"21 Nov 2026"_s}) wb.setText(text);
    QVERIFY(settle(wb));
    QVERIFY(wb.shown() > before);
    QCOMPARE(QString::fromStdString(wb.outcome()->request.text), u"21 Nov 2026"_s);
    QVERIFY(wb.workerRuns() - runsBefore <= 5);
    QCOMPARE(wb.currentMap()->weights.cols(), attn::Index(11));
    QCOMPARE(wb.currentMap()->col_labels[2], std::string(" "));

    // Switching among the seq2seq variants keeps the input.
    wb.openModel(seq2seqFixture("luong-general"));
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    QVERIFY(wb.source()->model.path.endsWith(u"random-luong-general"_s));
    QCOMPARE(wb.text(), u"21 Nov 2026"_s);
    QCOMPARE(QString::fromStdString(wb.outcome()->request.text), u"21 Nov 2026"_s);
  }

  void theStepSliderHighlightsARowAndShadesTheSource() {
    AlignmentWorkbench wb;
    wb.resize(1300, 820);
    wb.show();
    wb.openModel(seq2seqFixture("bahdanau"));  // its random weights spell out 12 characters for the default date
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    const int steps = wb.stepCount();
    QVERIFY(steps >= 2);
    QCOMPARE(wb.stepSlider()->maximum(), steps - 1);
    QCOMPARE(wb.heatmap()->overlay().focusRow, std::optional<int>(0));

    QSignalSpy stepped(&wb, &AlignmentWorkbench::stepChanged);
    wb.stepSlider()->setFocus();
    QTest::keyClick(wb.stepSlider(), Qt::Key_Right);
    QCOMPARE(wb.step(), 1);
    QCOMPARE(wb.heatmap()->overlay().focusRow, std::optional<int>(1));
    QCOMPARE(stepped.size(), 1);
    QTest::keyClick(wb.stepSlider(), Qt::Key_End);
    QCOMPARE(wb.step(), steps - 1);
    QTest::keyClick(wb.stepSlider(), Qt::Key_Left);
    QCOMPARE(wb.step(), steps - 2);

    // The source is shaded by exactly that row of the alignment.
    const auto* source = shadedElement(wb.currentFigure(), 1);
    QVERIFY(source);
    QCOMPARE(int(source->ranges.size()), int(wb.currentMap()->weights.cols()));
    for (std::size_t j = 0; j < source->ranges.size(); ++j) {
      QCOMPARE(source->ranges[j].weight, wb.currentMap()->weights(wb.step(), attn::Index(j)));
    }
    // Indices count from 0 everywhere: the step before the last is steps - 2 of 0..steps - 1.
    QVERIFY2(source->caption.contains(u"step %1 (0\u2013%2)"_s.arg(steps - 2).arg(steps - 1)),
             qPrintable(source->caption));
    // The heatmap's tooltip names the step's row with the same number (it said "row 5" for step 6).
    QVERIFY2(wb.heatmap()->cellToolTip(wb.step(), 0).startsWith(u"row %1 "_s.arg(steps - 2)),
             qPrintable(wb.heatmap()->cellToolTip(wb.step(), 0)));
    // The output outlines the character of the step.
    const auto* output = shadedElement(wb.currentFigure(), 0);
    QVERIFY(output);
    QCOMPARE(int(output->ranges.size()), steps);
    QVERIFY(output->ranges[std::size_t(wb.step())].focus);
    QCOMPARE(std::count_if(output->ranges.begin(), output->ranges.end(), [](const auto& r) { return r.focus; }), 1);

    // A click on a heatmap row goes to that step.
    emit wb.heatmap()->cellClicked(0, 3);
    QCOMPARE(wb.step(), 0);
    QCOMPARE(wb.stepSlider()->value(), 0);
    // The drawn heatmap carries the outline: exported, it differs from the same map without it.
    wb.heatmap()->replotNow();
    const QImage with = wb.heatmap()->plot()->toPixmap().toImage();
    const auto overlay = wb.heatmap()->overlay();
    wb.heatmap()->setOverlay({});
    wb.heatmap()->replotNow();
    QVERIFY(wb.heatmap()->plot()->toPixmap().toImage() != with);
    wb.heatmap()->setOverlay(overlay);
  }

  void beamHypothesesAreListedBestFirstAndEachHasItsAlignment() {
    AlignmentWorkbench wb;
    wb.resize(1300, 820);
    wb.show();
    wb.openModel(seq2seqFixture("luong-concat"));
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    wb.setText(u"21 Nov 2026"_s);
    wb.setBeam(5);
    QVERIFY(settle(wb));
    QCOMPARE(wb.outcome()->request.beam, 5);
    const auto& run = *wb.outcome()->seq2seq;
    QVERIFY2(run.hypotheses.size() > 1, "a beam of 5 over random weights ends with several hypotheses");
    auto* list = wb.hypothesisList();
    QCOMPARE(list->topLevelItemCount(), int(run.hypotheses.size()));
    double previous = 1.0;
    for (int i = 0; i < list->topLevelItemCount(); ++i) {
      const double score = list->topLevelItem(i)->text(1).toDouble();
      QVERIFY(score <= previous + 1e-9);  // best first
      previous = score;
      QCOMPARE(list->topLevelItem(i)->text(2).remove(u" \u2026"_s),
               QString::fromStdString(run.hypotheses[std::size_t(i)].text));
    }
    QCOMPARE(list->currentItem(), list->topLevelItem(0));

    // Selecting a hypothesis shows its own alignment, its steps and its output.
    const int last = list->topLevelItemCount() - 1;
    list->setCurrentItem(list->topLevelItem(last));
    QCOMPARE(wb.hypothesis(), last);
    const auto& hyp = run.hypotheses[std::size_t(last)];
    QCOMPARE(wb.currentMap(), wb.outcome()->alignments[std::size_t(last)].get());
    QCOMPARE(wb.heatmap()->map(), wb.currentMap());
    QCOMPARE(testing::maxDifference(wb.currentMap()->weights, hyp.attention), 0.0);
    QCOMPARE(wb.stepCount(), int(hyp.ids.size()));
    QCOMPARE(wb.stepSlider()->maximum(), int(hyp.ids.size()) - 1);
    const auto* output = shadedElement(wb.currentFigure(), 0);
    QVERIFY(output->text.startsWith(QString::fromStdString(hyp.text)));
    QVERIFY2(output->caption.contains(u"hypothesis %1 (0\u2013%2)"_s.arg(last).arg(run.hypotheses.size() - 1)),
             qPrintable(output->caption));

    // Back to greedy: one hypothesis.
    wb.setBeam(1);
    QVERIFY(settle(wb));
    QCOMPARE(list->topLevelItemCount(), 1);
    QCOMPARE(wb.hypothesis(), 0);
  }

  void localPDrawsEachStepsWindow() {
    AlignmentWorkbench wb;
    wb.resize(1300, 820);
    wb.show();
    wb.openModel(seq2seqFixture("luong-local-p"));
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    const auto& config = wb.source()->model.seq2seq->config();
    QVERIFY(config.local);
    const auto& hyp = wb.outcome()->seq2seq->hypotheses.front();
    QCOMPARE(hyp.positions.size(), hyp.ids.size());
    const auto& overlay = wb.heatmap()->overlay();
    QCOMPARE(overlay.bands.size(), hyp.positions.size());
    const int columns = int(wb.currentMap()->weights.cols());
    for (std::size_t t = 0; t < overlay.bands.size(); ++t) {
      const double p = double(hyp.positions[t]);
      QCOMPARE(overlay.bands[t].centre, p);
      QCOMPARE(overlay.bands[t].lower, std::max(p - config.window, -0.5));
      QCOMPARE(overlay.bands[t].upper, std::min(p + config.window, columns - 0.5));
    }
    // The source characters inside the step's window carry the window's bar; weights outside it are 0.
    const auto* source = shadedElement(wb.currentFigure(), 1);
    const double p = double(hyp.positions[std::size_t(wb.step())]);
    for (std::size_t j = 0; j < source->ranges.size(); ++j) {
      const bool inside = std::abs(double(j) - p) <= config.window;
      QCOMPARE(source->ranges[j].marked, inside);
      if (!inside) QCOMPARE(source->ranges[j].weight, 0.0f);
    }
    QVERIFY(source->caption.contains(u"D = %1"_s.arg(config.window)));
    // A global model draws no band.
    wb.openModel(seq2seqFixture("bahdanau"));
    QVERIFY(settle(wb));
    QVERIFY(wb.heatmap()->overlay().bands.empty());
  }

  void unknownCharactersAreFlaggedAndStillDecoded() {
    AlignmentWorkbench wb;
    wb.resize(1300, 820);
    wb.show();
    wb.openModel(seq2seqFixture("bahdanau"));
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    wb.setText(u"21\u00b711\u00b72026 \u00e9t\u00e9"_s);  // middle dots and accents are outside printable ASCII
    QVERIFY(settle(wb));
    QVERIFY(wb.lastError().isEmpty());
    const auto& run = *wb.outcome()->seq2seq;
    QCOMPARE(int(run.source.size()), 14);
    QCOMPARE(std::count(run.unknown.begin(), run.unknown.end(), true), 4);
    QVERIFY(!run.hypotheses.empty());  // still decoded
    QCOMPARE(wb.currentMap()->col_labels[2], std::string("\u00b7 (unk)"));
    QCOMPARE(wb.currentMap()->col_labels[0], std::string("2"));
    const auto* source = shadedElement(wb.currentFigure(), 1);
    QCOMPARE(int(std::count_if(source->ranges.begin(), source->ranges.end(), [](const auto& r) { return r.unknown; })),
             4);
    QVERIFY(source->ranges[2].unknown);
    QCOMPARE(source->text.mid(source->ranges[2].begin, source->ranges[2].end - source->ranges[2].begin), u"\u00b7"_s);
    QVERIFY(source->ranges[2].toolTip.contains(u"<unk>"_s));
    QVERIFY2(wb.inputNote()->text().contains(u"not in the vocabulary"_s), qPrintable(wb.inputNote()->text()));
    const auto& notes = wb.currentFigure().elements;
    QVERIFY(std::any_of(notes.begin(), notes.end(), [](const auto& e) {
      const auto* note = std::get_if<render::FigureNote>(&e);
      return note && note->warning && note->text.contains(u"4 characters"_s);
    }));
  }

  void anEmptyInputKeepsThePreviousViewWithAMessage() {
    AlignmentWorkbench wb;
    wb.resize(1300, 820);
    wb.show();
    wb.openModel(seq2seqFixture("bahdanau"));
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    const auto* before = wb.outcome();
    const auto* map = wb.heatmap()->map();
    QSignalSpy shown(&wb, &AlignmentWorkbench::resultShown);
    wb.setText(u"3"_s);  // a run on its way when the input empties must not replace the message
    wb.setText(QString());
    QVERIFY(wb.isIdle());
    QTest::qWait(200);
    QCOMPARE(shown.size(), 0);
    QCOMPARE(wb.outcome(), before);
    QCOMPARE(wb.heatmap()->map(), map);
    QVERIFY(wb.inputMessage().contains(u"empty"_s));
    QVERIFY(wb.warningStrip()->isVisible());
    QVERIFY2(wb.warningStrip()->text().contains(u"The input is empty"_s), qPrintable(wb.warningStrip()->text()));
    QVERIFY(wb.inputNote()->text().contains(u"empty"_s));
    QVERIFY(!wb.errorBanner()->isVisible());

    wb.setText(u"1 May 2020"_s);
    QVERIFY(settle(wb));
    QVERIFY(wb.inputMessage().isEmpty());
    QVERIFY(!wb.warningStrip()->isVisible());
    QCOMPARE(QString::fromStdString(wb.outcome()->request.text), u"1 May 2020"_s);
  }

  void aLongInputIsTruncatedWithAVisibleWarning() {
    AlignmentWorkbench wb;
    wb.resize(1300, 820);
    wb.show();
    wb.openModel(seq2seqFixture("luong-general"));
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    const int limit = wb.source()->model.seq2seq->config().max_source_length;
    QString text;
    while (text.size() < 10000) text += u"21 November 2026, "_s;
    text.truncate(10000);
    QElapsedTimer timer;
    timer.start();
    wb.setText(text);
    QVERIFY(timer.elapsed() < 2000);  // the GUI does not run the model
    QVERIFY(settle(wb));
    const auto& run = *wb.outcome()->seq2seq;
    QCOMPARE(int(run.source.size()), limit);
    QVERIFY(wb.warningStrip()->isVisible());
    QVERIFY2(wb.warningStrip()->text().contains(u"truncat"_s, Qt::CaseInsensitive),
             qPrintable(wb.warningStrip()->text()));
    const auto* source = shadedElement(wb.currentFigure(), 1);
    QCOMPARE(int(source->text.size()), limit);
    QVERIFY2(source->tail.contains(QString::number(10000 - limit)), qPrintable(source->tail));
    QCOMPARE(wb.currentMap()->weights.cols(), attn::Index(limit));

    wb.setText(u"21 Nov 2026"_s);
    QVERIFY(settle(wb));
    QVERIFY(!wb.warningStrip()->isVisible());
  }

  void aBadFolderKeepsThePreviousModel() {
    AlignmentWorkbench wb;
    wb.show();
    wb.openModel(seq2seqFixture("bahdanau"));
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    const QString path = wb.source()->model.path;
    const quint64 shown = wb.shown();
    QSignalSpy failed(&wb, &AlignmentWorkbench::sourceFailed);

    // The dot model's config over the Bahdanau weights: the tensors do not match the config.
    QTemporaryDir mismatched;
    QVERIFY(QFile::copy(seq2seqFixture("luong-dot") + u"/config.json"_s, mismatched.filePath(u"config.json"_s)));
    QVERIFY(
        QFile::copy(seq2seqFixture("bahdanau") + u"/model.safetensors"_s, mismatched.filePath(u"model.safetensors"_s)));
    wb.openModel(mismatched.path());
    QTRY_COMPARE_WITH_TIMEOUT(failed.size(), 1, 20000);
    QVERIFY(!wb.isLoading());
    QVERIFY(wb.errorBanner()->isVisible());
    QString banner = wb.errorBanner()->text();
    QVERIFY2(banner.contains(u"model.safetensors"_s), qPrintable(banner));
    QVERIFY2(banner.contains(u"stays loaded"_s), qPrintable(banner));
    QCOMPARE(wb.source()->model.path, path);
    QCOMPARE(wb.shown(), shown);
    QVERIFY(wb.modelBox()->currentText().contains(u"random-bahdanau"_s));

    // No config.json at all; a transformer's config.
    QTemporaryDir empty;
    wb.openModel(empty.path());
    QTRY_COMPARE_WITH_TIMEOUT(failed.size(), 2, 20000);
    QVERIFY2(wb.errorBanner()->text().contains(u"config.json"_s), qPrintable(wb.errorBanner()->text()));
    QTemporaryDir bert;
    QVERIFY(QFile::copy(QStringLiteral(ATTN_SOURCE_DIR "/tests/data/transformers/bert/config.json"),
                        bert.filePath(u"config.json"_s)));
    wb.openModel(bert.path());
    QTRY_COMPARE_WITH_TIMEOUT(failed.size(), 3, 20000);
    QVERIFY2(wb.errorBanner()->text().contains(u"Transformer tab"_s), qPrintable(wb.errorBanner()->text()));
    QCOMPARE(wb.source()->model.path, path);

    // Still running: typing goes on with the old model, and a good result clears the banner.
    wb.setText(u"still here"_s);
    QVERIFY(settle(wb));
    QCOMPARE(QString::fromStdString(wb.outcome()->request.text), u"still here"_s);
    QVERIFY(!wb.errorBanner()->isVisible());
  }

  void reviewsShadeWordsPerHeadWithSentenceBars() {
    AlignmentWorkbench wb;
    wb.resize(1300, 820);
    wb.show();
    wb.openModel(classifierFixture("hierarchical"));
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    QVERIFY(!wb.source()->isSeq2Seq());
    // The date example gave way to a review.
    QCOMPARE(wb.text(), defaultReviewText());
    QVERIFY(wb.reviewView()->isVisible());
    QVERIFY(!wb.decodingView()->isVisible());
    QVERIFY(!wb.beamSpin()->isVisible());

    wb.setText(u"The film was great. The zebra was not bad!"_s);
    QVERIFY(settle(wb));
    const auto& run = *wb.outcome()->classifier;
    const auto& config = wb.source()->model.classifier->config();
    QCOMPARE(run.input.sentences, 2);
    const auto& figure = wb.currentFigure();
    QVERIFY(figure.heading.startsWith(u"Predicted: "_s));
    QVERIFY(figure.heading.contains(QString::fromStdString(config.labels[std::size_t(run.predicted)])));
    QCOMPARE(shadedCount(figure), config.heads);  // one shading per head
    for (int h = 0; h < config.heads; ++h) {
      const auto* shaded = shadedElement(figure, h);
      QCOMPARE(int(shaded->ranges.size()), int(run.input.words.size()));
      for (std::size_t w = 0; w < shaded->ranges.size(); ++w) {
        QCOMPARE(shaded->ranges[w].weight, run.word_attention(h, attn::Index(w)));
        QCOMPARE(shaded->text.mid(shaded->ranges[w].begin, shaded->ranges[w].end - shaded->ranges[w].begin).toLower(),
                 QString::fromStdString(run.input.words[w]));
      }
    }
    QVERIFY(shadedElement(figure, 0)->tint != shadedElement(figure, 1)->tint);  // one hue per head
    const auto bars = charts(figure);
    QCOMPARE(bars.size(), std::size_t(2));  // the class probabilities, the sentences
    QCOMPARE(bars[0]->bars.size(), config.labels.size());
    QVERIFY(bars[0]->bars[std::size_t(run.predicted)].strong);
    QCOMPARE(bars[1]->bars.size(), std::size_t(2));
    QCOMPARE(bars[1]->bars[0].value, run.sentence_attention(0));
    QVERIFY(bars[1]->bars[1].label.contains(u"zebra"_s));
    // "zebra" is not in the fixture's vocabulary.
    QVERIFY(std::any_of(shadedElement(figure, 0)->ranges.begin(), shadedElement(figure, 0)->ranges.end(),
                        [](const auto& r) { return r.unknown; }));
    QVERIFY(looksInked(wb.reviewView()->grab().toImage()));

    // More sentences than the model reads: truncated with a warning, the rest as a grey tail.
    wb.setText(u"The film was great. It was bad. I was not. The food was bad. A film."_s);
    QVERIFY(settle(wb));
    QVERIFY(wb.warningStrip()->isVisible());
    QVERIFY(!shadedElement(wb.currentFigure(), 0)->tail.isEmpty());

    // The flat pooling model: two heads, no sentence bars (the three readings off: they have a test of
    // their own).
    wb.readingsCheck()->setChecked(false);
    wb.openModel(classifierFixture("pooling"));
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    QCOMPARE(shadedCount(wb.currentFigure()), 2);
    QCOMPARE(charts(wb.currentFigure()).size(), std::size_t(1));
    QCOMPARE(wb.currentMap()->weights.rows(), attn::Index(2));  // heads x words

    // Back to a date model: the review example gives way to the date.
    wb.setText(defaultReviewText());
    wb.openModel(seq2seqFixture("bahdanau"));
    QVERIFY(settle(wb));
    QCOMPARE(wb.text(), defaultDateText());
    QVERIFY(wb.decodingView()->isVisible());
  }

  void exportsWriteTheHeatmapTheShadingAndTheMatrix() {
    QTemporaryDir dir;
    AlignmentWorkbench wb;
    wb.resize(1300, 820);
    wb.show();
    wb.openModel(seq2seqFixture("luong-local-p"));
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    QCOMPARE(wb.currentView(), AlignmentWorkbench::View::Heatmap);
    for (const QString& name : {u"a.png"_s, u"a.svg"_s, u"a.pdf"_s}) {
      const QString path = dir.filePath(name);
      QVERIFY2(wb.exportView(path, AlignmentWorkbench::View::Heatmap), qPrintable(path));
      QVERIFY(QFileInfo(path).size() > 100);
      const QString shading = dir.filePath(u"s-"_s + name);
      QVERIFY2(wb.exportView(shading, AlignmentWorkbench::View::Shading), qPrintable(shading));
      QVERIFY(QFileInfo(shading).size() > 100);
    }
    QVERIFY(testing::looksDrawn(QImage(dir.filePath(u"a.png"_s))));
    QVERIFY(QImage(dir.filePath(u"s-a.png"_s)).width() >= 900);
    const QString csv = dir.filePath(u"a.csv"_s);
    QVERIFY(wb.exportMatrix(csv));
    QFile file(csv);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(file.readAll(), matrixCsv(*wb.currentMap()));
    QCOMPARE(int(matrixCsv(*wb.currentMap()).count("\r\n")), int(wb.currentMap()->weights.rows()) + 1);
    QVERIFY(!wb.exportMatrix(dir.filePath(u"a.png"_s)));
    QVERIFY(!wb.exportView(dir.filePath(u"a.csv"_s), AlignmentWorkbench::View::Heatmap));

    wb.openModel(classifierFixture("pooling"));
    QVERIFY(settle(wb));
    QCOMPARE(wb.currentView(), AlignmentWorkbench::View::Shading);
    QVERIFY(wb.exportView(dir.filePath(u"r.svg"_s), wb.currentView()));
    QVERIFY(wb.exportView(dir.filePath(u"r.png"_s), wb.currentView()));
    QVERIFY(looksInked(QImage(dir.filePath(u"r.png"_s))));
  }

  void bundledModelsAreListedByNameAndOpenFromMemory() {
    const auto models = bundledModels();
    if (models.empty()) QSKIP("this build bundles no models (resources/models was empty at configure time)");
    AlignmentWorkbench wb;
    wb.resize(1300, 820);
    wb.show();
    QStringList names;
    for (int i = 0; i < wb.modelBox()->count(); ++i) names.append(wb.modelBox()->itemText(i));
    for (const auto& model : models) {
      QVERIFY2(names.contains(model.name), qPrintable(model.name));
      QVERIFY(model.name != model.key);  // readable names, not folder names
    }
    QVERIFY(findBundledModel(defaultAlignmentModel()));
    wb.openModel(defaultAlignmentModel());
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    QCOMPARE(wb.source()->model.key, defaultAlignmentModel());
    QVERIFY(wb.source()->model.path.startsWith(u":/models/"_s));
    QCOMPARE(wb.modelBox()->currentData().toString(), defaultAlignmentModel());
    QCOMPARE(QString::fromStdString(wb.outcome()->request.text), defaultDateText());
    QVERIFY(!wb.outcome()->seq2seq->hypotheses.front().text.empty());
    QCOMPARE(wb.aboutButton()->isEnabled(), !wb.source()->model.modelCard.isEmpty());
    if (wb.aboutButton()->isEnabled()) {
      // About This Model shows the bundled model card.
      wb.aboutButton()->click();
      auto* dialog = wb.findChild<QDialog*>();
      QVERIFY(dialog);
      QVERIFY(dialog->isVisible());
      auto* browser = dialog->findChild<QTextBrowser*>();
      QVERIFY(browser);
      QVERIFY(!browser->toPlainText().trimmed().isEmpty());
      dialog->close();
    }
    // Every bundled model opens.
    for (const auto& model : models) {
      auto loaded = loadAlignmentModel(model.key);
      QVERIFY2(loaded, loaded ? "" : loaded.error().message().c_str());
      QVERIFY(!loaded->description.isEmpty());
    }
  }

  // The bundled models say what they were trained on, and the input note how much of the input they have
  // never seen: README text typed into the review model is mostly <unk>, and the tab says its answer means
  // little (it used to answer as confidently as on a review).
  void bundledModelsSayWhatTheyWereTrainedOnAndHowMuchIsUnknown() {
    if (bundledModels().empty()) QSKIP("this build bundles no models (resources/models was empty at configure time)");
    for (const auto& model : bundledModels()) {
      auto loaded = loadAlignmentModel(model.key);
      QVERIFY2(loaded, loaded ? "" : loaded.error().message().c_str());
      QVERIFY2(!loaded->trainedOn.isEmpty(), qPrintable(model.key));
    }
    AlignmentWorkbench wb;
    wb.resize(1300, 820);
    wb.show();
    wb.openModel(u"sentiment-pooling"_s);
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    auto* description = wb.findChild<QLabel*>(u"alignmentModelDescription"_s);
    QVERIFY(description);
    QVERIFY2(description->text().contains(u"Trained on: short generated reviews"_s), qPrintable(description->text()));
    wb.setText(u"Every command the README shows must run as written, extracted by a test."_s);
    QVERIFY(settle(wb));
    QVERIFY(wb.lastError().isEmpty());
    const auto& run = *wb.outcome()->classifier;
    const auto unknown = std::count(run.unknown.begin(), run.unknown.end(), true);
    QVERIFY(2 * unknown > std::int64_t(run.unknown.size()));
    const QString note = wb.inputNote()->text();
    QVERIFY2(note.contains(u"%1 of %2 ("_s.arg(unknown).arg(run.unknown.size())), qPrintable(note));
    QVERIFY2(note.contains(u"unlike the model's training data"_s), qPrintable(note));
    // A review in its own words: no such warning.
    wb.setText(u"The film was great. I loved it."_s);
    QVERIFY(settle(wb));
    QVERIFY2(!wb.inputNote()->text().contains(u"unlike"_s), qPrintable(wb.inputNote()->text()));
  }

  // Saliency without a query, three ways on one review: attention pooling, the LSTM's gates, the CNN's max
  // pooling, each row the reading's own saliency with its prediction and held-out share; the LSTM's and the
  // CNN's matrices in the heatmap below.
  void threeReadingsOfSaliencySideBySide() {
    for (const char* key : kReadingModels) {
      if (!findBundledModel(QString::fromLatin1(key))) QSKIP("this build does not bundle the three review readers");
    }
    AlignmentWorkbench wb;
    wb.resize(1300, 820);
    wb.show();
    wb.openModel(u"sentiment-lstm"_s);
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    QVERIFY(wb.readingsCheck()->isVisible());
    QVERIFY(wb.readingsCheck()->isChecked());
    wb.setText(u"The film was not good. We watched it on a Sunday."_s);
    QVERIFY(settle(wb));
    const auto* outcome = wb.outcome();
    QCOMPARE(outcome->readings.size(), std::size_t(3));
    QVERIFY(outcome->readings[1].run == outcome->classifier);  // the open model's own run, not a second one
    const auto& figure = wb.currentFigure();
    QCOMPARE(shadedCount(figure), 3);
    const char* names[] = {"Attention pooling", "LSTM forget gate", "CNN max pooling"};
    for (int r = 0; r < 3; ++r) {
      const auto* shaded = shadedElement(figure, r);
      const auto& reading = outcome->readings[std::size_t(r)];
      QVERIFY2(shaded->caption.startsWith(QLatin1String(names[r])), qPrintable(shaded->caption));
      const double heldOut = reading.model->config().held_out_saliency;
      QVERIFY(heldOut > 0.0);
      QVERIFY2(shaded->caption.contains(QString::number(100.0 * heldOut, 'f', 1) + u" %"_s),
               qPrintable(shaded->caption));
      QCOMPARE(int(shaded->ranges.size()), int(reading.run->input.words.size()));
      float sum = 0.0f;
      for (std::size_t w = 0; w < shaded->ranges.size(); ++w) {
        QCOMPARE(shaded->ranges[w].weight, reading.run->saliency(attn::Index(w)));
        sum += shaded->ranges[w].weight;
      }
      QVERIFY(std::abs(sum - 1.0f) < 1e-4f);
    }
    // The matrices: the saliency row, f, i, written, the averaged gates; the forget gate in view.
    QVERIFY(wb.matrixPanel()->isVisible());
    QCOMPARE(wb.matrixBox()->count(), 5);
    QCOMPARE(QString::fromStdString(wb.currentMap()->name), u"forget gate f"_s);
    QCOMPARE(wb.currentMap()->weights.rows(), attn::Index(wb.source()->model.classifier->config().hidden));
    wb.matrixBox()->setCurrentIndex(3);
    QVERIFY(QString::fromStdString(wb.currentMap()->name).startsWith(u"written"_s));
    QCOMPARE(wb.reviewHeatmap()->map(), wb.currentMap());
    QVERIFY(looksInked(wb.reviewHeatmap()->grab().toImage()));
    // The selection survives the next keystroke.
    wb.setText(u"The film was not good. We watched it on a Monday."_s);
    QVERIFY(settle(wb));
    QVERIFY(QString::fromStdString(wb.currentMap()->name).startsWith(u"written"_s));

    // Off: only the open model's reading, with what it means in its caption; the session keeps the choice.
    wb.readingsCheck()->setChecked(false);
    QVERIFY(settle(wb));
    QVERIFY(wb.outcome()->readings.empty());
    QVERIFY(!attn::ui::reviewsReadings(wb.state()));
    QCOMPARE(shadedCount(wb.currentFigure()), 1);
    QVERIFY2(shadedElement(wb.currentFigure(), 0)->caption.contains(u"final cell state"_s),
             qPrintable(shadedElement(wb.currentFigure(), 0)->caption));

    // A saved state turns them on again.
    auto state = wb.state();
    attn::ui::setReviewsReadings(state, true);
    wb.applyState(state);
    QVERIFY(settle(wb));
    QVERIFY(wb.readingsCheck()->isChecked());
    QCOMPARE(wb.outcome()->readings.size(), std::size_t(3));
    // The CNN: its activations and its winning windows.
    wb.openModel(u"sentiment-cnn"_s);
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    QCOMPARE(wb.outcome()->readings.size(), std::size_t(3));
    QCOMPARE(wb.matrixBox()->count(), 3);
    QVERIFY(QString::fromStdString(wb.currentMap()->name).startsWith(u"channel activations"_s));
    // Attention pooling: its heads are the shading; no matrix panel.
    wb.openModel(u"sentiment-pooling"_s);
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    QVERIFY(!wb.matrixPanel()->isVisible());
    QCOMPARE(shadedCount(wb.currentFigure()), 2 + 3);  // two heads, then the three readings
  }

  // Issue 44: the review and entailment models' words shaded by an attribution of the predicted label (gradient x
  // input or integrated gradients), signed on RdBu, exactly the engine's scores; the two kinds' rows keep one choice,
  // which the session keeps.
  void attributionShadesTheWordsOfReviewsAndPairs() {
    for (const char* key : {"sentiment-lstm", "sentiment-hierarchical", "entailment-wbw"}) {
      if (!findBundledModel(QString::fromLatin1(key))) QSKIP("this build does not bundle the word models");
    }
    AlignmentWorkbench wb;
    wb.resize(1300, 820);
    wb.show();
    const auto visibleBox = [&]() -> QComboBox* {
      for (auto* box : wb.findChildren<QComboBox*>(u"alignmentAttribution"_s)) {
        if (box->isVisibleTo(&wb)) return box;
      }
      return nullptr;
    };
    wb.openModel(u"date-bahdanau"_s);
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    QVERIFY(visibleBox() == nullptr);  // a seq2seq model has no attribution row

    wb.openModel(u"sentiment-lstm"_s);
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    QComboBox* box = visibleBox();
    QVERIFY(box);
    QCOMPARE(box->currentIndex(), 0);
    QVERIFY(!wb.outcome()->attribution);
    const int plain = shadedCount(wb.currentFigure());
    const QString text = u"Great actors, terrible script."_s;
    wb.setText(text);
    box->setCurrentIndex(1);
    QVERIFY(settle(wb));
    const auto* outcome = wb.outcome();
    QVERIFY(outcome->attribution);
    QCOMPARE(*outcome->request.attribution, attn::models::WordAttributionMethod::GradientXInput);
    const auto& run = *outcome->classifier;
    // The engine's own scores, computed apart from the tab.
    attn::models::WordAttributionOptions options;
    auto direct = attn::models::attribute_words(*wb.source()->model.classifier, run, options);
    QVERIFY2(direct, direct ? "" : direct.error().message().c_str());
    QCOMPARE(outcome->attribution->label, run.predicted);
    QCOMPARE(outcome->attribution->scores.size(), attn::Index(run.input.words.size()));
    const auto& figure = wb.currentFigure();
    QCOMPARE(shadedCount(figure), plain + 1);
    const auto* shaded = shadedElement(figure, shadedCount(figure) - 1);
    QVERIFY2(shaded->caption.startsWith(u"Attribution of"_s), qPrintable(shaded->caption));
    QVERIFY2(shaded->caption.contains(u"gradient \u00d7 input"_s), qPrintable(shaded->caption));
    QVERIFY(shaded->signedWeights);
    QCOMPARE(int(shaded->ranges.size()), int(run.input.words.size()));
    bool positive = false, negative = false;
    for (std::size_t w = 0; w < shaded->ranges.size(); ++w) {
      const float score = shaded->ranges[w].weight;
      QCOMPARE(score, direct->scores(attn::Index(w)));
      const QColor fill = render::rangeFill(*shaded, score);
      if (score > 0.25f * shaded->scale) {
        positive = true;
        QVERIFY2(fill.red() > fill.blue(), qPrintable(u"word %1: %2"_s.arg(w).arg(fill.name())));
      } else if (score < -0.25f * shaded->scale) {
        negative = true;
        QVERIFY2(fill.blue() > fill.red(), qPrintable(u"word %1: %2"_s.arg(w).arg(fill.name())));
      }
    }
    QVERIFY2(positive && negative, "a mixed review has words for and against its label");

    // Integrated gradients: the steps and how far the scores' sum misses the logit's rise are said.
    box->setCurrentIndex(2);
    QVERIFY(settle(wb));
    const auto& ig = *wb.outcome()->attribution;
    QVERIFY(std::abs(ig.gap) < 0.05f * std::max(1.0f, std::abs(ig.value - ig.baseline_value)));
    shaded = shadedElement(wb.currentFigure(), shadedCount(wb.currentFigure()) - 1);
    QVERIFY2(shaded->caption.contains(u"integrated gradients"_s), qPrintable(shaded->caption));
    bool said = false;  // the steps and the completeness gap, in a note under the shading (a note wraps)
    for (const auto& element : wb.currentFigure().elements) {
      if (const auto* note = std::get_if<render::FigureNote>(&element)) {
        said = said || (note->text.contains(u"%1 steps"_s.arg(kAlignmentAttributionSteps)) &&
                        note->text.contains(u"completeness gap"_s));
      }
    }
    QVERIFY(said);
    QCOMPARE(QString::fromStdString(wb.state().attribution), u"integrated-gradients"_s);

    // A hierarchical model's words, across its sentences.
    wb.openModel(u"sentiment-hierarchical"_s);
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    wb.setText(text + u" I would not see it again."_s);
    QVERIFY(settle(wb));
    QVERIFY(wb.outcome()->attribution);
    QCOMPARE(wb.outcome()->attribution->scores.size(), attn::Index(wb.outcome()->classifier->input.words.size()));

    // The entailment page's row shows the same choice; both sentences are shaded at one scale.
    wb.openModel(u"entailment-wbw"_s);
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    box = visibleBox();
    QVERIFY(box);
    QCOMPARE(box->currentIndex(), 2);
    wb.setText(u"A man is sleeping on the beach."_s);
    wb.setPairText(u"the man is not sleeping"_s);
    QVERIFY(settle(wb));
    const auto& pair = *wb.outcome()->entailment;
    const auto& a = *wb.outcome()->attribution;
    QCOMPARE(a.premise_words, int(pair.premise.words.size()));
    QCOMPARE(a.scores.size(), attn::Index(pair.premise.words.size() + pair.hypothesis.words.size()));
    const int n = shadedCount(wb.currentFigure());
    const auto* premise = shadedElement(wb.currentFigure(), n - 2);
    const auto* hypothesis = shadedElement(wb.currentFigure(), n - 1);
    QVERIFY2(premise->caption.startsWith(u"Premise \u00b7 attribution of"_s), qPrintable(premise->caption));
    QVERIFY(premise->signedWeights && hypothesis->signedWeights);
    QCOMPARE(premise->scale, hypothesis->scale);
    QCOMPARE(hypothesis->ranges.back().weight, a.scores(a.scores.size() - 1));

    // None: no attribution, nothing shaded by one; a saved state turns it on again.
    box->setCurrentIndex(0);
    QVERIFY(settle(wb));
    QVERIFY(!wb.outcome()->attribution);
    QCOMPARE(shadedCount(wb.currentFigure()), n - 2);
    QCOMPARE(QString::fromStdString(wb.state().attribution), u"none"_s);
    auto state = wb.state();
    state.attribution = "grad-x-input";
    wb.applyState(state);
    QVERIFY(settle(wb));
    QCOMPARE(visibleBox()->currentIndex(), 1);
    QVERIFY(wb.outcome()->attribution);
  }

  void unknownModelNamesListTheBundledOnes() {
    const auto result = loadAlignmentModel(u"no-such-model"_s);
    QVERIFY(!result);
    const QString message = QString::fromStdString(result.error().message());
    QVERIFY2(message.contains(u"no-such-model"_s), qPrintable(message));
    for (const auto& key : bundledModelKeys()) QVERIFY2(message.contains(key), qPrintable(message));
  }

  // An entailment model: two inputs, the label with its probabilities, a slider over the hypothesis words that
  // outlines the word and shades the premise by its row, an empty or wordless sentence, examples as pairs, the
  // session's pair and word, and a date model after it.
  void entailmentTakesTwoSentencesAndStepsOverTheHypothesisWords() {
    AlignmentWorkbench wb;
    wb.resize(1300, 820);
    wb.show();
    wb.openModel(QStringLiteral(ATTN_SOURCE_DIR "/tests/data/entailment/random-entailment"));
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    QVERIFY(wb.source()->model.isEntailment());
    QVERIFY(wb.hypothesisEdit()->isVisibleTo(&wb));
    QVERIFY(!wb.hypothesisList()->isVisibleTo(&wb));
    QCOMPARE(wb.text(), entailmentExamples().front().premise);
    QCOMPARE(wb.pairText(), entailmentExamples().front().hypothesis);

    wb.setText(u"A man is sleeping on the beach."_s);
    wb.setPairText(u"the old man is not sleeping"_s);
    QVERIFY(settle(wb));
    const auto* outcome = wb.outcome();
    QVERIFY(outcome && outcome->entailment);
    QCOMPARE(QString::fromStdString(outcome->request.hypothesis), u"the old man is not sleeping"_s);
    const auto& run = *outcome->entailment;
    QCOMPARE(wb.currentMap(), outcome->entailmentMap.get());
    QCOMPARE(wb.heatmap()->map(), wb.currentMap());
    QCOMPARE(wb.currentMap()->weights.rows(), attn::Index(6));  // hypothesis words
    QCOMPARE(wb.currentMap()->weights.cols(), attn::Index(6));  // the premise's words, the full stop dropped
    QCOMPARE(wb.currentMap()->row_labels[2], std::string("man"));
    QCOMPARE(wb.stepCount(), 6);
    QCOMPARE(wb.stepSlider()->maximum(), 5);
    const auto bars = charts(wb.currentFigure());
    QCOMPARE(int(bars.size()), 1);
    QCOMPARE(int(bars.front()->bars.size()), 3);
    QVERIFY(bars.front()->bars[std::size_t(run.predicted)].strong);
    QVERIFY2(wb.currentFigure().heading.startsWith(u"Predicted: "_s), qPrintable(wb.currentFigure().heading));
    QVERIFY2(wb.runSummary().contains(u"6 premise and 6 hypothesis words"_s), qPrintable(wb.runSummary()));

    // The slider outlines the hypothesis word and shades the premise by its row.
    wb.stepSlider()->setFocus();
    QTest::keyClick(wb.stepSlider(), Qt::Key_Right);
    QTest::keyClick(wb.stepSlider(), Qt::Key_Right);
    QCOMPARE(wb.step(), 2);
    QCOMPARE(wb.heatmap()->overlay().focusRow, std::optional<int>(2));
    const auto* hypothesis = shadedElement(wb.currentFigure(), 0);
    const auto* premise = shadedElement(wb.currentFigure(), 1);
    QVERIFY(hypothesis && premise);
    QVERIFY(hypothesis->ranges[2].focus);
    QCOMPARE(std::count_if(hypothesis->ranges.begin(), hypothesis->ranges.end(), [](const auto& r) { return r.focus; }),
             1);
    QCOMPARE(int(premise->ranges.size()), 6);
    for (std::size_t j = 0; j < premise->ranges.size(); ++j) {
      QCOMPARE(premise->ranges[j].weight, wb.currentMap()->weights(2, attn::Index(j)));
    }
    QVERIFY2(premise->caption.contains(u"hypothesis word 2 (\u201cman\u201d)"_s), qPrintable(premise->caption));

    // An empty hypothesis keeps the view and says why; a premise without a word is refused by name.
    const auto* before = wb.outcome();
    wb.setPairText(QString());
    QTest::qWait(100);
    QCOMPARE(wb.outcome(), before);
    QVERIFY2(wb.inputMessage().contains(u"The hypothesis is empty"_s), qPrintable(wb.inputMessage()));
    wb.setPairText(u"a man"_s);
    wb.setText(u"?! \u2014"_s);
    QVERIFY(settle(wb));
    QVERIFY(wb.errorBanner()->isVisibleTo(&wb));
    QVERIFY2(wb.errorBanner()->text().contains(u"the premise has no words"_s), qPrintable(wb.errorBanner()->text()));

    // An example sets both sentences and runs once with both.
    const auto examples = entailmentExamples();
    QCOMPARE(wb.findChild<QComboBox*>(u"alignmentExamples"_s)->count(), int(examples.size()));
    const int runs = wb.workerRuns();
    emit wb.findChild<QComboBox*>(u"alignmentExamples"_s)->activated(2);
    QVERIFY(settle(wb));
    QCOMPARE(QString::fromStdString(wb.outcome()->request.text), examples[2].premise);
    QCOMPARE(QString::fromStdString(wb.outcome()->request.hypothesis), examples[2].hypothesis);
    QVERIFY(!wb.errorBanner()->isVisibleTo(&wb));
    QVERIFY(wb.workerRuns() - runs <= 2);

    // The session keeps the pair and the word in view.
    wb.setStep(3);
    auto state = wb.state();
    QCOMPARE(QString::fromStdString(attn::ui::entailmentPair(state)), examples[2].hypothesis);
    QCOMPARE(state.step, 3);
    attn::ui::setEntailmentPair(state, "all dogs are sleeping");
    state.step = 1;
    wb.applyState(state);
    QVERIFY(settle(wb));
    QTRY_COMPARE(wb.step(), 1);
    QCOMPARE(QString::fromStdString(wb.outcome()->request.hypothesis), u"all dogs are sleeping"_s);

    // A date model after it: the premise of an example gives way to a date, the hypothesis is hidden.
    wb.setText(examples[0].premise);
    QVERIFY(settle(wb));
    wb.openModel(seq2seqFixture("bahdanau"));
    QVERIFY(settle(wb));
    QTRY_VERIFY(wb.source()->isSeq2Seq());
    QCOMPARE(wb.text(), defaultDateText());
    QVERIFY(!wb.hypothesisEdit()->isVisibleTo(&wb));
  }

  // A session file as the code before the kinds' session parts wrote it (the kinds' keys beside the shared ones,
  // off their defaults): the entailment model's hypothesis reaches the second input, the review classifier's
  // readings its check box, the speech model's shaping its group; the tab's state written back has the same keys
  // and values.
  void sessionKeysOfEachKindReachItsViews() {
    QString text =
        uR"({
  "format": "attnscope.session",
  "version": 1,
  "tab": "alignment",
  "tabs": {
    "alignment": {
      "model": "MODEL",
      "text": "A man is sleeping on the beach.",
      "pair": "the old man is not sleeping",
      "beam": 1,
      "hypothesis": 0,
      "step": 2,
      "colormap": "magma",
      "readings": false,
      "shaping": {
        "sharpen": 2.5,
        "smooth": false,
        "top_k": 5,
        "window": 12
      }
    }
  }
})"_s;
    text.replace(u"MODEL"_s, QStringLiteral(ATTN_SOURCE_DIR "/tests/data/entailment/random-entailment"));
    const auto session = attn::ui::read_session(text.toStdString(), "earlier.attnscope.json");
    QVERIFY2(session, session ? "" : session.error().message().c_str());
    QVERIFY(session->alignment);

    AlignmentWorkbench wb;
    wb.resize(1300, 820);
    wb.show();
    wb.applyState(*session->alignment);
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    QVERIFY(wb.source()->model.isEntailment());
    QCOMPARE(wb.text(), u"A man is sleeping on the beach."_s);
    QCOMPARE(wb.pairText(), u"the old man is not sleeping"_s);  // entailment's
    QTRY_COMPARE(QString::fromStdString(wb.outcome()->request.hypothesis), u"the old man is not sleeping"_s);
    QVERIFY(!wb.readingsCheck()->isChecked());  // the reviews'
    QCOMPARE(speechOf(wb).shaping(),            // the speech model's
             (attn::models::AttentionShaping{.sharpen = 2.5f, .smooth = false, .top_k = 5, .window = 12}));
    QCOMPARE(wb.colormap(), render::Colormap::Magma);
    QTRY_COMPARE(wb.step(), 2);

    attn::ui::Session back;
    back.alignment = wb.state();
    const auto original = nlohmann::json::parse(text.toStdString()).at("tabs").at("alignment");
    const auto written = nlohmann::json::parse(attn::ui::to_json(back)).at("tabs").at("alignment");
    QVERIFY2(written == original, written.dump(2).c_str());
  }

  void wordModelsReadAndWriteWords() {
    AlignmentWorkbench wb;
    wb.resize(1300, 820);
    wb.show();
    wb.openModel(seq2seqFixture("words"));
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    QCOMPARE(wb.source()->model.page().name(), u"headlines"_s);
    // The dates' default text gives way to the task's first example.
    QCOMPARE(wb.text(), headlineExamples().front());
    wb.setText(u"Police in Leeds arrested a Zorblax after a robbery."_s);
    wb.setBeam(3);
    QVERIFY(settle(wb));
    const auto& run = *wb.outcome()->seq2seq;
    QCOMPARE(int(run.source.size()), 9);
    QCOMPARE(wb.currentMap()->col_labels[5], std::string("zorblax (unk)"));
    QCOMPARE(wb.currentMap()->row_axis, std::string("headline words"));
    QVERIFY2(wb.inputNote()->text().startsWith(u"9 words read"_s), qPrintable(wb.inputNote()->text()));
    QVERIFY2(wb.runSummary().contains(u"9 words \u2192"_s), qPrintable(wb.runSummary()));
    // The output: one range per emitted word, each its label; the source shaded word by word.
    const auto& hyp = run.hypotheses.front();
    wb.setStep(1);
    const auto* output = shadedElement(wb.currentFigure(), 0);
    const auto* source = shadedElement(wb.currentFigure(), 1);
    QVERIFY(output && source);
    QCOMPARE(int(output->ranges.size()), int(hyp.ids.size()));
    for (std::size_t t = 0; t < hyp.ids.size(); ++t) {
      const auto& r = output->ranges[t];
      QCOMPARE(output->text.mid(r.begin, r.end - r.begin), QString::fromStdString(hyp.labels[t]));
    }
    QCOMPARE(int(source->ranges.size()), 9);
    QVERIFY(source->text.endsWith(u"robbery."_s));  // the full stop is no word, and is not "unread" either
    QVERIFY(source->tail.isEmpty());
    QCOMPARE(source->text.mid(source->ranges[2].begin, source->ranges[2].end - source->ranges[2].begin), u"Leeds"_s);
    QCOMPARE(source->ranges[2].weight, hyp.attention(1, 2));
    QVERIFY(source->ranges[5].unknown);
    const auto notes =
        std::count_if(wb.currentFigure().elements.begin(), wb.currentFigure().elements.end(), [](const auto& e) {
          const auto* note = std::get_if<render::FigureNote>(&e);
          return note && note->text.startsWith(u"1 word is not"_s);
        });
    QCOMPARE(int(notes), 1);
    // A text without a word is refused by name; the view stays.
    wb.setText(u"?! \u2014"_s);
    QVERIFY(settle(wb));
    QVERIFY(wb.errorBanner()->isVisibleTo(&wb));
    QVERIFY2(wb.errorBanner()->text().contains(u"has no word"_s), qPrintable(wb.errorBanner()->text()));
  }

  void convs2sShowsEachDecoderLayerBesideTheirMean() {
    AlignmentWorkbench wb;
    wb.resize(1300, 820);
    wb.show();
    wb.openModel(seq2seqFixture("convs2s"));
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    wb.setText(u"21 Nov 2026"_s);
    wb.setBeam(3);
    QVERIFY(settle(wb));
    const auto& run = *wb.outcome()->seq2seq;
    QVERIFY2(run.hypotheses.size() > 1, "a beam of 3 over random weights ends with several hypotheses");
    const auto& views = wb.layerHeatmaps();
    QCOMPARE(int(views.size()), 2);  // the fixture's two decoder layers, then their mean
    QVERIFY(wb.meanTitle()->isVisibleTo(&wb));
    QCOMPARE(wb.meanTitle()->text(), u"mean of the 2 layers (the alignment)"_s);
    // Read row by row: layer 0 and layer 1 side by side, the mean below.
    const auto place = [&wb](QWidget* w) { return QRect(w->mapTo(&wb, QPoint(0, 0)), w->size()); };
    // (QTRY_: the grid is laid out when the event loop gets to it, later under the sanitizers.)
    QTRY_VERIFY(place(views[0]).right() < place(views[1]).left());
    QTRY_COMPARE(place(views[0]).top(), place(views[1]).top());
    QTRY_VERIFY(place(views[0]).bottom() < place(wb.heatmap()).top());
    for (int h : {0, int(run.hypotheses.size()) - 1}) {
      wb.selectHypothesis(h);
      const auto& hyp = run.hypotheses[std::size_t(h)];
      for (std::size_t l = 0; l < views.size(); ++l) {
        QVERIFY(views[l]->isVisibleTo(&wb));
        QCOMPARE(wb.layerTitles()[l]->text(), u"decoder layer %1"_s.arg(l));
        QCOMPARE(views[l]->map(), wb.outcome()->layerAlignments[std::size_t(h)][l].get());
        QCOMPARE(testing::maxDifference(views[l]->map()->weights, hyp.layers[l]), 0.0);
      }
      QCOMPARE(testing::maxDifference(wb.currentMap()->weights, hyp.attention), 0.0);
    }

    // The step in view is outlined in every layer; a click on a layer's row goes to that step.
    wb.selectHypothesis(0);
    wb.setStep(2);
    for (auto* view : views) QCOMPARE(view->overlay().focusRow, std::optional<int>(2));
    emit views[1]->cellClicked(1, 0);
    QCOMPARE(wb.step(), 1);
    QCOMPARE(wb.heatmap()->overlay().focusRow, std::optional<int>(1));
    QCOMPARE(views[0]->overlay().focusRow, std::optional<int>(1));

    // A model with one attention hides them; ConvS2S again shows them.
    wb.openModel(seq2seqFixture("bahdanau"));
    QVERIFY(settle(wb));
    QTRY_VERIFY(wb.outcome() && wb.outcome()->seq2seq && wb.outcome()->layerAlignments.front().empty());
    for (auto* view : views) QVERIFY(!view->isVisibleTo(&wb));
    QVERIFY(!wb.meanTitle()->isVisibleTo(&wb));
    QTRY_VERIFY(place(wb.heatmap()).width() > 2 * place(views[0]).width());  // the one map takes the whole width
    wb.openModel(seq2seqFixture("convs2s"));
    QVERIFY(settle(wb));
    QTRY_VERIFY(wb.outcome() && !wb.outcome()->layerAlignments.front().empty());
    QCOMPARE(int(wb.layerHeatmaps().size()), 2);
    for (auto* view : views) QVERIFY(view->isVisibleTo(&wb));
  }

  // A speech model (the random fixture, over the typed words said by espeak-ng): the spectrogram page instead of the
  // shaded source, the true phonemes from the synthesis, each emitted phoneme's peak in time order of its row's
  // argmax, and a click on the spectrogram going to the step whose peak is nearest.
  void speechModelShowsTheSpectrogramWithTheStepsAttention() {
    AlignmentWorkbench wb;
    QVERIFY2(openSpeech(wb, u"the quick brown fox"_s), qPrintable(wb.lastError()));
    QVERIFY(wb.outcome() && wb.outcome()->seq2seq && wb.outcome()->speech);
    QVERIFY(wb.speechView()->isVisibleTo(&wb));
    QVERIFY(!wb.decodingView()->isVisibleTo(&wb));
    const auto& speech = *wb.outcome()->speech;
    QVERIFY(!speech.phonemes.empty());
    QCOMPARE(speech.voice, u"en-us"_s);
    const auto& run = *wb.outcome()->seq2seq;
    QCOMPARE(attn::Index(run.source.size()), std::min<attn::Index>(speech.logMel.rows() / 3, 30));
    const auto& attention = run.hypotheses[0].attention;
    const std::vector<double> peaks = wb.speechView()->peakSeconds();
    QCOMPARE(attn::Index(peaks.size()), attention.rows());
    for (attn::Index i = 0; i < attention.rows(); ++i) {
      attn::Index j = 0;
      attention.row(i).maxCoeff(&j);
      QCOMPARE(peaks[std::size_t(i)], (3.0 * double(j) + 1.0) * 0.01 + 0.0125);
    }
    // A click at the last step's peak goes to a step whose peak is there.
    wb.setStep(0);
    const int last = int(peaks.size()) - 1;
    const QPoint at(int(std::lround(wb.speechView()->xOfSeconds(peaks.back()))), wb.speechView()->height() / 2);
    QTest::mouseClick(wb.speechView(), Qt::LeftButton, {}, at);
    QTRY_COMPARE(peaks[std::size_t(wb.step())], peaks[std::size_t(last)]);
    QCOMPARE(wb.heatmap()->overlay().focusRow, std::optional<int>(wb.step()));
    // The heatmap's axes say what they are.
    QCOMPARE(QString::fromStdString(wb.currentMap()->row_axis), u"phonemes"_s);
    QCOMPARE(QString::fromStdString(wb.currentMap()->col_axis), u"audio (a step is 30 ms)"_s);
    // An audio file instead of the typed words: read, no synthesis; one that is not audio is refused by name;
    // typing says the words again.
    QVERIFY(wb.findChild<QPushButton*>(u"alignmentOpenAudio"_s)->isVisibleTo(&wb));
    const QString wav = QStringLiteral(ATTN_SOURCE_DIR "/tests/data/audio/fox-f2.wav");
    speechOf(wb).openAudio(wav);
    QVERIFY(settle(wb));
    QTRY_VERIFY(wb.outcome() && wb.outcome()->speech && wb.outcome()->speech->file == wav);
    QVERIFY(wb.outcome()->speech->phonemes.empty());
    QCOMPARE(wb.outcome()->request.wavPath, wav);
    speechOf(wb).openAudio(QStringLiteral(ATTN_SOURCE_DIR "/tests/data/seq2seq/random-speech/config.json"));
    QTRY_VERIFY2(wb.lastError().contains(u"config.json: is not audio"_s), qPrintable(wb.lastError()));
    wb.setText(u"seven green apples"_s);
    QCOMPARE(speechOf(wb).audioPath(), QString());
    QVERIFY(settle(wb));
    QTRY_VERIFY(wb.outcome() && wb.outcome()->speech && wb.outcome()->speech->file.isEmpty());
    // A text model again: the shaded source, no spectrogram.
    wb.openModel(seq2seqFixture("bahdanau"));
    QVERIFY(settle(wb));
    QTRY_VERIFY(wb.outcome() && wb.outcome()->seq2seq && !wb.outcome()->speech);
    QVERIFY(!wb.speechView()->isVisibleTo(&wb));
    QVERIFY(wb.decodingView()->isVisibleTo(&wb));
  }

  // A speech model's weights shaped from the panel: a window of 2 steps around the previous alignment's median
  // attends to at most 5 steps a row, top 3 to at most 3; the panel's state is the session's and comes back; the
  // model's own weights again; a text model hides the group.
  void speechAttentionShapingFromThePanel() {
    AlignmentWorkbench wb;
    QVERIFY2(openSpeech(wb, u"the quick brown fox"_s), qPrintable(wb.lastError()));
    auto* group = wb.findChild<QGroupBox*>(u"alignmentShaping"_s);
    QVERIFY(group && group->isVisibleTo(&wb));
    const auto widest = [&] {
      attn::Index most = 0;
      const auto& a = wb.outcome()->seq2seq->hypotheses[0].attention;
      for (attn::Index i = 0; i < a.rows(); ++i) most = std::max<attn::Index>(most, (a.row(i).array() > 0.0f).count());
      return most;
    };
    QTRY_VERIFY(wb.outcome() && wb.outcome()->speech);
    QCOMPARE(widest(), attn::Index(wb.outcome()->seq2seq->source.size()));  // the softmax: every step
    speechOf(wb).setShaping({.window = 2});
    QVERIFY(settle(wb));
    QTRY_COMPARE(wb.outcome()->request.shaping.window, 2);
    QVERIFY(widest() <= 5);
    wb.findChild<QSpinBox*>(u"alignmentTopK"_s)->setValue(3);
    QVERIFY(settle(wb));
    QTRY_COMPARE(wb.outcome()->request.shaping.top_k, 3);
    QVERIFY(widest() <= 3);
    wb.findChild<QCheckBox*>(u"alignmentSmooth"_s)->setChecked(true);
    QVERIFY(!wb.findChild<QDoubleSpinBox*>(u"alignmentSharpen"_s)->isEnabled());  // the sigmoid has no beta
    const attn::ui::AlignmentSection saved = wb.state();
    QCOMPARE(attn::ui::speechShaping(saved), (attn::models::AttentionShaping{.smooth = true, .top_k = 3, .window = 2}));
    wb.findChild<QPushButton*>(u"alignmentShapingReset"_s)->click();
    QCOMPARE(speechOf(wb).shaping(), attn::models::AttentionShaping{});
    QVERIFY(settle(wb));
    QTRY_VERIFY(!wb.outcome()->request.shaping.shaped());
    QCOMPARE(widest(), attn::Index(wb.outcome()->seq2seq->source.size()));
    wb.applyState(saved);
    QCOMPARE(speechOf(wb).shaping(), attn::ui::speechShaping(saved));
    QVERIFY(settle(wb));
    wb.openModel(seq2seqFixture("bahdanau"));
    QVERIFY(settle(wb));
    QVERIFY(!group->isVisibleTo(&wb));
  }

  // A long paste is not said whole: its first 150 words are, with a warning that says so; a single giant "word" is
  // cut inside, on a character's first byte.
  void speechOfALongPasteIsCut() {
    QStringList words;
    for (int i = 0; i < 40; ++i) words << u"seven"_s << u"green"_s << u"apples"_s << u"on"_s << u"the"_s;
    const std::string text = words.join(u' ').toStdString();  // 200 words
    const auto input = speechInput(text, QString(), "en-us");
    QVERIFY2(input.has_value(), input ? "" : input.error().message().c_str());
    const std::string said = words.mid(0, 150).join(u' ').toStdString() + " ";
    QCOMPARE(input->audio.warnings.size(), std::size_t(1));
    QCOMPARE(QString::fromStdString(input->audio.warnings[0]),
             u"said the first %1 bytes of the text's %2 (at most 150 words or 1500 bytes are said)"_s.arg(said.size())
                 .arg(text.size()));
    QVERIFY(!input->phonemes.empty());
    QVERIFY(input->phonemes.back().end < 60.0);  // 150 words said, not 200
    const auto whole = speechInput(words.mid(0, 150).join(u' ').toStdString(), QString(), "en-us");
    QVERIFY(whole && whole->audio.warnings.empty());
    QVERIFY(std::abs(whole->audio.seconds() - input->audio.seconds()) < 0.05);
    std::string giant = "a";  // then byte 3000 is inside an "\u00e9", and the cut goes back to its first byte
    for (int i = 0; i < 1000; ++i) giant += "\u00e9t\u00e9";  // 5 bytes each, 2 of them a character's
    const auto cut = speechInput(giant, QString(), "en-us");
    QVERIFY(cut.has_value());
    QCOMPARE(QString::fromStdString(cut->audio.warnings.at(0)).section(u' ', 0, 4), u"said the first 2999 bytes"_s);
  }

  // Playback: the position heard moves the line over the spectrogram and the step to the phoneme that attends there
  // (followPlayback is what the player's positionChanged calls). Play itself plays where there is an audio output
  // (the step then moves on its own) and says why not where there is none (CI) or no Qt Multimedia in the build.
  void speechPlaybackFollowsTheTimeHeard() {
    AlignmentWorkbench wb;
    QVERIFY2(openSpeech(wb, u"the quick brown fox jumps"_s), qPrintable(wb.lastError()));
    QTRY_VERIFY(wb.outcome() && wb.outcome()->speech);
    QVERIFY(wb.playButton()->isVisibleTo(&wb));
    QCOMPARE(wb.playButton()->isEnabled(), AudioPlayback::builtIn());
    const double total = wb.outcome()->speech->audio.seconds();
    const QString length = QString::number(total, 'f', 2);
    if (AudioPlayback::builtIn()) {
      QCOMPARE(wb.playbackLabel()->text(), length + u" s of audio"_s);
    } else {
      QCOMPARE(wb.playbackLabel()->text(), AudioPlayback::unavailableText());
    }
    QCOMPARE(wb.speechView()->playhead(), -1.0);

    const std::vector<double> peaks = wb.speechView()->peakSeconds();
    QVERIFY(peaks.size() >= 3);
    for (const std::size_t k : {std::size_t(0), peaks.size() / 2, peaks.size() - 1}) {
      speechOf(wb).followPlayback(peaks[k] + 0.001);
      QCOMPARE(wb.speechView()->playhead(), peaks[k] + 0.001);
      QCOMPARE(peaks[std::size_t(wb.step())], peaks[k]);
      QCOMPARE(wb.heatmap()->overlay().focusRow, std::optional<int>(wb.step()));
      QCOMPARE(wb.playbackLabel()->text(), QString::number(peaks[k] + 0.001, 'f', 2) + u" / "_s + length + u" s"_s);
    }
    speechOf(wb).followPlayback(
        total + 5.0);  // past the end: a step whose peak is the latest, the time no further than the audio's
    QCOMPARE(peaks[std::size_t(wb.step())], *std::max_element(peaks.begin(), peaks.end()));
    QCOMPARE(wb.playbackLabel()->text(), length + u" / "_s + length + u" s"_s);
    wb.setStep(0);

    if (!AudioPlayback::builtIn()) return;
    wb.playButton()->click();
    if (wb.playButton()->text().remove(u'&').contains(u"Stop"_s)) {  // an audio output: it plays, and the step follows
      QTRY_VERIFY_WITH_TIMEOUT(wb.speechView()->playhead() > 0.3, 10000);
      const auto* view = wb.speechView();
      QCOMPARE(peaks[std::size_t(wb.step())], peaks[std::size_t(view->stepAt(view->playhead()))]);
      wb.playButton()->click();
      QVERIFY(wb.playButton()->text().remove(u'&').contains(u"Play"_s));
      QCOMPARE(wb.speechView()->playhead(), -1.0);
      QCOMPARE(wb.playbackLabel()->text(), length + u" s of audio"_s);
    } else {  // none here: said, and nothing else changes
      QVERIFY2(wb.playbackLabel()->text().startsWith(u"No audio output"_s), qPrintable(wb.playbackLabel()->text()));
      QCOMPARE(wb.step(), 0);
    }
    // Another input stops what plays and shows its own length.
    wb.setText(u"seven green apples"_s);
    QVERIFY(settle(wb));
    QTRY_COMPARE(wb.playbackLabel()->text(),
                 QString::number(wb.outcome()->speech->audio.seconds(), 'f', 2) + u" s of audio"_s);
    QVERIFY(wb.playButton()->text().remove(u'&').contains(u"Play"_s));
  }
};

ATTN_QT_TEST(TestAlignmentWorkbench, Widgets);

}  // namespace test_alignment_workbench
#include "test_alignment_workbench.moc"
