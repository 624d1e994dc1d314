// LongMapView: one head's attention map of any length (32,768 x 32,768 and more) drawn from tiles at the zoom level
// in view. The map is never held: tiles of 256 x 256 cells, each cell max- (or mean-) pooled over factor x factor
// weights, factor the power of two that puts a cell on at least one screen pixel, are read from an
// attn::HeadMapReader on a background thread (a quick preview, exact rows at a stride, then the exact pooled
// tile) and kept in a cache; until a tile arrives, the nearest coarser tile in the cache stands in. A frame only
// draws images that are there, so panning and zooming never wait for the engine.
//
// Mouse: drag pans, the wheel zooms around the cursor, a click selects the query row (and key) under it, hovering
// gives the two tokens and the exact weight of the cell under the cursor (computed, not read off the pooled
// tile). Keys: arrows pan, Page Up/Down pan by a screen, + and - zoom, Home (or 0) shows the whole map,
// Ctrl+Up/Down move the selected query. Token labels appear on both axes when a token is 12 pixels or more. A
// minimap in the corner shows the whole map and the view's rectangle; clicking it centres the view there.
#pragma once

#include "attn/on_demand_attention.h"
#include "render/colormap.h"

#include <QHash>
#include <QImage>
#include <QPointF>
#include <QStringList>
#include <QWidget>

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace attn::ui {

class LongMapView : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kTile = 256;  // cells per tile side
  // Colour of weight w: w / max, or log10(w / max) over kLogDecades decades (a row of 32,768 tokens spreads its
  // weight 3e-5 apart: six decades keep such rows off the colour of 0).
  enum class Scale { Linear, Log };
  static constexpr int kLogDecades = 6;

  explicit LongMapView(QWidget* parent = nullptr);
  ~LongMapView() override;

  // The map and its tokens (tokens.size() == reader->tokens()); resets the view to the whole map.
  void setMap(std::shared_ptr<const attn::HeadMapReader> reader, QStringList tokens, const QString& title);
  void clear();
  bool hasMap() const { return reader_ != nullptr; }
  const attn::HeadMapReader* reader() const { return reader_.get(); }

  void setPooling(attn::HeadMapReader::Pooling pooling);
  attn::HeadMapReader::Pooling pooling() const { return pooling_; }
  void setScale(Scale scale);
  Scale scale() const { return scale_; }
  void setColormap(render::Colormap map);

  // The view: `tokensPerPixel`-th of a token per screen pixel... in tokens: the key and query at the map area's
  // top-left corner and the screen pixels per token.
  void setView(QPointF topLeft, double pixelsPerToken);
  QPointF topLeft() const { return origin_; }
  double pixelsPerToken() const { return ppt_; }
  void showWhole();
  void centreOn(qint64 query, qint64 key);
  // Brings tokens first..last (their rows and columns) into view: nothing moves when they are in view already,
  // otherwise they are centred, the view kept on the map (not half a view past its edge, as centreOn may go).
  void showTokens(qint64 first, qint64 last);
  // The level in view: cells of factor x factor weights.
  qint64 factor() const;

  std::optional<qint64> selectedQuery() const { return selected_; }
  void selectQuery(std::optional<qint64> query);
  // Tokens first..last marked across the map, as rows and as columns, and on both axes (a match of the find box;
  // long_map_view_marks.cpp); nothing clears the mark.
  void setHighlight(std::optional<std::pair<qint64, qint64>> tokens);
  std::optional<std::pair<qint64, qint64>> highlight() const { return highlight_; }

  // The cell under a point of the widget, if it is on the map.
  std::optional<std::pair<qint64, qint64>> cellAt(QPointF pos) const;
  // True when every tile in view is exact (no preview or stand-in drawn).
  bool isExactInView() const { return exactInView_; }
  // Tiles computed so far (previews and exact), and the background work still queued.
  int tilesComputed() const { return tilesComputed_; }
  bool isBusy() const { return running_ || !wanted_.empty(); }
  // The cells of a tile the cache holds (kTile x kTile, row-major: cells of factor x factor weights from query
  // ty * kTile * factor and key tx * kTile * factor), or null; `exact` says whether they are exact or a preview.
  const std::vector<float>* cachedTile(qint64 factor, qint64 tx, qint64 ty, bool* exact = nullptr) const;
  // What the status line under the map says (the hovered cell, or how to use the view).
  QString statusText() const { return status_; }

  QSize sizeHint() const override { return {640, 560}; }

 signals:
  void querySelected(qint64 query, qint64 key);
  void cellHovered(qint64 query, qint64 key, float weight);  // -1s when the cursor leaves the map
  void viewChanged();
  void tilesArrived();

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void leaveEvent(QEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void showEvent(QShowEvent* event) override;

 private:
  struct Key {
    qint64 factor = 1, tx = 0, ty = 0;
    bool operator==(const Key& o) const { return factor == o.factor && tx == o.tx && ty == o.ty; }
  };
  friend size_t qHash(const Key& k, size_t seed) { return qHashMulti(seed, k.factor, k.tx, k.ty); }
  struct Tile {
    std::vector<float> cells;  // kTile x kTile
    bool exact = false;
    QImage image;  // the cells coloured (made again when the colours change)
  };
  struct Job {
    Key key;
    bool exact = false;
  };

  QRectF mapArea() const;  // where cells are drawn, in widget pixels
  double fitScale() const;
  qint64 factorFor(double pixelsPerToken) const;
  void clampView();
  void zoomAround(QPointF pos, double by);
  // Tiles the view needs, their jobs queued (previews first, then exact tiles, those nearest the centre first).
  void schedule();
  void startNext();
  void arrived(quint64 serial, Key key, bool exact, std::shared_ptr<std::vector<float>> cells);
  // A tile computed on the pool's thread, handed over under arrivalsMutex_ (an ordering ThreadSanitizer sees, where
  // it cannot see Qt's event queue) and taken on the GUI thread by takeArrivals(), a call queued by name (which,
  // unlike a queued functor, writes nothing outside Qt: ui/workbenches/common/worker_thread.h's queueCall).
  struct Arrival {
    quint64 serial = 0;
    Key key;
    bool exact = false;
    std::shared_ptr<std::vector<float>> cells;
  };
  Q_INVOKABLE void takeArrivals();
  // An exact tile made from the exact tiles of a finer level in the cache (2, 4 or 8 times finer), without the
  // engine: a max-pooled cell is the largest of the finer cells it covers, a mean-pooled one their mean weighted by
  // the weights each covers. False when a finer tile it needs is missing or not exact.
  bool composeFromFiner(const Key& key);
  void keep(const Key& key, std::vector<float> cells, bool exact);
  const Tile* tile(const Key& key) const;
  QImage& imageOf(Tile& tile);
  void drawTiles(QPainter& p, const QRectF& area);
  void drawLabels(QPainter& p, const QRectF& area);
  void drawHighlight(QPainter& p, const QRectF& area);
  void drawMinimap(QPainter& p);
  QRectF minimapRect() const;
  void hover(QPointF pos);
  float colourValue(float weight) const;

  std::shared_ptr<const attn::HeadMapReader> reader_;
  QStringList tokens_;
  QString title_;
  quint64 serial_ = 0;  // bumped by setMap and by pooling changes: older results are dropped
  attn::HeadMapReader::Pooling pooling_ = attn::HeadMapReader::Pooling::Max;
  Scale scale_ = Scale::Log;
  render::Colormap colormap_ = render::Colormap::Viridis;
  float max_ = 1.0f;
  QPointF origin_;  // tokens (key, query) at mapArea's top-left
  double ppt_ = 1.0;
  bool whole_ = false;  // showWhole() and not moved since: a resize fits the map again
  std::optional<qint64> selected_, selectedKey_;
  std::optional<std::pair<qint64, qint64>> highlight_;

  QHash<Key, Tile> tiles_;
  std::list<Key> recent_;  // least recently drawn first
  static constexpr int kMaxTiles = 320;
  std::vector<Job> wanted_;
  std::mutex arrivalsMutex_;
  std::vector<Arrival> arrivals_;
  bool running_ = false;
  bool exactInView_ = false;
  int tilesComputed_ = 0;

  std::optional<QPointF> dragFrom_;
  QPointF dragOrigin_;
  bool minimapDrag_ = false;
  QString status_;
};

}  // namespace attn::ui
