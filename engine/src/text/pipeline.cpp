// What every tokenizer.json component shares: text that remembers its input bytes, PCRE2 patterns compiled
// once, the byte-level alphabet, and the checked reading of a component's JSON fields.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "pipeline.h"

#include <nlohmann/json.hpp>
#include <pcre2.h>

#include <algorithm>
#include <cctype>
#include <array>

namespace attn::text::pipeline {

OutputBudget OutputBudget::for_input(std::int64_t input, std::int64_t spent) {
  const std::int64_t left = std::max<std::int64_t>(0, kMaxOutputBytes - spent);
  const std::int64_t own =
      input > (kMaxOutputBytes - kOutputExtra) / kOutputFactor ? kMaxOutputBytes : kOutputFactor * input + kOutputExtra;
  return {input, std::min(own, left)};
}

std::string OutputBudget::over(std::int64_t reached, bool at_least) const {
  return std::string(": its output ") + (at_least ? "passes " : "would be ") + with_commas(reached) +
         " bytes, over the budget of " + with_commas(limit) + " bytes (" + std::to_string(kOutputFactor) +
         " times its " + with_commas(input) + " input bytes plus " + with_commas(kOutputExtra) + ", at most " +
         with_commas(kMaxOutputBytes) + " in all)";
}

void Piece::append(std::string_view bytes, Span source) {
  text.append(bytes);
  from.insert(from.end(), bytes.size(), source);
}

void Piece::append(char32_t c, Span source) {
  const std::size_t before = text.size();
  unicode::append_utf8(text, c);
  from.insert(from.end(), text.size() - before, source);
}

Span Piece::source(std::size_t begin, std::size_t end) const {
  if (begin >= end || end > from.size()) return {0, 0};
  return {from[begin].begin, from[end - 1].end};
}

Piece Piece::sub(std::size_t begin, std::size_t end) const {
  Piece p;
  p.text.assign(text, begin, end - begin);
  p.from.assign(from.begin() + static_cast<std::ptrdiff_t>(begin), from.begin() + static_cast<std::ptrdiff_t>(end));
  return p;
}

Piece piece_of(std::string_view text, std::int32_t base) {
  Piece p;
  p.text.assign(text);
  p.from.resize(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t at = i;
    unicode::next_code_point(text, i);
    const Span span{base + static_cast<std::int32_t>(at), base + static_cast<std::int32_t>(i)};
    std::fill(p.from.begin() + static_cast<std::ptrdiff_t>(at), p.from.begin() + static_cast<std::ptrdiff_t>(i), span);
  }
  return p;
}

int byte_fallback_value(std::string_view token) {
  if (token.size() != 6 || !token.starts_with("<0x") || token[5] != '>') return -1;
  int value = 0;
  for (const char c : token.substr(3, 2)) {
    value *= 16;
    if (c >= '0' && c <= '9') {
      value += c - '0';
    } else if (c >= 'A' && c <= 'F') {
      value += c - 'A' + 10;
    } else {
      return -1;  // the library writes upper case only ("<0x0A>")
    }
  }
  return value;
}

// ---------------------------------------------------------------------------------------------------------
// PCRE2

namespace {

// The byte of the first repeat without a small bound (*, +, {n,}, {n,m} with m over 1,000) inside a lookaround,
// or npos. Searched from every position of a long text, such a lookahead rescans the rest of the text from each
// one: PCRE2 counts a greedy scan as one step, so no match limit stops the 10^12 steps of 1 MB.
std::size_t unbounded_in_lookaround(std::string_view p) {
  constexpr std::size_t kNone = std::string_view::npos;
  constexpr std::string_view kLooks[] = {"(?=",
                                         "(?!",
                                         "(?<=",
                                         "(?<!",
                                         "(*pla:",
                                         "(*nla:",
                                         "(*plb:",
                                         "(*nlb:",
                                         "(*positive_look",
                                         "(*negative_look",
                                         "(*napla:",
                                         "(*naplb:"};
  std::vector<bool> groups;  // per open group: inside a lookaround
  bool quantified = false;   // the last item was a quantifier (a '+' after it makes it possessive)
  for (std::size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    const bool inside = !groups.empty() && groups.back();
    const bool was_quantified = quantified;
    quantified = false;
    if (c == '\\') {
      if (i + 1 < p.size() && p[i + 1] == 'Q') {
        const std::size_t end = p.find("\\E", i + 2);
        if (end == kNone) return kNone;
        i = end + 1;
      } else {
        ++i;
      }
    } else if (c == '[') {  // a class: up to its closing ']' (one right after '[' or '[^' is literal)
      std::size_t k = i + 1;
      if (k < p.size() && p[k] == '^') ++k;
      if (k < p.size() && p[k] == ']') ++k;
      for (; k < p.size() && p[k] != ']'; ++k) {
        if (p[k] == '\\') ++k;
      }
      i = k;
    } else if (c == '(') {
      const std::string_view rest = p.substr(i);
      const bool look =
          std::any_of(std::begin(kLooks), std::end(kLooks), [&](std::string_view l) { return rest.starts_with(l); });
      groups.push_back(inside || look);
    } else if (c == ')') {
      if (!groups.empty()) groups.pop_back();
    } else if (c == '*' || (c == '+' && !was_quantified)) {
      if (inside) return i;
      quantified = true;
    } else if (c == '?' || c == '+') {
      quantified = c == '?';
    } else if (c == '{') {
      std::size_t k = i + 1, low_digits = 0;
      while (k < p.size() && std::isdigit(static_cast<unsigned char>(p[k]))) ++k, ++low_digits;
      if (k < p.size() && p[k] == ',') {
        std::size_t high = 0, high_digits = 0;
        for (++k; k < p.size() && std::isdigit(static_cast<unsigned char>(p[k])); ++k, ++high_digits) {
          high = std::min<std::size_t>(high * 10 + static_cast<std::size_t>(p[k] - '0'), 1'000'000);
        }
        if (k < p.size() && p[k] == '}' && low_digits > 0 && inside && (high_digits == 0 || high > 1000)) return i;
      }
      quantified = k < p.size() && p[k] == '}';
    }
  }
  return kNone;
}

}  // namespace

Result<std::shared_ptr<const Regex>> Regex::compile(std::string_view pattern, bool literal, std::string where) {
  if (!literal) {
    if (const std::size_t at = unbounded_in_lookaround(pattern); at != std::string_view::npos) {
      return fail(ErrorKind::Unsupported,
                  "the regex \"" + std::string(pattern) + "\" repeats without a bound of 1,000 inside a lookaround, " +
                      "at byte " + std::to_string(at) +
                      " of the pattern: searched from every position of a long text, it would rescan the rest of the "
                      "text from each one (10^12 steps for 1 MB)");
    }
  }
  int code = 0;
  PCRE2_SIZE offset = 0;
  const std::uint32_t options = PCRE2_UTF | (literal ? PCRE2_LITERAL : PCRE2_UCP);  // UCP is refused with LITERAL
  pcre2_code* compiled =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), options, &code, &offset, nullptr);
  if (!compiled) {
    std::array<PCRE2_UCHAR, 256> message{};
    pcre2_get_error_message(code, message.data(), message.size());
    return fail(ErrorKind::Malformed, "the regex \"" + std::string(pattern) + "\" is refused by PCRE2 at byte " +
                                          std::to_string(offset) +
                                          " of the pattern: " + reinterpret_cast<const char*>(message.data()));
  }
  std::uint32_t jit = 0;
  pcre2_config(PCRE2_CONFIG_JIT, &jit);
  if (jit) pcre2_jit_compile(compiled, PCRE2_JIT_COMPLETE);  // when it fails, the interpreter matches instead
  std::shared_ptr<Regex> regex(new Regex());
  regex->code_ = compiled;
  regex->pattern_ = std::string(pattern);
  regex->where_ = std::move(where);
  return std::shared_ptr<const Regex>(std::move(regex));
}

