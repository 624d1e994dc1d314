#include "unicode.h"

#include <utf8proc.h>

#include <algorithm>

namespace attn::text::unicode {

namespace {

std::string hex_byte(unsigned char b) {
  constexpr char kDigits[] = "0123456789ABCDEF";
  return std::string("0x") + kDigits[b >> 4] + kDigits[b & 0xF];
}

// The length of the UTF-8 sequence `lead` starts and the range its second byte must fall in (later bytes
// are 0x80-0xBF), following the table of well-formed sequences in the Unicode standard (section 3.9).
struct Lead {
  int continuation = -1;  // -1: the byte cannot start a character
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
};

Lead lead_of(unsigned char b) {
  if (b >= 0xC2 && b <= 0xDF) return {1};
  if (b == 0xE0) return {2, 0xA0, 0xBF};
  if ((b >= 0xE1 && b <= 0xEC) || b == 0xEE || b == 0xEF) return {2};
  if (b == 0xED) return {2, 0x80, 0x9F};  // no surrogates
  if (b == 0xF0) return {3, 0x90, 0xBF};
  if (b >= 0xF1 && b <= 0xF3) return {3};
  if (b == 0xF4) return {3, 0x80, 0x8F};  // nothing above U+10FFFF
  return {};
}

// How many bytes from `i` form a well-formed character (> 0), or minus the length of the maximal
// ill-formed subpart there (< 0); `why` says what is wrong in the second case.
int scan(const unsigned char* s, std::size_t n, std::size_t i, std::string* why) {
  const unsigned char b = s[i];
  if (b < 0x80) return 1;
  const Lead lead = lead_of(b);
  if (lead.continuation < 0) {
    if (why) {
      *why = (b & 0xC0) == 0x80 ? "invalid UTF-8: continuation byte " + hex_byte(b) + " without a lead byte"
                                : "invalid UTF-8: byte " + hex_byte(b) + " cannot start a character";
    }
    return -1;
  }
  for (int k = 1; k <= lead.continuation; ++k) {
    if (i + k >= n) {
      if (why)
        *why = "invalid UTF-8: the character starting with " + hex_byte(b) + " is cut off by the end of the text";
      return -k;
    }
    const unsigned char c = s[i + k];
    const unsigned char lo = k == 1 ? lead.lo : 0x80;
    const unsigned char hi = k == 1 ? lead.hi : 0xBF;
    if (c < lo || c > hi) {
      if (why)
        *why = "invalid UTF-8: byte " + hex_byte(c) + " cannot continue the character starting with " + hex_byte(b);
      return -k;
    }
  }
  return lead.continuation + 1;
}

utf8proc_category_t category(char32_t c) { return utf8proc_category(static_cast<utf8proc_int32_t>(c)); }

std::size_t previous_start(std::string_view text, std::size_t i) {
  while (i > 0) {
    --i;
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) break;
  }
  return i;
}

bool is_word_character(char32_t c) { return c == U'_' || is_letter(c) || is_number(c); }

}  // namespace

std::optional<Error> check_utf8(std::string_view text, const std::string& what) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    if (s[i] < 0x80) {
      ++i;
      continue;
    }
    std::string why;
    const int len = scan(s, n, i, &why);
    if (len < 0) return Error{what, static_cast<std::int64_t>(i), -1, std::move(why), ErrorKind::Encoding};
    i += static_cast<std::size_t>(len);
  }
  return std::nullopt;
}

