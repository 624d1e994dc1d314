// The beam search of the demo decoders (seq2seq.cpp, captioner.cpp), as tools/train/seq2seq_torch.py's
// beam_search makes tools/train/MODELS.md "Decoding" precise: every alive hypothesis is extended by every
// id; the k best extensions are kept (ties: the id sequences compared lexicographically, i.e. lower id
// first); those ending in the end id or holding max_steps ids leave the beam for the ended list, the rest
// stay alive; the search stops when the k best of ended + alive have all ended (or nothing is alive) and
// returns the k best ended. Greedy is k = 1. Scores are summed in double, as the reference sums Python
// floats. The model is the caller's: it computes each step's log-softmax rows for the alive hypotheses
// and keeps per node (one per emitted id) whatever the step produced for it (attention rows). Not public API.
#pragma once

#include "attn/core.h"

#include <cstddef>
#include <vector>

namespace attn::models::bundled {

// Row-wise log-softmax in place (the logits of a step into the scores the search adds up).
void log_softmax_rows(Eigen::Ref<Matrix> x);

class BeamSearch {
 public:
  // One kept extension of a step: the tree node it made (nodes are numbered 0, 1, ... in the order they are
  // made) and the alive row it extends (the row of the step's outputs that belong to it).
  struct Kept {
    int node = 0;
    int row = 0;
  };

  // A search of `width` from the root (nothing emitted; its last id is `start`). No allocation beyond the
  // buffers' growth: a session keeps one BeamSearch and restarts it.
  void start(int width, int max_steps, int start_id, int end_id);

  // Rows the next step computes, and the last id of each (y_{t-1}).
  Index alive() const { return static_cast<Index>(alive_.size()); }
  const std::vector<int>& tokens() const { return tokens_; }

  // One step from the alive rows' log-softmax rows logp [alive(), V]. Afterwards kept() lists the step's
  // nodes, parents() the alive row each new alive row continues (gather the per-hypothesis state rows in
  // that order) and tokens() their last ids. Returns false when the search is over.
  bool advance(const MatrixCRef& logp);
  const std::vector<Kept>& kept() const { return kept_; }
  const std::vector<int>& parents() const { return parents_; }

  // The k best ended hypotheses, best first.
  std::size_t results() const;
  double log_prob(std::size_t result) const;
  // The nodes of a result, root first (node j of the path emitted its j-th id).
  void path(std::size_t result, std::vector<int>& nodes) const;
  int token(int node) const { return nodes_[static_cast<std::size_t>(node)].token; }
  int nodes() const { return static_cast<int>(nodes_.size()); }

 private:
  struct Node {
    int parent = -1;
    int token = 0;
  };
  struct Hyp {
    int node = -1;  // last node (-1: the root, nothing emitted yet)
    double log_prob = 0.0;
    int length = 0;  // ids emitted
  };
  struct Candidate {
    double score = 0.0;
    int token = 0;
    int parent = 0;  // alive row
  };

  void ids_of(int node, std::vector<int>& out) const;
  bool ids_less(int a, int b);
  bool ranks_before(const Hyp& x, const Hyp& y);

  int width_ = 1, max_steps_ = 1, start_ = 0, end_ = 0;
  std::vector<Node> nodes_;
  std::vector<Hyp> alive_, alive_next_, ended_;
  std::vector<int> tokens_, parents_;
  std::vector<Kept> kept_;
  std::vector<Candidate> candidates_;
  std::vector<int> lex_rank_, order_, path_a_, path_b_;
};

}  // namespace attn::models::bundled
