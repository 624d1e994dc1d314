// attnscope-cli glimpse as a user runs it: the magnified glimpse is written at the right size with the
// engine's pixels, --json reads back, and every file of the bad-input corpus exits 1 with a message that
// names the file and the reason.
#include "qt_test_registry.h"
#include "attn/glimpse/gaussian.h"
#include "attn/glimpse/settings.h"
#include "attn/glimpse/stn.h"
#include "attn/vision/image.h"

#include <QFile>
#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include "cli_run.h"

#include <algorithm>
#include <cmath>

using namespace Qt::StringLiterals;

namespace test_glimpse_cli {

namespace {

QString dataFile(const char* name) { return QStringLiteral(ATTN_TEST_DATA_DIR "/images/") + QLatin1String(name); }

std::uint8_t toByte(float v) { return static_cast<std::uint8_t>(std::clamp(v, 0.0f, 1.0f) * 255.0f + 0.5f); }

// Every K x K block of `image` is one pixel of `glimpse`, rounded to 8 bits.
bool showsGlimpse(const QImage& image, const attn::Image& glimpse, int k, QString& why) {
  if (image.width() != glimpse.width * k || image.height() != glimpse.height * k) {
    why = u"size %1 x %2"_s.arg(image.width()).arg(image.height());
    return false;
  }
  for (int y = 0; y < image.height(); ++y) {
    for (int x = 0; x < image.width(); ++x) {
      const QRgb p = image.pixel(x, y);
      const int want[3] = {toByte(glimpse.at(0, y / k, x / k)), toByte(glimpse.at(1, y / k, x / k)),
                           toByte(glimpse.at(2, y / k, x / k))};
      if (qRed(p) != want[0] || qGreen(p) != want[1] || qBlue(p) != want[2]) {
        why = u"pixel (%1, %2) is %3,%4,%5; expected %6,%7,%8"_s.arg(x)
                  .arg(y)
                  .arg(qRed(p))
                  .arg(qGreen(p))
                  .arg(qBlue(p))
                  .arg(want[0])
                  .arg(want[1])
                  .arg(want[2]);
        return false;
      }
    }
  }
  return true;
}

}  // namespace

class TestGlimpseCli : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;

 private slots:
  void gaussianGlimpseIsWrittenMagnifiedWithTheEnginesPixels() {
    const QString png = dir_.filePath(u"gaussian.png"_s);
    const QString json = dir_.filePath(u"gaussian.json"_s);
    const QString spec = u"cx=40,cy=20.5,d=2,s=1.5,N=12"_s;
    const Run run = runCli({u"glimpse"_s, u"--image"_s, dataFile("pattern-64x48.png"), u"--gaussian"_s, spec,
                            u"--out"_s, png, u"--json"_s, json});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QVERIFY2(run.out.startsWith(u"glimpse: Gaussian 12 x 12"_s), qPrintable(run.out));
    QVERIFY(run.out.contains(u"wrote "_s + png));
    QVERIFY(run.out.contains(u"wrote "_s + json));

    const auto photo = attn::load_image(QFile::encodeName(dataFile("pattern-64x48.png")).toStdString());
    QVERIFY(photo);
    const auto glimpse = attn::glimpse::parse_gaussian_spec(spec.toStdString(), 64, 48);
    QVERIFY(glimpse);
    const attn::Image expected = attn::glimpse::read(*photo, *glimpse);
    QImage image;
    QVERIFY(image.load(png));
    QCOMPARE(image.size(), QSize(264, 264));  // 12 px x 22: the smallest factor reaching 256
    QString why;
    QVERIFY2(showsGlimpse(image, expected, 22, why), qPrintable(why));

    QFile file(json);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray text = file.readAll();
    const auto settings = attn::glimpse::glimpse_settings_from_json(text.toStdString(), "gaussian.json");
    QVERIFY2(settings, settings ? "" : settings.error().message().c_str());
    QVERIFY(settings->gaussian == *glimpse);
    QVERIFY(text.contains("\"width\": 64"));
    QVERIFY(text.contains("pattern-64x48.png"));
  }

