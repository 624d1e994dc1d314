// GPT-2's byte-level BPE (Radford et al. 2019, section 2.2; Sennrich et al. 2016 for BPE): every byte is a
// symbol (spelled with bytes_to_unicode so the vocabulary is printable), the text is cut by the
// pre-tokenisation pattern, and within each piece the adjacent pair of lowest merge rank is merged until
// none is left. The pattern is matched by hand over code points rather than with a regex engine.
#include "attn/text/tokenizer.h"

#include "unicode.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace attn::text {

namespace {

// bytes_to_unicode: the printable bytes ('!'..'~', '¡'..'¬', '®'..'ÿ') stand for themselves, the other 68
// become U+0100 onwards in byte order (space is 'Ġ', newline 'Ċ').
struct ByteMap {
  std::array<char32_t, 256> to_char{};
  std::array<int, 324> to_byte{};  // -1 where the code point stands for no byte
};

const ByteMap& byte_map() {
  static const ByteMap map = [] {
    ByteMap m;
    m.to_byte.fill(-1);
    const auto printable = [](int b) {
      return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    };
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const char32_t c = printable(b) ? static_cast<char32_t>(b) : next++;
      m.to_char[static_cast<std::size_t>(b)] = c;
      m.to_byte[static_cast<std::size_t>(c)] = b;
    }
    return m;
  }();
  return map;
}

// What the pre-tokenisation pattern tells apart: \s, \p{L}, \p{N} and everything else.
enum class CharClass : unsigned char { Space, Letter, Number, Other };

CharClass classify(char32_t c) {
  if (unicode::is_white_space(c)) return CharClass::Space;
  if (unicode::is_letter(c)) return CharClass::Letter;
  if (unicode::is_number(c)) return CharClass::Number;
  return CharClass::Other;
}

// A piece of the BPE result: a vocabulary id and how many bytes of the word it covers.
struct Part {
  int id = 0;
  int bytes = 0;
};

struct Symbol {
  int id = 0;
  int bytes = 0;  // 0: merged into its left neighbour
  int prev = -1;
  int next = -1;
};

struct Candidate {
  int rank = 0;
  int left = 0;  // symbol index
  int right = 0;
  int left_id = 0;
  int right_id = 0;
  int merged_id = 0;
  // std::push_heap keeps the largest on top: "larger" is lower rank, then further left.
  friend bool operator<(const Candidate& a, const Candidate& b) {
    return a.rank != b.rank ? a.rank > b.rank : a.left > b.left;
  }
};

struct BpeScratch {
  std::string prefixed;  // the segment with a space in front (add_prefix_space)
  std::vector<char32_t> values;
  std::vector<CharClass> classes;
  std::vector<std::int32_t> starts;  // byte offset of each code point, then the end
  std::vector<Symbol> symbols;
  std::vector<Candidate> heap;
  std::vector<Part> parts;
};

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

constexpr std::size_t kCacheCapacity = 50'000;  // words remembered; later words are merged every time
constexpr std::size_t kCacheLongestWord = 64;   // bytes; longer words are rare and not worth keeping

struct Merge {
  int rank = 0;
  int id = 0;
};

std::uint64_t pair_key(int a, int b) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) | static_cast<std::uint32_t>(b);
}

class ByteLevelBpeTokenizer final : public Tokenizer {
 public:
  explicit ByteLevelBpeTokenizer(ByteLevelBpeOptions options) : options_(std::move(options)) {}

  Result<void> build(std::vector<std::pair<std::string, int>> vocab,
                     std::vector<std::pair<std::string, std::string>> merges) {
    for (const auto& [entry, id] : vocab) {
      if (id < 0) return fail(ErrorKind::OutOfRange, "\"" + entry + "\" has a negative id", "vocab");
    }
    std::vector<AddedToken> added = added_tokens_of(vocab);
    if (auto placed = place_vocabulary(std::move(vocab), added); !placed) return placed;
    if (auto read = read_merges(merges); !read) return read;
    if (auto found = find_special_ids(); !found) return found;
    for (const AddedToken& token : added) added_ids_.push_back(token.id);
    added_ = unicode::AddedTokenMatcher(std::move(added));
    return {};
  }

