// attnscope-cli align as a user runs it, over the random fixture models of tests/data/seq2seq and
// tests/data/classifier (and the bundled models when the build has them): the heatmap and the CSV of a
// hypothesis, beam hypotheses, local-p's shading view, a classifier's word shading, an entailment model's pair
// (tests/data/entailment), and bad inputs that exit with the reason (an unknown model name lists the bundled ones).
#include "qt_test_registry.h"
#include <QDir>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include "cli_run.h"

#include <cmath>
#include <utility>

using namespace Qt::StringLiterals;

namespace test_align_cli {

namespace {

QString seq2seq(const char* variant) {
  return QStringLiteral(ATTN_TEST_DATA_DIR "/seq2seq/random-") + QLatin1String(variant);
}
QString classifier(const char* variant) {
  return QStringLiteral(ATTN_TEST_DATA_DIR "/classifier/random-") + QLatin1String(variant);
}

QList<QByteArray> csvLines(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  QList<QByteArray> lines = file.readAll().split('\n');
  while (!lines.isEmpty() && lines.back().trimmed().isEmpty()) lines.removeLast();
  return lines;
}

}  // namespace

class TestAlignCli : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;

 private slots:
  void writesTheHeatmapAndTheMatrix() {
    const QString png = dir_.filePath(u"a.png"_s);
    const QString csv = dir_.filePath(u"a.csv"_s);
    const Run run = runCli({u"align"_s, u"--model"_s, seq2seq("bahdanau"), u"--text"_s, u"21 Nov 2026"_s, u"--out"_s,
                            png, u"--csv"_s, csv});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QVERIFY2(run.out.startsWith(u"align: random-bahdanau"_s), qPrintable(run.out));
    QVERIFY(run.out.contains(u"11 characters"_s));
    QVERIFY(run.out.contains(u"hypothesis 0: "_s));
    QVERIFY(run.out.contains(u"wrote "_s + png));
    QVERIFY(run.out.contains(u"wrote "_s + csv));
    const QImage image(png);
    QCOMPARE(image.size(), QSize(900, 700));
    // Header of the 11 source characters, then one row per output step.
    const auto lines = csvLines(csv);
    QVERIFY(lines.size() >= 2);
    QCOMPARE(lines.front().count(','), 11);
    QVERIFY(lines.front().startsWith(",2,1,"));
    QVERIFY(lines.back().startsWith("</s>,") || lines.size() == 13);  // ends with </s> or at the length limit
  }

  void beamHypothesesAreListedAndOneIsDrawn() {
    const QString csv = dir_.filePath(u"beam.csv"_s);
    const Run run = runCli({u"align"_s, u"--model"_s, seq2seq("luong-concat"), u"--text"_s, u"21 Nov 2026"_s,
                            u"--beam"_s, u"5"_s, u"--hypothesis"_s, u"1"_s, u"--csv"_s, csv});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QVERIFY(run.out.contains(u"beam 5"_s));
    // Indices count from 0 everywhere: the best is hypothesis 0, the fifth hypothesis 4.
    QVERIFY2(run.out.contains(u"hypothesis 0: "_s) && run.out.contains(u"hypothesis 4: "_s), qPrintable(run.out));
    QVERIFY(!run.out.contains(u"hypothesis 5: "_s));
    QVERIFY(!csvLines(csv).isEmpty());
    const Run best = runCli({u"align"_s, u"--model"_s, seq2seq("luong-concat"), u"--text"_s, u"21 Nov 2026"_s,
                             u"--hypothesis"_s, u"0"_s, u"--step"_s, u"0"_s, u"--csv"_s, csv});
    QVERIFY2(best.exitCode == 0, qPrintable(best.err));
    // Beyond the hypotheses the search ended with: greedy search ends with hypothesis 0 alone.
    const Run beyond = runCli({u"align"_s, u"--model"_s, seq2seq("luong-concat"), u"--text"_s, u"21 Nov 2026"_s,
                               u"--hypothesis"_s, u"1"_s, u"--csv"_s, dir_.filePath(u"never.csv"_s)});
    QCOMPARE(beyond.exitCode, 1);
    QVERIFY2(beyond.err.contains(u"--hypothesis 1: the search ended with hypotheses 0 to 0"_s), qPrintable(beyond.err));
    QVERIFY(!QFile::exists(dir_.filePath(u"never.csv"_s)));
  }

