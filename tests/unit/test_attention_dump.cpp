// The attention-dump format (*.attn.safetensors): round trips in both precisions, the shapes and dtypes
// other writers (Python) produce, and the refusals, each naming the tensor.
#include "attn/io/attention_dump.h"
#include "attn/io/safetensors.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <fstream>

#include <bit>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace attn::io {
// Named, not anonymous: the unity builds compile several test files as one.
namespace attention_dump_tests {

namespace fs = std::filesystem;

using test::TempDir;

// heads maps of rows x cols with distinct values, each row summing to 1.
HeadStack stack(int heads, Index rows, Index cols, Precision precision, float seed) {
  HeadStack s(heads, rows, cols, precision);
  for (int h = 0; h < heads; ++h) {
    Matrix m(rows, cols);
    for (Index i = 0; i < rows; ++i) {
      for (Index j = 0; j < cols; ++j) m(i, j) = seed + static_cast<float>(h * 100 + i * 10 + j) + 1.0f;
      m.row(i) /= m.row(i).sum();
    }
    s.set_head(h, m);
  }
  return s;
}

LayerAttention layer(Stage stage, int n, HeadStack maps) { return LayerAttention{stage, n, std::move(maps)}; }

void expect_same_maps(const HeadStack& got, const HeadStack& want) {
  ASSERT_EQ(got.heads(), want.heads());
  ASSERT_EQ(got.rows(), want.rows());
  ASSERT_EQ(got.cols(), want.cols());
  ASSERT_EQ(got.precision(), want.precision());
  const auto n = static_cast<std::size_t>(want.heads() * want.rows() * want.cols());
  if (want.precision() == Precision::F32) {
    EXPECT_EQ(std::memcmp(got.f32(0), want.f32(0), n * sizeof(float)), 0);
  } else {
    EXPECT_EQ(std::memcmp(got.f16(0), want.f16(0), n * sizeof(Eigen::half)), 0);
  }
}

TEST(AttentionDump, RoundTripFloat32) {
  TempDir dir;
  LayeredTrace trace;
  trace.tokens = {"[CLS]", "hello", "wörld", "[SEP]"};
  trace.spans = {{0, 0}, {0, 5}, {6, 12}, {0, 0}};
  trace.layers.push_back(layer(Stage::Encoder, 1, stack(3, 4, 4, Precision::F32, 0.5f)));
  trace.layers.push_back(layer(Stage::Encoder, 0, stack(3, 4, 4, Precision::F32, 0.0f)));
  const fs::path path = dir / "bert.attn.safetensors";
  ASSERT_TRUE(write_attention_dump(path, trace, "bert-base-uncased", {101, 7592, 1059, 102}).has_value());

  const auto dump = read_attention_dump(path);
  ASSERT_TRUE(dump.has_value()) << dump.error().message();
  EXPECT_EQ(dump->model, "bert-base-uncased");
  EXPECT_EQ(dump->ids, (std::vector<int>{101, 7592, 1059, 102}));
  EXPECT_EQ(write_attention_dump(dir / "x.attn.safetensors", trace, "", {1, 2}).error().reason,
            "2 token ids for 4 tokens");
  EXPECT_EQ(dump->trace.tokens, trace.tokens);
  EXPECT_EQ(dump->trace.spans, trace.spans);
  EXPECT_TRUE(dump->trace.cross_rows.empty());
  ASSERT_EQ(dump->trace.layers.size(), 2u);
  EXPECT_EQ(dump->trace.layers[0].layer, 0);  // sorted by layer
  EXPECT_EQ(dump->trace.layers[1].layer, 1);
  expect_same_maps(dump->trace.find(Stage::Encoder, 0)->maps, trace.layers[1].maps);
  expect_same_maps(dump->trace.find(Stage::Encoder, 1)->maps, trace.layers[0].maps);
  EXPECT_EQ(dump->trace.layer_count(Stage::Encoder), 2);

  // The file is plain safetensors with the documented metadata.
  const auto st = SafeTensors::open(path);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->metadata().at("format"), "attnscope.attn");
  EXPECT_EQ(st->metadata().at("version"), "1");
  EXPECT_EQ(st->metadata().at("tokens"), "[\"[CLS]\",\"hello\",\"wörld\",\"[SEP]\"]");
  EXPECT_EQ(st->metadata().at("spans"), "[[0,0],[0,5],[6,12],[0,0]]");
  EXPECT_EQ(st->find("attn.encoder.0")->shape, (std::vector<std::int64_t>{3, 4, 4}));
  EXPECT_EQ(st->find("attn.encoder.0")->dtype, DType::F32);
}