  TokenizerKind kind() const override { return TokenizerKind::ByteLevelBpe; }
  int vocab_size() const override { return static_cast<int>(vocab_.size()); }
  const SpecialTokens& specials() const override { return specials_; }

  std::string_view token(int id) const override {
    if (id < 0 || id >= vocab_size()) return {};
    return vocab_[static_cast<std::size_t>(id)];
  }

  std::optional<int> id(std::string_view token) const override {
    const int i = ids_.find(token);
    if (i < 0) return std::nullopt;
    return i;
  }

  std::string display(int id) const override {
    const std::string_view entry = token(id);
    if (std::find(added_ids_.begin(), added_ids_.end(), id) != added_ids_.end()) return std::string(entry);
    const ByteMap& map = byte_map();
    std::string bytes;
    std::size_t i = 0;
    while (i < entry.size()) {
      const char32_t c = unicode::next_code_point(entry, i);
      if (c < map.to_byte.size() && map.to_byte[c] >= 0) {
        bytes += static_cast<char>(map.to_byte[c]);
      } else {
        unicode::append_utf8(bytes, c);  // not a byte-level spelling: shown as it is
      }
    }
    return unicode::repair_utf8(bytes);
  }

  // The entries' bytes joined, then read as UTF-8 (ill-formed sequences as U+FFFD), as the ByteLevel decoder.
  std::string decode(std::span<const int> ids, bool skip_special) const override {
    const ByteMap& map = byte_map();
    std::string bytes;
    for (const int id : ids) {
      if (id < 0 || id >= vocab_size()) continue;
      const auto added =
          std::find_if(added_.tokens().begin(), added_.tokens().end(), [&](const AddedToken& t) { return t.id == id; });
      if (added != added_.tokens().end()) {
        if (!(skip_special && added->special)) bytes += added->content;
        continue;
      }
      const std::string_view entry = vocab_[static_cast<std::size_t>(id)];
      for (std::size_t i = 0; i < entry.size();) {
        const char32_t c = unicode::next_code_point(entry, i);
        if (c < map.to_byte.size() && map.to_byte[c] >= 0) {
          bytes += static_cast<char>(map.to_byte[c]);
        } else {
          unicode::append_utf8(bytes, c);
        }
      }
    }
    return unicode::repair_utf8(bytes);
  }

  Result<std::vector<Token>> encode(std::string_view text) const override {
    if (text.size() > static_cast<std::size_t>(INT32_MAX) - 1) {
      return fail(ErrorKind::TooLarge, "the text is larger than 2 GiB", "text");
    }
    if (auto error = unicode::check_utf8(text)) return std::unexpected(std::move(*error));
    std::vector<Token> out;
    BpeScratch scratch;
    unicode::encode_around_added(added_, text, vocab_, out, [&](std::size_t begin, std::size_t end) {
      encode_segment(text, begin, end, scratch, out);
    });
    return out;
  }

 private:
  // The added tokens: the options' list, or (GPT-2's files name none) the vocabulary's <|endoftext|>.
  std::vector<AddedToken> added_tokens_of(const std::vector<std::pair<std::string, int>>& vocab) const {
    if (options_.added_tokens) return *options_.added_tokens;
    std::vector<AddedToken> added;
    for (const auto& [entry, id] : vocab) {
      if (entry == "<|endoftext|>") added.push_back({entry, id});
    }
    return added;
  }

