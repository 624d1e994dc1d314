// attnscope-cli corpus as a user runs it (issue 46), on the bundled induction-gpt2 and the test BERT: a whole run, the
// same corpus in two shards merged into the same rows, a resumed run, a run stopped by SIGTERM (a Slurm cancel) and
// resumed to the same rows, JSON Lines with pairs and unreadable lines, truncation, and the refusals.
#include "qt_test_registry.h"
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include "cli_run.h"

#include <sqlite3.h>

using namespace Qt::StringLiterals;

namespace test_corpus_cli {

namespace {

QString inductionModel() { return QStringLiteral(ATTN_SOURCE_DIR "/resources/models/induction-gpt2"); }
QString bertModel() { return QStringLiteral(ATTN_TEST_DATA_DIR "/transformers/bert"); }

// Every row of `sql` in the database at `path`, each as "a|b|c|".
QStringList rows(const QString& path, const QString& sql) {
  sqlite3* db = nullptr;
  QStringList out;
  if (sqlite3_open_v2(path.toUtf8().constData(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, sql.toUtf8().constData(), -1, &s, nullptr) == SQLITE_OK) {
      while (sqlite3_step(s) == SQLITE_ROW) {
        QString row;
        for (int c = 0; c < sqlite3_column_count(s); ++c) {
          const auto* v = sqlite3_column_text(s, c);
          row += (v ? QString::fromUtf8(reinterpret_cast<const char*>(v)) : u"NULL"_s) + u'|';
        }
        out << row;
      }
    }
    sqlite3_finalize(s);
  }
  sqlite3_close(db);
  return out;
}

const QStringList kTables = {u"SELECT * FROM inputs ORDER BY id"_s, u"SELECT * FROM head_stats ORDER BY 1, 2, 3"_s,
                             u"SELECT * FROM top_pairs ORDER BY 1, 2, 3, 4"_s, u"SELECT * FROM skipped ORDER BY id"_s};

// Lines of random letters, every fourth a string twice (induction-gpt2 reads a-z), an empty line at 3, one (400
// letters) longer than the model's 128 positions at 5, and one without a repeated letter at 7.
QByteArray letters(int lines, unsigned seed) {
  QByteArray out;
  for (int i = 0; i < lines; ++i) {
    if (i == 3 || i == 7) {
      out += i == 3 ? "\n" : "abcdefghij\n";
      continue;
    }
    const int length = i == 5 ? 200 : 8 + int(seed % 13);
    QByteArray line;
    for (int j = 0; j < length; ++j) {
      seed = seed * 1103515245u + 12345u;
      line += char('a' + (seed >> 16) % 26);
    }
    out += (i % 4 == 1 ? line + line : line) + "\n";
  }
  return out;
}

}  // namespace

class TestCorpusCli : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;

  QString write(const QString& name, const QByteArray& bytes) { return writeFile(dir_, name, bytes); }
  QStringList corpus(const QString& input, const QString& db, const QStringList& more = {}) {
    return QStringList{u"corpus"_s, u"--model"_s, inductionModel(), u"--input"_s, input, u"--db"_s, db} + more;
  }

