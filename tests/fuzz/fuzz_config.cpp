// config.json through every parser that reads one: the transformer families' and the bundled seq2seq,
// classifier and captioner models'. Whatever one accepts must satisfy the invariants its loader relies on.
#include "fuzz_util.h"

#include "attn/models/captioner.h"
#include "attn/models/classifier.h"
#include "attn/models/config.h"
#include "attn/models/seq2seq.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attn;
  constexpr const char* kName = "config.json";
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  if (auto c = models::parse_config(text, kName)) {
    fuzz::require(c->hidden > 0 && c->heads > 0 && c->layers > 0 && c->intermediate > 0);
    fuzz::require((c->family == attn::models::Family::Decoder || c->hidden % c->heads == 0) && c->head_dim() > 0);
    fuzz::require(c->max_positions > 0 && c->vocab_size >= 0);
  } else {
    fuzz::check_error(c.error(), kName);
  }
  if (auto c = models::Seq2SeqConfig::parse(text, kName); !c) fuzz::check_error(c.error(), kName);
  if (auto c = models::ClassifierConfig::parse(text, kName); !c) fuzz::check_error(c.error(), kName);
  if (auto c = models::CaptionerConfig::parse(text, kName); !c) fuzz::check_error(c.error(), kName);
  return 0;
}
