// ui/render: the pure functions behind every heatmap.
#include "qt_test_registry.h"
#include "render/colormap.h"
#include "render/figure_export.h"
#include "render/heatmap_figure.h"
#include "render/heatmap_render.h"
#include "views/plot_data.h"
#include "ui_test_support.h"
#include "views/qcustomplot.h"

#include <QFile>
#include <QPainter>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

using namespace attn::ui;
using namespace Qt::StringLiterals;

namespace test_render {

class TestRender : public QObject {
  Q_OBJECT

 private slots:
  void colormapEnds_data() {
    QTest::addColumn<int>("map");
    QTest::addColumn<QRgb>("low");
    QTest::addColumn<QRgb>("high");
    QTest::newRow("viridis") << int(render::Colormap::Viridis) << QRgb(0xff440154) << QRgb(0xfffde725);
    QTest::newRow("magma") << int(render::Colormap::Magma) << QRgb(0xff000004) << QRgb(0xfffcfdbf);
    QTest::newRow("greys") << int(render::Colormap::Greys) << QRgb(0xffffffff) << QRgb(0xff111111);
  }
  void colormapEnds() {
    QFETCH(int, map);
    QFETCH(QRgb, low);
    QFETCH(QRgb, high);
    QCOMPARE(render::sample(render::Colormap(map), 0.0), low);
    QCOMPARE(render::sample(render::Colormap(map), 1.0), high);
    QCOMPARE(render::sample(render::Colormap(map), -3.0), low);  // clamped
    QCOMPARE(render::sample(render::Colormap(map), 7.0), high);
    // The QCustomPlot gradient uses the same stops.
    auto gradient = render::gradient(render::Colormap(map));
    QCOMPARE(gradient.color(0.0, QCPRange(0, 1)), low);
    QCOMPARE(gradient.color(1.0, QCPRange(0, 1)), high);
  }

  void everyColormapIsFindableAndMonotoneInLightness() {
    for (const auto& info : render::colormaps()) {
      QCOMPARE(render::findColormap(QString::fromLatin1(info.key)), std::optional(info.id));
      const auto stops = render::colorStops(info.id);
      QVERIFY(stops.size() >= 2);
      if (info.id == render::Colormap::Greys) continue;
      // Perceptually uniform maps get lighter from one end to the other.
      QVERIFY2(QColor(stops.front()).lightness() < QColor(stops.back()).lightness(), info.key);
    }
    QCOMPARE(render::findColormap(u"VIRIDIS"_s), std::optional(render::Colormap::Viridis));
    QCOMPARE(render::findColormap(u"jet"_s), std::nullopt);
  }

  void valueRangeAnchorsWeightsAtZero() {
    attn::Matrix m(2, 2);
    m << 0.25f, 0.75f, 0.5f, 0.5f;
    QCOMPARE(render::valueRange(m, render::RangeMode::Data), (render::ValueRange{0.0, 0.75}));
    QCOMPARE(render::valueRange(m, render::RangeMode::Unit), (render::ValueRange{0.0, 1.0}));
    m << -2.0f, 1.0f, 0.0f, std::numeric_limits<float>::quiet_NaN();
    QCOMPARE(render::valueRange(m, render::RangeMode::Data), (render::ValueRange{-2.0, 1.0}));
    m.setZero();
    const auto flat = render::valueRange(m, render::RangeMode::Data);
    QVERIFY(flat.upper > flat.lower);
  }

