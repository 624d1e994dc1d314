// The safetensors reader over arbitrary bytes: the header's validation, then every tensor read back as
// float32 (and as a matrix or vector where its rank allows), as the model loaders do.
#include "fuzz_util.h"

#include "attn/io/safetensors.h"

#include <cstddef>
#include <cstdint>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attn;
  constexpr const char* kName = "fuzz.safetensors";
  auto st = io::SafeTensors::parse(std::vector<std::uint8_t>(data, data + size), kName);
  if (!st) {
    fuzz::check_error(st.error(), kName);
    return 0;
  }
  const std::int64_t data_size = static_cast<std::int64_t>(size) - st->data_start();
  fuzz::require(st->data_start() >= 8 && data_size >= 0);
  for (const io::TensorInfo& t : st->tensors()) {
    fuzz::require(st->find(t.name) == &t);
    fuzz::require(0 <= t.begin && t.begin <= t.end && t.end <= data_size);
    fuzz::require(st->bytes(t).size() == static_cast<std::size_t>(t.end - t.begin));
    const bool is_float = t.dtype == io::DType::F32 || t.dtype == io::DType::F16 || t.dtype == io::DType::BF16 ||
                          t.dtype == io::DType::F64;
    auto values = st->to_float(t);
    fuzz::require(values.has_value() == is_float);
    if (values) {
      fuzz::require(static_cast<std::int64_t>(values->size()) == t.elements());
    } else {
      fuzz::check_error(values.error(), kName);
    }
    if (t.shape.size() == 2) {
      auto m = st->matrix(t.name, t.shape[0], t.shape[1]);
      fuzz::require(m.has_value() == is_float);
      if (m) fuzz::require(m->rows() == t.shape[0] && m->cols() == t.shape[1]);
    } else if (t.shape.size() == 1) {
      auto v = st->vector(t.name, t.shape[0]);
      fuzz::require(v.has_value() == is_float);
      if (v) fuzz::require(v->size() == t.shape[0]);
    }
  }
  return 0;
}
