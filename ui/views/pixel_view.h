// PixelView: a small image (a glimpse, a difference, a write canvas) magnified with nearest-neighbour
// sampling so every pixel stays a crisp square, under a caption line ("Gaussian read · 12 × 12", "preview
// (level 2)"). Whole-number magnification when it fills most of the view, so pixels keep equal sizes.
#pragma once

#include <QColor>
#include <QImage>
#include <QString>
#include <QWidget>

namespace attn::ui {

class PixelView : public QWidget {
  Q_OBJECT

 public:
  explicit PixelView(QWidget* parent = nullptr);

  // `tag` is recorded as paintedTag() once a paint has shown this image (benchmarks wait for it).
  void setImage(const QImage& image, quint64 tag = 0);
  const QImage& image() const { return image_; }
  void setCaption(const QString& caption);
  QString caption() const { return caption_; }
  // A badge drawn over the image's top-left corner (e.g. "preview (level 2)"); empty hides it.
  void setBadge(const QString& badge, QColor colour = QColor(200, 120, 0));
  QString badge() const { return badge_; }
  void setPlaceholder(const QString& text);

  quint64 paintedTag() const { return paintedTag_; }
  quint64 paintCount() const { return paintCount_; }
  double lastPaintMs() const { return lastPaintMs_; }
  // The rectangle the image was drawn into at the last paint.
  QRect imageRect() const;

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  QImage image_;
  QString caption_;
  QString badge_;
  QColor badgeColour_;
  QString placeholder_;
  quint64 tag_ = 0;
  quint64 paintedTag_ = 0;
  quint64 paintCount_ = 0;
  double lastPaintMs_ = 0.0;
};

}  // namespace attn::ui
