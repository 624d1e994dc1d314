// tokenizer_config.json (how the slow tokenizers were configured), as load_tokenizer_dir reads it beside
// vocab.txt or vocab.json + merges.txt.
#include "fuzz_util.h"

#include "attn/text/tokenizer.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attn;
  constexpr const char* kName = "tokenizer_config.json";
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = text::parse_tokenizer_config(text, kName);
  if (!config) {
    fuzz::check_error(config.error(), kName);
    // A field of the wrong type is named with its byte, which lies inside the text.
    fuzz::require(config.error().offset <= static_cast<std::int64_t>(size));
    return 0;
  }
  // What is accepted configures a tokenizer: the defaults the loaders rely on are untouched.
  fuzz::require(config->wordpiece.unk_token == "[UNK]" && config->wordpiece.continuation_prefix == "##");
  fuzz::require(config->wordpiece.max_input_chars_per_word == 100);
  return 0;
}