char32_t next_code_point(std::string_view text, std::size_t& i) {
  const auto b = static_cast<unsigned char>(text[i]);
  if (b < 0x80) {
    ++i;
    return b;
  }
  int extra = b >= 0xF0 ? 3 : b >= 0xE0 ? 2 : 1;
  char32_t c = b & (0x3F >> extra);
  ++i;
  for (; extra > 0 && i < text.size(); --extra, ++i) c = (c << 6) | (static_cast<unsigned char>(text[i]) & 0x3F);
  return c;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

std::string repair_utf8(std::string_view bytes) {
  const auto* s = reinterpret_cast<const unsigned char*>(bytes.data());
  const std::size_t n = bytes.size();
  std::string out;
  out.reserve(n);
  std::size_t i = 0;
  while (i < n) {
    const int len = scan(s, n, i, nullptr);
    if (len > 0) {
      out.append(bytes.substr(i, static_cast<std::size_t>(len)));
      i += static_cast<std::size_t>(len);
    } else {
      out += "\xEF\xBF\xBD";
      i += static_cast<std::size_t>(-len);
    }
  }
  return out;
}

std::vector<CodePoint> code_points(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::vector<CodePoint> out;
  out.reserve(n);
  std::size_t i = 0;
  while (i < n) {
    const auto at = static_cast<std::int32_t>(i);
    const int len = scan(s, n, i, nullptr);
    if (len > 0) {
      const char32_t c = next_code_point(text, i);  // moves i past the `len` bytes
      out.push_back({c, {at, static_cast<std::int32_t>(i)}, true});
    } else {
      i += static_cast<std::size_t>(-len);
      out.push_back({U'\uFFFD', {at, static_cast<std::int32_t>(i)}, false});
    }
  }
  return out;
}

Span widen_to_code_points(std::string_view text, Span span) {
  const auto continuation = [&](std::int32_t i) {
    return (static_cast<unsigned char>(text[static_cast<std::size_t>(i)]) & 0xC0) == 0x80;
  };
  const auto n = static_cast<std::int32_t>(text.size());
  while (span.begin > 0 && span.begin < n && continuation(span.begin)) --span.begin;
  while (span.end > 0 && span.end < n && continuation(span.end)) ++span.end;
  return span;
}

bool is_letter(char32_t c) {
  if (c < 0x80) return (c | 0x20) >= U'a' && (c | 0x20) <= U'z';
  const auto k = category(c);
  return k >= UTF8PROC_CATEGORY_LU && k <= UTF8PROC_CATEGORY_LO;
}

bool is_number(char32_t c) {
  if (c < 0x80) return c >= U'0' && c <= U'9';
  const auto k = category(c);
  return k >= UTF8PROC_CATEGORY_ND && k <= UTF8PROC_CATEGORY_NO;
}

bool is_nonspacing_mark(char32_t c) { return c >= 0x300 && category(c) == UTF8PROC_CATEGORY_MN; }

bool is_punctuation_category(char32_t c) {
  const auto k = category(c);
  return k >= UTF8PROC_CATEGORY_PC && k <= UTF8PROC_CATEGORY_PO;
}

bool is_other_category(char32_t c) {
  const auto k = category(c);
  return k == UTF8PROC_CATEGORY_CN || (k >= UTF8PROC_CATEGORY_CC && k <= UTF8PROC_CATEGORY_CO);
}

bool is_space_separator(char32_t c) { return category(c) == UTF8PROC_CATEGORY_ZS; }

bool is_white_space(char32_t c) {
  if (c < 0x80) return c == U' ' || (c >= 0x09 && c <= 0x0D);
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

bool is_bert_whitespace(char32_t c) {
  if (c == U' ' || c == U'\t' || c == U'\n' || c == U'\r') return true;
  if (c < 0x80) return false;
  return is_space_separator(c);
}

bool is_bert_control(char32_t c) {
  if (c == U'\t' || c == U'\n' || c == U'\r') return false;
  if (c < 0x80) return c < 0x20 || c == 0x7F;
  return is_other_category(c);
}

bool is_bert_punctuation(char32_t c) {
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126)) return true;
  if (c < 0x80) return false;
  return is_punctuation_category(c);
}

bool is_cjk_ideograph(char32_t c) {
  // The CJK Unified Ideographs blocks and extensions A-E plus the compatibility ideographs, as BERT's
  // _is_chinese_char lists them (Hangul, kana and CJK punctuation are not in it).
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

int lower_case(char32_t c, std::array<char32_t, 2>& out) {
  if (c < 0x80) {
    out[0] = (c >= U'A' && c <= U'Z') ? c + 32 : c;
    return 1;
  }
  if (c == 0x130) {  // LATIN CAPITAL LETTER I WITH DOT ABOVE: the one unconditional multi-character lowering
    out[0] = U'i';
    out[1] = 0x307;
    return 2;
  }
  out[0] = static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c)));
  return 1;
}

int canonical_decomposition(char32_t c, std::array<char32_t, 8>& out) {
  if (c < 0xC0) {
    out[0] = c;
    return 1;
  }
  std::array<utf8proc_int32_t, 8> buffer{};
  int boundclass = 0;
  const utf8proc_ssize_t n =
      utf8proc_decompose_char(static_cast<utf8proc_int32_t>(c), buffer.data(),
                              static_cast<utf8proc_ssize_t>(buffer.size()), UTF8PROC_DECOMPOSE, &boundclass);
  if (n <= 0 || n > static_cast<utf8proc_ssize_t>(buffer.size())) {
    out[0] = c;
    return 1;
  }
  for (utf8proc_ssize_t k = 0; k < n; ++k)
    out[static_cast<std::size_t>(k)] = static_cast<char32_t>(buffer[static_cast<std::size_t>(k)]);
  return static_cast<int>(n);
}