Regex::~Regex() { pcre2_code_free(static_cast<pcre2_code*>(code_)); }

std::int64_t Regex::min_length() const {
  std::uint32_t length = 0;
  if (pcre2_pattern_info(static_cast<const pcre2_code*>(code_), PCRE2_INFO_MINLENGTH, &length) != 0) return 0;
  return length;
}

namespace {
// The limits every search runs under; read-only once made, so shared by every thread.
pcre2_match_context* limited_context() {
  static pcre2_match_context* const context = [] {
    pcre2_match_context* made = pcre2_match_context_create(nullptr);
    pcre2_set_match_limit(made, Regex::kMatchLimit);
    pcre2_set_depth_limit(made, Regex::kDepthLimit);
    return made;
  }();
  return context;
}
}  // namespace

std::optional<Error> Regex::find_all(std::string_view text,
                                     std::vector<std::pair<std::size_t, std::size_t>>& out) const {
  out.clear();
  const auto* code = static_cast<const pcre2_code*>(code_);
  // One match block per thread and pattern size, reused across calls: no allocation per piece.
  struct MatchData {
    pcre2_match_data* data = nullptr;
    ~MatchData() { pcre2_match_data_free(data); }
  };
  thread_local MatchData scratch;
  if (!scratch.data) scratch.data = pcre2_match_data_create(64, nullptr);
  pcre2_match_data* data = scratch.data;
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  std::size_t start = 0;
  while (start <= text.size()) {
    // The text was checked as UTF-8 once, when encode() began.
    const int rc = pcre2_match(code, subject, text.size(), start, PCRE2_NO_UTF_CHECK, data, limited_context());
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      std::array<PCRE2_UCHAR, 256> message{};
      pcre2_get_error_message(rc, message.data(), message.size());
      std::string limit = "PCRE2's limits";
      if (rc == PCRE2_ERROR_MATCHLIMIT) limit = "its match limit of " + with_commas(kMatchLimit) + " steps";
      if (rc == PCRE2_ERROR_DEPTHLIMIT) limit = "its depth limit of " + with_commas(kDepthLimit) + " frames";
      if (rc == PCRE2_ERROR_JIT_STACKLIMIT) limit = "the compiled matcher's stack of 32 KiB";
      return Error{{},
                   -1,
                   -1,
                   where_ + ": the regex \"" + pattern_ + "\" passed " + limit + " searching from byte " +
                       with_commas(static_cast<long long>(start)) + " of a " +
                       with_commas(static_cast<long long>(text.size())) +
                       "-byte piece (PCRE2: " + reinterpret_cast<const char*>(message.data()) + ")",
                   ErrorKind::TooLarge};
    }
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data);
    const std::size_t begin = ovector[0], end = ovector[1];
    out.emplace_back(begin, end);
    if (end > begin) {
      start = end;
    } else {  // an empty match: step over one code point
      if (end >= text.size()) break;
      std::size_t next = end;
      unicode::next_code_point(text, next);
      start = next;
    }
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------------------
// The byte-level alphabet: the printable bytes stand for themselves, the other 68 become U+0100 onwards.

