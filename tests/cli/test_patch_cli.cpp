// attnscope-cli patch and run --ablate as a user runs them (issue 43), on the bundled induction-gpt2: its copying
// heads recover the answer when patched from a clean run (the CSV's header, one row per layer or layer.head, the
// values the recovery), patching the residual stream at the one corrupted position before layer 0 recovers it exactly,
// the heatmap; ablating the copying heads moves the prediction, and a dump then carries the ablated run's logits; the
// usage errors (exit 2) name the option and the value.
#include "qt_test_registry.h"
#include <QDir>
#include <QFile>
#include <QImage>
#include <QTemporaryDir>
#include <QTest>

#include "attn/io/attention_dump.h"
#include "cli_run.h"

using namespace Qt::StringLiterals;

namespace test_patch_cli {

namespace {

QString inductionModel() { return QStringLiteral(ATTN_SOURCE_DIR "/resources/models/induction-gpt2"); }
QString model(const char* name) { return QStringLiteral(ATTN_TEST_DATA_DIR "/transformers/") + QLatin1String(name); }

// 12 letters, then the first 8 again: the model copies the 9th next ("i"); the corrupted input has "x" there.
const QString kClean = u"abcdefghijklabcdefgh"_s;
const QString kCorrupt = u"abcdefghxjklabcdefgh"_s;

// RFC 4180 rows, each split into cells.
QList<QStringList> readCsv(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  const QString text = QString::fromUtf8(file.readAll());
  if (!text.endsWith(u"\r\n"_s)) return {};
  QList<QStringList> rows;
  for (const QString& line : text.split(u"\r\n"_s, Qt::SkipEmptyParts)) rows.append(line.split(u','));
  return rows;
}

QStringList patchArgs(const QString& over, const QString& csv) {
  return {u"patch"_s, u"--model"_s, inductionModel(), u"--clean"_s, kClean, u"--corrupt"_s, kCorrupt, u"--answer"_s,
          u"i"_s,     u"--wrong"_s, u"x"_s,           u"--over"_s,  over,   u"--csv"_s,     csv};
}

}  // namespace

class TestPatchCli : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;

 private slots:
  void headsSweepFindsTheCopyingHeads() {
    const QString csv = dir_.filePath(u"heads.csv"_s), png = dir_.filePath(u"heads.png"_s);
    const Run run = runCli(patchArgs(u"heads"_s, csv) << u"--out"_s << png);
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QVERIFY2(run.out.contains(u"heads (8 cells) \u00b7 logit-diff clean"_s), qPrintable(run.out));
    const auto rows = readCsv(csv);
    QCOMPARE(rows.size(), 3);
    QCOMPARE(rows[0], (QStringList{u"layer"_s, u"0"_s, u"1"_s, u"2"_s, u"3"_s}));
    QCOMPARE(rows[1][0], u"0"_s);
    QCOMPARE(rows[2][0], u"1"_s);
    // Layer 1 head 1 (the card's strongest +2 copying head) recovers most of the logit difference; layer 0's
    // previous-token heads 1 and 3 feed it.
    QVERIFY2(rows[2][2].toDouble() > 0.5, qPrintable(rows[2].join(u',')));
    QVERIFY2(rows[1][2].toDouble() > 0.3 && rows[1][4].toDouble() > 0.3, qPrintable(rows[1].join(u',')));
    QVERIFY2(std::abs(rows[1][1].toDouble()) < 0.05, qPrintable(rows[1].join(u',')));
    QImage image(png);
    QVERIFY(!image.isNull());
    QCOMPARE(image.size(), QSize(900, 700));
  }

  void residualSweepRecoversAtTheCorruptedPosition() {
    const QString csv = dir_.filePath(u"resid.csv"_s);
    const Run run = runCli(patchArgs(u"layers-positions"_s, csv));
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    const auto rows = readCsv(csv);
    QCOMPARE(rows.size(), 3);
    QCOMPARE(rows[0].size(), 1 + 20);
    QCOMPARE(rows[0][9], u"x"_s);  // the header: the corrupted run's tokens
    // Before layer 0 the two runs differ at position 8 only: patching it there makes the clean run, exactly.
    for (int p = 0; p < 20; ++p) QCOMPARE(rows[1][1 + p].toDouble(), p == 8 ? 1.0 : 0.0);
  }

  void headsPositionsRowsAreLayerDotHead() {
    const QString csv = dir_.filePath(u"hp.csv"_s);
    const Run run = runCli(patchArgs(u"heads-positions"_s, csv) << u"--metric"_s << u"logprob"_s);
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    const auto rows = readCsv(csv);
    QCOMPARE(rows.size(), 1 + 2 * 4);
    QCOMPARE(rows[1][0], u"0.0"_s);
    QCOMPARE(rows[8][0], u"1.3"_s);
    QCOMPARE(rows[8].size(), 21);
  }