 private slots:
  void shardsMergeIntoTheWholeRun() {
    const QString input = write(u"c.txt"_s, letters(40, 7));
    const QString whole = dir_.filePath(u"whole.sqlite"_s);
    Run run = runCli(corpus(input, whole));
    QVERIFY2(run.exitCode == 0, qPrintable(run.err + run.out));
    QVERIFY2(run.out.contains(u"39 new inputs, 0 already done"_s), qPrintable(run.out));
    QVERIFY2(run.out.contains(u"1 empty line skipped"_s), qPrintable(run.out));
    QVERIFY2(run.out.contains(u"1 input truncated"_s), qPrintable(run.out));
    QCOMPARE(rows(whole, u"SELECT tokens, truncated FROM inputs WHERE id = 5"_s), QStringList{u"128|272|"_s});
    // induction-gpt2: 2 layers x 4 heads, 5 pairs each; every line but 7 repeats a letter (a duplicate-token and
    // induction score).
    QCOMPARE(rows(whole, u"SELECT count(*) FROM head_stats"_s), QStringList{u"312|"_s});
    QCOMPARE(rows(whole, u"SELECT count(*) FROM top_pairs"_s), QStringList{u"1560|"_s});
    const int scored =
        rows(whole, u"SELECT count(*) FROM head_stats WHERE induction IS NOT NULL"_s).value(0).chopped(1).toInt();
    QCOMPARE(scored, 312 - 2 * 8);  // all but lines 7 and 10 (abcdefghij, cdakrhie)
    QCOMPARE(rows(whole, u"SELECT count(*) FROM top_pairs WHERE query_token = '' OR key_token = ''"_s),
             QStringList{u"0|"_s});
    QVERIFY(!QFile::exists(whole + u"-wal"_s));

    QStringList shards;
    for (int i = 0; i < 3; ++i) {
      shards << dir_.filePath(u"s%1.sqlite"_s.arg(i));
      run = runCli(corpus(input, shards.back(), {u"--shard"_s, u"%1/3"_s.arg(i)}));
      QVERIFY2(run.exitCode == 0, qPrintable(run.err + run.out));
    }
    run = runCli(corpus(input, shards.front(), {u"--shard"_s, u"0/3"_s}));
    QVERIFY2(run.out.contains(u"0 new inputs, 13 already done"_s), qPrintable(run.out));
    const QString merged = dir_.filePath(u"merged.sqlite"_s);
    run = runCli(QStringList{u"corpus"_s, u"merge"_s, u"--db"_s, merged} + shards);
    QVERIFY2(run.exitCode == 0, qPrintable(run.err + run.out));
    QVERIFY2(run.out.contains(u"3 files · 39 inputs; lines skipped: 1 empty, 0 unreadable"_s), qPrintable(run.out));
    for (const QString& sql : kTables) QCOMPARE(rows(merged, sql), rows(whole, sql));

    // Refused: a shard twice (overlap), the whole run with a shard, a shard of another model.
    run = runCli(QStringList{u"corpus"_s, u"merge"_s, u"--db"_s, dir_.filePath(u"x.sqlite"_s), shards[0], shards[0]});
    QVERIFY2(run.exitCode != 0 && run.err.contains(u"which an earlier shard holds too"_s), qPrintable(run.err));
    QVERIFY(!QFile::exists(dir_.filePath(u"x.sqlite"_s)));
    const QString bert = dir_.filePath(u"bert.sqlite"_s);
    run =
        runCli({u"corpus"_s, u"--model"_s, bertModel(), u"--input"_s, input, u"--db"_s, bert, u"--shard"_s, u"1/3"_s});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err + run.out));
    run = runCli({u"corpus"_s, u"merge"_s, u"--db"_s, dir_.filePath(u"x.sqlite"_s), shards[0], bert});
    QVERIFY2(run.exitCode != 0 && run.err.contains(u"not a shard of the same run"_s), qPrintable(run.err));
    // Resuming with other options is refused, naming the option.
    run = runCli(corpus(input, whole, {u"--top-k"_s, u"3"_s}));
    QVERIFY2(run.exitCode != 0 && run.err.contains(u"top_k '3' against '5'"_s), qPrintable(run.err));
  }

  void aStoppedRunResumesToTheSameRows() {
    const QString input = write(u"long.txt"_s, letters(1500, 11));
    const QString whole = dir_.filePath(u"long-whole.sqlite"_s), stopped = dir_.filePath(u"long-stopped.sqlite"_s);
    Run run = runCli(corpus(input, whole));
    QVERIFY2(run.exitCode == 0, qPrintable(run.err + run.out));
    QProcess process;
    process.start(QStringLiteral(ATTNSCOPE_CLI), corpus(input, stopped));
    QVERIFY(process.waitForStarted());
    // Stopped (SIGTERM, as scancel sends) once some inputs are in.
    for (int i = 0; i < 600 && rows(stopped, u"SELECT count(*) FROM inputs"_s).value(0, u"0|"_s) == u"0|"_s; ++i) {
      QThread::msleep(50);
    }
    process.terminate();
    QVERIFY(process.waitForFinished(60000));
    QCOMPARE(process.exitCode(), 130);
    const QString out = QString::fromUtf8(process.readAllStandardOutput());
    QVERIFY2(out.contains(u"stopped by a signal"_s), qPrintable(out));
    const int kept = rows(stopped, u"SELECT count(*) FROM inputs"_s).value(0).chopped(1).toInt();
    QVERIFY2(kept > 0 && kept < 1499, qPrintable(QString::number(kept)));
    run = runCli(corpus(input, stopped));
    QVERIFY2(run.exitCode == 0, qPrintable(run.err + run.out));
    QVERIFY2(run.out.contains(u"already done"_s), qPrintable(run.out));
    for (const QString& sql : kTables) QCOMPARE(rows(stopped, sql), rows(whole, sql));
  }

  void jsonLinesWithPairsAndUnreadableLines() {
    const QString input = write(u"pairs.jsonl"_s,
                                "{\"text\": \"the cat sat\", \"pair\": \"a cat\"}\n"
                                "{\"text\": 5}\n"
                                "{\"text\": \"the dog\"}\n"
                                "not json\n");
    const QString db = dir_.filePath(u"pairs.sqlite"_s);
    Run run = runCli({u"corpus"_s, u"--model"_s, bertModel(), u"--input"_s, input, u"--db"_s, db});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err + run.out));
    QVERIFY2(run.out.contains(u"2 lines not run (line 2: \"text\" is not a string; line 4: not JSON)"_s),
             qPrintable(run.out));
    QCOMPARE(rows(db, u"SELECT id, pair FROM inputs ORDER BY id"_s), (QStringList{u"0|a cat|"_s, u"2|NULL|"_s}));
    // GPT-2 has no segments: the pair follows the text, and is kept beside it.
    const QString gpt = dir_.filePath(u"pairs-gpt.sqlite"_s);
    run = runCli(corpus(input, gpt));
    QVERIFY2(run.exitCode == 0, qPrintable(run.err + run.out));
    QCOMPARE(rows(gpt, u"SELECT id, pair FROM inputs ORDER BY id"_s), (QStringList{u"0|a cat|"_s, u"2|NULL|"_s}));
  }

  void usageErrors() {
    const QString input = write(u"u.txt"_s, "abc\n");
    for (const QString& spec : {u"3/2"_s, u"0/0"_s, u"x"_s}) {
      const Run run = runCli(corpus(input, dir_.filePath(u"u.sqlite"_s), {u"--shard"_s, spec}));
      QCOMPARE(run.exitCode, 2);
      QVERIFY2(run.err.contains(u"--shard "_s + spec), qPrintable(run.err));
    }
    Run run = runCli({u"corpus"_s, u"--model"_s, inductionModel(), u"--input"_s, input});
    QVERIFY2(run.exitCode == 2 && run.err.contains(u"--db"_s), qPrintable(run.err));
    run = runCli(corpus(dir_.filePath(u"absent.txt"_s), dir_.filePath(u"u.sqlite"_s)));
    QVERIFY2(run.exitCode != 0 && run.err.contains(u"absent.txt"_s), qPrintable(run.err));
    run = runCli({u"corpus"_s, u"merge"_s, u"--db"_s, dir_.filePath(u"m.sqlite"_s)});
    QVERIFY2(run.exitCode == 2, qPrintable(run.err));
    run = runCli({u"corpus"_s, u"merge"_s, u"--db"_s, dir_.filePath(u"m.sqlite"_s), input});
    QVERIFY2(run.exitCode != 0 && run.err.contains(u"not an AttnScope corpus database"_s), qPrintable(run.err));
    for (const QString& threads : {u"0"_s, u"1025"_s, u"two"_s}) {
      run = runCli(corpus(input, dir_.filePath(u"u.sqlite"_s), {u"--threads"_s, threads}));
      QVERIFY2(run.exitCode == 2 && run.err.contains(u"--threads"_s), qPrintable(run.err));
    }
  }

  // A shard per core wants a thread each (GNU parallel's line in the README): the summary says how many ran.
  void threadsAreSetAndSaid() {
    const QString input = write(u"t.txt"_s, "abcabc\nxyzxyz\n");
    Run run = runCli(corpus(input, dir_.filePath(u"t1.sqlite"_s), {u"--threads"_s, u"1"_s}));
    QVERIFY2(run.exitCode == 0 && run.out.contains(u"inputs/s on 1 thread ·"_s), qPrintable(run.err + run.out));
    run = runCli(corpus(input, dir_.filePath(u"t2.sqlite"_s), {u"--threads"_s, u"2"_s}));
    QVERIFY2(run.exitCode == 0 && run.out.contains(u"inputs/s on 2 threads ·"_s), qPrintable(run.err + run.out));
  }
};

ATTN_QT_TEST(TestCorpusCli, Core);

}  // namespace test_corpus_cli

#include "test_corpus_cli.moc"
