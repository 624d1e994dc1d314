// BERT's tokenizer: the basic tokenizer (transformers' BasicTokenizer, tokenizers' BertNormalizer +
// BertPreTokenizer) and greedy longest-match-first WordPiece (Wu et al. 2016, as in BERT's release).
// Every normalised character remembers the input bytes it came from, so lower-casing and accent
// stripping ("É" -> "e") leave each token's span on the original text.
#include "attn/text/tokenizer.h"

#include "unicode.h"

#include <algorithm>
#include <climits>
#include <cstdint>

namespace attn::text {

namespace {

// A character of the normalised text and the bytes of the input it came from.
struct NormalChar {
  char32_t value = 0;
  Span span;
};

struct Piece {
  int id = 0;
  int begin = 0;  // characters of the word
  int end = 0;
};

// Per-call buffers, reused from word to word.
struct Scratch {
  std::vector<NormalChar> word;
  std::string utf8;
  std::vector<std::size_t> offsets;  // byte offset in `utf8` of each character of the word, then the end
  std::vector<Piece> pieces;
};

class WordPieceTokenizer final : public Tokenizer {
 public:
  WordPieceTokenizer(std::vector<std::string> vocab, WordPieceOptions options)
      : vocab_(std::move(vocab)), options_(std::move(options)) {
    strip_accents_ = options_.strip_accents.value_or(options_.lower_case);
  }

  // Builds the maps over the final vocabulary (string_views into vocab_, which never changes again).
  Result<void> index() {
    ids_.reserve(vocab_.size());
    for (std::size_t i = 0; i < vocab_.size(); ++i) {
      const std::string_view entry = vocab_[i];
      if (const int before = ids_.insert(entry, static_cast<int>(i)); before >= 0) {
        return fail(ErrorKind::Malformed,
                    "\"" + vocab_[i] + "\" is in the vocabulary twice (ids " + std::to_string(before) + " and " +
                        std::to_string(i) + ")",
                    "vocab", -1, static_cast<std::int64_t>(i) + 1);
      }
      longest_ = std::max(longest_, entry.size());
      if (!options_.continuation_prefix.empty() && entry.starts_with(options_.continuation_prefix)) {
        continuations_.insert(entry.substr(options_.continuation_prefix.size()), static_cast<int>(i));
      }
    }
    const auto unk = id(options_.unk_token);
    if (!unk) return fail(ErrorKind::Malformed, "the vocabulary has no " + options_.unk_token + " token", "vocab");
    unk_ = *unk;
    specials_.unk = unk_;
    specials_.cls = id("[CLS]");
    specials_.sep = id("[SEP]");
    specials_.pad = id("[PAD]");
    specials_.mask = id("[MASK]");

    std::vector<AddedToken> added;
    if (options_.added_tokens) {
      added = *options_.added_tokens;
      for (const AddedToken& token : added) {
        if (token.id < 0 || token.id >= vocab_size()) {
          return fail(ErrorKind::Mismatch,
                      "added token \"" + token.content + "\" has id " + std::to_string(token.id) +
                          ", outside the vocabulary of " + std::to_string(vocab_size()),
                      "vocab");
        }
      }
    } else {
      for (const char* name : {"[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"}) {
        if (const auto i = id(name)) added.push_back({name, *i});
      }
    }
    for (const AddedToken& token : added) added_ids_.push_back(token.id);
    added_ = unicode::AddedTokenMatcher(std::move(added));
    return {};
  }

  TokenizerKind kind() const override { return TokenizerKind::WordPiece; }
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
    std::string_view entry = token(id);
    const bool added = std::find(added_ids_.begin(), added_ids_.end(), id) != added_ids_.end();
    if (!added && entry.size() > options_.continuation_prefix.size() && !options_.continuation_prefix.empty() &&
        entry.starts_with(options_.continuation_prefix)) {
      entry.remove_prefix(options_.continuation_prefix.size());
    }
    return std::string(entry);
  }

