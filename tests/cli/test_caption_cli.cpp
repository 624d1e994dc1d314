// attnscope-cli caption as a user runs it, with the bundled captioners (the random parity fixtures of
// tests/data/captioner stand in when the build bundles none): the grid of a generated scene as PNG, SVG and
// PDF, --per-row and the hard model, a bundled photo, and bad inputs that exit with a one-line reason (a
// corrupt image names the file, an unknown model lists the bundled captioners).
#include "qt_test_registry.h"
#include <QFile>
#include <QImage>
#include <QTemporaryDir>
#include <QTest>

#include "cli_run.h"

using namespace Qt::StringLiterals;

namespace test_caption_cli {

namespace {

QString dataImage(const char* name) { return QStringLiteral(ATTN_TEST_DATA_DIR "/images/") + QLatin1String(name); }
QString fixture(const char* name) { return QStringLiteral(ATTN_TEST_DATA_DIR "/captioner/") + QLatin1String(name); }

}  // namespace

class TestCaptionCli : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  bool bundled_ = false;
  QString soft_;  // --model for the soft and the hard captioner
  QString hard_;

 private slots:
  void initTestCase() {
    const Run list = runCli({u"caption"_s, u"--list"_s});
    QCOMPARE(list.exitCode, 0);
    bundled_ = list.out.contains(u"caption-soft"_s) && list.out.contains(u"caption-hard"_s);
    soft_ = bundled_ ? u"caption-soft"_s : fixture("random-soft");
    hard_ = bundled_ ? u"caption-hard"_s : fixture("random-hard");
  }

  void writesTheGridOfAScene() {
    const QString png = dir_.filePath(u"grid.png"_s);
    const Run run =
        runCli({u"caption"_s, u"--model"_s, soft_, u"--scene"_s, u"7"_s, u"--per-row"_s, u"4"_s, u"--out"_s, png});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QVERIFY2(run.out.startsWith(u"caption: "_s), qPrintable(run.out));
    QVERIFY(run.out.contains(u"scene 7 \u2192 \u201c"_s));
    if (bundled_) {
      // The trained model, by default: it speaks the scenes' grammar.
      const Run byDefault = runCli({u"caption"_s, u"--scene"_s, u"7"_s, u"--out"_s, png});
      QVERIFY2(byDefault.out.startsWith(u"caption: Scenes \u00b7 soft attention"_s), qPrintable(byDefault.out));
      QVERIFY(byDefault.out.contains(u"scene 7 \u2192 \u201ca "_s));
    }
    QVERIFY(run.out.contains(u"hypothesis 0: "_s));
    QVERIFY(run.out.contains(u"the scene's own caption: \u201ca "_s));
    QVERIFY(run.out.contains(u"wrote "_s + png));
    const QImage grid(png);
    QVERIFY(!grid.isNull());
    QVERIFY(grid.width() > 4 * 224);  // four pictures a row: the image and at least three words
    // Two a row: narrower and taller.
    const QString narrow = dir_.filePath(u"narrow.png"_s);
    const Run two = runCli({u"caption"_s, u"--model"_s, soft_, u"--scene"_s, u"7"_s, u"--per-row"_s, u"2"_s,
                            u"--sigma"_s, u"0"_s, u"--light-mask"_s, u"--out"_s, narrow});
    QVERIFY2(two.exitCode == 0, qPrintable(two.err));
    const QImage tall(narrow);
    QVERIFY(tall.width() < grid.width());
    QVERIFY(tall.height() > grid.height());
  }

  void svgPdfTheHardModelAndBeams() {
    const QString svg = dir_.filePath(u"grid.svg"_s);
    const Run run = runCli({u"caption"_s, u"--model"_s, soft_, u"--scene"_s, u"10000003"_s, u"--beam"_s, u"3"_s,
                            u"--hypothesis"_s, u"2"_s, u"--out"_s, svg});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QVERIFY(run.out.contains(u"beam 3"_s));
    QVERIFY(run.out.contains(u"hypothesis 2: "_s));
    QFile file(svg);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray bytes = file.readAll();
    QVERIFY(bytes.contains("<svg"));
    QVERIFY(bytes.contains("<image"));
    const QString pdf = dir_.filePath(u"grid.pdf"_s);
    const Run hard = runCli({u"caption"_s, u"--model"_s, hard_, u"--scene"_s, u"7"_s, u"--out"_s, pdf});
    QVERIFY2(hard.exitCode == 0, qPrintable(hard.err));
    QVERIFY2(hard.out.contains(bundled_ ? u"hard attention"_s : u"random-hard"_s), qPrintable(hard.out));
    QFile pdfFile(pdf);
    QVERIFY(pdfFile.open(QIODevice::ReadOnly));
    QCOMPARE(pdfFile.read(5), QByteArray("%PDF-"));
  }

  void aBundledPhotoIsCaptionedInShapes() {
    const QString png = dir_.filePath(u"photo.png"_s);
    const Run run = runCli({u"caption"_s, u"--model"_s, soft_, u"--image"_s, u"sample:chelsea"_s, u"--out"_s, png});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QVERIFY(run.out.contains(u"chelsea.png"_s));
    QVERIFY(run.out.contains(u"451 \u00d7 300 image"_s));
    QVERIFY(run.out.contains(u"caption of shapes"_s));
    QVERIFY(!QImage(png).isNull());
  }

