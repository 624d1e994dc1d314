// Version 2 of the attention-dump format (attn/io/attention_dump.h): a run kept on demand written and read back from
// the mapped file gives every head's map, row and column exactly as the run did (the same float32 queries and keys,
// the same code); the statistics and overviews come back; a truncated file, a changed byte in each kind of tensor,
// a header that lies about the layout and a cancelled write are refused with the file, the offset and the reason.
#include "attn/io/attention_dump.h"
#include "attn/io/safetensors.h"
#include "attn/models/transformer.h"
#include "test_util.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace attn::io {
namespace {

namespace fs = std::filesystem;
using models::RunOptions;
using models::TransformerModel;
using models::TransformerRun;
using models::TransformerRunner;
using test::TempDir;

std::vector<int> random_ids(Index n, int vocab, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pick(0, vocab - 1);
  std::vector<int> ids(static_cast<std::size_t>(n));
  for (int& id : ids) id = pick(rng);
  return ids;
}

TransformerRun run_on_demand(const std::string& decoder, Index tokens) {
  auto model = TransformerModel::load(fs::path(ATTN_TEST_DATA_DIR) / "decoders" / decoder);
  EXPECT_TRUE(model) << model.error().message();
  if (!model) return {};
  TransformerRunner runner(*model);
  RunOptions options;
  options.keep = RunOptions::Keep::OnDemand;
  auto run = runner.run_ids(random_ids(std::min(tokens, (*model)->config().context()), (*model)->config().vocab_size,
                                       static_cast<unsigned>(tokens)),
                            {}, options);
  EXPECT_TRUE(run) << run.error().message();
  return run ? std::move(*run) : TransformerRun{};
}

std::vector<std::uint8_t> file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_bytes(const fs::path& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

Result<void> write_run(const fs::path& path, const TransformerRun& run) {
  return write_attention_dump(path, run.attention, run.on_demand, "fixture", run.ids);
}

class DumpV2 : public ::testing::TestWithParam<std::string> {};

TEST_P(DumpV2, ReadBackEqualsTheRunExactly) {
  const TransformerRun run = run_on_demand(GetParam(), 45);
  ASSERT_FALSE(run.on_demand.empty());
  TempDir dir;
  const fs::path path = dir / "run.attn.safetensors";
  ASSERT_TRUE(write_run(path, run));
  auto dump = read_attention_dump(path);
  ASSERT_TRUE(dump) << dump.error().message();
  EXPECT_EQ(dump->version, 2);
  EXPECT_EQ(dump->trace.tokens, run.attention.tokens);
  EXPECT_EQ(dump->ids, run.ids);
  EXPECT_EQ(dump->model, "fixture");
  EXPECT_TRUE(dump->trace.layers.empty());
  ASSERT_EQ(dump->on_demand.size(), run.on_demand.size());
  for (std::size_t l = 0; l < run.on_demand.size(); ++l) {
    const OnDemandLayer& want = run.on_demand[l];
    const OnDemandLayer& got = dump->on_demand[l];
    EXPECT_TRUE(got.is_external());
    EXPECT_EQ(got.heads(), want.heads());
    EXPECT_EQ(got.kv_heads(), want.kv_heads());
    EXPECT_EQ(got.window(), want.window());
    EXPECT_EQ(got.softcap(), want.softcap());
    EXPECT_EQ(got.causal(), want.causal());
    const Index n = want.tokens();
    for (int h = 0; h < want.heads(); ++h) {
      SCOPED_TRACE("layer " + std::to_string(l) + " head " + std::to_string(h));
      ASSERT_TRUE(got.verify(h));
      // The same float32 inputs and the same code: the same bits.
      EXPECT_EQ((got.map(h) - want.map(h)).cwiseAbs().maxCoeff(), 0.0f);
      std::vector<float> a(static_cast<std::size_t>(n)), b(a.size());
      got.column(h, n / 2, a.data());
      want.column(h, n / 2, b.data());
      EXPECT_EQ(a, b);
      const auto& gs = got.stats(h);
      const auto& ws = want.stats(h);
      EXPECT_EQ(gs.entropy, ws.entropy);
      EXPECT_EQ(gs.distance, ws.distance);
      EXPECT_EQ(gs.first_mass, ws.first_mass);
      EXPECT_EQ(gs.max_weight, ws.max_weight);
      EXPECT_EQ(gs.rows, ws.rows);
      EXPECT_EQ(gs.received, ws.received);
      // The stored overview: the max-pooled map within float16's rounding (a relative 2^-11, or 2^-25 below its
      // normal range, 6.1e-5).
      ASSERT_EQ(got.overview_factor(), dump_overview_factor(n));
      for (const Index factor : {Index{1}, Index{4}, Index{16}}) {
        const Index side = (n + factor - 1) / factor;
        Matrix stored(side, side), exact(side, side);
        ASSERT_TRUE(got.overview_pooled(h, factor, 0, side, 0, side, stored.data(), side));
        want.pooled(h, factor, OnDemandLayer::Pooling::Max, 0, side, 0, side, exact.data(), side);
        EXPECT_LE(((stored - exact).cwiseAbs() - exact.cwiseAbs() * (1.0f / 2048.0f)).maxCoeff(), 0x1p-25f);
        EXPECT_GT(exact.maxCoeff(), 0.0f);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Decoders, DumpV2,
                         ::testing::Values("llama", "mistral-window", "gemma2-softcap", "qwen3-head-dim"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& ch : name)
                             if (ch == '-') ch = '_';
                           return name;
                         });

TEST(DumpV2Overview, FactorPutsTheMapIn512Cells) {
  EXPECT_EQ(dump_overview_factor(1), 1);
  EXPECT_EQ(dump_overview_factor(512), 1);
  EXPECT_EQ(dump_overview_factor(513), 2);
  EXPECT_EQ(dump_overview_factor(32768), 64);
  EXPECT_EQ(dump_overview_factor(32769), 128);
}

// A run's dump for the refusal tests, with the offsets of its tensors.
class DumpV2Damage : public ::testing::Test {
 protected:
  void SetUp() override {
    run_ = run_on_demand("llama", 40);
    good_ = dir_ / "good.attn.safetensors";
    ASSERT_TRUE(write_run(good_, run_));
  }
  // The good file with byte `offset` (from the file's start) changed.
  fs::path flipped(std::int64_t offset, const std::string& name) const {
    auto bytes = file_bytes(good_);
    bytes.at(static_cast<std::size_t>(offset)) ^= 0x10;
    const fs::path path = dir_ / name;
    write_bytes(path, bytes);
    return path;
  }
  std::int64_t tensor_offset(const std::string& tensor) const {
    auto st = SafeTensors::open(good_);
    EXPECT_TRUE(st);
    const TensorInfo* t = st->find(tensor);
    EXPECT_NE(t, nullptr) << tensor;
    return st->data_start() + (t ? t->begin : 0);
  }
  TempDir dir_;
  TransformerRun run_;
  fs::path good_;
};

TEST_F(DumpV2Damage, TruncatedFileIsRefusedWithItsLength) {
  auto bytes = file_bytes(good_);
  bytes.resize(bytes.size() - 100);
  const fs::path path = dir_ / "truncated.attn.safetensors";
  write_bytes(path, bytes);
  auto dump = read_attention_dump(path);
  ASSERT_FALSE(dump);
  EXPECT_EQ(dump.error().file, path.string());
  EXPECT_GE(dump.error().offset, 0);
  EXPECT_EQ(dump.error().kind, ErrorKind::Truncated) << dump.error().message();
}

TEST_F(DumpV2Damage, ChangedQueryByteIsRefusedWhenTheHeadIsFirstUsed) {
  const std::string tensor = "layer.1.head.2.queries";
  const std::int64_t at = tensor_offset(tensor) + 77;
  const fs::path path = flipped(at, "queries.attn.safetensors");
  auto dump = read_attention_dump(path);
  ASSERT_TRUE(dump) << dump.error().message();  // opening reads no queries
  const OnDemandLayer& layer = dump->on_demand[1];
  EXPECT_TRUE(layer.verify(0));
  auto bad = layer.verify(2);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().kind, ErrorKind::Mismatch);
  EXPECT_EQ(bad.error().file, path.string());
  EXPECT_EQ(bad.error().offset, tensor_offset(tensor));
  EXPECT_NE(bad.error().message().find(tensor), std::string::npos) << bad.error().message();
  EXPECT_NE(bad.error().message().find("checksum"), std::string::npos) << bad.error().message();
  EXPECT_FALSE(layer.verify(2));  // remembered
  // Writing the damaged run again is refused too.
  EXPECT_FALSE(write_attention_dump(dir_ / "again.attn.safetensors", dump->trace, dump->on_demand));
}

TEST_F(DumpV2Damage, ChangedKeyByteFailsEveryHeadOfItsGroup) {
  const auto& first = run_.on_demand.front();
  ASSERT_LT(first.kv_heads(), first.heads());  // the fixture groups its queries
  const std::string tensor = "layer.0.group.0.keys";
  const fs::path path = flipped(tensor_offset(tensor) + 5, "keys.attn.safetensors");
  auto dump = read_attention_dump(path);
  ASSERT_TRUE(dump) << dump.error().message();
  const int per_group = first.heads() / first.kv_heads();
  for (int h = 0; h < first.heads(); ++h) {
    EXPECT_EQ(static_cast<bool>(dump->on_demand[0].verify(h)), h >= per_group) << "head " << h;
  }
}

TEST_F(DumpV2Damage, ChangedRowStatisticsAreRefused) {
  for (const std::string tensor : {"layer.0.head.1.shift", "layer.0.head.1.inv_sum"}) {
    const fs::path path = flipped(tensor_offset(tensor) + 2, "rows.attn.safetensors");
    auto dump = read_attention_dump(path);
    ASSERT_TRUE(dump) << dump.error().message();
    auto bad = dump->on_demand[0].verify(1);
    ASSERT_FALSE(bad) << tensor;
    EXPECT_EQ(bad.error().offset, tensor_offset(tensor));
  }
}

TEST_F(DumpV2Damage, ChangedOverviewStatsOrReceivedAreRefusedAtOpen) {
  for (const std::string tensor : {"layer.1.head.0.overview", "layer.0.stats", "layer.1.head.3.received"}) {
    const fs::path path = flipped(tensor_offset(tensor) + 3, "open.attn.safetensors");
    auto dump = read_attention_dump(path);
    ASSERT_FALSE(dump) << tensor;
    EXPECT_EQ(dump.error().kind, ErrorKind::Mismatch);
    EXPECT_EQ(dump.error().offset, tensor_offset(tensor));
    EXPECT_NE(dump.error().message().find(tensor), std::string::npos) << dump.error().message();
  }
}

// The good file's header rewritten by `edit` (the data kept; the header padded to its length again).
fs::path with_header(const fs::path& good, const fs::path& out, const std::function<void(nlohmann::json&)>& edit) {
  auto bytes = file_bytes(good);
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | bytes[static_cast<std::size_t>(i)];
  auto header = nlohmann::json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<std::ptrdiff_t>(n));
  edit(header);
  std::string text = header.dump();
  while (text.size() % 8 != 0) text += ' ';
  std::vector<std::uint8_t> out_bytes(8);
  for (int i = 0; i < 8; ++i)
    out_bytes[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(text.size() >> (8 * i));
  out_bytes.insert(out_bytes.end(), text.begin(), text.end());
  out_bytes.insert(out_bytes.end(), bytes.begin() + 8 + static_cast<std::ptrdiff_t>(n), bytes.end());
  write_bytes(out, out_bytes);
  return out;
}

TEST_F(DumpV2Damage, HeaderThatLiesIsRefused) {
  struct Case {
    const char* what;
    std::function<void(nlohmann::json&)> edit;
    const char* says;
  };
  const auto layout = [](nlohmann::json& h, const char* key, nlohmann::json value) {
    auto l = nlohmann::json::parse(h["__metadata__"]["layout"].get<std::string>());
    l[key] = std::move(value);
    h["__metadata__"]["layout"] = l.dump();
  };
  const std::vector<Case> cases = {
      {"more layers",
       [&](nlohmann::json& h) {
         layout(h, "layers", 3);
         layout(h, "windows", nlohmann::json::array({0, 0, 0}));
       },
       "needs 69 tensors named layer.*; the file has 46"},
      {"a billion layers", [&](nlohmann::json& h) { layout(h, "layers", 1000000000); }, "outside"},
      {"no layout", [](nlohmann::json& h) { h["__metadata__"].erase("layout"); }, "\"layout\" is missing"},
      {"no checksums", [](nlohmann::json& h) { h["__metadata__"].erase("crc32"); }, "\"crc32\" is missing"},
      {"a checksum missing",
       [](nlohmann::json& h) {
         auto c = nlohmann::json::parse(h["__metadata__"]["crc32"].get<std::string>());
         c.erase("layer.0.head.0.queries");
         h["__metadata__"]["crc32"] = c.dump();
       },
       "no checksum for tensor \"layer.0.head.0.queries\""},
      {"heads not sharing key heads", [&](nlohmann::json& h) { layout(h, "kv_heads", 3); }, "evenly"},
      {"an overview factor not a power of two", [&](nlohmann::json& h) { layout(h, "overview_factor", 3); },
       "power of two"},
      {"another head size", [&](nlohmann::json& h) { layout(h, "head_dim", 8); }, "the layout needs F32"},
      {"windows of another count", [&](nlohmann::json& h) { layout(h, "windows", nlohmann::json::array({0})); },
       "one whole number per layer"},
      {"version 3", [](nlohmann::json& h) { h["__metadata__"]["version"] = "3"; }, "versions 1 and 2"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const fs::path path = with_header(good_, dir_ / "lies.attn.safetensors", c.edit);
    auto dump = read_attention_dump(path);
    ASSERT_FALSE(dump);
    EXPECT_EQ(dump.error().file, path.string());
    EXPECT_GE(dump.error().offset, 0);
    EXPECT_NE(dump.error().message().find(c.says), std::string::npos) << dump.error().message();
  }
}

TEST_F(DumpV2Damage, CancelledWriteLeavesNoFile) {
  const fs::path path = dir_ / "cancelled.attn.safetensors";
  int calls = 0;
  auto written = write_attention_dump(path, run_.attention, run_.on_demand, {}, {},
                                      [&](double, const std::string&) { return ++calls < 3; });
  ASSERT_FALSE(written);
  EXPECT_EQ(written.error().kind, ErrorKind::Cancelled);
  EXPECT_EQ(calls, 3);
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(DumpV2Damage, InMemoryParseAgreesWithTheFile) {
  auto dump = parse_attention_dump(file_bytes(good_), "bytes");
  ASSERT_TRUE(dump) << dump.error().message();
  ASSERT_EQ(dump->on_demand.size(), run_.on_demand.size());
  EXPECT_TRUE(dump->on_demand[0].verify(0));
  EXPECT_EQ((dump->on_demand[0].map(0) - run_.on_demand[0].map(0)).cwiseAbs().maxCoeff(), 0.0f);
}

}  // namespace
}  // namespace attn::io