TEST(AttentionDump, RoundTripFloat16WithCrossAttention) {
  TempDir dir;
  LayeredTrace trace;
  trace.tokens = {"a", "b", "c"};
  trace.cross_rows = {"x", "y"};
  trace.layers.push_back(layer(Stage::Decoder, 0, stack(2, 3, 3, Precision::F16, 0.0f)));
  trace.layers.push_back(layer(Stage::Cross, 0, stack(2, 2, 3, Precision::F16, 1.0f)));
  trace.layers.push_back(layer(Stage::Encoder, 0, stack(1, 3, 3, Precision::F32, 2.0f)));
  const fs::path path = dir / "t5.attn.safetensors";
  ASSERT_TRUE(write_attention_dump(path, trace).has_value());

  const auto st = SafeTensors::open(path);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->find("attn.cross.0")->dtype, DType::F16);
  EXPECT_EQ(st->find("attn.cross.0")->shape, (std::vector<std::int64_t>{2, 2, 3}));
  EXPECT_FALSE(st->metadata().contains("model"));

  const auto dump = read_attention_dump(path);
  ASSERT_TRUE(dump.has_value()) << dump.error().message();
  EXPECT_EQ(dump->trace.cross_rows, trace.cross_rows);
  EXPECT_TRUE(dump->trace.spans.empty());
  ASSERT_EQ(dump->trace.layers.size(), 3u);
  EXPECT_EQ(dump->trace.layers[0].stage, Stage::Encoder);  // encoder, decoder, cross
  EXPECT_EQ(dump->trace.layers[1].stage, Stage::Decoder);
  EXPECT_EQ(dump->trace.layers[2].stage, Stage::Cross);
  expect_same_maps(dump->trace.find(Stage::Decoder, 0)->maps, trace.layers[0].maps);
  expect_same_maps(dump->trace.find(Stage::Cross, 0)->maps, trace.layers[1].maps);
  expect_same_maps(dump->trace.find(Stage::Encoder, 0)->maps, trace.layers[2].maps);
}

// What a Python writer produces: [rows, cols] and [1, heads, rows, cols] shapes, BF16 and F64, other tensors.
TEST(AttentionDump, ReadsOtherShapesAndDtypes) {
  TempDir dir;
  const float two_by_two[4] = {0.25f, 0.75f, 1.0f, 0.0f};
  const std::uint16_t bf16[8] = {0x3F80, 0x0000, 0x3F00, 0x3F00,
                                 0x3E80, 0x3F40, 0x0000, 0x3F80};  // 1 0 .5 .5 / .25 .75 0 1
  const double f64[4] = {0.1, 0.9, 0.5, 0.5};
  const float logits[3] = {1, 2, 3};
  const fs::path path = dir / "python.attn.safetensors";
  ASSERT_TRUE(write_safetensors(path,
                                {
                                    f32_tensor("attn.encoder.0", {2, 2}, two_by_two),
                                    {"attn.encoder.1", DType::BF16, {1, 2, 2, 2}, std::as_bytes(std::span(bf16))},
                                    {"attn.encoder.2", DType::F64, {1, 2, 2}, std::as_bytes(std::span(f64))},
                                    f32_tensor("logits", {3}, logits),
                                },
                                {{"tokens", R"(["hi", "there"])"}})
                  .has_value());
  const auto dump = read_attention_dump(path);
  ASSERT_TRUE(dump.has_value()) << dump.error().message();
  ASSERT_EQ(dump->trace.layers.size(), 3u);
  const HeadStack& l0 = dump->trace.find(Stage::Encoder, 0)->maps;
  EXPECT_EQ(l0.heads(), 1);
  EXPECT_EQ(l0.at(0, 0, 1), 0.75f);
  const HeadStack& l1 = dump->trace.find(Stage::Encoder, 1)->maps;
  EXPECT_EQ(l1.heads(), 2);
  EXPECT_EQ(l1.precision(), Precision::F32);
  EXPECT_EQ(l1.at(1, 0, 1), 0.75f);
  EXPECT_EQ(l1.at(1, 1, 1), 1.0f);
  const HeadStack& l2 = dump->trace.find(Stage::Encoder, 2)->maps;
  EXPECT_EQ(l2.precision(), Precision::F32);
  EXPECT_EQ(l2.at(0, 0, 0), 0.1f);
  EXPECT_TRUE(dump->model.empty());
}

