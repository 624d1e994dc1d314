// The other models of tokenizer.json, and the choice among all four: WordPiece (greedy longest match first,
// as BERT's), WordLevel (a piece is an entry or the unknown token) and Unigram (Kudo 2018: the segmentation of
// highest total log-probability, found by Viterbi over the pieces' scores; a character no piece starts with
// becomes the unknown token with the lowest score less 10, as SentencePiece and the library score it).
#include "pipeline.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attn::text::pipeline {

namespace {

class WordPiece final : public Model {
 public:
  WordPiece(std::shared_ptr<const Vocabulary> vocab, int unk, std::string prefix, std::int64_t most_chars)
      : vocab_(std::move(vocab)), unk_(unk), prefix_(std::move(prefix)), most_chars_(most_chars) {
    for (const std::string& entry : vocab_->entries) longest_ = std::max(longest_, entry.size());
  }
  void tokenize(std::string_view piece, std::vector<PieceToken>& out) const override {
    const auto whole = [&] { out.push_back({unk_, 0, static_cast<std::uint32_t>(piece.size())}); };
    std::vector<std::size_t> bounds;  // code point starts, then the end
    for (std::size_t i = 0; i < piece.size();) {
      bounds.push_back(i);
      unicode::next_code_point(piece, i);
    }
    bounds.push_back(piece.size());
    if (static_cast<std::int64_t>(bounds.size()) - 1 > most_chars_) return whole();
    const std::size_t first = out.size();
    std::string candidate;
    std::size_t start = 0;  // index into bounds
    while (start + 1 < bounds.size()) {
      std::size_t end = bounds.size() - 1;
      // No entry is longer than the longest: each start tries only that far (a word of n characters costs n
      // times the longest entry, not n squared).
      const std::size_t reach = longest_;
      while (end > start && bounds[end] - bounds[start] > reach) --end;
      int found = -1;
      for (; end > start; --end) {
        candidate.assign(start > 0 ? prefix_ : std::string());
        candidate.append(piece.substr(bounds[start], bounds[end] - bounds[start]));
        found = vocab_->find(candidate);
        if (found >= 0) break;
      }
      if (found < 0) {
        out.resize(first);
        return whole();
      }
      out.push_back({found, static_cast<std::uint32_t>(bounds[start]), static_cast<std::uint32_t>(bounds[end])});
      start = end;
    }
  }

 private:
  std::shared_ptr<const Vocabulary> vocab_;
  int unk_;
  std::string prefix_;
  std::int64_t most_chars_;
  std::size_t longest_ = 0;  // bytes of the longest entry
};

class WordLevel final : public Model {
 public:
  WordLevel(std::shared_ptr<const Vocabulary> vocab, std::optional<int> unk) : vocab_(std::move(vocab)), unk_(unk) {}
  void tokenize(std::string_view piece, std::vector<PieceToken>& out) const override {
    const int id = vocab_->find(piece);
    if (id >= 0) {
      out.push_back({id, 0, static_cast<std::uint32_t>(piece.size())});
    } else {
      // Without the unknown token the library fails the encoding: kMissingUnknown tells the tokenizer to.
      out.push_back({unk_ ? *unk_ : kMissingUnknown, 0, static_cast<std::uint32_t>(piece.size())});
    }
  }

 private:
  std::shared_ptr<const Vocabulary> vocab_;
  std::optional<int> unk_;
};

class Unigram final : public Model {
 public:
  Unigram(std::shared_ptr<const Vocabulary> vocab, std::vector<double> scores, std::optional<int> unk,
          bool byte_fallback)
      : vocab_(std::move(vocab)), scores_(std::move(scores)), unk_(unk) {
    double lowest = std::numeric_limits<double>::infinity();  // the vocabulary is not empty (make_model checks)
    for (std::size_t i = 0; i < scores_.size(); ++i) {
      lowest = std::min(lowest, scores_[i]);
      longest_ = std::max(longest_, vocab_->entries[i].size());
    }
    unk_score_ = lowest - 10.0;
    byte_ids_.fill(-1);
    if (byte_fallback) {
      static const char* hex = "0123456789ABCDEF";
      for (int b = 0; b < 256; ++b) {
        byte_ids_[static_cast<std::size_t>(b)] = vocab_->find(std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">");
      }
    }
    byte_fallback_ = byte_fallback;
  }

