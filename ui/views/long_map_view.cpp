#include "views/long_map_view.h"

#include <QFontMetricsF>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPointer>
#include <QThreadPool>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <exception>

using namespace Qt::StringLiterals;

namespace attn::ui {

namespace {

constexpr double kMaxPixelsPerToken = 64.0;
constexpr double kLabelPixels = 12.0;  // a token at least this tall (and wide) gets its label
constexpr int kLeftMargin = 92, kTopMargin = 64, kStatusHeight = 22, kMinimap = 128;
constexpr qint64 kPreviewFrom = 8;  // below this factor a preview saves too little to be worth a pass

// The engine's background thread for tiles: one at a time (the engine's pooled reads use every core).
QThreadPool& tilePool() {
  static QThreadPool* pool = [] {
    auto* p = new QThreadPool;
    p->setMaxThreadCount(1);
    p->setObjectName(u"LongMapTiles"_s);
    return p;
  }();
  return *pool;
}

// A round step for index ticks: 1, 2 or 5 times a power of ten tokens, at least `pixels` apart.
qint64 tickStep(double ppt, double pixels) {
  for (qint64 decade = 1;; decade *= 10) {
    for (const qint64 m : {1, 2, 5}) {
      if (double(m * decade) * ppt >= pixels) return m * decade;
    }
  }
}

QString elided(const QString& token, const QFontMetricsF& fm, double width) {
  QString shown = token;
  shown.replace(u'\n', u"\\n"_s);
  return fm.elidedText(shown, Qt::ElideRight, width);
}

}  // namespace

LongMapView::LongMapView(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);
  setAttribute(Qt::WA_OpaquePaintEvent);
  setMinimumSize(240, 200);
  status_ = tr("No map.");
}

LongMapView::~LongMapView() {
  // A tile being computed holds `this` in its reply: wait for it (at most one tile) so the reply finds no ghost.
  ++serial_;
  wanted_.clear();
  tilePool().clear();
  tilePool().waitForDone();
}

void LongMapView::setMap(std::shared_ptr<const attn::HeadMapReader> reader, QStringList tokens, const QString& title) {
  ++serial_;
  reader_ = std::move(reader);
  tokens_ = std::move(tokens);
  title_ = title;
  tiles_.clear();
  recent_.clear();
  wanted_.clear();
  selected_.reset();
  selectedKey_.reset();
  highlight_.reset();
  max_ = reader_ ? std::max(reader_->max_weight(), 1e-30f) : 1.0f;
  status_ = reader_ ? tr("Drag to pan, wheel to zoom, click a cell to select its query, Home for the whole map.")
                    : tr("No map.");
  showWhole();
}

void LongMapView::clear() { setMap(nullptr, {}, {}); }

void LongMapView::setPooling(attn::HeadMapReader::Pooling pooling) {
  if (pooling == pooling_) return;
  pooling_ = pooling;
  ++serial_;
  tiles_.clear();
  recent_.clear();
  schedule();
  update();
}

void LongMapView::setScale(Scale scale) {
  if (scale == scale_) return;
  scale_ = scale;
  for (auto& t : tiles_) t.image = {};
  update();
}

void LongMapView::setColormap(render::Colormap map) {
  if (map == colormap_) return;
  colormap_ = map;
  for (auto& t : tiles_) t.image = {};
  update();
}

QRectF LongMapView::mapArea() const {
  return QRectF(kLeftMargin, kTopMargin, std::max(1, width() - kLeftMargin - 8),
                std::max(1, height() - kTopMargin - kStatusHeight));
}

double LongMapView::fitScale() const {
  if (!reader_ || reader_->tokens() == 0) return 1.0;
  const QRectF a = mapArea();
  return std::min(a.width(), a.height()) / double(reader_->tokens());
}

qint64 LongMapView::factorFor(double ppt) const {
  qint64 f = 1;
  while (double(f) * ppt < 1.0 && f < (qint64(1) << 40)) f *= 2;
  return f;
}

qint64 LongMapView::factor() const { return factorFor(ppt_); }