  // Every entry and added token at its id (ids may leave gaps, not share an id), and the lookup by text.
  Result<void> place_vocabulary(std::vector<std::pair<std::string, int>> vocab, const std::vector<AddedToken>& added) {
    int largest = -1;
    for (const auto& [entry, id] : vocab) largest = std::max(largest, id);
    for (const AddedToken& token : added) {
      if (token.id < 0) {
        return fail(ErrorKind::OutOfRange, "added token \"" + token.content + "\" has a negative id", "vocab");
      }
      largest = std::max(largest, token.id);
    }
    // Ids may leave gaps, but not so many that a stray huge id allocates gigabytes.
    const std::size_t entries = vocab.size() + added.size();
    if (static_cast<std::size_t>(largest) > 2 * entries + 1024) {
      return fail(ErrorKind::TooLarge,
                  "ids run up to " + std::to_string(largest) + " for only " + std::to_string(entries) + " entries",
                  "vocab");
    }
    vocab_.assign(static_cast<std::size_t>(largest + 1), std::string());
    std::vector<bool> taken(vocab_.size(), false);
    const auto place = [&](std::string entry, int id, bool added_token) -> Result<void> {
      const auto at = static_cast<std::size_t>(id);
      if (taken[at]) {
        if (added_token && vocab_[at] == entry) return {};
        return fail(ErrorKind::Malformed,
                    "\"" + entry + "\" and \"" + vocab_[at] + "\" both have id " + std::to_string(id), "vocab");
      }
      vocab_[at] = std::move(entry);
      taken[at] = true;
      return {};
    };
    for (auto& [entry, id] : vocab) {
      if (auto placed = place(std::move(entry), id, false); !placed) return placed;
    }
    for (const AddedToken& token : added) {
      if (auto placed = place(token.content, token.id, true); !placed) return placed;
    }
    ids_.reserve(vocab_.size());
    for (std::size_t i = 0; i < vocab_.size(); ++i) {
      if (!taken[i]) continue;
      if (const int before = ids_.insert(vocab_[i], static_cast<int>(i)); before >= 0) {
        return fail(ErrorKind::Malformed,
                    "\"" + vocab_[i] + "\" is in the vocabulary twice (ids " + std::to_string(before) + " and " +
                        std::to_string(i) + ")",
                    "vocab");
      }
    }
    return {};
  }

  // The merges by pair of ids, each ranked by its line (errors name the line); both halves and the merged entry
  // must be in the vocabulary.
  Result<void> read_merges(const std::vector<std::pair<std::string, std::string>>& merges) {
    merges_.reserve(merges.size());
    std::string joined;
    for (std::size_t k = 0; k < merges.size(); ++k) {
      const auto& [a, b] = merges[k];
      const auto line = static_cast<std::int64_t>(k) + 1;
      const int ia = ids_.find(a);
      if (ia < 0) {
        return fail(ErrorKind::Mismatch,
                    "the merge \"" + a + " " + b + "\" uses \"" + a + "\", which is not in the vocabulary", "merges",
                    -1, line);
      }
      const int ib = ids_.find(b);
      if (ib < 0) {
        return fail(ErrorKind::Mismatch,
                    "the merge \"" + a + " " + b + "\" uses \"" + b + "\", which is not in the vocabulary", "merges",
                    -1, line);
      }
      joined.assign(a);
      joined.append(b);
      const int merged = ids_.find(joined);
      if (merged < 0) {
        return fail(ErrorKind::Mismatch,
                    "the merge \"" + a + " " + b + "\" makes \"" + joined + "\", which is not in the vocabulary",
                    "merges", -1, line);
      }
      merges_[pair_key(ia, ib)] =
          Merge{static_cast<int>(k), merged};  // a repeated pair takes the later rank, as in tokenizers
    }
    return {};
  }

  // The id of each byte's spelling, the unknown token the options name, and the special tokens by their usual names.
  Result<void> find_special_ids() {
    const ByteMap& map = byte_map();
    for (std::size_t b = 0; b < 256; ++b) {
      std::string spelled;
      unicode::append_utf8(spelled, map.to_char[b]);
      byte_ids_[b] = ids_.find(spelled);
    }
    if (options_.unk_token) {
      const auto unk = id(*options_.unk_token);
      if (!unk) return fail(ErrorKind::Malformed, "the vocabulary has no " + *options_.unk_token + " token", "vocab");
      unk_ = *unk;
    }
    const auto first_of = [&](std::initializer_list<const char*> names) -> std::optional<int> {
      for (const char* name : names) {
        if (const auto i = id(name)) return i;
      }
      return std::nullopt;
    };
    specials_.unk = unk_ >= 0 ? std::optional<int>(unk_) : first_of({"<unk>", "<|endoftext|>"});
    specials_.bos = first_of({"<s>", "<|endoftext|>"});
    specials_.eos = first_of({"</s>", "<|endoftext|>"});
    specials_.cls = first_of({"<s>"});
    specials_.sep = first_of({"</s>"});
    specials_.pad = first_of({"<pad>"});
    specials_.mask = first_of({"<mask>"});
    return {};
  }