// F32 and F16 maps at aligned offsets are views of the mapped file, not copies (a 1 GiB dump costs the pages
// that are read); a map at an odd offset (after a tensor of an odd number of halves) is converted instead.
TEST(AttentionDump, MapsAreViewsOfTheFileWhereAligned) {
  TempDir dir;
  LayeredTrace trace;
  trace.tokens = {"a", "b", "c"};
  trace.layers.push_back(layer(Stage::Encoder, 0, stack(2, 3, 3, Precision::F32, 0.0f)));
  trace.layers.push_back(layer(Stage::Encoder, 1, stack(2, 3, 3, Precision::F16, 1.0f)));
  const fs::path path = dir / "view.attn.safetensors";
  ASSERT_TRUE(write_attention_dump(path, trace).has_value());
  auto dump = read_attention_dump(path);
  ASSERT_TRUE(dump.has_value()) << dump.error().message();
  for (int l = 0; l < 2; ++l) {
    const HeadStack& got = dump->trace.find(Stage::Encoder, l)->maps;
    EXPECT_TRUE(got.is_view()) << "layer " << l;
    expect_same_maps(got, trace.find(Stage::Encoder, l)->maps);
  }
  // The maps outlive the reader's objects (the mapping is kept by the stacks), and copies share it.
  const LayeredTrace copy = dump->trace;
  *dump = {};
  expect_same_maps(copy.find(Stage::Encoder, 0)->maps, trace.find(Stage::Encoder, 0)->maps);

  // Writers that do not pad the header (the format does not ask them to) leave the data at any offset: this
  // header's length is not a multiple of 4, so neither is the map's file offset.
  const std::string header =
      R"({"__metadata__":{"tokens":"[\"a\",\"b\",\"c\"]"},"attn.encoder.0":{"dtype":"F32","shape":[3,3],)"
      R"("data_offsets":[0,36]}})";
  ASSERT_NE((8 + header.size()) % 4, 0u);
  const float f32[9] = {1, 0, 0, 0, 1, 0, 0.5f, 0.25f, 0.25f};
  std::string file(8, '\0');
  for (int b = 0; b < 8; ++b) file[b] = static_cast<char>((header.size() >> (8 * b)) & 0xff);
  file += header;
  file.append(reinterpret_cast<const char*>(f32), sizeof f32);
  const fs::path odd = dir / "odd.attn.safetensors";
  std::ofstream(odd, std::ios::binary) << file;
  const auto unaligned = read_attention_dump(odd);
  ASSERT_TRUE(unaligned.has_value()) << unaligned.error().message();
  const HeadStack& maps = unaligned->trace.find(Stage::Encoder, 0)->maps;
  EXPECT_FALSE(maps.is_view());
  EXPECT_EQ(maps.at(0, 2, 1), 0.25f);
}

struct Refusal {
  std::vector<TensorData> tensors;
  std::map<std::string, std::string> metadata;
};

Error refused(const char* what, const Refusal& r, std::int64_t* tensor_offset = nullptr, const char* tensor = nullptr) {
  TempDir dir;
  const fs::path path = dir / "bad.attn.safetensors";
  EXPECT_TRUE(write_safetensors(path, r.tensors, r.metadata).has_value()) << what;
  if (tensor_offset && tensor) {
    const auto st = SafeTensors::open(path);
    *tensor_offset = st->data_start() + st->find(tensor)->begin;
  }
  const auto dump = read_attention_dump(path);
  EXPECT_FALSE(dump.has_value()) << what;
  if (dump) return {};
  EXPECT_EQ(dump.error().file, path.string()) << what;
  return dump.error();
}

