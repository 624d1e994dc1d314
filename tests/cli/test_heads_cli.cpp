// attnscope-cli heads as a user runs it: the CSV's header and one row per head (a detector not asked leaves its
// columns empty), the bundled induction-gpt2's copying heads at offset +2 in it, the picture, and the usage errors
// (exit 2): an unknown detector, a ViT, a model without a tokenizer, a sequence longer than the model's positions.
#include "qt_test_registry.h"
#include <QDir>
#include <QFile>
#include <QImage>
#include <QTemporaryDir>
#include <QTest>

#include "cli_run.h"

using namespace Qt::StringLiterals;

namespace test_heads_cli {

namespace {

QString model(const char* name) { return QStringLiteral(ATTN_TEST_DATA_DIR "/transformers/") + QLatin1String(name); }
QString inductionModel() { return QStringLiteral(ATTN_SOURCE_DIR "/resources/models/induction-gpt2"); }

QStringList readLines(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  const QString text = QString::fromUtf8(file.readAll());
  if (!text.endsWith(u"\r\n"_s)) return {};  // RFC 4180: every line ends in CRLF
  return text.split(u"\r\n"_s, Qt::SkipEmptyParts);
}

const QString kHeader = u"layer,head,previous_token,duplicate_token,induction,induction_offset,sink"_s;

}  // namespace

class TestHeadsCli : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;

 private slots:
  void inductionModelsCsvAndPicture() {
    const QString csv = dir_.filePath(u"heads.csv"_s), png = dir_.filePath(u"heads.png"_s);
    const Run run = runCli({u"heads"_s, u"--model"_s, inductionModel(), u"--detect"_s,
                            u"previous-token,duplicate-token,induction,sink"_s, u"--csv"_s, csv, u"--out"_s, png});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QVERIFY(run.out.contains(u"wrote "_s + csv));
    QVERIFY2(run.out.contains(u"induction: strongest layer 1 head 1"_s), qPrintable(run.out));
    const QStringList lines = readLines(csv);
    QCOMPARE(lines.size(), 1 + 2 * 4);
    QCOMPARE(lines.front(), kHeader);
    for (int i = 1; i < lines.size(); ++i) {
      const QStringList cells = lines[i].split(u',');
      QCOMPARE(cells.size(), 7);
      QCOMPARE(cells[0].toInt(), (i - 1) / 4);  // layer-major
      QCOMPARE(cells[1].toInt(), (i - 1) % 4);
      for (int c : {2, 3, 4, 6}) {
        bool ok = false;
        const double v = cells[c].toDouble(&ok);
        QVERIFY2(ok && v >= 0.0 && v <= 1.0, qPrintable(lines[i]));
      }
      // The card's copying heads (layer 1 heads 1-3) read offset +2, above 0.5 (test_head_detectors.cpp checks the
      // figures against the card's).
      if (i >= 6) {
        QCOMPARE(cells[5], u"2"_s);
        QVERIFY2(cells[4].toDouble() > 0.5, qPrintable(lines[i]));
      }
    }
    const QImage image(png);
    QVERIFY(!image.isNull());
    QVERIFY2(image.width() > 4 * 300 && image.height() > 200,
             qPrintable(u"%1 x %2"_s.arg(image.width()).arg(image.height())));
  }

  void detectorsNotAskedLeaveTheirColumnsEmpty() {
    const QString csv = dir_.filePath(u"sink.csv"_s);
    const Run run = runCli(
        {u"heads"_s, u"--model"_s, model("gpt2"), u"--detect"_s, u"sink"_s, u"--length"_s, u"10"_s, u"--csv"_s, csv});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    const QStringList lines = readLines(csv);
    QCOMPARE(lines.size(), 1 + 2 * 4);
    QCOMPARE(lines.front(), kHeader);
    for (int i = 1; i < lines.size(); ++i) {
      const QStringList cells = lines[i].split(u',');
      QCOMPARE(cells.size(), 7);
      for (int c : {2, 3, 4, 5}) QVERIFY2(cells[c].isEmpty(), qPrintable(lines[i]));
      QVERIFY2(!cells[6].isEmpty(), qPrintable(lines[i]));
    }
  }

