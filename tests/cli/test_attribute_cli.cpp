// attnscope-cli attribute as a user runs it: the CSV (a header, a row per input token, the score last, CRLF), the
// picture and the summary on the bundled induction-gpt2, whose copying circuit shows in AttnLRP's scores; every method
// on a BERT at its [MASK]; and the usage errors (exit 2): a target of two tokens, a position out of range, steps 0
// or 1025, an unknown method, a pad baseline where the tokenizer has no pad token.
#include "qt_test_registry.h"
#include <QDir>
#include <QFile>
#include <QImage>
#include <QTemporaryDir>
#include <QTest>

#include "cli_run.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace Qt::StringLiterals;

namespace test_attribute_cli {

namespace {

QString inductionModel() { return QStringLiteral(ATTN_SOURCE_DIR "/resources/models/induction-gpt2"); }
QString bertModel() { return QStringLiteral(ATTN_TEST_DATA_DIR "/transformers/bert"); }

// A random string of distinct letters, twice, cut after "apl": the next letter is the one after "apl" in the first
// copy ("z", position 10).
const QString kInduction = u"qwhdkeiaplzmqwhdkeiapl"_s;

QStringList readLines(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  const QString text = QString::fromUtf8(file.readAll());
  if (!text.endsWith(u"\r\n"_s)) return {};
  return text.split(u"\r\n"_s, Qt::SkipEmptyParts);
}

}  // namespace

class TestAttributeCli : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;

  QStringList attribute(const QString& model, const QString& text, const QStringList& more) {
    return QStringList{u"attribute"_s, u"--model"_s, model, u"--text"_s, text} + more;
  }

 private slots:
  void inductionCopyingShowsInAttnLrp() {
    const QString csv = dir_.filePath(u"a.csv"_s), png = dir_.filePath(u"a.png"_s);
    const Run run = runCli(
        attribute(inductionModel(), kInduction, {u"--method"_s, u"attnlrp"_s, u"--csv"_s, csv, u"--out"_s, png}));
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QVERIFY2(run.out.contains(u"logit of \"z\" at 21"_s), qPrintable(run.out));
    QVERIFY2(run.out.contains(u"conservation gap"_s), qPrintable(run.out));
    const QStringList lines = readLines(csv);
    QCOMPARE(lines.size(), 1 + kInduction.size());
    QCOMPARE(lines.front(), u"index,token,score"_s);
    std::vector<double> scores;
    for (int i = 1; i < lines.size(); ++i) {
      const QStringList cells = lines[i].split(u',');
      QCOMPARE(cells.size(), 3);
      QCOMPARE(cells[0].toInt(), i - 1);
      QCOMPARE(cells[1], QString(kInduction[i - 1]));
      bool ok = false;
      scores.push_back(cells[2].toDouble(&ok));
      QVERIFY(ok && std::isfinite(scores.back()));
    }
    // The copied letter's source: "z" after the first "apl" is among the three most relevant tokens, beside the
    // query's own "p" and "l" neighbourhood.
    std::vector<int> order(scores.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return std::abs(scores[a]) > std::abs(scores[b]); });
    QVERIFY2(std::find(order.begin(), order.begin() + 3, 10) != order.begin() + 3, qPrintable(lines.join(u' ')));
    const QImage image(png);
    QVERIFY(!image.isNull());
    QCOMPARE(image.size(), QSize(1000, 420));
  }

  void everyMethodOnBert() {
    for (const QString& method : {u"grad-x-input"_s, u"integrated-gradients"_s, u"attn-grad"_s, u"attnlrp"_s,
                                  u"rollout"_s, u"flow"_s, u"attention"_s, u"random"_s}) {
      const QString csv = dir_.filePath(method + u".csv"_s);
      const Run run = runCli(attribute(bertModel(), u"The cat sat on the [MASK] ."_s,
                                       {u"--method"_s, method, u"--steps"_s, u"8"_s, u"--csv"_s, csv}));
      QVERIFY2(run.exitCode == 0, qPrintable(method + u": "_s + run.err));
      QVERIFY2(run.out.contains(u"at 6 ="_s), qPrintable(run.out));  // the [MASK] after [CLS] the cat sat on the
      QCOMPARE(readLines(csv).size(), 1 + 9);
    }
  }

  void badRequestsAreUsageErrors() {
    const QString csv = dir_.filePath(u"bad.csv"_s);
    const QList<QStringList> cases = {
        {u"--method"_s, u"attnlrp"_s, u"--target"_s, u"zz"_s},
        {u"--method"_s, u"attnlrp"_s, u"--position"_s, u"99"_s},
        {u"--method"_s, u"integrated-gradients"_s, u"--steps"_s, u"0"_s},
        {u"--method"_s, u"integrated-gradients"_s, u"--steps"_s, u"1025"_s},
        {u"--method"_s, u"gradient"_s},
        {u"--method"_s, u"integrated-gradients"_s, u"--baseline"_s, u"pad"_s},
    };
    const QStringList says = {u"not one"_s,
                              u"out of range"_s,
                              u"outside 1..1024"_s,
                              u"outside 1..1024"_s,
                              u"unknown attribution method"_s,
                              u"no pad or mask token"_s};
    for (int i = 0; i < cases.size(); ++i) {
      const Run run = runCli(attribute(inductionModel(), kInduction, cases[i] + QStringList{u"--csv"_s, csv}));
      QVERIFY2(run.exitCode == 2, qPrintable(cases[i].join(u' ') + u": "_s + QString::number(run.exitCode)));
      QVERIFY2(run.err.contains(says[i]), qPrintable(run.err));
    }
    QVERIFY(!QFile::exists(csv));
  }
};

ATTN_QT_TEST(TestAttributeCli, Core);

}  // namespace test_attribute_cli
#include "test_attribute_cli.moc"