TEST(AttentionDump, Refusals) {
  const float f4[4] = {0.5f, 0.5f, 0.5f, 0.5f};
  const float f8[8] = {};
  const std::map<std::string, std::string> two_tokens{{"tokens", R"(["a","b"])"}};
  std::int64_t at = -1;

  Error e = refused("no tokens", {{f32_tensor("attn.encoder.0", {2, 2}, f4)}, {}});
  EXPECT_EQ(e.reason,
            "no \"tokens\" in the metadata: an attention dump lists its tokens in __metadata__ as a JSON "
            "array of strings");
  EXPECT_EQ(e.offset, 8);

  e = refused("tokens not strings", {{f32_tensor("attn.encoder.0", {2, 2}, f4)}, {{"tokens", "[1, 2]"}}});
  EXPECT_EQ(e.reason, "metadata \"tokens\" entry 0 is number, not a string");
  e = refused("tokens not JSON", {{f32_tensor("attn.encoder.0", {2, 2}, f4)}, {{"tokens", "a b"}}});
  EXPECT_EQ(e.reason, "metadata \"tokens\" is not a JSON array of strings");

  e = refused("bad name", {{f32_tensor("attn.encoder.x", {2, 2}, f4)}, two_tokens}, &at, "attn.encoder.x");
  EXPECT_EQ(e.reason,
            "tensor \"attn.encoder.x\": an attention map is named attn.<stage>.<layer>, stage encoder, "
            "decoder or cross and layer 0, 1, ...");
  EXPECT_EQ(e.offset, at);
  e = refused("glimpse stage", {{f32_tensor("attn.glimpse.0", {2, 2}, f4)}, two_tokens});
  EXPECT_NE(e.reason.find("tensor \"attn.glimpse.0\": an attention map is named"), std::string::npos) << e.reason;
  e = refused("leading zero", {{f32_tensor("attn.encoder.01", {2, 2}, f4)}, two_tokens});
  EXPECT_NE(e.reason.find("tensor \"attn.encoder.01\""), std::string::npos) << e.reason;

  e = refused("wrong size", {{f32_tensor("attn.encoder.0", {1, 2, 4}, f8)}, two_tokens}, &at, "attn.encoder.0");
  EXPECT_EQ(e.reason, "tensor \"attn.encoder.0\": maps of 2 x 4 but the metadata lists 2 tokens x 2 tokens");
  EXPECT_EQ(e.offset, at);

  e = refused("batch of 2", {{f32_tensor("attn.encoder.0", {2, 1, 2, 2}, f8)}, two_tokens});
  EXPECT_EQ(e.reason,
            "tensor \"attn.encoder.0\": shape [2, 1, 2, 2]; an attention map is [heads, rows, cols], "
            "[rows, cols] or [1, heads, rows, cols]");

  e = refused("zero heads", {{f32_tensor("attn.encoder.0", {0, 2, 2}, {})}, two_tokens});
  EXPECT_EQ(e.reason, "tensor \"attn.encoder.0\": 0 heads");

  const std::int32_t ints[4] = {};
  e = refused("integers", {{{"attn.encoder.0", DType::I32, {2, 2}, std::as_bytes(std::span(ints))}}, two_tokens});
  EXPECT_EQ(e.reason, "tensor \"attn.encoder.0\": dtype I32; attention maps are F32, F16, BF16 or F64");

  e = refused("cross without rows", {{f32_tensor("attn.cross.0", {2, 2}, f4)}, two_tokens});
  EXPECT_EQ(e.reason,
            "tensor \"attn.cross.0\": cross attention needs its rows' tokens in the metadata as "
            "\"cross_rows\"");
  auto with_rows = two_tokens;
  with_rows["cross_rows"] = R"(["x"])";
  e = refused("cross rows", {{f32_tensor("attn.cross.0", {2, 2}, f4)}, with_rows});
  EXPECT_EQ(e.reason, "tensor \"attn.cross.0\": maps of 2 x 2 but the metadata lists 1 cross_rows x 2 tokens");

  e = refused("gap in layers", {{f32_tensor("attn.encoder.0", {2, 2}, f4), f32_tensor("attn.encoder.2", {2, 2}, f4),
                                 f32_tensor("attn.decoder.0", {2, 2}, f4)},
                                two_tokens});
  EXPECT_EQ(
      e.reason,
      "attn.encoder.1 is missing: the layers of a stage are numbered from 0 without gaps (found 2 layers: 0 and 2)");
  e = refused("no layer 0", {{f32_tensor("attn.decoder.1", {2, 2}, f4)}, two_tokens});
  EXPECT_EQ(e.reason,
            "attn.decoder.0 is missing: the layers of a stage are numbered from 0 without gaps (found 1 layer: 1)");

  e = refused("no maps", {{f32_tensor("logits", {4}, f4)}, two_tokens});
  EXPECT_EQ(e.reason, "holds no attention maps (tensors named attn.<stage>.<layer>)");

  auto other = two_tokens;
  other["format"] = "pt";
  e = refused("other format", {{f32_tensor("attn.encoder.0", {2, 2}, f4)}, other});
  EXPECT_EQ(e.reason, "metadata \"format\" is \"pt\", not \"attnscope.attn\": not an attention dump");
  auto newer = two_tokens;
  newer["version"] = "3";
  e = refused("newer version", {{f32_tensor("attn.encoder.0", {2, 2}, f4)}, newer});
  EXPECT_EQ(e.reason, "attention dump version \"3\"; this AttnScope reads versions 1 and 2");
  // Version 2 without its layout (a version-1 dump relabelled): the layout is what is missing.
  newer["version"] = "2";
  e = refused("version 2 of maps", {{f32_tensor("attn.encoder.0", {2, 2}, f4)}, newer});
  EXPECT_EQ(e.reason, "metadata \"layout\" is missing (a version-2 dump's layout: docs/USING.md, \"Attention dumps\")");
  auto spans = two_tokens;
  spans["spans"] = "[[0, 1]]";
  e = refused("spans", {{f32_tensor("attn.encoder.0", {2, 2}, f4)}, spans});
  EXPECT_EQ(e.reason,
            "metadata \"spans\" has 1 entries for 2 tokens; it is a JSON array of [begin, end] byte spans, "
            "one per token");
}

