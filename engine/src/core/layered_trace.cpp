#include "attn/layered_trace.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <new>
#include <utility>
#include <vector>

namespace attn {

namespace detail {

namespace {
constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kHugeFrom = std::size_t{4} << 20;

// Large stacks freed are kept (up to pool_bytes() in all, the oldest let go first) for the next run's stacks of the
// same size: their pages are already faulted in. A run writes its maps into fresh memory otherwise, and the kernel
// zeroes every page first: 283 MB for a 512-token prompt through the SmolLM2-135M shape, measured at 15% of that
// run (perf, clear_page_erms); 738 MB for the TinyLlama-1.1B shape, 15% too. Off under AddressSanitizer, whose
// use-after-free checks need the memory freed.
std::size_t pool_bytes() {
  static const std::size_t bytes = [] {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    const std::size_t eighth =
        pages > 0 && page > 0 ? static_cast<std::size_t>(pages) / 8 * static_cast<std::size_t>(page) : 0;
    return std::clamp(eighth, std::size_t{512} << 20, std::size_t{2} << 30);  // an eighth of the memory
  }();
  return bytes;
}
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kPool = false;
#else
constexpr bool kPool = true;
#endif

class HugePool {
 public:
  void* take(std::size_t bytes) {
    const std::lock_guard lock(mutex_);
    for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it) {
      if (it->first != bytes) continue;
      void* p = it->second;
      blocks_.erase(std::next(it).base());
      total_ -= bytes;
      return p;
    }
    return nullptr;
  }
  // Keeps `p` (bytes long) or frees it.
  void give(void* p, std::size_t bytes) {
    const std::lock_guard lock(mutex_);
    if (bytes > pool_bytes()) {
      std::free(p);
      return;
    }
    while (total_ + bytes > pool_bytes()) {
      std::free(blocks_.front().second);
      total_ -= blocks_.front().first;
      blocks_.erase(blocks_.begin());
    }
    blocks_.emplace_back(bytes, p);
    total_ += bytes;
  }

 private:
  std::mutex mutex_;
  std::vector<std::pair<std::size_t, void*>> blocks_;  // oldest first
  std::size_t total_ = 0;
};

// Never destroyed: a stack freed during static destruction still finds it.
HugePool& huge_pool() {
  static auto* pool = new HugePool;
  return *pool;
}

std::size_t huge_rounded(std::size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }
}  // namespace

MapBuffer::MapBuffer(std::size_t bytes, bool zeroed) : bytes_(bytes) {
  if (bytes == 0) return;
  if (bytes >= kHugeFrom) {
    const std::size_t rounded = huge_rounded(bytes);
    if (kPool) data_ = huge_pool().take(rounded);
    if (!data_) {
      data_ = std::aligned_alloc(kHugePage, rounded);
      // Advice only: where transparent huge pages are off this does nothing and costs nothing.
      if (data_) ::madvise(data_, rounded, MADV_HUGEPAGE);
    }
  } else {
    data_ = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  }
  if (!data_) throw std::bad_alloc();
  if (zeroed) std::memset(data_, 0, bytes);
}

MapBuffer::MapBuffer(std::shared_ptr<const void> owner, const void* data, std::size_t bytes)
    : data_(const_cast<void*>(data)), bytes_(bytes), owner_(std::move(owner)) {
  if (!owner_) throw std::invalid_argument("MapBuffer: a view needs an owner");
}

MapBuffer::MapBuffer(const MapBuffer& other) {
  if (other.owner_) {  // a view: share it
    data_ = other.data_;
    bytes_ = other.bytes_;
    owner_ = other.owner_;
    return;
  }
  *this = MapBuffer(other.bytes_, false);
  if (bytes_) std::memcpy(data_, other.data_, bytes_);
}

void* MapBuffer::data() {
  if (owner_) {  // about to be written: a storage of its own (the mapping is read-only)
    MapBuffer own(bytes_, false);
    if (bytes_) std::memcpy(own.data_, data_, bytes_);
    *this = std::move(own);
  }
  return data_;
}

MapBuffer& MapBuffer::operator=(const MapBuffer& other) {
  if (this != &other) *this = MapBuffer(other);
  return *this;
}

MapBuffer::MapBuffer(MapBuffer&& other) noexcept
    : data_(other.data_), bytes_(other.bytes_), owner_(std::move(other.owner_)) {
  other.data_ = nullptr;
  other.bytes_ = 0;
}

MapBuffer& MapBuffer::operator=(MapBuffer&& other) noexcept {
  std::swap(data_, other.data_);
  std::swap(bytes_, other.bytes_);
  std::swap(owner_, other.owner_);
  return *this;
}

MapBuffer::~MapBuffer() {
  if (owner_ || !data_) return;
  if (kPool && bytes_ >= kHugeFrom) {
    huge_pool().give(data_, huge_rounded(bytes_));
  } else {
    std::free(data_);
  }
}

}  // namespace detail

