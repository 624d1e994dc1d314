// tokenizer.json pre-tokenizers: ByteLevel (GPT-2's pattern, then every byte spelled in the byte-level
// alphabet), Split (a PCRE2 pattern or a string, with each of the library's five behaviours and invert),
// Metaspace, Whitespace, WhitespaceSplit, Punctuation, Digits, BertPreTokenizer and Sequence. A split keeps the
// library's rules: matches and the text between them, merged as the behaviour says, empty pieces dropped.
#include "pipeline.h"

#include <nlohmann/json.hpp>

namespace attn::text::pipeline {

namespace {

enum class Behaviour { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

using Range = std::pair<std::size_t, std::size_t>;
struct Part {
  Range range;
  bool match;
};

// The matches of a pattern and the text between them, in order, covering [0, size).
std::vector<Part> parts_of(const std::vector<Range>& matches, std::size_t size, bool invert) {
  std::vector<Part> parts;
  std::size_t at = 0;
  for (const Range& m : matches) {
    if (m.first > at) parts.push_back({{at, m.first}, invert});
    parts.push_back({m, !invert});
    at = m.second;
  }
  if (at < size) parts.push_back({{at, size}, invert});
  return parts;
}

// The library's SplitDelimiterBehavior over the parts; the ranges kept, in order.
std::vector<Range> apply(std::vector<Part> parts, Behaviour behaviour) {
  std::vector<Range> out;
  switch (behaviour) {
    case Behaviour::Removed:
      for (const Part& p : parts) {
        if (!p.match) out.push_back(p.range);
      }
      break;
    case Behaviour::Isolated:
      for (const Part& p : parts) out.push_back(p.range);
      break;
    case Behaviour::MergedWithPrevious: {
      bool previous_match = false;
      for (const Part& p : parts) {
        if (p.match && !previous_match && !out.empty()) {
          out.back().second = p.range.second;
        } else {
          out.push_back(p.range);
        }
        previous_match = p.match;
      }
      break;
    }
    case Behaviour::MergedWithNext: {
      bool previous_match = false;
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
        if (it->match && !previous_match && !out.empty()) {
          out.back().first = it->range.first;
        } else {
          out.push_back(it->range);
        }
        previous_match = it->match;
      }
      std::reverse(out.begin(), out.end());
      break;
    }
    case Behaviour::Contiguous: {
      bool previous_match = false;
      for (const Part& p : parts) {
        if (p.match == previous_match && !out.empty()) {
          out.back().second = p.range.second;
        } else {
          out.push_back(p.range);
        }
        previous_match = p.match;
      }
      break;
    }
  }
  return out;
}

void cut(const Piece& piece, const std::vector<Range>& ranges, std::vector<Piece>& out) {
  for (const auto& [begin, end] : ranges) {
    if (end > begin) out.push_back(piece.sub(begin, end));
  }
}

// Each character for which `is_match` holds is a match of its own (the library's Fn(char) -> bool patterns).
template <class Pred>
std::vector<Range> char_matches(const std::string& text, Pred&& is_match) {
  std::vector<Range> matches;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t at = i;
    const char32_t c = unicode::next_code_point(text, i);
    if (is_match(c)) matches.emplace_back(at, i);
  }
  return matches;
}

template <class Pred>
Result<void> split_chars(std::vector<Piece>& pieces, Behaviour behaviour, Pred&& is_match) {
  std::vector<Piece> out;
  for (const Piece& p : pieces) {
    cut(p, apply(parts_of(char_matches(p.text, is_match), p.text.size(), false), behaviour), out);
  }
  pieces = std::move(out);
  return {};
}

class Split final : public PreTokenizer {
 public:
  Split(std::shared_ptr<const Regex> pattern, Behaviour behaviour, bool invert)
      : pattern_(std::move(pattern)), behaviour_(behaviour), invert_(invert) {}
  Result<void> split(std::vector<Piece>& pieces) const override {
    std::vector<Piece> out;
    std::vector<Range> matches;
    for (const Piece& p : pieces) {
      if (auto error = pattern_->find_all(p.text, matches)) return std::unexpected(std::move(*error));
      cut(p, apply(parts_of(matches, p.text.size(), invert_), behaviour_), out);
    }
    pieces = std::move(out);
    return {};
  }