void LongMapView::clampView() {
  if (!reader_) return;
  ppt_ = std::clamp(ppt_, std::min(fitScale(), kMaxPixelsPerToken), kMaxPixelsPerToken);
  const QRectF a = mapArea();
  const double n = double(reader_->tokens()), w = a.width() / ppt_, h = a.height() / ppt_;
  // Never further than half a view past the map's edges.
  origin_.setX(std::clamp(origin_.x(), -w / 2, std::max(-w / 2, n - w / 2)));
  origin_.setY(std::clamp(origin_.y(), -h / 2, std::max(-h / 2, n - h / 2)));
}

void LongMapView::setView(QPointF topLeft, double pixelsPerToken) {
  whole_ = false;
  origin_ = topLeft;
  ppt_ = pixelsPerToken;
  clampView();
  schedule();
  update();
  emit viewChanged();
}

void LongMapView::showWhole() {
  setView(QPointF(0, 0), fitScale());
  whole_ = true;  // kept whole through resizes until the view moves
}

void LongMapView::centreOn(qint64 query, qint64 key) {
  const QRectF a = mapArea();
  setView(QPointF(double(key) + 0.5 - a.width() / ppt_ / 2, double(query) + 0.5 - a.height() / ppt_ / 2), ppt_);
}

void LongMapView::selectQuery(std::optional<qint64> query) {
  if (query && reader_) query = std::clamp<qint64>(*query, 0, reader_->tokens() - 1);
  if (query == selected_) return;
  selected_ = query;
  update();
  if (selected_) emit querySelected(*selected_, selectedKey_.value_or(-1));
}

std::optional<std::pair<qint64, qint64>> LongMapView::cellAt(QPointF pos) const {
  const QRectF a = mapArea();
  if (!reader_ || !a.contains(pos)) return std::nullopt;
  const double key = origin_.x() + (pos.x() - a.left()) / ppt_, query = origin_.y() + (pos.y() - a.top()) / ppt_;
  const double n = double(reader_->tokens());
  if (key < 0 || query < 0 || key >= n || query >= n) return std::nullopt;
  return std::pair{qint64(query), qint64(key)};
}

void LongMapView::zoomAround(QPointF pos, double by) {
  if (!reader_) return;
  const QRectF a = mapArea();
  const QPointF at(origin_.x() + (pos.x() - a.left()) / ppt_, origin_.y() + (pos.y() - a.top()) / ppt_);
  const double before = ppt_;
  ppt_ = std::clamp(ppt_ * by, std::min(fitScale(), kMaxPixelsPerToken), kMaxPixelsPerToken);
  if (ppt_ == before) return;
  // The token under the cursor stays under it.
  origin_ = QPointF(at.x() - (pos.x() - a.left()) / ppt_, at.y() - (pos.y() - a.top()) / ppt_);
  setView(origin_, ppt_);
}

// ---- tiles ----

const LongMapView::Tile* LongMapView::tile(const Key& key) const {
  const auto it = tiles_.constFind(key);
  return it == tiles_.cend() ? nullptr : &*it;
}

const std::vector<float>* LongMapView::cachedTile(qint64 factor, qint64 tx, qint64 ty, bool* exact) const {
  const Tile* t = tile({factor, tx, ty});
  if (exact) *exact = t && t->exact;
  return t ? &t->cells : nullptr;
}

