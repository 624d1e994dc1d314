// ImageOverlayView: a picture (the photo with attention blended over it, render::overlayImage) scaled to
// fit with its aspect ratio kept and smooth sampling, under a caption. The blending is done by the
// workbench with the pure renderer; this widget only shows the result.
#pragma once

#include <QImage>
#include <QString>
#include <QWidget>

namespace attn::ui {

class ImageOverlayView : public QWidget {
  Q_OBJECT

 public:
  explicit ImageOverlayView(QWidget* parent = nullptr);

  void setImage(const QImage& image);
  const QImage& image() const { return image_; }
  void setCaption(const QString& caption);
  QString caption() const { return caption_; }
  void setPlaceholder(const QString& text);
  QRect imageRect() const;  // where the image is drawn now

  QSize sizeHint() const override { return QSize(480, 480); }
  QSize minimumSizeHint() const override { return QSize(160, 160); }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  QImage image_;
  QString caption_;
  QString placeholder_;
};

}  // namespace attn::ui