  void encode_segment(std::string_view text, std::size_t begin, std::size_t end, BpeScratch& scratch,
                      std::vector<Token>& out) const {
    std::string_view source = text.substr(begin, end - begin);
    std::int32_t shift = 0;  // bytes of `source` that are not in the input (the added space)
    if (options_.add_prefix_space && !source.starts_with(' ')) {
      scratch.prefixed.assign(1, ' ');
      scratch.prefixed.append(source);
      source = scratch.prefixed;
      shift = 1;
    }
    scratch.values.clear();
    scratch.classes.clear();
    scratch.starts.clear();
    for (std::size_t i = 0; i < source.size();) {
      scratch.starts.push_back(static_cast<std::int32_t>(i));
      const char32_t c = unicode::next_code_point(source, i);
      scratch.values.push_back(c);
      scratch.classes.push_back(classify(c));
    }
    scratch.starts.push_back(static_cast<std::int32_t>(source.size()));

    const auto base = static_cast<std::int32_t>(begin);
    const std::size_t n = scratch.values.size();
    std::size_t i = 0;
    while (i < n) {
      const std::size_t j = piece_end(scratch, i);
      const std::int32_t from = scratch.starts[i];
      const std::int32_t to = scratch.starts[j];
      const std::vector<Part>& parts =
          bpe(source.substr(static_cast<std::size_t>(from), static_cast<std::size_t>(to - from)), scratch);
      std::int32_t at = from;
      for (const Part& part : parts) {
        const Span span{base + std::max(0, at - shift), base + std::max(0, at + part.bytes - shift)};
        at += part.bytes;
        int id = part.id;
        if (id < 0) {
          if (unk_ < 0) continue;  // a byte the vocabulary cannot spell: dropped, as tokenizers does
          id = unk_;
        }
        out.push_back({id, vocab_[static_cast<std::size_t>(id)], unicode::widen_to_code_points(text, span)});
      }
      i = j;
    }
  }

  // The end of the match of 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  // starting at code point i (it always matches at least one code point).
  static std::size_t piece_end(const BpeScratch& s, std::size_t i) {
    const std::vector<char32_t>& v = s.values;
    const std::vector<CharClass>& k = s.classes;
    const std::size_t n = v.size();
    if (v[i] == U'\'' && i + 1 < n) {
      const char32_t a = v[i + 1];
      if (a == U's' || a == U't' || a == U'm' || a == U'd') return i + 2;
      if (i + 2 < n) {
        const char32_t b = v[i + 2];
        if ((a == U'r' && b == U'e') || (a == U'v' && b == U'e') || (a == U'l' && b == U'l')) return i + 3;
      }
    }
    std::size_t from = i;
    if (v[i] == U' ' && i + 1 < n && k[i + 1] != CharClass::Space) from = i + 1;  // the optional leading space
    if (k[from] != CharClass::Space) {
      std::size_t j = from + 1;
      while (j < n && k[j] == k[from]) ++j;
      return j;
    }
    std::size_t j = i + 1;
    while (j < n && k[j] == CharClass::Space) ++j;
    // \s+(?!\S): a run of white space before a word gives up its last character, which then leads the
    // next piece (" world"); a single white-space character before a word is matched by \s+ alone.
    if (j == n || j - i == 1) return j;
    return j - 1;
  }

