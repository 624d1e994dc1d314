// The Glimpse workbench: a sample photo opens off the GUI thread; the canvas handles move the glimpse by
// exactly the dragged amount, the wheel and the keys change stride, sigma and position; the worker's
// glimpse is the engine's read for the same settings; clamps and a glimpse outside the image are shown
// without NaN; bad files leave the previous image and parameters; exports write; same-window mode
// compares the two glimpses; the canvas, the panel and the worker use the one geometry the settings resolve
// to; previews during a drag give way to the exact glimpse; the main window routes image drops to the tab
// and remembers its parameters.
#include "qt_test_registry.h"
#include "window/main_window.h"
#include "attn/glimpse/convert.h"
#include "attn/glimpse/gaussian.h"
#include "attn/glimpse/resolve.h"
#include "attn/glimpse/settings.h"
#include "attn/glimpse/stn.h"
#include "render/glimpse_render.h"
#include "views/qcustomplot.h"
#include "ui_test_support.h"
#include "views/glimpse_canvas.h"
#include "views/pixel_view.h"
#include "workbenches/alignment/alignment_workbench.h"
#include "workbenches/common/busy_row.h"
#include "workbenches/glimpse/glimpse_workbench.h"
#include "workbenches/glimpse/glimpse_worker.h"
#include "workbenches/lab/lab_workbench.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLabel>
#include <QProgressBar>
#include <QMimeData>
#include <QSettings>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTabWidget>
#include <QTest>
#include <QWheelEvent>

#include <cmath>
#include <numbers>

using namespace attn::ui;
using namespace Qt::StringLiterals;
using attn::glimpse::GlimpseSettings;

#ifndef ATTN_SOURCE_DIR
#define ATTN_SOURCE_DIR "."
#endif

namespace test_glimpse_workbench {

namespace {

bool settle(GlimpseWorkbench& wb, int timeoutMs = 20000) {
  return QTest::qWaitFor(
      [&] { return !wb.isLoading() && wb.image() && wb.settled() == wb.submitted() && !wb.canvas()->isInteracting(); },
      timeoutMs);
}

double maxAbsDifference(const attn::Image& a, const attn::Image& b) {
  if (a.width != b.width || a.height != b.height || a.channels != b.channels || a.data.size() != b.data.size()) {
    return INFINITY;
  }
  double worst = 0.0;
  for (std::size_t i = 0; i < a.data.size(); ++i) worst = std::max(worst, double(std::abs(a.data[i] - b.data[i])));
  return worst;
}

bool allFinite(const attn::Image& image) {
  for (float v : image.data) {
    if (!std::isfinite(v)) return false;
  }
  return true;
}

void wheel(QWidget* widget, int notches, Qt::KeyboardModifiers modifiers = Qt::NoModifier) {
  const QPointF at = QPointF(widget->width() / 2.0, widget->height() / 2.0);
  QWheelEvent event(at, widget->mapToGlobal(at), QPoint(), QPoint(0, 120 * notches), Qt::NoButton, modifiers,
                    Qt::NoScrollPhase, false);
  QApplication::sendEvent(widget, &event);
}

QDoubleSpinBox* spin(QWidget& root, const QString& key) { return root.findChild<QDoubleSpinBox*>(key); }

// Two resolutions of the same settings on the same image (clamps compared by parameter and value used).
bool sameGeometry(const attn::glimpse::ResolvedGlimpse& a, const attn::glimpse::ResolvedGlimpse& b) {
  if (a.gaussian.clamps.size() != b.gaussian.clamps.size()) return false;
  for (std::size_t k = 0; k < a.gaussian.clamps.size(); ++k) {
    const auto &p = a.gaussian.clamps[k], &q = b.gaussian.clamps[k];
    if (p.parameter != q.parameter || p.used != q.used) return false;
  }
  return a.image_width == b.image_width && a.image_height == b.image_height &&
         a.gaussian.glimpse == b.gaussian.glimpse && a.gaussian.outside == b.gaussian.outside &&
         a.stn_theta == b.stn_theta && a.stn_theta_replaced == b.stn_theta_replaced && a.stn_width == b.stn_width &&
         a.stn_height == b.stn_height;
}

QString dataImage(const QString& name) { return QStringLiteral(ATTN_SOURCE_DIR "/tests/data/images/") + name; }

}  // namespace

class TestGlimpseWorkbench : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir settingsDir_;
  QTemporaryDir files_;
  std::unique_ptr<GlimpseWorkbench> wb_;

  GlimpseWorkbench& wb() { return *wb_; }
  // A known starting point for each test: the whole-image preset, handles on the Gaussian.
  void resetTo(GlimpseWorkbench::Preset preset) {
    wb().setEditStn(false);
    wb().setWriteMode(false);
    wb().applyPreset(preset);
    QVERIFY(settle(wb()));
  }

 private slots:
  void initTestCase() {
    testing::isolateSettings(settingsDir_.path());
    wb_ = std::make_unique<GlimpseWorkbench>();
    wb_->resize(1360, 860);
    wb_->show();
    QVERIFY(QTest::qWaitForWindowExposed(wb_.get()));
    QSignalSpy loaded(wb_.get(), &GlimpseWorkbench::imageLoaded);
    QVERIFY(wb_->openSample(u"astronaut"_s));
    QVERIFY(loaded.wait(20000));
    QVERIFY(settle(*wb_));
  }

  void sampleOpensWithTheDrawDefault() {
    QVERIFY(wb().image());
    QCOMPARE(wb().image()->width, 512);
    QCOMPARE(wb().image()->height, 512);
    QCOMPARE(wb().imagePath(), u":/attnscope/samples/images/astronaut.png"_s);
    const auto* o = wb().outcome();
    QVERIFY(o);
    QCOMPARE(o->plan.level, 0);
    QCOMPARE(o->gaussian->width, 12);
    QCOMPARE(o->gaussian->height, 12);
    QCOMPARE(wb().glimpseView()->image().size(), QSize(12, 12));
    QVERIFY(wb().glimpseView()->badge().isEmpty());
    QVERIFY(wb().runSummary().contains(u"exact"_s));
    QCOMPARE(wb().sampleBox()->currentData().toString(), u"astronaut"_s);
  }

