// A model-free word embedding in which similar spellings have similar vectors: the sum of seeded random
// vectors of a word's character n-grams (fastText-style, Bojanowski et al. 2017, with hashing instead of a
// learned table), lower-cased, with < and > marking the word's ends, then scaled to norm sqrt(dim). "apples" and
// "apple" share most n-grams, so dot-product attention links them with no trained weights.
#pragma once

#include "attn/core.h"

#include <cstdint>
#include <string_view>
#include <vector>

namespace attn {

struct NgramEmbeddingParams {
  Index dim = 64;
  int min_n = 3;
  int max_n = 5;
  std::uint64_t seed = 0x5eed;
  float whole_word_weight = 1.0f;  // weight of the whole word's own vector beside its n-grams
};

class NgramEmbedding {
 public:
  explicit NgramEmbedding(NgramEmbeddingParams params = {});
  const NgramEmbeddingParams& params() const { return params_; }
  // One row per word.
  Matrix embed(const std::vector<std::string_view>& words) const;
  RowVector embed(std::string_view word) const;

 private:
  void add_ngram(std::string_view gram, float weight, Eigen::Ref<RowVector> out) const;
  NgramEmbeddingParams params_;
};

// Lower-cases ASCII letters and the Latin-1/Latin Extended-A, Greek and Cyrillic capitals; other code
// points are kept as they are.
std::string fold_case(std::string_view word);

}  // namespace attn
