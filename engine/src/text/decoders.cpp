// tokenizer.json decoders, as the library chains them over the token strings: ByteLevel (the byte-level
// alphabet back to bytes), Metaspace ("▁" back to a space), ByteFallback ("<0xE6><0x97><0xA5>" back to "日"),
// Fuse, Strip, Replace, WordPiece ("##" joins, clean-up of spaces before punctuation) and Sequence. Each says how
// much longer it can make a token (Decoder::growth), and a chain that could pass the budget is refused at load.
#include "pipeline.h"

#include <nlohmann/json.hpp>

namespace attn::text::pipeline {

namespace {

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
}

class ByteLevelDecoder final : public Decoder {
 public:
  void decode(std::vector<std::string>& tokens, bool) const override {
    std::string bytes;
    for (const std::string& t : tokens) {
      std::string spelled;
      bool all = true;
      for (std::size_t i = 0; i < t.size() && all;) {
        const int b = char_to_byte(unicode::next_code_point(t, i));
        if (b < 0) {
          all = false;
        } else {
          spelled += static_cast<char>(b);
        }
      }
      bytes += all ? spelled : t;  // a token outside the alphabet (an added token) stays as it is
    }
    tokens.assign(1, unicode::repair_utf8(bytes));
  }
  // A character of the alphabet is one or two bytes and becomes one byte; a byte left out of a character
  // becomes U+FFFD, 3 bytes.
  Growth growth() const override { return {3, 0}; }
};

class MetaspaceDecoder final : public Decoder {
 public:
  MetaspaceDecoder(std::string replacement, bool strip_first)
      : replacement_(std::move(replacement)), strip_first_(strip_first) {}
  void decode(std::vector<std::string>& tokens, bool display) const override {
    // The first token loses every replacement character (the library drops them all, not only the prepended one).
    for (std::size_t k = 0; k < tokens.size(); ++k) {
      replace_all(tokens[k], replacement_, k == 0 && strip_first_ && !display ? "" : " ");
    }
  }

 private:
  std::string replacement_;
  bool strip_first_;
};

class ByteFallbackDecoder final : public Decoder {
 public:
  void decode(std::vector<std::string>& tokens, bool display) const override {
    std::vector<std::string> out;
    std::string bytes;
    std::vector<std::string> pending;  // the byte tokens as written
    const auto flush = [&] {
      if (pending.empty()) return;
      if (!unicode::check_utf8(bytes)) {
        out.push_back(bytes);
      } else if (display) {
        out.insert(out.end(), pending.begin(), pending.end());  // part of a character: "<0xE6>" stays
      } else {
        for (std::size_t k = 0; k < pending.size(); ++k) out.emplace_back("\xEF\xBF\xBD");  // U+FFFD per byte token
      }
      bytes.clear();
      pending.clear();
    };
    for (std::string& t : tokens) {
      const int b = byte_fallback_value(t);
      if (b >= 0) {
        bytes += static_cast<char>(b);
        pending.push_back(std::move(t));
        continue;
      }
      flush();
      out.push_back(std::move(t));
    }
    flush();
    tokens = std::move(out);
  }
};

class Fuse final : public Decoder {
 public:
  void decode(std::vector<std::string>& tokens, bool) const override {
    std::string joined;
    for (const std::string& t : tokens) joined += t;
    tokens.assign(1, std::move(joined));
  }
};

class StripDecoder final : public Decoder {
 public:
  StripDecoder(std::string content, std::int64_t start, std::int64_t stop)
      : content_(std::move(content)), start_(start), stop_(stop) {}
  void decode(std::vector<std::string>& tokens, bool display) const override {
    if (display || content_.empty()) return;
    for (std::string& t : tokens) {
      for (std::int64_t k = 0; k < start_ && t.starts_with(content_); ++k) t.erase(0, content_.size());
      for (std::int64_t k = 0; k < stop_ && t.ends_with(content_); ++k) t.erase(t.size() - content_.size());
    }
  }

 private:
  std::string content_;
  std::int64_t start_, stop_;
};

class ReplaceDecoder final : public Decoder {
 public:
  ReplaceDecoder(std::shared_ptr<const Regex> pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void decode(std::vector<std::string>& tokens, bool) const override {
    for (std::string& t : tokens) {
      Piece p = piece_of(t, 0);
      // Bounded by growth(), checked at load; a search over PCRE2's limits leaves the token as it is (a label
      // must be drawn), which only a hostile pattern does.
      (void)replace_matches(p, *pattern_, content_, INT64_MAX);
      t = std::move(p.text);
    }
  }
  // Matches of at least L bytes, each written as the content: content / L times the input. A pattern that can
  // match the empty string matches at most once per character and once at the end.
  Growth growth() const override {
    const auto content = static_cast<std::int64_t>(content_.size());
    const std::int64_t shortest = pattern_->min_length();
    if (shortest == 0) return {1 + content, content};
    return {std::max<std::int64_t>(1, (content + shortest - 1) / shortest), 0};
  }

 private:
  std::shared_ptr<const Regex> pattern_;
  std::string content_;
};

class WordPieceDecoder final : public Decoder {
 public:
  WordPieceDecoder(std::string prefix, bool cleanup) : prefix_(std::move(prefix)), cleanup_(cleanup) {}
  void decode(std::vector<std::string>& tokens, bool display) const override {
    for (std::size_t k = 0; k < tokens.size(); ++k) {
      std::string& t = tokens[k];
      if (display) {
        if (t.starts_with(prefix_)) t.erase(0, prefix_.size());
        continue;
      }
      if (k != 0) {
        if (!prefix_.empty() && t.starts_with(prefix_)) {
          t.erase(0, prefix_.size());
        } else {
          t.insert(0, " ");
        }
      }
      if (cleanup_) {
        static const std::pair<const char*, const char*> kRules[] = {
            {" .", "."},   {" ?", "?"},           {" !", "!"},   {" ,", ","},     {" ' ", "'"},   {" n't", "n't"},
            {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
        for (const auto& [from, to] : kRules) replace_all(t, from, to);
      }
    }
  }
  // A space in front of each token; the clean-up rules only shorten.
  Growth growth() const override { return {1, 1}; }

 private:
  std::string prefix_;
  bool cleanup_;
};

class SequenceDecoder final : public Decoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> parts) : parts_(std::move(parts)) {}
  void decode(std::vector<std::string>& tokens, bool display) const override {
    for (const auto& part : parts_) part->decode(tokens, display);
  }
  Growth growth() const override { return growth_; }
  Growth growth_;