  void everySampleOpens_data() {
    QTest::addColumn<QString>("key");
    QTest::addColumn<QSize>("size");
    QTest::newRow("chelsea") << u"chelsea"_s << QSize(451, 300);
    QTest::newRow("coffee") << u"coffee"_s << QSize(600, 400);
    QTest::newRow("rocket") << u"rocket"_s << QSize(640, 427);
    QTest::newRow("astronaut") << u"astronaut"_s << QSize(512, 512);
  }
  void everySampleOpens() {
    QFETCH(QString, key);
    QFETCH(QSize, size);
    const GlimpseSettings before = wb().settings();
    const int oldW = wb().image()->width;
    QVERIFY(wb().openSample(key));
    QVERIFY(settle(wb()));
    QCOMPARE(QSize(wb().image()->width, wb().image()->height), size);
    QVERIFY(wb().lastError().isEmpty());
    // The glimpse keeps its place relative to the photo: the centre scales with the width.
    const double expected = (before.gaussian.x.centre() + 0.5) * size.width() / oldW - 0.5;
    QVERIFY(std::abs(wb().settings().gaussian.x.centre() - expected) < 1e-6);
    QCOMPARE(wb().settings().gaussian.x.n, before.gaussian.x.n);
  }

  void workerGlimpseIsTheEngineRead() {
    resetTo(GlimpseWorkbench::Preset::CentreQuarter);
    const auto* o = wb().outcome();
    QVERIFY(o);
    QCOMPARE(o->plan.level, 0);
    const auto& base = wb().image()->pyramid->base();
    const attn::Image expected = attn::glimpse::read(base, wb().settings().gaussian);
    QVERIFY2(maxAbsDifference(*o->gaussian, expected) <= 1e-6,
             qPrintable(QString::number(maxAbsDifference(*o->gaussian, expected))));
    // The STN glimpse is the engine's too.
    const auto& stn = wb().settings().stn;
    const attn::Image stnExpected =
        attn::glimpse::stn_glimpse(base, stn.theta(512, 512), stn.out_w, stn.out_h, stn.sampler);
    QVERIFY(maxAbsDifference(*o->stn, stnExpected) <= 1e-6);
    // And the view shows those pixels.
    QImage shown = wb().glimpseView()->image();
    QCOMPARE(shown.size(), QSize(12, 12));
    QCOMPARE(shown.pixel(3, 5), render::toQImage(expected).pixel(3, 5));
    QVERIFY(o->fx && o->fy);
    QCOMPARE(o->fx->n, 12);
  }

  void dragMovesTheGlimpseByThePixelAmount() {
    resetTo(GlimpseWorkbench::Preset::CentreQuarter);
    auto* canvas = wb().canvas();
    const GlimpseSettings before = wb().settings();
    const QPoint start = canvas->centreHandle().toPoint();
    const QPoint delta(40, -25);
    QTest::mousePress(canvas, Qt::LeftButton, Qt::NoModifier, start);
    for (int k = 1; k <= 5; ++k) QTest::mouseMove(canvas, start + delta * k / 5, 5);
    QVERIFY(canvas->isInteracting());
    QTest::mouseRelease(canvas, Qt::LeftButton, Qt::NoModifier, start + delta, 5);
    QVERIFY(!canvas->isInteracting());
    const double zoom = canvas->zoom();
    const auto& g = wb().settings().gaussian;
    QVERIFY2(std::abs(g.x.first - before.gaussian.x.first - delta.x() / zoom) < 1e-6,
             qPrintable(u"moved %1, expected %2"_s.arg(g.x.first - before.gaussian.x.first).arg(delta.x() / zoom)));
    QVERIFY(std::abs(g.y.first - before.gaussian.y.first - delta.y() / zoom) < 1e-6);
    QCOMPARE(g.x.stride, before.gaussian.x.stride);
    QCOMPARE(g.x.n, before.gaussian.x.n);
    // The panel follows, and the exact glimpse for where the drag ended arrives.
    QVERIFY(std::abs(spin(wb(), u"x.centre"_s)->value() - g.x.centre()) < 0.01);
    QVERIFY(settle(wb()));
    QVERIFY(!wb().outcome()->request.dragging);
    QCOMPARE(wb().outcome()->plan.level, 0);
    QVERIFY(wb().outcome()->request.settings == wb().settings());
  }

  void wheelChangesStrideAndShiftWheelSigma() {
    resetTo(GlimpseWorkbench::Preset::CentreQuarter);
    auto* canvas = wb().canvas();
    const auto before = wb().settings().gaussian;
    wheel(canvas, 1);
    auto after = wb().settings().gaussian;
    QVERIFY(std::abs(after.x.stride - before.x.stride / 1.1) < 1e-9);
    QVERIFY(std::abs(after.y.stride - before.y.stride / 1.1) < 1e-9);
    QVERIFY(std::abs(after.x.centre() - before.x.centre()) < 1e-9);  // zooms about the window's centre
    QCOMPARE(after.x.sigma, before.x.sigma);
    wheel(canvas, -2);
    after = wb().settings().gaussian;
    QVERIFY(std::abs(after.x.stride - before.x.stride * 1.1) < 1e-9);

    const auto beforeSigma = wb().settings().gaussian;
    wheel(canvas, 1, Qt::ShiftModifier);
    after = wb().settings().gaussian;
    QVERIFY(std::abs(after.x.sigma - beforeSigma.x.sigma / 1.1) < 1e-9);
    QVERIFY(std::abs(after.y.sigma - beforeSigma.y.sigma / 1.1) < 1e-9);
    QCOMPARE(after.x.stride, beforeSigma.x.stride);
    // The burst ends with an exact request.
    QVERIFY(settle(wb()));
    QVERIFY(!wb().outcome()->request.dragging);
    QVERIFY(std::abs(wb().outcome()->sanitised.glimpse.x.sigma - after.x.sigma) < 1e-12);
  }