  void localPShadingAndSvg() {
    const QString png = dir_.filePath(u"local.png"_s);
    const Run run = runCli({u"align"_s, u"--model"_s, seq2seq("luong-local-p"), u"--text"_s, u"Nov 21st 2026"_s,
                            u"--view"_s, u"shading"_s, u"--step"_s, u"1"_s, u"--out"_s, png, u"--width"_s, u"700"_s});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    const QImage image(png);
    QCOMPARE(image.width(), 700);
    QVERIFY(image.height() > 60);
    const QString svg = dir_.filePath(u"local.svg"_s);
    const Run heatmap = runCli({u"align"_s, u"--model"_s, seq2seq("luong-local-p"), u"--text"_s, u"Nov 21st 2026"_s,
                                u"--step"_s, u"0"_s, u"--out"_s, svg});
    QVERIFY2(heatmap.exitCode == 0, qPrintable(heatmap.err));
    QFile file(svg);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QVERIFY(file.readAll().contains("<svg"));
  }

  void convs2sWritesTheLayersMeanOrOneLayer() {
    // The fixture's greedy run of "21 Nov 2026" (tools/parity/make_seq2seq_fixtures.py, torch): its layers' rows.
    QFile file(seq2seq("convs2s") + u"/expected.json"_s);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QJsonObject greedy =
        QJsonDocument::fromJson(file.readAll())[u"runs"_s].toArray().first()[u"greedy"_s].toObject();
    const QJsonArray layers = greedy[u"layers"_s].toArray();
    QCOMPARE(layers.size(), 2);
    for (int layer : {-1, 0, 1}) {
      const QString csv = dir_.filePath(u"convs2s%1.csv"_s.arg(layer));
      QStringList args{u"align"_s, u"--model"_s, seq2seq("convs2s"), u"--text"_s, u"21 Nov 2026"_s, u"--csv"_s, csv};
      if (layer >= 0) args << u"--layer"_s << QString::number(layer);
      const Run run = runCli(args);
      QVERIFY2(run.exitCode == 0, qPrintable(run.err));
      QVERIFY2(run.out.contains(layer < 0 ? u"the mean of the 2 decoder layers' maps"_s
                                          : u"decoder layer %1 (0\u20131)"_s.arg(layer)),
               qPrintable(run.out));
      const auto lines = csvLines(csv);
      const QJsonArray rows = layer < 0 ? greedy[u"attention"_s].toArray() : layers[layer].toArray();
      QCOMPARE(lines.size(), rows.size() + 1);  // the header of source characters, then a row per step
      for (int t = 0; t < rows.size(); ++t) {
        const QList<QByteArray> cells = lines[t + 1].split(',');
        const QJsonArray want = rows[t].toArray();
        QCOMPARE(cells.size(), want.size() + 1);
        for (int j = 0; j < want.size(); ++j) {
          QVERIFY2(std::abs(cells[j + 1].toDouble() - want[j].toDouble()) < 1e-4,
                   qPrintable(u"layer %1, step %2, source %3"_s.arg(layer).arg(t).arg(j)));
        }
      }
    }
    const Run beyond = runCli({u"align"_s, u"--model"_s, seq2seq("convs2s"), u"--text"_s, u"21 Nov 2026"_s,
                               u"--layer"_s, u"2"_s, u"--csv"_s, dir_.filePath(u"never.csv"_s)});
    QCOMPARE(beyond.exitCode, 1);
    QVERIFY2(beyond.err.contains(u"--layer 2: random-convs2s has the decoder layers 0 to 1"_s), qPrintable(beyond.err));
    const Run recurrent = runCli({u"align"_s, u"--model"_s, seq2seq("bahdanau"), u"--text"_s, u"21 Nov 2026"_s,
                                  u"--layer"_s, u"0"_s, u"--csv"_s, dir_.filePath(u"never.csv"_s)});
    QCOMPARE(recurrent.exitCode, 2);
    QVERIFY2(recurrent.err.contains(u"random-bahdanau has one attention"_s), qPrintable(recurrent.err));
    const Run negative = runCli({u"align"_s, u"--model"_s, seq2seq("convs2s"), u"--text"_s, u"21 Nov 2026"_s,
                                 u"--layer"_s, u"-1"_s, u"--csv"_s, dir_.filePath(u"never.csv"_s)});
    QCOMPARE(negative.exitCode, 2);
    QVERIFY(!QFile::exists(dir_.filePath(u"never.csv"_s)));
  }

