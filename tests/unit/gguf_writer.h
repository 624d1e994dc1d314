// GGUF files written field by field for the tests (test_gguf.cpp, test_gguf_model.cpp): every field as given, so
// that a test can write what no converter would (a wrong count, an unaligned offset, a nested array).
#pragma once

#include "attn/io/gguf.h"
#include "attn/models/attribution.h"
#include "attn/models/transformer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attn::io::test {

using Bytes = std::vector<std::uint8_t>;

// Little-endian fields, appended.
struct Writer {
  Bytes b;
  template <class T>
  Writer& put(T v) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
    b.insert(b.end(), p, p + sizeof(T));
    return *this;
  }
  Writer& str(std::string_view s) {
    put<std::uint64_t>(s.size());
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  Writer& type(GgufType t) { return put(static_cast<std::uint32_t>(t)); }
};

struct Tensor {
  std::string name;
  std::vector<std::uint64_t> ne;
  std::uint32_t type = 0;  // F32
  Bytes data;
  std::int64_t offset = -1;  // -1: the next aligned offset
};

// A GGUF file: header, key/values (each written by a function), tensor infos, padding, data.
struct File {
  std::uint32_t version = 3;
  std::uint32_t alignment = 32;
  std::vector<std::function<void(Writer&)>> kvs;
  std::vector<Tensor> tensors;
  std::int64_t tensor_count = -1;  // -1: tensors.size()
  std::int64_t kv_count = -1;

  Bytes bytes() const {
    Writer w;
    w.put<std::uint32_t>(0x46554747).put(version);
    w.put<std::uint64_t>(tensor_count < 0 ? tensors.size() : static_cast<std::uint64_t>(tensor_count));
    w.put<std::uint64_t>(kv_count < 0 ? kvs.size() : static_cast<std::uint64_t>(kv_count));
    for (const auto& kv : kvs) kv(w);
    std::vector<std::int64_t> offsets;
    std::int64_t next = 0;
    for (const Tensor& t : tensors) {
      const std::int64_t at = t.offset >= 0 ? t.offset : next;
      offsets.push_back(at);
      next = (at + static_cast<std::int64_t>(t.data.size()) + alignment - 1) / alignment * alignment;
      w.str(t.name).put<std::uint32_t>(static_cast<std::uint32_t>(t.ne.size()));
      for (auto n : t.ne) w.put<std::uint64_t>(n);
      w.put(t.type).put<std::uint64_t>(static_cast<std::uint64_t>(at));
    }
    while (w.b.size() % alignment != 0) w.b.push_back(0);
    const std::size_t data_start = w.b.size();
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      const std::size_t at = data_start + static_cast<std::size_t>(offsets[i]);
      if (w.b.size() < at + tensors[i].data.size()) w.b.resize(at + tensors[i].data.size(), 0);
      std::memcpy(w.b.data() + at, tensors[i].data.data(), tensors[i].data.size());
    }
    return w.b;
  }
};

inline std::function<void(Writer&)> kv_string(std::string key, std::string value) {
  return [=](Writer& w) { w.str(key).type(GgufType::String).str(value); };
}
inline std::function<void(Writer&)> kv_u32(std::string key, std::uint32_t value) {
  return [=](Writer& w) { w.str(key).type(GgufType::U32).put(value); };
}

inline std::function<void(Writer&)> kv_f32(std::string key, float value) {
  return [=](Writer& w) { w.str(key).type(GgufType::F32).put(value); };
}

// A model file the loader must refuse, with a message naming the file and saying `fragment`.
inline void expect_load_refused(const std::filesystem::path& path, std::string_view fragment) {
  auto m = models::TransformerModel::load(path);
  ASSERT_FALSE(m.has_value());
  EXPECT_NE(m.error().message().find(fragment), std::string::npos) << m.error().message();
  EXPECT_NE(m.error().message().find(path.filename().string()), std::string::npos) << m.error().message();
}

// a and b (the same weights through the same forward) run on ids, every position's logits kept: the same shapes,
// logits within 1e-4 and every map within 1e-5 (test_gguf_model.cpp's expect_same_runs says why not to the bit).
// The two runs, or nullopt after a failure.
inline std::optional<std::pair<models::TransformerRun, models::TransformerRun>> expect_same_runs_of(
    std::shared_ptr<const models::TransformerModel> a, std::shared_ptr<const models::TransformerModel> b,
    const std::vector<int>& ids) {
  models::TransformerRunner ra(std::move(a)), rb(std::move(b));
  models::RunOptions options;
  options.all_logits = true;
  auto x = ra.run_ids(ids, {}, options);
  auto y = rb.run_ids(ids, {}, options);
  if (!x || !y) {
    ADD_FAILURE() << (x ? y.error().message() : x.error().message());
    return std::nullopt;
  }
  EXPECT_EQ(x->logits.rows(), static_cast<Index>(ids.size()));
  if (x->logits.rows() != y->logits.rows() || x->attention.layers.size() != y->attention.layers.size()) {
    ADD_FAILURE() << "the runs differ in shape";
    return std::nullopt;
  }
  EXPECT_LT((x->logits - y->logits).cwiseAbs().maxCoeff(), 1e-4f);
  for (std::size_t l = 0; l < x->attention.layers.size(); ++l) {
    const HeadStack &p = x->attention.layers[l].maps, &q = y->attention.layers[l].maps;
    EXPECT_EQ(p.heads(), q.heads());
    for (int h = 0; h < std::min(p.heads(), q.heads()); ++h) {
      EXPECT_LT((p.head(h) - q.head(h)).cwiseAbs().maxCoeff(), 1e-5f) << "layer " << l << " head " << h;
    }
  }
  return std::pair{std::move(*x), std::move(*y)};
}

// Gradient x input and AttnLRP of the same model (read two ways) on the same run: the same scores to float rounding.
inline void expect_same_attributions(const models::TransformerModel& a, const models::TransformerModel& b,
                                     const models::TransformerRun& ra, const models::TransformerRun& rb) {
  for (const auto method : {models::AttributionMethod::GradXInput, models::AttributionMethod::AttnLrp}) {
    models::AttributeOptions options;
    options.method = method;
    auto x = models::attribute(a, ra, {}, options);
    auto y = models::attribute(b, rb, {}, options);
    ASSERT_TRUE(x && y) << (x ? y.error().message() : x.error().message());
    ASSERT_EQ(x->scores.size(), y->scores.size());
    for (std::size_t i = 0; i < x->scores.size(); ++i) {
      EXPECT_NEAR(x->scores[i], y->scores[i], 1e-4 * (1.0 + std::abs(y->scores[i])))
          << models::method_name(method) << " token " << i;
    }
  }
}

}  // namespace attn::io::test
