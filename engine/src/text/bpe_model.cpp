// The BPE model of tokenizer.json (Sennrich et al. 2016): a piece starts as its characters (with
// continuing_subword_prefix on all but the first, end_of_word_suffix on the last), a character missing from
// the vocabulary becomes its bytes' "<0xXX>" entries (byte_fallback) or the unknown token (consecutive ones
// fused with fuse_unk), and the adjacent pair of lowest merge rank is merged until none is left. ignore_merges
// takes a piece that is itself an entry whole. Dropout is ignored: encoding is deterministic.
#include "pipeline.h"

#include <algorithm>
#include <climits>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace attn::text::pipeline {

namespace {

struct Merge {
  int rank = 0;
  int id = 0;
};

std::uint64_t pair_key(int a, int b) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) | static_cast<std::uint32_t>(b);
}

struct Symbol {
  int id = 0;
  std::uint32_t begin = 0;
  std::uint32_t end = 0;  // begin == end: merged into its left neighbour
  int prev = -1;
  int next = -1;
};

struct Candidate {
  int rank = 0;
  int left = 0;
  int right = 0;
  int merged = 0;
  // The heap keeps the largest on top: "larger" is lower rank, then further left.
  friend bool operator<(const Candidate& a, const Candidate& b) {
    return a.rank != b.rank ? a.rank > b.rank : a.left > b.left;
  }
};

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

constexpr std::size_t kCacheCapacity = 50'000;  // pieces remembered; later pieces are merged every time
constexpr std::size_t kCacheLongestPiece = 64;  // bytes

class Bpe final : public Model {
 public:
  Bpe(std::shared_ptr<const Vocabulary> vocab, BpeOptions options)
      : vocab_(std::move(vocab)), options_(std::move(options)) {
    byte_ids_.fill(-1);
    if (options_.byte_fallback) {
      static const char* hex = "0123456789ABCDEF";
      for (int b = 0; b < 256; ++b) {
        const std::string entry = std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">";
        byte_ids_[static_cast<std::size_t>(b)] = vocab_->find(entry);
      }
    }
  }

  Result<void> add_merges(std::vector<std::pair<std::string, std::string>> merges) {
    merges_.reserve(merges.size());
    std::string joined;
    for (std::size_t k = 0; k < merges.size(); ++k) {
      const auto& [a, b] = merges[k];
      const std::string where = "model.merges[" + std::to_string(k) + "]";
      const int ia = vocab_->find(a);
      const int ib = vocab_->find(b);
      if (ia < 0 || ib < 0) {
        return fail(ErrorKind::Mismatch, where + ": the merge \"" + a + " " + b + "\" uses \"" + (ia < 0 ? a : b) +
                                             "\", which is not in the vocabulary");
      }
      // The merged entry: the right half loses its continuation prefix, as the library builds it.
      joined.assign(a);
      joined.append(b, std::min(b.size(), options_.prefix.size()));
      const int merged = vocab_->find(joined);
      if (merged < 0) {
        return fail(ErrorKind::Mismatch, where + ": the merge \"" + a + " " + b + "\" makes \"" + joined +
                                             "\", which is not in the vocabulary");
      }
      merges_[pair_key(ia, ib)] = Merge{static_cast<int>(k), merged};  // a repeated pair takes the later rank
    }
    return {};
  }

  void tokenize(std::string_view piece, std::vector<PieceToken>& out) const override {
    if (piece.empty()) return;
    if (options_.ignore_merges) {
      if (const int id = vocab_->find(piece); id >= 0) {
        out.push_back({id, 0, static_cast<std::uint32_t>(piece.size())});
        return;
      }
    }
    const bool cacheable = piece.size() <= kCacheLongestPiece;
    if (cacheable) {
      std::shared_lock lock(cache_mutex_);
      if (const auto it = cache_.find(piece); it != cache_.end()) {
        out.insert(out.end(), it->second.begin(), it->second.end());
        return;
      }
    }
    const std::size_t first = out.size();
    merge(piece, out);
    if (cacheable) {
      std::unique_lock lock(cache_mutex_);
      if (cache_.size() < kCacheCapacity) {
        cache_.emplace(std::string(piece),
                       std::vector<PieceToken>(out.begin() + static_cast<std::ptrdiff_t>(first), out.end()));
      }
    }
  }