  void stnGlimpseHonoursSizeAndScale() {
    const QString png = dir_.filePath(u"stn.png"_s);
    const QString spec = u"family=similarity,scale=0.5,rotation=30deg,tx=0.1,w=32,h=24"_s;
    const Run run = runCli({u"glimpse"_s, u"--image"_s, dataFile("pattern-64x48.png"), u"--stn"_s, spec, u"--scale"_s,
                            u"3"_s, u"--out"_s, png});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QVERIFY2(run.out.startsWith(u"glimpse: STN similarity 32 x 24"_s), qPrintable(run.out));
    const auto photo = attn::load_image(QFile::encodeName(dataFile("pattern-64x48.png")).toStdString());
    QVERIFY(photo);
    const auto settings = attn::glimpse::parse_stn_spec(spec.toStdString());
    QVERIFY(settings);
    const attn::Image expected = attn::glimpse::stn_glimpse(*photo, settings->theta(64, 48), 32, 24, settings->sampler);
    QImage image;
    QVERIFY(image.load(png));
    QCOMPARE(image.size(), QSize(96, 72));
    QString why;
    QVERIFY2(showsGlimpse(image, expected, 3, why), qPrintable(why));
  }

  void defaultsFillTheSpec() {
    const QString png = dir_.filePath(u"default.png"_s);
    Run run = runCli({u"glimpse"_s, u"--image"_s, dataFile("rgb-3x2.bmp"), u"--stn"_s, QString(), u"--out"_s, png});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QImage image;
    QVERIFY(image.load(png));
    QCOMPARE(image.size(), QSize(256, 256));  // 64 x 64 by 4

    run =
        runCli({u"glimpse"_s, u"--image"_s, dataFile("pattern-64x48.png"), u"--gaussian"_s, u"N=5"_s, u"--out"_s, png});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QVERIFY(image.load(png));
    QCOMPARE(image.size(), QSize(260, 260));  // 5 x 5 by 52
    QVERIFY2(run.out.contains(u"centre (31.5, 23.5)"_s), qPrintable(run.out));
  }