void LongMapView::schedule() {
  wanted_.clear();
  if (!reader_ || !isVisible()) return;
  const qint64 n = reader_->tokens(), f = factor(), span = kTile * f;
  const QRectF a = mapArea();
  const qint64 last = (n + span - 1) / span - 1;
  const auto t0x = std::clamp<qint64>(qint64(std::floor(origin_.x() / double(span))), 0, last);
  const auto t1x = std::clamp<qint64>(qint64(std::floor((origin_.x() + a.width() / ppt_) / double(span))), 0, last);
  const auto t0y = std::clamp<qint64>(qint64(std::floor(origin_.y() / double(span))), 0, last);
  const auto t1y = std::clamp<qint64>(qint64(std::floor((origin_.y() + a.height() / ppt_) / double(span))), 0, last);
  std::vector<Key> inView;
  for (qint64 ty = t0y; ty <= t1y; ++ty) {
    for (qint64 tx = t0x; tx <= t1x; ++tx) inView.push_back({f, tx, ty});
  }
  const double cx = origin_.x() + a.width() / ppt_ / 2, cy = origin_.y() + a.height() / ppt_ / 2;
  std::sort(inView.begin(), inView.end(), [&](const Key& p, const Key& q) {
    const auto d = [&](const Key& k) {
      return std::hypot(double(k.tx * span + span / 2) - cx, double(k.ty * span + span / 2) - cy);
    };
    return d(p) < d(q);
  });
  // The minimap's level (the whole map in one tile) first as a preview, then previews of the tiles in view, then
  // exact ones, the minimap's exact tile last (it is the whole map again: at 32,768 tokens as long as the view's).
  const Key whole{factorFor(double(kTile) / double(std::max<qint64>(1, n))), 0, 0};
  const auto need = [&](const Key& k, bool exact) {
    const Tile* t = tile(k);
    if ((!t || !t->exact) && composeFromFiner(k)) return;
    if (t && (t->exact || !exact)) return;
    if (!exact && k.factor < kPreviewFrom) return;
    wanted_.push_back({k, exact});
  };
  need(whole, false);
  for (const Key& k : inView) need(k, false);
  for (const Key& k : inView) need(k, true);
  need(whole, true);
  startNext();
}

void LongMapView::startNext() {
  if (running_ || wanted_.empty() || !reader_) return;
  const Job job = wanted_.front();
  wanted_.erase(wanted_.begin());
  running_ = true;
  const quint64 serial = serial_;
  const auto pooling = pooling_;
  auto reader = reader_;
  tilePool().start([this, reader, job, serial, pooling] {
    auto cells = std::make_shared<std::vector<float>>(std::size_t(kTile) * kTile, 0.0f);
    const qint64 span = kTile * job.key.factor;
    try {
      if (job.exact) {
        reader->pooled(job.key.factor, pooling, job.key.ty * span, kTile, job.key.tx * span, kTile, cells->data(),
                       kTile);
      } else {
        reader->preview(job.key.factor, pooling, job.key.ty * span, kTile, job.key.tx * span, kTile, cells->data(),
                        kTile);
      }
    } catch (const std::exception&) {
      cells.reset();
    }
    {
      const std::lock_guard lock(arrivalsMutex_);
      arrivals_.push_back({serial, job.key, job.exact, std::move(cells)});
    }
    QMetaObject::invokeMethod(this, "takeArrivals", Qt::QueuedConnection);
  });
}

void LongMapView::takeArrivals() {
  std::vector<Arrival> got;
  {
    const std::lock_guard lock(arrivalsMutex_);
    got.swap(arrivals_);
  }
  for (Arrival& a : got) arrived(a.serial, a.key, a.exact, std::move(a.cells));
}

void LongMapView::arrived(quint64 serial, Key key, bool exact, std::shared_ptr<std::vector<float>> cells) {
  running_ = false;
  if (serial == serial_ && cells) {
    if (exact || !tile(key) || !tile(key)->exact) ++tilesComputed_;
    keep(key, std::move(*cells), exact);
    emit tilesArrived();
    update();
  }
  schedule();
}

void LongMapView::keep(const Key& key, std::vector<float> cells, bool exact) {
  Tile& t = tiles_[key];
  if (exact || !t.exact) {
    t.cells = std::move(cells);
    t.exact = exact;
    t.image = {};
  }
  recent_.remove(key);
  recent_.push_back(key);
  while (int(tiles_.size()) > kMaxTiles && !recent_.empty()) {
    tiles_.remove(recent_.front());
    recent_.pop_front();
  }
}

