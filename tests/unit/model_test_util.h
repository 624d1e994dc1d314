// What the unit tests of the demo models (test_seq2seq.cpp, test_classifier.cpp, test_captioner.cpp)
// share: tiny models' tensors built in memory under their torch names, loading them through
// Model::from_parts, config.json texts patched key by key, and the check of a config error.
#pragma once

#include "attn/io/safetensors.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

namespace attn::test {

// Named float32 tensors built in memory and parsed back as a safetensors file named `file_name`.
class TensorStore {
 public:
  // The value of element `i` of a tensor set without values.
  using Fill = float (*)(const std::string& name, std::size_t i);
  static float zeros(const std::string&, std::size_t) { return 0.0f; }

  explicit TensorStore(std::string file_name = "tiny.safetensors", Fill fill = zeros)
      : file_name_(std::move(file_name)), fill_(fill) {}

  void set(const std::string& name, std::vector<std::int64_t> shape, std::vector<float> values = {}) {
    std::size_t n = 1;
    for (auto s : shape) n *= static_cast<std::size_t>(s);
    if (values.empty()) {
      values.resize(n);
      for (std::size_t i = 0; i < n; ++i) values[i] = fill_(name, i);
    }
    ASSERT_EQ(values.size(), n) << name;
    store_[name] = {std::move(shape), std::move(values)};
  }
  void erase(const std::string& name) { store_.erase(name); }
  float& at(const std::string& name, std::size_t i) { return store_.at(name).second.at(i); }

  io::SafeTensors build() const {
    auto bytes = io::serialize_safetensors(list(), {});
    EXPECT_TRUE(bytes.has_value());
    auto parsed = io::SafeTensors::parse(std::move(*bytes), file_name_);
    EXPECT_TRUE(parsed.has_value()) << (parsed ? "" : parsed.error().message());
    return std::move(*parsed);
  }
  void write(const std::filesystem::path& path) const { ASSERT_TRUE(io::write_safetensors(path, list()).has_value()); }

 private:
  std::vector<io::TensorData> list() const {
    std::vector<io::TensorData> out;
    for (const auto& [n, t] : store_) out.push_back(io::f32_tensor(n, t.first, t.second));
    return out;
  }

  std::string file_name_;
  Fill fill_;
  std::map<std::string, std::pair<std::vector<std::int64_t>, std::vector<float>>> store_;
};

// The eight tensors of a one-layer bidirectional nn.GRU (`<base>.weight_ih_l0` ... `<base>.bias_hh_l0_reverse`),
// filled by the store's fill.
inline void set_bigru(TensorStore& t, const std::string& base, std::int64_t in, std::int64_t h) {
  for (const std::string suffix : {"_l0", "_l0_reverse"}) {
    t.set(base + ".weight_ih" + suffix, {3 * h, in});
    t.set(base + ".weight_hh" + suffix, {3 * h, h});
    t.set(base + ".bias_ih" + suffix, {3 * h});
    t.set(base + ".bias_hh" + suffix, {3 * h});
  }
}

// Model::from_parts(config, tensors): the model, or nullptr and a test failure.
template <class Model, class Config>
std::shared_ptr<const Model> load_model(const Config& config, const TensorStore& tensors) {
  auto model = Model::from_parts(config, tensors.build());
  EXPECT_TRUE(model.has_value()) << (model ? "" : model.error().message());
  return model ? *model : nullptr;
}

// The message of Model::from_parts's error; a model that loads is a test failure.
template <class Model, class Config>
std::string load_error(const Config& config, const TensorStore& tensors) {
  auto model = Model::from_parts(config, tensors.build());
  EXPECT_FALSE(model.has_value());
  return model ? std::string() : model.error().message();
}

// Model::from_parts with one tensor `extra` more than the model reads: it loads, and its one warning names
// that tensor.
template <class Model, class Config>
void expect_unused_warning(const Config& config, TensorStore tensors, const std::string& extra) {
  tensors.set(extra, {1});
  auto model = Model::from_parts(config, tensors.build());
  ASSERT_TRUE(model.has_value()) << model.error().message();
  ASSERT_EQ((*model)->warnings().size(), 1u);
  EXPECT_NE((*model)->warnings()[0].find(extra), std::string::npos) << (*model)->warnings()[0];
}

// An empty folder of this process's own under the temporary directory, for a test that writes a model
// folder (the test removes it).
inline std::filesystem::path fresh_dir(const std::string& stem) {
  const auto dir = std::filesystem::temp_directory_path() / (stem + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// `config` with `patch` merged over its keys (a null value removes the key), pretty-printed as config.json.
inline std::string patched_json(nlohmann::json config, const nlohmann::json& patch) {
  for (const auto& [k, v] : patch.items()) {
    if (v.is_null()) {
      config.erase(k);
    } else {
      config[k] = v;
    }
  }
  return config.dump(2);
}

// A config.json that must not parse: `patch` merged over a valid config, the key the error must name and
// what it must say. Rows of a TEST_P (its name the test's).
struct ConfigErrorCase {
  const char* name;
  nlohmann::json patch;
  const char* key;
  const char* reason;
};
inline std::string config_case_name(const ::testing::TestParamInfo<ConfigErrorCase>& info) { return info.param.name; }

// Config::parse(text, "models/x/config.json") fails naming that file, the key and the reason, on the line
// of the key when the patch sets it (`text` pretty-printed, as patched_json writes it).
template <class Config>
void expect_config_error(const std::string& text, const ConfigErrorCase& p) {
  auto c = Config::parse(text, "models/x/config.json");
  ASSERT_FALSE(c.has_value());
  const std::string message = c.error().message();
  EXPECT_EQ(c.error().file, "models/x/config.json");
  EXPECT_NE(message.find(p.key), std::string::npos) << message;
  EXPECT_NE(message.find(p.reason), std::string::npos) << message;
  if (p.patch.contains(p.key) && !p.patch[p.key].is_null()) {
    const auto at = text.find("\"" + std::string(p.key) + "\"");
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
    EXPECT_EQ(c.error().line, line) << message;
  }
}

}  // namespace attn::test
