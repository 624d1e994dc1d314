// tokenizer.json normalizers: the Unicode normalization forms (utf8proc's decompositions, the canonical
// ordering and composition done here so that every character keeps its input bytes, as the library's
// alignments do: a composed character takes its starter's bytes), Lowercase, StripAccents, Strip, Replace,
// Prepend, BertNormalizer and Sequence. Each stops before its output passes the text's OutputBudget.
#include "pipeline.h"

#include <nlohmann/json.hpp>
#include <utf8proc.h>

#include <algorithm>
#include <array>

namespace attn::text::pipeline {

namespace {

struct Char {
  char32_t c;
  Span from;
};

std::vector<Char> chars_of(const Piece& p) {
  std::vector<Char> out;
  out.reserve(p.text.size());
  for (std::size_t i = 0; i < p.text.size();) {
    const std::size_t at = i;
    const char32_t c = unicode::next_code_point(p.text, i);
    out.push_back({c, p.source(at, i)});
  }
  return out;
}

Piece piece_from(const std::vector<Char>& chars) {
  Piece p;
  for (const Char& c : chars) p.append(c.c, c.from);
  return p;
}

int combining_class(char32_t c) { return utf8proc_get_property(static_cast<utf8proc_int32_t>(c))->combining_class; }

bool is_mark(char32_t c) {
  const auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return cat == UTF8PROC_CATEGORY_MN || cat == UTF8PROC_CATEGORY_MC || cat == UTF8PROC_CATEGORY_ME;
}

std::int64_t utf8_length(char32_t c) { return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4; }

// Full decomposition of every character, then the canonical ordering of each run of non-starters. Stops once
// the decomposition passes `limit` bytes, setting `reached` to where it stopped.
std::vector<Char> decompose(const Piece& p, bool compat, std::int64_t limit, std::int64_t& reached) {
  std::vector<Char> out;
  std::int64_t bytes = 0;
  std::array<utf8proc_int32_t, 32> buffer{};
  const auto options = static_cast<utf8proc_option_t>(UTF8PROC_DECOMPOSE | (compat ? UTF8PROC_COMPAT : 0));
  for (const Char& ch : chars_of(p)) {
    int boundclass = UTF8PROC_BOUNDCLASS_START;
    const auto n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(ch.c), buffer.data(),
                                           static_cast<utf8proc_ssize_t>(buffer.size()), options, &boundclass);
    if (n <= 0 || n > static_cast<utf8proc_ssize_t>(buffer.size())) {
      out.push_back(ch);  // no decomposition longer than 18 exists; kept as it is should one ever appear
      bytes += utf8_length(ch.c);
    } else {
      for (utf8proc_ssize_t k = 0; k < n; ++k) {
        out.push_back({static_cast<char32_t>(buffer[static_cast<std::size_t>(k)]), ch.from});
        bytes += utf8_length(out.back().c);
      }
    }
    if (bytes > limit) {
      reached = bytes;
      return {};
    }
  }
  for (std::size_t i = 0; i < out.size();) {
    if (combining_class(out[i].c) == 0) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < out.size() && combining_class(out[j].c) != 0) ++j;
    std::stable_sort(out.begin() + static_cast<std::ptrdiff_t>(i), out.begin() + static_cast<std::ptrdiff_t>(j),
                     [](const Char& a, const Char& b) { return combining_class(a.c) < combining_class(b.c); });
    i = j;
  }
  return out;
}

// The primary composite of a starter and a following character, if there is one (Hangul included).
std::optional<char32_t> compose_pair(char32_t a, char32_t b) {
  std::array<utf8proc_int32_t, 2> pair{static_cast<utf8proc_int32_t>(a), static_cast<utf8proc_int32_t>(b)};
  const auto n = utf8proc_normalize_utf32(pair.data(), 2, static_cast<utf8proc_option_t>(UTF8PROC_COMPOSE));
  if (n == 1) return static_cast<char32_t>(pair[0]);
  return std::nullopt;
}