bool LongMapView::composeFromFiner(const Key& key) {
  if (!reader_) return false;
  const qint64 n = reader_->tokens();
  for (qint64 ratio = 2; ratio <= 8 && key.factor % ratio == 0; ratio *= 2) {
    const qint64 f = key.factor / ratio, span = kTile * f, last = (n + span - 1) / span - 1;
    // The finer tiles under this one (those past the map's last tile hold nothing).
    std::vector<std::pair<Key, const Tile*>> parts;
    bool complete = true;
    for (qint64 ty = key.ty * ratio; complete && ty < (key.ty + 1) * ratio && ty <= last; ++ty) {
      for (qint64 tx = key.tx * ratio; tx < (key.tx + 1) * ratio && tx <= last; ++tx) {
        const Tile* t = tile({f, tx, ty});
        if (!t || !t->exact) {
          complete = false;
          break;
        }
        parts.push_back({{f, tx, ty}, t});
      }
    }
    if (!complete || parts.empty()) continue;
    std::vector<float> cells(std::size_t(kTile) * kTile, 0.0f);
    const bool mean = pooling_ == attn::HeadMapReader::Pooling::Mean;
    std::vector<double> sums(mean ? cells.size() : 0, 0.0), counts(mean ? cells.size() : 0, 0.0);
    // The weights a finer cell covers: its factor x factor block clipped to the map.
    const auto covered = [&](qint64 cell) { return double(std::clamp<qint64>(n - cell * f, 0, f)); };
    for (const auto& [k, t] : parts) {
      for (int i = 0; i < kTile; ++i) {
        const qint64 row = k.ty * kTile + i;  // the finer cell's row in its level
        if (row * f >= n) break;
        const std::size_t to = std::size_t(row / ratio - key.ty * kTile) * kTile;
        const float* from = t->cells.data() + std::size_t(i) * kTile;
        for (int j = 0; j < kTile; ++j) {
          const qint64 col = k.tx * kTile + j;
          if (col * f >= n) break;
          const std::size_t at = to + std::size_t(col / ratio - key.tx * kTile);
          if (mean) {
            const double w = covered(row) * covered(col);
            sums[at] += double(from[j]) * w;
            counts[at] += w;
          } else {
            cells[at] = std::max(cells[at], from[j]);
          }
        }
      }
    }
    for (std::size_t c = 0; mean && c < cells.size(); ++c) {
      if (counts[c] > 0) cells[c] = float(sums[c] / counts[c]);
    }
    keep(key, std::move(cells), true);
    update();
    return true;
  }
  return false;
}

float LongMapView::colourValue(float w) const {
  if (!(w == w)) return w;
  if (scale_ == Scale::Linear) return w / max_;
  if (w <= 0.0f) return 0.0f;
  return std::clamp(1.0f + std::log10(w / max_) / float(kLogDecades), 0.0f, 1.0f);
}

QImage& LongMapView::imageOf(Tile& t) {
  if (!t.image.isNull()) return t.image;
  t.image = QImage(kTile, kTile, QImage::Format_ARGB32_Premultiplied);
  const auto& table = render::colorTable(colormap_);
  for (int y = 0; y < kTile; ++y) {
    auto* line = reinterpret_cast<QRgb*>(t.image.scanLine(y));
    const float* cells = t.cells.data() + std::size_t(y) * kTile;
    for (int x = 0; x < kTile; ++x) line[x] = table(colourValue(cells[x]));
  }
  return t.image;
}

// ---- painting ----