  // Hugging Face's WordPiece decoder: "##" pieces join the previous one, others follow a space, and the
  // clean-up takes the space out before punctuation and contractions.
  std::string decode(std::span<const int> ids, bool skip_special) const override {
    static const std::pair<std::string_view, std::string_view> kCleanup[] = {
        {" .", "."},   {" ?", "?"},           {" !", "!"},   {" ,", ","},     {" ' ", "'"},   {" n't", "n't"},
        {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
    std::string out;
    bool first = true;
    for (const int id : ids) {
      if (id < 0 || id >= vocab_size()) continue;
      if (skip_special && is_special(id)) continue;
      std::string piece(vocab_[static_cast<std::size_t>(id)]);
      if (!first) {
        const std::string& prefix = options_.continuation_prefix;
        if (!prefix.empty() && piece.starts_with(prefix)) {
          piece.erase(0, prefix.size());
        } else {
          piece.insert(0, " ");
        }
      }
      for (const auto& [from, to] : kCleanup) {
        for (auto at = piece.find(from); at != std::string::npos; at = piece.find(from, at + to.size())) {
          piece.replace(at, from.size(), to);
        }
      }
      out += piece;
      first = false;
    }
    return out;
  }

  Result<std::vector<Token>> encode(std::string_view text) const override {
    if (text.size() > static_cast<std::size_t>(INT32_MAX)) {
      return fail(ErrorKind::TooLarge, "the text is larger than 2 GiB", "text");
    }
    if (auto error = unicode::check_utf8(text)) return std::unexpected(std::move(*error));
    std::vector<Token> out;
    Scratch scratch;
    unicode::encode_around_added(added_, text, vocab_, out,
                                 [&](std::size_t begin, std::size_t end) { tokenise(text, begin, end, scratch, out); });
    return out;
  }

 private:
  bool is_special(int id) const {
    return std::any_of(added_.tokens().begin(), added_.tokens().end(),
                       [&](const AddedToken& t) { return t.id == id && t.special; });
  }

  // The basic tokenizer over text[begin, end): clean, isolate CJK ideographs, lower case and strip
  // accents, split on white space and punctuation; each word then goes to WordPiece.
  void tokenise(std::string_view text, std::size_t begin, std::size_t end, Scratch& scratch,
                std::vector<Token>& out) const {
    std::vector<NormalChar>& word = scratch.word;
    word.clear();
    const auto flush = [&] {
      if (!word.empty()) word_pieces(scratch, out);
      word.clear();
    };
    std::size_t i = begin;
    while (i < end) {
      const std::size_t at = i;
      const char32_t c = unicode::next_code_point(text, i);
      const Span span{static_cast<std::int32_t>(at), static_cast<std::int32_t>(i)};
      if (options_.clean_text) {
        if (c == 0 || c == 0xFFFD || unicode::is_bert_control(c)) continue;
      }
      // Cleaning turns BERT's white space into ' '; the split itself (Python's str.split(), Rust's
      // char::is_whitespace) also breaks on the other White_Space characters (U+2028, U+2029, ...).
      if (unicode::is_bert_whitespace(c) || unicode::is_white_space(c)) {
        flush();
        continue;
      }
      const bool alone = options_.tokenize_chinese_chars && unicode::is_cjk_ideograph(c);
      if (alone) flush();
      normalise(c, span, scratch, out);
      if (alone) flush();
    }
    flush();
  }

  // Lower case, then canonical decomposition without nonspacing marks; punctuation stands alone.
  void normalise(char32_t c, Span span, Scratch& scratch, std::vector<Token>& out) const {
    const auto add = [&](char32_t v) {
      if (unicode::is_bert_punctuation(v)) {
        if (!scratch.word.empty()) word_pieces(scratch, out);
        scratch.word.assign(1, {v, span});
        word_pieces(scratch, out);
        scratch.word.clear();
      } else {
        scratch.word.push_back({v, span});
      }
    };
    if (c < 0x80) {
      add(options_.lower_case && c >= U'A' && c <= U'Z' ? c + 32 : c);
      return;
    }
    std::array<char32_t, 2> lowered{c, 0};
    const int n_lowered = options_.lower_case ? unicode::lower_case(c, lowered) : 1;
    for (int k = 0; k < n_lowered; ++k) {
      const char32_t l = lowered[static_cast<std::size_t>(k)];
      if (!strip_accents_) {
        add(l);
        continue;
      }
      std::array<char32_t, 8> parts{};
      const int n_parts = unicode::canonical_decomposition(l, parts);
      for (int p = 0; p < n_parts; ++p) {
        const char32_t d = parts[static_cast<std::size_t>(p)];
        if (!unicode::is_nonspacing_mark(d)) add(d);
      }
    }
  }

  // WordPiece over scratch.word: greedy longest match first; any remainder without a match, or a word of
  // more than max_input_chars_per_word characters, makes the whole word [UNK].
  void word_pieces(Scratch& scratch, std::vector<Token>& out) const {
    const std::vector<NormalChar>& word = scratch.word;
    const int n = static_cast<int>(word.size());
    const Span whole{word.front().span.begin, word.back().span.end};
    if (n > std::min(options_.max_input_chars_per_word, kMaxWordChars)) {
      out.push_back({unk_, vocab_[static_cast<std::size_t>(unk_)], whole});
      return;
    }
    std::string& utf8 = scratch.utf8;
    std::vector<std::size_t>& offsets = scratch.offsets;
    utf8.clear();
    offsets.clear();
    for (const NormalChar& c : word) {
      offsets.push_back(utf8.size());
      unicode::append_utf8(utf8, c.value);
    }
    offsets.push_back(utf8.size());

    std::vector<Piece>& pieces = scratch.pieces;
    pieces.clear();
    const std::string_view all = utf8;
    int start = 0;
    while (start < n) {
      int end = n;
      int found = -1;
      const auto& map = start == 0 ? ids_ : continuations_;
      const std::size_t from = offsets[static_cast<std::size_t>(start)];
      while (start < end && offsets[static_cast<std::size_t>(end)] - from > longest_) --end;
      for (; start < end; --end) {
        found = map.find(all.substr(from, offsets[static_cast<std::size_t>(end)] - from));
        if (found >= 0) break;
      }
      if (found < 0) {
        out.push_back({unk_, vocab_[static_cast<std::size_t>(unk_)], whole});
        return;
      }
      pieces.push_back({found, start, end});
      start = end;
    }
    for (const Piece& p : pieces) {
      out.push_back(
          {p.id,
           vocab_[static_cast<std::size_t>(p.id)],
           {word[static_cast<std::size_t>(p.begin)].span.begin, word[static_cast<std::size_t>(p.end - 1)].span.end}});
    }
  }

  std::vector<std::string> vocab_;
  WordPieceOptions options_;
  bool strip_accents_ = true;
  unicode::VocabIndex ids_;
  unicode::VocabIndex continuations_;  // "##ing" filed under "ing"
  std::size_t longest_ = 0;            // bytes of the longest entry: no longer candidate can match
  int unk_ = 0;
  SpecialTokens specials_;
  unicode::AddedTokenMatcher added_;
  std::vector<int> added_ids_;
};

}  // namespace

Result<std::unique_ptr<Tokenizer>> wordpiece_from_vocab(std::vector<std::string> vocab,
                                                        const WordPieceOptions& options) {
  if (vocab.size() > static_cast<std::size_t>(INT_MAX)) {
    return fail(ErrorKind::TooLarge, "the vocabulary is too large", "vocab");
  }
  auto tokenizer = std::make_unique<WordPieceTokenizer>(std::move(vocab), options);
  if (auto indexed = tokenizer->index(); !indexed) return std::unexpected(std::move(indexed.error()));
  return tokenizer;
}

}  // namespace attn::text