 private:
  std::shared_ptr<const Regex> pattern_;
  Behaviour behaviour_;
  bool invert_;
};

// GPT-2's pattern, as the library's ByteLevel pre-tokenizer writes it.
constexpr const char* kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

class ByteLevel final : public PreTokenizer {
 public:
  ByteLevel(bool prefix_space, std::shared_ptr<const Regex> pattern)
      : prefix_space_(prefix_space), pattern_(std::move(pattern)) {}
  Result<void> split(std::vector<Piece>& pieces) const override {
    std::vector<Piece> cut_pieces;
    std::vector<Range> matches;
    for (Piece& p : pieces) {
      if (prefix_space_ && !p.text.starts_with(' ') && !p.text.empty()) {
        Piece prefixed;
        prefixed.append(" ", p.from.front());
        prefixed.text += p.text;
        prefixed.from.insert(prefixed.from.end(), p.from.begin(), p.from.end());
        p = std::move(prefixed);
      }
      if (pattern_) {
        if (auto error = pattern_->find_all(p.text, matches)) return std::unexpected(std::move(*error));
        cut(p, apply(parts_of(matches, p.text.size(), false), Behaviour::Isolated), cut_pieces);
      } else if (!p.text.empty()) {
        cut_pieces.push_back(std::move(p));
      }
    }
    // Every byte becomes its character in the byte-level alphabet, keeping the input bytes of the character
    // it was part of.
    for (Piece& p : cut_pieces) {
      Piece spelled;
      spelled.text.reserve(p.text.size() * 2);
      spelled.from.reserve(p.text.size() * 2);
      for (std::size_t i = 0; i < p.text.size(); ++i) {
        spelled.append(byte_to_char(static_cast<unsigned char>(p.text[i])), p.from[i]);
      }
      p = std::move(spelled);
    }
    pieces = std::move(cut_pieces);
    return {};
  }

 private:
  bool prefix_space_;
  std::shared_ptr<const Regex> pattern_;
};

enum class PrependScheme { Always, First, Never };

class Metaspace final : public PreTokenizer {
 public:
  Metaspace(std::string replacement, PrependScheme scheme, bool split)
      : replacement_(std::move(replacement)), scheme_(scheme), split_(split) {}
  Result<void> split(std::vector<Piece>& pieces) const override {
    std::vector<Piece> out;
    for (Piece& p : pieces) {
      Piece replaced;
      for (std::size_t i = 0; i < p.text.size(); ++i) {
        if (p.text[i] == ' ') {
          replaced.append(replacement_, p.from[i]);
        } else {
          replaced.text += p.text[i];
          replaced.from.push_back(p.from[i]);
        }
      }
      const bool prepend = scheme_ == PrependScheme::Always || (scheme_ == PrependScheme::First && p.start() == 0);
      if (prepend && !replaced.text.empty() && !replaced.text.starts_with(replacement_)) {
        Piece prefixed;
        prefixed.append(replacement_, replaced.from.front());
        prefixed.text += replaced.text;
        prefixed.from.insert(prefixed.from.end(), replaced.from.begin(), replaced.from.end());
        replaced = std::move(prefixed);
      }
      if (!split_) {
        if (!replaced.text.empty()) out.push_back(std::move(replaced));
        continue;
      }
      std::vector<Range> matches;
      for (std::size_t at = replaced.text.find(replacement_); at != std::string::npos;
           at = replaced.text.find(replacement_, at + replacement_.size())) {
        matches.emplace_back(at, at + replacement_.size());
      }
      cut(replaced, apply(parts_of(matches, replaced.text.size(), false), Behaviour::MergedWithNext), out);
    }
    pieces = std::move(out);
    return {};
  }

 private:
  std::string replacement_;
  PrependScheme scheme_;
  bool split_;
};

class WhitespaceSplit final : public PreTokenizer {
 public:
  Result<void> split(std::vector<Piece>& pieces) const override {
    return split_chars(pieces, Behaviour::Removed, [](char32_t c) { return unicode::is_white_space(c); });
  }
};

class Punctuation final : public PreTokenizer {
 public:
  explicit Punctuation(Behaviour behaviour) : behaviour_(behaviour) {}
  Result<void> split(std::vector<Piece>& pieces) const override {
    return split_chars(pieces, behaviour_, [](char32_t c) { return unicode::is_bert_punctuation(c); });
  }

 private:
  Behaviour behaviour_;
};

class Digits final : public PreTokenizer {
 public:
  explicit Digits(bool individual) : individual_(individual) {}
  Result<void> split(std::vector<Piece>& pieces) const override {
    return split_chars(pieces, individual_ ? Behaviour::Isolated : Behaviour::Contiguous,
                       [](char32_t c) { return unicode::is_number(c); });
  }

 private:
  bool individual_;
};

class BertPreTokenizer final : public PreTokenizer {
 public:
  Result<void> split(std::vector<Piece>& pieces) const override {
    ATTN_TRY(WhitespaceSplit().split(pieces));
    return Punctuation(Behaviour::Isolated).split(pieces);
  }
};

class SequencePreTokenizer final : public PreTokenizer {
 public:
  explicit SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> parts) : parts_(std::move(parts)) {}
  Result<void> split(std::vector<Piece>& pieces) const override {
    for (const auto& part : parts_) ATTN_TRY(part->split(pieces));
    return {};
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> parts_;
};

Result<Behaviour> behaviour_field(const Json& j, const std::string& where, Behaviour fallback) {
  auto name = string_field(j, "behavior", where, "");
  if (!name) return std::unexpected(std::move(name.error()));
  if (name->empty()) return fallback;
  static const std::pair<const char*, Behaviour> kNames[] = {{"Removed", Behaviour::Removed},
                                                             {"Isolated", Behaviour::Isolated},
                                                             {"MergedWithPrevious", Behaviour::MergedWithPrevious},
                                                             {"MergedWithNext", Behaviour::MergedWithNext},
                                                             {"Contiguous", Behaviour::Contiguous}};
  for (const auto& [n, b] : kNames) {
    if (*name == n) return b;
  }
  return bad_field(field(where, "behavior"), *name + " is not a split behaviour", ErrorKind::Unsupported);
}

}  // namespace

