// Seeded, platform-independent random numbers (splitmix64): the same seed gives the same matrices and
// samples on every compiler and standard library, which std::*_distribution does not promise.
#pragma once

#include "attn/core.h"

#include <cstdint>

namespace attn {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  // Uniform in [0, 1) with 24 bits of resolution (exact in float).
  float uniform();
  // Standard normal (Box-Muller).
  float normal();

 private:
  std::uint64_t state_;
};

// Mixes a seed with a stream id so that independent matrices drawn from one seed do not repeat.
std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t stream);

// rows x cols matrix of N(0, 1) * scale.
Matrix random_normal(Index rows, Index cols, std::uint64_t seed, float scale = 1.0f);
// Glorot/Xavier-uniform initialised weight of shape rows x cols (fan_in = cols, fan_out = rows).
Matrix xavier_uniform(Index rows, Index cols, std::uint64_t seed);

}  // namespace attn
