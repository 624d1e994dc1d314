// HeatmapView: holds the engine's matrix cell by cell, labels, tooltips, orientation, thinning, drawing.
#include "render/qcustomplot.h"
#include "ui_test_support.h"
#include "views/heatmap_view.h"
#include "views/map_grid_view.h"

#include <QSignalSpy>
#include <QTest>
#include <QToolTip>

using namespace attn::ui;
using namespace Qt::StringLiterals;

namespace {

std::shared_ptr<const attn::AttentionMap> syntheticMap(int rows, int cols) {
  auto map = std::make_shared<attn::AttentionMap>();
  map->name = "synthetic";
  map->weights.resize(rows, cols);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) map->weights(r, c) = float((r * 7 + c * 3) % 11) / 10.0f;
    map->row_labels.push_back(std::string("q").append(std::to_string(r)));
  }
  for (int c = 0; c < cols; ++c) map->col_labels.push_back(std::string("k").append(std::to_string(c)));
  return map;
}

}  // namespace

class TestHeatmapView : public QObject {
  Q_OBJECT

 private slots:
  void holdsTheEnginesMatrix() {
    const auto result = testing::runOrNull(testing::defaultRequest());
    QVERIFY2(result, "run_lab refused the default request");
    QVERIFY(!result->trace.empty());
    const auto& map = result->trace.maps().front();
    HeatmapView view;
    view.resize(800, 600);
    view.show();
    view.setMap(std::shared_ptr<const attn::AttentionMap>(result, &map));
    auto* data = view.colorMap()->data();
    QCOMPARE(data->keySize(), int(map.weights.cols()));
    QCOMPARE(data->valueSize(), int(map.weights.rows()));
    for (int r = 0; r < map.weights.rows(); ++r) {
      for (int c = 0; c < map.weights.cols(); ++c) QCOMPARE(float(data->cell(c, r)), map.weights(r, c));
    }
    QVERIFY(!view.colorMap()->interpolate());
    view.replotNow();
    QVERIFY(testing::looksDrawn(view.grab().toImage()));
  }

  void rowZeroIsOnTopAndLabelsAreTokens() {
    HeatmapView view;
    view.resize(700, 500);
    view.show();
    view.setMap(syntheticMap(6, 9));
    view.replotNow();
    auto* plot = view.plot();
    QVERIFY(plot->yAxis->rangeReversed());
    QVERIFY(plot->yAxis->coordToPixel(0) < plot->yAxis->coordToPixel(5));
    QCOMPARE(view.rowLabelStride(), 1);
    QCOMPARE(view.columnLabelStride(), 1);
    QVector<double> ticks;
    QVector<QString> labels;
    plot->yAxis->ticker()->generate(plot->yAxis->range(), QLocale(), u'g', 3, ticks, nullptr, &labels);
    QCOMPARE(labels.size(), 6);
    QCOMPARE(labels.front(), u"q0"_s);
    QCOMPARE(ticks.back(), 5.0);
    plot->xAxis2->ticker()->generate(plot->xAxis2->range(), QLocale(), u'g', 3, ticks, nullptr, &labels);
    QCOMPARE(labels.size(), 9);
    QCOMPARE(labels.back(), u"k8"_s);
  }

  void cellUnderThePointer() {
    HeatmapView view;
    view.resize(700, 500);
    view.show();
    view.setMap(syntheticMap(4, 5));
    view.replotNow();
    auto* plot = view.plot();
    const QPointF centre(plot->xAxis2->coordToPixel(3), plot->yAxis->coordToPixel(2));
    QCOMPARE(view.cellAt(centre), std::optional(QPoint(3, 2)));
    QCOMPARE(view.cellAt(QPointF(1, 1)), std::nullopt);  // the margin, outside the axis rect
  }