  // The BPE parts of one pre-tokenised piece (its raw bytes), from the cache when it has them.
  const std::vector<Part>& bpe(std::string_view word, BpeScratch& scratch) const {
    std::vector<Part>& parts = scratch.parts;
    parts.clear();
    const auto* bytes = reinterpret_cast<const unsigned char*>(word.data());
    if (word.size() == 1) {
      parts.push_back({byte_ids_[bytes[0]], 1});
      return parts;
    }
    const bool cacheable = word.size() <= kCacheLongestWord;
    if (cacheable) {
      std::shared_lock lock(cache_mutex_);
      const auto it = cache_.find(word);
      if (it != cache_.end()) {
        parts = it->second;
        return parts;
      }
    }

    std::vector<Symbol>& symbols = scratch.symbols;
    std::vector<Candidate>& heap = scratch.heap;
    symbols.clear();
    heap.clear();
    const int n = static_cast<int>(word.size());
    for (int i = 0; i < n; ++i) symbols.push_back({byte_ids_[bytes[i]], 1, i - 1, i + 1 < n ? i + 1 : -1});
    const auto consider = [&](int left) {
      if (left < 0) return;
      const int right = symbols[static_cast<std::size_t>(left)].next;
      if (right < 0) return;
      const int a = symbols[static_cast<std::size_t>(left)].id;
      const int b = symbols[static_cast<std::size_t>(right)].id;
      if (a < 0 || b < 0) return;
      const auto it = merges_.find(pair_key(a, b));
      if (it == merges_.end()) return;
      heap.push_back({it->second.rank, left, right, a, b, it->second.id});
      std::push_heap(heap.begin(), heap.end());
    };
    for (int i = 0; i + 1 < n; ++i) consider(i);
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end());
      const Candidate c = heap.back();
      heap.pop_back();
      Symbol& left = symbols[static_cast<std::size_t>(c.left)];
      if (left.bytes == 0 || left.next != c.right || left.id != c.left_id) continue;  // stale
      Symbol& right = symbols[static_cast<std::size_t>(c.right)];
      if (right.id != c.right_id) continue;
      left.id = c.merged_id;
      left.bytes += right.bytes;
      left.next = right.next;
      if (right.next >= 0) symbols[static_cast<std::size_t>(right.next)].prev = c.left;
      right.bytes = 0;
      consider(left.prev);
      consider(c.left);
    }
    for (int i = 0; i >= 0; i = symbols[static_cast<std::size_t>(i)].next) {
      parts.push_back({symbols[static_cast<std::size_t>(i)].id, symbols[static_cast<std::size_t>(i)].bytes});
    }

    if (cacheable) {
      std::unique_lock lock(cache_mutex_);
      if (cache_.size() < kCacheCapacity) cache_.emplace(std::string(word), parts);
    }
    return parts;
  }

  ByteLevelBpeOptions options_;
  std::vector<std::string> vocab_;  // by id; "" where no entry has that id
  unicode::VocabIndex ids_;
  std::unordered_map<std::uint64_t, Merge> merges_;  // (left id, right id) -> rank and merged id
  std::array<int, 256> byte_ids_{};
  int unk_ = -1;
  SpecialTokens specials_;
  unicode::AddedTokenMatcher added_;
  std::vector<int> added_ids_;

  // Words already merged. encode() is const and may run on several threads at once.
  mutable std::shared_mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<Part>, StringHash, std::equal_to<>> cache_;
};

}  // namespace

Result<std::unique_ptr<Tokenizer>> byte_level_bpe_from_parts(std::vector<std::pair<std::string, int>> vocab,
                                                             std::vector<std::pair<std::string, std::string>> merges,
                                                             const ByteLevelBpeOptions& options) {
  if (vocab.size() > static_cast<std::size_t>(INT_MAX) || merges.size() > static_cast<std::size_t>(INT_MAX)) {
    return fail(ErrorKind::TooLarge, "the vocabulary is too large", "vocab");
  }
  auto tokenizer = std::make_unique<ByteLevelBpeTokenizer>(options);
  if (auto built = tokenizer->build(std::move(vocab), std::move(merges)); !built) {
    return std::unexpected(std::move(built.error()));
  }
  return tokenizer;
}

}  // namespace attn::text
