// Where the keys of a JSON object sit in its text. nlohmann::json keeps no positions and
// silently keeps the last of two equal keys; the readers of safetensors headers and config.json use this
// to name the byte (and line) of a bad entry and to refuse duplicates. Not part of the public API.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attn::detail {

struct JsonKey {
  std::string name;         // decoded
  std::int64_t offset = 0;  // of its opening quote in the text
  std::int64_t object = 0;  // of the opening brace of the object it belongs to
};

// The keys of the objects nested `depth` levels deep in `json` (1: the top-level object's keys, 2: the keys of
// the objects that are its values, ...), in text order, duplicates included. `json` must already have parsed
// (so it nests at most kMaxJsonDepth levels); on other text the result is unspecified but the scan stays in
// bounds.
inline std::vector<JsonKey> object_keys(std::string_view json, int depth) {
  std::vector<JsonKey> keys;
  std::vector<std::size_t> open_at;  // the opening bracket of every level the scan is inside
  const std::size_t n = json.size();
  for (std::size_t i = 0; i < n; ++i) {
    const char c = json[i];
    if (c == '{' || c == '[') {
      open_at.push_back(i);
    } else if (c == '}' || c == ']') {
      if (!open_at.empty()) open_at.pop_back();
    } else if (c == '"') {
      const std::size_t open = i;
      for (++i; i < n && json[i] != '"'; ++i) {
        if (json[i] == '\\') ++i;
      }
      if (i >= n) break;
      if (static_cast<int>(open_at.size()) != depth || json[open_at.back()] != '{') continue;
      std::size_t next = i + 1;
      while (next < n && (json[next] == ' ' || json[next] == '\t' || json[next] == '\n' || json[next] == '\r')) ++next;
      if (next >= n || json[next] != ':') continue;  // a string value, not a key
      const std::string_view raw = json.substr(open + 1, i - open - 1);
      std::string name;
      if (raw.find('\\') == std::string_view::npos) {
        name = std::string(raw);
      } else {
        try {
          name = nlohmann::json::parse(json.substr(open, i + 1 - open)).get<std::string>();
        } catch (const nlohmann::json::exception&) {
          name = std::string(raw);
        }
      }
      keys.push_back({std::move(name), static_cast<std::int64_t>(open), static_cast<std::int64_t>(open_at.back())});
    }
  }
  return keys;
}

// The keys of the top-level object of `json`, in text order (duplicates included).
inline std::vector<JsonKey> top_level_keys(std::string_view json) { return object_keys(json, 1); }

// The 1-based line of byte `offset` of `text`.
inline std::int64_t line_of(std::string_view text, std::int64_t offset) {
  std::int64_t line = 1;
  const auto end = std::min<std::size_t>(text.size(), static_cast<std::size_t>(offset < 0 ? 0 : offset));
  for (std::size_t i = 0; i < end; ++i) line += text[i] == '\n';
  return line;
}

}  // namespace attn::detail
