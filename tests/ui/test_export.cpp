// Exports: PNG, SVG and PDF of the view and the matrix as CSV, each read back.
#include "qt_test_registry.h"
#include "views/qcustomplot.h"
#include "ui_test_support.h"
#include "views/export.h"
#include "views/heatmap_view.h"

#include <QFile>
#include <QPainter>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTest>

using namespace attn::ui;
using namespace Qt::StringLiterals;

namespace test_export {

namespace {

// RFC 4180 reader, strict enough to catch a quoting mistake in the writer.
QList<QStringList> parseCsv(const QByteArray& bytes) {
  QList<QStringList> rows;
  QStringList row;
  QByteArray field;
  bool quoted = false;
  for (qsizetype i = 0; i < bytes.size(); ++i) {
    const char c = bytes[i];
    if (quoted) {
      if (c == '"' && i + 1 < bytes.size() && bytes[i + 1] == '"') {
        field.append('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field.append(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row.append(QString::fromUtf8(field));
      field.clear();
    } else if (c == '\r' && i + 1 < bytes.size() && bytes[i + 1] == '\n') {
      row.append(QString::fromUtf8(field));
      field.clear();
      rows.append(row);
      row.clear();
      ++i;
    } else {
      field.append(c);
    }
  }
  if (!field.isEmpty() || !row.isEmpty()) {
    row.append(QString::fromUtf8(field));
    rows.append(row);
  }
  return rows;
}

}  // namespace

class TestExport : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  std::shared_ptr<const attn::lab::LabResult> result_;
  std::unique_ptr<HeatmapView> view_;

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    result_ = testing::runOrNull(testing::defaultRequest());
    QVERIFY2(result_, "run_lab refused the default request");
    view_ = std::make_unique<HeatmapView>();
    view_->resize(760, 560);
    view_->show();
    view_->setMap(std::shared_ptr<const attn::AttentionMap>(result_, &result_->trace.maps().front()));
    view_->replotNow();
  }

  void formatsByExtension_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<int>("format");
    QTest::newRow("png") << u"a/map.png"_s << int(ExportFormat::Png);
    QTest::newRow("upper-case svg") << u"map.SVG"_s << int(ExportFormat::Svg);
    QTest::newRow("pdf") << u"map.pdf"_s << int(ExportFormat::Pdf);
    QTest::newRow("csv") << u"m.csv"_s << int(ExportFormat::Csv);
  }
  void formatsByExtension() {
    QFETCH(QString, path);
    QFETCH(int, format);
    QCOMPARE(exportFormatFor(path), std::optional(ExportFormat(format)));
  }

  void unknownExtensionsAreRefused() {
    QCOMPARE(exportFormatFor(u"map.jpeg"_s), std::nullopt);
    const auto written = exportHeatmap(*view_, dir_.filePath(u"map.bmp"_s));
    QVERIFY(!written);
    QVERIFY(QString::fromStdString(written.error().message()).contains(u".png"_s));
  }

  void pngReadsBack() {
    const QString path = dir_.filePath(u"view.png"_s);
    const auto written = exportHeatmap(*view_, path);
    QVERIFY2(written, written ? "" : written.error().message().c_str());
    QImage image;
    QVERIFY(image.load(path));
    QCOMPARE(image.size(), view_->plot()->size());
    QVERIFY(testing::looksDrawn(image));
  }

  void svgReadsBack() {
    const QString path = dir_.filePath(u"view.svg"_s);
    const auto written = exportHeatmap(*view_, path);
    QVERIFY2(written, written ? "" : written.error().message().c_str());
    QSvgRenderer renderer(path);
    QVERIFY(renderer.isValid());
    QCOMPARE(renderer.viewBox().size(), view_->plot()->size());
    QImage image(view_->plot()->size(), QImage::Format_ARGB32);
    image.fill(Qt::white);
    QPainter painter(&image);
    renderer.render(&painter);
    painter.end();
    QVERIFY(testing::looksDrawn(image));
    // The tokens are text in the drawing, not only pixels.
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray svg = file.readAll();
    QVERIFY(svg.contains(QByteArray::fromStdString(result_->trace.maps().front().col_labels.front())));
  }

