// Text shaded by attention, as one figure: a heading, blocks of text whose character ranges are shaded by a
// weight (a decoding step's attention over the source characters, a review's words per pooling head), bar
// charts (class probabilities, sentence weights) and notes. Layout and painting are pure functions of the
// figure, a font and a width, so the Alignment tab, attnscope-cli align and the tests draw the same picture.
#pragma once

#include "render/colormap.h"

#include <QColor>
#include <QFont>
#include <QImage>
#include <QPointF>
#include <QRectF>
#include <QString>

#include <optional>
#include <string_view>
#include <variant>
#include <vector>

class QPainter;

namespace attn::ui::render {

// UTF-8 text as a QString plus, for every byte offset, the QString index it starts at (size bytes + 1),
// so the engine's byte spans can mark the QString. Each byte of an invalid sequence becomes one U+FFFD.
struct Utf16Text {
  QString text;
  std::vector<int> offsets;
};
Utf16Text toUtf16(std::string_view utf8);

struct ShadedRange {
  int begin = 0;  // QString indices into ShadedText::text, [begin, end)
  int end = 0;
  float weight = 0.0f;
  bool unknown = false;  // not in the model's vocabulary: red (see unknownOn) and underlined
  bool focus = false;    // outlined (the output character of the step in view)
  bool marked = false;   // a bar underneath (inside local-p's window)
  QString toolTip;
};

struct ShadedText {
  QString caption;  // small type above the text ("Source · attention of step 3")
  QString text;
  std::vector<ShadedRange> ranges;  // ascending, not overlapping
  // With a colour map a weight w (scaled to 0..1) is the map's colour at w, faded into the background by
  // w, so faint weights stay near the background and the text stays readable; without one, `tint` at
  // opacity w (one hue per pooling head).
  std::optional<Colormap> colormap;
  QColor tint = QColor(0x1f, 0x77, 0xb4);
  float scale = 0.0f;  // the weight drawn at full strength; <= 0: the largest weight (|weight|) of the ranges
  // Signed weights (an attribution's scores, say): w / scale in -1 .. 1 is the colour map's colour at (1 + w / scale)
  // / 2, faded into the background by |w| / scale, so 0 stays the background (with RdBu: blue below, red above).
  bool signedWeights = false;
  QString tail;        // drawn after the text in the muted colour ("… 9,960 more characters not read")
  bool large = false;  // 1.6 x the font: short strings such as dates
};

struct Bar {
  QString label;
  float value = 0.0f;   // drawn as value / BarChart::maximum of the bar area
  QString valueText;    // right of the bar; empty: the value with three decimals
  bool strong = false;  // bold label (the predicted class)
  QColor colour = QColor(0x1f, 0x77, 0xb4);
  QString toolTip;
};

struct BarChart {
  QString caption;
  std::vector<Bar> bars;
  float maximum = 1.0f;
};

struct FigureNote {
  QString text;
  bool warning = false;  // in the warning colour
};

using FigureElement = std::variant<ShadedText, BarChart, FigureNote>;

struct TextFigure {
  QString heading;  // bold, first; may be empty
  std::vector<FigureElement> elements;
};

struct FigureStyle {
  QColor background = Qt::white;
  QColor text = QColor(0x20, 0x20, 0x20);
  QColor muted = QColor(0x6b, 0x6b, 0x6b);
  QColor focus = QColor(0xe6, 0x5c, 0x00);    // outline of the focused range, window bars
  QColor unknown = QColor(0xc6, 0x28, 0x28);  // out-of-vocabulary text and its underline (see unknownOn)
  QColor warning = QColor(0x8a, 0x5a, 0x00);
  QColor barTrack = QColor(0xee, 0xee, 0xee);
};

// Where everything of a laid-out figure went, for painting and hit tests.
struct FigureLayout {
  struct Piece {  // a run of characters on one line
    int begin = 0, end = 0;
    QPointF origin;  // top-left of the line box
    double width = 0.0;
    bool tail = false;
  };
  struct Block {
    int element = 0;
    QRectF rect;      // the whole element
    QFont font;       // ShadedText: the font of its text
    QString laidOut;  // ShadedText: text + tail
    double lineHeight = 0.0;
    double captionHeight = 0.0;
    std::vector<Piece> pieces;
    std::vector<std::vector<QRectF>> ranges;  // ShadedText: each range's boxes; BarChart: each bar's row
    std::vector<QRectF> barRects;             // BarChart: the filled part of each bar
    double labelWidth = 0.0;                  // BarChart: the label column
    double barArea = 0.0;                     // BarChart: the width of a full bar
  };
  QFont font;
  double width = 0.0;
  double height = 0.0;
  QRectF headingRect;
  std::vector<Block> blocks;  // one per element, in order
};

FigureLayout layoutFigure(const TextFigure& figure, const QFont& font, double width);
void paintFigure(QPainter& painter, const TextFigure& figure, const FigureLayout& layout,
                 const FigureStyle& style = {});
// The figure on a background-filled image `width` pixels wide and as tall as it needs.
QImage figureImage(const TextFigure& figure, const QFont& font, int width, const FigureStyle& style = {});

// The colour a range of `text` with weight w is filled with (alpha 0 for nothing), and the colour its
// characters are drawn in on that fill.
QColor rangeFill(const ShadedText& text, float weight, const FigureStyle& style = {});
QColor textOn(const QColor& fill, const FigureStyle& style = {});
// The colour of an out-of-vocabulary range's characters and underline on `fill` (alpha 0: the background):
// style.unknown (red) where its contrast with the fill is 3 or more, else a dark or a pale red that has it.
QColor unknownOn(const QColor& fill, const FigureStyle& style = {});
// WCAG 2's contrast ratio of two colours (their alpha ignored): (L1 + 0.05) / (L2 + 0.05) of the relative
// luminances, the lighter over the darker; 1 to 21.
double contrastRatio(const QColor& a, const QColor& b);

struct FigureHit {
  int element = -1;
  int index = -1;  // the range (ShadedText) or the bar (BarChart)
};
std::optional<FigureHit> hitTest(const FigureLayout& layout, QPointF point);
// The tool tip of what `hit` names, empty when it has none.
QString hitToolTip(const TextFigure& figure, const FigureHit& hit);

}  // namespace attn::ui::render
