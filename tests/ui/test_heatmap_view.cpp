// HeatmapView: holds the engine's matrix cell by cell, labels, tooltips, orientation, thinning, drawing.
#include "qt_test_registry.h"
#include "views/qcustomplot.h"
#include "ui_test_support.h"
#include "attn/analysis/attention_analysis.h"
#include "attn/models/transformer.h"
#include "render/strings.h"
#include "views/heatmap_view.h"
#include "views/long_map_panel.h"
#include "views/long_map_view.h"
#include "views/map_grid_view.h"
#include "views/token_strip_view.h"

#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QWheelEvent>
#include <QTest>
#include <QToolTip>

#include <algorithm>
#include <mutex>

using namespace attn::ui;
using namespace Qt::StringLiterals;

namespace test_heatmap_view {

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

// A long run kept on demand: the random Llama fixture with 1,024 positions instead of 64 (a copy of its folder with
// that one field changed: its RoPE is defined for any position), `tokens` random ids.
struct LongRun {
  std::shared_ptr<const attn::models::TransformerRun> run;
  QStringList tokens;
};
LongRun longRun(int tokens) {
  QTemporaryDir dir;
  const QString from = QString::fromUtf8(ATTN_TEST_DATA_DIR) + u"/decoders/llama/"_s;
  for (const QString& name : QDir(from).entryList(QDir::Files)) QFile::copy(from + name, dir.filePath(name));
  QFile config(dir.filePath(u"config.json"_s));
  if (!config.open(QIODevice::ReadOnly)) return {};
  QByteArray text = config.readAll();
  config.close();
  text.replace("\"max_position_embeddings\": 64", "\"max_position_embeddings\": 1024");
  QFile::remove(dir.filePath(u"config.json"_s));
  if (!config.open(QIODevice::WriteOnly) || config.write(text) != text.size()) return {};
  config.close();
  auto model = attn::models::TransformerModel::load(toPath(dir.path()));
  if (!model) return {};
  attn::models::TransformerRunner runner(*model);
  attn::models::RunOptions o;
  o.keep = attn::models::RunOptions::Keep::OnDemand;
  std::vector<int> ids;
  for (int i = 0; i < tokens; ++i) ids.push_back((i * 37 + 11) % (*model)->config().vocab_size);
  auto run = runner.run_ids(ids, {}, o);
  if (!run) return {};
  LongRun out;
  for (int i = 0; i < tokens; ++i) out.tokens.append(u"t%1"_s.arg(i));
  out.run = std::make_shared<const attn::models::TransformerRun>(std::move(*run));
  return out;
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

  // Issue 41, finding 4: a 2,048 x 2,048 map (multi-head self-attention on a 3,000-word paste) drew as a blank
  // rectangle: its cells were subsampled into a few hundred pixels and lost even the diagonal. Every map with more
  // cells than pixels is max-pooled to the pixels, at every size, on setMap and on resize, and the axes say so.
  void mapsWithMoreCellsThanPixelsAreMaxPooled() {
    for (const int side : {700, 2048, 3000}) {
      auto map = std::make_shared<attn::AttentionMap>();
      map->name = "diagonal";
      map->weights = attn::Matrix::Zero(side, side);
      for (int i = 0; i < side; ++i) map->weights(i, i) = 1.0f;
      for (int i = 0; i < side; ++i) map->row_labels.push_back("w" + std::to_string(i));
      map->col_labels = map->row_labels;
      HeatmapView view;
      view.resize(640, 520);
      view.show();
      QVERIFY(QTest::qWaitForWindowExposed(&view));
      view.setMap(map);
      view.replotNow();
      QCOMPARE(view.map(), map.get());
      const auto fits = [&](const char* when) {
        const QRect cells = view.plot()->axisRect()->rect();
        const auto* data = view.colorMap()->data();
        const QString what = u"%1 a side, %2: %3 x %4 cells drawn in %5 x %6 px"_s.arg(side)
                                 .arg(QString::fromLatin1(when))
                                 .arg(data->valueSize())
                                 .arg(data->keySize())
                                 .arg(cells.height())
                                 .arg(cells.width());
        QVERIFY2(data->keySize() <= cells.width() && data->valueSize() <= cells.height(), qPrintable(what));
        // Not pooled further than the pixels need (within the 2 % that re-pooling waits for).
        QVERIFY2(data->keySize() >= cells.width() * 49 / 50 - 4, qPrintable(what));
        const auto* shown = view.shownMap();
        QVERIFY(shown && shown->pooled && shown->pooled->pool == attn::Pool::Max);
        QCOMPARE(shown->pooled->rows, attn::Index(side));
        // Max-pooled: the diagonal survives, one weight of 1 in every drawn row.
        for (attn::Index r = 0; r < shown->weights.rows(); ++r) QCOMPARE(shown->weights.row(r).maxCoeff(), 1.0f);
        QVERIFY2(view.plot()->yAxis->label().contains(u"max-pooled"_s), qPrintable(view.plot()->yAxis->label()));
        QVERIFY2(view.plot()->xAxis2->label().contains(u"per cell"_s), qPrintable(view.plot()->xAxis2->label()));
        // The picture: the cell of the diagonal in the middle has the colour of 1.
        const QImage picture = view.plot()->toPixmap().toImage();
        testing::saveShot(picture, u"pooled-%1-%2"_s.arg(side).arg(QString::fromLatin1(when).replace(u' ', u'-')));
        const attn::Index mid = shown->weights.rows() / 2;
        attn::Index col = 0;
        while (col + 1 < shown->weights.cols() && shown->weights(mid, col) != 1.0f) ++col;
        const QPoint at(int(view.plot()->xAxis2->coordToPixel(double(col))),
                        int(view.plot()->yAxis->coordToPixel(double(mid))));
        const QRgb want = view.colorMap()->gradient().color(1.0, view.colorMap()->dataRange());
        bool found = false;  // within a pixel of the cell's centre (cells are about one pixel)
        for (int dy = -1; dy <= 1; ++dy) {
          for (int dx = -1; dx <= 1; ++dx) found = found || picture.pixel(at + QPoint(dx, dy)) == want;
        }
        QVERIFY2(found, qPrintable(what + u": no cell of weight 1 drawn at the diagonal"_s));
      };
      fits("on setMap");
      // The tooltip names the source rows and tokens the drawn cell holds.
      const QString tip = view.cellToolTip(0, 0);
      QVERIFY2(tip.contains(u"max "_s) && tip.contains(u" weights"_s), qPrintable(tip));
      if (side >= 2048) QVERIFY2(tip.contains(u"row 0\u2013"_s), qPrintable(tip));  // bins of several rows
      view.resize(420, 360);
      view.replotNow();
      fits("after a resize");
    }
    // A map that fits is drawn cell for cell, and said as it is.
    HeatmapView view;
    view.resize(900, 700);
    view.show();
    view.setMap(syntheticMap(40, 60));
    view.replotNow();
    QCOMPARE(view.shownMap(), view.map());
    QCOMPARE(view.colorMap()->data()->keySize(), 60);
    QVERIFY(!view.plot()->yAxis->label().contains(u"pooled"_s));
    // Compact tiles have no axis titles: their title says it.
    HeatmapView tile(HeatmapView::Style::Compact);
    tile.resize(600, 600);  // wide enough for "self-attention · max-pooled 3–4×3–4" uncut
    tile.show();
    tile.setTitle(u"self-attention"_s);
    tile.setMap(syntheticMap(2048, 2048));
    tile.replotNow();
    testing::saveShot(tile.grab().toImage(), u"pooled-tile"_s);
    QVERIFY(tile.shownMap()->pooled);
    QCOMPARE(tile.title(), u"self-attention"_s);
    auto* drawnTitle = qobject_cast<QCPTextElement*>(tile.plot()->plotLayout()->element(0, 0));
    QVERIFY(drawnTitle);
    QVERIFY2(drawnTitle->text().contains(u"max-pooled"_s), qPrintable(drawnTitle->text()));
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

  // The long map: 700 tokens (three tiles a side at every weight), kept on demand. Its tiles arrive and are exact;
  // hovering gives the exact weight of the cell under the cursor at every zoom; the wheel zooms around the cursor;
  // the future (keys after the query) has the colour of 0; Home shows the whole map again.
  void longMapDrawsExactTilesAndHovers() {
    const LongRun long_ = longRun(700);
    QVERIFY2(long_.run, "the 1,024-position copy of the llama fixture did not run");
    const attn::OnDemandLayer& layer = long_.run->on_demand.back();
    const int head = 1;
    const attn::Matrix want = layer.map(head);
    LongMapView view;
    view.resize(700, 620);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.setMap(std::make_shared<const attn::OnDemandHead>(long_.run, layer, head), long_.tokens, u"layer 1"_s);
    QTRY_VERIFY_WITH_TIMEOUT(!view.isBusy() && view.isExactInView(), 20000);
    QVERIFY(view.factor() > 1);  // 700 tokens in about 500 pixels
    QSignalSpy hovered(&view, &LongMapView::cellHovered);
    const auto checkHover = [&](QPoint at) {
      const auto cell = view.cellAt(at);
      if (!cell) return false;
      QMouseEvent move(QEvent::MouseMove, QPointF(at), view.mapToGlobal(QPointF(at)), Qt::NoButton, Qt::NoButton,
                       Qt::NoModifier);
      QApplication::sendEvent(&view, &move);
      if (hovered.isEmpty()) return false;
      const auto args = hovered.takeLast();
      const float w = args.at(2).toFloat();
      return args.at(0).toLongLong() == cell->first && args.at(1).toLongLong() == cell->second &&
             std::abs(w - want(cell->first, cell->second)) <= 1e-6f &&
             view.statusText().contains(u"\u201ct%1\u201d"_s.arg(cell->first));
    };
    const QPointF centre = QRectF(92, 64, view.width() - 100, view.height() - 86).center();
    QVERIFY(checkHover(centre.toPoint()));
    // The wheel: the cell under the cursor stays under it.
    const auto before = view.cellAt(centre);
    for (int i = 0; i < 8; ++i) {
      QWheelEvent wheel(centre, view.mapToGlobal(centre), {}, {0, 120}, Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase,
                        false);
      QApplication::sendEvent(&view, &wheel);
    }
    QCOMPARE(view.factor(), qint64(1));
    QCOMPARE(view.cellAt(centre), before);
    QTRY_VERIFY_WITH_TIMEOUT(!view.isBusy() && view.isExactInView(), 20000);
    QVERIFY(checkHover(centre.toPoint()));
    QVERIFY(checkHover((centre + QPointF(37, -21)).toPoint()));
    // Right side up: a cell above the diagonal (a key after its query) is drawn in the colour of 0.
    const QImage shot = view.grab().toImage();
    bool checked = false;
    for (int y = 70; y < view.height() - 30 && !checked; y += 7) {
      for (int x = 100; x < view.width() - 10 && !checked; x += 7) {
        const auto cell = view.cellAt(QPointF(x, y));
        if (!cell || cell->second <= cell->first + 2) continue;
        QCOMPARE(shot.pixel(x, y), render::colorTable(render::Colormap::Viridis)(0.0f));
        checked = true;
      }
    }
    QVERIFY(checked);
    QTest::keyClick(&view, Qt::Key_Home);
    QVERIFY(view.factor() > 1);
    QCOMPARE(view.topLeft(), QPointF(0, 0));
  }

  // The minimap's whole-map tile is made from the exact tiles of the level in view, not computed again: no pooled
  // read at its factor, and its cells equal to the engine's pooled cells at that factor (within the rounding of
  // two reads of the same weights).
  void longMapComposesCoarserTilesFromFinerOnes() {
    const LongRun long_ = longRun(700);
    QVERIFY2(long_.run, "the 1,024-position copy of the llama fixture did not run");
    const attn::OnDemandLayer& layer = long_.run->on_demand.back();
    // The head, with the factors of the pooled reads it is asked for noted.
    struct Counting final : attn::HeadMapReader {
      attn::OnDemandHead head;
      mutable std::mutex lock;
      mutable std::vector<attn::Index> factors;
      Counting(std::shared_ptr<const void> owner, const attn::OnDemandLayer& l) : head(std::move(owner), l, 2) {}
      attn::Index tokens() const override { return head.tokens(); }
      void pooled(attn::Index f, Pooling p, attn::Index r0, attn::Index rows, attn::Index c0, attn::Index cols,
                  float* out, attn::Index ld) const override {
        {
          std::lock_guard<std::mutex> hold(lock);
          factors.push_back(f);
        }
        head.pooled(f, p, r0, rows, c0, cols, out, ld);
      }
      void preview(attn::Index f, Pooling p, attn::Index r0, attn::Index rows, attn::Index c0, attn::Index cols,
                   float* out, attn::Index ld) const override {
        head.preview(f, p, r0, rows, c0, cols, out, ld);
      }
      void row(attn::Index r, float* out) const override { head.row(r, out); }
      float weight(attn::Index r, attn::Index c) const override { return head.weight(r, c); }
      float max_weight() const override { return head.max_weight(); }
    };
    auto reader = std::make_shared<Counting>(long_.run, layer);
    LongMapView view;
    view.resize(700, 620);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.setMap(reader, long_.tokens, u"layer 1"_s);
    const qint64 whole = 4;  // the minimap's level: 700 tokens in one tile of 256 cells
    QCOMPARE(view.factor(), qint64(2));
    using Pooling = attn::HeadMapReader::Pooling;
    for (const Pooling pooling : {Pooling::Max, Pooling::Mean}) {
      view.setPooling(pooling);
      QTRY_VERIFY_WITH_TIMEOUT(!view.isBusy() && view.isExactInView(), 20000);
      bool exact = false;
      const std::vector<float>* cells = view.cachedTile(whole, 0, 0, &exact);
      QVERIFY(cells && exact);
      {
        std::lock_guard<std::mutex> hold(reader->lock);
        QVERIFY(std::find(reader->factors.begin(), reader->factors.end(), whole) == reader->factors.end());
        QVERIFY(!reader->factors.empty());
      }
      std::vector<float> want(cells->size(), -1.0f);
      reader->head.pooled(whole, pooling, 0, LongMapView::kTile, 0, LongMapView::kTile, want.data(),
                          LongMapView::kTile);
      float worst = 0.0f;
      for (std::size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::abs((*cells)[i] - want[i]));
      // The engine's pooled reads at factors 2 and 4 multiply query blocks of other sizes, each weight within 1e-6
      // of the map (test_on_demand_attention): two reads within 2e-6. Mean: the engine sums a cell's 16 weights in
      // float, the view the four finer means in double.
      QVERIFY2(worst <= (pooling == Pooling::Max ? 2e-6f : 4e-6f),
               qPrintable(u"%1: %2"_s.arg(pooling == Pooling::Max ? u"max"_s : u"mean"_s).arg(worst)));
    }
  }

  // The panel: find a token, its row on the text (equal to the map's row), what each token receives, the sink.
  void longMapPanelFindsRowsAndColumns() {
    const LongRun long_ = longRun(300);
    QVERIFY2(long_.run, "the 1,024-position copy of the llama fixture did not run");
    const attn::OnDemandLayer& layer = long_.run->on_demand.front();
    LongMapPanel panel;
    panel.resize(800, 700);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.setTokens(long_.tokens);
    LongMapHead head;
    head.reader = std::make_shared<const attn::OnDemandHead>(long_.run, layer, 2);
    head.received = std::shared_ptr<const std::vector<float>>(long_.run, &layer.stats(2).received);
    head.sinkMass = layer.stats(2).first_mass / double(layer.stats(2).rows);
    head.title = u"layer 0 head 2"_s;
    panel.setHead(head);
    QVERIFY(panel.sinkLabel()->text().contains(QString::number(head.sinkMass, 'f', 3)));
    QVERIFY(panel.findNext(u"t123"_s));
    QCOMPARE(panel.selectedQuery(), std::optional<qint64>(123));
    const attn::Matrix map = layer.map(2);
    const auto& row = panel.rowStrip()->values();
    QCOMPARE(row.size(), std::size_t(300));
    for (int k = 0; k < 300; ++k) QVERIFY(std::abs(row[std::size_t(k)] - map(123, k)) <= 1e-6f);
    const auto& received = panel.columnStrip()->values();
    for (int k = 0; k < 300; k += 17) QVERIFY(std::abs(received[std::size_t(k)] - map.col(k).sum()) <= 1e-4f);
    QVERIFY(panel.findNext(u"t12"_s));  // the next token containing it after t123: t124
    QCOMPARE(panel.selectedQuery(), std::optional<qint64>(124));
    QVERIFY(!panel.findNext(u"nowhere"_s));
    QCOMPARE(panel.selectedQuery(), std::optional<qint64>(124));

    // The row strip's other mode: one row of the rollout over every layer, on a background thread; a newer query
    // cancels the one before (only the newer arrives), the row is attn::analysis::rollout_row's.
    attn::analysis::RolloutOptions options;
    panel.setRollout(
        [run = long_.run, options](qint64 q, const std::atomic<bool>* cancel,
                                   const std::function<void(int, int)>& progress) {
          return attn::analysis::rollout_row(run->on_demand, q, options, cancel, progress);
        },
        u"every layer"_s, long_.run.get());
    QSignalSpy arrived(&panel, &LongMapPanel::rolloutArrived);
    panel.rowModeBox()->setCurrentIndex(panel.rowModeBox()->findData(int(LongMapPanel::RowMode::Rollout)));
    QCOMPARE(panel.rowMode(), LongMapPanel::RowMode::Rollout);
    QVERIFY(panel.isRolloutBusy());  // query 124's row, asked for by the switch
    panel.selectQuery(290);
    QTRY_VERIFY_WITH_TIMEOUT(!panel.isRolloutBusy(), 20000);
    QTRY_COMPARE(arrived.size(), 1);
    QCOMPARE(arrived.front().front().toLongLong(), qint64(290));
    QCOMPARE(panel.rolloutShown(), qint64(290));
    const auto want = attn::analysis::rollout_row(long_.run->on_demand, 290, options);
    QVERIFY(want);
    const auto& shown = panel.rowStrip()->values();
    QCOMPARE(shown.size(), want->size());
    for (std::size_t k = 0; k < shown.size(); ++k) QCOMPARE(shown[k], (*want)[k]);
    QVERIFY2(panel.rowLabel()->text().startsWith(u"Rollout: query 290"_s), qPrintable(panel.rowLabel()->text()));
    // Back to the head's row, and to the rollout again: the row kept, not computed again.
    panel.setRowMode(LongMapPanel::RowMode::Head);
    QVERIFY(std::abs(panel.rowStrip()->values()[5] - map(290, 5)) <= 1e-6f);
    panel.setRowMode(LongMapPanel::RowMode::Rollout);
    QVERIFY(!panel.isRolloutBusy());
    QCOMPARE(panel.rowStrip()->values()[5], (*want)[5]);
  }
};

ATTN_QT_TEST(TestHeatmapView, Widgets);

}  // namespace test_heatmap_view
#include "test_heatmap_view.moc"