  void pdfReadsBack() {
    const QString path = dir_.filePath(u"view.pdf"_s);
    const auto written = exportHeatmap(*view_, path);
    QVERIFY2(written, written ? "" : written.error().message().c_str());
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray pdf = file.readAll();
    QVERIFY(pdf.startsWith("%PDF-"));
    QVERIFY(pdf.trimmed().endsWith("%%EOF"));
    QVERIFY(pdf.contains("/Image"));  // the colour map
    QVERIFY(pdf.size() > 2000);
  }

  void csvReadsBackAsTheMatrix() {
    const auto& map = result_->trace.maps().front();
    const QString path = dir_.filePath(u"matrix.csv"_s);
    const auto written = writeMatrixCsv(map, path);
    QVERIFY2(written, written ? "" : written.error().message().c_str());
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const auto rows = parseCsv(file.readAll());
    QCOMPARE(rows.size(), int(map.weights.rows()) + 1);
    QCOMPARE(rows.front().size(), int(map.weights.cols()) + 1);
    QVERIFY(rows.front().front().isEmpty());
    for (int c = 0; c < map.weights.cols(); ++c) {
      QCOMPARE(rows.front()[c + 1], QString::fromStdString(map.col_labels[std::size_t(c)]));
    }
    for (int r = 0; r < map.weights.rows(); ++r) {
      const QStringList& row = rows[r + 1];
      QCOMPARE(row.size(), int(map.weights.cols()) + 1);
      QCOMPARE(row.front(), QString::fromStdString(map.row_labels[std::size_t(r)]));
      for (int c = 0; c < map.weights.cols(); ++c) {
        bool ok = false;
        QCOMPARE(row[c + 1].toFloat(&ok), map.weights(r, c));  // %.9g: every float reads back exactly
        QVERIFY(ok);
      }
    }
  }

  void csvQuotesTokens_data() {
    QTest::addColumn<QByteArray>("token");
    QTest::addColumn<QByteArray>("field");
    QTest::newRow("plain") << QByteArray("apple") << QByteArray("apple");
    QTest::newRow("comma") << QByteArray("a,b") << QByteArray("\"a,b\"");
    QTest::newRow("quote") << QByteArray("say \"hi\"") << QByteArray("\"say \"\"hi\"\"\"");
    QTest::newRow("newline") << QByteArray("x\ny") << QByteArray("\"x\ny\"");
    QTest::newRow("utf-8") << QByteArray("\xe8\x8b\xb9") << QByteArray("\xe8\x8b\xb9");
  }
  void csvQuotesTokens() {
    QFETCH(QByteArray, token);
    QFETCH(QByteArray, field);
    QCOMPARE(csvField(token.toStdString()), field);
  }

  void csvWithAwkwardTokensParses() {
    attn::AttentionMap map;
    map.weights.resize(2, 2);
    map.weights << 0.5f, 0.5f, 0.125f, 0.875f;
    map.row_labels = {",", "\""};
    map.col_labels = {"a,b", "say \"hi\""};
    const auto rows = parseCsv(matrixCsv(map));
    QCOMPARE(rows.size(), 3);
    QCOMPARE(rows[0], (QStringList{QString(), u"a,b"_s, u"say \"hi\""_s}));
    QCOMPARE(rows[1], (QStringList{u","_s, u"0.5"_s, u"0.5"_s}));
    QCOMPARE(rows[2], (QStringList{u"\""_s, u"0.125"_s, u"0.875"_s}));
  }

  void unwritablePathsReportTheFile() {
    const QString path = dir_.filePath(u"missing-dir/matrix.csv"_s);
    const auto written = writeMatrixCsv(result_->trace.maps().front(), path);
    QVERIFY(!written);
    QVERIFY(QString::fromStdString(written.error().message()).contains(u"matrix.csv"_s));
  }

  void cleanupTestCase() { view_.reset(); }
};

ATTN_QT_TEST(TestExport, Widgets);

}  // namespace test_export
#include "test_export.moc"