  void ablationMovesThePredictionAndTheDumpHasItsLogits() {
    const QString plain = dir_.filePath(u"plain.attn.safetensors"_s),
                  ablated = dir_.filePath(u"abl.attn.safetensors"_s);
    const Run before = runCli({u"run"_s, u"--model"_s, inductionModel(), u"--text"_s, kClean, u"--dump"_s, plain});
    QVERIFY2(before.exitCode == 0, qPrintable(before.err));
    const Run run = runCli({u"run"_s, u"--model"_s, inductionModel(), u"--text"_s, kClean, u"--ablate"_s,
                            u"1.1,1.2,1.3"_s, u"--dump"_s, ablated});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QVERIFY2(run.out.contains(u"ablated heads 1.1,1.2,1.3"_s), qPrintable(run.out));
    QVERIFY2(run.out.contains(u"without the ablation, prediction at 19: i (0.5"_s), qPrintable(run.out));
    QVERIFY2(!run.out.contains(u"prediction at 19: i ("_s + u"0.5"_s + u")"_s), qPrintable(run.out));
    const auto a = attn::io::read_attention_dump(plain.toStdString());
    const auto b = attn::io::read_attention_dump(ablated.toStdString());
    QVERIFY(a && b);
    QCOMPARE(a->logits.rows(), attn::Index(20));
    QCOMPARE(b->logits.rows(), attn::Index(20));
    QCOMPARE(a->logits.cols(), b->logits.cols());
    // Layer 1's heads change only what comes after them: every row's logits move.
    QVERIFY((a->logits.row(19) - b->logits.row(19)).cwiseAbs().maxCoeff() > 0.5f);
    // The maps of layer 0, before the ablated heads, are the same.
    QVERIFY(a->trace.layers[0].maps.f32(0)[0] == b->trace.layers[0].maps.f32(0)[0]);
  }

  void usageErrorsExitTwo() {
    const QString csv = dir_.filePath(u"x.csv"_s);
    const struct {
      QStringList args;
      QString says;
    } cases[] = {
        {{u"run"_s, u"--model"_s, inductionModel(), u"--text"_s, kClean, u"--ablate"_s, u"2.0"_s},
         u"--ablate: layer 2 of \"2.0\" is outside 0..1"_s},
        {{u"run"_s, u"--model"_s, inductionModel(), u"--text"_s, kClean, u"--ablate"_s, u"1.9"_s},
         u"--ablate: head 9 of \"1.9\" is outside 0..3"_s},
        {{u"run"_s, u"--model"_s, inductionModel(), u"--text"_s, kClean, u"--ablate"_s, u"1.1"_s, u"--ablate-mode"_s,
          u"half"_s},
         u"--ablate-mode: expected zero or mean, got 'half'"_s},
        {{u"patch"_s, u"--model"_s, inductionModel(), u"--clean"_s, kClean, u"--corrupt"_s, u"abcdefghxjklabcdefg"_s,
          u"--answer"_s, u"i"_s, u"--wrong"_s, u"x"_s, u"--over"_s, u"heads"_s, u"--csv"_s, csv},
         u"--clean is 20 tokens and --corrupt 19"_s},
        {patchArgs(u"rows"_s, csv), u"--over: expected heads, layers-positions, heads-positions"_s},
        {patchArgs(u"heads"_s, csv) << u"--metric"_s << u"auc"_s, u"--metric: expected logit-diff"_s},
        {{u"patch"_s, u"--model"_s, inductionModel(), u"--clean"_s, kClean, u"--corrupt"_s, kCorrupt, u"--answer"_s,
          u"ij"_s, u"--wrong"_s, u"x"_s, u"--over"_s, u"heads"_s, u"--csv"_s, csv},
         u"--answer: \"ij\" is 2 tokens here (\"i\" + \"j\"), not one"_s},
        {{u"patch"_s, u"--model"_s, inductionModel(), u"--clean"_s, kClean, u"--corrupt"_s, kCorrupt, u"--answer"_s,
          u"i"_s, u"--over"_s, u"heads"_s, u"--csv"_s, csv},
         u"logit-diff needs --wrong"_s},
        {{u"patch"_s, u"--model"_s, model("bert_bare"), u"--clean"_s, u"a b"_s, u"--corrupt"_s, u"a c"_s, u"--answer"_s,
          u"a"_s, u"--wrong"_s, u"b"_s, u"--over"_s, u"heads"_s, u"--csv"_s, csv},
         u"the model has no output head"_s},
    };
    for (const auto& c : cases) {
      const Run run = runCli(c.args);
      QVERIFY2(run.exitCode == 2, qPrintable(c.args.join(u' ') + u": "_s + run.err));
      QVERIFY2(run.err.contains(c.says), qPrintable(run.err));
    }
  }
};

ATTN_QT_TEST(TestPatchCli, Core);

}  // namespace test_patch_cli
#include "test_patch_cli.moc"
