// A SentencePiece tokenizer.model (protobuf, run by libsentencepiece once sentencepiece_check.cpp has read
// it), then a text to encode. Input: text 0x1E tokenizer.model (the text first: a model's bytes hold 0x1E).
// Each model that loads also encodes a run of one letter, which a trie with a cycle would keep matching, and
// decodes what it encoded (the denormalizer's map runs there).
#include "fuzz_util.h"

#include "attn/text/tokenizer.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attn;
  constexpr const char* kName = "tokenizer.model";
  const auto parts = fuzz::split(data, size, 2);
  auto tokenizer = text::parse_sentencepiece(parts[1], kName);
  if (!tokenizer) {
    fuzz::check_error(tokenizer.error(), kName);
    return 0;
  }
  fuzz::exercise(**tokenizer, parts[0]);
  for (const std::string& sample : {std::string(parts[0]), std::string(2048, 'a'), std::string("\xEF\xBC\xA1 x")}) {
    const auto tokens = (*tokenizer)->encode(sample);
    if (!tokens) continue;
    std::vector<int> ids;
    for (const text::Token& t : *tokens) ids.push_back(t.id);
    (void)(*tokenizer)->decode(ids);
    (void)(*tokenizer)->decode(ids, false);
  }
  return 0;
}
