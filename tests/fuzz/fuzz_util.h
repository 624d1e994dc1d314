// Shared by the fuzz targets: splitting one input into the parts a loader takes, and the checks every
// target makes of what a loader returns. A broken promise calls __builtin_trap(), which libFuzzer reports
// as a crash and saves with the input that caused it.
#pragma once

#include "attn/error.h"
#include "attn/text/tokenizer.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attn::fuzz {

// Parts of one input are separated by 0x1E (ASCII record separator), a byte no seed's text contains;
// fuzz/json.dict lists it so mutations insert and remove it. Missing trailing parts are empty, extra
// separators belong to the last part.
inline constexpr char kSeparator = '\x1e';

inline std::vector<std::string_view> split(const std::uint8_t* data, std::size_t size, std::size_t parts) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> out;
  while (out.size() + 1 < parts) {
    const auto at = rest.find(kSeparator);
    if (at == std::string_view::npos) break;
    out.push_back(rest.substr(0, at));
    rest.remove_prefix(at + 1);
  }
  out.push_back(rest);
  out.resize(parts);
  return out;
}

inline void require(bool promise) {
  if (!promise) __builtin_trap();
}

// An error a loader returns names the input and says why (the offset is checked by the unit tests, which
// know where each fault is).
inline void check_error(const Error& e, std::string_view name) {
  require(!e.reason.empty());
  require(e.file == name);
  require(e.offset >= -1 && e.line >= -1);
  require(!e.message().empty());
}

// What the app does with a tokenizer it loaded: encode the user's text, label every token, look ids up.
// Every token's span lies inside the text and its id inside the vocabulary, with that id's entry as text.
inline void exercise(const text::Tokenizer& tokenizer, std::string_view text) {
  const int vocab = tokenizer.vocab_size();
  require(vocab >= 0);
  auto tokens = tokenizer.encode(text);
  if (tokens) {
    for (const text::Token& t : *tokens) {
      require(t.span.begin >= 0 && t.span.begin <= t.span.end);
      require(static_cast<std::size_t>(t.span.end) <= text.size());
      require(t.id >= 0 && t.id < vocab);
      require(tokenizer.token(t.id) == t.text);
      (void)tokenizer.display(t.id);
    }
  } else {
    require(!tokens.error().reason.empty());
  }
  // Every entry of a small vocabulary (the fuzzer's are) maps back to an id whose entry is the same string
  // ("" is a gap in the ids, which BPE vocabularies may leave).
  for (int id = 0; id < std::min(vocab, 4096); ++id) {
    const std::string_view entry = tokenizer.token(id);
    (void)tokenizer.display(id);
    if (entry.empty()) continue;
    const auto back = tokenizer.id(entry);
    require(back.has_value() && tokenizer.token(*back) == entry);
  }
  require(tokenizer.token(-1).empty() && tokenizer.token(vocab).empty());
}

}  // namespace attn::fuzz
