#include "attn/trace.h"

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
