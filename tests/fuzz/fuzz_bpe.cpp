// Byte-level BPE (GPT-2): vocab.json and merges.txt, then a text to encode. Input: vocab.json 0x1E
// merges.txt 0x1E text [0x1E options], where the options part's first byte sets add_prefix_space, an
// unknown token, and whether "<|endoftext|>" is matched.
#include "fuzz_util.h"

#include "attn/text/tokenizer.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attn;
  constexpr const char* kVocab = "vocab.json";
  constexpr const char* kMerges = "merges.txt";
  const auto parts = fuzz::split(data, size, 4);
  text::ByteLevelBpeOptions options;
  if (!parts[3].empty()) {
    const auto bits = static_cast<unsigned char>(parts[3][0]);
    options.add_prefix_space = bits & 1;
    if (bits & 2) options.unk_token = std::string("<unk>");
    if (bits & 4) options.added_tokens = std::vector<text::AddedToken>{};
  }
  auto tokenizer = text::parse_byte_level_bpe(parts[0], parts[1], kVocab, kMerges, options);
  if (!tokenizer) {
    const Error& e = tokenizer.error();
    fuzz::require(e.file == kVocab || e.file == kMerges);
    fuzz::check_error(e, e.file);
    return 0;
  }
  fuzz::exercise(**tokenizer, parts[2]);
  return 0;
}