namespace {
std::size_t head_size(Index rows, Index cols) {
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
}
std::size_t element_size(Precision p) { return p == Precision::F32 ? sizeof(float) : sizeof(Eigen::half); }
}  // namespace

HeadStack::HeadStack(int heads, Index rows, Index cols, Precision precision, Init init)
    : heads_(std::max(heads, 0)), rows_(std::max<Index>(rows, 0)), cols_(std::max<Index>(cols, 0)),
      precision_(precision),
      storage_(static_cast<std::size_t>(heads_) * head_size(rows_, cols_) * element_size(precision),
               init == Init::Zero) {}

HeadStack HeadStack::view(int heads, Index rows, Index cols, Precision precision, std::shared_ptr<const void> owner,
                          const void* data) {
  HeadStack out;
  out.heads_ = std::max(heads, 0);
  out.rows_ = std::max<Index>(rows, 0);
  out.cols_ = std::max<Index>(cols, 0);
  out.precision_ = precision;
  const std::size_t bytes =
      static_cast<std::size_t>(out.heads_) * head_size(out.rows_, out.cols_) * element_size(precision);
  if (reinterpret_cast<std::uintptr_t>(data) % element_size(precision) != 0) {
    throw std::invalid_argument("HeadStack::view: data not aligned for its element type");
  }
  out.storage_ = detail::MapBuffer(std::move(owner), data, bytes);
  return out;
}

std::size_t HeadStack::bytes() const { return storage_.size(); }

float* HeadStack::f32(int head) {
  return static_cast<float*>(storage_.data()) + static_cast<std::size_t>(head) * head_size(rows_, cols_);
}
const float* HeadStack::f32(int head) const {
  return static_cast<const float*>(storage_.data()) + static_cast<std::size_t>(head) * head_size(rows_, cols_);
}
Eigen::half* HeadStack::f16(int head) {
  return static_cast<Eigen::half*>(storage_.data()) + static_cast<std::size_t>(head) * head_size(rows_, cols_);
}
const Eigen::half* HeadStack::f16(int head) const {
  return static_cast<const Eigen::half*>(storage_.data()) + static_cast<std::size_t>(head) * head_size(rows_, cols_);
}

float HeadStack::at(int head, Index row, Index col) const {
  const std::size_t i = static_cast<std::size_t>(row) * static_cast<std::size_t>(cols_) + static_cast<std::size_t>(col);
  return precision_ == Precision::F32 ? f32(head)[i] : static_cast<float>(f16(head)[i]);
}

void HeadStack::read_row(int h, Index row, float* out) const {
  const std::size_t offset = static_cast<std::size_t>(row) * static_cast<std::size_t>(cols_);
  if (precision_ == Precision::F32) {
    std::copy_n(f32(h) + offset, cols_, out);
  } else {
    const Eigen::half* p = f16(h) + offset;
    for (Index c = 0; c < cols_; ++c) out[c] = static_cast<float>(p[c]);
  }
}

Matrix HeadStack::head(int h) const {
  if (precision_ == Precision::F32) return Eigen::Map<const Matrix>(f32(h), rows_, cols_);
  return Eigen::Map<const Eigen::Matrix<Eigen::half, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(f16(h), rows_,
                                                                                                       cols_)
      .cast<float>();
}

