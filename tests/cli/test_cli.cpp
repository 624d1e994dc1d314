// attnscope-cli as a user runs it: PNG and CSV written and read back, rows of softmax maps sum to 1,
// bad input exits non-zero with a message naming the input.
#include "qt_test_registry.h"
#include "attn/lab/lab.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <set>
#include <string>

#include "cli_run.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include <sys/stat.h>

using namespace Qt::StringLiterals;

namespace test_cli {

namespace {

QList<QStringList> readCsv(const QString& path) {
  QFile file(path);
  QList<QStringList> rows;
  if (!file.open(QIODevice::ReadOnly)) return rows;
  // Tokens of the default sentences hold no commas or quotes, so a plain split is enough here; the
  // quoting itself is tested in tests/ui/test_export.
  for (const QByteArray& line : file.readAll().split('\n')) {
    const QByteArray trimmed = line.endsWith('\r') ? line.chopped(1) : line;
    if (!trimmed.isEmpty()) rows.append(QString::fromUtf8(trimmed).split(u','));
  }
  return rows;
}

bool notBlank(const QImage& image) {
  QSet<QRgb> colours;
  for (int y = 0; y < image.height(); y += 2) {
    for (int x = 0; x < image.width(); x += 2) colours.insert(image.pixel(x, y));
  }
  return colours.size() >= 12;
}

// Viridis, the CLI's default colour map (matplotlib's stops, as ui/render/colormap.cpp), sampled finely:
// the t of the nearest sample when `pixel` is within `tolerance` of one (sum of the channel differences).
std::optional<double> viridisT(QRgb pixel, int tolerance) {
  static const std::vector<QRgb> table = [] {
    constexpr QRgb stops[] = {0x440154, 0x482475, 0x414487, 0x355f8d, 0x2a788e, 0x21918c,
                              0x22a884, 0x44bf70, 0x7ad151, 0xbddf26, 0xfde725};
    std::vector<QRgb> out;
    for (int i = 0; i <= 500; ++i) {
      const double pos = i / 500.0 * 10.0;
      const int k = std::min(9, int(pos));
      const double f = pos - k;
      const auto mix = [f](int a, int b) { return int(std::lround(a + (b - a) * f)); };
      out.push_back(qRgb(mix(qRed(stops[k]), qRed(stops[k + 1])), mix(qGreen(stops[k]), qGreen(stops[k + 1])),
                         mix(qBlue(stops[k]), qBlue(stops[k + 1]))));
    }
    return out;
  }();
  int best = tolerance + 1;
  std::optional<double> t;
  for (std::size_t i = 0; i < table.size(); ++i) {
    const int d = std::abs(qRed(pixel) - qRed(table[i])) + std::abs(qGreen(pixel) - qGreen(table[i])) +
                  std::abs(qBlue(pixel) - qBlue(table[i]));
    if (d < best) {
      best = d;
      t = double(i) / double(table.size() - 1);
    }
  }
  return t;
}

}  // namespace

// The names in `folder` as bytes, and the folder removed (QTemporaryDir cannot remove what Qt cannot name).
std::set<std::string> takeNames(const QString& folder) {
  const std::filesystem::path path = QFile::encodeName(folder).toStdString();
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(path)) names.insert(entry.path().filename().string());
  std::filesystem::remove_all(path);
  return names;
}

