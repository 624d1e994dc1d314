#include "attn/text/ngram_embedding.h"

#include <cmath>
#include <string>

#include "attn/random.h"
#include "unicode.h"

namespace attn {

namespace {

// Code point boundaries of valid UTF-8 (the lab validates before embedding; a stray byte counts as one).
std::vector<std::size_t> boundaries(std::string_view s) {
  std::vector<std::size_t> b;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) b.push_back(i);
  }
  b.push_back(s.size());
  return b;
}

std::uint64_t fnv1a(std::string_view s, std::uint64_t seed) {
  std::uint64_t h = 0xcbf29ce484222325ULL ^ seed;
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace

std::string fold_case(std::string_view word) {
  std::string out;
  out.reserve(word.size());
  const auto b = boundaries(word);
  for (std::size_t k = 0; k + 1 < b.size(); ++k) {
    const std::string_view ch = word.substr(b[k], b[k + 1] - b[k]);
    char32_t c = 0;
    const auto u = [&](std::size_t i) { return static_cast<char32_t>(static_cast<unsigned char>(ch[i])); };
    if (ch.size() == 1) {
      c = u(0);
    } else if (ch.size() == 2) {
      c = ((u(0) & 0x1F) << 6) | (u(1) & 0x3F);
    } else {
      out += ch;  // three- and four-byte characters have no case we fold
      continue;
    }
    if (c >= 'A' && c <= 'Z') {
      c += 32;
    } else if ((c >= 0xC0 && c <= 0xDE && c != 0xD7) || (c >= 0x391 && c <= 0x3A9) || (c >= 0x410 && c <= 0x42F)) {
      c += 32;
    } else if (c >= 0x400 && c <= 0x40F) {
      c += 80;
    } else if (c >= 0x100 && c <= 0x17F && c % 2 == 0 && c != 0x130 && c != 0x138) {
      c += 1;
    }
    text::unicode::append_utf8(out, c);
  }
  return out;
}

NgramEmbedding::NgramEmbedding(NgramEmbeddingParams params) : params_(params) {}

void NgramEmbedding::add_ngram(std::string_view gram, float weight, Eigen::Ref<RowVector> out) const {
  // Sixteen bits per component from a generator seeded by the n-gram's hash: uniform in [-1, 1).
  SplitMix64 g(fnv1a(gram, params_.seed));
  std::uint64_t bits = 0;
  for (Index i = 0; i < out.size(); ++i) {
    if (i % 4 == 0) bits = g.next();
    const float u = static_cast<float>(bits & 0xFFFF) * (2.0f / 65536.0f) - 1.0f;
    bits >>= 16;
    out(i) += weight * u;
  }
}

RowVector NgramEmbedding::embed(std::string_view word) const {
  RowVector v = RowVector::Zero(params_.dim);
  const std::string folded = fold_case(word);
  std::string w;
  w.reserve(folded.size() + 2);
  w.append(1, '<').append(folded).append(1, '>');
  const auto b = boundaries(w);
  const int chars = static_cast<int>(b.size()) - 1;
  for (int n = params_.min_n; n <= params_.max_n; ++n) {
    for (int start = 0; start + n <= chars; ++start) {
      add_ngram(std::string_view(w).substr(b[start], b[start + n] - b[start]), 1.0f, v);
    }
  }
  // The whole word as its own feature (marked so it never collides with an n-gram), which also gives
  // one- and two-letter words, shorter than every n-gram, a vector of their own.
  w.insert(w.begin(), '\x01');
  add_ngram(w, params_.whole_word_weight, v);
  // Norm sqrt(dim): components of unit scale, so q . k / sqrt(d) lands in softmax's useful range.
  const float norm = v.norm();
  if (norm > 0.0f) v *= std::sqrt(static_cast<float>(params_.dim)) / norm;
  return v;
}

Matrix NgramEmbedding::embed(const std::vector<std::string_view>& words) const {
  Matrix m(static_cast<Index>(words.size()), params_.dim);
  for (std::size_t i = 0; i < words.size(); ++i) m.row(static_cast<Index>(i)) = embed(words[i]);
  return m;
}

}  // namespace attn