  void badImagesFailWithFileAndReason_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("reason");
    QTest::newRow("empty") << dataFile("empty.png") << u"byte 0: empty file (0 bytes)"_s;
    QTest::newRow("text") << dataFile("text.png") << u"not an image: starts with bytes 68 65 6c 6c (\"hell\")"_s;
    QTest::newRow("huge header")
        << dataFile("huge-header.png")
        << u"byte 16: image is 30000 x 30000 pixels; the limit is 16384 per side and 100000000 pixels"_s;
    QTest::newRow("truncated png") << dataFile("truncated.png")
                                   << u"truncated PNG: no IEND chunk (file ends at byte 3168)"_s;
    QTest::newRow("truncated jpeg") << dataFile("truncated.jpg")
                                    << u"truncated JPEG: no end-of-image marker (file ends at byte 400)"_s;
    QTest::newRow("truncated bmp") << dataFile("truncated.bmp")
                                   << u"truncated BMP: the pixel data needs 78 bytes, the file has 71"_s;
    QTest::newRow("missing") << dir_.filePath(u"no-such-photo.png"_s) << u"no such file"_s;
    QTest::newRow("directory") << dir_.path() << u"is a directory"_s;
  }
  void badImagesFailWithFileAndReason() {
    QFETCH(QString, file);
    QFETCH(QString, reason);
    const QString out = dir_.filePath(u"never.png"_s);
    for (const QString& kind : {u"--gaussian"_s, u"--stn"_s}) {
      const Run run = runCli({u"glimpse"_s, u"--image"_s, file, kind, QString(), u"--out"_s, out});
      QCOMPARE(run.exitCode, 1);
      QVERIFY2(run.err.contains(file + u": "_s), qPrintable(run.err));
      QVERIFY2(run.err.contains(reason), qPrintable(run.err));
      QVERIFY(!QFile::exists(out));
    }
  }

  void badSpecsAndUsage_data() {
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("message");
    const QString image = dataFile("pattern-64x48.png");
    const QString out = dir_.filePath(u"never.png"_s);
    QTest::newRow("unknown gaussian key")
        << QStringList{u"glimpse"_s, u"--image"_s, image, u"--gaussian"_s, u"d=3,foo=1"_s, u"--out"_s, out} << 1
        << u"--gaussian: byte 4: unknown key \"foo\""_s;
    QTest::newRow("not a number") << QStringList{u"glimpse"_s, u"--image"_s, image, u"--gaussian"_s,
                                                 u"s=wide"_s,  u"--out"_s,   out}
                                  << 1 << u"--gaussian: byte 2: \"s\" needs a number, got \"wide\""_s;
    QTest::newRow("wrong family")
        << QStringList{u"glimpse"_s, u"--image"_s, image, u"--stn"_s, u"rotation=1"_s, u"--out"_s, out} << 1
        << u"--stn: byte 0: \"rotation\" is not a parameter of the no-shear family (set family=similarity)"_s;
    QTest::newRow("no image") << QStringList{u"glimpse"_s, u"--gaussian"_s, u"N=4"_s, u"--out"_s, out} << 2
                              << u"--image"_s;
    QTest::newRow("no glimpse") << QStringList{u"glimpse"_s, u"--image"_s, image, u"--out"_s, out} << 2
                                << u"--gaussian SPEC or --stn SPEC"_s;
    QTest::newRow("both glimpses") << QStringList{u"glimpse"_s,    u"--image"_s, image,
                                                  u"--gaussian"_s, QString(),    u"--stn"_s,
                                                  QString(),       u"--out"_s,   out}
                                   << 2 << u"not both"_s;
    QTest::newRow("no output") << QStringList{u"glimpse"_s, u"--image"_s, image, u"--stn"_s, QString()} << 2
                               << u"--out"_s;
    QTest::newRow("bad extension")
        << QStringList{u"glimpse"_s, u"--image"_s, image, u"--stn"_s, QString(), u"--out"_s, dir_.filePath(u"g.gif"_s)}
        << 2 << u".png"_s;
    QTest::newRow("scale zero") << QStringList{u"glimpse"_s, u"--image"_s, image,      u"--stn"_s, QString(),
                                               u"--scale"_s, u"0"_s,       u"--out"_s, out}
                                << 2 << u"--scale"_s;
    QTest::newRow("scale not a number") << QStringList{u"glimpse"_s, u"--image"_s, image,      u"--stn"_s, QString(),
                                                       u"--scale"_s, u"big"_s,     u"--out"_s, out}
                                        << 2 << u"--scale"_s;
    QTest::newRow("scale too large") << QStringList{u"glimpse"_s, u"--image"_s, image,      u"--stn"_s, u"w=4096"_s,
                                                    u"--scale"_s, u"5"_s,       u"--out"_s, out}
                                     << 2 << u"16384"_s;
    QTest::newRow("lab option") << QStringList{u"glimpse"_s, u"--mechanism"_s, u"additive"_s} << 2 << u"mechanism"_s;
  }
  void badSpecsAndUsage() {
    QFETCH(QStringList, arguments);
    QFETCH(int, exitCode);
    QFETCH(QString, message);
    const Run run = runCli(arguments);
    QCOMPARE(run.exitCode, exitCode);
    QVERIFY2(run.err.contains(message), qPrintable(run.err));
    QVERIFY(!QFile::exists(dir_.filePath(u"never.png"_s)));
  }

  void unwritableOutputFails() {
    const QString out = dir_.filePath(u"missing-dir/g.png"_s);
    const Run run =
        runCli({u"glimpse"_s, u"--image"_s, dataFile("pattern-64x48.png"), u"--stn"_s, QString(), u"--out"_s, out});
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(run.err.contains(out + u": cannot write the file"_s), qPrintable(run.err));
  }

  void help() {
    const Run top = runCli({u"--help"_s});
    QCOMPARE(top.exitCode, 0);
    QVERIFY(top.out.contains(u"glimpse"_s));
    const Run help = runCli({u"glimpse"_s, u"--help"_s});
    QCOMPARE(help.exitCode, 0);
    for (const char* option : {"--image", "--gaussian", "--stn", "--out", "--json", "--scale", "logdelta~", "30deg"}) {
      QVERIFY2(help.out.contains(QLatin1String(option)), option);
    }
  }
};

ATTN_QT_TEST(TestGlimpseCli, Core);

}  // namespace test_glimpse_cli
#include "test_glimpse_cli.moc"