class TestCli : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;

 private slots:
  void rendersPngAndCsv() {
    const QString png = dir_.filePath(u"map.png"_s);
    const QString csv = dir_.filePath(u"m.csv"_s);
    const Run run = runCli({u"lab"_s, u"--mechanism"_s, u"additive"_s, u"--query"_s, u"she ate the apples"_s,
                            u"--source"_s, u"the apple fell from the tree"_s, u"--out"_s, png, u"--csv"_s, csv,
                            u"--width"_s, u"640"_s, u"--height"_s, u"480"_s});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QVERIFY(run.out.startsWith(u"lab: additive"_s));
    QImage image;
    QVERIFY(image.load(png));
    QCOMPARE(image.size(), QSize(640, 480));
    QVERIFY(notBlank(image));

    attn::lab::LabRequest request{"she ate the apples", "the apple fell from the tree", {}};
    request.params.score = attn::ScoreKind::Additive;
    const auto expected = attn::lab::run_lab(request);
    QVERIFY(expected);
    const auto& map = expected->trace.maps().front();
    const auto rows = readCsv(csv);
    QCOMPARE(rows.size(), int(map.weights.rows()) + 1);
    for (const auto& row : rows) QCOMPARE(row.size(), int(map.weights.cols()) + 1);
    for (int r = 0; r < map.weights.rows(); ++r) {
      for (int c = 0; c < map.weights.cols(); ++c) QCOMPARE(rows[r + 1][c + 1].toFloat(), map.weights(r, c));
    }
  }

  void softmaxRowsSumToOne_data() {
    QTest::addColumn<QString>("mechanism");
    QTest::addColumn<QStringList>("extra");
    QTest::newRow("additive") << u"additive"_s << QStringList();
    QTest::newRow("scaled-dot") << u"scaled-dot"_s << QStringList();
    QTest::newRow("general T=0.5") << u"general"_s << QStringList{u"--temperature"_s, u"0.5"_s};
    QTest::newRow("self causal") << u"self"_s << QStringList{u"--causal"_s};
    QTest::newRow("multi-head head 2") << u"multi-head"_s << QStringList{u"--heads"_s, u"4"_s, u"--map"_s, u"2"_s};
    QTest::newRow("location") << u"location"_s << QStringList();
    QTest::newRow("pooling") << u"pooling"_s << QStringList();
    QTest::newRow("sparsemax") << u"global"_s << QStringList{u"--normaliser"_s, u"sparsemax"_s};
  }
  void softmaxRowsSumToOne() {
    QFETCH(QString, mechanism);
    QFETCH(QStringList, extra);
    const QString csv = dir_.filePath(mechanism + u".csv"_s);
    const Run run = runCli(QStringList{u"lab"_s, u"--mechanism"_s, mechanism, u"--csv"_s, csv} + extra);
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    const auto rows = readCsv(csv);
    QVERIFY(rows.size() >= 2);
    for (int r = 1; r < rows.size(); ++r) {
      double sum = 0.0;
      for (int c = 1; c < rows[r].size(); ++c) sum += rows[r][c].toDouble();
      QVERIFY2(std::abs(sum - 1.0) < 1e-5, qPrintable(u"row %1 sums to %2"_s.arg(r).arg(sum, 0, 'g', 9)));
    }
  }

  // Issue 41: capsule routing's CSV (and picture) is its last iteration, the routed couplings, unless --map says
  // otherwise; the first iteration is uniform by definition.
  void routingOpensOnItsLastIteration() {
    const QString last = dir_.filePath(u"routing-last.csv"_s), first = dir_.filePath(u"routing-first.csv"_s);
    const QStringList args{u"lab"_s, u"--mechanism"_s, u"capsule-routing"_s, u"--iterations"_s, u"3"_s};
    Run run = runCli(args + QStringList{u"--csv"_s, last});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    run = runCli(args + QStringList{u"--map"_s, u"0"_s, u"--csv"_s, first});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    const auto spread = [](const QList<QStringList>& rows) {
      double lo = 1e300, hi = -1e300;
      for (int r = 1; r < rows.size(); ++r) {
        for (int c = 1; c < rows[r].size(); ++c) {
          lo = std::min(lo, rows[r][c].toDouble());
          hi = std::max(hi, rows[r][c].toDouble());
        }
      }
      return hi - lo;
    };
    QVERIFY(spread(readCsv(first)) < 1e-9);
    QVERIFY(spread(readCsv(last)) > 1e-3);
  }

  void vectorFormats_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QByteArray>("magic");
    QTest::newRow("svg") << u"map.svg"_s << QByteArray("<?xml");
    QTest::newRow("pdf") << u"map.pdf"_s << QByteArray("%PDF-");
  }
  void vectorFormats() {
    QFETCH(QString, name);
    QFETCH(QByteArray, magic);
    const QString path = dir_.filePath(name);
    const Run run = runCli({u"lab"_s, u"--mechanism"_s, u"local-p"_s, u"--out"_s, path});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QVERIFY(file.read(5).startsWith(magic));
  }

  void gridOfEveryMap() {
    const QString png = dir_.filePath(u"grid.png"_s);
    const QString csv = dir_.filePath(u"hops.csv"_s);
    const Run run = runCli({u"lab"_s, u"--mechanism"_s, u"multi-hop"_s, u"--hops"_s, u"3"_s, u"--map"_s, u"all"_s,
                            u"--out"_s, png, u"--csv"_s, csv});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QImage image;
    QVERIFY(image.load(png));
    QVERIFY(notBlank(image));
    for (int i = 0; i < 3; ++i) QVERIFY(QFile::exists(dir_.filePath(u"hops-%1.csv"_s.arg(i))));
  }

  // More words than the lab takes: the map is drawn from the first kMaxTokens, and stderr says so.
  void tooManyWordsAreTruncatedWithAWarning() {
    const QString out = dir_.filePath(u"long.png"_s);
    const Run run =
        runCli({u"lab"_s, u"--source"_s, QString(u"word "_s).repeated(attn::lab::kMaxTokens + 10), u"--out"_s, out});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QVERIFY2(run.err.contains(u"warning: source truncated to 2048 tokens (of 2058)"_s), qPrintable(run.err));
    QVERIFY(QFile::exists(out));
  }

  void aLongInputFileIsNamedInItsWarning() {
    const QString input = dir_.filePath(u"long-notes.txt"_s);
    QFile file(input);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("the query\n" + QByteArray("word ").repeated(attn::lab::kMaxTokens + 10));
    file.close();
    const Run run = runCli({u"lab"_s, u"--input"_s, input, u"--out"_s, dir_.filePath(u"long-input.png"_s)});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QVERIFY2(run.err.contains(u"warning: "_s + input + u": source truncated to 2048 tokens (of 2058)"_s),
             qPrintable(run.err));
  }

  // Issue 42: a request over the Lab's budget read with --input is refused naming that file (it said "lab request").
  void aRequestOverTheBudgetNamesItsInputFile() {
    const QString input = dir_.filePath(u"heavy-notes.txt"_s);
    QFile file(input);
    QVERIFY(file.open(QIODevice::WriteOnly));
    QByteArray words = "the query\n";
    for (int i = 0; i < attn::lab::kMaxTokens; ++i) words += "w" + QByteArray::number(i) + ' ';
    file.write(words);
    file.close();
    const QString out = dir_.filePath(u"heavy.png"_s);
    const Run run = runCli(
        {u"lab"_s, u"--input"_s, input, u"--mechanism"_s, u"multi-head"_s, u"--heads"_s, u"64"_s, u"--out"_s, out});
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(run.err.contains(input + u": Multi-head self-attention over 2048 words: its maps and working memory"_s),
             qPrintable(run.err));
    QVERIFY2(!run.err.contains(u"lab request"_s), qPrintable(run.err));
    QVERIFY(!QFile::exists(out));
  }

  void badInputFails_data() {
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("message");
    const QString out = dir_.filePath(u"never.png"_s);
    QTest::newRow("empty source") << QStringList{u"lab"_s, u"--source"_s, QString(), u"--out"_s, out} << 1
                                  << u"source"_s;
    QTest::newRow("unknown mechanism") << QStringList{u"lab"_s, u"--mechanism"_s, u"telepathy"_s, u"--out"_s, out} << 2
                                       << u"telepathy"_s;
    QTest::newRow("no output") << QStringList{u"lab"_s} << 2 << u"--out"_s;
    QTest::newRow("bad extension") << QStringList{u"lab"_s, u"--out"_s, dir_.filePath(u"x.gif"_s)} << 2 << u".png"_s;
    QTest::newRow("not a number") << QStringList{u"lab"_s, u"--heads"_s, u"four"_s, u"--out"_s, out} << 2
                                  << u"--heads"_s;
    QTest::newRow("unknown option") << QStringList{u"lab"_s, u"--bogus"_s} << 2 << u"bogus"_s;
    QTest::newRow("unknown command") << QStringList{u"paint"_s} << 2 << u"paint"_s;
    QTest::newRow("map out of range") << QStringList{u"lab"_s, u"--map"_s, u"99"_s, u"--out"_s, out} << 2 << u"99"_s;
    // Not files: refused by name at once, not waited on (a FIFO without a writer) or read without end.
    const QString fifo = dir_.filePath(u"pipe.txt"_s);
    QVERIFY(::mkfifo(QFile::encodeName(fifo).constData(), 0600) == 0 || QFileInfo(fifo).exists());
    QTest::newRow("input is a FIFO") << QStringList{u"lab"_s, u"--input"_s, fifo, u"--out"_s, out} << 1
                                     << u"pipe.txt: is a FIFO (named pipe), not a text file"_s;
    QTest::newRow("input is /dev/zero") << QStringList{u"lab"_s, u"--input"_s, u"/dev/zero"_s, u"--out"_s, out} << 1
                                        << u"/dev/zero: is a character device, not a text file"_s;
    QTest::newRow("input is a folder") << QStringList{u"lab"_s, u"--input"_s, dir_.path(), u"--out"_s, out} << 1
                                       << u"is a directory, not a text file"_s;
  }
  void badInputFails() {
    QFETCH(QStringList, arguments);
    QFETCH(int, exitCode);
    QFETCH(QString, message);
    QElapsedTimer clock;
    clock.start();
    const Run run = runCli(arguments);
    QVERIFY2(clock.elapsed() < 30000, "attnscope-cli took more than 30 s to refuse its input");
    QCOMPARE(run.exitCode, exitCode);
    QVERIFY2(run.err.contains(message), qPrintable(run.err));
    QVERIFY(!QFile::exists(dir_.filePath(u"never.png"_s)));
  }

  void invalidUtf8NamesTheOffset() {
    // QProcess would re-encode a QString argument, so a shell passes the raw byte.
    QProcess process;
    process.start(u"/bin/sh"_s, {u"-c"_s, u"exec \"$0\" lab --query \"$(printf 'she \\377 ate')\" --out \"$1\""_s,
                                 QStringLiteral(ATTNSCOPE_CLI), dir_.filePath(u"utf8.png"_s)});
    QVERIFY(process.waitForFinished(60000));
    QCOMPARE(process.exitCode(), 1);
    const QString err = QString::fromLocal8Bit(process.readAllStandardError());
    QVERIFY2(err.contains(u"query"_s) && err.contains(u"byte 4"_s), qPrintable(err));
  }

  void namesThatAreNotUtf8AreUsedAsTheirBytes() {
    // "caf\xE9.png" (Latin-1): read as given, and every output written under the very name asked for, not under
    // the "?" or U+FFFD that Qt's own conversions make of the byte. A shell passes the raw bytes.
    const QString folder = dir_.filePath(u"bytes"_s);
    QVERIFY(QDir().mkpath(folder));
    QVERIFY(QFile::copy(QStringLiteral(ATTN_TEST_DATA_DIR "/images/pattern-64x48.png"), folder + u"/photo.png"_s));
    const char* script =
        "cd \"$1\" && mv photo.png \"$(printf 'caf\\351.png')\" && "
        "\"$0\" glimpse --image \"$(printf 'caf\\351.png')\" --gaussian cx=20,cy=20,d=2,s=1,N=4 "
        "--out \"$(printf 'g\\351.png')\" --json \"$(printf 'g\\351.json')\" && "
        "\"$0\" lab --mechanism additive --out \"$(printf 'l\\351.svg')\" --csv \"$(printf 'l\\351.csv')\"";
    QProcess process;
    process.start(u"/bin/sh"_s, {u"-c"_s, QString::fromLatin1(script), QStringLiteral(ATTNSCOPE_CLI), folder});
    QVERIFY(process.waitForFinished(60000));
    QVERIFY2(process.exitCode() == 0, process.readAllStandardError().constData());
    const std::set<std::string> expected{"caf\xe9.png", "g\xe9.png", "g\xe9.json", "l\xe9.svg", "l\xe9.csv"};
    QCOMPARE(takeNames(folder), expected);
  }

  // The window's own command line, likewise (issue 18): a dump, a model folder, a photo and a text file whose
  // names are not UTF-8 open (the window exits non-zero with "no such file" when a file given does not load),
  // and the screenshot goes under the very name asked for.
  void windowOpensNamesThatAreNotUtf8() {
    const QString folder = dir_.filePath(u"window-bytes"_s);
    QVERIFY(QDir().mkpath(folder));
    QVERIFY(QFile::copy(QStringLiteral(ATTN_TEST_DATA_DIR "/images/pattern-64x48.png"), folder + u"/photo.png"_s));
    const char* script =
        "cd \"$1\" && mv photo.png \"$(printf 'p\\351.png')\" && cp -r \"$2/transformers/bert\" \"$(printf 'm\\351')\" "
        "&& "
        "printf 'the cat\\nsat on the mat\\n' > \"$(printf 't\\351.txt')\" && "
        "\"$0\" run --model \"$(printf 'm\\351')\" --text 'hello world' --dump \"$(printf 'd\\351.attn.safetensors')\" "
        "&& "
        "\"$3\" --tab transformer --model \"$(printf 'd\\351.attn.safetensors')\" --screenshot \"$(printf "
        "'s1\\351.png')\" && "
        "\"$3\" --tab transformer --model \"$(printf 'm\\351')\" --text hi --screenshot \"$(printf 's2\\351.png')\" && "
        "\"$3\" --tab glimpse --image \"$(printf 'p\\351.png')\" --screenshot \"$(printf 's3\\351.png')\" && "
        "\"$3\" \"$(printf 't\\351.txt')\" --screenshot \"$(printf 's4\\351.png')\"";
    QProcess process;
    process.start(u"/bin/sh"_s, {u"-c"_s, QString::fromLatin1(script), QStringLiteral(ATTNSCOPE_CLI), folder,
                                 QStringLiteral(ATTN_TEST_DATA_DIR), QStringLiteral(ATTNSCOPE_GUI)});
    QVERIFY(process.waitForFinished(120000));
    const QByteArray err = process.readAllStandardError();
    const std::set<std::string> names = takeNames(folder);
    QVERIFY2(process.exitCode() == 0, err.constData());
    for (const char* shot : {"s1\xe9.png", "s2\xe9.png", "s3\xe9.png", "s4\xe9.png"})
      QVERIFY2(names.contains(shot), shot);
  }

  // Qt takes --session out of argv for X11 session management; AttnScope's own --session must still reach the
  // window, in both spellings: a session file that is not there is an error naming it (it was silently ignored).
  void windowTakesItsSessionOption() {
    const QString missing = dir_.filePath(u"no-such.attnscope.json"_s);
    for (const QStringList& session : {QStringList{u"--session"_s, missing}, QStringList{u"--session="_s + missing}}) {
      QProcess process;
      process.start(QStringLiteral(ATTNSCOPE_GUI), session + QStringList{u"--screenshot"_s, dir_.filePath(u"x.png"_s)});
      QVERIFY(process.waitForFinished(60000));
      const QString err = QString::fromLocal8Bit(process.readAllStandardError());
      QCOMPARE(process.exitCode(), 2);
      QVERIFY2(err.contains(u"no-such.attnscope.json"_s), qPrintable(err));
    }
  }

  void helpVersionAndList() {
    const Run help = runCli({u"--help"_s});
    QCOMPARE(help.exitCode, 0);
    QVERIFY(help.out.contains(u"lab"_s) && help.out.contains(u"demo"_s));
    const Run labHelp = runCli({u"lab"_s, u"--help"_s});
    QCOMPARE(labHelp.exitCode, 0);
    for (const char* option : {"--mechanism", "--temperature", "--sigma", "--heads", "--causal", "--map", "--csv"}) {
      QVERIFY2(labHelp.out.contains(QLatin1String(option)), option);
    }
    const Run version = runCli({u"--version"_s});
    QCOMPARE(version.exitCode, 0);
    QVERIFY(version.out.contains(u"Qt"_s) && version.out.contains(u"Eigen"_s) && version.out.contains(u"OpenCV"_s));
    const Run list = runCli({u"lab"_s, u"--list"_s});
    QCOMPARE(list.exitCode, 0);
    for (const auto& info : attn::lab::mechanisms()) {
      QVERIFY2(list.out.contains(QString::fromUtf8(info.key.data(), qsizetype(info.key.size()))), info.key.data());
      QVERIFY(list.out.contains(QString::fromUtf8(info.formula.data(), qsizetype(info.formula.size()))));
    }
  }

  // Issue 17: the demo's hierarchical.png drew its one-row maps (each sentence's words, the sentences) as
  // blocks several times taller than wide, and had no colour bar, unlike the single-map figures. In the
  // picture itself: every block of one viridis colour is about as tall as it is wide (the cells), and there
  // is a viridis colour bar (a column whose colours fall from the top of the scale to its bottom) per map.
  void demoHierarchicalFigureHasSquareCellsAndColourBars() {
    const QString out = dir_.filePath(u"demo-hierarchical"_s);
    const Run run = runCli({u"demo"_s, u"--out-dir"_s, out});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QImage image;
    QVERIFY(image.load(QDir(out).filePath(u"hierarchical.png"_s)));
    image = image.convertToFormat(QImage::Format_RGB32);
    int cells = 0;
    QList<QPoint> bars;  // the top of each colour bar found
    for (int x = 0; x < image.width(); ++x) {
      int y = 0;
      while (y < image.height()) {
        // A vertical run of one colour: a cell column when it is a viridis colour and 12 px or longer.
        const QRgb colour = image.pixel(x, y);
        int end = y + 1;
        while (end < image.height() && image.pixel(x, end) == colour) ++end;
        if (end - y >= 12 && viridisT(colour, 3)) {
          int left = x, right = x;
          const int middle = (y + end) / 2;
          while (left > 0 && image.pixel(left - 1, middle) == colour) --left;
          while (right + 1 < image.width() && image.pixel(right + 1, middle) == colour) ++right;
          QVERIFY2(end - y <= (right - left + 1) * 5 / 4 + 2,
                   qPrintable(u"a cell of %1 at (%2, %3) is %4 px tall and %5 px wide"_s.arg(QColor(colour).name())
                                  .arg(x)
                                  .arg(y)
                                  .arg(end - y)
                                  .arg(right - left + 1)));
          ++cells;
        }
        y = end;
      }
      // A colour bar: 30 px or more of viridis colours, each row's t no higher than the row above's, and many
      // of them.
      int runStart = -1;
      double previous = 2.0;
      QSet<QRgb> colours;
      for (int yy = 0; yy <= image.height(); ++yy) {
        const auto t = yy < image.height() ? viridisT(image.pixel(x, yy), 6) : std::nullopt;
        if (t && *t <= previous + 0.01) {
          if (runStart < 0) runStart = yy;
          previous = *t;
          colours.insert(image.pixel(x, yy));
          continue;
        }
        if (runStart >= 0 && yy - runStart >= 30 && colours.size() >= 20 &&
            std::none_of(bars.begin(), bars.end(), [&](const QPoint& bar) {
              return x - bar.x() <= 20 && std::abs(runStart - bar.y()) <= 10;  // the same bar, one column on
            })) {
          bars.append(QPoint(x, runStart));
        }
        runStart = t ? yy : -1;
        previous = t ? *t : 2.0;
        colours.clear();
        if (t) colours.insert(image.pixel(x, yy));
      }
    }
    QVERIFY2(cells > 0, "no cells found");
    QVERIFY2(bars.size() >= 3, qPrintable(u"%1 colour bars"_s.arg(bars.size())));
  }

  void demoRendersEveryView() {
    const QString out = dir_.filePath(u"demo"_s);
    const Run run = runCli({u"demo"_s, u"--out-dir"_s, out});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    const QStringList lines = run.out.split(u'\n', Qt::SkipEmptyParts);
    QVERIFY(lines.size() >= 5);
    for (const QString& line : lines) {
      const QString path = line.section(u"  ("_s, 0, 0);
      QImage image;
      QVERIFY2(image.load(path), qPrintable(path));
      QVERIFY2(notBlank(image), qPrintable(path));
    }
    QCOMPARE(QDir(out).entryList({u"*.png"_s}).size(), lines.size());
  }
};

ATTN_QT_TEST(TestCli, Core);

}  // namespace test_cli
#include "test_cli.moc"