// The canonical composition algorithm (Unicode 15, section 3.11, D117).
std::vector<Char> compose(std::vector<Char> in) {
  std::vector<Char> out;
  out.reserve(in.size());
  std::ptrdiff_t starter = -1;
  int last_class = -1;  // of the last character kept after the starter; -1: none yet
  for (const Char& ch : in) {
    const int cls = combining_class(ch.c);
    if (starter >= 0 && (last_class == -1 || (last_class != 0 && last_class < cls))) {
      if (const auto composed = compose_pair(out[static_cast<std::size_t>(starter)].c, ch.c)) {
        out[static_cast<std::size_t>(starter)].c = *composed;
        continue;
      }
    }
    if (cls == 0) {
      starter = static_cast<std::ptrdiff_t>(out.size());
      last_class = -1;
    } else {
      last_class = cls;
    }
    out.push_back(ch);
  }
  return out;
}

// NFC, NFD, NFKC or NFKD of `p`: -1, or the bytes the decomposition reached when it passed `limit`.
std::int64_t unicode_form(Piece& p, bool compose_too, bool compat, std::int64_t limit);

class UnicodeForm final : public Normalizer {
 public:
  UnicodeForm(bool compose, bool compat) : compose_(compose), compat_(compat) {}
  Result<void> normalize(Piece& p, const OutputBudget& budget) const override {
    if (const std::int64_t reached = unicode_form(p, compose_, compat_, budget.limit); reached >= 0) {
      return over_budget(budget, reached, true);
    }
    return {};
  }

 private:
  bool compose_;
  bool compat_;
};

bool is_normalized(const std::string& text, bool compose_too, bool compat) {
  bool ascii = true;
  for (const char c : text) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  if (ascii) return true;
  auto options = static_cast<int>(UTF8PROC_STABLE) | (compose_too ? UTF8PROC_COMPOSE : UTF8PROC_DECOMPOSE);
  if (compat) options |= UTF8PROC_COMPAT;
  utf8proc_uint8_t* result = nullptr;
  const auto n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()), static_cast<utf8proc_ssize_t>(text.size()),
                   &result, static_cast<utf8proc_option_t>(options));
  const bool same = n >= 0 && static_cast<std::size_t>(n) == text.size() &&
                    std::equal(text.begin(), text.end(), reinterpret_cast<const char*>(result));
  std::free(result);
  return same;
}

std::int64_t unicode_form(Piece& p, bool compose_too, bool compat, std::int64_t limit) {
  if (is_normalized(p.text, compose_too, compat)) return -1;
  std::int64_t reached = -1;
  std::vector<Char> chars = decompose(p, compat, limit, reached);
  if (reached >= 0) return reached;
  if (compose_too) chars = compose(std::move(chars));
  p = piece_from(chars);
  return -1;
}

std::int64_t lower_case_piece(Piece& p, std::int64_t limit) {
  return map_code_points(
      p,
      [](char32_t c, std::vector<char32_t>& out) {
        std::array<char32_t, 2> lower{};
        const int n = unicode::lower_case(c, lower);
        out.insert(out.end(), lower.begin(), lower.begin() + n);
      },
      limit);
}

class Lowercase final : public Normalizer {
 public:
  Result<void> normalize(Piece& p, const OutputBudget& budget) const override {
    if (const std::int64_t reached = lower_case_piece(p, budget.limit); reached >= 0) {
      return over_budget(budget, reached, true);
    }
    return {};
  }
};

std::int64_t strip_marks(Piece& p, std::int64_t limit) {
  return map_code_points(
      p,
      [](char32_t c, std::vector<char32_t>& out) {
        if (!is_mark(c)) out.push_back(c);
      },
      limit);
}

class StripAccents final : public Normalizer {
 public:
  Result<void> normalize(Piece& p, const OutputBudget& budget) const override {
    if (const std::int64_t reached = strip_marks(p, budget.limit); reached >= 0) {
      return over_budget(budget, reached, true);
    }
    return {};
  }
};

