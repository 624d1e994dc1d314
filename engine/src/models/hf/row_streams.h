// The row softmax of a forward that keeps its attention on demand (attn/on_demand_attention.h), shared by the
// decoder family (decoder_run.cpp) and GPT-2 / BERT / DistilBERT (transformer_run.cpp): one row of scores becomes
// its weights, the row's shift and 1 / sum (what OnDemandLayer recomputes every weight from), and the head's
// statistics over the rows (RowStreams) are gathered in the same pass. Internal to engine/src/models.
#pragma once

#include "attn/on_demand_attention.h"
#include "../../mechanisms/exp_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <vector>

namespace attn::models {

// The streamed statistics of an on-demand layer's rows, per thread and head while the rows run, then added to the
// layer's StreamedHeadStats.
struct RowStreams {
  struct Head {
    double entropy = 0, distance = 0, first = 0;
    float max_weight = 0;
    float* received = nullptr;  // cols floats
    // e: exp(score - shift) of keys [lo, hi] of the row of query `query`, made the weights here (times inv = 1 / their
    // sum) in the same pass that gathers the statistics; scores: the scores the softmax saw; lse = log(sum) + shift.
    // The entropy is lse - sum p s (log p = s - lse), the distance sum p |query - j|: query - sum p j when every
    // key is at or before the query (causal).
    void scale_and_add(float* e, const float* scores, Index lo, Index hi, Index query, float inv, double lse) {
      const Index count = hi + 1 - lo;
      float ps = 0.0f, pj = 0.0f, top = 0.0f;
      float* rec = received + lo;
      if (hi <= query) {
#pragma omp simd reduction(+ : ps, pj) reduction(max : top)
        for (Index j = 0; j < count; ++j) {
          const float p = e[j] * inv;
          e[j] = p;
          ps += p * scores[j];
          pj += p * static_cast<float>(j);
          top = std::max(top, p);
          rec[j] += p;
        }
        distance += static_cast<double>(query - lo) - static_cast<double>(pj);
      } else {
        const float at = static_cast<float>(query - lo);
#pragma omp simd reduction(+ : ps, pj) reduction(max : top)
        for (Index j = 0; j < count; ++j) {
          const float p = e[j] * inv;
          e[j] = p;
          ps += p * scores[j];
          pj += p * std::abs(at - static_cast<float>(j));
          top = std::max(top, p);
          rec[j] += p;
        }
        distance += static_cast<double>(pj);
      }
      entropy += lse - static_cast<double>(ps);
      if (lo == 0) first += e[0];
      max_weight = std::max(max_weight, top);
    }
  };
  int heads = 0;
  std::vector<Head> of_thread;  // [thread][head]
  std::vector<float> received;  // [thread][head][cols]
  Index cols = 0;

  void reset(int threads, Index h, Index c) {
    heads = static_cast<int>(h);
    cols = c;
    of_thread.assign(static_cast<std::size_t>(threads * h), Head{});
    received.assign(static_cast<std::size_t>(threads * h * c), 0.0f);
    for (std::size_t i = 0; i < of_thread.size(); ++i) of_thread[i].received = received.data() + i * c;
  }
  Head* of(int thread, int head) { return &of_thread[static_cast<std::size_t>(thread * heads + head)]; }
  void add_to(OnDemandLayer& layer, Index rows) const {
    const int threads = static_cast<int>(of_thread.size()) / heads;
    for (int h = 0; h < heads; ++h) {
      StreamedHeadStats& s = layer.stats(h);
      s.rows += rows;
      for (int t = 0; t < threads; ++t) {
        const Head& part = of_thread[static_cast<std::size_t>(t * heads + h)];
        s.entropy += part.entropy;
        s.distance += part.distance;
        s.first_mass += part.first;
        s.max_weight = std::max(s.max_weight, part.max_weight);
        Eigen::Map<Eigen::ArrayXf>(s.received.data(), cols) += Eigen::Map<const Eigen::ArrayXf>(part.received, cols);
      }
    }
  }
};

struct RowSoftmax {
  float shift = 0, inv_sum = 0;  // NaN for a row of non-finite scores
};

// One row of scores (cols wide) -> probabilities over keys [lo, hi] of query `query`, everything else exactly 0;
// softcap > 0 caps the visible scores first (Gemma 2). With `stream` (on demand) the row's entropy, distance,
// first-token mass, largest weight and what each key receives are added to it; `capped` (cols floats) then holds
// the scores the softmax saw, for the entropy.
inline RowSoftmax softmax_row(float* row, Index query, Index lo, Index hi, Index cols, float softcap,
                              float* capped = nullptr, RowStreams::Head* stream = nullptr) {
  using ArrayMap = Eigen::Map<Eigen::ArrayXf>;
  const Index count = hi + 1 - lo;
  float* r = row + lo;
  if (softcap > 0.0f) ArrayMap(r, count) = (ArrayMap(r, count) / softcap).tanh() * softcap;
  RowSoftmax out;
  out.shift = ArrayMap(r, count).maxCoeff<Eigen::PropagateNaN>();
  if (std::isnan(out.shift) || std::isinf(out.shift)) {
    ArrayMap(r, count).setConstant(std::numeric_limits<float>::quiet_NaN());  // non-finite weights: warned
    out.shift = out.inv_sum = std::numeric_limits<float>::quiet_NaN();
  } else {
    if (stream) std::copy_n(r, count, capped);
    const float sum = detail::exp_shifted_sum(r, count, out.shift, 1.0f);
    out.inv_sum = 1.0f / sum;
    if (stream) {
      stream->scale_and_add(r, capped, lo, hi, query, out.inv_sum, std::log(static_cast<double>(sum)) + out.shift);
    } else {
      ArrayMap(r, count) *= out.inv_sum;
    }
  }
  std::fill(row, row + lo, 0.0f);
  std::fill(row + hi + 1, row + cols, 0.0f);
  return out;
}

}  // namespace attn::models
