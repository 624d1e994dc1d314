#include "attn/analysis/attention_analysis.h"

#include <algorithm>
#include <limits>
#include <cmath>
#include <numeric>
#include <string>

namespace attn::analysis {

namespace {

// Zeroes the k = floor(ratio x size) smallest weights of the layer (ties broken by position), except the
// first entry (the class token's attention to itself), as vit-explain does.
void discard_lowest(Matrix& a, float ratio) {
  const Index size = a.size();
  const auto k = static_cast<Index>(std::floor(static_cast<double>(ratio) * static_cast<double>(size)));
  if (k <= 0) return;
  std::vector<Index> order(static_cast<std::size_t>(size));
  std::iota(order.begin(), order.end(), Index{0});
  float* v = a.data();
  const auto less = [v](Index x, Index y) { return v[x] < v[y] || (v[x] == v[y] && x < y); };
  std::nth_element(order.begin(), order.begin() + (k - 1), order.end(), less);
  for (Index i = 0; i < k; ++i) {
    if (order[static_cast<std::size_t>(i)] != 0) v[order[static_cast<std::size_t>(i)]] = 0.0f;
  }
}

}  // namespace

Matrix fuse_heads(const HeadStack& stack, HeadFusion fusion) {
  if (fusion == HeadFusion::Mean) return stack.mean();
  Matrix out = stack.head(0);
  for (int h = 1; h < stack.heads(); ++h) {
    const Matrix m = stack.head(h);
    out = fusion == HeadFusion::Max ? out.cwiseMax(m).eval() : out.cwiseMin(m).eval();
  }
  return out;
}

Matrix with_residual(Matrix a, float discard_ratio, float residual) {
  discard_lowest(a, discard_ratio);
  a *= 1.0f - residual;
  a.diagonal().array() += residual;
  // Each row renormalised to sum 1 (vit-explain divides by a.sum(dim=-1) without keepdim, which scales
  // columns instead). A row left with no weight at all (r = 0, everything discarded) keeps the token
  // on itself rather than dividing by zero.
  for (Index i = 0; i < a.rows(); ++i) {
    const float sum = a.row(i).sum();
    if (sum > 0.0f) {
      a.row(i) /= sum;
    } else if (!std::isnan(sum)) {  // NaN (non-finite maps) stays NaN: the run's warning covers it
      a.row(i).setZero();
      a(i, i) = 1.0f;
    }
  }
  return a;
}

Result<Matrix> rollout(const LayeredTrace& trace, const RolloutOptions& options) {
  if (!(options.discard_ratio >= 0.0f && options.discard_ratio < 1.0f)) {
    return fail(ErrorKind::OutOfRange,
                "rollout: the discard ratio must be in [0, 1), not " + std::to_string(options.discard_ratio));
  }
  if (!(options.residual >= 0.0f && options.residual <= 1.0f)) {
    return fail(ErrorKind::OutOfRange,
                "rollout: the residual weight must be in [0, 1], not " + std::to_string(options.residual));
  }
  const int count = trace.layer_count(options.stage);
  if (count == 0) {
    return fail(ErrorKind::Mismatch, "rollout: the trace has no " + std::string(to_string(options.stage)) + " layers");
  }
  const int last = options.last_layer < 0 ? count - 1 : options.last_layer;
  if (options.first_layer < 0 || options.first_layer > last || last >= count) {
    return fail(ErrorKind::OutOfRange, "rollout: layers " + std::to_string(options.first_layer + 1) + " to " +
                                           std::to_string(last + 1) + " are not within the trace's " +
                                           std::to_string(count));
  }
  Matrix result;
  for (int l = options.first_layer; l <= last; ++l) {
    const LayerAttention* layer = trace.find(options.stage, l);
    if (!layer || layer->maps.empty()) {
      return fail(ErrorKind::Mismatch, "rollout: layer " + std::to_string(l + 1) + " is missing");
    }
    const HeadStack& stack = layer->maps;
    if (stack.rows() != stack.cols()) {
      return fail(ErrorKind::Mismatch, "rollout: layer " + std::to_string(l + 1) + " is " +
                                           std::to_string(stack.rows()) + " x " + std::to_string(stack.cols()) +
                                           "; rollout needs self-attention (square maps)");
    }
    if (result.size() != 0 && result.rows() != stack.rows()) {
      return fail(ErrorKind::Mismatch, "rollout: layer " + std::to_string(l + 1) + " has " +
                                           std::to_string(stack.rows()) + " tokens where the layers before it have " +
                                           std::to_string(result.rows()));
    }
    if (stack.rows() > kRolloutMaxTokens) {
      const std::string n = with_commas(stack.rows());
      const auto mib = static_cast<long long>(static_cast<double>(stack.rows()) * static_cast<double>(stack.rows()) *
                                              4.0 / 1048576.0);
      const int layers = last - options.first_layer + 1;
      return fail(ErrorKind::TooLarge, "rollout: " + n + " tokens; the whole rollout is a " + n + " x " + n +
                                           " matrix (" + with_commas(mib) + " MiB) costing " + n +
                                           "^3 multiply-adds for each of " + std::to_string(layers) + " layer" +
                                           (layers == 1 ? "" : "s") + "; it is computed up to " +
                                           with_commas(kRolloutMaxTokens) + " tokens");
    }
    Matrix a = with_residual(fuse_heads(stack, options.fusion), options.discard_ratio, options.residual);
    if (result.size() == 0) {
      result = std::move(a);
    } else {
      Matrix next(a.rows(), result.cols());
      next.noalias() = a * result;
      result = std::move(next);
    }
  }
  return result;
}

namespace {

// Rows [r0, r0 + rows) of a layer's fused A' (heads fused over keys [c0, c0 + cols), the residual added, each row
// renormalised as rollout() does), each times v[row], added into `into` (indexed by key).
void add_fused_rows(const OnDemandLayer& layer, HeadFusion fusion, float residual, Index r0, Index rows, Index c0,
                    Index cols, const std::vector<float>& v, std::vector<float>& fused, std::vector<float>& head,
                    std::vector<float>& into) {
  const auto size = static_cast<std::size_t>(rows * cols);
  fused.resize(size);
  head.resize(size);
  for (int h = 0; h < layer.heads(); ++h) {
    layer.tile(h, r0, rows, c0, cols, h == 0 ? fused.data() : head.data(), cols);
    if (h == 0) continue;
    for (std::size_t i = 0; i < size; ++i) {
      fused[i] = fusion == HeadFusion::Mean  ? fused[i] + head[i]
                 : fusion == HeadFusion::Max ? std::max(fused[i], head[i])
                                             : std::min(fused[i], head[i]);
    }
  }
  const float by = fusion == HeadFusion::Mean ? 1.0f / static_cast<float>(layer.heads()) : 1.0f;
  for (Index i = 0; i < rows; ++i) {
    const float vi = v[static_cast<std::size_t>(r0 + i)];
    if (vi == 0.0f) continue;
    float* a = fused.data() + i * cols;
    float sum = 0.0f;
    for (Index j = 0; j < cols; ++j) {
      a[j] = a[j] * by * (1.0f - residual);
      sum += a[j];
    }
    a[r0 + i - c0] += residual;
    sum += residual;
    float* out = into.data() + c0;
    if (sum > 0.0f) {
      const float scale = vi / sum;
      for (Index j = 0; j < cols; ++j) out[j] += a[j] * scale;
    } else if (!std::isnan(sum)) {
      into[static_cast<std::size_t>(r0 + i)] += vi;  // no weight left: the token keeps itself, as in rollout()
    } else {
      for (Index j = 0; j < cols; ++j) out[j] = std::numeric_limits<float>::quiet_NaN();
    }
  }
}

// The special positions counted in special_mass: past 0 (position 0 is first_mass) and before `limit`, sorted, once
// each.
std::vector<int> separators(const std::vector<int>& positions, Index limit) {
  std::vector<int> out;
  for (int p : positions) {
    if (p > 0 && p < limit) out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

Result<std::vector<float>> rollout_row(const std::vector<OnDemandLayer>& layers, Index query,
                                       const RolloutOptions& options, const std::atomic<bool>* cancel,
                                       const std::function<void(int, int)>& progress) {
  if (options.discard_ratio != 0.0f) {
    return fail(ErrorKind::OutOfRange,
                "rollout of one row: the discard ratio ranks every weight of a layer, which a run kept on demand does "
                "not store; it must be 0 here, not " +
                    std::to_string(options.discard_ratio));
  }
  if (!(options.residual >= 0.0f && options.residual <= 1.0f)) {
    return fail(ErrorKind::OutOfRange,
                "rollout: the residual weight must be in [0, 1], not " + std::to_string(options.residual));
  }
  const int count = static_cast<int>(layers.size());
  if (count == 0) return fail(ErrorKind::Mismatch, "rollout of one row: the run keeps no layer on demand");
  const int last = options.last_layer < 0 ? count - 1 : options.last_layer;
  if (options.first_layer < 0 || options.first_layer > last || last >= count) {
    return fail(ErrorKind::OutOfRange, "rollout: layers " + std::to_string(options.first_layer + 1) + " to " +
                                           std::to_string(last + 1) + " are not within the run's " +
                                           std::to_string(count));
  }
  const Index n = layers.front().tokens();
  if (query < 0 || query >= n) {
    return fail(ErrorKind::OutOfRange, "rollout of one row: query " + std::to_string(query) +
                                           " is not one of the run's " + with_commas(n) + " tokens");
  }
  std::vector<float> v(static_cast<std::size_t>(n), 0.0f);
  v[static_cast<std::size_t>(query)] = 1.0f;
  constexpr Index kRows = 2 * kScoreBlock;  // aligned with the forward's blocks of rows
  for (int l = last; l >= options.first_layer; --l) {
    const OnDemandLayer& layer = layers[static_cast<std::size_t>(l)];
    for (int h = 0; h < layer.heads(); ++h) {  // a dump's heads: their checksums, once
      if (auto ok = layer.verify(h); !ok) return std::unexpected(ok.error());
    }
    // Only the rows the vector reaches are computed.
    Index lo = 0, hi = n;
    while (lo < n && v[static_cast<std::size_t>(lo)] == 0.0f) ++lo;
    while (hi > lo && v[static_cast<std::size_t>(hi - 1)] == 0.0f) --hi;
    std::vector<float> w(static_cast<std::size_t>(n), 0.0f);
    std::atomic<bool> stopped{false};
    const Index first_block = lo / kRows, blocks = (hi + kRows - 1) / kRows;
#pragma omp parallel
    {
      std::vector<float> mine(static_cast<std::size_t>(n), 0.0f), fused, head;
      bool any = false;
#pragma omp for schedule(dynamic, 1)
      for (Index b = first_block; b < blocks; ++b) {
        if (stopped.load(std::memory_order_relaxed)) continue;
        if (cancel && cancel->load(std::memory_order_relaxed)) {
          stopped.store(true, std::memory_order_relaxed);
          continue;
        }
        const Index r0 = std::max(lo, b * kRows), r1 = std::min(hi, (b + 1) * kRows);
        const Index c0 = layer.first_key(r0), c1 = layer.last_key(r1 - 1) + 1;
        add_fused_rows(layer, options.fusion, options.residual, r0, r1 - r0, c0, c1 - c0, v, fused, head, mine);
        any = true;
      }
      if (any) {
#pragma omp critical(attn_rollout_row)
        for (std::size_t i = 0; i < w.size(); ++i) w[i] += mine[i];
      }
    }
    if (stopped.load()) return fail(ErrorKind::Cancelled, "rollout of one row: cancelled");
    v.swap(w);
    if (progress) progress(last - l + 1, last - options.first_layer + 1);
  }
  return v;
}

std::vector<HeadStats> head_statistics(const LayeredTrace& trace, const StatsOptions& options) {
  struct Job {
    const LayerAttention* layer;
    int head;
  };
  std::vector<Job> jobs;
  for (const auto& layer : trace.layers) {
    if (layer.stage != options.stage) continue;
    for (int h = 0; h < layer.maps.heads(); ++h) jobs.push_back({&layer, h});
  }
  std::sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) {
    return a.layer->layer != b.layer->layer ? a.layer->layer < b.layer->layer : a.head < b.head;
  });
  std::vector<HeadStats> out(jobs.size());
  const bool grid = options.grid_rows > 0 && options.grid_cols > 0;
  const std::vector<int> specials = separators(options.special_positions, std::numeric_limits<int>::max());
  // A weight this far outside [0, 1] is not float rounding of a probability: the map is scores, not a distribution.
  constexpr double kDistributionSlack = 1e-4;
#pragma omp parallel for schedule(dynamic)
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    const Job& job = jobs[k];
    const HeadStack& maps = job.layer->maps;
    HeadStats s;
    s.layer = job.layer->layer;
    s.head = job.head;
    const Index rows = maps.rows(), cols = maps.cols();
    const Index first_row = options.query_row ? std::clamp<Index>(*options.query_row, 0, rows) : 0;
    const Index end_row = options.query_row ? std::min(first_row + 1, rows) : rows;
    // Row by row: a head of a long dump (16,384 x 16,384) is read where it lies, never copied whole.
    std::vector<float> row(static_cast<std::size_t>(cols));
    float max_weight = -std::numeric_limits<float>::infinity();
    s.max_entropy = cols > 0 ? std::log(static_cast<float>(cols)) : 0.0f;
    double entropy = 0, distance = 0, first = 0, special = 0;
    Index distance_rows = 0;
    bool distribution = true;  // every weight in [0, 1] (to rounding): what entropy and distance are defined on
    for (Index i = first_row; i < end_row; ++i) {
      maps.read_row(job.head, i, row.data());
      double h = 0, d = 0, patch_mass = 0;
      for (Index j = 0; j < cols; ++j) {
        const double p = row[static_cast<std::size_t>(j)];
        max_weight = std::max(max_weight, row[static_cast<std::size_t>(j)]);
        if (!(p >= -kDistributionSlack && p <= 1.0 + kDistributionSlack)) distribution = false;
        if (p > 0) h -= p * std::log(p);
        if (!grid) {
          d += p * static_cast<double>(std::abs(i - j));
        } else if (i > 0 && j > 0) {
          const Index ri = (i - 1) / options.grid_cols, ci = (i - 1) % options.grid_cols;
          const Index rj = (j - 1) / options.grid_cols, cj = (j - 1) % options.grid_cols;
          d += p * std::hypot(static_cast<double>(ri - rj), static_cast<double>(ci - cj));
          patch_mass += p;
        }
      }
      entropy += h;
      if (!grid) {
        distance += d;
        ++distance_rows;
      } else if (i > 0 && patch_mass > 0) {
        // ViT's mean attention distance is over patches: the class token is neither a query nor a key.
        distance += d / patch_mass;
        ++distance_rows;
      }
      if (cols > 0) first += row[0];
      for (int p : specials) {
        if (p < cols) special += row[static_cast<std::size_t>(p)];
      }
    }
    if (const Index read = end_row - first_row; read > 0) {
      s.entropy = static_cast<float>(entropy / static_cast<double>(read));
      s.first_mass = static_cast<float>(first / static_cast<double>(read));
      s.special_mass = static_cast<float>(special / static_cast<double>(read));
      s.max_weight = max_weight;
    }
    if (distance_rows > 0) s.mean_distance = static_cast<float>(distance / static_cast<double>(distance_rows));
    if (!distribution) s.entropy = s.mean_distance = std::numeric_limits<float>::quiet_NaN();
    out[k] = s;
  }
  return out;
}

std::vector<HeadStats> streamed_statistics(const std::vector<OnDemandLayer>& layers,
                                           const std::vector<int>& special_positions) {
  std::vector<HeadStats> out;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const OnDemandLayer& layer = layers[l];
    const std::vector<int> specials = separators(special_positions, layer.tokens());
    for (int h = 0; h < layer.heads(); ++h) {
      const StreamedHeadStats& st = layer.stats(h);
      const double rows = std::max<double>(1.0, static_cast<double>(st.rows));
      HeadStats s;
      s.layer = static_cast<int>(l);
      s.head = h;
      s.entropy = static_cast<float>(st.entropy / rows);
      s.max_entropy = layer.tokens() > 0 ? std::log(static_cast<float>(layer.tokens())) : 0.0f;
      s.mean_distance = static_cast<float>(st.distance / rows);
      s.max_weight = st.max_weight;
      s.first_mass = static_cast<float>(st.first_mass / rows);
      double special = 0;
      for (int p : specials) special += static_cast<double>(st.received[static_cast<std::size_t>(p)]);
      s.special_mass = static_cast<float>(special / rows);
      out.push_back(s);
    }
  }
  return out;
}

}  // namespace attn::analysis