class Strip final : public Normalizer {
 public:
  Strip(bool left, bool right) : left_(left), right_(right) {}
  // Only ever shorter.
  Result<void> normalize(Piece& p, const OutputBudget&) const override {
    std::vector<Char> chars = chars_of(p);
    std::size_t begin = 0, end = chars.size();
    if (left_) {
      while (begin < end && unicode::is_white_space(chars[begin].c)) ++begin;
    }
    if (right_) {
      while (end > begin && unicode::is_white_space(chars[end - 1].c)) --end;
    }
    if (begin == 0 && end == chars.size()) return {};
    p = piece_from(std::vector<Char>(chars.begin() + static_cast<std::ptrdiff_t>(begin),
                                     chars.begin() + static_cast<std::ptrdiff_t>(end)));
    return {};
  }

 private:
  bool left_, right_;
};

}  // namespace

// Shared with the Replace decoder's sibling in pre-tokenizers: each match becomes `content`, whose characters
// take the bytes of the match's last byte (the library's inserted characters share their predecessor's).
Result<std::int64_t> replace_matches(Piece& p, const Regex& pattern, std::string_view content, std::int64_t limit) {
  std::vector<std::pair<std::size_t, std::size_t>> matches;
  if (auto error = pattern.find_all(p.text, matches)) return std::unexpected(std::move(*error));
  if (matches.empty()) return -1;
  // The size first: a chain of Replace steps, each multiplying the text, stops here before it allocates.
  std::int64_t size = static_cast<std::int64_t>(p.text.size());
  std::size_t counted = 0;
  for (const auto& [begin, end] : matches) {
    if (begin < counted) continue;
    size += static_cast<std::int64_t>(content.size()) - static_cast<std::int64_t>(end - begin);
    counted = end;
  }
  if (size > limit) return size;
  Piece out;
  out.text.reserve(static_cast<std::size_t>(size));
  out.from.reserve(static_cast<std::size_t>(size));
  std::size_t at = 0;
  for (const auto& [begin, end] : matches) {
    if (begin < at) continue;
    out.text.append(p.text, at, begin - at);
    out.from.insert(out.from.end(), p.from.begin() + static_cast<std::ptrdiff_t>(at),
                    p.from.begin() + static_cast<std::ptrdiff_t>(begin));
    const Span source = end > 0 ? p.from[end - 1] : Span{0, 0};
    out.append(content, source);
    at = end;
  }
  out.text.append(p.text, at);
  out.from.insert(out.from.end(), p.from.begin() + static_cast<std::ptrdiff_t>(at), p.from.end());
  p = std::move(out);
  return -1;
}

namespace {

class Replace final : public Normalizer {
 public:
  Replace(std::shared_ptr<const Regex> pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  Result<void> normalize(Piece& p, const OutputBudget& budget) const override {
    std::int64_t size = -1;
    ATTN_ASSIGN(size, replace_matches(p, *pattern_, content_, budget.limit));
    if (size >= 0) return over_budget(budget, size, false);
    return {};
  }

 private:
  std::shared_ptr<const Regex> pattern_;
  std::string content_;
};

class Prepend final : public Normalizer {
 public:
  explicit Prepend(std::string prefix) : prefix_(std::move(prefix)) {}
  Result<void> normalize(Piece& p, const OutputBudget& budget) const override {
    if (p.text.empty()) return {};
    const auto size = static_cast<std::int64_t>(prefix_.size() + p.text.size());
    if (size > budget.limit) return over_budget(budget, size, false);
    Piece out;
    out.append(prefix_, p.from.front());  // the prefix takes the first character's bytes
    out.text += p.text;
    out.from.insert(out.from.end(), p.from.begin(), p.from.end());
    p = std::move(out);
    return {};
  }

 private:
  std::string prefix_;
};

class BertNormalizer final : public Normalizer {
 public:
  BertNormalizer(bool clean, bool chinese, bool strip, bool lower)
      : clean_(clean), chinese_(chinese), strip_(strip), lower_(lower) {}
  Result<void> normalize(Piece& p, const OutputBudget& budget) const override {
    std::int64_t reached = map_code_points(
        p,
        [&](char32_t c, std::vector<char32_t>& out) {
          if (clean_) {
            if (c == 0 || c == 0xFFFD || unicode::is_bert_control(c)) return;
            if (unicode::is_bert_whitespace(c)) c = U' ';
          }
          if (chinese_ && unicode::is_cjk_ideograph(c)) {
            out.insert(out.end(), {U' ', c, U' '});
            return;
          }
          out.push_back(c);
        },
        budget.limit);
    if (reached < 0 && strip_) reached = unicode_form(p, false, false, budget.limit);
    if (reached < 0 && strip_) reached = strip_marks(p, budget.limit);
    if (reached < 0 && lower_) reached = lower_case_piece(p, budget.limit);
    if (reached >= 0) return over_budget(budget, reached, true);
    return {};
  }