// ---------------------------------------------------------------------------------------------------------

AddedTokenMatcher::AddedTokenMatcher(std::vector<AddedToken> tokens) {
  std::erase_if(tokens, [](const AddedToken& t) { return t.content.empty(); });
  tokens_ = std::move(tokens);
  by_length_.resize(tokens_.size());
  for (std::size_t i = 0; i < tokens_.size(); ++i) {
    by_length_[i] = static_cast<int>(i);
    first_byte_[static_cast<unsigned char>(tokens_[i].content[0])] = true;
  }
  std::stable_sort(by_length_.begin(), by_length_.end(), [&](int a, int b) {
    return tokens_[static_cast<std::size_t>(a)].content.size() > tokens_[static_cast<std::size_t>(b)].content.size();
  });
}

void AddedTokenMatcher::split(std::string_view text, std::vector<Segment>& out) const {
  const std::size_t n = text.size();
  std::size_t last = 0;  // start of the text not yet in a segment
  std::size_t pos = 0;
  const auto push_text = [&](std::size_t begin, std::size_t end) {
    if (end > begin) out.push_back({static_cast<std::int32_t>(begin), static_cast<std::int32_t>(end), -1});
  };
  while (pos < n) {
    if (tokens_.empty() || !first_byte_[static_cast<unsigned char>(text[pos])]) {
      ++pos;
      continue;
    }
    int found = -1;
    for (const int index : by_length_) {
      const AddedToken& token = tokens_[static_cast<std::size_t>(index)];
      if (text.compare(pos, token.content.size(), token.content) != 0) continue;
      if (token.single_word) {
        std::size_t before = previous_start(text, pos);
        const bool word_before = pos > 0 && is_word_character(next_code_point(text, before));
        std::size_t after = pos + token.content.size();
        const bool word_after = after < n && is_word_character(next_code_point(text, after));
        if (word_before || word_after) continue;
      }
      found = index;
      break;
    }
    if (found < 0) {
      ++pos;
      continue;
    }
    const AddedToken& token = tokens_[static_cast<std::size_t>(found)];
    std::size_t start = pos;
    std::size_t stop = pos + token.content.size();
    if (token.lstrip) {
      while (start > last) {
        std::size_t before = previous_start(text, start);
        std::size_t probe = before;
        if (!is_white_space(next_code_point(text, probe))) break;
        start = before;
      }
    }
    if (token.rstrip) {
      while (stop < n) {
        std::size_t probe = stop;
        if (!is_white_space(next_code_point(text, probe))) break;
        stop = probe;
      }
    }
    push_text(last, start);
    out.push_back({static_cast<std::int32_t>(start), static_cast<std::int32_t>(stop), found});
    last = pos = stop;
  }
  push_text(last, n);
}

// ---------------------------------------------------------------------------------------------------------

std::uint64_t VocabIndex::hash_of(std::string_view key) {
  // FNV-1a over the bytes, then a final mix so that the low bits (the slot) depend on all of them.
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : key) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h;
}

void VocabIndex::reserve(std::size_t count) {
  std::size_t capacity = 16;
  while (capacity < 2 * count) capacity *= 2;
  if (capacity <= slots_.size()) return;
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(capacity, Slot{});
  size_ = 0;
  for (const Slot& s : old) {
    if (s.id >= 0) insert(std::string_view(s.data, s.length), s.id);
  }
}

int VocabIndex::insert(std::string_view key, int id) {
  if (2 * (size_ + 1) > slots_.size()) reserve(std::max<std::size_t>(size_ + 1, slots_.size()));
  const std::uint64_t h = hash_of(key);
  const auto tag = static_cast<std::uint32_t>(h >> 32);
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = static_cast<std::size_t>(h) & mask;; i = (i + 1) & mask) {
    Slot& s = slots_[i];
    if (s.id < 0) {
      s = Slot{key.data(), static_cast<std::uint32_t>(key.size()), tag, id};
      ++size_;
      return -1;
    }
    if (s.hash == tag && std::string_view(s.data, s.length) == key) return s.id;
  }
}

int VocabIndex::find(std::string_view key) const {
  if (slots_.empty()) return -1;
  const std::uint64_t h = hash_of(key);
  const auto tag = static_cast<std::uint32_t>(h >> 32);
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = static_cast<std::size_t>(h) & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.id < 0) return -1;
    if (s.hash == tag && std::string_view(s.data, s.length) == key) return s.id;
  }
}

}  // namespace attn::text::unicode