  void badInputExitsTwoNamingIt_data() {
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QStringList>("said");
    const QString csv = dir_.filePath(u"bad.csv"_s);
    QTest::newRow("unknown detector") << QStringList{u"--model"_s,           model("gpt2"), u"--detect"_s,
                                                     u"induction,copying"_s, u"--csv"_s,    csv}
                                      << QStringList{u"--detect"_s,        u"'copying'"_s, u"previous-token"_s,
                                                     u"duplicate-token"_s, u"induction"_s, u"sink"_s};
    QTest::newRow("vit") << QStringList{u"--model"_s, model("vit"), u"--detect"_s, u"induction"_s, u"--csv"_s, csv}
                         << QStringList{model("vit"), u"ViT"_s};
    QTest::newRow("too long") << QStringList{u"--model"_s,   model("gpt2"), u"--detect"_s,
                                             u"induction"_s, u"--csv"_s,    csv}
                              << QStringList{u"41 tokens"_s, u"32 positions"_s, u"at most 15"_s};
    QTest::newRow("offset") << QStringList{u"--model"_s,      model("gpt2"),
                                           u"--detect"_s,     u"induction"_s,
                                           u"--length"_s,     u"10"_s,
                                           u"--max-offset"_s, u"10"_s,
                                           u"--csv"_s,        csv}
                            << QStringList{u"offset K = 10"_s, u"1 to R-1 = 9"_s};
    QTest::newRow("no file") << QStringList{u"--model"_s, model("gpt2"), u"--detect"_s, u"induction"_s}
                             << QStringList{u"--csv"_s};
    QTest::newRow("picture format") << QStringList{u"--model"_s,  model("gpt2"),
                                                   u"--detect"_s, u"sink"_s,
                                                   u"--length"_s, u"10"_s,
                                                   u"--csv"_s,    csv,
                                                   u"--out"_s,    dir_.filePath(u"h.jpg"_s)}
                                    << QStringList{u"--out"_s, u"h.jpg"_s, u".png"_s};
    QTest::newRow("length not a number") << QStringList{u"--model"_s,  model("gpt2"), u"--detect"_s, u"sink"_s,
                                                        u"--length"_s, u"many"_s,     u"--csv"_s,    csv}
                                         << QStringList{u"--length"_s, u"'many'"_s};
  }
  void badInputExitsTwoNamingIt() {
    QFETCH(QStringList, arguments);
    QFETCH(QStringList, said);
    const Run run = runCli(QStringList{u"heads"_s} + arguments);
    QCOMPARE(run.exitCode, 2);
    for (const auto& part : said) QVERIFY2(run.err.contains(part), qPrintable(part + u" not in: "_s + run.err));
    QVERIFY(!QFile::exists(dir_.filePath(u"bad.csv"_s)));
  }

  // A model folder without tokenizer files: the detectors have nothing to draw S from.
  void modelWithoutTokenizerExitsTwo() {
    const QString folder = dir_.filePath(u"bare"_s);
    QVERIFY(QDir().mkpath(folder));
    for (const char* file : {"config.json", "model.safetensors"}) {
      QVERIFY(QFile::copy(model("gpt2") + u'/' + QLatin1String(file), folder + u'/' + QLatin1String(file)));
    }
    const Run run = runCli({u"heads"_s, u"--model"_s, folder, u"--detect"_s, u"induction"_s, u"--length"_s, u"10"_s,
                            u"--csv"_s, dir_.filePath(u"bare.csv"_s)});
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.contains(folder) && run.err.contains(u"tokenizer"_s), qPrintable(run.err));
  }
};

ATTN_QT_TEST(TestHeadsCli, Gui);

}  // namespace test_heads_cli
#include "test_heads_cli.moc"