TEST(AttentionDump, WriterRefusals) {
  TempDir dir;
  const fs::path path = dir / "w.attn.safetensors";
  LayeredTrace trace;
  trace.tokens = {"a", "b"};
  EXPECT_EQ(write_attention_dump(path, trace).error().reason, "nothing to write: the trace has no attention maps");

  trace.layers.push_back(layer(Stage::Glimpse, 0, stack(1, 2, 2, Precision::F32, 0)));
  EXPECT_EQ(write_attention_dump(path, trace).error().reason,
            "a glimpse map cannot go into an attention dump, which holds encoder, decoder and cross attention");

  trace.layers = {layer(Stage::Encoder, 0, stack(1, 3, 2, Precision::F32, 0))};
  EXPECT_EQ(write_attention_dump(path, trace).error().reason,
            "attn.encoder.0: 1 maps of 3 x 2 but the trace has 2 tokens x 2 tokens");

  trace.layers = {layer(Stage::Encoder, 1, stack(1, 2, 2, Precision::F32, 0))};
  EXPECT_EQ(write_attention_dump(path, trace).error().reason,
            "attn.encoder.0 is missing: the layers of a stage are numbered from 0 without gaps (found 1 layer: 1)");

  trace.layers = {layer(Stage::Encoder, 0, stack(1, 2, 2, Precision::F32, 0)),
                  layer(Stage::Encoder, 0, stack(1, 2, 2, Precision::F32, 0))};
  EXPECT_EQ(write_attention_dump(path, trace).error().reason, "tensor \"attn.encoder.0\" is given twice");
  EXPECT_FALSE(fs::exists(path));
}

TEST(AttentionDump, FileNames) {
  EXPECT_TRUE(is_attention_dump_name("runs/bert.attn.safetensors"));
  EXPECT_TRUE(is_attention_dump_name("BERT.ATTN.SAFETENSORS"));
  EXPECT_FALSE(is_attention_dump_name("model.safetensors"));
  EXPECT_FALSE(is_attention_dump_name("attn.safetensors.bak"));
  EXPECT_FALSE(is_attention_dump_name("folder.attn.safetensors/model.safetensors"));
}

}  // namespace attention_dump_tests
}  // namespace attn::io