Result<std::unique_ptr<PreTokenizer>> make_pre_tokenizer(const Json& j, const std::string& where) {
  if (!j.is_object()) return bad_field(where, "must be an object or null");
  const std::string type = type_of(j);
  if (type == "ByteLevel") {
    bool prefix = true, use_regex = true;
    ATTN_ASSIGN(prefix, bool_field(j, "add_prefix_space", where, true));
    ATTN_ASSIGN(use_regex, bool_field(j, "use_regex", where, true));
    std::shared_ptr<const Regex> pattern;
    if (use_regex) ATTN_ASSIGN(pattern, Regex::compile(kGpt2Pattern, false, where + " (GPT-2's pattern)"));
    return std::make_unique<ByteLevel>(prefix, std::move(pattern));
  }
  if (type == "Split") {
    auto pattern = pattern_field(j, "pattern", where);
    if (!pattern) return std::unexpected(std::move(pattern.error()));
    Behaviour behaviour = Behaviour::Isolated;
    ATTN_ASSIGN(behaviour, behaviour_field(j, where, Behaviour::Isolated));
    bool invert = false;
    ATTN_ASSIGN(invert, bool_field(j, "invert", where, false));
    return std::make_unique<Split>(std::move(*pattern), behaviour, invert);
  }
  if (type == "Metaspace") {
    std::string replacement;
    ATTN_ASSIGN(replacement, string_field(j, "replacement", where, "\xE2\x96\x81"));
    if (replacement.empty()) return bad_field(field(where, "replacement"), "must not be empty");
    if (static_cast<std::int64_t>(replacement.size()) > kOutputFactor) {
      return bad_field(field(where, "replacement"),
                       "is " + with_commas(static_cast<long long>(replacement.size())) + " bytes, over the limit of " +
                           std::to_string(kOutputFactor) + " (every space of the text becomes it)",
                       ErrorKind::TooLarge);
    }
    bool split = true;
    ATTN_ASSIGN(split, bool_field(j, "split", where, true));
    // Files from before prepend_scheme say add_prefix_space instead.
    bool legacy = true;
    ATTN_ASSIGN(legacy, bool_field(j, "add_prefix_space", where, true));
    std::string scheme_name;
    ATTN_ASSIGN(scheme_name, string_field(j, "prepend_scheme", where, legacy ? "always" : "never"));
    PrependScheme scheme = PrependScheme::Always;
    if (scheme_name == "first") {
      scheme = PrependScheme::First;
    } else if (scheme_name == "never") {
      scheme = PrependScheme::Never;
    } else if (scheme_name != "always") {
      return bad_field(field(where, "prepend_scheme"), "must be \"always\", \"first\" or \"never\"");
    }
    return std::make_unique<Metaspace>(std::move(replacement), scheme, split);
  }
  if (type == "Whitespace") {
    // The library's \w+|[^\w\s]+ with Oniguruma's \w (letters, marks, decimal digits, connector punctuation).
    std::shared_ptr<const Regex> pattern;
    ATTN_ASSIGN(pattern, Regex::compile(R"([\p{L}\p{M}\p{Nd}\p{Pc}]+|[^\p{L}\p{M}\p{Nd}\p{Pc}\s]+)", false,
                                        where + " (Whitespace)"));
    return std::make_unique<Split>(std::move(pattern), Behaviour::Removed, true);
  }
  if (type == "WhitespaceSplit") return std::make_unique<WhitespaceSplit>();
  if (type == "Punctuation") {
    Behaviour behaviour = Behaviour::Isolated;
    ATTN_ASSIGN(behaviour, behaviour_field(j, where, Behaviour::Isolated));
    return std::make_unique<Punctuation>(behaviour);
  }
  if (type == "Digits") {
    bool individual = false;
    ATTN_ASSIGN(individual, bool_field(j, "individual_digits", where, false));
    return std::make_unique<Digits>(individual);
  }
  if (type == "BertPreTokenizer") return std::make_unique<BertPreTokenizer>();
  if (type == "Sequence") {
    ATTN_TRY(check_chain_length(j, "pretokenizers", where));
    const auto list = j.find("pretokenizers");
    if (list == j.end() || !list->is_array()) return bad_field(field(where, "pretokenizers"), "must be an array");
    std::vector<std::unique_ptr<PreTokenizer>> parts;
    for (std::size_t k = 0; k < list->size(); ++k) {
      auto part = make_pre_tokenizer((*list)[k], where + ".pretokenizers[" + std::to_string(k) + "]");
      if (!part) return std::unexpected(std::move(part.error()));
      parts.push_back(std::move(*part));
    }
    return std::make_unique<SequencePreTokenizer>(std::move(parts));
  }
  return unsupported_type(where, type);
}

}  // namespace attn::text::pipeline
