#include "json_config.h"

#include "file_read.h"
#include "json_keys.h"
#include "try.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <new>
#include <system_error>

namespace attn::detail {

namespace fs = std::filesystem;
using nlohmann::json;

std::string quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string json_reason(const json::exception& e) {
  const std::string what = e.what();
  const auto column = what.find("column ");
  if (column != std::string::npos) {
    const auto colon = what.find(": ", column);
    if (colon != std::string::npos) return what.substr(colon + 2);
  }
  const auto bracket = what.find("] ");
  return bracket == std::string::npos ? what : what.substr(bracket + 2);
}

ErrorKind json_error_kind(const json::exception& e) {
  const std::string_view what = e.what();
  const bool utf8 = what.find("UTF-8") != std::string_view::npos || what.find("surrogate") != std::string_view::npos;
  if (utf8) return ErrorKind::Encoding;
  // The text stops before its value is complete: a file cut short (an interrupted copy or write).
  return what.find("unexpected end of input") != std::string_view::npos ? ErrorKind::Truncated : ErrorKind::Malformed;
}

std::int64_t parse_error_offset(const json::parse_error& e, std::string_view text) {
  return std::min<std::int64_t>(e.byte > 0 ? static_cast<std::int64_t>(e.byte) - 1 : 0,
                                static_cast<std::int64_t>(text.size()));
}

Result<std::string> read_config_text(const fs::path& path) {
  return read_regular_file(path, 16 << 20, "a config file");
}

std::int64_t json_too_deep_at(std::string_view text, int max_depth) {
  int depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      // To the closing quote, over escapes; an unterminated string ends the scan (the parser says why).
      for (++i; i < text.size() && text[i] != '"'; ++i) i += text[i] == '\\';
    } else if (c == '{' || c == '[') {
      if (++depth > max_depth) return static_cast<std::int64_t>(i);
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return -1;
}

Result<void> check_json_depth(std::string_view text, const std::string& file, std::int64_t base, int max_depth) {
  if (const std::int64_t at = json_too_deep_at(text, max_depth); at >= 0) {
    return fail(ErrorKind::TooLarge, "JSON nested deeper than " + std::to_string(max_depth) + " levels", file,
                base + at);
  }
  return {};
}

template <class Json>
Result<Json> parse_json(std::string_view text, const std::string& file, std::int64_t base, int max_depth) {
  ATTN_TRY(check_json_depth(text, file, base, max_depth));
  try {
    return Json::parse(text);
  } catch (const typename Json::parse_error& e) {
    const std::int64_t at = parse_error_offset(e, text);
    // A line only where the text is the whole file.
    return fail(json_error_kind(e), "not valid JSON: " + json_reason(e), file, base + at,
                base == 0 ? line_of(text, at) : -1);
  } catch (const typename Json::exception& e) {
    return fail(json_error_kind(e), "not valid JSON: " + json_reason(e), file);
  } catch (const std::bad_alloc&) {
    return fail(ErrorKind::TooLarge, "not enough memory to parse " + std::to_string(text.size()) + " bytes of JSON",
                file, base);
  }
}
template Result<json> parse_json(std::string_view, const std::string&, std::int64_t, int);
template Result<nlohmann::ordered_json> parse_json(std::string_view, const std::string&, std::int64_t, int);

Result<json> parse_object(std::string_view text, const std::string& file) {
  auto parsed = parse_json(text, file);
  if (!parsed) return std::unexpected(parsed.error());
  json root = std::move(*parsed);
  if (!root.is_object()) {
    return fail(ErrorKind::Malformed, "the file holds a JSON " + std::string(root.type_name()) + ", not an object",
                file);
  }
  return root;
}

JsonKeys::JsonKeys(const json& root, std::string_view text, std::string file)
    : root_(root), text_(text), file_(std::move(file)) {
  for (auto& k : top_level_keys(text)) positions_.emplace_back(std::move(k.name), k.offset);
}

std::unexpected<Error> JsonKeys::error(ErrorKind kind, std::string_view key, std::string reason) const {
  std::int64_t line = -1;
  // The last occurrence: nlohmann keeps the last of two equal keys.
  for (const auto& [name, offset] : positions_) {
    if (name == key) line = line_of(text_, offset);
  }
  return std::unexpected(Error{file_, -1, line, std::move(reason), kind});
}

std::unexpected<Error> JsonKeys::error(ErrorKind kind, std::string reason) const {
  return fail(kind, std::move(reason), file_);
}

const json* JsonKeys::find(std::string_view key) const {
  const auto it = root_.find(std::string(key));
  if (it == root_.end() || it->is_null()) return nullptr;
  return &*it;
}

Result<int> JsonKeys::whole_or(std::string_view key, int fallback, std::int64_t lo, std::int64_t hi) const {
  const json* value = find(key);
  if (!value) return fallback;
  // Below the range is a value that cannot be (a zero or negative size); above it, one over the limit that
  // keeps a 2 KB config from asking for gigabytes.
  const auto out_of_range = [&](ErrorKind kind) {
    return error(kind, key,
                 std::string(key) + " is " + value->dump() + "; it must be from " + std::to_string(lo) + " to " +
                     std::to_string(hi));
  };
  std::int64_t v = 0;
  if (value->is_number_unsigned()) {
    const auto u = value->get<std::uint64_t>();
    if (hi < 0 || u > static_cast<std::uint64_t>(hi)) return out_of_range(ErrorKind::TooLarge);
    v = static_cast<std::int64_t>(u);
  } else if (value->is_number_integer()) {
    v = value->get<std::int64_t>();
  } else {
    return error(ErrorKind::Malformed, key, std::string(key) + " must be a whole number, got " + value->dump());
  }
  if (v < lo) return out_of_range(ErrorKind::OutOfRange);
  if (v > hi) return out_of_range(ErrorKind::TooLarge);
  return static_cast<int>(v);
}

Result<bool> JsonKeys::boolean_or(std::string_view key, bool fallback) const {
  const json* value = find(key);
  if (!value) return fallback;
  if (!value->is_boolean()) {
    return error(ErrorKind::Malformed, key, std::string(key) + " must be true or false, got " + value->dump());
  }
  return value->get<bool>();
}

Result<double> JsonKeys::number_or(std::string_view key, double fallback, double lo, double hi) const {
  const json* value = find(key);
  if (!value) return fallback;
  if (!value->is_number()) {
    return error(ErrorKind::Malformed, key, std::string(key) + " must be a number, got " + value->dump());
  }
  const double x = value->get<double>();
  if (!(x >= lo && x <= hi)) {
    return error(ErrorKind::OutOfRange, key,
                 std::string(key) + " must be between " + json(lo).dump() + " and " + json(hi).dump() + ", got " +
                     value->dump());
  }
  return x;
}

Result<std::string> JsonKeys::text_or(std::string_view key, std::string fallback) const {
  const json* value = find(key);
  if (!value) return fallback;
  if (!value->is_string()) {
    return error(ErrorKind::Malformed, key, std::string(key) + " must be a string, got " + value->dump());
  }
  return value->get<std::string>();
}

Result<std::vector<float>> JsonKeys::per_channel(std::string_view key, int channels, bool positive) const {
  const json* value = find(key);
  if (!value) return error(ErrorKind::Malformed, std::string(key) + " is missing");
  std::vector<float> out;
  if (value->is_number()) {
    out.assign(static_cast<std::size_t>(channels), value->get<float>());
  } else if (value->is_array() && value->size() == static_cast<std::size_t>(channels)) {
    for (const json& v : *value) {
      if (!v.is_number()) break;
      out.push_back(v.get<float>());
    }
  }
  if (out.size() != static_cast<std::size_t>(channels)) {
    return error(
        ErrorKind::Malformed, key,
        std::string(key) + " must be " + std::to_string(channels) + " numbers (one per channel), got " + value->dump());
  }
  for (const float v : out) {
    if (!std::isfinite(v) || (positive && v <= 0.0f)) {
      return error(ErrorKind::OutOfRange, key,
                   std::string(key) + " " + value->dump() + " holds " + json(v).dump() +
                       (positive ? "; every value must be above 0" : "; every value must be finite"));
    }
  }
  return out;
}

}  // namespace attn::detail