  void keysNudgeByOneOrTenPixels() {
    resetTo(GlimpseWorkbench::Preset::CentreQuarter);
    auto* canvas = wb().canvas();
    canvas->setFocus();
    const auto before = wb().settings().gaussian;
    QTest::keyClick(canvas, Qt::Key_Right);
    QTest::keyClick(canvas, Qt::Key_Right);
    QTest::keyClick(canvas, Qt::Key_Down, Qt::ShiftModifier);
    QTest::keyClick(canvas, Qt::Key_Left, Qt::ShiftModifier);
    const auto after = wb().settings().gaussian;
    QVERIFY(std::abs(after.x.first - (before.x.first + 2.0 - 10.0)) < 1e-9);
    QVERIFY(std::abs(after.y.first - (before.y.first + 10.0)) < 1e-9);
    QTest::keyClick(canvas, Qt::Key_BracketRight);
    QVERIFY(std::abs(wb().settings().gaussian.x.sigma - before.x.sigma * 1.1) < 1e-9);
    QVERIFY(settle(wb()));
  }

  void panelEditsReachCanvasAndWorker() {
    resetTo(GlimpseWorkbench::Preset::CentreQuarter);
    spin(wb(), u"x.centre"_s)->setValue(300.0);
    QVERIFY(std::abs(wb().settings().gaussian.x.centre() - 300.0) < 1e-9);
    QVERIFY(std::abs(wb().canvas()->settings().gaussian.x.centre() - 300.0) < 1e-9);
    spin(wb(), u"x.n"_s)->setValue(20);  // linked: both axes
    QCOMPARE(wb().settings().gaussian.x.n, 20);
    QCOMPARE(wb().settings().gaussian.y.n, 20);
    QVERIFY(std::abs(wb().settings().gaussian.x.centre() - 300.0) < 1e-9);  // N grows about the centre
    QVERIFY(settle(wb()));
    QCOMPARE(wb().outcome()->gaussian->width, 20);
    QCOMPARE(wb().glimpseView()->image().size(), QSize(20, 20));
  }

  void commandLineSpecsGiveSettings() {
    resetTo(GlimpseWorkbench::Preset::CentreQuarter);
    auto good =
        wb().settingsFromSpecs(u"cx=100,cy=120,d=4,s=2,N=16"_s, u"family=similarity,scale=0.5,rotation=30deg"_s, true);
    QVERIFY(good);
    QVERIFY(std::abs(good->gaussian.x.centre() - 100.0) < 1e-9);
    QCOMPARE(good->gaussian.y.n, 16);
    QCOMPARE(good->stn.family, attn::glimpse::Family::Similarity);
    QVERIFY(std::abs(good->stn.similarity.rotation - std::numbers::pi / 6) < 1e-9);
    QVERIFY(good->same_window);
    auto bad = wb().settingsFromSpecs(u"cx=100,zoom=3"_s, QString(), false);
    QVERIFY(!bad);
    QVERIFY2(QString::fromStdString(bad.error().message()).contains(u"zoom"_s), bad.error().message().c_str());
  }

  void paperParametersStayInSync() {
    resetTo(GlimpseWorkbench::Preset::DrawDefault);
    QVERIFY(wb().drawExactLabel()->text().startsWith(u"Exact"_s));
    spin(wb(), u"draw.gx"_s)->setValue(0.5);
    // gx = (W + 1) / 2 (g~x + 1) - 1 in 0-based pixels.
    QVERIFY(std::abs(wb().settings().gaussian.x.centre() - ((512 + 1) / 2.0 * 1.5 - 1.0)) < 1e-6);
    QVERIFY(std::abs(spin(wb(), u"x.centre"_s)->value() - wb().settings().gaussian.x.centre()) < 0.01);
    // An anisotropic sigma has no exact paper form.
    wb().findChild<QCheckBox*>(u"linkAxes"_s)->setChecked(false);
    spin(wb(), u"y.sigma"_s)->setValue(3.0);
    QVERIFY(wb().drawExactLabel()->text().startsWith(u"Approximate"_s));
    wb().findChild<QCheckBox*>(u"linkAxes"_s)->setChecked(true);
    QVERIFY(settle(wb()));
  }

  void clampsAreShown_data() {
    QTest::addColumn<QString>("key");
    QTest::addColumn<double>("value");
    QTest::addColumn<QString>("expected");
    QTest::newRow("sigma 0") << u"x.sigma"_s << 0.0 << u"x.sigma"_s;
    QTest::newRow("sigma negative") << u"x.sigma"_s << -3.0 << u"x.sigma"_s;
    QTest::newRow("stride 0") << u"x.stride"_s << 0.0 << u"x.stride"_s;
    QTest::newRow("stride negative") << u"x.stride"_s << -2.0 << u"x.stride"_s;
    QTest::newRow("N 0") << u"x.n"_s << 0.0 << u"x.n"_s;
    QTest::newRow("N 1") << u"x.n"_s << 1.0 << u"N = 1"_s;
    QTest::newRow("gamma 0") << u"gamma"_s << 0.0 << u"gamma"_s;
  }
  void clampsAreShown() {
    QFETCH(QString, key);
    QFETCH(double, value);
    QFETCH(QString, expected);
    resetTo(GlimpseWorkbench::Preset::CentreQuarter);
    QVERIFY(wb().clampNotes().isEmpty());
    QVERIFY(wb().clampText().startsWith(u"No clamps"_s));
    auto* box = spin(wb(), key);
    QVERIFY(box);
    box->setValue(value);
    QVERIFY(settle(wb()));
    QVERIFY2(wb().clampText().contains(expected), qPrintable(wb().clampText()));
    const auto* o = wb().outcome();
    QVERIFY(allFinite(*o->gaussian));
    QVERIFY(allFinite(*o->stn));
    QVERIFY(!wb().glimpseView()->image().isNull());
    // The request keeps what was typed; the engine says what it used.
    if (key != u"x.n"_s || value != 1.0) QVERIFY(!o->sanitised.clamps.empty());
    QVERIFY(testing::imageStats(wb().canvas()->grab().toImage()).distinctColours > 12);  // paints, no crash
  }