namespace {
struct ByteAlphabet {
  std::array<char32_t, 256> to_char{};
  std::array<int, 324> to_byte{};
};
const ByteAlphabet& alphabet() {
  static const ByteAlphabet a = [] {
    ByteAlphabet m;
    m.to_byte.fill(-1);
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      const char32_t c = printable ? static_cast<char32_t>(b) : next++;
      m.to_char[static_cast<std::size_t>(b)] = c;
      m.to_byte[static_cast<std::size_t>(c)] = b;
    }
    return m;
  }();
  return a;
}
}  // namespace

char32_t byte_to_char(unsigned char b) { return alphabet().to_char[b]; }
int char_to_byte(char32_t c) { return c < alphabet().to_byte.size() ? alphabet().to_byte[c] : -1; }

// ---------------------------------------------------------------------------------------------------------
// JSON fields

std::unexpected<Error> bad_field(const std::string& where, const std::string& what, ErrorKind kind) {
  return fail(kind, where + " " + what);
}

std::unexpected<Error> unsupported_type(const std::string& where, const std::string& type) {
  return fail(ErrorKind::Unsupported,
              where + " type " + (type.empty() ? std::string("(none)") : type) + " is not supported");
}

std::string type_of(const Json& j) {
  if (!j.is_object()) return {};
  const auto it = j.find("type");
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string field(const std::string& where, const char* key) { return where.empty() ? key : where + "." + key; }

Result<std::string> string_field(const Json& j, const char* key, const std::string& where, std::string fallback) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_string()) return bad_field(field(where, key), "must be a string");
  return it->get<std::string>();
}

Result<bool> bool_field(const Json& j, const char* key, const std::string& where, bool fallback) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) return bad_field(field(where, key), "must be true or false");
  return it->get<bool>();
}

Result<std::int64_t> int_field(const Json& j, const char* key, const std::string& where, std::int64_t fallback) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_number_integer()) return bad_field(field(where, key), "must be a whole number");
  return it->get<std::int64_t>();
}

namespace {
std::size_t chain_links(const Json& j, const char* list) {
  if (!j.is_object() || type_of(j) != "Sequence") return 1;
  const auto it = j.find(list);
  if (it == j.end() || !it->is_array()) return 1;
  std::size_t n = 0;
  for (const Json& part : *it) n += chain_links(part, list);
  return n;
}
}  // namespace

Result<void> check_chain_length(const Json& j, const char* list, const std::string& where) {
  const std::size_t n = chain_links(j, list);
  if (n <= kMaxChainLinks) return {};
  return bad_field(field(where, list),
                   "hold " + with_commas(static_cast<long long>(n)) +
                       " links with the Sequences inside, over the limit of " + std::to_string(kMaxChainLinks),
                   ErrorKind::TooLarge);
}

Result<std::shared_ptr<const Regex>> pattern_field(const Json& j, const char* key, const std::string& where) {
  const std::string at = field(where, key);
  const auto it = j.find(key);
  if (it == j.end() || !it->is_object() || it->size() != 1) {
    return bad_field(at, "must be {\"String\": ...} or {\"Regex\": ...}");
  }
  const std::string kind = it->begin().key();
  const Json& value = it->begin().value();
  if (!value.is_string()) return bad_field(at + "." + kind, "must be a string");
  if (kind != "String" && kind != "Regex") return bad_field(at, "must be {\"String\": ...} or {\"Regex\": ...}");
  auto regex = Regex::compile(value.get<std::string>(), kind == "String", at);
  if (!regex) {
    Error e = std::move(regex.error());
    e.reason = at + ": " + e.reason;
    return std::unexpected(std::move(e));
  }
  return regex;
}

}  // namespace attn::text::pipeline