void LongMapView::drawTiles(QPainter& p, const QRectF& area) {
  const qint64 n = reader_->tokens(), f = factor(), span = kTile * f;
  const qint64 last = (n + span - 1) / span - 1;
  const auto first = [&](double at) { return std::clamp<qint64>(qint64(std::floor(at / double(span))), 0, last); };
  const qint64 t0x = first(origin_.x()), t1x = first(origin_.x() + area.width() / ppt_);
  const qint64 t0y = first(origin_.y()), t1y = first(origin_.y() + area.height() / ppt_);
  const auto screen = [&](double key, double query) {
    return QPointF(area.left() + (key - origin_.x()) * ppt_, area.top() + (query - origin_.y()) * ppt_);
  };
  // The part of a tile inside the map, in cells, and where it lands.
  const auto place = [&](const Key& k, QRectF& target, QRect& source) {
    const qint64 s = kTile * k.factor;
    const qint64 cols = std::min<qint64>(kTile, (n - k.tx * s + k.factor - 1) / k.factor);
    const qint64 rows = std::min<qint64>(kTile, (n - k.ty * s + k.factor - 1) / k.factor);
    source = QRect(0, 0, int(cols), int(rows));
    const QPointF tl = screen(double(k.tx * s), double(k.ty * s));
    target = QRectF(tl, QSizeF(double(cols * k.factor) * ppt_, double(rows * k.factor) * ppt_));
  };
  const QRectF mapRect(screen(0, 0), QSizeF(double(n) * ppt_, double(n) * ppt_));
  p.fillRect(mapRect.intersected(area), palette().color(QPalette::Mid));
  exactInView_ = true;
  for (qint64 ty = t0y; ty <= t1y; ++ty) {
    for (qint64 tx = t0x; tx <= t1x; ++tx) {
      Key k{f, tx, ty};
      QRectF target;
      QRect source;
      place(k, target, source);
      auto it = tiles_.find(k);
      if (it != tiles_.end()) {
        p.drawImage(target, imageOf(*it), source);
        recent_.remove(k);
        recent_.push_back(k);
        exactInView_ = exactInView_ && it->exact;
        continue;
      }
      exactInView_ = false;
      // The nearest coarser tile that covers this one stands in, clipped to it.
      for (qint64 g = f * 2; g <= (qint64(1) << 40); g *= 2) {
        const qint64 gs = kTile * g;
        Key c{g, tx * span / gs, ty * span / gs};
        auto ct = tiles_.find(c);
        if (ct == tiles_.end()) {
          if (gs >= n) break;
          continue;
        }
        QRectF ctarget;
        QRect csource;
        place(c, ctarget, csource);
        p.save();
        p.setClipRect(target.intersected(area));
        p.drawImage(ctarget, imageOf(*ct), csource);
        p.restore();
        break;
      }
    }
  }
  // The selected query row.
  if (selected_) {
    const QPointF a = screen(0, double(*selected_)), b = screen(double(n), double(*selected_ + 1));
    p.setPen(QPen(QColor(255, 255, 255, 200), 1));
    p.setBrush(Qt::NoBrush);
    p.drawRect(
        QRectF(QPointF(area.left(), a.y()), QPointF(std::min(b.x(), area.right()), b.y())).adjusted(0, -1, 0, 1));
  }
}

void LongMapView::drawLabels(QPainter& p, const QRectF& area) {
  const qint64 n = reader_->tokens();
  QFont small = font();
  small.setPointSizeF(std::max(6.0, small.pointSizeF() * 0.85));
  p.setFont(small);
  const QFontMetricsF fm(small);
  p.setPen(palette().color(QPalette::WindowText));
  const double keys0 = std::max(0.0, origin_.x()), keys1 = std::min(double(n), origin_.x() + area.width() / ppt_);
  const double rows0 = std::max(0.0, origin_.y()), rows1 = std::min(double(n), origin_.y() + area.height() / ppt_);
  p.drawText(QRectF(4, 4, area.left() - 8, kTopMargin - 8), Qt::AlignLeft | Qt::AlignTop, tr("queries \u2193"));
  p.drawText(QRectF(area.left(), 4, area.width(), 16), Qt::AlignRight | Qt::AlignTop, tr("keys \u2192"));
  if (ppt_ >= kLabelPixels && tokens_.size() == n) {
    for (auto r = qint64(rows0); r < qint64(std::ceil(rows1)); ++r) {
      const double y = area.top() + (double(r) - origin_.y()) * ppt_;
      p.drawText(QRectF(2, y, area.left() - 6, ppt_), Qt::AlignRight | Qt::AlignVCenter,
                 elided(tokens_[r], fm, area.left() - 8));
    }
    for (auto c = qint64(keys0); c < qint64(std::ceil(keys1)); ++c) {
      const double x = area.left() + (double(c) - origin_.x()) * ppt_;
      p.save();
      p.translate(x + ppt_ / 2, area.top() - 4);
      p.rotate(-90);
      p.drawText(QRectF(0, -ppt_ / 2, kTopMargin - 24, ppt_), Qt::AlignLeft | Qt::AlignVCenter,
                 elided(tokens_[c], fm, kTopMargin - 26));
      p.restore();
    }
    return;
  }
  // Too small for labels: token indices at a round step.
  const qint64 step = tickStep(ppt_, 64.0);
  for (qint64 i = qint64(std::ceil(rows0 / double(step))) * step; double(i) < rows1; i += step) {
    const double y = area.top() + (double(i) + 0.5 - origin_.y()) * ppt_;
    p.drawText(QRectF(2, y - 8, area.left() - 6, 16), Qt::AlignRight | Qt::AlignVCenter, QString::number(i));
  }
  for (qint64 i = qint64(std::ceil(keys0 / double(step))) * step; double(i) < keys1; i += step) {
    const double x = area.left() + (double(i) + 0.5 - origin_.x()) * ppt_;
    p.drawText(QRectF(x - 40, area.top() - 20, 80, 16), Qt::AlignHCenter | Qt::AlignBottom, QString::number(i));
  }
}

