// What glimpse_canvas.cpp and glimpse_canvas_paint.cpp share: the finiteness tests and the handles' size.
#pragma once

#include <QPointF>

#include <cmath>

namespace attn::ui::glimpse_detail {

constexpr double kHandleRadius = 5.0;

inline bool finite(QPointF p) { return std::isfinite(p.x()) && std::isfinite(p.y()); }
inline bool finite(double v) { return std::isfinite(v); }

}  // namespace attn::ui::glimpse_detail