  void wordModelsReadWords() {
    const QString csv = dir_.filePath(u"words.csv"_s);
    const Run run = runCli({u"align"_s, u"--model"_s, seq2seq("words"), u"--text"_s,
                            u"Police in Leeds arrested a Zorblax after a robbery."_s, u"--csv"_s, csv});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QVERIFY2(run.out.startsWith(u"align: random-words \u00b7 9 words \u2192"_s), qPrintable(run.out));
    QVERIFY2(run.out.contains(u"not in the vocabulary (read as <unk>): \u201czorblax\u201d at 5"_s),
             qPrintable(run.out));
    const auto lines = csvLines(csv);
    QVERIFY(lines.size() >= 2);
    QCOMPARE(lines.front().trimmed(), QByteArray(",police,in,leeds,arrested,a,zorblax (unk),after,a,robbery"));
    const Run none = runCli(
        {u"align"_s, u"--model"_s, seq2seq("words"), u"--text"_s, u"?!"_s, u"--csv"_s, dir_.filePath(u"never.csv"_s)});
    QCOMPARE(none.exitCode, 1);
    QVERIFY2(none.err.contains(u"has no word"_s), qPrintable(none.err));
    QVERIFY(!QFile::exists(dir_.filePath(u"never.csv"_s)));
  }