  void tooltipNamesBothTokensAndTheExactValue() {
    HeatmapView view;
    auto map = std::make_shared<attn::AttentionMap>();
    map->weights.resize(2, 3);
    map->weights << 0.1f, 0.2f, 0.7f, 1.0f / 3.0f, 0.25f, 0.41666666f;
    map->row_labels = {"she", "ate"};
    map->col_labels = {"the", "\xf0\x9f\x8d\x8e", "\xe8\x8b\xb9\xe6\x9e\x9c"};
    view.setMap(map);
    const QString text = view.cellToolTip(1, 1);
    QVERIFY2(text.contains(u"\u201cate\u201d"_s), qPrintable(text));
    QVERIFY2(text.contains(u"\u201c\U0001F34E\u201d"_s), qPrintable(text));
    QVERIFY2(text.contains(u"0.25"_s), qPrintable(text));
    // The value reads back as exactly the stored float.
    const QString third = view.cellToolTip(1, 0);
    const QString value = third.section(u' ', -1);
    QCOMPARE(value.toFloat(), 1.0f / 3.0f);
    QVERIFY(view.cellToolTip(2, 0).isEmpty());
    QVERIFY(view.cellToolTip(0, 3).isEmpty());
  }

  void hoveringShowsTheTooltip() {
    HeatmapView view;
    view.resize(600, 450);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.setMap(syntheticMap(3, 4));
    view.replotNow();
    auto* plot = view.plot();
    QSignalSpy hovered(&view, &HeatmapView::cellHovered);
    const QPoint centre(int(plot->xAxis2->coordToPixel(2)), int(plot->yAxis->coordToPixel(1)));
    QTest::mouseMove(plot, centre);
    QTRY_VERIFY(!hovered.isEmpty());
    QCOMPARE(hovered.last().at(0).toInt(), 1);
    QCOMPARE(hovered.last().at(1).toInt(), 2);
    QTRY_COMPARE(QToolTip::text(), view.cellToolTip(1, 2));
  }

  void longLabelListsAreThinned() {
    HeatmapView view;
    view.resize(600, 500);
    view.show();
    view.setMap(syntheticMap(300, 400));
    view.replotNow();
    QVERIFY2(view.rowLabelStride() > 1, qPrintable(QString::number(view.rowLabelStride())));
    QVERIFY2(view.columnLabelStride() > 1, qPrintable(QString::number(view.columnLabelStride())));
    // After thinning, labels are at least a text line apart.
    auto* plot = view.plot();
    const double spacing = plot->yAxis->coordToPixel(view.rowLabelStride()) - plot->yAxis->coordToPixel(0);
    QVERIFY(spacing >= QFontMetricsF(plot->yAxis->tickLabelFont()).height());
    QVERIFY(testing::looksDrawn(view.grab().toImage()));
  }

  void colormapChangesTheColours() {
    HeatmapView view;
    view.resize(500, 400);
    view.show();
    view.setMap(syntheticMap(5, 5));
    view.replotNow();
    const QImage viridis = view.grab().toImage();
    view.setColormap(render::Colormap::Magma);
    view.replotNow();
    QVERIFY(view.grab().toImage() != viridis);
    QCOMPARE(view.colorMap()->gradient().color(0.0, QCPRange(0, 1)), render::sample(render::Colormap::Magma, 0.0));
  }

  void gridTilesActivateOnClick() {
    MapGrid grid;
    grid.resize(900, 300);
    grid.show();
    QVERIFY(QTest::qWaitForWindowExposed(&grid));
    std::vector<std::shared_ptr<const attn::AttentionMap>> maps;
    for (int i = 0; i < 4; ++i) maps.push_back(syntheticMap(3 + i, 4));
    grid.setMaps(maps);
    QCOMPARE(grid.count(), 4);
    QCOMPARE(grid.current(), 0);
    QSignalSpy activated(&grid, &MapGrid::mapActivated);
    auto* tile = grid.tile(2);
    QTest::mouseClick(tile->plot(), Qt::LeftButton, {}, tile->plot()->rect().center());
    QCOMPARE(activated.size(), 1);
    QCOMPARE(activated.front().front().toInt(), 2);
    QVERIFY(tile->isHighlighted());
    QVERIFY(!grid.tile(0)->isHighlighted());
    QTest::keyClick(&grid, Qt::Key_Right);
    QCOMPARE(grid.current(), 3);
    QCOMPARE(activated.last().front().toInt(), 3);
  }

