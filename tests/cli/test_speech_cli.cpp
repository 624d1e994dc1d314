// attnscope-cli speech as a user runs it, with hostile options and batch lines (issue 42): a voice that is a path
// (espeak-ng read it as a voice file, printed its lines and crashed), a noise of NaN (an all -32768 WAV), batch
// fields of the wrong type (an uncaught exception ended the program), a text over the synthesis limit, a batch over
// its totals.
#include "qt_test_registry.h"
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include "cli_run.h"

using namespace Qt::StringLiterals;

namespace test_speech_cli {

class TestSpeechCli : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;

  QString write(const QString& name, const QByteArray& bytes) { return writeFile(dir_, name, bytes); }

 private slots:
  void saysTheTextAndWritesTheWav() {
    const QString wav = dir_.filePath(u"fox.wav"_s);
    const Run run =
        runCli({u"speech"_s, u"--text"_s, u"the quick brown fox"_s, u"--voice"_s, u"en-us+f2"_s, u"--wav-out"_s, wav});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QVERIFY2(run.out.startsWith(u"speech: "_s), qPrintable(run.out));
    QVERIFY(QFileInfo(wav).size() > 44);
  }

  void aVoiceIsOneOfEspeakNgsOwn() {
    const QString wav = dir_.filePath(u"never.wav"_s);
    const Run path =
        runCli({u"speech"_s, u"--text"_s, u"hi"_s, u"--voice"_s, u"../../../../etc/passwd"_s, u"--wav-out"_s, wav});
    QCOMPARE(path.exitCode, 1);
    QVERIFY2(path.err.contains(u"voice: espeak-ng has no voice \"../../../../etc/passwd\""_s), qPrintable(path.err));
    QVERIFY2(path.err.contains(u"en-us+f2"_s), qPrintable(path.err));
    QVERIFY2(!path.err.contains(u"root:"_s), qPrintable(path.err));
    QVERIFY(!QFileInfo::exists(wav));

    const QString batch = write(u"voices.jsonl"_s,
                                "{\"text\": \"hello\"}\n"
                                "{\"text\": \"hi\", \"voice\": \"../../../../etc/passwd\"}\n");
    const Run line = runCli({u"speech"_s, u"--batch"_s, batch, u"--out-dir"_s, dir_.filePath(u"voices"_s)});
    QCOMPARE(line.exitCode, 1);
    QVERIFY2(line.err.contains(batch + u":2: voice: espeak-ng has no voice \"../../../../etc/passwd\""_s),
             qPrintable(line.err));
    QVERIFY2(!line.err.contains(u"root:"_s), qPrintable(line.err));
  }

  void nonFiniteNumbersAreRefusedWhereTheyAreParsed() {
    const QString wav = dir_.filePath(u"nan.wav"_s);
    for (const QString& noise : {u"nan"_s, u"inf"_s, u"-0.5"_s}) {
      const Run run = runCli({u"speech"_s, u"--text"_s, u"hi"_s, u"--noise"_s, noise, u"--wav-out"_s, wav});
      QCOMPARE(run.exitCode, 2);
      QVERIFY2(run.err.contains(u"--noise: expected a number from 0 to 1, got '%1'"_s.arg(noise)), qPrintable(run.err));
      QVERIFY(!QFileInfo::exists(wav));
    }
    // The float options of the other commands, through the same parser.
    const Run sharpen = runCli({u"align"_s, u"--model"_s, QStringLiteral(ATTN_TEST_DATA_DIR "/seq2seq/random-speech"),
                                u"--text"_s, u"hi"_s, u"--sharpen"_s, u"nan"_s, u"--out"_s, wav});
    QCOMPARE(sharpen.exitCode, 2);
    QVERIFY2(sharpen.err.contains(u"--sharpen: 'nan' is not a finite number"_s), qPrintable(sharpen.err));
    const Run temperature = runCli({u"lab"_s, u"--temperature"_s, u"inf"_s, u"--out"_s, dir_.filePath(u"t.png"_s)});
    QCOMPARE(temperature.exitCode, 2);
    QVERIFY2(temperature.err.contains(u"--temperature: 'inf' is not a finite number"_s), qPrintable(temperature.err));
  }

