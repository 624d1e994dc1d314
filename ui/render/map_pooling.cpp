#include "render/map_pooling.h"

#include <QObject>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace attn::ui::render {

CellShape cellsForPixels(Index rows, Index cols, QSize pixels) {
  return {pixels.height() > 0 ? std::min<Index>(rows, pixels.height()) : rows,
          pixels.width() > 0 ? std::min<Index>(cols, pixels.width()) : cols};
}

std::shared_ptr<const AttentionMap> pooledToCells(std::shared_ptr<const AttentionMap> map, CellShape cells) {
  if (!map) return map;
  const Pool pool = map->pooled ? map->pooled->pool : Pool::Max;
  if (auto pooled = attn::pooled_map(*map, cells.rows, cells.cols, pool)) {
    return std::make_shared<const AttentionMap>(std::move(*pooled));
  }
  return map;
}

std::vector<Index> composedStarts(std::optional<Index> original, Index given, Index base, Index shown) {
  std::vector<Index> starts;
  const auto level = [&](Index from, Index to) {
    if (from == to) return;
    std::vector<Index> next(std::size_t(to) + 1);
    for (Index k = 0; k <= to; ++k) {
      const Index first = attn::pool_bin_start(k, from, to);
      next[std::size_t(k)] = starts.empty() ? first : starts[std::size_t(first)];
    }
    starts = std::move(next);
  };
  if (original) level(*original, given);
  level(given, base);
  level(base, shown);
  return starts;
}

QString cellsPerBin(const std::vector<Index>& starts) {
  if (starts.size() < 2) return u"1"_s;
  Index lo = starts[1] - starts[0], hi = lo;
  for (std::size_t k = 1; k < starts.size(); ++k) {
    lo = std::min(lo, starts[k] - starts[k - 1]);
    hi = std::max(hi, starts[k] - starts[k - 1]);
  }
  return lo == hi ? QString::number(lo) : u"%1\u2013%2"_s.arg(lo).arg(hi);
}

QString poolName(Pool pool) { return pool == Pool::Max ? QObject::tr("max-pooled") : QObject::tr("mean-pooled"); }

QString pooledAxisTitle(const QString& axis, const QString& noun, Pool pool, const std::vector<Index>& starts) {
  return QObject::tr("%1 \u00b7 %2, %3 per cell")
      .arg(axis.isEmpty() ? noun : axis, poolName(pool), cellsPerBin(starts));
}

}  // namespace attn::ui::render