  void glimpseOutsideTheImageIsFlagged() {
    resetTo(GlimpseWorkbench::Preset::CentreQuarter);
    auto s = wb().settings();
    s.gaussian.x.first = -5000.0;
    s.gaussian.y.first = -7000.0;
    wb().setSettings(s);
    QVERIFY(settle(wb()));
    QVERIFY(wb().outcome()->sanitised.outside);
    QVERIFY2(wb().clampText().contains(u"outside"_s), qPrintable(wb().clampText()));
    QVERIFY(allFinite(*wb().outcome()->gaussian));
    QVERIFY(!wb().canvas()->grab().isNull());
    // Dragging it back works from there.
    QTest::keyClick(wb().canvas(), Qt::Key_Right, Qt::ShiftModifier);
    QVERIFY(std::abs(wb().settings().gaussian.x.first - (-4990.0)) < 1e-9);
    QVERIFY(settle(wb()));
  }

  void nonFiniteSettingsDoNotReachTheScreen() {
    resetTo(GlimpseWorkbench::Preset::CentreQuarter);
    auto s = wb().settings();
    s.gaussian.x.sigma = std::numeric_limits<double>::quiet_NaN();
    s.gaussian.y.stride = std::numeric_limits<double>::infinity();
    wb().setSettings(s);
    QVERIFY(settle(wb()));
    QVERIFY(allFinite(*wb().outcome()->gaussian));
    QVERIFY(wb().clampText().contains(u"x.sigma"_s));
    QVERIFY(!wb().canvas()->grab().isNull());
  }

