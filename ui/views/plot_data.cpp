#include "views/plot_data.h"

#include "views/qcustomplot.h"

#include <algorithm>
#include <cmath>

namespace attn::ui::render {

QCPColorGradient gradient(Colormap map) {
  QCPColorGradient g;
  g.clearColorStops();
  const auto stops = colorStops(map);
  for (std::size_t i = 0; i < stops.size(); ++i) {
    g.setColorStopAt(double(i) / double(stops.size() - 1), QColor::fromRgb(stops[i]));
  }
  g.setColorInterpolation(QCPColorGradient::ciRGB);
  g.setLevelCount(512);
  g.setNanHandling(QCPColorGradient::nhTransparent);
  return g;
}

QCPRange cellCentreRange(int cells) {
  if (cells <= 1) return QCPRange(-0.5, 0.5);
  return QCPRange(0.0, double(cells - 1));
}

QCPRange cellAxisRange(int cells) { return QCPRange(-0.5, double(std::max(cells, 1)) - 0.5); }

void fillColorMapData(QCPColorMapData& data, const attn::Matrix& m) {
  const int rows = int(m.rows());
  const int cols = int(m.cols());
  data.setSize(cols, rows);
  data.setRange(cellCentreRange(cols), cellCentreRange(rows));
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) data.setCell(c, r, double(m(r, c)));
  }
}

BankMapInfo fillFilterBankMap(QCPColorMapData& data, const attn::glimpse::FilterBank& bank, int maxColumns) {
  BankMapInfo info;
  int lo = bank.touched_begin();
  int hi = bank.touched_end();
  if (bank.n <= 0 || hi <= lo) {
    data.setSize(1, 1);
    data.setRange(QCPRange(-0.5, 0.5), QCPRange(-0.5, 0.5));
    data.setCell(0, 0, 0.0);
    info.columns = 1;
    info.lower = info.upper = 0.0;
    return info;
  }
  const int pixels = hi - lo;
  const int per = std::max(1, (pixels + std::max(1, maxColumns) - 1) / std::max(1, maxColumns));
  const int columns = (pixels + per - 1) / per;
  data.setSize(columns, bank.n);
  data.fill(0.0);
  for (int i = 0; i < bank.n && std::size_t(i) < bank.begin.size(); ++i) {
    const int begin = bank.begin[std::size_t(i)];
    const int length = bank.length[std::size_t(i)];
    const int offset = bank.offset[std::size_t(i)];
    if (offset < 0 || std::size_t(offset) + std::size_t(std::max(0, length)) > bank.values.size()) continue;
    for (int k = 0; k < length; ++k) {
      const int column = (begin + k - lo) / per;
      if (column < 0 || column >= columns) continue;
      const double v = bank.values[std::size_t(offset + k)];
      if (!std::isfinite(v)) continue;
      if (v > data.cell(column, i)) data.setCell(column, i, v);
      info.peak = std::max(info.peak, v);
    }
  }
  // Cell centres: a merged cell sits at the middle of the pixels it holds.
  info.lower = lo + 0.5 * (per - 1);
  info.upper = lo + (columns - 1) * per + 0.5 * (per - 1);
  info.columns = columns;
  info.pixelsPerColumn = per;
  const QCPRange keys = columns > 1 ? QCPRange(info.lower, info.upper) : QCPRange(info.lower - 0.5, info.lower + 0.5);
  const QCPRange values = bank.n > 1 ? QCPRange(0.0, double(bank.n - 1)) : QCPRange(-0.5, 0.5);
  data.setRange(keys, values);
  return info;
}

}  // namespace attn::ui::render
