#include "attn/text/words.h"

#include <cctype>
#include <cstdint>
#include <cstdio>

namespace attn {

namespace {

// Decodes one code point at text[i]; returns its length in bytes, or 0 when the sequence is invalid
// (truncated, overlong, surrogate, beyond U+10FFFF).
int decode(std::string_view text, std::size_t i, char32_t& cp) {
  const auto b0 = static_cast<unsigned char>(text[i]);
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  int len = 0;
  char32_t min = 0;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + static_cast<std::size_t>(len) > text.size()) return 0;
  for (int k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(text[i + static_cast<std::size_t>(k)]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

enum class Kind { Space, Word, Single, Joiner, Modifier };

bool is_emoji(char32_t c) {
  return (c >= 0x1F000 && c <= 0x1FAFF) || (c >= 0x2600 && c <= 0x27BF) || (c >= 0x2B00 && c <= 0x2BFF) ||
         (c >= 0x1F1E6 && c <= 0x1F1FF);
}

bool is_cjk_or_kana(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2FA1F) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x3040 && c <= 0x30FF);
}

Kind classify(char32_t c) {
  if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || c == 0x85 || c == 0xA0 ||
      (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000 ||
      c == 0xFEFF || c < 0x20 || c == 0x7F)
    return Kind::Space;
  if (c < 0x80) return (std::isalnum(static_cast<int>(c)) || c == '_') ? Kind::Word : Kind::Single;
  if (c == 0x200D) return Kind::Joiner;
  // Combining marks, variation selectors and skin tones belong to the character before them.
  if ((c >= 0x0300 && c <= 0x036F) || (c >= 0xFE00 && c <= 0xFE0F) || (c >= 0x1F3FB && c <= 0x1F3FF) ||
      (c >= 0x1AB0 && c <= 0x1AFF) || (c >= 0x20D0 && c <= 0x20FF) || (c >= 0xE0020 && c <= 0xE007F))
    return Kind::Modifier;
  if (is_emoji(c) || is_cjk_or_kana(c)) return Kind::Single;
  // Latin-1 punctuation and symbols, general punctuation, CJK symbols, fullwidth punctuation.
  if ((c >= 0xA1 && c <= 0xBF && c != 0xAA && c != 0xB5 && c != 0xBA) || c == 0xD7 || c == 0xF7 ||
      (c >= 0x2010 && c <= 0x206F) || (c >= 0x3001 && c <= 0x303F) || (c >= 0xFF01 && c <= 0xFF0F) ||
      (c >= 0xFF1A && c <= 0xFF20) || (c >= 0xFF3B && c <= 0xFF40) || (c >= 0xFF5B && c <= 0xFF65))
    return Kind::Single;
  return Kind::Word;
}

}  // namespace

std::int64_t first_invalid_utf8(std::string_view text) {
  char32_t cp = 0;
  for (std::size_t i = 0; i < text.size();) {
    const int len = decode(text, i, cp);
    if (len == 0) return static_cast<std::int64_t>(i);
    i += static_cast<std::size_t>(len);
  }
  return -1;
}

Result<std::vector<WordToken>> split_words(std::string_view text, std::string_view what) {
  if (const auto bad = first_invalid_utf8(text); bad >= 0) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(text[static_cast<std::size_t>(bad)]));
    return fail(ErrorKind::Encoding, "invalid UTF-8 (byte " + std::string(hex) + " does not start a valid sequence)",
                std::string(what), bad);
  }
  std::vector<WordToken> out;
  bool in_word = false;       // the last token is a word still open to more word characters
  bool after_joiner = false;  // a ZWJ asks for the next character to join the last token
  auto open = [&](std::size_t b, std::size_t e) {
    out.push_back({std::string(text.substr(b, e - b)), {static_cast<std::int32_t>(b), static_cast<std::int32_t>(e)}});
  };
  auto extend = [&](std::size_t e) {
    WordToken& t = out.back();
    t.span.end = static_cast<std::int32_t>(e);
    t.text =
        std::string(text.substr(static_cast<std::size_t>(t.span.begin), e - static_cast<std::size_t>(t.span.begin)));
  };
  char32_t cp = 0;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t len = static_cast<std::size_t>(decode(text, i, cp));
    const std::size_t end = i + len;
    const Kind kind = classify(cp);
    if ((kind == Kind::Modifier || kind == Kind::Joiner || after_joiner) && !out.empty() &&
        static_cast<std::size_t>(out.back().span.end) == i && kind != Kind::Space) {
      extend(end);
      after_joiner = kind == Kind::Joiner;
    } else if (kind == Kind::Space) {
      in_word = false;
      after_joiner = false;
    } else if (kind == Kind::Word) {
      if (in_word && static_cast<std::size_t>(out.back().span.end) == i) {
        extend(end);
      } else {
        open(i, end);
      }
      in_word = true;
      after_joiner = false;
    } else {  // Single or a stray modifier/joiner with nothing before it
      // An apostrophe between letters stays inside the word ("don't").
      const bool apostrophe =
          cp == '\'' && in_word && end < text.size() && std::isalpha(static_cast<unsigned char>(text[end]));
      if (apostrophe) {
        extend(end);
      } else {
        open(i, end);
        in_word = false;
      }
      after_joiner = false;
    }
    i = end;
  }
  return out;
}

std::vector<std::vector<WordToken>> split_sentences(const std::vector<WordToken>& words, std::string_view text) {
  std::vector<std::vector<WordToken>> out;
  bool start_new = true;
  std::size_t prev_end = 0;
  for (const WordToken& w : words) {
    const std::size_t b = static_cast<std::size_t>(w.span.begin);
    if (!start_new && b > prev_end && text.substr(prev_end, b - prev_end).find('\n') != std::string_view::npos)
      start_new = true;
    if (start_new) {
      out.emplace_back();
      start_new = false;
    }
    out.back().push_back(w);
    prev_end = static_cast<std::size_t>(w.span.end);
    const std::string& t = w.text;
    if (t == "." || t == "!" || t == "?" || t == "\xE3\x80\x82" /* 。 */ || t == "\xEF\xBC\x81" /* ！ */ ||
        t == "\xEF\xBC\x9F" /* ？ */ || t == "\xE2\x80\xA6" /* … */)
      start_new = true;
  }
  return out;
}

}  // namespace attn
