// The GGUF reader over arbitrary bytes: the header's checks, then every key read through each typed getter and
// every tensor's bytes and values (dequantised as the model loader does), with what the reader promises checked.
#include "fuzz_util.h"

#include "attn/io/gguf.h"

#include <cstddef>
#include <cstdint>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attn;
  constexpr const char* kName = "fuzz.gguf";
  auto f = io::GgufFile::parse(std::vector<std::uint8_t>(data, data + size), kName);
  if (!f) {
    fuzz::check_error(f.error(), kName);
    return 0;
  }
  const auto file_size = static_cast<std::int64_t>(size);
  fuzz::require(f->version() == 2 || f->version() == 3);
  fuzz::require(f->alignment() > 0 && (f->alignment() & (f->alignment() - 1)) == 0);
  fuzz::require(f->data_start() % f->alignment() == 0);
  for (const std::string& key : f->keys()) {
    const io::GgufValue* v = f->value(key);
    fuzz::require(v != nullptr && v->offset >= 0 && v->offset < file_size);
    fuzz::require(v->array || v->size() == 1);
    // Each getter answers a value or an error naming the key's byte; never both wrong.
    if (auto i = f->integer(key); !i) fuzz::require(i.error().offset == v->offset);
    if (auto n = f->number(key); !n) fuzz::require(n.error().offset == v->offset);
    if (auto s = f->string(key); !s) fuzz::require(s.error().offset == v->offset);
    if (auto b = f->boolean(key); !b) fuzz::require(b.error().offset == v->offset);
  }
  for (const io::GgufTensor& t : f->tensors()) {
    fuzz::require(f->find(t.name) == &t);
    fuzz::require(!t.name.empty() && t.name.size() <= 63 && t.ne.size() <= 4);
    fuzz::require(t.offset >= f->data_start() && t.offset % f->alignment() == 0);
    fuzz::require(t.bytes >= 0 && t.offset + t.bytes <= file_size);
    fuzz::require(f->bytes(t).size() == static_cast<std::size_t>(t.bytes));
    const auto info = io::ggml_type_info(t.type);
    fuzz::require(info.has_value());
    // Dequantised as the loader does, within a bound so that one input stays quick.
    if (t.elements() > (1 << 20)) continue;
    auto values = f->to_float(t);
    fuzz::require(values.has_value() == info->readable);
    if (values) {
      fuzz::require(static_cast<std::int64_t>(values->size()) == t.elements());
    } else {
      fuzz::check_error(values.error(), kName);
    }
  }
  return 0;
}