  void colorMapDataIsTheMatrix() {
    attn::Matrix m(3, 5);
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 5; ++c) m(r, c) = float(r * 10 + c) / 100.0f;
    }
    QCPColorMapData data(1, 1, QCPRange(0, 1), QCPRange(0, 1));
    render::fillColorMapData(data, m);
    QCOMPARE(data.keySize(), 5);
    QCOMPARE(data.valueSize(), 3);
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 5; ++c) QCOMPARE(float(data.cell(c, r)), m(r, c));
    }
    // Cell centres sit on integer coordinates, so axis coordinate = token index.
    double key = 0;
    double value = 0;
    data.cellToCoord(4, 2, &key, &value);
    QCOMPARE(key, 4.0);
    QCOMPARE(value, 2.0);
  }

  void singleCellAxesStillHaveExtent() {
    attn::Matrix m(1, 4);
    m << 0.1f, 0.2f, 0.3f, 0.4f;
    QCPColorMapData data(1, 1, QCPRange(0, 1), QCPRange(0, 1));
    render::fillColorMapData(data, m);
    QVERIFY(data.valueRange().size() > 0.0);  // a zero-height row would not be drawn
  }

  void matrixImageHasRowZeroOnTop() {
    attn::Matrix m(2, 3);
    m << 0.0f, 0.0f, 0.0f, 1.0f, 1.0f, 1.0f;
    const QImage image = render::matrixImage(m, render::Colormap::Viridis, {0.0, 1.0});
    QCOMPARE(image.size(), QSize(3, 2));
    QCOMPARE(image.pixel(0, 0), render::sample(render::Colormap::Viridis, 0.0));
    QCOMPARE(image.pixel(2, 1), render::sample(render::Colormap::Viridis, 1.0));
  }

  void labelStride_data() {
    QTest::addColumn<double>("pixelsPerCell");
    QTest::addColumn<double>("minPixels");
    QTest::addColumn<int>("stride");
    QTest::newRow("roomy") << 40.0 << 14.0 << 1;
    QTest::newRow("exact") << 14.0 << 14.0 << 1;
    QTest::newRow("half") << 7.0 << 14.0 << 2;
    QTest::newRow("tiny") << 0.5 << 14.0 << 28;
  }
  void labelStride() {
    QFETCH(double, pixelsPerCell);
    QFETCH(double, minPixels);
    QFETCH(int, stride);
    QCOMPARE(render::labelStride(pixelsPerCell, minPixels), stride);
  }

  void tokenLabels_data() {
    QTest::addColumn<QByteArray>("token");
    QTest::addColumn<QString>("label");
    QTest::newRow("word") << QByteArray("apple") << u"apple"_s;
    QTest::newRow("cjk") << QByteArray("\xe8\x8b\xb9\xe6\x9e\x9c") << u"\u82f9\u679c"_s;
    QTest::newRow("emoji") << QByteArray("\xf0\x9f\x8d\x8e") << u"\U0001F34E"_s;
    QTest::newRow("empty") << QByteArray() << u"\u2205"_s;
    QTest::newRow("inner space") << QByteArray("sentence 1") << u"sentence 1"_s;
    QTest::newRow("only a space") << QByteArray(" ") << u"\u2423"_s;
    QTest::newRow("newline") << QByteArray("\n") << u"\u21b5"_s;
    QTest::newRow("long") << QByteArray("internationalisation-ready") << u"internationalisat\u2026"_s;
  }
  void tokenLabels() {
    QFETCH(QByteArray, token);
    QFETCH(QString, label);
    QCOMPARE(render::tokenLabel(token.toStdString()), label);
  }

  void exactValuesReadBack() {
    for (float v : {0.1f, 1.0f / 3.0f, 0.0f, 1e-8f, 0.99999994f}) {
      const QString text = render::exactValue(v);
      bool ok = false;
      QCOMPARE(text.toFloat(&ok), v);
      QVERIFY(ok);
    }
  }

  // render/heatmap_figure.h: the heatmap attnscope-cli writes, painted without a widget.
  void colorBarTicksAreNiceNumbersWithinTheRange() {
    QCOMPARE(render::colorBarTicks({0.0, 1.0}, 5), (std::vector<double>{0.0, 0.2, 0.4, 0.6, 0.8, 1.0}));
    const auto ticks = render::colorBarTicks({0.0, 0.87}, 5);
    QCOMPARE(ticks.size(), std::size_t(5));
    QCOMPARE(ticks.front(), 0.0);
    QVERIFY(std::abs(ticks.back() - 0.8) < 1e-12);
    QCOMPARE(render::colorBarTicks({-2.0, 1.0}, 3), (std::vector<double>{-2.0, -1.0, 0.0, 1.0}));
    // One tick asked for on a short bar: the nearest nice step, so the bar still says its scale.
    QCOMPARE(render::colorBarTicks({0.0, 0.55}, 1), (std::vector<double>{0.0, 0.5}));
  }

  void heatmapFigureDrawsCellsLabelsAndColourBar() {
    auto map = std::make_shared<attn::AttentionMap>();
    map->weights.resize(3, 4);
    map->weights << 0.0f, 1.0f, 0.0f, 0.0f,  //
        0.0f, 0.5f, 0.25f, 0.25f,            //
        0.0f, 0.5f, 0.0f, 0.5f;
    map->row_labels = {"the", "cat", "sat"};
    map->col_labels = {"le", "chat", "est", "assis"};
    map->row_axis = "queries";
    map->col_axis = "keys";
    render::HeatmapFigure figure;
    figure.map = map;
    QImage image(640, 480, QImage::Format_RGB32);
    image.fill(Qt::white);
    QPainter painter(&image);
    const int used = render::paintHeatmapFigure(painter, image.rect(), figure, QFont());
    painter.end();
    QCOMPARE(used, 480);
    // The brightest cell (row 0, column 1) and the darkest (row 0, column 0) in the map's colours, found along the
    // middle of the first row: the cells take most of the width, the labels and the bar the rest.
    const QRgb high = render::sample(render::Colormap::Viridis, 1.0);
    const QRgb low = render::sample(render::Colormap::Viridis, 0.0);
    int highRun = 0, lowRun = 0, y = -1;
    for (int yy = 0; yy < image.height() && y < 0; ++yy) {
      for (int x = 0; x < image.width(); ++x) {
        if (image.pixel(x, yy) == high) {
          y = yy + 20;
          break;
        }
      }
    }
    QVERIFY(y > 40);  // below the column labels
    for (int x = 0; x < image.width(); ++x) {
      highRun += image.pixel(x, y) == high;
      lowRun += image.pixel(x, y) == low;
    }
    QVERIFY2(highRun > 100 && lowRun > 2 * 100, qPrintable(u"%1 %2"_s.arg(highRun).arg(lowRun)));
    // Labels left of the cells: dark pixels in the left margin; and a colour bar right of them: a column whose
    // colours run from the map's top to its bottom.
    int ink = 0;
    for (int yy = 0; yy < image.height(); ++yy) {
      for (int x = 0; x < 40; ++x) ink += qGray(image.pixel(x, yy)) < 128;
    }
    QVERIFY(ink > 20);
    bool bar = false;
    for (int x = image.width() / 2; x < image.width() && !bar; ++x) {
      int top = -1, bottom = -1;
      for (int yy = 0; yy < image.height(); ++yy) {
        if (image.pixel(x, yy) == high && top < 0) top = yy;
        if (image.pixel(x, yy) == low) bottom = yy;
      }
      bar = top >= 0 && bottom > top + 200 && image.pixel(x, (top + bottom) / 2) != high &&
            image.pixel(x, (top + bottom) / 2) != low;
    }
    QVERIFY(bar);
  }

  // Issue 41, finding 4, in the CLI's figures: a map of exactly 2,048 cells a side was subsampled into a few
  // hundred pixels (only larger maps were pooled) and drew as a blank rectangle. The figure follows the tab's rule
  // (render/map_pooling.h): more cells than pixels, max-pooled to the pixels, at every size, the axes saying so.
  void heatmapFigureMaxPoolsEveryMapWithMoreCellsThanPixels() {
    const int side = 2048;
    auto map = std::make_shared<attn::AttentionMap>();
    map->weights = attn::Matrix::Zero(side, side);
    for (int i = 0; i < side; ++i) map->weights(i, i) = 1.0f;
    for (int i = 0; i < side; ++i) map->row_labels.push_back("w" + std::to_string(i));
    map->col_labels = map->row_labels;
    render::HeatmapFigure figure;
    figure.map = map;
    QImage image(600, 600, QImage::Format_RGB32);
    image.fill(Qt::white);
    QPainter painter(&image);
    render::paintHeatmapFigure(painter, image.rect(), figure, QFont());
    painter.end();
    testing::saveShot(image, u"figure-pooled-2048"_s);
    const QRgb high = render::sample(render::Colormap::Viridis, 1.0);
    const QRgb low = render::sample(render::Colormap::Viridis, 0.0);
    const auto cell = [&](int x, int y) { return image.pixel(x, y) == high || image.pixel(x, y) == low; };
    // The cells: the first run of cell colours along the middle row, and the run through its middle column.
    const int midY = image.height() / 2;
    int left = 0;
    while (left < image.width() && !cell(left, midY)) ++left;
    int right = left;
    while (right + 1 < image.width() && cell(right + 1, midY)) ++right;
    const int midX = (left + right) / 2;
    int top = midY, bottom = midY;
    while (top > 0 && cell(midX, top - 1)) --top;
    while (bottom + 1 < image.height() && cell(midX, bottom + 1)) ++bottom;
    const int width = right - left + 1, height = bottom - top + 1;
    QVERIFY2(width > 300 && height > 300, qPrintable(u"cells %1 x %2"_s.arg(width).arg(height)));
    // Every row of pixels has the colour of 1 on the diagonal (within a pooled cell's width and a pixel).
    const double slope = double(width) / double(height);
    int missing = 0;
    for (int y = top; y <= bottom; ++y) {
      const int at = left + int((double(y - top) + 0.5) * slope);
      bool bright = false;
      for (int x = std::max(left, at - int(slope) - 2); x <= std::min(right, at + int(slope) + 2) && !bright; ++x) {
        bright = image.pixel(x, y) == high;
      }
      missing += !bright;
    }
    QVERIFY2(
        missing == 0,
        qPrintable(u"%1 of %2 rows without the diagonal (cells %3 x %4 px)"_s.arg(missing).arg(height).arg(width).arg(
            height)));
    // The pooling is said on the axes: an SVG of the same figure carries the axis titles as text.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(u"pooled.svg"_s);
    QVERIFY(exportHeatmapFigure(figure, QSize(600, 600), QFont(), path));
    QFile svg(path);
    QVERIFY(svg.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(svg.readAll());
    QVERIFY2(text.contains(u"queries \u00b7 max-pooled"_s) && text.contains(u"keys \u00b7 max-pooled"_s),
             qPrintable(text.left(4000)));
    QVERIFY(text.contains(u"per cell"_s));
  }

  void squareCellsLeaveRoomBelowAOneRowMap() {
    auto map = std::make_shared<attn::AttentionMap>();
    map->weights = attn::Matrix::Constant(1, 8, 0.125f);
    render::HeatmapFigure figure;
    figure.map = map;
    figure.compact = true;
    figure.squareCells = true;
    figure.title = u"sentences"_s;
    const QRect area(0, 0, 400, 300);
    const int used = render::heatmapFigureHeight(area, figure, QFont());
    QVERIFY2(used < 150, qPrintable(QString::number(used)));
    figure.squareCells = false;
    QCOMPARE(render::heatmapFigureHeight(area, figure, QFont()), 300);
    // A grid of two such tiles is only as tall as they need.
    figure.squareCells = true;
    QVERIFY(render::heatmapGridHeight({figure, figure}, 2, QSize(800, 600), QFont()) < 200);
  }

  // The head detectors' offsets: a note per cell, dark ink on a light cell and light ink on a dark one, nothing on a
  // cell without a note; the colour bar is labelled by the map's quantity, as the window's view labels it.
  void heatmapFigureWritesCellTextInContrastingInk() {
    auto map = std::make_shared<attn::AttentionMap>();
    map->weights.resize(2, 2);
    map->weights << 0.0f, 1.0f,  //
        0.5f, 0.5f;
    render::HeatmapFigure figure;
    figure.map = map;
    figure.rangeMode = render::RangeMode::Unit;
    const auto paint = [&](const render::HeatmapFigure& f) {
      QImage image(400, 400, QImage::Format_RGB32);
      image.fill(Qt::white);
      QPainter painter(&image);
      render::paintHeatmapFigure(painter, image.rect(), f, QFont());
      return image;
    };
    const QImage plain = paint(figure);
    figure.cellText = {u"+1"_s, u"+2"_s, QString(), QString()};
    const QImage noted = paint(figure);
    const QRgb high = render::sample(render::Colormap::Viridis, 1.0);
    const QRgb low = render::sample(render::Colormap::Viridis, 0.0);
    const QRgb middle = render::sample(render::Colormap::Viridis, 0.5);
    int darker = 0, lighter = 0, onMiddle = 0, elsewhere = 0;
    for (int y = 0; y < plain.height(); ++y) {
      for (int x = 0; x < plain.width(); ++x) {
        const QRgb before = plain.pixel(x, y), after = noted.pixel(x, y);
        if (before == after) continue;
        if (before == high)
          darker += qGray(after) < qGray(before);
        else if (before == low)
          lighter += qGray(after) > qGray(before);
        else if (before == middle)
          ++onMiddle;
        else
          ++elsewhere;
      }
    }
    QVERIFY2(darker > 10 && lighter > 10, qPrintable(u"%1 %2"_s.arg(darker).arg(lighter)));
    QCOMPARE(onMiddle, 0);
    QCOMPARE(elsewhere, 0);
    figure.cellText.clear();
    map->quantity = "score";
    QVERIFY(paint(figure) != plain);
  }
};

ATTN_QT_TEST(TestRender, Widgets);

}  // namespace test_render
#include "test_render.moc"
