// A SentencePiece tokenizer.model (protobuf, run by libsentencepiece once sentencepiece_check.cpp has read
// it), then a text to encode. Input: text 0x1E tokenizer.model (the text first: a model's bytes hold 0x1E).
// Each model that loads also encodes a run of one letter, which a trie with a cycle would keep matching, and
// decodes what it encoded (the denormalizer's map runs there).
#include "fuzz_util.h"

#include "attn/text/tokenizer.h"

#include <algorithm>
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
  const text::Tokenizer& t = **tokenizer;
  const int vocab = t.vocab_size();
  fuzz::require(vocab > 0);
  for (const std::string& sample : {std::string(parts[0]), std::string(2048, 'a'), std::string("\xEF\xBC\xA1 x")}) {
    const auto tokens = t.encode(sample);
    if (!tokens) {
      fuzz::require(!tokens.error().reason.empty());
      continue;
    }
    std::vector<int> ids;
    for (const text::Token& token : *tokens) {
      fuzz::require(token.span.begin >= 0 && token.span.begin <= token.span.end);
      fuzz::require(static_cast<std::size_t>(token.span.end) <= sample.size());
      fuzz::require(token.id >= 0 && token.id < vocab);
      // An unknown run keeps the text it stands for, as libsentencepiece's pieces do; any other token is its entry.
      fuzz::require(token.id == t.specials().unk || t.token(token.id) == token.text);
      (void)t.display(token.id);
      ids.push_back(token.id);
    }
    (void)t.decode(ids);
    (void)t.decode(ids, false);
  }
  for (int id = 0; id < std::min(vocab, 4096); ++id) {
    const std::string_view entry = t.token(id);
    (void)t.display(id);
    const auto back = t.id(entry);
    fuzz::require(back.has_value() && t.token(*back) == entry);
  }
  fuzz::require(t.token(-1).empty() && t.token(vocab).empty());
  return 0;
}