  // A speech model says --text with espeak-ng (its phonemes among the notes) or reads --wav; its alignment is
  // phonemes x steps of audio; the typed-text options of the other models are refused for it, and --wav for them.
  void speechModelsSayTheTextOrReadTheWav() {
    const QString csv = dir_.filePath(u"speech.csv"_s);
    const Run said = runCli({u"align"_s, u"--model"_s, seq2seq("speech"), u"--text"_s, u"the quick brown fox"_s,
                             u"--beam"_s, u"2"_s, u"--csv"_s, csv});
    QVERIFY2(said.exitCode == 0, qPrintable(said.err));
    QVERIFY2(said.out.startsWith(u"align: random-speech \u00b7 30 steps of audio \u2192"_s), qPrintable(said.out));
    QVERIFY2(said.out.contains(u"said by espeak-ng (en-us): "_s) && said.out.contains(u" k w I k "_s),
             qPrintable(said.out));
    QVERIFY2(said.out.contains(u"warning: audio cut at 0.90 s"_s), qPrintable(said.out));
    const auto lines = csvLines(csv);
    QVERIFY(lines.size() >= 2);
    QVERIFY2(lines.front().startsWith(",0.00 s,0.03 s,0.06 s"), lines.front().constData());
    const Run read = runCli({u"align"_s, u"--model"_s, seq2seq("speech"), u"--wav"_s,
                             QStringLiteral(ATTN_TEST_DATA_DIR "/audio/fox-f2.wav"), u"--csv"_s, csv});
    QVERIFY2(read.exitCode == 0, qPrintable(read.err));
    QVERIFY2(!read.out.contains(u"said by"_s), qPrintable(read.out));
    const QString never = dir_.filePath(u"never.png"_s);
    const Run notAudio = runCli({u"align"_s, u"--model"_s, seq2seq("speech"), u"--wav"_s, csv, u"--out"_s, never});
    QCOMPARE(notAudio.exitCode, 1);
    QVERIFY2(notAudio.err.contains(u"speech.csv: is not audio"_s), qPrintable(notAudio.err));
    const Run both =
        runCli({u"align"_s, u"--model"_s, seq2seq("speech"), u"--text"_s, u"hi"_s, u"--wav"_s, csv, u"--out"_s, never});
    QCOMPARE(both.exitCode, 2);
    const Run shading = runCli({u"align"_s, u"--model"_s, seq2seq("speech"), u"--text"_s, u"hi"_s, u"--view"_s,
                                u"shading"_s, u"--out"_s, never});
    QCOMPARE(shading.exitCode, 2);
    const Run wavForDates = runCli({u"align"_s, u"--model"_s, seq2seq("bahdanau"), u"--wav"_s,
                                    QStringLiteral(ATTN_TEST_DATA_DIR "/audio/fox-f2.wav"), u"--out"_s, never});
    QCOMPARE(wavForDates.exitCode, 2);
    QVERIFY2(wavForDates.err.contains(u"--wav is for a speech model"_s), qPrintable(wavForDates.err));
    // The weights shaped: the top step alone in a window of 3 around the previous median has all the weight (the
    // softmax spreads it over every step); refused for a text model and for a beta of 0.
    const Run windowed = runCli({u"align"_s, u"--model"_s, seq2seq("speech"), u"--text"_s, u"the quick brown fox"_s,
                                 u"--window"_s, u"3"_s, u"--top-k"_s, u"1"_s, u"--csv"_s, csv});
    QVERIFY2(windowed.exitCode == 0, qPrintable(windowed.err));
    const auto rows = csvLines(csv);
    QVERIFY(rows.size() >= 2);
    for (qsizetype r = 1; r < rows.size(); ++r) {
      const QList<QByteArray> cells = rows[r].split(',');
      QCOMPARE(cells.size(), 31);  // the phoneme, then 30 steps
      const auto attended =
          std::count_if(cells.begin() + 1, cells.end(), [](const QByteArray& c) { return c.toDouble() > 0; });
      QVERIFY2(attended == 1 && cells.contains("1"), rows[r].constData());
    }
    const Run textModel = runCli({u"align"_s, u"--model"_s, seq2seq("bahdanau"), u"--text"_s, u"1 May 2020"_s,
                                  u"--sharpen"_s, u"2"_s, u"--out"_s, never});
    QCOMPARE(textModel.exitCode, 2);
    QVERIFY2(textModel.err.contains(u"shape a speech model's attention"_s), qPrintable(textModel.err));
    const Run zero = runCli(
        {u"align"_s, u"--model"_s, seq2seq("speech"), u"--text"_s, u"hi"_s, u"--sharpen"_s, u"0"_s, u"--out"_s, never});
    QCOMPARE(zero.exitCode, 2);
    QVERIFY2(zero.err.contains(u"sharpening beta is 0; it is above 0 and at most 100"_s), qPrintable(zero.err));
    QVERIFY(!QFile::exists(never));
  }

  void classifiersWriteTheirWordShading() {
    const QString png = dir_.filePath(u"review.png"_s);
    const QString csv = dir_.filePath(u"review.csv"_s);
    const Run run = runCli({u"align"_s, u"--model"_s, classifier("hierarchical"), u"--text"_s,
                            u"The film was great. The food was bad!"_s, u"--out"_s, png, u"--csv"_s, csv});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QVERIFY(run.out.contains(u"10 words"_s));
    QVERIFY(run.out.contains(u"probabilities: negative "_s));
    QVERIFY(run.out.contains(u"sentence 0: weight "_s) && run.out.contains(u"sentence 1: weight "_s));
    QVERIFY(!run.out.contains(u"sentence 2: weight "_s));
    const QImage image(png);
    QCOMPARE(image.width(), 900);
    QVERIFY(image.height() > 150);
    const auto lines = csvLines(csv);
    QCOMPARE(lines.size(), 3);  // header + two heads
    QCOMPARE(lines.front().count(','), 10);
    // Decoding options make no sense for a classifier.
    const Run beam = runCli({u"align"_s, u"--model"_s, classifier("pooling"), u"--text"_s, u"great film"_s, u"--beam"_s,
                             u"3"_s, u"--out"_s, dir_.filePath(u"never.png"_s)});
    QCOMPARE(beam.exitCode, 2);
    QVERIFY2(beam.err.contains(u"--beam"_s), qPrintable(beam.err));
  }

