// HeadGridView: the model view. Every layer x head of a run as a thumbnail heatmap (rows = layers,
// columns = heads), painted as QImages (render::paintHeadGrid) rather than one plot per tile, so a
// 12 x 12 model stays one cheap widget. Hovering highlights a tile; a click, or Enter on the keyboard
// selection (arrow keys), opens that head. The tiles fill the widget (HeadGridLayout::fill), down to a
// minimum size: put it in a QScrollArea with widgetResizable, and a big model scrolls.
// Ablation (the Transformer tab): Ctrl+click on a tile, the context menu's "Ablate head L.H" or A on the keyboard
// selection asks to toggle that head's ablation (ablationToggled); Escape asks to restore every head. The ablated heads
// (setAblated) are outlined with a dashed magenta frame and a cross.
#pragma once

#include "render/colormap.h"
#include "render/head_grid_render.h"

#include <QImage>
#include <QPoint>
#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

namespace attn::ui {

class HeadGridView : public QWidget {
  Q_OBJECT

 public:
  explicit HeadGridView(QWidget* parent = nullptr);

  void setThumbnails(std::shared_ptr<const render::HeadThumbnails> thumbnails);
  const render::HeadThumbnails* thumbnails() const { return thumbnails_.get(); }
  void setColormap(render::Colormap map);
  render::Colormap colormap() const { return colormap_; }
  int layers() const { return thumbnails_ ? thumbnails_->layers : 0; }
  int heads() const { return thumbnails_ ? thumbnails_->heads : 0; }

  // x = head, y = layer.
  void setSelected(int layer, int head);
  std::optional<QPoint> selected() const { return selected_; }
  std::optional<QPoint> hovered() const { return hovered_; }
  render::HeadGridLayout gridLayout() const;
  QRect tileRect(int layer, int head) const { return gridLayout().tileRect(layer, head); }
  const std::vector<QImage>& tileImages() const { return images_; }
  QImage renderImage(int width, const QString& title) const;

  void setAblated(std::vector<QPoint> heads);  // x = head, y = layer
  const std::vector<QPoint>& ablated() const { return ablated_; }

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 signals:
  void headActivated(int layer, int head);
  void headHovered(int layer, int head);  // -1, -1 when the pointer leaves the tiles
  void ablationToggled(int layer, int head);
  void restoreRequested();

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void leaveEvent(QEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void contextMenuEvent(QContextMenuEvent* event) override;

 private:
  static constexpr int kMinTile = 28;

  render::HeadGridLayout layoutFor(QSize area) const;
  void rebuildImages();
  void updateMinimumSize();
  void setHovered(std::optional<QPoint> tile);

  std::shared_ptr<const render::HeadThumbnails> thumbnails_;
  std::vector<QImage> images_;
  render::Colormap colormap_ = render::Colormap::Viridis;
  std::optional<QPoint> selected_;
  std::optional<QPoint> hovered_;
  std::vector<QPoint> ablated_;
};

}  // namespace attn::ui