QRectF LongMapView::minimapRect() const {
  const QRectF a = mapArea();
  const double side = std::min<double>(kMinimap, std::min(a.width(), a.height()) / 3);
  return QRectF(a.right() - side - 6, a.top() + 6, side, side);
}

void LongMapView::drawMinimap(QPainter& p) {
  const qint64 n = reader_->tokens();
  const QRectF a = mapArea(), m = minimapRect();
  if (m.width() < 40 || ppt_ <= fitScale() * 1.01) return;  // the whole map is in view already
  p.fillRect(m.adjusted(-2, -2, 2, 2), QColor(0, 0, 0, 160));
  const Key whole{factorFor(double(kTile) / double(std::max<qint64>(1, n))), 0, 0};
  auto it = tiles_.find(whole);
  if (it != tiles_.end()) {
    const qint64 cells = std::min<qint64>(kTile, (n + whole.factor - 1) / whole.factor);
    const double side = m.width() * double(cells * whole.factor) / double(n);
    p.drawImage(QRectF(m.topLeft(), QSizeF(side, side)), imageOf(*it), QRect(0, 0, int(cells), int(cells)));
  }
  const double s = m.width() / double(n);
  QRectF view(m.left() + origin_.x() * s, m.top() + origin_.y() * s, a.width() / ppt_ * s, a.height() / ppt_ * s);
  p.setBrush(Qt::NoBrush);
  p.setPen(QPen(Qt::black, 3));
  p.drawRect(view.intersected(m));
  p.setPen(QPen(Qt::white, 1));
  p.drawRect(view.intersected(m));
}

void LongMapView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().color(QPalette::Base));
  const QRectF area = mapArea();
  if (!reader_) {
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap, status_);
    return;
  }
  p.save();
  p.setClipRect(area);
  drawTiles(p, area);
  p.restore();
  drawLabels(p, area);
  drawHighlight(p, area);
  drawMinimap(p);
  // The title and level over the map's top margin; the status line under it.
  const qint64 f = factor();
  QString level = f == 1 ? tr("every weight")
                         : tr("cells of %1 x %1 weights, %2")
                               .arg(f)
                               .arg(pooling_ == attn::HeadMapReader::Pooling::Max ? tr("max-pooled") : tr("mean"));
  if (!exactInView_) level += tr(" \u00b7 preview (exact rows at a stride); computing the exact map\u2026");
  p.setPen(palette().color(QPalette::WindowText));
  p.drawText(QRectF(area.left(), 4, area.width() - 60, 16), Qt::AlignLeft | Qt::AlignTop,
             QFontMetricsF(font()).elidedText(title_ + u" \u00b7 "_s + level, Qt::ElideRight, area.width() - 60));
  p.drawText(QRectF(4, height() - kStatusHeight, width() - 8, kStatusHeight), Qt::AlignLeft | Qt::AlignVCenter,
             QFontMetricsF(font()).elidedText(status_, Qt::ElideRight, width() - 8));
}

// ---- input ----

void LongMapView::hover(QPointF pos) {
  const auto cell = cellAt(pos);
  if (!cell) {
    emit cellHovered(-1, -1, 0.0f);
    return;
  }
  const auto [q, k] = *cell;
  const float w = reader_->weight(q, k);  // exact: one weight recomputed, whatever the level in view
  const auto token = [&](qint64 i) {
    return i < tokens_.size() ? tokens_[i].left(40).replace(u'\n', u"\\n"_s) : QString();
  };
  status_ = tr("query %1 \u201c%2\u201d \u2192 key %3 \u201c%4\u201d: %5")
                .arg(q)
                .arg(token(q))
                .arg(k)
                .arg(token(k))
                .arg(double(w), 0, 'g', 6);
  update(QRect(0, height() - kStatusHeight, width(), kStatusHeight));
  emit cellHovered(q, k, w);
}