  // Issue 44: --attribution shades a review's or a pair's words by an attribution of the predicted label and says
  // its largest scores each way; other kinds and unknown methods are refused.
  void attributionShadesTheWords() {
    const QString png = dir_.filePath(u"review-attribution.png"_s), plain = dir_.filePath(u"review-plain.png"_s);
    const QString text = u"The film was great. The food was bad!"_s;
    const Run run = runCli({u"align"_s, u"--model"_s, classifier("lstm"), u"--text"_s, text, u"--attribution"_s,
                            u"grad-x-input"_s, u"--out"_s, png});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QVERIFY2(run.out.contains(u"attribution (grad-x-input) of \u201c"_s), qPrintable(run.out));
    QVERIFY2(run.out.contains(u"for it: "_s) && run.out.contains(u"against it: "_s), qPrintable(run.out));
    const Run without = runCli({u"align"_s, u"--model"_s, classifier("lstm"), u"--text"_s, text, u"--out"_s, plain});
    QVERIFY2(without.exitCode == 0, qPrintable(without.err));
    QVERIFY(!without.out.contains(u"attribution"_s));
    QVERIFY(QImage(png).height() > QImage(plain).height());  // one more shaded block
    // Integrated gradients says its steps and its completeness gap.
    const Run ig = runCli({u"align"_s, u"--model"_s, classifier("hierarchical"), u"--text"_s, text, u"--attribution"_s,
                           u"integrated-gradients"_s, u"--out"_s, png});
    QVERIFY2(ig.exitCode == 0, qPrintable(ig.err));
    QVERIFY2(ig.out.contains(u"256 steps from the zero embedding"_s) && ig.out.contains(u"completeness gap"_s),
             qPrintable(ig.out));
    // A pair: the premise's and the hypothesis's words.
    const Run pair =
        runCli({u"align"_s, u"--model"_s, QStringLiteral(ATTN_TEST_DATA_DIR "/entailment/random-entailment"),
                u"--text"_s, u"A man is sleeping."_s, u"--pair"_s, u"the man is awake"_s, u"--attribution"_s,
                u"grad-x-input"_s, u"--view"_s, u"shading"_s, u"--out"_s, png});
    QVERIFY2(pair.exitCode == 0, qPrintable(pair.err));
    QVERIFY2(pair.out.contains(u"attribution (grad-x-input)"_s), qPrintable(pair.out));

    const QString never = dir_.filePath(u"never-attribution.png"_s);
    const Run dates = runCli({u"align"_s, u"--model"_s, seq2seq("bahdanau"), u"--text"_s, u"1 May 2020"_s,
                              u"--attribution"_s, u"grad-x-input"_s, u"--out"_s, never});
    QCOMPARE(dates.exitCode, 2);
    QVERIFY2(dates.err.contains(u"--attribution is for the review and entailment models"_s), qPrintable(dates.err));
    const Run unknown = runCli({u"align"_s, u"--model"_s, classifier("lstm"), u"--text"_s, text, u"--attribution"_s,
                                u"attnlrp"_s, u"--out"_s, never});
    QCOMPARE(unknown.exitCode, 2);
    QVERIFY2(unknown.err.contains(u"expected grad-x-input or integrated-gradients, got 'attnlrp'"_s),
             qPrintable(unknown.err));
    QVERIFY(!QFile::exists(never));
  }

