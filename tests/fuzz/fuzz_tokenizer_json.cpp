// tokenizer.json (Hugging Face's fast-tokenizer file, WordPiece or byte-level BPE), then a text to encode.
// Input: tokenizer.json 0x1E text.
#include "fuzz_util.h"

#include "attn/text/tokenizer.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attn;
  constexpr const char* kName = "tokenizer.json";
  const auto parts = fuzz::split(data, size, 2);
  auto tokenizer = text::parse_tokenizer_json(parts[0], kName);
  if (!tokenizer) {
    fuzz::check_error(tokenizer.error(), kName);
    return 0;
  }
  fuzz::exercise(**tokenizer, parts[1]);
  return 0;
}
