// WordPiece (BERT): vocab.txt, then a text to encode. Input: vocab.txt 0x1E text [0x1E options], where the
// options part's first byte picks lower_case, strip_accents (unset, false, true), tokenize_chinese_chars,
// clean_text and whether the special tokens are matched.
#include "fuzz_util.h"

#include "attn/text/tokenizer.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attn;
  constexpr const char* kName = "vocab.txt";
  const auto parts = fuzz::split(data, size, 3);
  text::WordPieceOptions options;
  if (!parts[2].empty()) {
    const auto bits = static_cast<unsigned char>(parts[2][0]);
    options.lower_case = bits & 1;
    const unsigned strip = (bits >> 1) & 3;
    options.strip_accents = strip == 0 ? std::nullopt : std::optional<bool>(strip == 2);
    options.tokenize_chinese_chars = bits & 8;
    options.clean_text = bits & 16;
    if (bits & 32) options.added_tokens = std::vector<text::AddedToken>{};  // no special tokens matched
    options.max_input_chars_per_word = (bits & 64) ? 5 : 100;
  }
  auto tokenizer = text::parse_wordpiece(parts[0], kName, options);
  if (!tokenizer) {
    fuzz::check_error(tokenizer.error(), kName);
    return 0;
  }
  fuzz::exercise(**tokenizer, parts[1]);
  return 0;
}
