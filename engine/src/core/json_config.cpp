#include "json_config.h"

#include "json_keys.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
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
  constexpr std::uintmax_t kMaxFileBytes = 16 << 20;
  const std::string name = path.string();
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) return fail(ErrorKind::Io, "no such file", name);
  if (!fs::is_regular_file(status)) return fail(ErrorKind::Io, "is not a regular file", name);
  const auto size = fs::file_size(path, ec);
  if (ec) return fail(ErrorKind::Io, "cannot read the file: " + ec.message(), name);
  if (size > kMaxFileBytes) {
    return fail(ErrorKind::TooLarge,
                "is " + std::to_string(size) + " bytes; a config file is at most " + std::to_string(kMaxFileBytes),
                name);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(ErrorKind::Io, "cannot open the file", name);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return fail(ErrorKind::Io, "cannot read the file", name);
  return text;
}

Result<json> parse_object(std::string_view text, const std::string& file) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    const std::int64_t at = parse_error_offset(e, text);
    return fail(json_error_kind(e), "not valid JSON: " + json_reason(e), file, at, line_of(text, at));
  } catch (const json::exception& e) {
    return fail(json_error_kind(e), "not valid JSON: " + json_reason(e), file);
  }
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
