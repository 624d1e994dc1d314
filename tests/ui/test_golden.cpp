// Golden images of the pure renderers (ui/render): each case draws fixed small inputs (matrices, tokens, a
// synthetic photo) and compares the picture with tests/data/golden/<case>.png. A pixel differs when one of
// its channels is off by more than kChannelTolerance; a case fails when more than its share of pixels
// differ (font antialiasing noise passes; a changed colour, a moved element or a missing one does not).
// On a mismatch the test writes <case>.actual.png and <case>.diff.png (differing pixels red over a faded
// copy of the golden) to golden-out/ beside this program and says where. ATTN_UPDATE_GOLDEN=1 rewrites the
// committed images instead (tests/data/golden/README.md).
#include "qt_test_registry.h"
#include "attn/layered_trace.h"
#include "attn/vision/image.h"
#include "render/alignment_overlay.h"
#include "render/caption_render.h"
#include "render/colormap.h"
#include "render/glimpse_render.h"
#include "render/head_grid_render.h"
#include "render/heatmap_render.h"
#include "render/overlay_render.h"
#include "render/text_figure.h"
#include "render/token_lines_render.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QFontInfo>
#include <QPainter>
#include <QTest>

#include <algorithm>
#include <cmath>

using namespace attn::ui;
using namespace Qt::StringLiterals;

namespace test_golden {

namespace {

constexpr int kChannelTolerance = 24;  // of 255, per channel
constexpr double kDefaultShare = 0.004;

QString goldenDir() { return QStringLiteral(ATTN_TEST_DATA_DIR "/golden"); }

QString outputDir() { return QDir(QCoreApplication::applicationDirPath()).filePath(u"golden-out"_s); }

// One font for every case, by file name rather than the desktop's default: DejaVu Sans at a pixel size.
QFont goldenFont(int pixels = 10) {
  QFont font(u"DejaVu Sans"_s);
  font.setPixelSize(pixels);
  font.setHintingPreference(QFont::PreferNoHinting);
  return font;
}

// A matrix whose every cell differs from its neighbours: value = ((r * 7 + c * 3) mod 11) / 10.
attn::Matrix pattern(int rows, int cols) {
  attn::Matrix m(rows, cols);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) m(r, c) = float((r * 7 + c * 3) % 11) / 10.0f;
  }
  return m;
}

// Rows of softmax-like weights: each row peaks on a column that moves with the row.
attn::Matrix rowsPeaking(int rows, int cols, int shift) {
  attn::Matrix m(rows, cols);
  for (int r = 0; r < rows; ++r) {
    float sum = 0.0f;
    for (int c = 0; c < cols; ++c) {
      const int d = std::abs(c - (r + shift) % cols);
      m(r, c) = 1.0f / float(1 + 3 * d * d);
      sum += m(r, c);
    }
    m.row(r) /= sum;
  }
  return m;
}

// A photo to draw over: a colour ramp with a darker disc, no randomness.
QImage syntheticPhoto(int width, int height) {
  QImage photo(width, height, QImage::Format_RGB32);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const int dx = x - width / 3, dy = y - height / 2;
      const bool disc = dx * dx + dy * dy < (height / 4) * (height / 4);
      const int r = 60 + 150 * x / std::max(1, width - 1);
      const int g = 90 + 120 * y / std::max(1, height - 1);
      photo.setPixel(x, y, disc ? qRgb(r / 3, g / 3, 70) : qRgb(r, g, 200 - r / 2));
    }
  }
  return photo;
}

attn::LayeredTrace syntheticTrace(int layers, int heads, int tokens) {
  attn::LayeredTrace trace;
  for (int t = 0; t < tokens; ++t) trace.tokens.push_back("t" + std::to_string(t));
  for (int l = 0; l < layers; ++l) {
    attn::LayerAttention layer;
    layer.stage = attn::Stage::Encoder;
    layer.layer = l;
    layer.maps = attn::HeadStack(heads, tokens, tokens);
    for (int h = 0; h < heads; ++h) layer.maps.set_head(h, rowsPeaking(tokens, tokens, l + h));
    trace.layers.push_back(std::move(layer));
  }
  return trace;
}

QImage normalised(const QImage& image) {
  return image.convertToFormat(image.hasAlphaChannel() ? QImage::Format_ARGB32 : QImage::Format_RGB32);
}