  void tokenize(std::string_view piece, std::vector<PieceToken>& out) const override {
    const std::size_t n = piece.size();
    constexpr double kNone = -std::numeric_limits<double>::infinity();
    std::vector<double> best(n + 1, kNone);
    std::vector<std::int64_t> from(n + 1, -1);
    std::vector<int> id(n + 1, -1);
    best[0] = 0.0;
    for (std::size_t pos = 0; pos < n;) {
      std::size_t next = pos;
      unicode::next_code_point(piece, next);
      if (best[pos] == kNone) {  // not reachable (cannot happen: every character has a node)
        pos = next;
        continue;
      }
      bool single = false;
      for (std::size_t end = next; end <= n && end - pos <= longest_;) {
        const int found = vocab_->find(piece.substr(pos, end - pos));
        if (found >= 0) {
          if (end == next) single = true;
          const double score = best[pos] + scores_[static_cast<std::size_t>(found)];
          if (from[end] < 0 || score > best[end]) {
            best[end] = score;
            from[end] = static_cast<std::int64_t>(pos);
            id[end] = found;
          }
        }
        if (end == n) break;
        unicode::next_code_point(piece, end);
      }
      if (!single) {
        const double score = best[pos] + unk_score_;
        if (from[next] < 0 || score > best[next]) {
          if (!unk_) {  // the library fails the encoding as soon as its lattice takes the unknown node here
            out.push_back({kMissingUnknown, static_cast<std::uint32_t>(pos), static_cast<std::uint32_t>(next)});
            return;
          }
          best[next] = score;
          from[next] = static_cast<std::int64_t>(pos);
          id[next] = -1;  // unknown
        }
      }
      pos = next;
    }
    // Back from the end; consecutive unknown characters become one unknown token.
    std::vector<PieceToken> path;
    for (std::size_t end = n; end > 0;) {
      const auto begin = static_cast<std::size_t>(from[end]);
      const int piece_id = id[end];
      if (piece_id < 0 && !path.empty() && path.back().id < 0) {
        path.back().begin = static_cast<std::uint32_t>(begin);
      } else {
        path.push_back({piece_id, static_cast<std::uint32_t>(begin), static_cast<std::uint32_t>(end)});
      }
      end = begin;
    }
    for (auto it = path.rbegin(); it != path.rend(); ++it) {
      if (it->id >= 0) {
        out.push_back(*it);
        continue;
      }
      if (byte_fallback_) {
        const std::string_view bytes = piece.substr(it->begin, it->end - it->begin);
        const bool all = std::all_of(bytes.begin(), bytes.end(),
                                     [&](char b) { return byte_ids_[static_cast<unsigned char>(b)] >= 0; });
        if (all) {  // every byte token spans the whole unknown run, as the library's do
          for (std::uint32_t k = it->begin; k < it->end; ++k) {
            out.push_back({byte_ids_[static_cast<unsigned char>(piece[k])], it->begin, it->end});
          }
          continue;
        }
      }
      out.push_back({*unk_, it->begin, it->end, true});  // the lattice refused unknown runs without unk_
    }
  }

 private:
  std::shared_ptr<const Vocabulary> vocab_;
  std::vector<double> scores_;
  std::optional<int> unk_;
  double unk_score_ = -10.0;
  std::size_t longest_ = 1;
  bool byte_fallback_ = false;
  std::array<int, 256> byte_ids_{};
};

std::optional<int> unk_of(const Vocabulary& vocab, const std::string& name) {
  if (name.empty()) return std::nullopt;
  const int id = vocab.find(name);
  return id >= 0 ? std::optional<int>(id) : std::nullopt;
}

}  // namespace

