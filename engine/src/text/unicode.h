// What the tokenizers need to read text: UTF-8 decoding with byte offsets, the Unicode categories their
// pre-tokenisation rules are written in (via libutf8proc), lower case and canonical decomposition, the
// whole-string match of added tokens ([CLS], <|endoftext|>) that Hugging Face runs before the model, and
// the index from vocabulary entry to id that every lookup goes through.
#pragma once

#include "attn/error.h"
#include "attn/text/tokenizer.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attn::text::unicode {

// nullopt when `text` is valid UTF-8 (no overlong forms, surrogates, values above U+10FFFF or truncated
// sequences); else the error, naming `what` and the offset of the first byte of the bad sequence.
std::optional<Error> check_utf8(std::string_view text, const std::string& what = "text");
// The code point starting at `i` of valid UTF-8; `i` moves past it.
char32_t next_code_point(std::string_view text, std::size_t& i);
void append_utf8(std::string& out, char32_t c);
// Each maximal ill-formed subsequence replaced by U+FFFD, as Python's bytes.decode(errors="replace").
std::string repair_utf8(std::string_view bytes);
// Widens [begin, end) of valid UTF-8 to whole code points.
Span widen_to_code_points(std::string_view text, Span span);

// One character of text that may not be valid UTF-8.
struct CodePoint {
  char32_t value = 0;  // U+FFFD for an ill-formed sequence
  Span span;           // its bytes in the text
  bool valid = true;   // false: the bytes were not UTF-8 (one U+FFFD per maximal ill-formed subpart)
};
// The text's code points; ill-formed bytes become U+FFFD as repair_utf8 (and Python's
// decode(errors="replace")) replaces them.
std::vector<CodePoint> code_points(std::string_view text);

// General category as in the Unicode database ("Lu", "Mn", ...), from libutf8proc.
bool is_letter(char32_t c);                // L*
bool is_number(char32_t c);                // N*
bool is_nonspacing_mark(char32_t c);       // Mn
bool is_punctuation_category(char32_t c);  // P*
bool is_other_category(char32_t c);        // C* (Cc, Cf, Cs, Co, Cn)
bool is_space_separator(char32_t c);       // Zs

// Unicode White_Space: what \s matches in GPT-2's pattern (Python's regex module, Rust's regex crate);
// Python's re module would also match U+001C-U+001F.
bool is_white_space(char32_t c);

// BERT's classes (transformers' _is_whitespace, _is_control, _is_punctuation, _is_chinese_char).
bool is_bert_whitespace(char32_t c);   // space, \t, \n, \r or Zs
bool is_bert_control(char32_t c);      // C* except \t, \n, \r
bool is_bert_punctuation(char32_t c);  // ASCII 33-47, 58-64, 91-96, 123-126 or P*
bool is_cjk_ideograph(char32_t c);

// Lower case as Python's str.lower() for a single character (simple mapping, plus U+0130's full
// mapping "i\u0307"). Writes 1 or 2 code points to `out`, returns how many.
int lower_case(char32_t c, std::array<char32_t, 2>& out);
// Canonical decomposition (NFD of one character, without reordering marks). Returns the count written,
// at most `out.size()`.
int canonical_decomposition(char32_t c, std::array<char32_t, 8>& out);

// ---------------------------------------------------------------------------------------------------------
// Added tokens, found as whole strings in the raw input (Hugging Face's AddedVocabulary: leftmost longest
// match; lstrip/rstrip extend the match over white space; single_word needs no word character beside it).

struct Segment {
  std::int32_t begin = 0;
  std::int32_t end = 0;
  int added = -1;  // index into the matcher's tokens, -1 for text the model tokenises
};

class AddedTokenMatcher {
 public:
  AddedTokenMatcher() = default;
  explicit AddedTokenMatcher(std::vector<AddedToken> tokens);
  const std::vector<AddedToken>& tokens() const { return tokens_; }
  bool empty() const { return tokens_.empty(); }
  // Splits valid UTF-8 `text` into segments covering it in order (empty model segments left out).
  void split(std::string_view text, std::vector<Segment>& out) const;

 private:
  std::vector<AddedToken> tokens_;
  std::vector<int> by_length_;          // token indices, longest content first
  std::array<bool, 256> first_byte_{};  // a token starts with this byte
};

// The encode loop of the tokenizers that run the added tokens before their model (ByteLevelBpe, WordPiece): `text`
// split around `added`'s tokens, each found token becoming its Token (its id, `vocab`'s entry at that id, its
// bytes), the text between them given to `tokenise(begin, end)` for the model's own pieces; with no added tokens,
// the whole text. Tokens are appended to `out` in the order of the text.
template <class Tokenise>
void encode_around_added(const AddedTokenMatcher& added, std::string_view text, const std::vector<std::string>& vocab,
                         std::vector<Token>& out, Tokenise&& tokenise) {
  if (added.empty()) {
    tokenise(std::size_t{0}, text.size());
    return;
  }
  std::vector<Segment> segments;
  added.split(text, segments);
  for (const Segment& s : segments) {
    if (s.added >= 0) {
      const AddedToken& token = added.tokens()[static_cast<std::size_t>(s.added)];
      out.push_back({token.id, vocab[static_cast<std::size_t>(token.id)], {s.begin, s.end}});
    } else {
      tokenise(static_cast<std::size_t>(s.begin), static_cast<std::size_t>(s.end));
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Vocabulary entry -> id, by open addressing in one array: a lookup touches one slot and, when the hashes
// agree, the entry's bytes. Several times faster to build and to query than std::unordered_map, whose
// nodes are scattered allocations (50k of them for GPT-2).

class VocabIndex {
 public:
  // Room for `count` entries without growing.
  void reserve(std::size_t count);
  // Files `key` (whose bytes must outlive the index) under `id`. Returns -1, or the id already filed
  // under `key` (which is then kept).
  int insert(std::string_view key, int id);
  // The id of `key`, or -1.
  int find(std::string_view key) const;
  std::size_t size() const { return size_; }

 private:
  struct Slot {
    const char* data = nullptr;
    std::uint32_t length = 0;
    std::uint32_t hash = 0;
    std::int32_t id = -1;  // -1: empty
  };
  static std::uint64_t hash_of(std::string_view key);

  std::vector<Slot> slots_;  // a power of two in size, at most half full
  std::size_t size_ = 0;
};

}  // namespace attn::text::unicode
