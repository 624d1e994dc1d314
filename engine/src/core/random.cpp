#include "attn/random.h"

#include <cmath>
#include <numbers>

namespace attn {

std::uint64_t SplitMix64::next() {
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

float SplitMix64::uniform() { return static_cast<float>(next() >> 40) * (1.0f / 16777216.0f); }

float SplitMix64::normal() {
  // Box-Muller in double; u1 is kept away from 0 so the log is finite.
  const double u1 = (static_cast<double>(next() >> 11) + 0.5) * (1.0 / 9007199254740992.0);
  const double u2 = static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0);
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2));
}

std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t stream) {
  SplitMix64 g(seed ^ (stream * 0xd1b54a32d192ed03ULL));
  return g.next();
}

Matrix random_normal(Index rows, Index cols, std::uint64_t seed, float scale) {
  Matrix m(rows, cols);
  SplitMix64 g(seed);
  for (Index i = 0; i < m.size(); ++i) m.data()[i] = g.normal() * scale;
  return m;
}

Matrix xavier_uniform(Index rows, Index cols, std::uint64_t seed) {
  Matrix m(rows, cols);
  SplitMix64 g(seed);
  const float a = std::sqrt(6.0f / static_cast<float>(std::max<Index>(1, rows + cols)));
  for (Index i = 0; i < m.size(); ++i) m.data()[i] = (2.0f * g.uniform() - 1.0f) * a;
  return m;
}

}  // namespace attn