  void badFilesKeepThePreviousImage_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QByteArray>("bytes");  // used when tests/data/images has no such file
    QTest::newRow("0-byte file") << u"empty.png"_s << QByteArray();
    QTest::newRow("text named .png") << u"text.png"_s << QByteArray("this is not a picture\n");
    QTest::newRow("truncated JPEG") << u"truncated.jpg"_s << QByteArray();
    QTest::newRow("header claims a huge image") << u"huge-header.png"_s << QByteArray();
    QTest::newRow("missing file") << u"no-such-image.png"_s << QByteArray();
  }
  void badFilesKeepThePreviousImage() {
    QFETCH(QString, name);
    QFETCH(QByteArray, bytes);
    resetTo(GlimpseWorkbench::Preset::CentreQuarter);
    QString path = dataImage(name);
    if (!QFileInfo::exists(path) && name != u"no-such-image.png"_s) {
      path = files_.filePath(name);
      QFile file(path);
      QVERIFY(file.open(QIODevice::WriteOnly));
      file.write(bytes);
    }
    const auto image = wb().sharedImage();
    const GlimpseSettings settings = wb().settings();
    const quint64 shown = wb().shown();
    QSignalSpy failed(&wb(), &GlimpseWorkbench::imageFailed);
    wb().openFile(path);
    QVERIFY(failed.wait(20000));
    QVERIFY(settle(wb()));
    const QString message = failed.front().front().toString();
    QVERIFY2(message.contains(name), qPrintable(message));
    QVERIFY(message.size() > name.size() + 8);  // a reason, not only the name
    QCOMPARE(wb().lastError(), message);
    QVERIFY(wb().errorBanner()->isVisible());
    QVERIFY(wb().errorBanner()->text().contains(name));
    QCOMPARE(wb().sharedImage(), image);
    QVERIFY(wb().settings() == settings);
    QCOMPARE(wb().shown(), shown);
    // A good file afterwards clears the message.
    QVERIFY(wb().openSample(u"astronaut"_s));
    QVERIFY(settle(wb()));
    QVERIFY(wb().lastError().isEmpty());
    QVERIFY(!wb().errorBanner()->isVisible());
  }

  // Issue 41: opening a large photo shows the busy row (its stages, then the time left); Cancel (or Esc) keeps the
  // image and glimpse on screen, also once the worker has answered; a glimpse read shows the row too.
  void openingALargePhotoShowsProgressAndCanBeCancelled() {
    resetTo(GlimpseWorkbench::Preset::CentreQuarter);
    wb().busyRow()->setDelay(0);
    const auto image = wb().sharedImage();
    const GlimpseSettings settings = wb().settings();
    const quint64 shown = wb().shown();
    const QString path = files_.filePath(u"large-photo.jpg"_s);
    QImage photo(4000, 3000, QImage::Format_RGB32);
    quint32 state = 7;
    for (int y = 0; y < photo.height(); ++y) {
      auto* line = reinterpret_cast<QRgb*>(photo.scanLine(y));
      for (int x = 0; x < photo.width(); ++x) line[x] = (state = state * 1664525u + 1013904223u) | 0xff000000u;
    }
    QVERIFY(photo.save(path, "JPEG", 90));
    QSignalSpy loaded(wb().worker(), &GlimpseWorker::loaded);
    QSignalSpy status(&wb(), &GlimpseWorkbench::statusMessage);
    wb().openFile(path);
    QVERIFY(wb().busyRow()->isShown());
    QVERIFY2(wb().busyRow()->label()->text().startsWith(u"Opening large-photo.jpg"_s),
             qPrintable(wb().busyRow()->label()->text()));
    wb().activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&wb()));
    wb().canvas()->setFocus();
    QTest::keyClick(wb().canvas(), Qt::Key_Escape);  // Esc anywhere in the tab
    QVERIFY(!wb().busyRow()->isShown());
    QVERIFY(!wb().isLoading());
    QCOMPARE(status.last().first().toString(), u"Cancelled: the previous image and glimpse stay"_s);
    QTRY_VERIFY_WITH_TIMEOUT(!loaded.isEmpty(), 30000);  // the worker's answer comes, and is dropped
    QTest::qWait(50);
    QCOMPARE(wb().sharedImage(), image);
    QVERIFY(wb().settings() == settings);
    QCOMPARE(wb().shown(), shown);

    // Opened to its end: the row shows the stages with their percentages, then goes.
    wb().openFile(path);
    QTRY_VERIFY_WITH_TIMEOUT(wb().busyRow()->bar()->maximum() == 100 || !wb().isLoading(), 30000);
    if (wb().isLoading()) {
      QVERIFY2(wb().busyRow()->label()->text().contains(u"% \u00b7 "_s), qPrintable(wb().busyRow()->label()->text()));
      testing::saveShot(wb().grab().toImage(), u"glimpse-busy"_s);
    }
    QVERIFY(settle(wb(), 60000));
    QCOMPARE(wb().image()->width, 4000);
    QVERIFY(!wb().busyRow()->isShown());
    wb().busyRow()->setDelay(400);
    QVERIFY(wb().openSample(u"astronaut"_s));
    QVERIFY(settle(wb()));
  }

  void imageOverTheSizeLimitIsRefused() {
    resetTo(GlimpseWorkbench::Preset::CentreQuarter);
    attn::ImageLimits small;
    small.max_side = 256;
    wb().setImageLimits(small);
    const auto image = wb().sharedImage();
    QSignalSpy failed(&wb(), &GlimpseWorkbench::imageFailed);
    wb().openFile(dataImage(u"pattern-64x48.png"_s));  // fits
    QVERIFY(settle(wb()));
    QCOMPARE(failed.size(), 0);
    QCOMPARE(wb().image()->width, 64);
    QVERIFY(wb().openSample(u"coffee"_s));  // 600 x 400 > 256
    QVERIFY(failed.wait(20000));
    QVERIFY(failed.front().front().toString().contains(u"coffee.png"_s));
    QCOMPARE(wb().image()->width, 64);
    wb().setImageLimits({});
    QVERIFY(wb().openSample(u"astronaut"_s));
    QVERIFY(settle(wb()));
  }

  void exportsWriteFiles() {
    resetTo(GlimpseWorkbench::Preset::CentreQuarter);
    const QString png = files_.filePath(u"glimpse.png"_s);
    QVERIFY(wb().exportGlimpse(png));
    QImage glimpse(png);
    QCOMPARE(glimpse.size(), QSize(12, 12));
    QCOMPARE(glimpse.pixel(4, 4), wb().glimpseView()->image().pixel(4, 4));
    for (const QString& name : {u"annotated.png"_s, u"annotated.svg"_s, u"annotated.pdf"_s}) {
      const QString path = files_.filePath(name);
      const auto written = wb().exportAnnotated(path);
      QVERIFY2(written, written ? "" : written.error().message().c_str());
      QVERIFY(QFileInfo(path).size() > 200);
    }
    QImage annotated(files_.filePath(u"annotated.png"_s));
    QCOMPARE(annotated.size(), QSize(512, 512));
    const QString json = files_.filePath(u"glimpse.json"_s);
    QVERIFY(wb().exportParameters(json));
    QFile file(json);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const auto back = attn::glimpse::glimpse_settings_from_json(file.readAll().toStdString());
    QVERIFY(back);
    QVERIFY(*back == wb().settings());
    QVERIFY(!wb().exportGlimpse(files_.filePath(u"glimpse.jpg"_s)));  // PNG only: refused, not mislabelled
    QVERIFY(!wb().exportAnnotated(files_.filePath(u"annotated.csv"_s)));
  }

  void sameWindowComparesTheTwoGlimpses() {
    resetTo(GlimpseWorkbench::Preset::Fine64);
    // A crisp Gaussian (sigma a quarter pixel) on integer centres is nearly the pixels themselves, which is
    // what the bilinear STN samples there.
    auto s = wb().settings();
    s.gaussian.x.sigma = s.gaussian.y.sigma = 0.25;
    s.same_window = true;
    wb().setSettings(s);
    QVERIFY(settle(wb()));
    QVERIFY(wb().sameWindowCheck()->isChecked());
    const auto* o = wb().outcome();
    QVERIFY(o->compared);
    QCOMPARE(o->stnWidth, 64);
    QCOMPARE(o->stnHeight, 64);
    QVERIFY2(o->maxError < 0.01, qPrintable(QString::number(o->maxError)));
    QVERIFY(o->rmsError < 0.003);
    QVERIFY(!wb().differenceView()->image().isNull());
    QVERIFY(wb().differenceView()->isVisible());
    QVERIFY(wb().findChild<QLabel*>(u"errorSummary"_s)->text().contains(u"RMS"_s));
    const double crisp = o->rmsError;
    // A blurrier Gaussian differs more from the bilinear samples: the error follows the settings.
    s.gaussian.x.sigma = s.gaussian.y.sigma = 2.0;
    wb().setSettings(s);
    QVERIFY(settle(wb()));
    QVERIFY(wb().outcome()->rmsError > 10.0 * crisp);
    // The STN handles are off in same-window mode.
    QVERIFY(!wb().findChild<QWidget*>(u"editStn"_s)->isEnabled());
    wb().setSameWindow(false);
    QVERIFY(settle(wb()));
    QVERIFY(!wb().outcome()->compared);
    QVERIFY(wb().differenceView()->image().isNull());
    QVERIFY(!wb().differenceView()->isVisible());
  }

  // The workbench resolves the settings where they enter; the canvas draws that geometry, the panel shows its
  // theta, and the worker's outcome used the same.
  void geometryIsResolvedOnceForCanvasPanelAndWorker() {
    const auto agree = [&](const char* step) {
      const auto expected = attn::glimpse::resolve(wb().settings(), wb().image()->width, wb().image()->height);
      if (!sameGeometry(wb().geometry(), expected)) return u"%1: the workbench's geometry"_s.arg(QLatin1String(step));
      if (!sameGeometry(wb().canvas()->geometry(), expected) || !(wb().canvas()->settings() == wb().settings()))
        return u"%1: the canvas's geometry"_s.arg(QLatin1String(step));
      if (!settle(wb())) return u"%1: no outcome"_s.arg(QLatin1String(step));
      const auto* o = wb().outcome();
      if (!o || !(o->request.settings == wb().settings())) return u"%1: no outcome"_s.arg(QLatin1String(step));
      if (!(o->sanitised.glimpse == expected.gaussian.glimpse) || o->theta != expected.stn_theta ||
          o->stnWidth != expected.stn_width || o->stnHeight != expected.stn_height)
        return u"%1: the worker's geometry"_s.arg(QLatin1String(step));
      const QString theta = wb().findChild<QLabel*>(u"theta"_s)->text();
      if (!theta.contains(QString::asprintf("%+8.4f", expected.stn_theta[2])) ||
          !theta.contains(QString::asprintf("%+8.4f", expected.stn_theta[4])))
        return u"%1: the panel's theta %2"_s.arg(QLatin1String(step), theta);
      return QString();
    };
    resetTo(GlimpseWorkbench::Preset::CentreQuarter);
    QString problem = agree("preset");
    QVERIFY2(problem.isEmpty(), qPrintable(problem));

    // A canvas drag: the canvas edits its settings and is handed their geometry back.
    auto* canvas = wb().canvas();
    const QPoint start = canvas->centreHandle().toPoint();
    QTest::mousePress(canvas, Qt::LeftButton, Qt::NoModifier, start);
    QTest::mouseMove(canvas, start + QPoint(25, 10), 5);
    QVERIFY(sameGeometry(canvas->geometry(),
                         attn::glimpse::resolve(canvas->settings(), wb().image()->width, wb().image()->height)));
    QTest::mouseRelease(canvas, Qt::LeftButton, Qt::NoModifier, start + QPoint(25, 10), 5);
    problem = agree("drag");
    QVERIFY2(problem.isEmpty(), qPrintable(problem));

    // Same window with N clamped: the STN samples the sanitised grid, 1 x 7.
    auto s = wb().settings();
    s.gaussian.x.n = 0;
    s.gaussian.y.n = 7;
    s.same_window = true;
    wb().setSettings(s);
    QCOMPARE(wb().geometry().stn_width, 1);
    QCOMPARE(wb().geometry().stn_height, 7);
    problem = agree("same window");
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QCOMPARE(wb().outcome()->stnWidth, 1);

    // A similarity STN on its own, then a new photo: the geometry follows the image's aspect.
    s.same_window = false;
    s.gaussian.x.n = 12;
    s.stn.family = attn::glimpse::Family::Similarity;
    s.stn.similarity = {0.5, 0.4, 0.1, -0.1};
    wb().setSettings(s);
    problem = agree("similarity");
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QVERIFY(wb().openSample(u"chelsea"_s));
    QVERIFY(settle(wb()));
    QCOMPARE(wb().geometry().image_width, 451);
    problem = agree("new image");
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QVERIFY(wb().openSample(u"astronaut"_s));
    QVERIFY(settle(wb()));
    problem = agree("astronaut again");
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
  }

  void dragUsesAPreviewWhenTheBudgetIsTight() {
    resetTo(GlimpseWorkbench::Preset::WholeImage);
    auto s = wb().settings();
    s.gaussian = attn::glimpse::centred_glimpse(255.5, 255.5, 128, 2.0, 1.0);
    wb().setSettings(s);
    QVERIFY(settle(wb()));
    // Pretend reads are very slow: a drag frame cannot afford the exact read.
    wb().worker()->setMacsPerMs(5.0e4, true);
    auto* canvas = wb().canvas();
    const QPoint start = canvas->centreHandle().toPoint();
    QTest::mousePress(canvas, Qt::LeftButton, Qt::NoModifier, start);
    QTest::mouseMove(canvas, start + QPoint(10, 0), 5);
    QVERIFY(QTest::qWaitFor([&] { return wb().settled() == wb().submitted(); }, 20000));
    QVERIFY(wb().outcome()->request.dragging);
    QVERIFY(wb().outcome()->plan.level > 0);
    QVERIFY(wb().glimpseView()->badge().startsWith(u"preview (level"_s));
    QCOMPARE(wb().glimpseView()->image().size(), QSize(128, 128));  // a preview has the exact shape
    QTest::mouseRelease(canvas, Qt::LeftButton, Qt::NoModifier, start + QPoint(10, 0), 5);
    QVERIFY(settle(wb()));
    QCOMPARE(wb().outcome()->plan.level, 0);
    QVERIFY(wb().glimpseView()->badge().isEmpty());
    wb().worker()->setMacsPerMs(-1.0, false);
  }

  void stnHandlesMoveAndRotate() {
    resetTo(GlimpseWorkbench::Preset::CentreQuarter);
    auto s = wb().settings();
    s.stn.family = attn::glimpse::Family::Similarity;
    s.stn.similarity = {0.5, 0.0, 0.0, 0.0};
    wb().setSettings(s);
    wb().setEditStn(true);
    QVERIFY(settle(wb()));
    auto* canvas = wb().canvas();
    // Move.
    const QPoint start = canvas->centreHandle().toPoint();
    QTest::mousePress(canvas, Qt::LeftButton, Qt::NoModifier, start);
    QTest::mouseMove(canvas, start + QPoint(30, 20), 5);
    QTest::mouseRelease(canvas, Qt::LeftButton, Qt::NoModifier, start + QPoint(30, 20), 5);
    const double zoom = canvas->zoom();
    const auto& sim = wb().settings().stn.similarity;
    QVERIFY(std::abs(sim.shift_x - 2.0 * (30.0 / zoom) / 512.0) < 1e-9);
    QVERIFY(std::abs(sim.shift_y - 2.0 * (20.0 / zoom) / 512.0) < 1e-9);
    // Rotate: drag the handle a quarter turn clockwise about the centre.
    const auto handle = canvas->rotationHandle();
    QVERIFY(handle);
    const QPointF centre = canvas->centreHandle();
    const QPointF arm = *handle - centre;
    const double radius = std::hypot(arm.x(), arm.y());
    const double a0 = std::atan2(arm.y(), arm.x());
    QTest::mousePress(canvas, Qt::LeftButton, Qt::NoModifier, handle->toPoint());
    for (int k = 1; k <= 9; ++k) {
      const double a = a0 + k * (std::numbers::pi / 2) / 9;
      QTest::mouseMove(canvas, (centre + radius * QPointF(std::cos(a), std::sin(a))).toPoint(), 5);
    }
    const double a1 = a0 + std::numbers::pi / 2;
    QTest::mouseRelease(canvas, Qt::LeftButton, Qt::NoModifier,
                        (centre + radius * QPointF(std::cos(a1), std::sin(a1))).toPoint(), 5);
    QVERIFY2(std::abs(std::abs(wb().settings().stn.similarity.rotation) - std::numbers::pi / 2) < 0.05,
             qPrintable(QString::number(wb().settings().stn.similarity.rotation)));
    // The handle followed the mouse.
    const auto after = canvas->rotationHandle();
    QVERIFY(after);
    const QPointF armAfter = *after - canvas->centreHandle();
    const double turned = std::remainder(std::atan2(armAfter.y(), armAfter.x()) - a0, 2 * std::numbers::pi);
    QVERIFY2(std::abs(turned - std::numbers::pi / 2) < 0.05, qPrintable(QString::number(turned)));
    // Wheel scales the STN.
    wheel(canvas, 1);
    QVERIFY(std::abs(wb().settings().stn.similarity.scale - 0.5 / 1.1) < 1e-9);
    QVERIFY(settle(wb()));
    QCOMPARE(spin(wb(), u"stn.similarity.rotation"_s)->value(),
             std::round(wb().settings().stn.similarity.rotation * 180.0 / std::numbers::pi * 100.0) / 100.0);
    wb().setEditStn(false);
  }

  void writeModeAccumulatesAndClears() {
    resetTo(GlimpseWorkbench::Preset::CentreQuarter);
    wb().setWriteMode(true);
    QVERIFY(settle(wb()));
    QVERIFY(wb().outcome()->hasCanvas);
    QCOMPARE(wb().outcome()->canvasWrites, 1);
    QVERIFY(!wb().writeView()->image().isNull());
    QVERIFY(wb().writeView()->isVisible());
    QTest::keyClick(wb().canvas(), Qt::Key_Right, Qt::ShiftModifier);
    QVERIFY(settle(wb()));
    QCOMPARE(wb().outcome()->canvasWrites, 2);
    QVERIFY(wb().outcome()->canvasPeak > 0.0);
    wb().clearCanvas();
    QVERIFY(settle(wb()));
    QCOMPARE(wb().outcome()->canvasWrites, 0);
    QCOMPARE(wb().outcome()->canvasPeak, 0.0);
    wb().setWriteMode(false);
    QVERIFY(settle(wb()));
    QVERIFY(!wb().outcome()->hasCanvas);
    QVERIFY(!wb().writeView()->isVisible());
  }

  // The window three ways: the soft mask a (.) I (image sized), the crop of the window's pixels and the
  // matrix form (the dense read), each timed; drag frames keep the last ones, marked; the mode is saved.
  void windowFormsShowTheSoftMaskTheCropAndTheMatrixForm() {
    resetTo(GlimpseWorkbench::Preset::CentreQuarter);
    wb().setWindowForms(true);
    QVERIFY(settle(wb()));
    const auto* o = wb().outcome();
    QVERIFY(o->forms);
    const auto& f = *o->forms;
    QCOMPARE(f.masked.width, o->imageWidth);
    QCOMPARE(f.masked.height, o->imageHeight);
    QCOMPARE(f.box, attn::glimpse::window_box(o->sanitised.glimpse, o->imageWidth, o->imageHeight));
    QVERIFY(!f.box.empty());
    QCOMPARE(f.crop.width, f.box.width);
    QCOMPARE(o->cropImage.size(), QSize(f.box.width, f.box.height));
    QCOMPARE(f.matrix.width, o->sanitised.glimpse.x.n);
    // The matrix form is the Gaussian read (banded) within its error bound.
    for (std::size_t i = 0; i < f.matrix.data.size(); ++i) {
      QVERIFY(std::abs(f.matrix.data[i] - o->gaussian->data[i]) < 1e-4f);
    }
    for (auto* view : {wb().maskedView(), wb().cropView(), wb().matrixView()}) {
      QVERIFY(view->isVisible());
      QVERIFY(!view->image().isNull());
      QVERIFY2(view->caption().endsWith(u" ms"_s), qPrintable(view->caption()));
    }
    const QString summary = wb().findChild<QLabel*>(u"errorSummary"_s)->text();
    QVERIFY2(summary.contains(u"soft mask"_s) && summary.contains(u"M multiplies"_s), qPrintable(summary));
    QVERIFY(wb().state().window_forms);
    // A drag frame computes no forms: the last ones stay, marked; the release brings new ones.
    auto* canvas = wb().canvas();
    const QPoint start = canvas->centreHandle().toPoint();
    QTest::mousePress(canvas, Qt::LeftButton, Qt::NoModifier, start);
    QTest::mouseMove(canvas, start + QPoint(10, 0), 5);
    QVERIFY(QTest::qWaitFor([&] { return wb().settled() == wb().submitted(); }, 20000));
    QVERIFY(wb().outcome()->request.dragging);
    QVERIFY(!wb().outcome()->forms);
    QCOMPARE(wb().maskedView()->badge(), u"updated when the drag ends"_s);
    QCOMPARE(wb().findChild<QLabel*>(u"errorSummary"_s)->text(), summary);  // the last figures stay
    QTest::mouseRelease(canvas, Qt::LeftButton, Qt::NoModifier, start + QPoint(10, 0), 5);
    QVERIFY(settle(wb()));
    QVERIFY(wb().outcome()->forms);
    QVERIFY(wb().maskedView()->badge().isEmpty());
    wb().setWindowForms(false);
    QVERIFY(settle(wb()));
    QVERIFY(!wb().outcome()->forms);
    QVERIFY(!wb().maskedView()->isVisible());
  }

  void largeGridsDrawThinnedLatticeAndCachedPixmap() {
    resetTo(GlimpseWorkbench::Preset::WholeImage);
    auto s = wb().settings();
    s.gaussian = attn::glimpse::centred_glimpse(255.5, 255.5, 256, 2.0, 1.0);
    wb().setSettings(s);
    QVERIFY(settle(wb()));
    auto* canvas = wb().canvas();
    canvas->repaint();
    // 256 centres 2 px apart at ~1.4 screen px per pixel: every k-th line, never all 256.
    QVERIFY(canvas->drawnLatticeLines() < 256);
    QVERIFY(canvas->drawnLatticeLines() >= 16);
    const int builds = canvas->pixmapBuilds();
    for (int k = 0; k < 5; ++k) {
      QTest::keyClick(canvas, Qt::Key_Right);
      canvas->repaint();
    }
    QCOMPARE(canvas->pixmapBuilds(), builds);  // moving the glimpse never rescales the photo
    QVERIFY(settle(wb()));
    // Filterbank curves: a subset for 256 filters, and the plot says so.
    auto* title = qobject_cast<QCPTextElement*>(wb().fxPlot()->plotLayout()->element(0, 0));
    QVERIFY(title);
    QVERIFY2(title->text().contains(u"of 256"_s), qPrintable(title->text()));
    QVERIFY(wb().fxPlot()->graphCount() <= 24);
  }

  // ---- the main window's part --------------------------------------------------------------------------

  void mainWindowRoutesImagesAndRemembersTheGlimpse() {
    wb_.reset();
    QSettings().clear();
    auto window = std::make_unique<MainWindow>();
    window->show();
    QVERIFY(QTest::qWaitForWindowExposed(window.get()));
    auto* glimpse = window->glimpse();
    QVERIFY(settle(*glimpse));
    // A first start shows the Alignment tab.
    QCOMPARE(window->tabs()->currentWidget(), static_cast<QWidget*>(window->alignment()));
    // Dropping an image opens it in the glimpse tab.
    const QString photo = files_.filePath(u"dropped.png"_s);
    QVERIFY(QFile::copy(u":/attnscope/samples/images/chelsea.png"_s, photo));
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(photo)});
    const QPoint centre = window->rect().center();
    QDragEnterEvent enter(centre, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(window.get(), &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(centre, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(window.get(), &drop);
    QCOMPARE(window->tabs()->currentWidget(), static_cast<QWidget*>(glimpse));
    QTRY_COMPARE_WITH_TIMEOUT(glimpse->imagePath(), photo, 20000);
    QVERIFY(settle(*glimpse));
    QCOMPARE(window->recentImages().front(), QFileInfo(photo).absoluteFilePath());
    QVERIFY(window->runLabel()->text().startsWith(u"glimpse: "_s));
    // A bad file names itself on the status bar and changes nothing.
    const GlimpseSettings kept = glimpse->settings();
    QVERIFY(window->openImage(dataImage(u"text.png"_s)));
    QTRY_VERIFY_WITH_TIMEOUT(window->statusBar()->currentMessage().contains(u"text.png"_s), 20000);
    QCOMPARE(glimpse->imagePath(), photo);
    QVERIFY(glimpse->settings() == kept);
    // Export through the window, by extension.
    QVERIFY(window->exportTo(files_.filePath(u"window.json"_s)));
    QVERIFY(window->exportTo(files_.filePath(u"window.svg"_s)));
    QVERIFY(window->exportGlimpse(files_.filePath(u"window-glimpse.png"_s)));
    // Settings survive a restart: same image, same parameters.
    auto s = glimpse->settings();
    s.gaussian.x.first += 7.25;
    s.stn.family = attn::glimpse::Family::Similarity;
    s.stn.similarity.rotation = 0.3;
    glimpse->setSettings(s);
    QVERIFY(settle(*glimpse));
    QVERIFY(window->close());
    window.reset();
    window = std::make_unique<MainWindow>();
    QCOMPARE(window->tabs()->currentWidget(), static_cast<QWidget*>(window->glimpse()));
    QVERIFY(settle(*window->glimpse()));
    QCOMPARE(window->glimpse()->imagePath(), photo);
    QVERIFY(window->glimpse()->settings() == s);
    // A corrupt autosave: defaults and a message naming the file.
    QVERIFY(window->close());
    window.reset();
    {
      QFile autosave(MainWindow::autosaveFile());
      QVERIFY(autosave.open(QIODevice::WriteOnly | QIODevice::Truncate));
      autosave.write(R"({"format": "attnscope.session", "version": 1, "tabs": {"glimpse": {"settings": 7}}})");
    }
    window = std::make_unique<MainWindow>();
    QVERIFY2(window->statusBar()->currentMessage().contains(u"autosave.attnscope.json"_s),
             qPrintable(window->statusBar()->currentMessage()));
    window->show();
    QVERIFY(QTest::qWaitForWindowExposed(window.get()));
    QVERIFY(settle(*window->glimpse()));
    QVERIFY(window->glimpse()->lastError().isEmpty());
    // Text files still go to the lab.
    const QString text = files_.filePath(u"pair.txt"_s);
    {
      QFile file(text);
      QVERIFY(file.open(QIODevice::WriteOnly));
      file.write("a dog barked\nthe dog barked at the cat\n");
    }
    mime.setUrls({QUrl::fromLocalFile(text)});
    QDragEnterEvent enterText(centre, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(window.get(), &enterText);
    QVERIFY(enterText.isAccepted());
    QDropEvent dropText(centre, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(window.get(), &dropText);
    QVERIFY(dropText.isAccepted());
    QCOMPARE(window->tabs()->currentWidget(), static_cast<QWidget*>(window->lab()));
    window.reset();
  }

  void cleanupTestCase() { wb_.reset(); }
};

ATTN_QT_TEST(TestGlimpseWorkbench, Widgets);

}  // namespace test_glimpse_workbench
#include "test_glimpse_workbench.moc"
