#include "beam_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace attn::models::bundled {

void log_softmax_rows(Eigen::Ref<Matrix> x) {
  for (Index b = 0; b < x.rows(); ++b) {
    auto row = x.row(b);
    const float mx = row.maxCoeff();
    const float lse = mx + std::log((row.array() - mx).exp().sum());
    row.array() -= lse;
  }
}

void BeamSearch::start(int width, int max_steps, int start_id, int end_id) {
  width_ = width;
  max_steps_ = max_steps;
  start_ = start_id;
  end_ = end_id;
  nodes_.clear();
  ended_.clear();
  kept_.clear();
  parents_.assign(1, 0);
  alive_.assign(1, Hyp{-1, 0.0, 0});
  tokens_.assign(1, start_id);
}

void BeamSearch::ids_of(int node, std::vector<int>& out) const {
  out.clear();
  for (int n = node; n >= 0; n = nodes_[static_cast<std::size_t>(n)].parent) {
    out.push_back(nodes_[static_cast<std::size_t>(n)].token);
  }
  std::reverse(out.begin(), out.end());
}

// Python's list comparison of the two hypotheses' ids (a prefix first). Only ties of the score reach it.
bool BeamSearch::ids_less(int a, int b) {
  ids_of(a, path_a_);
  ids_of(b, path_b_);
  return std::lexicographical_compare(path_a_.begin(), path_a_.end(), path_b_.begin(), path_b_.end());
}

// The reference's ranking key (-log_prob, ids): true when x ranks before y.
bool BeamSearch::ranks_before(const Hyp& x, const Hyp& y) {
  if (x.log_prob != y.log_prob) return x.log_prob > y.log_prob;
  return ids_less(x.node, y.node);
}

bool BeamSearch::advance(const MatrixCRef& logp) {
  const std::size_t B = alive_.size();
  const Index V = logp.cols();

  // The alive hypotheses all hold t ids, so a candidate's ids compare as (parent's ids, token).
  order_.resize(B);
  std::iota(order_.begin(), order_.end(), 0);
  if (B > 1) {
    std::sort(order_.begin(), order_.end(), [&](int x, int y) {
      return ids_less(alive_[static_cast<std::size_t>(x)].node, alive_[static_cast<std::size_t>(y)].node);
    });
  }
  lex_rank_.resize(B);
  for (std::size_t i = 0; i < B; ++i) lex_rank_[static_cast<std::size_t>(order_[i])] = static_cast<int>(i);

  candidates_.clear();
  for (std::size_t i = 0; i < B; ++i) {
    const double base = alive_[i].log_prob;
    for (Index v = 0; v < V; ++v) {
      const double score = base + static_cast<double>(logp(static_cast<Index>(i), v));
      // A NaN score (non-finite weights) ranks last, as -inf: the sorts below need a strict weak ordering.
      candidates_.push_back({std::isnan(score) ? -std::numeric_limits<double>::infinity() : score, static_cast<int>(v),
                             static_cast<int>(i)});
    }
  }
  const auto keep = std::min<std::size_t>(static_cast<std::size_t>(width_), candidates_.size());
  std::partial_sort(candidates_.begin(), candidates_.begin() + static_cast<std::ptrdiff_t>(keep), candidates_.end(),
                    [&](const Candidate& x, const Candidate& y) {
                      if (x.score != y.score) return x.score > y.score;
                      const int px = lex_rank_[static_cast<std::size_t>(x.parent)];
                      const int py = lex_rank_[static_cast<std::size_t>(y.parent)];
                      return px != py ? px < py : x.token < y.token;
                    });

  // The kept extensions: ended ones join `ended` (kept sorted), the others become the next alive rows.
  kept_.clear();
  parents_.clear();
  tokens_.clear();
  alive_next_.clear();
  for (std::size_t ci = 0; ci < keep; ++ci) {
    const Candidate& cand = candidates_[ci];
    const Hyp& parent = alive_[static_cast<std::size_t>(cand.parent)];
    const Hyp hyp{static_cast<int>(nodes_.size()), cand.score, parent.length + 1};
    nodes_.push_back({parent.node, cand.token});
    kept_.push_back({hyp.node, cand.parent});
    if (cand.token == end_ || hyp.length >= max_steps_) {
      const auto at = std::upper_bound(ended_.begin(), ended_.end(), hyp,
                                       [&](const Hyp& x, const Hyp& y) { return ranks_before(x, y); });
      ended_.insert(at, hyp);
      continue;
    }
    parents_.push_back(cand.parent);
    tokens_.push_back(cand.token);
    alive_next_.push_back(hyp);
  }
  std::swap(alive_, alive_next_);
  if (alive_.empty()) return false;

  // Stop when the k best of ended + alive have all ended: every alive one ranks after the k-th ended.
  if (ended_.size() >= static_cast<std::size_t>(width_)) {
    const Hyp& kth = ended_[static_cast<std::size_t>(width_ - 1)];
    const bool done = std::none_of(alive_.begin(), alive_.end(), [&](const Hyp& h) { return ranks_before(h, kth); });
    if (done) return false;
  }
  return true;
}

std::size_t BeamSearch::results() const {
  return std::min<std::size_t>(static_cast<std::size_t>(width_), ended_.size());
}

double BeamSearch::log_prob(std::size_t result) const { return ended_[result].log_prob; }

void BeamSearch::path(std::size_t result, std::vector<int>& nodes) const {
  nodes.clear();
  for (int n = ended_[result].node; n >= 0; n = nodes_[static_cast<std::size_t>(n)].parent) nodes.push_back(n);
  std::reverse(nodes.begin(), nodes.end());
}

}  // namespace attn::models::bundled