  void badInputsExitWithTheReason_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("expected");
    const QString out = dir_.filePath(u"never.png"_s);
    QTest::newRow("unknown name") << QStringList{u"align"_s,  u"--model"_s,    u"no-such-model"_s,
                                                 u"--text"_s, u"1 May 2020"_s, u"--out"_s,
                                                 out}
                                  << 1 << u"no-such-model: no such bundled model or folder"_s;
    QTest::newRow("empty text") << QStringList{u"align"_s, u"--model"_s, seq2seq("bahdanau"), u"--text"_s, QString(),
                                               u"--out"_s, out}
                                << 1 << u"nothing to run"_s;
    QTest::newRow("no text") << QStringList{u"align"_s, u"--model"_s, seq2seq("bahdanau"), u"--out"_s, out} << 2
                             << u"--text"_s;
    QTest::newRow("no such folder") << QStringList{u"align"_s,  u"--model"_s,    dir_.filePath(u"nothing"_s),
                                                   u"--text"_s, u"1 May 2020"_s, u"--out"_s,
                                                   out}
                                    << 1 << u"no such folder"_s;
    QTest::newRow("no config") << QStringList{u"align"_s,      u"--model"_s, dir_.path(), u"--text"_s,
                                              u"1 May 2020"_s, u"--out"_s,   out}
                               << 1 << u"config.json: missing"_s;
    QTest::newRow("a transformer")
        << QStringList{u"align"_s,  u"--model"_s,    QStringLiteral(ATTN_TEST_DATA_DIR "/transformers/bert"),
                       u"--text"_s, u"1 May 2020"_s, u"--out"_s,
                       out}
        << 1 << u"Transformer tab"_s;
    QTest::newRow("no output") << QStringList{u"align"_s, u"--model"_s, seq2seq("bahdanau"), u"--text"_s, u"1 May"_s}
                               << 2 << u"--out FILE and/or --csv FILE"_s;
    QTest::newRow("bad format") << QStringList{u"align"_s, u"--model"_s, seq2seq("bahdanau"),      u"--text"_s,
                                               u"1 May"_s, u"--out"_s,   dir_.filePath(u"a.txt"_s)}
                                << 2 << u".png, .svg or .pdf"_s;
    QTest::newRow("beam too wide") << QStringList{u"align"_s,  u"--model"_s, seq2seq("bahdanau"),
                                                  u"--text"_s, u"1 May"_s,   u"--beam"_s,
                                                  u"40"_s,     u"--out"_s,   out}
                                   << 2 << u"--beam"_s;
    QTest::newRow("step beyond") << QStringList{u"align"_s,  u"--model"_s, seq2seq("bahdanau"), u"--text"_s, u"1 May"_s,
                                                u"--step"_s, u"99"_s,      u"--out"_s,          out}
                                 << 1 << u"--step 99"_s;
  }
  void badInputsExitWithTheReason() {
    QFETCH(QStringList, args);
    QFETCH(int, code);
    QFETCH(QString, expected);
    const Run run = runCli(args);
    QCOMPARE(run.exitCode, code);
    QVERIFY2(run.err.contains(expected), qPrintable(run.err));
    QVERIFY(!QFile::exists(dir_.filePath(u"never.png"_s)));
  }

  void aMismatchedFolderNamesTheFile() {
    QTemporaryDir folder;
    QVERIFY(QFile::copy(seq2seq("luong-dot") + u"/config.json"_s, folder.filePath(u"config.json"_s)));
    QVERIFY(QFile::copy(seq2seq("bahdanau") + u"/model.safetensors"_s, folder.filePath(u"model.safetensors"_s)));
    const Run run = runCli({u"align"_s, u"--model"_s, folder.path(), u"--text"_s, u"1 May 2020"_s, u"--csv"_s,
                            dir_.filePath(u"never.csv"_s)});
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(run.err.contains(u"model.safetensors"_s), qPrintable(run.err));
    QCOMPARE(run.err.trimmed().count(u'\n'), 0);  // one line
  }

  // The align verb knows the kinds only through the Alignment tab's registry of pages (test_alignment_workbench
  // compares alignKinds() with it): its help names the kinds, and --list files each bundled model under its kind.
  void theKindsComeFromTheRegistry() {
    const Run help = runCli({u"align"_s, u"--help"_s});
    QCOMPARE(help.exitCode, 0);
    QVERIFY2(help.out.simplified().contains(u"(dates, headlines, reviews, entailment, speech)"_s),
             qPrintable(help.out));
    const Run list = runCli({u"align"_s, u"--list"_s});
    QCOMPARE(list.exitCode, 0);
    if (!list.out.contains(u"date-bahdanau"_s)) QSKIP("this build bundles no date-bahdanau model");
    const QStringList lines = list.out.split(u'\n');
    const auto headingOf = [&](const QString& key) {
      QString heading;
      for (const QString& line : lines) {
        if (!line.startsWith(u' ') && line.endsWith(u':')) heading = line.chopped(1);
        if (line.trimmed().startsWith(key + u' ')) return heading;
      }
      return QString();
    };
    for (const auto& [key, kind] :
         {std::pair{u"date-bahdanau"_s, u"dates"_s}, std::pair{u"date-convs2s"_s, u"dates"_s},
          std::pair{u"headlines-gru"_s, u"headlines"_s}, std::pair{u"sentiment-pooling"_s, u"reviews"_s},
          std::pair{u"entailment-wbw"_s, u"entailment"_s}, std::pair{u"speech-location"_s, u"speech"_s}}) {
      if (list.out.contains(key)) QCOMPARE(headingOf(key), kind);
    }
  }

  // Issue 42: audio for a model that reads text (--model sentiment-* --wav F) ran the classifier on no text ("text:
  // nothing to classify"); it is refused before anything is loaded, naming the option and the model: a folder whose
  // weights are not even a safetensors file is refused for the --wav alone, and the audio is never opened.
  void audioForATextModelIsRefusedBeforeItLoads() {
    const QString folder = dir_.filePath(u"reads-text"_s);
    QVERIFY(QDir().mkpath(folder));
    QVERIFY(QFile::copy(classifier("pooling") + u"/config.json"_s, folder + u"/config.json"_s));
    QFile weights(folder + u"/model.safetensors"_s);
    QVERIFY(weights.open(QIODevice::WriteOnly));
    weights.write("not weights");
    weights.close();
    const QString never = dir_.filePath(u"never.png"_s);
    const QString noAudio = dir_.filePath(u"no-such.wav"_s);
    const Run folderRun = runCli({u"align"_s, u"--model"_s, folder, u"--wav"_s, noAudio, u"--out"_s, never});
    QCOMPARE(folderRun.exitCode, 2);
    QVERIFY2(folderRun.err.contains(u"--wav is for a speech model; reads-text reads text (give it --text)"_s),
             qPrintable(folderRun.err));
    QVERIFY(!QFile::exists(never));

    const Run list = runCli({u"align"_s, u"--list"_s});
    if (!list.out.contains(u"sentiment-pooling"_s)) QSKIP("this build bundles no sentiment-pooling model");
    const Run bundled = runCli({u"align"_s, u"--model"_s, u"sentiment-pooling"_s, u"--wav"_s,
                                QStringLiteral(ATTN_TEST_DATA_DIR "/audio/fox-f2.wav"), u"--out"_s, never});
    QCOMPARE(bundled.exitCode, 2);
    QVERIFY2(bundled.err.contains(u"--wav is for a speech model; Reviews \u00b7 attention pooling (2 heads) reads "
                                  u"text (give it --text)"_s),
             qPrintable(bundled.err));
    QVERIFY2(!bundled.err.contains(u"nothing to classify"_s), qPrintable(bundled.err));
  }

  void bundledModelsByName() {
    const Run list = runCli({u"align"_s, u"--list"_s});
    QCOMPARE(list.exitCode, 0);
    if (!list.out.contains(u"date-bahdanau"_s)) QSKIP("this build bundles no date-bahdanau model");
    QVERIFY(list.out.contains(u"Dates \u00b7 Bahdanau (additive)"_s));
    const QString png = dir_.filePath(u"bundled.png"_s);
    const Run run =
        runCli({u"align"_s, u"--model"_s, u"date-bahdanau"_s, u"--text"_s, u"21 Nov 2026"_s, u"--out"_s, png});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QVERIFY(run.out.startsWith(u"align: Dates \u00b7 Bahdanau (additive)"_s));
    QVERIFY(!QImage(png).isNull());
    // The unknown-name error lists what is bundled.
    const Run unknown =
        runCli({u"align"_s, u"--model"_s, u"date-bahdanou"_s, u"--text"_s, u"1 May"_s, u"--out"_s, png});
    QCOMPARE(unknown.exitCode, 1);
    QVERIFY2(unknown.err.contains(u"date-bahdanau, "_s), qPrintable(unknown.err));
  }

  // An entailment model: --text is the premise, --pair the hypothesis; the heatmap is hypothesis x premise words,
  // the shading view the label with both sentences; a missing or wordless sentence, and --pair elsewhere, refused.
  void entailmentTakesThePremiseAndThePair() {
    const QString model = QStringLiteral(ATTN_TEST_DATA_DIR "/entailment/random-entailment");
    const QString png = dir_.filePath(u"e.png"_s), csv = dir_.filePath(u"e.csv"_s);
    const Run run = runCli({u"align"_s, u"--model"_s, model, u"--text"_s, u"A man is sleeping."_s, u"--pair"_s,
                            u"the zebra is not sleeping"_s, u"--step"_s, u"2"_s, u"--out"_s, png, u"--csv"_s, csv});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QVERIFY2(run.out.startsWith(u"align: random-entailment \u00b7 4 premise and 5 hypothesis words \u2192 "_s),
             qPrintable(run.out));
    QVERIFY2(run.out.contains(u"probabilities: entailment "_s), qPrintable(run.out));
    QVERIFY2(run.out.contains(u"1 words not in the vocabulary"_s), qPrintable(run.out));  // "zebra"
    QCOMPARE(QImage(png).size(), QSize(900, 700));
    const auto lines = csvLines(csv);
    QCOMPARE(lines.size(), 6);  // the header, then one row per hypothesis word
    QCOMPARE(lines.front().trimmed(), QByteArray(",a,man,is,sleeping"));
    QVERIFY(lines[2].startsWith("zebra (unk),"));
    const QString figure = dir_.filePath(u"e-shading.png"_s);
    const Run shading = runCli({u"align"_s, u"--model"_s, model, u"--text"_s, u"A man is sleeping."_s, u"--pair"_s,
                                u"a man"_s, u"--view"_s, u"shading"_s, u"--out"_s, figure});
    QVERIFY2(shading.exitCode == 0, qPrintable(shading.err));
    QVERIFY(!QImage(figure).isNull());

    const QString never = dir_.filePath(u"never-e.png"_s);
    const Run noPair = runCli({u"align"_s, u"--model"_s, model, u"--text"_s, u"a man"_s, u"--out"_s, never});
    QCOMPARE(noPair.exitCode, 2);
    QVERIFY2(noPair.err.contains(u"give the premise with --text and the hypothesis with --pair"_s),
             qPrintable(noPair.err));
    const Run wordless =
        runCli({u"align"_s, u"--model"_s, model, u"--text"_s, u"a man"_s, u"--pair"_s, u"?!"_s, u"--out"_s, never});
    QCOMPARE(wordless.exitCode, 1);
    QVERIFY2(wordless.err.contains(u"hypothesis: the hypothesis has no words"_s), qPrintable(wordless.err));
    const Run step = runCli({u"align"_s, u"--model"_s, model, u"--text"_s, u"a man"_s, u"--pair"_s, u"a man"_s,
                             u"--step"_s, u"2"_s, u"--out"_s, never});
    QCOMPARE(step.exitCode, 1);
    QVERIFY2(step.err.contains(u"--step 2: the hypothesis has the words 0 to 1"_s), qPrintable(step.err));
    const Run onDates = runCli({u"align"_s, u"--model"_s, seq2seq("bahdanau"), u"--text"_s, u"1 May 2020"_s,
                                u"--pair"_s, u"x"_s, u"--out"_s, never});
    QCOMPARE(onDates.exitCode, 2);
    QVERIFY2(onDates.err.contains(u"--pair is the hypothesis of an entailment model"_s), qPrintable(onDates.err));
    QVERIFY(!QFile::exists(never));
  }
};

ATTN_QT_TEST(TestAlignCli, Gui);

}  // namespace test_align_cli
#include "test_align_cli.moc"