 private:
  void merge(std::string_view piece, std::vector<PieceToken>& out) const {
    std::vector<Symbol> symbols;
    symbols.reserve(piece.size());
    std::string spelled;
    bool pending_unk = false;
    const auto push = [&](int id, std::size_t begin, std::size_t end) {
      const int index = static_cast<int>(symbols.size());
      symbols.push_back({id, static_cast<std::uint32_t>(begin), static_cast<std::uint32_t>(end), index - 1, -1});
      if (index > 0) symbols[static_cast<std::size_t>(index - 1)].next = index;
    };
    for (std::size_t i = 0; i < piece.size();) {
      const std::size_t at = i;
      unicode::next_code_point(piece, i);
      spelled.clear();
      if (at > 0) spelled += options_.prefix;
      spelled.append(piece.substr(at, i - at));
      if (i == piece.size()) spelled += options_.suffix;
      if (const int id = vocab_->find(spelled); id >= 0) {
        push(id, at, i);
        pending_unk = false;
        continue;
      }
      if (options_.byte_fallback) {
        const bool all = std::all_of(spelled.begin(), spelled.end(),
                                     [&](char b) { return byte_ids_[static_cast<unsigned char>(b)] >= 0; });
        if (all) {
          // Each byte token covers the character's bytes in turn (the prefix and suffix have no input bytes).
          for (std::size_t k = 0; k < spelled.size(); ++k) {
            const std::size_t b = std::min(at + k, i - 1);
            push(byte_ids_[static_cast<unsigned char>(spelled[k])], b, b + 1);
          }
          pending_unk = false;
          continue;
        }
      }
      if (!options_.unk) continue;  // no unknown token: the character is dropped, as the library does
      if (options_.fuse_unk && pending_unk) {
        symbols.back().end = static_cast<std::uint32_t>(i);
      } else {
        push(*options_.unk, at, i);
      }
      pending_unk = true;
    }
    if (symbols.empty()) return;

    std::vector<Candidate> heap;
    const auto consider = [&](int left) {
      if (left < 0) return;
      const int right = symbols[static_cast<std::size_t>(left)].next;
      if (right < 0) return;
      const auto it = merges_.find(
          pair_key(symbols[static_cast<std::size_t>(left)].id, symbols[static_cast<std::size_t>(right)].id));
      if (it == merges_.end()) return;
      heap.push_back({it->second.rank, left, right, it->second.id});
      std::push_heap(heap.begin(), heap.end());
    };
    for (int k = 0; k + 1 < static_cast<int>(symbols.size()); ++k) consider(k);
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end());
      const Candidate c = heap.back();
      heap.pop_back();
      Symbol& left = symbols[static_cast<std::size_t>(c.left)];
      if (left.begin == left.end || left.next != c.right) continue;  // stale
      Symbol& right = symbols[static_cast<std::size_t>(c.right)];
      const auto now = merges_.find(pair_key(left.id, right.id));
      if (now == merges_.end() || now->second.id != c.merged) continue;
      left.id = c.merged;
      left.end = right.end;
      left.next = right.next;
      if (right.next >= 0) symbols[static_cast<std::size_t>(right.next)].prev = c.left;
      right.end = right.begin;
      right.id = -1;
      consider(left.prev);
      consider(c.left);
    }
    for (int k = 0; k >= 0; k = symbols[static_cast<std::size_t>(k)].next) {
      const Symbol& s = symbols[static_cast<std::size_t>(k)];
      out.push_back({s.id, s.begin, s.end});
    }
  }

  std::shared_ptr<const Vocabulary> vocab_;
  BpeOptions options_;
  std::unordered_map<std::uint64_t, Merge> merges_;
  std::array<int, 256> byte_ids_{};

  mutable std::shared_mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<PieceToken>, StringHash, std::equal_to<>> cache_;
};

}  // namespace

Result<std::shared_ptr<const Vocabulary>> build_vocabulary(std::vector<std::pair<std::string, int>> pairs,
                                                           const std::string& where) {
  // Ids past this are refused before anything is allocated: the largest published vocabularies are ~260k.
  constexpr std::int64_t kMostIds = 1 << 21;
  std::int64_t largest = -1;
  for (const auto& [entry, id] : pairs) {
    if (id < 0) return fail(ErrorKind::OutOfRange, where + ": \"" + entry + "\" has a negative id");
    largest = std::max<std::int64_t>(largest, id);
  }
  if (largest >= kMostIds + 2 * static_cast<std::int64_t>(pairs.size())) {
    return fail(ErrorKind::TooLarge, where + ": ids run up to " + std::to_string(largest) + " for only " +
                                         std::to_string(pairs.size()) + " entries");
  }
  auto vocab = std::make_shared<Vocabulary>();
  vocab->entries.assign(static_cast<std::size_t>(largest + 1), std::string());
  std::vector<bool> taken(vocab->entries.size(), false);
  for (auto& [entry, id] : pairs) {
    const auto at = static_cast<std::size_t>(id);
    if (taken[at]) {
      return fail(ErrorKind::Malformed,
                  where + ": \"" + entry + "\" and \"" + vocab->entries[at] + "\" both have id " + std::to_string(id));
    }
    vocab->entries[at] = std::move(entry);
    taken[at] = true;
  }
  vocab->index.reserve(pairs.size());
  for (std::size_t i = 0; i < vocab->entries.size(); ++i) {
    if (!taken[i]) continue;
    if (const int before = vocab->index.insert(vocab->entries[i], static_cast<int>(i)); before >= 0) {
      return fail(ErrorKind::Malformed, where + ": \"" + vocab->entries[i] + "\" is in the vocabulary twice (ids " +
                                            std::to_string(before) + " and " + std::to_string(i) + ")");
    }
  }
  return std::shared_ptr<const Vocabulary>(std::move(vocab));
}

Result<std::unique_ptr<Model>> make_bpe(std::shared_ptr<const Vocabulary> vocab,
                                        std::vector<std::pair<std::string, std::string>> merges, BpeOptions options) {
  if (merges.size() > static_cast<std::size_t>(INT_MAX)) return fail(ErrorKind::TooLarge, "model.merges is too long");
  auto bpe = std::make_unique<Bpe>(std::move(vocab), std::move(options));
  ATTN_TRY(bpe->add_merges(std::move(merges)));
  return std::unique_ptr<Model>(std::move(bpe));
}

}  // namespace attn::text::pipeline