  // Issue 17: the demo's hierarchical.png (attnscope-cli demo) stretched its one-row maps into tall blocks
  // and, unlike the single-map figures, had no colour bar. An exported grid gives every tile a colour bar as
  // tall as its cells and keeps one-row maps' cells square, each row of tiles only as tall as it draws; and
  // the picture shows each cell in its colour where the layout puts it.
  void exportedGridsKeepSquareCellsAndColourBars() {
    const auto result = testing::runOrNull(testing::defaultRequest(attn::lab::Mechanism::Hierarchical));
    QVERIFY(result);
    std::vector<std::shared_ptr<const attn::AttentionMap>> maps;
    for (const auto& map : result->trace.maps()) maps.emplace_back(result, &map);
    QVERIFY(maps.size() >= 3);
    QVERIFY(std::all_of(maps.begin(), maps.end(), [](const auto& m) { return m->weights.rows() == 1; }));
    MapGrid grid;
    grid.setColorBars(true);
    grid.setSquareCells(true);
    grid.setColumns(2);
    grid.setMaps(maps);
    grid.setCurrent(-1);
    grid.resize(1100, 900);
    grid.show();
    QVERIFY(QTest::qWaitForWindowExposed(&grid));
    const int height = grid.packRows();
    QVERIFY2(height < 900 && height == grid.height(), qPrintable(QString::number(height)));
    const QImage picture = grid.grab().toImage();
    for (int i = 0; i < grid.count(); ++i) {
      const HeatmapView* tile = grid.tile(i);
      const auto& weights = tile->map()->weights;
      const QRect cells = tile->plot()->axisRect()->rect();
      const double cellWidth = double(cells.width()) / double(weights.cols());
      const double cellHeight = double(cells.height()) / double(weights.rows());
      QVERIFY2(std::abs(cellWidth - cellHeight) <= 1.5,
               qPrintable(u"tile %1: cells %2 x %3 px"_s.arg(i).arg(cellWidth).arg(cellHeight)));
      QVERIFY(tile->contentHeight() <= tile->height());
      QVERIFY2(tile->colorScale() && tile->colorScale()->visible(), qPrintable(u"tile %1 has no colour bar"_s.arg(i)));
      const QRect bar = tile->colorScale()->axis()->axisRect()->rect();
      QVERIFY2(std::abs(bar.top() - cells.top()) <= 1 && std::abs(bar.bottom() - cells.bottom()) <= 1,
               qPrintable(u"tile %1: bar %2..%3, cells %4..%5"_s.arg(i)
                              .arg(bar.top())
                              .arg(bar.bottom())
                              .arg(cells.top())
                              .arg(cells.bottom())));
      // Each cell's centre in the grabbed picture has the cell's colour.
      const QCPRange range = tile->colorMap()->dataRange();
      for (int c = 0; c < weights.cols(); ++c) {
        const QPoint centre = tile->plot()->mapTo(
            &grid, QPointF(cells.left() + (c + 0.5) * cellWidth, cells.top() + cellHeight / 2).toPoint());
        const QRgb want = tile->colorMap()->gradient().color(double(weights(0, c)), range);
        const QRgb got = picture.pixel(centre);
        QVERIFY2(std::abs(qRed(got) - qRed(want)) + std::abs(qGreen(got) - qGreen(want)) +
                         std::abs(qBlue(got) - qBlue(want)) <=
                     12,
                 qPrintable(u"tile %1 cell %2 at (%3, %4): %5, not %6"_s.arg(i)
                                .arg(c)
                                .arg(centre.x())
                                .arg(centre.y())
                                .arg(QColor(got).name(), QColor(want).name())));
      }
    }
    // The window's grids are unchanged: no colour bars, and cells fill their tiles.
    MapGrid window;
    window.setMaps(maps);
    window.resize(900, 400);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.replotNow();
    QVERIFY(!window.tile(0)->colorScale());
    QCOMPARE(window.tile(0)->contentHeight(), window.tile(0)->plot()->height());
  }
};

QTEST_MAIN(TestHeatmapView)
#include "test_heatmap_view.moc"