 private:
  std::vector<std::unique_ptr<Decoder>> parts_;
};

// The growth of `second` after `first`, saturating far past any limit.
Decoder::Growth then(Decoder::Growth first, Decoder::Growth second) {
  constexpr std::int64_t kHuge = std::int64_t{1} << 40;
  const auto times = [](std::int64_t a, std::int64_t b) { return a > 0 && b > kHuge / a ? kHuge : a * b; };
  return {times(first.factor, second.factor), std::min(kHuge, times(second.factor, first.extra) + second.extra)};
}

Result<void> check_growth(Decoder::Growth g, const std::string& where) {
  if (g.factor <= kOutputFactor && g.extra <= kOutputExtra) return {};
  return bad_field(where,
                   "can make a token " + with_commas(g.factor) + " times as long plus " + with_commas(g.extra) +
                       " bytes (the decoders up to here), over the budget of " + std::to_string(kOutputFactor) +
                       " times plus " + with_commas(kOutputExtra) + " bytes",
                   ErrorKind::TooLarge);
}

Result<std::unique_ptr<Decoder>> make_decoder_of_type(const Json& j, const std::string& where) {
  if (!j.is_object()) return bad_field(where, "must be an object or null");
  const std::string type = type_of(j);
  if (type == "ByteLevel") return std::make_unique<ByteLevelDecoder>();
  if (type == "Metaspace") {
    std::string replacement, scheme;
    ATTN_ASSIGN(replacement, string_field(j, "replacement", where, "\xE2\x96\x81"));
    bool legacy = true;
    ATTN_ASSIGN(legacy, bool_field(j, "add_prefix_space", where, true));
    ATTN_ASSIGN(scheme, string_field(j, "prepend_scheme", where, legacy ? "always" : "never"));
    return std::make_unique<MetaspaceDecoder>(std::move(replacement), scheme != "never");
  }
  if (type == "ByteFallback") return std::make_unique<ByteFallbackDecoder>();
  if (type == "Fuse") return std::make_unique<Fuse>();
  if (type == "Strip") {
    std::string content;
    ATTN_ASSIGN(content, string_field(j, "content", where, " "));
    std::int64_t start = 0, stop = 0;
    ATTN_ASSIGN(start, int_field(j, "start", where, 0));
    ATTN_ASSIGN(stop, int_field(j, "stop", where, 0));
    return std::make_unique<StripDecoder>(std::move(content), start, stop);
  }
  if (type == "Replace") {
    auto pattern = pattern_field(j, "pattern", where);
    if (!pattern) return std::unexpected(std::move(pattern.error()));
    std::string content;
    ATTN_ASSIGN(content, string_field(j, "content", where, ""));
    return std::make_unique<ReplaceDecoder>(std::move(*pattern), std::move(content));
  }
  if (type == "WordPiece") {
    std::string prefix;
    ATTN_ASSIGN(prefix, string_field(j, "prefix", where, "##"));
    bool cleanup = true;
    ATTN_ASSIGN(cleanup, bool_field(j, "cleanup", where, true));
    return std::make_unique<WordPieceDecoder>(std::move(prefix), cleanup);
  }
  if (type == "Sequence") {
    ATTN_TRY(check_chain_length(j, "decoders", where));
    const auto list = j.find("decoders");
    if (list == j.end() || !list->is_array()) return bad_field(field(where, "decoders"), "must be an array");
    std::vector<std::unique_ptr<Decoder>> parts;
    Decoder::Growth growth;
    for (std::size_t k = 0; k < list->size(); ++k) {
      const std::string at = where + ".decoders[" + std::to_string(k) + "]";
      auto part = make_decoder_of_type((*list)[k], at);
      if (!part) return std::unexpected(std::move(part.error()));
      growth = then(growth, (*part)->growth());
      ATTN_TRY(check_growth(growth, at));  // refused at the step that passes the budget
      parts.push_back(std::move(*part));
    }
    auto sequence = std::make_unique<SequenceDecoder>(std::move(parts));
    sequence->growth_ = growth;
    return sequence;
  }
  return unsupported_type(where, type);
}

}  // namespace

Result<std::unique_ptr<Decoder>> make_decoder(const Json& j, const std::string& where) {
  std::unique_ptr<Decoder> made;
  ATTN_ASSIGN(made, make_decoder_of_type(j, where));
  ATTN_TRY(check_growth(made->growth(), where));
  return made;
}

}  // namespace attn::text::pipeline