struct Comparison {
  bool sameSize = false;
  qint64 differing = 0;
  int worst = 0;  // the largest channel difference
  QImage diff;
};

Comparison compareImages(const QImage& actualIn, const QImage& expectedIn) {
  Comparison out;
  const QImage actual = actualIn.convertToFormat(QImage::Format_ARGB32);
  const QImage expected = expectedIn.convertToFormat(QImage::Format_ARGB32);
  out.sameSize = actual.size() == expected.size();
  if (!out.sameSize) return out;
  out.diff = QImage(actual.size(), QImage::Format_RGB32);
  for (int y = 0; y < actual.height(); ++y) {
    const auto* a = reinterpret_cast<const QRgb*>(actual.constScanLine(y));
    const auto* e = reinterpret_cast<const QRgb*>(expected.constScanLine(y));
    auto* d = reinterpret_cast<QRgb*>(out.diff.scanLine(y));
    for (int x = 0; x < actual.width(); ++x) {
      const int delta = std::max({std::abs(qRed(a[x]) - qRed(e[x])), std::abs(qGreen(a[x]) - qGreen(e[x])),
                                  std::abs(qBlue(a[x]) - qBlue(e[x])), std::abs(qAlpha(a[x]) - qAlpha(e[x]))});
      out.worst = std::max(out.worst, delta);
      if (delta > kChannelTolerance) {
        ++out.differing;
        d[x] = qRgb(255, 0, 0);
      } else {
        const int grey = 190 + qGray(e[x]) / 4;  // the golden, faded
        d[x] = qRgb(grey, grey, grey);
      }
    }
  }
  return out;
}

// Compares `actual` with the golden `name`.png, or rewrites the golden under ATTN_UPDATE_GOLDEN=1.
void checkGolden(const QString& name, const QImage& actualIn, double share = kDefaultShare) {
  QVERIFY2(!actualIn.isNull(), qPrintable(name + u": the renderer drew nothing"_s));
  const QImage actual = normalised(actualIn);
  const QString golden = QDir(goldenDir()).filePath(name + u".png"_s);
  if (qEnvironmentVariableIntValue("ATTN_UPDATE_GOLDEN") == 1) {
    QVERIFY(QDir().mkpath(goldenDir()));
    QVERIFY2(actual.save(golden, "PNG", 0), qPrintable(golden));  // quality 0: the smallest file
    qInfo("%s: golden rewritten (%s, %d x %d)", qPrintable(name), qPrintable(golden), actual.width(), actual.height());
    return;
  }
  QImage expected;
  QVERIFY2(expected.load(golden),
           qPrintable(u"%1: no golden image %2 (ATTN_UPDATE_GOLDEN=1 writes it)"_s.arg(name, golden)));
  const Comparison result = compareImages(actual, expected);
  const qint64 pixels = qint64(actual.width()) * actual.height();
  const qint64 allowed = qint64(std::floor(share * double(pixels)));
  if (result.sameSize && result.differing <= allowed) return;
  QVERIFY(QDir().mkpath(outputDir()));
  const QString actualPath = QDir(outputDir()).filePath(name + u".actual.png"_s);
  const QString diffPath = QDir(outputDir()).filePath(name + u".diff.png"_s);
  actual.save(actualPath, "PNG");
  if (result.sameSize) result.diff.save(diffPath, "PNG");
  const QString why = result.sameSize
                          ? u"%1 of %2 pixels differ by more than %3 (at most %4 may; the largest difference is %5)"_s
                                .arg(result.differing)
                                .arg(pixels)
                                .arg(kChannelTolerance)
                                .arg(allowed)
                                .arg(result.worst)
                          : u"the size is %1 x %2, the golden's %3 x %4"_s.arg(actual.width())
                                .arg(actual.height())
                                .arg(expected.width())
                                .arg(expected.height());
  QFAIL(
      qPrintable(u"%1: %2.\n   golden: %3\n   actual: %4%5\n   (ATTN_UPDATE_GOLDEN=1 rewrites the golden when the "
                 "change is meant)"_s.arg(name, why, golden, actualPath,
                                          result.sameSize ? u"\n   diff:   "_s + diffPath : QString())));
}

}  // namespace

