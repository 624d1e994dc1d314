// attnscope-cli over tests/data/bad (tools/bad/make_bad_corpus.py): every input a subcommand can take is
// given to it as a user would; a refused one exits 1 with one error line that names the file and the kind
// ("attnscope-cli: error (truncated): <file>: ..."), an input with non-finite values runs and warns on
// stderr, and an odd but valid one runs.
#include "qt_test_registry.h"
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include "cli_run.h"

using namespace Qt::StringLiterals;

namespace test_bad_corpus_cli {

namespace {

const QString kBad = QStringLiteral(ATTN_TEST_DATA_DIR "/bad/");

struct Row {
  QString path, loader, expect, names, what;
};

QList<Row> manifest() {
  QList<Row> rows;
  QFile file(kBad + u"MANIFEST.tsv"_s);
  if (!file.open(QIODevice::ReadOnly)) return rows;
  for (const QByteArray& raw : file.readAll().split('\n')) {
    const QString line = QString::fromUtf8(raw);
    if (line.isEmpty() || line.startsWith(u'#')) continue;
    const QStringList f = line.split(u'\t');
    if (f.size() == 5) rows.append({f[0], f[1], f[2], f[3], f[4]});
  }
  return rows;
}

// The command that reads this input, or nothing when no subcommand takes it on its own (a bare tensor
// file, config or tokenizer: the CLI reads those only as parts of a model folder, which the corpus has too).
QStringList command(const Row& row, const QString& out) {
  const QString path = kBad + row.path;
  if (row.loader == u"image"_s) return {u"glimpse"_s, u"--image"_s, path, u"--stn"_s, QString(), u"--out"_s, out};
  if (row.loader == u"dump"_s) {
    return {u"run"_s, u"--dump-in"_s, path, u"--render"_s, u"layer=0,head=0"_s, u"--out"_s, out};
  }
  if (row.loader == u"audio"_s) return {u"speech"_s, u"--wav"_s, path, u"--json"_s, out};
  if (row.loader != u"model"_s) return {};
  QFile config(path + u"/config.json"_s);
  const QByteArray text = config.open(QIODevice::ReadOnly) ? config.readAll() : QByteArray();
  if (text.contains("AttnScopeCaptioner")) {
    return {u"caption"_s, u"--model"_s, path, u"--scene"_s, u"1"_s, u"--out"_s, out};
  }
  if (text.contains("AttnScopeEntailment")) {
    return {u"align"_s, u"--model"_s, path, u"--text"_s, u"a man"_s, u"--pair"_s, u"a man"_s, u"--out"_s, out};
  }
  if (text.contains("AttnScopeClassifier") || text.contains("AttnScopeSeq2Seq")) {
    return {u"align"_s, u"--model"_s, path, u"--text"_s, u"12 may 2020"_s, u"--out"_s, out};
  }
  return {u"run"_s,      u"--model"_s,        path,       u"--text"_s, u"the cat sat"_s,
          u"--render"_s, u"layer=0,head=0"_s, u"--out"_s, out};
}

}  // namespace

class BadCorpusCliTest : public QObject {
  Q_OBJECT

 private slots:
  void manifestIsThere() { QVERIFY(manifest().size() > 60); }

  void input_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("loader");
    QTest::addColumn<QString>("expect");
    QTest::addColumn<QString>("names");
    int rows = 0;
    for (const Row& row : manifest()) {
      if (command(row, QString()).isEmpty()) continue;
      QTest::newRow(row.path.toUtf8().constData()) << row.path << row.loader << row.expect << row.names;
      ++rows;
    }
    QVERIFY(rows > 25);  // the images, dumps and model folders
  }

  void input() {
    QFETCH(QString, path);
    QFETCH(QString, loader);
    QFETCH(QString, expect);
    QFETCH(QString, names);
    const QString out = dir_.filePath(u"out.png"_s);
    QFile::remove(out);
    const Run run = runCli(command({path, loader, expect, names, {}}, out));
    const QString named = kBad + names;
    if (expect == u"ok"_s) {
      QVERIFY2(run.exitCode == 0, qPrintable(run.err));
      QVERIFY(QFile::exists(out));
      return;
    }
    if (expect == u"warning"_s) {
      QVERIFY2(run.exitCode == 0, qPrintable(run.err));
      const QString line = u"attnscope-cli: warning: "_s + named;
      QVERIFY2(run.err.contains(line) && (run.err.contains(u"non-finite"_s) || run.err.contains(u"outside [0, 1]"_s)),
               qPrintable(run.err));
      QVERIFY(QFile::exists(out));
      return;
    }
    QVERIFY2(run.exitCode == 1, qPrintable(u"exit %1: %2"_s.arg(run.exitCode).arg(run.err)));
    const QString line = u"attnscope-cli: error (%1): "_s.arg(expect);
    QVERIFY2(run.err.startsWith(line), qPrintable(run.err));
    QVERIFY2(run.err.contains(named), qPrintable(run.err));
    QCOMPARE(run.err.trimmed().count(u'\n'), 0);  // one line
    QVERIFY(!QFile::exists(out));
  }

 private:
  QTemporaryDir dir_;
};

ATTN_QT_TEST(BadCorpusCliTest, Core);

}  // namespace test_bad_corpus_cli
#include "test_bad_corpus_cli.moc"
