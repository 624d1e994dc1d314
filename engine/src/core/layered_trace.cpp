#include "attn/layered_trace.h"

#include <algorithm>

namespace attn {

namespace {
std::size_t head_size(Index rows, Index cols) { return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols); }
}  // namespace

HeadStack::HeadStack(int heads, Index rows, Index cols, Precision precision)
    : heads_(std::max(heads, 0)), rows_(std::max<Index>(rows, 0)), cols_(std::max<Index>(cols, 0)),
      precision_(precision) {
  const std::size_t n = static_cast<std::size_t>(heads_) * head_size(rows_, cols_);
  if (precision_ == Precision::F32) {
    f32_.assign(n, 0.0f);
  } else {
    f16_.assign(n, Eigen::half(0.0f));
  }
}

std::size_t HeadStack::bytes() const { return f32_.size() * sizeof(float) + f16_.size() * sizeof(Eigen::half); }

float* HeadStack::f32(int head) { return f32_.data() + static_cast<std::size_t>(head) * head_size(rows_, cols_); }
const float* HeadStack::f32(int head) const {
  return f32_.data() + static_cast<std::size_t>(head) * head_size(rows_, cols_);
}
Eigen::half* HeadStack::f16(int head) {
  return f16_.data() + static_cast<std::size_t>(head) * head_size(rows_, cols_);
}
const Eigen::half* HeadStack::f16(int head) const {
  return f16_.data() + static_cast<std::size_t>(head) * head_size(rows_, cols_);
}

float HeadStack::at(int head, Index row, Index col) const {
  const std::size_t i = static_cast<std::size_t>(head) * head_size(rows_, cols_) +
                        static_cast<std::size_t>(row) * static_cast<std::size_t>(cols_) + static_cast<std::size_t>(col);
  return precision_ == Precision::F32 ? f32_[i] : static_cast<float>(f16_[i]);
}

Matrix HeadStack::head(int h) const {
  if (precision_ == Precision::F32) return Eigen::Map<const Matrix>(f32(h), rows_, cols_);
  return Eigen::Map<const Eigen::Matrix<Eigen::half, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(f16(h), rows_,
                                                                                                      cols_)
      .cast<float>();
}

Matrix HeadStack::mean() const {
  Matrix sum = Matrix::Zero(rows_, cols_);
  if (heads_ == 0) return sum;
  for (int h = 0; h < heads_; ++h) {
    if (precision_ == Precision::F32) {
      sum += Eigen::Map<const Matrix>(f32(h), rows_, cols_);
    } else {
      sum += head(h);
    }
  }
  return sum / static_cast<float>(heads_);
}

void HeadStack::set_head(int h, const MatrixCRef& m) {
  if (precision_ == Precision::F32) {
    Eigen::Map<Matrix>(f32(h), rows_, cols_) = m;
  } else {
    Eigen::Map<Eigen::Matrix<Eigen::half, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(f16(h), rows_, cols_) =
        m.cast<Eigen::half>();
  }
}

int LayeredTrace::layer_count(Stage stage) const {
  int count = 0;
  for (const auto& l : layers) {
    if (l.stage == stage) count = std::max(count, l.layer + 1);
  }
  return count;
}

const LayerAttention* LayeredTrace::find(Stage stage, int layer) const {
  for (const auto& l : layers) {
    if (l.stage == stage && l.layer == layer) return &l;
  }
  return nullptr;
}

std::shared_ptr<const AttentionMap> LayeredTrace::map(Stage stage, int layer, int head) const {
  const LayerAttention* l = find(stage, layer);
  if (!l || head >= l->maps.heads() || head < -1) return nullptr;
  auto map = std::make_shared<AttentionMap>();
  map->stage = stage;
  // AttentionMap::title() prints the layer as stored and the head 1-based; layers here are 0-based, and
  // people count layers from 1 as they count heads.
  map->layer = layer + 1;
  map->head = head;
  map->name = head >= 0 ? "attention" : "head mean";
  map->weights = head >= 0 ? l->maps.head(head) : l->maps.mean();
  const bool cross = stage == Stage::Cross;
  const Labels& rows = cross ? cross_rows : tokens;
  if (static_cast<Index>(rows.size()) == map->weights.rows()) map->row_labels = rows;
  if (static_cast<Index>(tokens.size()) == map->weights.cols()) map->col_labels = tokens;
  if (!cross && spans.size() == tokens.size()) {
    map->row_spans = spans;
    map->col_spans = spans;
  } else if (spans.size() == tokens.size()) {
    map->col_spans = spans;
  }
  map->row_axis = cross ? "target" : "queries";
  map->col_axis = cross ? "source" : "keys";
  return map;
}

}  // namespace attn
