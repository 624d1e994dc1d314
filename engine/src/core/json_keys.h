// Where the keys of a JSON object's top level sit in its text. nlohmann::json keeps no positions and
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
};

// The keys of the top-level object of `json`, in text order (duplicates included). `json` must already
// have parsed as an object; on other text the result is unspecified but the scan stays in bounds.
inline std::vector<JsonKey> top_level_keys(std::string_view json) {
  std::vector<JsonKey> keys;
  int depth = 0;
  const std::size_t n = json.size();
  for (std::size_t i = 0; i < n; ++i) {
    const char c = json[i];
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
    } else if (c == '"') {
      const std::size_t open = i;
      for (++i; i < n && json[i] != '"'; ++i) {
        if (json[i] == '\\') ++i;
      }
      if (i >= n) break;
      if (depth != 1) continue;
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
      keys.push_back({std::move(name), static_cast<std::int64_t>(open)});
    }
  }
  return keys;
}

// The 1-based line of byte `offset` of `text`.
inline std::int64_t line_of(std::string_view text, std::int64_t offset) {
  std::int64_t line = 1;
  const auto end = std::min<std::size_t>(text.size(), static_cast<std::size_t>(offset < 0 ? 0 : offset));
  for (std::size_t i = 0; i < end; ++i) line += text[i] == '\n';
  return line;
}

}  // namespace attn::detail