  void badInputsExitWithTheReason_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("expected");
    const QString out = dir_.filePath(u"never.png"_s);
    QTest::newRow("corrupt image") << QStringList{u"caption"_s, u"--image"_s, dataImage("truncated.png"), u"--out"_s,
                                                  out}
                                   << 1 << u"truncated.png"_s;
    QTest::newRow("not an image") << QStringList{u"caption"_s, u"--image"_s, dataImage("text.png"), u"--out"_s, out}
                                  << 1 << u"text.png"_s;
    QTest::newRow("huge image") << QStringList{u"caption"_s, u"--image"_s, dataImage("huge-header.png"), u"--out"_s,
                                               out}
                                << 1 << u"huge-header.png"_s;
    QTest::newRow("missing image") << QStringList{u"caption"_s, u"--image"_s, dir_.filePath(u"none.png"_s), u"--out"_s,
                                                  out}
                                   << 1 << u"none.png"_s;
    QTest::newRow("unknown model") << QStringList{u"caption"_s, u"--model"_s, u"caption-sfot"_s, u"--scene"_s, u"1"_s,
                                                  u"--out"_s,   out}
                                   << 1 << u"caption-sfot: no such bundled model or folder"_s;
    QTest::newRow("a date model")
        << QStringList{u"caption"_s, u"--model"_s, QStringLiteral(ATTN_TEST_DATA_DIR "/seq2seq/random-bahdanau"),
                       u"--scene"_s, u"1"_s,       u"--out"_s,
                       out}
        << 1 << u"AttnScopeCaptioner"_s;
    QTest::newRow("no input") << QStringList{u"caption"_s, u"--out"_s, out} << 2 << u"--image FILE or --scene SEED"_s;
    QTest::newRow("both inputs") << QStringList{u"caption"_s, u"--image"_s, dataImage("rgb-3x2.png"),
                                                u"--scene"_s, u"1"_s,       u"--out"_s,
                                                out}
                                 << 2 << u"not both"_s;
    QTest::newRow("no output") << QStringList{u"caption"_s, u"--scene"_s, u"1"_s} << 2 << u"--out FILE"_s;
    QTest::newRow("bad format") << QStringList{u"caption"_s, u"--scene"_s, u"1"_s, u"--out"_s,
                                               dir_.filePath(u"g.csv"_s)}
                                << 2 << u".png, .svg or .pdf"_s;
    QTest::newRow("bad seed") << QStringList{u"caption"_s, u"--scene"_s, u"seven"_s, u"--out"_s, out} << 2
                              << u"--scene"_s;
    QTest::newRow("beam too wide") << QStringList{u"caption"_s, u"--scene"_s, u"1"_s, u"--beam"_s,
                                                  u"40"_s,      u"--out"_s,   out}
                                   << 2 << u"--beam"_s;
    QTest::newRow("negative sigma") << QStringList{u"caption"_s, u"--scene"_s, u"1"_s, u"--sigma"_s,
                                                   u"-1"_s,      u"--out"_s,   out}
                                    << 2 << u"--sigma"_s;
    QTest::newRow("per row 0") << QStringList{u"caption"_s, u"--scene"_s, u"1"_s, u"--per-row"_s,
                                              u"0"_s,       u"--out"_s,   out}
                               << 2 << u"--per-row"_s;
    QTest::newRow("bad opacity") << QStringList{u"caption"_s, u"--scene"_s, u"1"_s, u"--opacity"_s,
                                                u"2"_s,       u"--out"_s,   out}
                                 << 2 << u"--opacity"_s;
    QTest::newRow("hypothesis beyond") << QStringList{u"caption"_s, u"--scene"_s, u"1"_s, u"--hypothesis"_s,
                                                      u"3"_s,       u"--out"_s,   out}
                                       << 1 << u"--hypothesis 3"_s;
  }
  void badInputsExitWithTheReason() {
    QFETCH(QStringList, args);
    QFETCH(int, code);
    QFETCH(QString, expected);
    if (!bundled_ && !args.contains(u"--model"_s)) args << u"--model"_s << soft_;
    const Run run = runCli(args);
    QCOMPARE(run.exitCode, code);
    QVERIFY2(run.err.contains(expected), qPrintable(run.err));
    if (code == 1) QCOMPARE(run.err.trimmed().count(u'\n'), 0);  // one line
    QVERIFY(!QFile::exists(dir_.filePath(u"never.png"_s)));
  }

  void theUnknownModelErrorListsTheCaptioners() {
    if (!bundled_) QSKIP("this build bundles no captioners");
    const Run run = runCli({u"caption"_s, u"--model"_s, u"date-bahdanau"_s, u"--scene"_s, u"1"_s, u"--out"_s,
                            dir_.filePath(u"never.png"_s)});
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(run.err.contains(u"caption-soft"_s), qPrintable(run.err));
    QVERIFY(!run.err.contains(u"date-luong"_s));  // the date models are the Alignment tab's
  }
};

ATTN_QT_TEST(TestCaptionCli, Gui);

}  // namespace test_caption_cli
#include "test_caption_cli.moc"
