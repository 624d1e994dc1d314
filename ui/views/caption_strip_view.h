// CaptionStripView: a caption as a strip of words, the word in view highlighted. Under each word two small
// bars: the gate β of the step that emitted it (Xu et al. 2015, section 4.2.1: how much the context
// vector counts) and the entropy of its α over the grid (full = uniform, log L). A click or a drag across
// the words (scrubbing) selects one, as do Left/Right and Home/End. Words past revealed() are not drawn
// yet: the tab reveals a new caption word by word.
#pragma once

#include <QRectF>
#include <QString>
#include <QWidget>

#include <vector>

namespace attn::ui {

struct CaptionWord {
  QString text;          // the word; "<end>" for the end
  float beta = 0.0f;     // 0..1
  float entropy = 0.0f;  // nats
  bool end = false;      // the <end> token: drawn muted
};

class CaptionStripView : public QWidget {
  Q_OBJECT

 public:
  explicit CaptionStripView(QWidget* parent = nullptr);

  // `maxEntropy`: the entropy of a uniform α (log L), the full length of the H bar.
  void setWords(std::vector<CaptionWord> words, double maxEntropy);
  const std::vector<CaptionWord>& words() const { return words_; }
  int count() const { return int(words_.size()); }
  void setCurrent(int index);  // clamped; emits currentChanged when it changes
  int current() const { return current_; }
  void setRevealed(int count);
  int revealed() const { return revealed_; }
  void setPlaceholder(const QString& text);

  // Where word `index` is drawn (its chip with the bars), for tests and tool tips.
  QRectF wordRect(int index) const;
  // Everything the strip draws at its width, revealed or not: the boxes of the text (each word, and the β
  // and H labels of each line of words) and of the bars.
  struct Geometry {
    std::vector<QRectF> labels;
    std::vector<QRectF> bars;
  };
  Geometry geometry() const;
  int wordAt(QPointF point) const;  // -1 when no revealed word is there

  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override;
  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 signals:
  void currentChanged(int index);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  bool event(QEvent* event) override;

 private:
  std::vector<QRectF> layout(int width) const;
  QRectF barRect(const QRectF& chip, int bar) const;      // bar 0: β, 1: H
  QRectF gutterLabelRect(double chipTop, int bar) const;  // the label of a line's bar
  void relayout();
  QFont wordFont() const;

  std::vector<CaptionWord> words_;
  std::vector<QRectF> rects_;
  double maxEntropy_ = 1.0;
  int current_ = 0;
  int revealed_ = 0;
  QString placeholder_;
};

}  // namespace attn::ui