 private:
  bool clean_, chinese_, strip_, lower_;
};

class SequenceNormalizer final : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> parts) : parts_(std::move(parts)) {}
  Result<void> normalize(Piece& p, const OutputBudget& budget) const override {
    for (const auto& part : parts_) ATTN_TRY(part->normalize(p, budget));
    return {};
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> parts_;
};

}  // namespace

namespace {

Result<std::unique_ptr<Normalizer>> make_normalizer_of_type(const Json& j, const std::string& where) {
  if (!j.is_object()) return bad_field(where, "must be an object or null");
  const std::string type = type_of(j);
  if (type == "NFC") return std::make_unique<UnicodeForm>(true, false);
  if (type == "NFD") return std::make_unique<UnicodeForm>(false, false);
  if (type == "NFKC") return std::make_unique<UnicodeForm>(true, true);
  if (type == "NFKD") return std::make_unique<UnicodeForm>(false, true);
  if (type == "Lowercase") return std::make_unique<Lowercase>();
  if (type == "StripAccents") return std::make_unique<StripAccents>();
  if (type == "Strip") {
    bool left = false;
    ATTN_ASSIGN(left, bool_field(j, "strip_left", where, true));
    bool right = false;
    ATTN_ASSIGN(right, bool_field(j, "strip_right", where, true));
    return std::make_unique<Strip>(left, right);
  }
  if (type == "Replace") {
    auto pattern = pattern_field(j, "pattern", where);
    if (!pattern) return std::unexpected(std::move(pattern.error()));
    auto content = string_field(j, "content", where, "");
    if (!content) return std::unexpected(std::move(content.error()));
    return std::make_unique<Replace>(std::move(*pattern), std::move(*content));
  }
  if (type == "Prepend") {
    auto prefix = string_field(j, "prepend", where, "");
    if (!prefix) return std::unexpected(std::move(prefix.error()));
    return std::make_unique<Prepend>(std::move(*prefix));
  }
  if (type == "BertNormalizer") {
    bool clean = false;
    ATTN_ASSIGN(clean, bool_field(j, "clean_text", where, true));
    bool chinese = false;
    ATTN_ASSIGN(chinese, bool_field(j, "handle_chinese_chars", where, true));
    bool lower = false;
    ATTN_ASSIGN(lower, bool_field(j, "lowercase", where, true));
    bool strip = false;
    ATTN_ASSIGN(strip, bool_field(j, "strip_accents", where, lower));  // null: follows lowercase
    return std::make_unique<BertNormalizer>(clean, chinese, strip, lower);
  }
  if (type == "Sequence") {
    ATTN_TRY(check_chain_length(j, "normalizers", where));
    const auto list = j.find("normalizers");
    if (list == j.end() || !list->is_array()) return bad_field(field(where, "normalizers"), "must be an array");
    std::vector<std::unique_ptr<Normalizer>> parts;
    for (std::size_t k = 0; k < list->size(); ++k) {
      auto part = make_normalizer((*list)[k], where + ".normalizers[" + std::to_string(k) + "]");
      if (!part) return std::unexpected(std::move(part.error()));
      parts.push_back(std::move(*part));
    }
    return std::make_unique<SequenceNormalizer>(std::move(parts));
  }
  return unsupported_type(where, type);
}

}  // namespace

Result<std::unique_ptr<Normalizer>> make_normalizer(const Json& j, const std::string& where) {
  std::unique_ptr<Normalizer> made;
  ATTN_ASSIGN(made, make_normalizer_of_type(j, where));
  made->where = where;
  return made;
}

}  // namespace attn::text::pipeline