  void batchFieldsAreCheckedByTypeAndRange() {
    const struct {
      QByteArray line;
      QString says;
    } cases[] = {
        {"{\"text\": \"hi\", \"rate\": \"fast\"}", u"\"rate\" must be a whole number from 80 to 450"_s},
        {"{\"text\": \"hi\", \"pitch\": 1e300}", u"\"pitch\" must be a whole number from 0 to 99"_s},
        {"{\"text\": \"hi\", \"voice\": 7}", u"\"voice\" must be a string"_s},
        {"{\"text\": \"hi\", \"noise\": 1e300}", u"\"noise\": noise 1e+300: expected a finite number from 0 to 1"_s},
        {"{\"text\": \"hi\", \"seed\": -1}", u"\"seed\" must be a whole number from 0 to 4294967295"_s},
    };
    int n = 0;
    for (const auto& c : cases) {
      const QString batch = write(u"fields-%1.jsonl"_s.arg(n++), c.line + '\n');
      const Run run = runCli({u"speech"_s, u"--batch"_s, batch, u"--out-dir"_s, dir_.filePath(u"fields"_s)});
      QCOMPARE(run.exitCode, 1);
      QVERIFY2(run.err.contains(batch + u":1: "_s + c.says), qPrintable(run.err));
    }
  }

  // 114 kB of text made 2.6 GB of samples and a 1 GB JSON; the text is now refused before espeak-ng sees it.
  void aTextOverTheLimitIsRefusedBeforeSynthesis() {
    const QString json = dir_.filePath(u"long.json"_s);
    const Run run = runCli({u"speech"_s, u"--text"_s, QString(114000, u'a'), u"--json"_s, json});
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(run.err.contains(u"text: is 114,000 bytes; espeak-ng is given at most 4,096 bytes at a time"_s),
             qPrintable(run.err));
    QVERIFY(!QFileInfo::exists(json));
  }

  // Issue 42: each line was capped (4,096 bytes, 10 minutes) but not the batch: 100,000 lines of 4 kB would have run
  // for days. The lines and their text are counted over the whole file before the first is said.
  void aBatchOverItsTotalsIsRefusedBeforeSynthesis() {
    QByteArray many;
    for (int i = 0; i < 10001; ++i) many += "{\"text\": \"a\"}\n";
    const QString lines = write(u"many.jsonl"_s, many);
    const QString out = dir_.filePath(u"many"_s);
    const Run tooMany = runCli({u"speech"_s, u"--batch"_s, lines, u"--out-dir"_s, out});
    QCOMPARE(tooMany.exitCode, 1);
    QVERIFY2(
        tooMany.err.contains(lines + u":10001: this is utterance 10,001 of the batch, over the 10,000 a batch says"_s),
        qPrintable(tooMany.err));
    QVERIFY(!QFileInfo::exists(out));  // refused before anything was said or written

    const QByteArray line = "{\"text\": \"" + QByteArray("word ").repeated(800) + "\"}\n";  // 4,000 bytes
    const QString text = write(u"long-text.jsonl"_s, "\n" + line.repeated(33));
    const QString textOut = dir_.filePath(u"long-text"_s);
    QElapsedTimer clock;
    clock.start();
    const Run tooLong = runCli({u"speech"_s, u"--batch"_s, text, u"--out-dir"_s, textOut});
    QCOMPARE(tooLong.exitCode, 1);
    QVERIFY2(tooLong.err.contains(text + u":34: the batch's text comes to 132,000 bytes by this line, over the 131,072 "
                                         u"bytes a batch says (about two hours of speech)"_s),
             qPrintable(tooLong.err));
    QVERIFY2(clock.elapsed() < 20000, "the batch was said before it was refused");  // 32 lines said: about a minute
    QVERIFY(!QFileInfo::exists(textOut));
  }
};

ATTN_QT_TEST(TestSpeechCli, Gui);

}  // namespace test_speech_cli
#include "test_speech_cli.moc"