Result<BuiltModel> make_model(const Json& j, ModelParts parts, bool byte_level) {
  const std::string where = "model";
  std::string type = type_of(j);
  if (type.empty()) {  // files from before "type" was written: tell the models apart by their fields
    type = parts.merges ? "BPE" : j.contains("max_input_chars_per_word") ? "WordPiece" : "";
  }
  BuiltModel built;
  const auto vocabulary = [&]() -> Result<std::shared_ptr<const Vocabulary>> {
    if (!parts.vocab) return bad_field("model.vocab", "must be an object of token: id");
    return build_vocabulary(std::move(*parts.vocab), "model.vocab");
  };
  if (type == "BPE") {
    if (!parts.merges) return bad_field("model.merges", "must be an array");
    ATTN_ASSIGN(built.vocab, vocabulary());
    BpeOptions options;
    std::string unk;
    ATTN_ASSIGN(unk, string_field(j, "unk_token", where, ""));
    options.unk = unk_of(*built.vocab, unk);
    ATTN_ASSIGN(options.fuse_unk, bool_field(j, "fuse_unk", where, false));
    ATTN_ASSIGN(options.byte_fallback, bool_field(j, "byte_fallback", where, false));
    ATTN_ASSIGN(options.ignore_merges, bool_field(j, "ignore_merges", where, false));
    ATTN_ASSIGN(options.prefix, string_field(j, "continuing_subword_prefix", where, ""));
    ATTN_ASSIGN(options.suffix, string_field(j, "end_of_word_suffix", where, ""));
    if (const auto it = j.find("dropout"); it != j.end() && !it->is_null() && !it->is_number()) {
      return bad_field("model.dropout", "must be a number or null");
    }
    built.unk = options.unk;
    ATTN_ASSIGN(built.model, make_bpe(built.vocab, std::move(*parts.merges), std::move(options)));
    built.kind = byte_level ? TokenizerKind::ByteLevelBpe : TokenizerKind::Bpe;
    return built;
  }
  if (type == "WordPiece") {
    ATTN_ASSIGN(built.vocab, vocabulary());
    std::string unk, prefix;
    ATTN_ASSIGN(unk, string_field(j, "unk_token", where, "[UNK]"));
    ATTN_ASSIGN(prefix, string_field(j, "continuing_subword_prefix", where, "##"));
    std::int64_t most = 100;
    ATTN_ASSIGN(most, int_field(j, "max_input_chars_per_word", where, 100));
    most = std::clamp<std::int64_t>(most, 0, kMaxWordChars);  // a longer word is [UNK], as past the file's own bound
    built.unk = unk_of(*built.vocab, unk);
    if (!built.unk) return bad_field("model.unk_token", "\"" + unk + "\" is not in model.vocab", ErrorKind::Mismatch);
    built.model = std::make_unique<WordPiece>(built.vocab, *built.unk, std::move(prefix), most);
    built.kind = TokenizerKind::WordPiece;
    return built;
  }
  if (type == "WordLevel") {
    ATTN_ASSIGN(built.vocab, vocabulary());
    std::string unk;
    ATTN_ASSIGN(unk, string_field(j, "unk_token", where, "<unk>"));
    built.unk = unk_of(*built.vocab, unk);
    built.unk_token = unk;
    built.model = std::make_unique<WordLevel>(built.vocab, built.unk);
    built.kind = TokenizerKind::WordLevel;
    return built;
  }
  if (type == "Unigram") {
    const auto list = j.find("vocab");
    if (list == j.end() || !list->is_array() || list->empty()) {
      return bad_field("model.vocab", "of a Unigram model must be a non-empty array of [piece, score]");
    }
    std::vector<std::pair<std::string, int>> pairs;
    std::vector<double> scores;
    pairs.reserve(list->size());
    scores.reserve(list->size());
    for (std::size_t k = 0; k < list->size(); ++k) {
      const Json& entry = (*list)[k];
      if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() || !entry[1].is_number()) {
        return bad_field("model.vocab[" + std::to_string(k) + "]", "must be [piece, score]");
      }
      pairs.emplace_back(entry[0].get<std::string>(), static_cast<int>(k));
      const double score = entry[1].get<double>();
      if (!std::isfinite(score))
        return bad_field("model.vocab[" + std::to_string(k) + "]", "has a score that is not finite");
      scores.push_back(score);
    }
    ATTN_ASSIGN(built.vocab, build_vocabulary(std::move(pairs), "model.vocab"));
    // null or absent: no unknown piece, and a text with a character the vocabulary lacks is refused at encode.
    std::int64_t unk = -1;
    const auto given = j.find("unk_id");
    const bool named = given != j.end() && !given->is_null();
    ATTN_ASSIGN(unk, int_field(j, "unk_id", where, -1));
    const auto pieces = static_cast<std::int64_t>(scores.size());
    if (named && (unk < 0 || unk >= pieces)) {
      return bad_field("model.unk_id",
                       "is " + with_commas(unk) + ", outside the vocabulary's " + with_commas(pieces) +
                           " pieces (ids 0 to " + with_commas(pieces - 1) + ")",
                       ErrorKind::OutOfRange);
    }
    if (named) built.unk = static_cast<int>(unk);
    bool byte_fallback = false;
    ATTN_ASSIGN(byte_fallback, bool_field(j, "byte_fallback", where, false));
    built.model = std::make_unique<Unigram>(built.vocab, std::move(scores), built.unk, byte_fallback);
    built.kind = TokenizerKind::Unigram;
    return built;
  }
  return unsupported_type(where, type);
}

}  // namespace attn::text::pipeline