class TestGolden : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    // The golden images were drawn with this font; without it every case with text would differ.
    QVERIFY2(QFontInfo(goldenFont()).family() == u"DejaVu Sans"_s,
             "DejaVu Sans is not installed (Debian: fonts-dejavu-core)");
  }

  // The comparison itself: antialiasing-sized noise everywhere passes; a recoloured block, a shift by two
  // pixels or another size does not.
  void comparisonToleratesNoiseButNotChanges() {
    const QImage golden = normalised(render::alignmentImage(rowsPeaking(6, 8, 1), render::Colormap::Viridis, {}, 20));
    const qint64 pixels = qint64(golden.width()) * golden.height();
    const auto allowed = [&](const Comparison& c) { return c.sameSize && c.differing <= kDefaultShare * pixels; };
    QImage noisy = golden.convertToFormat(QImage::Format_ARGB32);
    for (int y = 0; y < noisy.height(); ++y) {
      for (int x = 0; x < noisy.width(); ++x) {
        const QRgb p = noisy.pixel(x, y);
        const int n = ((x * 5 + y * 3) % 21) - 10;  // -10 .. 10 on every channel
        noisy.setPixel(
            x, y,
            qRgb(std::clamp(qRed(p) + n, 0, 255), std::clamp(qGreen(p) - n, 0, 255), std::clamp(qBlue(p) + n, 0, 255)));
      }
    }
    QVERIFY(allowed(compareImages(noisy, golden)));
    QImage recoloured = golden;
    QPainter(&recoloured).fillRect(QRect(40, 40, 20, 20), QColor(0x44, 0x01, 0x54));  // one cell in another colour
    QVERIFY(!allowed(compareImages(recoloured, golden)));
    QVERIFY(!allowed(compareImages(golden.copy(2, 0, golden.width(), golden.height()), golden)));
    QVERIFY(!compareImages(golden.copy(0, 0, golden.width(), golden.height() - 1), golden).sameSize);
  }

  // heatmap_render: a matrix as one pixel per cell, on magma, 0 .. its maximum.
  void matrixImage() {
    const attn::Matrix m = pattern(12, 16);
    checkGolden(u"matrix-magma"_s,
                render::matrixImage(m, render::Colormap::Magma, render::valueRange(m, render::RangeMode::Data)));
  }

  // alignment_overlay: the cells at 20 px with the step in view outlined and local-p's bands and markers.
  void alignmentOverlay() {
    const attn::Matrix m = rowsPeaking(6, 8, 1);
    render::AlignmentOverlay overlay;
    overlay.rows = 6;
    overlay.columns = 8;
    overlay.focusRow = 2;
    const std::vector<float> positions = {1.0f, 2.2f, 3.5f, 4.0f, 5.6f, 6.9f};
    overlay.bands = render::localWindowBands(positions, 1, 8);
    checkGolden(u"alignment-overlay"_s, render::alignmentImage(m, render::Colormap::Viridis, overlay, 20));
  }

  // head_grid_render: the model view's picture, 2 layers x 3 heads, one tile selected.
  void headGrid() {
    const auto trace = syntheticTrace(2, 3, 6);
    const auto thumbnails = render::makeThumbnails(trace, attn::Stage::Encoder);
    std::vector<QImage> tiles;
    for (const auto& pooled : thumbnails.pooled)
      tiles.push_back(render::thumbnailImage(pooled, render::Colormap::Viridis));
    render::HeadGridScene scene;
    scene.tiles = &tiles;
    scene.selected = QPoint(1, 0);
    checkGolden(u"head-grid"_s, render::headGridImage(scene, 2, 3, 200, u"2 layers x 3 heads"_s, goldenFont()));
  }

  // token_lines_render: the head view's picture, two heads over five tokens.
  void tokenLines() {
    const auto trace = syntheticTrace(1, 2, 5);
    const attn::Labels tokens = {"the", "cat", "sat", "on", "mats"};
    render::TokenLinesScene scene;
    scene.stack = &trace.layers.front().maps;
    scene.rowTokens = &tokens;
    scene.heads = {0, 1};
    scene.threshold = 0.02f;
    checkGolden(u"token-lines"_s, render::tokenLinesImage(scene, 240, u"layer 0"_s, goldenFont()));
  }

  // text_figure: shaded text on viridis with an out-of-vocabulary word at full weight and one in view, a bar
  // chart and a warning note.
  void textFigure() {
    render::TextFigure figure;
    figure.heading = u"Predicted: positive (81 %)"_s;
    render::BarChart chart;
    chart.caption = u"Classes"_s;
    chart.bars = {{u"negative"_s, 0.19f, u"19 %"_s, false, QColor(0xa8, 0xa8, 0xa8), {}},
                  {u"positive"_s, 0.81f, u"81 %"_s, true, QColor(0x3f, 0x6a, 0x9a), {}}};
    figure.elements.emplace_back(chart);
    render::ShadedText text;
    text.caption = u"Word attention"_s;
    text.text = u"great zorblax film"_s;
    text.colormap = render::Colormap::Viridis;
    text.ranges = {{0, 5, 0.3f, false, false, false, {}},
                   {6, 13, 1.0f, true, false, false, {}},
                   {14, 18, 0.6f, false, true, true, {}}};
    figure.elements.emplace_back(text);
    figure.elements.emplace_back(render::FigureNote{u"1 word is not in the vocabulary."_s, true});
    checkGolden(u"text-figure"_s, render::figureImage(figure, goldenFont(11), 200));
  }

  // caption_render: a word's alpha over a 4 x 4 grid, smoothed and laid over a photo, the cell read outlined.
  void captionOverlay() {
    std::vector<float> alpha(16, 0.01f);
    alpha[5] = 0.6f;
    alpha[6] = 0.25f;
    alpha[10] = 0.1f;
    const attn::Matrix smoothed = render::smoothedAlpha(alpha, 4, 4.0);
    render::CaptionOverlayOptions options;
    options.sigma = 4.0;
    const QImage layer = render::alphaLayer(smoothed, options);
    checkGolden(u"caption-overlay"_s, render::composeOverlay(syntheticPhoto(96, 96), layer, 5, 4));
  }

  // caption_render: the grid figure, a heading and three cells with their words.
  void captionGrid() {
    render::CaptionGridFigure figure;
    figure.heading = u"a red disc"_s;
    figure.perRow = 3;
    figure.cellWidth = 48;
    const QImage photo = syntheticPhoto(48, 48);
    figure.cells = {
        {QString(), photo}, {u"red"_s, photo.mirrored(true, false)}, {u"disc"_s, photo.mirrored(false, true)}};
    const QFont font = goldenFont();
    QImage image(render::captionGridSize(figure, font), QImage::Format_RGB32);
    image.fill(Qt::white);
    QPainter painter(&image);
    render::paintCaptionGrid(painter, figure, font);
    painter.end();
    checkGolden(u"caption-grid"_s, image);
  }

  // overlay_render: a ViT class token's 3 x 4 grid blended over a photo on inferno.
  void vitOverlay() {
    attn::Matrix grid(3, 4);
    grid << 0.02f, 0.05f, 0.10f, 0.03f, 0.04f, 0.30f, 0.12f, 0.02f, 0.01f, 0.08f, 0.20f, 0.03f;
    checkGolden(u"vit-overlay"_s, render::overlayImage(syntheticPhoto(64, 48), grid));
  }

  // glimpse_render: a planar float image as a picture.
  void glimpseImage() {
    attn::Image image(32, 24, 3);
    for (int c = 0; c < 3; ++c) {
      for (int y = 0; y < 24; ++y) {
        for (int x = 0; x < 32; ++x) image.at(c, y, x) = float((x * (c + 1) + y * (3 - c)) % 32) / 31.0f;
      }
    }
    checkGolden(u"glimpse-image"_s, render::toQImage(image));
  }

  // glimpse_render: the difference of two glimpses, its largest channel colour-mapped on viridis.
  void glimpseDifference() {
    attn::Image difference(32, 24, 3);
    for (int c = 0; c < 3; ++c) {
      for (int y = 0; y < 24; ++y) {
        for (int x = 0; x < 32; ++x) {
          difference.at(c, y, x) = float(std::abs(x - 16) * (c + 1) + std::abs(y - 12)) / 64.0f;
        }
      }
    }
    checkGolden(u"glimpse-difference"_s, render::differenceImage(difference, render::Colormap::Viridis));
  }
};

ATTN_QT_TEST(TestGolden, Widgets);

}  // namespace test_golden
#include "test_golden.moc"
