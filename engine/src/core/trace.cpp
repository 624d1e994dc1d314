#include "attn/trace.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attn {

std::string_view to_string(Stage stage) {
  switch (stage) {
    case Stage::Encoder: return "encoder";
    case Stage::Decoder: return "decoder";
    case Stage::Cross: return "cross";
    case Stage::Glimpse: return "glimpse";
    case Stage::Pool: return "pool";
    case Stage::Mechanism: return "mechanism";
  }
  return "unknown";
}

Index pool_bin_start(Index k, Index n, Index m) { return m <= 0 ? 0 : (k * n) / m; }

Matrix pool_rows(Index rows, Index cols, Index out_rows, Index out_cols, Pool pool,
                 const std::function<void(Index, float*)>& read_row) {
  const bool max = pool == Pool::Max;
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  Matrix out(out_rows, out_cols);
  std::vector<float> row(static_cast<std::size_t>(cols));
  std::vector<Index> col_bin(static_cast<std::size_t>(cols));
  for (Index j = 0; j < out_cols; ++j) {
    for (Index c = pool_bin_start(j, cols, out_cols); c < pool_bin_start(j + 1, cols, out_cols); ++c) {
      col_bin[static_cast<std::size_t>(c)] = j;
    }
  }
  std::vector<char> nan(static_cast<std::size_t>(out_cols));
  for (Index i = 0; i < out_rows; ++i) {
    const Index r0 = pool_bin_start(i, rows, out_rows), r1 = pool_bin_start(i + 1, rows, out_rows);
    auto acc = out.row(i);
    acc.setConstant(max ? -std::numeric_limits<float>::infinity() : 0.0f);
    std::fill(nan.begin(), nan.end(), 0);
    for (Index r = r0; r < r1; ++r) {
      read_row(r, row.data());
      for (Index c = 0; c < cols; ++c) {
        const float v = row[static_cast<std::size_t>(c)];
        const Index j = col_bin[static_cast<std::size_t>(c)];
        if (std::isnan(v)) {
          nan[static_cast<std::size_t>(j)] = 1;
        } else if (max) {
          acc(j) = std::max(acc(j), v);
        } else {
          acc(j) += v;
        }
      }
    }
    for (Index j = 0; j < out_cols; ++j) {
      if (nan[static_cast<std::size_t>(j)]) {
        acc(j) = kNaN;
      } else if (!max) {
        const Index cells = (r1 - r0) * (pool_bin_start(j + 1, cols, out_cols) - pool_bin_start(j, cols, out_cols));
        acc(j) /= static_cast<float>(cells);
      }
    }
  }
  return out;
}

std::vector<std::string> pooled_labels(const std::vector<std::string>& source, Index n, Index bins) {
  std::vector<std::string> out;
  if (static_cast<Index>(source.size()) != n) return out;
  for (Index k = 0; k < bins; ++k) out.push_back(source[static_cast<std::size_t>(pool_bin_start(k, n, bins))]);
  return out;
}

std::optional<AttentionMap> pooled_map(const AttentionMap& map, Index max_side, Pool pool) {
  return pooled_map(map, max_side, max_side, pool);
}

std::optional<AttentionMap> pooled_map(const AttentionMap& map, Index max_rows, Index max_cols, Pool pool) {
  const Index rows = map.weights.rows(), cols = map.weights.cols();
  if (max_rows <= 0 || max_cols <= 0 || (rows <= max_rows && cols <= max_cols)) return std::nullopt;
  AttentionMap out;
  out.stage = map.stage;
  out.layer = map.layer;
  out.head = map.head;
  out.name = map.name;
  out.row_axis = map.row_axis;
  out.col_axis = map.col_axis;
  out.quantity = map.quantity;
  const Index out_rows = std::min(rows, max_rows), out_cols = std::min(cols, max_cols);
  out.weights = pool_rows(rows, cols, out_rows, out_cols, pool,
                          [&](Index r, float* row) { Eigen::Map<RowVector>(row, cols) = map.weights.row(r); });
  out.row_labels = pooled_labels(map.row_labels, rows, out_rows);
  out.col_labels = pooled_labels(map.col_labels, cols, out_cols);
  MapPooling pooling;
  pooling.rows = rows;
  pooling.cols = cols;
  pooling.pool = pool;
  pooling.row_tokens = map.row_labels;
  pooling.col_tokens = map.col_labels;
  out.pooled = std::move(pooling);
  return out;
}

std::string AttentionMap::title() const {
  std::string out = name;
  if (stage != Stage::Mechanism) out += " · " + std::string(to_string(stage)) + " layer " + std::to_string(layer);
  if (head >= 0) out += " · head " + std::to_string(head);
  return out;
}

AttentionMap& AttentionTrace::add(AttentionMap map) { return maps_.emplace_back(std::move(map)); }

const AttentionMap* AttentionTrace::find(Stage stage, int layer, int head, std::string_view name) const {
  for (const auto& m : maps_) {
    if (m.stage == stage && m.layer == layer && m.head == head && (name.empty() || m.name == name)) return &m;
  }
  return nullptr;
}

void TraceTag::record(const Matrix& weights, int head, std::string_view suffix) const {
  if (!trace) return;
  AttentionMap map;
  map.stage = stage;
  map.layer = layer;
  map.head = head;
  map.name = suffix.empty() ? name : name + " " + std::string(suffix);
  map.weights = weights;
  map.row_axis = row_axis;
  map.col_axis = col_axis;
  if (rows && static_cast<Index>(rows->size()) == weights.rows()) map.row_labels = *rows;
  if (cols && static_cast<Index>(cols->size()) == weights.cols()) map.col_labels = *cols;
  trace->add(std::move(map));
}

TraceTag TraceTag::named(std::string new_name) const {
  TraceTag t = *this;
  t.name = std::move(new_name);
  return t;
}

TraceTag TraceTag::with_labels(const Labels* new_rows, const Labels* new_cols) const {
  TraceTag t = *this;
  t.rows = new_rows;
  t.cols = new_cols;
  return t;
}

TraceTag TraceTag::with_axes(std::string new_row_axis, std::string new_col_axis) const {
  TraceTag t = *this;
  t.row_axis = std::move(new_row_axis);
  t.col_axis = std::move(new_col_axis);
  return t;
}

}  // namespace attn