std::int64_t HeadStack::nonfinite() const {
  const std::size_t n = static_cast<std::size_t>(rows_) * static_cast<std::size_t>(cols_);
  std::int64_t count = 0;
  for (int h = 0; h < heads_; ++h) {
    if (precision_ == Precision::F32) {
      const float* p = f32(h);
      for (std::size_t i = 0; i < n; ++i) count += std::isfinite(p[i]) ? 0 : 1;
    } else {
      const Eigen::half* p = f16(h);
      for (std::size_t i = 0; i < n; ++i) count += (Eigen::numext::isfinite)(p[i]) ? 0 : 1;
    }
  }
  return count;
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

Matrix HeadStack::pooled(int head, Index max_rows, Index max_cols, Pool pool) const {
  if (heads_ == 0 || rows_ == 0 || cols_ == 0 || head >= heads_ || head < -1) return {};
  const Index out_rows = std::clamp<Index>(max_rows, 1, rows_);
  const Index out_cols = std::clamp<Index>(max_cols, 1, cols_);
  if (out_rows == rows_ && out_cols == cols_) return head >= 0 ? this->head(head) : mean();
  // One source row as floats (the mean over heads for head = -1).
  std::vector<float> other(head >= 0 ? 0 : static_cast<std::size_t>(cols_));
  return pool_rows(rows_, cols_, out_rows, out_cols, pool, [&](Index r, float* row) {
    if (head >= 0) return this->read_row(head, r, row);
    this->read_row(0, r, row);
    for (int h = 1; h < heads_; ++h) {
      this->read_row(h, r, other.data());
      for (Index c = 0; c < cols_; ++c) row[c] += other[static_cast<std::size_t>(c)];
    }
    const float scale = 1.0f / static_cast<float>(heads_);
    for (Index c = 0; c < cols_; ++c) row[c] *= scale;
  });
}

void HeadStack::set_head(int h, const MatrixCRef& m) {
  if (precision_ == Precision::F32) {
    Eigen::Map<Matrix>(f32(h), rows_, cols_) = m;
  } else {
    Eigen::Map<Eigen::Matrix<Eigen::half, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(f16(h), rows_, cols_) =
        m.cast<Eigen::half>();
  }
}

HeadStack HeadStack::top_left(Index rows, Index cols) const {
  rows = std::clamp<Index>(rows, 0, rows_);
  cols = std::clamp<Index>(cols, 0, cols_);
  HeadStack out(heads_, rows, cols, precision_, Init::Uninitialised);
  for (int h = 0; h < heads_; ++h) {
    for (Index r = 0; r < rows; ++r) {
      if (precision_ == Precision::F32) {
        std::copy_n(f32(h) + r * cols_, cols, out.f32(h) + r * cols);
      } else {
        std::copy_n(f16(h) + r * cols_, cols, out.f16(h) + r * cols);
      }
    }
  }
  return out;
}

LayeredTrace LayeredTrace::prefix(Index n) const {
  n = std::clamp<Index>(n, 0, static_cast<Index>(tokens.size()));
  LayeredTrace out;
  out.tokens.assign(tokens.begin(), tokens.begin() + n);
  out.spans.assign(spans.begin(), spans.begin() + std::min<Index>(n, static_cast<Index>(spans.size())));
  out.cross_rows = cross_rows;
  for (const auto& l : layers) {
    const bool cross = l.stage == Stage::Cross;
    out.layers.push_back({l.stage, l.layer, l.maps.top_left(cross ? l.maps.rows() : n, n)});
  }
  return out;
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

std::shared_ptr<const AttentionMap> LayeredTrace::map(Stage stage, int layer, int head, Index max_side) const {
  const LayerAttention* l = find(stage, layer);
  if (!l || head >= l->maps.heads() || head < -1) return nullptr;
  auto map = std::make_shared<AttentionMap>();
  map->stage = stage;
  map->layer = layer;  // 0-based, as every index AttnScope shows
  map->head = head;
  map->name = head >= 0 ? "attention" : "head mean";
  const bool cross = stage == Stage::Cross;
  const Labels& rows = cross ? cross_rows : tokens;
  map->row_axis = cross ? "target" : "queries";
  map->col_axis = cross ? "source" : "keys";
  const HeadStack& maps = l->maps;
  if (max_side > 0 && (maps.rows() > max_side || maps.cols() > max_side)) {
    map->weights = maps.pooled(head, max_side, max_side, Pool::Max);
    MapPooling pooling;
    pooling.rows = maps.rows();
    pooling.cols = maps.cols();
    pooling.pool = Pool::Max;
    if (static_cast<Index>(rows.size()) == maps.rows()) pooling.row_tokens = rows;
    if (static_cast<Index>(tokens.size()) == maps.cols()) pooling.col_tokens = tokens;
    map->row_labels = pooled_labels(rows, maps.rows(), map->weights.rows());
    map->col_labels = pooled_labels(tokens, maps.cols(), map->weights.cols());
    map->pooled = std::move(pooling);
    return map;
  }
  map->weights = head >= 0 ? maps.head(head) : maps.mean();
  if (static_cast<Index>(rows.size()) == map->weights.rows()) map->row_labels = rows;
  if (static_cast<Index>(tokens.size()) == map->weights.cols()) map->col_labels = tokens;
  if (!cross && spans.size() == tokens.size()) {
    map->row_spans = spans;
    map->col_spans = spans;
  } else if (spans.size() == tokens.size()) {
    map->col_spans = spans;
  }
  return map;
}

}  // namespace attn