void LongMapView::mousePressEvent(QMouseEvent* event) {
  if (!reader_ || event->button() != Qt::LeftButton) return QWidget::mousePressEvent(event);
  if (minimapRect().contains(event->position()) && ppt_ > fitScale() * 1.01) {
    minimapDrag_ = true;
    mouseMoveEvent(event);
    return;
  }
  dragFrom_ = event->position();
  dragOrigin_ = origin_;
}

void LongMapView::mouseMoveEvent(QMouseEvent* event) {
  if (!reader_) return;
  if (minimapDrag_) {
    const QRectF m = minimapRect(), a = mapArea();
    const double n = double(reader_->tokens());
    const QPointF at((event->position().x() - m.left()) / m.width() * n,
                     (event->position().y() - m.top()) / m.height() * n);
    setView(QPointF(at.x() - a.width() / ppt_ / 2, at.y() - a.height() / ppt_ / 2), ppt_);
    return;
  }
  if (dragFrom_) {
    const QPointF d = event->position() - *dragFrom_;
    setView(dragOrigin_ - d / ppt_, ppt_);
    return;
  }
  hover(event->position());
}

void LongMapView::mouseReleaseEvent(QMouseEvent* event) {
  if (minimapDrag_) {
    minimapDrag_ = false;
    return;
  }
  if (dragFrom_ && (event->position() - *dragFrom_).manhattanLength() < 4) {
    if (const auto cell = cellAt(event->position())) {
      selectedKey_ = cell->second;
      selected_.reset();
      selectQuery(cell->first);
    }
  }
  dragFrom_.reset();
}

void LongMapView::wheelEvent(QWheelEvent* event) {
  const double notches = event->angleDelta().y() / 120.0;
  if (notches == 0 || !reader_) return;
  zoomAround(event->position(), std::pow(1.25, notches));
  event->accept();
}

void LongMapView::keyPressEvent(QKeyEvent* event) {
  if (!reader_) return QWidget::keyPressEvent(event);
  const QRectF a = mapArea();
  const double w = a.width() / ppt_, h = a.height() / ppt_;
  const bool ctrl = event->modifiers() & Qt::ControlModifier;
  switch (event->key()) {
    case Qt::Key_Left: setView(origin_ - QPointF(w / 8, 0), ppt_); break;
    case Qt::Key_Right: setView(origin_ + QPointF(w / 8, 0), ppt_); break;
    case Qt::Key_Up:
      if (ctrl) {
        selectQuery(selected_ ? *selected_ - 1 : 0);
      } else {
        setView(origin_ - QPointF(0, h / 8), ppt_);
      }
      break;
    case Qt::Key_Down:
      if (ctrl) {
        selectQuery(selected_ ? *selected_ + 1 : 0);
      } else {
        setView(origin_ + QPointF(0, h / 8), ppt_);
      }
      break;
    case Qt::Key_PageUp: setView(origin_ - QPointF(0, h), ppt_); break;
    case Qt::Key_PageDown: setView(origin_ + QPointF(0, h), ppt_); break;
    case Qt::Key_Plus:
    case Qt::Key_Equal: zoomAround(a.center(), 2.0); break;
    case Qt::Key_Minus: zoomAround(a.center(), 0.5); break;
    case Qt::Key_Home:
    case Qt::Key_0: showWhole(); break;
    default: return QWidget::keyPressEvent(event);
  }
  event->accept();
}

void LongMapView::leaveEvent(QEvent* event) {
  emit cellHovered(-1, -1, 0.0f);
  QWidget::leaveEvent(event);
}

void LongMapView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  schedule();
}

void LongMapView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  if (whole_) {
    showWhole();
    return;
  }
  clampView();
  schedule();
}

}  // namespace attn::ui
