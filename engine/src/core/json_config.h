// config.json as the model loaders read it (the transformer families in models/config.cpp, the demo
// models in models/bundled/layers.cpp): the file read whole with a size cap, parsed as one JSON object whose
// syntax errors name the byte and line, and typed reads of its top-level keys whose errors name the line
// of the key. json_reason() serves every nlohmann error message (safetensors headers too). Not part of the
// public API.
#pragma once

#include "attn/error.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attn::detail {

// Any size in a config above this is a broken file, not a model.
inline constexpr std::int64_t kMaxConfigSize = 1 << 20;

// `s` in double quotes, as error messages name keys and values.
std::string quote(std::string_view s);

// nlohmann's message without its "[json.exception...] parse error at line 1, column 7: " prefix (the
// error's own offset and line say where).
std::string json_reason(const nlohmann::json::exception& e);

// Encoding when nlohmann refused the text for its UTF-8 (an ill-formed byte, a lone surrogate escape),
// Truncated when the text ends before its value does (an empty file, a copy cut short), Malformed for
// everything else.
ErrorKind json_error_kind(const nlohmann::json::exception& e);

// The byte of `text` a parse error is at (e.byte counts the characters read, the offending one included).
std::int64_t parse_error_offset(const nlohmann::json::parse_error& e, std::string_view text);

// The whole file (at most 16 MiB); errors name the path.
Result<std::string> read_config_text(const std::filesystem::path& path);

// Deeper than anything the engine reads nests (a session about 8 levels, a tokenizer.json 6): nlohmann's parser,
// its dump() and its destructor recurse once per level, so text nested deeper is refused before it is parsed.
inline constexpr int kMaxJsonDepth = 64;

// The byte at which brackets in `text` first nest deeper than `max_depth` (strings skipped), or -1. A linear
// scan without recursion, safe on any bytes.
std::int64_t json_too_deep_at(std::string_view text, int max_depth = kMaxJsonDepth);

// The one way the engine parses JSON text: refused (TooLarge, at the byte) when it nests deeper than
// `max_depth`, then parsed without letting an exception out; a syntax error names the byte and line (Malformed,
// Truncated or Encoding, json_error_kind). `base` is where the text starts in its file (a safetensors header
// at byte 8, a key's value inside a header), added to every offset reported. Json is nlohmann::json or
// nlohmann::ordered_json.
template <class Json = nlohmann::json>
Result<Json> parse_json(std::string_view text, const std::string& file, std::int64_t base = 0,
                        int max_depth = kMaxJsonDepth);
extern template Result<nlohmann::json> parse_json(std::string_view, const std::string&, std::int64_t, int);
extern template Result<nlohmann::ordered_json> parse_json(std::string_view, const std::string&, std::int64_t, int);

// The depth check of parse_json alone, for the readers that parse with nlohmann's SAX interface.
Result<void> check_json_depth(std::string_view text, const std::string& file, std::int64_t base = 0,
                              int max_depth = kMaxJsonDepth);

// The text as a JSON object (parse_json); a syntax error names the byte and line.
Result<nlohmann::json> parse_object(std::string_view text, const std::string& file);

// Typed reads of the top-level keys of `root`, parsed from `text`: every error names the file and the
// line of the key (of its last occurrence: nlohmann keeps the last of two equal keys). A key that is
// absent or null takes the fallback.
class JsonKeys {
 public:
  JsonKeys(const nlohmann::json& root, std::string_view text, std::string file);

  std::unexpected<Error> error(ErrorKind kind, std::string_view key, std::string reason) const;
  std::unexpected<Error> error(ErrorKind kind, std::string reason) const;
  // The value, or null when the key is absent or null.
  const nlohmann::json* find(std::string_view key) const;

  // A whole number in [lo, hi]: below lo is OutOfRange, above hi TooLarge.
  Result<int> whole_or(std::string_view key, int fallback, std::int64_t lo = 1, std::int64_t hi = kMaxConfigSize) const;
  Result<bool> boolean_or(std::string_view key, bool fallback) const;
  Result<std::string> text_or(std::string_view key, std::string fallback) const;
  // A number in [lo, hi] (NaN is refused: JSON has none, but the bounds say so for any reader).
  Result<double> number_or(std::string_view key, double fallback, double lo, double hi) const;
  // One number per image channel (a ViT's image_mean, a captioner's std): a list of `channels` finite
  // numbers, or one number for all; `positive` refuses values <= 0. The key must be there.
  Result<std::vector<float>> per_channel(std::string_view key, int channels, bool positive) const;

  const nlohmann::json& root() const { return root_; }
  const std::string& file() const { return file_; }

 private:
  const nlohmann::json& root_;
  std::string_view text_;
  std::string file_;
  std::vector<std::pair<std::string, std::int64_t>> positions_;  // key, byte offset
};

// parse_object(text), then read(Keys(root, text, file)); a nlohmann exception that `read` lets through
// becomes "unexpected JSON" (defensive: the readers type-check every access first).
template <class Keys, class Read>
auto read_json_config(std::string_view text, const std::string& file, Read&& read)
    -> decltype(read(std::declval<const Keys&>())) {
  auto root = parse_object(text, file);
  if (!root) return std::unexpected(root.error());
  try {
    return read(Keys(*root, text, file));
  } catch (const nlohmann::json::exception& e) {
    return fail(ErrorKind::Malformed, "unexpected JSON: " + json_reason(e), file);
  }
}

}  // namespace attn::detail
