// TransformerModel / TransformerRunner: loader errors, pickled checkpoints, sharded weights, truncation, masks,
// precision, session reuse and cancellation. The model folders are the parity fixtures
// (tests/data/transformers, written by tools/parity/make_transformer_fixtures.py).
#include "attn/io/safetensors.h"
#include "attn/models/transformer.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace attn::models {
// Named, not anonymous: the unity builds compile several test files as one.
namespace transformer_tests {

namespace fs = std::filesystem;

fs::path fixture(const std::string& name) { return fs::path(ATTN_TEST_DATA_DIR) / "transformers" / name; }

// A scratch folder removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() /
           ("attn_transformer_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void copy_folder(const fs::path& from, const fs::path& to, bool with_weights = true) {
  for (const auto& e : fs::directory_iterator(from)) {
    const auto name = e.path().filename().string();
    if (!with_weights && name == "model.safetensors") continue;
    fs::copy_file(e.path(), to / name, fs::copy_options::overwrite_existing);
  }
}

std::shared_ptr<const TransformerModel> load_fixture(const std::string& name) {
  auto m = TransformerModel::load(fixture(name));
  EXPECT_TRUE(m) << (m ? "" : m.error().message());
  return m ? *m : nullptr;
}

// The fixture's weights with `edit` applied to the list of tensors, as an in-memory SafeTensors.
template <class Edit>
Result<io::SafeTensors> edited_weights(const std::string& name, Edit edit, std::vector<float>* keep_alive) {
  auto st = io::SafeTensors::open(fixture(name) / "model.safetensors");
  if (!st) return std::unexpected(st.error());
  std::vector<io::TensorData> tensors;
  for (const auto& t : st->tensors()) tensors.push_back({t.name, t.dtype, t.shape, st->bytes(t)});
  edit(tensors, keep_alive);
  auto bytes = io::serialize_safetensors(tensors, {});
  if (!bytes) return std::unexpected(bytes.error());
  return io::SafeTensors::parse(std::move(*bytes), "edited.safetensors");
}

TEST(TransformerLoad, LoadsEveryFixtureFolder) {
  for (const char* name : {"bert", "bert_legacy", "bert_bare", "distilbert", "gpt2", "vit"}) {
    auto m = TransformerModel::load(fixture(name));
    ASSERT_TRUE(m) << name << ": " << m.error().message();
    EXPECT_EQ((*m)->config().layers, 2) << name;
    EXPECT_NE((*m)->description().find("2 layers"), std::string::npos) << (*m)->description();
    // Pooler, seq_relationship and GPT-2's attn.bias buffers are known and ignored without a warning.
    EXPECT_TRUE((*m)->warnings().empty()) << name << ": " << (*m)->warnings().front();
    EXPECT_EQ((*m)->has_prediction_head(), std::string(name) != "bert_bare") << name;
    EXPECT_EQ((*m)->tokenizer() == nullptr, std::string(name) == "vit") << name;
  }
}

TEST(TransformerLoad, MissingTensorNamesFileAndTensor) {
  auto config = load_config(fixture("gpt2"));
  ASSERT_TRUE(config) << config.error().message();
  std::vector<float> keep;
  auto weights = edited_weights(
      "gpt2",
      [](auto& t, auto*) { std::erase_if(t, [](const io::TensorData& d) { return d.name == "h.1.mlp.c_fc.weight"; }); },
      &keep);
  ASSERT_TRUE(weights) << weights.error().message();
  auto m = TransformerModel::from_parts(*config, *weights, nullptr);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().file, "edited.safetensors");
  EXPECT_NE(m.error().reason.find("h.1.mlp.c_fc.weight"), std::string::npos) << m.error().message();
  EXPECT_NE(m.error().reason.find("missing"), std::string::npos) << m.error().message();
}

TEST(TransformerLoad, WrongShapeNamesTensorShapeAndOffset) {
  auto config = load_config(fixture("bert"));
  ASSERT_TRUE(config) << config.error().message();
  std::vector<float> keep(64 * 63, 0.5f);
  auto weights = edited_weights(
      "bert",
      [](auto& t, auto* values) {
        for (auto& d : t) {
          if (d.name == "bert.encoder.layer.1.attention.self.key.weight") {
            d.dtype = io::DType::F32;
            d.shape = {64, 63};
            d.data = std::as_bytes(std::span<const float>(*values));
          }
        }
      },
      &keep);
  ASSERT_TRUE(weights) << weights.error().message();
  auto m = TransformerModel::from_parts(*config, *weights, nullptr);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().file, "edited.safetensors");
  EXPECT_NE(m.error().reason.find("bert.encoder.layer.1.attention.self.key.weight"), std::string::npos)
      << m.error().message();
  EXPECT_NE(m.error().reason.find("[64, 63]"), std::string::npos) << m.error().message();
  EXPECT_NE(m.error().reason.find("[64, 64]"), std::string::npos) << m.error().message();
  EXPECT_GT(m.error().offset, 0) << m.error().message();
}

TEST(TransformerLoad, UnusedTensorIsAWarningNotAnError) {
  auto config = load_config(fixture("distilbert"));
  ASSERT_TRUE(config) << config.error().message();
  std::vector<float> keep(3, 1.0f);
  auto weights = edited_weights(
      "distilbert",
      [](auto& t, auto* values) {
        t.push_back({"pre_classifier.weight", io::DType::F32, {3}, std::as_bytes(std::span<const float>(*values))});
      },
      &keep);
  ASSERT_TRUE(weights) << weights.error().message();
  auto m = TransformerModel::from_parts(*config, *weights, nullptr);
  ASSERT_TRUE(m) << m.error().message();
  ASSERT_EQ((*m)->warnings().size(), 1u);
  EXPECT_NE((*m)->warnings()[0].find("pre_classifier.weight"), std::string::npos) << (*m)->warnings()[0];
}

TEST(TransformerLoad, PickledCheckpointIsRefusedWithHowToConvert) {
  EXPECT_TRUE(is_pickled_checkpoint("pytorch_model.bin"));
  EXPECT_TRUE(is_pickled_checkpoint("pytorch_model-00001-of-00002.bin"));
  EXPECT_TRUE(is_pickled_checkpoint("weights.pt"));
  EXPECT_TRUE(is_pickled_checkpoint("model.PTH"));
  EXPECT_TRUE(is_pickled_checkpoint("last.ckpt"));
  EXPECT_TRUE(is_pickled_checkpoint("x.pkl"));
  EXPECT_FALSE(is_pickled_checkpoint("model.safetensors"));
  EXPECT_FALSE(is_pickled_checkpoint("vocab.txt"));

  TempDir dir;
  copy_folder(fixture("bert"), dir.path, false);
  { std::ofstream(dir.path / "pytorch_model.bin") << "\x80\x02pickle"; }
  for (const fs::path& p : {dir.path, dir.path / "pytorch_model.bin"}) {
    auto m = TransformerModel::load(p);
    ASSERT_FALSE(m);
    const std::string msg = m.error().message();
    EXPECT_NE(msg.find("pytorch_model.bin is a pickled PyTorch checkpoint"), std::string::npos) << msg;
    EXPECT_NE(msg.find("unpickling runs code"), std::string::npos) << msg;
    EXPECT_NE(msg.find("from safetensors.torch import save_file"), std::string::npos) << msg;
    EXPECT_NE(msg.find("torch.load('pytorch_model.bin'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("save_pretrained(folder, safe_serialization=True)"), std::string::npos) << msg;
  }
}

TEST(TransformerLoad, ShardedIndexLoadsTheSameModel) {
  TempDir dir;
  copy_folder(fixture("bert"), dir.path, false);
  auto st = io::SafeTensors::open(fixture("bert") / "model.safetensors");
  ASSERT_TRUE(st) << st.error().message();
  std::vector<io::TensorData> first, second;
  nlohmann::json index;
  for (const auto& t : st->tensors()) {
    const bool a = t.name.find("layer.1.") == std::string::npos;
    (a ? first : second).push_back({t.name, t.dtype, t.shape, st->bytes(t)});
    index["weight_map"][t.name] = a ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors";
  }
  ASSERT_TRUE(io::write_safetensors(dir.path / "model-00001-of-00002.safetensors", first));
  ASSERT_TRUE(io::write_safetensors(dir.path / "model-00002-of-00002.safetensors", second));
  std::ofstream(dir.path / "model.safetensors.index.json") << index.dump();

  auto sharded = TransformerModel::load(dir.path);
  ASSERT_TRUE(sharded) << sharded.error().message();
  auto whole = load_fixture("bert");
  ASSERT_TRUE(whole);
  TransformerRunner a(*sharded), b(whole);
  auto ra = a.run_ids({2, 10, 13, 4, 3});
  auto rb = b.run_ids({2, 10, 13, 4, 3});
  ASSERT_TRUE(ra && rb);
  for (int l = 0; l < 2; ++l) EXPECT_EQ(ra->attention.layers[l].maps.head(3), rb->attention.layers[l].maps.head(3));
}

// A sharded checkpoint as its index says it is: every tensor in the one shard weight_map names. A tensor present in
// two shards was taken from the alphabetically first file, and a wholly wrong weight_map loaded.
TEST(TransformerLoad, ShardsHonourTheWeightMapExactly) {
  auto st = io::SafeTensors::open(fixture("bert") / "model.safetensors");
  ASSERT_TRUE(st) << st.error().message();
  const std::string one = "model-00001-of-00002.safetensors", two = "model-00002-of-00002.safetensors";
  // Writes the two shards and an index; `map` says which shard each tensor is listed in, `extra` adds a copy of a
  // tensor to the other shard as well.
  const auto write = [&](const TempDir& dir, auto shard_of, auto listed_in, const std::string& extra) {
    copy_folder(fixture("bert"), dir.path, false);
    std::vector<io::TensorData> first, second;
    nlohmann::json index;
    for (const auto& t : st->tensors()) {
      const bool a = shard_of(t.name);
      (a ? first : second).push_back({t.name, t.dtype, t.shape, st->bytes(t)});
      if (t.name == extra) (a ? second : first).push_back({t.name, t.dtype, t.shape, st->bytes(t)});
      if (const auto file = listed_in(t.name, a ? one : two); !file.empty()) index["weight_map"][t.name] = file;
    }
    ASSERT_TRUE(io::write_safetensors(dir.path / one, first));
    ASSERT_TRUE(io::write_safetensors(dir.path / two, second));
    std::ofstream(dir.path / "model.safetensors.index.json") << index.dump(1);
  };
  const auto in_first = [](const std::string& name) { return name.find("layer.1.") == std::string::npos; };
  const auto as_stored = [](const std::string&, const std::string& file) { return file; };
  const auto refused = [](const TempDir& dir, const std::string& reason) {
    auto m = TransformerModel::load(dir.path);
    ASSERT_FALSE(m) << "loaded";
    EXPECT_EQ(m.error().kind, ErrorKind::Mismatch) << m.error().message();
    EXPECT_EQ(m.error().file, (dir.path / "model.safetensors.index.json").string());
    EXPECT_EQ(m.error().reason, reason);
  };
  const std::string tensor = "bert.encoder.layer.1.output.dense.bias";
  {
    TempDir dir;  // a copy in both shards, the map naming the second
    write(dir, in_first, as_stored, tensor);
    refused(dir, "\"" + tensor + "\" is in both " + two + " and " + one + "; weight_map names " + two +
                     ": a tensor is stored in one shard");
  }
  {
    TempDir dir;  // every tensor listed in the shard that does not hold it
    write(
        dir, in_first, [&](const std::string&, const std::string& file) { return file == one ? two : one; }, "");
    refused(dir, "weight_map puts \"bert.embeddings.LayerNorm.bias\" in " + two + ", which does not hold it (" + one +
                     " does)");
  }
  {
    TempDir dir;  // a tensor the map does not list
    write(
        dir, in_first,
        [&](const std::string& name, const std::string& file) { return name == tensor ? std::string() : file; }, "");
    refused(dir, two + " holds \"" + tensor + "\", which weight_map does not list");
  }
  {
    TempDir dir;  // as the index says: loads
    write(dir, in_first, as_stored, "");
    EXPECT_TRUE(TransformerModel::load(dir.path));
  }
  // A tensor listed twice (the JSON's last would win) is refused at its byte.
  const auto twice =
      parse_safetensors_index(R"({"weight_map": {"a": "x.safetensors", "a": "y.safetensors"}})", "index.json");
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().reason, "lists \"a\" twice (first at byte 16): a tensor is in one shard");
  EXPECT_EQ(twice.error().offset, 38);
}

// A shard that is a symbolic link to some other file (here a text file standing for ~/.ssh/id_rsa): the refusal
// names the shard and says it is not a safetensors file, and echoes none of the other file's bytes.
TEST(TransformerLoad, ALinkedShardEchoesNoByteOfItsTarget) {
  TempDir dir, elsewhere;
  copy_folder(fixture("bert"), dir.path, false);
  const fs::path secret = elsewhere.path / "secret.txt";
  std::ofstream(secret) << "SECRET-KEY-9f2c7a1b\nsecond line\n";
  fs::create_symlink(secret, dir.path / "model.safetensors");
  auto m = TransformerModel::load(dir.path);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().file, (dir.path / "model.safetensors").string());
  EXPECT_EQ(m.error().reason,
            "not a safetensors file: it begins with text, where a safetensors file begins with an 8-byte header "
            "length and a JSON header");
  EXPECT_EQ(m.error().message().find("SECRET"), std::string::npos) << m.error().message();
}

// Generation: the estimate of the whole request is checked against the budget before anything is allocated (the
// refusal says the figure, the limit and what would fit), and the run keeps both figures.
TEST(TransformerGenerate, RequestOverTheBudgetIsRefusedWithTheEstimate) {
  auto m = TransformerModel::load(fs::path(ATTN_SOURCE_DIR) / "resources" / "models" / "stories260k");
  ASSERT_TRUE(m) << m.error().message();
  const TransformerConfig& c = (*m)->config();
  TransformerRunner runner(*m);
  const std::vector<int> prompt{1, 403, 407, 261};
  GenerateOptions g;
  g.max_new_tokens = 400;
  RunOptions o;
  o.memory_limit = generate_bytes(c, 4, 100, o);  // room for 100 new tokens
  auto refused = runner.generate(prompt, g, o);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::TooLarge);
  const std::string& why = refused.error().reason;
  EXPECT_EQ(why.find("generating 400 new tokens after a prompt of 4 needs about "), 0u) << why;
  EXPECT_NE(why.find(" allowed; up to 100 new tokens would fit"), std::string::npos) << why;
  g.max_new_tokens = 100;
  g.stop_at_eos = false;
  auto fits = runner.generate(prompt, g, o);
  ASSERT_TRUE(fits) << fits.error().message();
  EXPECT_EQ(fits->ids.size(), 104u);
  EXPECT_EQ(fits->memory_estimate, generate_bytes(c, 4, 100, o));
  EXPECT_EQ(fits->memory_budget, o.memory_limit);
  // The estimate grows as the square of the tokens (the maps), and never overflows.
  EXPECT_GT(generate_bytes(c, 4, 400, o), 10 * generate_bytes(c, 4, 100, o) / 2);
  TransformerConfig huge = c;
  huge.layers = 1024;
  huge.heads = 1024;
  EXPECT_GT(generate_bytes(huge, 1, kMaxDecoderContext, o), std::size_t{1} << 60);
}

// The maps grow as the tokens arrive (doubling from the prompt and 64 tokens): a generation over several doublings
// gives the maps and hidden states one forward over the same ids gives; GPT-2's cache grows with them.
TEST(TransformerGenerate, MapsGrownAsTokensArriveEqualOneForward) {
  struct Case {
    fs::path folder;
    std::vector<int> prompt;
    int fresh;
  };
  const fs::path models = fs::path(ATTN_SOURCE_DIR) / "resources" / "models";
  for (const Case& k :
       {Case{models / "stories260k", {1, 403, 407, 261}, 200}, Case{models / "induction-gpt2", {5, 9, 3}, 120}}) {
    SCOPED_TRACE(k.folder.string());
    auto m = TransformerModel::load(k.folder);
    ASSERT_TRUE(m) << m.error().message();
    TransformerRunner generating(*m), whole(*m);
    GenerateOptions g;
    g.max_new_tokens = k.fresh;
    g.stop_at_eos = false;
    RunOptions o;
    o.hidden_states = true;
    auto run = generating.generate(k.prompt, g, o);
    ASSERT_TRUE(run) << run.error().message();
    const Index n = static_cast<Index>(k.prompt.size()) + k.fresh;
    ASSERT_EQ(static_cast<Index>(run->ids.size()), n);
    auto once = whole.run_ids(run->ids, {}, o);
    ASSERT_TRUE(once) << once.error().message();
    ASSERT_EQ(run->attention.layers.size(), once->attention.layers.size());
    for (std::size_t l = 0; l < once->attention.layers.size(); ++l) {
      const HeadStack& a = run->attention.layers[l].maps;
      ASSERT_EQ(a.rows(), n);
      ASSERT_EQ(a.cols(), n);
      for (int h = 0; h < a.heads(); ++h) {
        EXPECT_LT((a.head(h) - once->attention.layers[l].maps.head(h)).cwiseAbs().maxCoeff(), 1e-4)
            << "layer " << l << " head " << h;
      }
    }
    ASSERT_EQ(run->hidden_states.size(), once->hidden_states.size());
    for (std::size_t i = 0; i < once->hidden_states.size(); ++i) {
      ASSERT_EQ(run->hidden_states[i].rows(), n);
      EXPECT_LT((run->hidden_states[i] - once->hidden_states[i]).cwiseAbs().maxCoeff(), 1e-3) << "hidden state " << i;
    }
  }
}

TEST(TransformerLoad, CancelDuringLoadKeepsNothing) {
  int calls = 0;
  std::vector<double> fractions;
  auto m = TransformerModel::load(fixture("bert"), [&](double f, const std::string&) {
    fractions.push_back(f);
    return ++calls < 3;
  });
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().reason, "cancelled");
  EXPECT_EQ(calls, 3);
  // A full load reports increasing fractions ending at 1.
  fractions.clear();
  auto ok = TransformerModel::load(fixture("bert"), [&](double f, const std::string&) {
    fractions.push_back(f);
    return true;
  });
  ASSERT_TRUE(ok);
  ASSERT_GE(fractions.size(), 3u);
  EXPECT_TRUE(std::is_sorted(fractions.begin(), fractions.end()));
  EXPECT_DOUBLE_EQ(fractions.back(), 1.0);
}

TEST(TransformerRun, GptTwoIsCausalAndRowsSumToOne) {
  auto m = load_fixture("gpt2");
  ASSERT_TRUE(m);
  TransformerRunner s(m);
  auto run = s.run_text("the cat sat on the mat. the dog was happy");
  ASSERT_TRUE(run) << run.error().message();
  const Index n = static_cast<Index>(run->ids.size());
  ASSERT_GT(n, 5);
  for (const auto& layer : run->attention.layers) {
    EXPECT_EQ(layer.stage, Stage::Decoder);
    for (int h = 0; h < layer.maps.heads(); ++h) {
      const Matrix w = layer.maps.head(h);
      for (Index i = 0; i < n; ++i) {
        EXPECT_NEAR(w.row(i).sum(), 1.0f, 1e-5f);
        for (Index j = i + 1; j < n; ++j) ASSERT_EQ(w(i, j), 0.0f) << "future key " << j << " of row " << i;
      }
    }
  }
  ASSERT_EQ(run->predictions.size(), 1u);
  EXPECT_EQ(run->predictions[0].position, n - 1);
  EXPECT_EQ(run->predictions[0].top.size(), 5u);
  EXPECT_EQ(run->attention.tokens[1], " cat");
}

TEST(TransformerRun, EncoderRowsSumToOneAndLabelsAreTokens) {
  auto m = load_fixture("bert");
  ASSERT_TRUE(m);
  TransformerRunner s(m);
  auto run = s.run_text("the cat is playing", "it was happy");
  ASSERT_TRUE(run) << run.error().message();
  ASSERT_EQ(run->attention.tokens.size(), run->ids.size());
  EXPECT_EQ(run->attention.tokens.front(), "[CLS]");
  EXPECT_EQ(run->attention.tokens.back(), "[SEP]");
  EXPECT_NE(std::find(run->attention.tokens.begin(), run->attention.tokens.end(), "##ing"),
            run->attention.tokens.end());
  EXPECT_EQ(run->special_positions.front(), 0);
  EXPECT_EQ(run->special_positions.size(), 3u);
  EXPECT_EQ(run->type_ids.back(), 1);
  for (const auto& layer : run->attention.layers) {
    EXPECT_EQ(layer.stage, Stage::Encoder);
    for (int h = 0; h < layer.maps.heads(); ++h) {
      const Matrix w = layer.maps.head(h);
      for (Index i = 0; i < w.rows(); ++i) EXPECT_NEAR(w.row(i).sum(), 1.0f, 1e-5f);
    }
  }
}

TEST(TransformerRun, PaddingKeysGetExactlyZero) {
  auto m = load_fixture("distilbert");
  ASSERT_TRUE(m);
  TransformerRunner s(m);
  RunOptions o;
  o.attention_mask = {1, 1, 1, 1, 0, 0};
  auto run = s.run_ids({2, 10, 13, 3, 0, 0}, {}, o);
  ASSERT_TRUE(run) << run.error().message();
  for (const auto& layer : run->attention.layers)
    for (int h = 0; h < layer.maps.heads(); ++h) {
      const Matrix w = layer.maps.head(h);
      EXPECT_EQ(w.rightCols(2).cwiseAbs().maxCoeff(), 0.0f);
      for (Index i = 0; i < w.rows(); ++i) EXPECT_NEAR(w.row(i).sum(), 1.0f, 1e-5f);
    }
  o.attention_mask = {1, 1};
  EXPECT_FALSE(s.run_ids({2, 10, 13, 3, 0, 0}, {}, o));
}

TEST(TransformerRun, LongTextIsTruncatedWithAWarning) {
  auto m = load_fixture("gpt2");
  ASSERT_TRUE(m);
  std::string text;
  for (int i = 0; i < 20; ++i) text += "the cat sat on the mat. ";
  TransformerRunner s(m);
  auto run = s.run_text(text);
  ASSERT_TRUE(run) << run.error().message();
  EXPECT_EQ(static_cast<int>(run->ids.size()), m->config().max_positions);
  ASSERT_FALSE(run->warnings.empty());
  EXPECT_NE(run->warnings[0].find("truncated"), std::string::npos) << run->warnings[0];

  auto bert = load_fixture("bert");
  ASSERT_TRUE(bert);
  TransformerRunner sb(bert);
  RunOptions o;
  o.max_tokens = 6;
  auto rb = sb.run_text("the cat sat on the mat", "hello world", o);
  ASSERT_TRUE(rb) << rb.error().message();
  EXPECT_EQ(rb->ids.size(), 6u);
  EXPECT_EQ(rb->attention.tokens.back(), "[SEP]");
  ASSERT_FALSE(rb->warnings.empty());
  EXPECT_NE(rb->warnings[0].find("truncated"), std::string::npos);
  auto ids = sb.run_ids(std::vector<int>(40, 10));
  ASSERT_TRUE(ids);
  EXPECT_EQ(ids->ids.size(), 32u);
  EXPECT_FALSE(ids->warnings.empty());
}

TEST(TransformerRun, BadIdsAreErrors) {
  auto m = load_fixture("bert");
  ASSERT_TRUE(m);
  TransformerRunner s(m);
  EXPECT_FALSE(s.run_ids({}));
  EXPECT_FALSE(s.run_ids({2, 100000}));
  EXPECT_FALSE(s.run_ids({2, -1}));
  EXPECT_FALSE(s.run_ids({2, 3}, {0, 5}));
  EXPECT_FALSE(s.run_ids({2, 3}, {0}));
  EXPECT_FALSE(s.run_image(Image(8, 8, 3)));
}

TEST(TransformerRun, FloatSixteenIsWithinOneThousandthOfFloatThirtyTwo) {
  for (const char* name : {"bert", "gpt2"}) {
    auto m = load_fixture(name);
    ASSERT_TRUE(m);
    TransformerRunner s(m);
    RunOptions o32, o16;
    o16.precision = Precision::F16;
    std::vector<int> ids;
    for (int i = 0; i < 30; ++i) ids.push_back(5 + (i * 7) % 40);
    auto a = s.run_ids(ids, {}, o32);
    auto b = s.run_ids(ids, {}, o16);
    ASSERT_TRUE(a && b);
    for (std::size_t l = 0; l < a->attention.layers.size(); ++l) {
      EXPECT_EQ(b->attention.layers[l].maps.precision(), Precision::F16);
      for (int h = 0; h < a->attention.layers[l].maps.heads(); ++h) {
        const Matrix d = a->attention.layers[l].maps.head(h) - b->attention.layers[l].maps.head(h);
        EXPECT_LE(d.cwiseAbs().maxCoeff(), 1e-3f) << name << " layer " << l << " head " << h;
      }
    }
  }
}

TEST(TransformerRun, SessionReuseGivesIdenticalResults) {
  auto m = load_fixture("bert");
  ASSERT_TRUE(m);
  TransformerRunner s(m);
  RunOptions o;
  o.hidden_states = true;
  const std::vector<int> longer{2, 10, 13, 21, 46, 92, 19, 10, 4, 5, 3, 24, 22, 58, 5, 3};
  auto first = s.run_ids(longer, {}, o);
  auto shorter = s.run_ids({2, 11, 4, 3}, {}, o);
  auto again = s.run_ids(longer, {}, o);
  ASSERT_TRUE(first && shorter && again);
  for (std::size_t l = 0; l < first->attention.layers.size(); ++l)
    for (int h = 0; h < first->attention.layers[l].maps.heads(); ++h)
      EXPECT_EQ(first->attention.layers[l].maps.head(h), again->attention.layers[l].maps.head(h));
  ASSERT_EQ(first->hidden_states.size(), 3u);
  EXPECT_EQ(first->hidden_states.back(), again->hidden_states.back());
  ASSERT_EQ(first->predictions.size(), again->predictions.size());
  EXPECT_EQ(first->predictions[0].top[0].id, again->predictions[0].top[0].id);
  EXPECT_EQ(first->predictions[0].top[0].probability, again->predictions[0].top[0].probability);
  // A fresh session on the same model agrees too (the model is shared, immutable).
  TransformerRunner other(m);
  auto fresh = other.run_ids(longer, {}, o);
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->attention.layers[1].maps.head(2), first->attention.layers[1].maps.head(2));
}

// on_layer sees each layer as soon as its maps are final (what the workbench draws before the run
// ends), with the tokens already in place; returning false stops the run as "cancelled".
TEST(TransformerRun, OnLayerSeesEveryLayerFinalAndCanStopTheRun) {
  for (const std::string name : {"bert", "gpt2"}) {
    auto m = load_fixture(name);
    ASSERT_TRUE(m);
    TransformerRunner s(m);
    std::vector<Matrix> seen;  // head 1 of each layer, copied when reported
    std::vector<std::size_t> sizes;
    RunOptions o;
    o.on_layer = [&](const LayeredTrace& so_far) {
      sizes.push_back(so_far.layers.size());
      EXPECT_EQ(so_far.tokens.size(), so_far.layers.back().maps.rows());
      EXPECT_EQ(so_far.layers.back().layer, static_cast<int>(so_far.layers.size()) - 1);
      seen.push_back(so_far.layers.back().maps.head(1));
      return true;
    };
    auto run = s.run_text("the cat sat on the mat", "", o);
    ASSERT_TRUE(run) << run.error().message();
    ASSERT_EQ(sizes, (std::vector<std::size_t>{1, 2})) << name;
    for (std::size_t l = 0; l < seen.size(); ++l) EXPECT_EQ(seen[l], run->attention.layers[l].maps.head(1)) << name;

    int calls = 0;
    o.on_layer = [&](const LayeredTrace&) { return ++calls < 1; };
    auto stopped = s.run_text("the cat sat on the mat", "", o);
    ASSERT_FALSE(stopped);
    EXPECT_EQ(stopped.error().reason, "cancelled");
    EXPECT_EQ(calls, 1);
    // The session is fine afterwards.
    o.on_layer = {};
    auto again = s.run_text("the cat sat on the mat", "", o);
    ASSERT_TRUE(again);
    EXPECT_EQ(again->attention.layers[1].maps.head(1), run->attention.layers[1].maps.head(1));
  }
}

// Issue 41, finding 3: a long run reports each layer done (maps or on demand, encoder, GPT-2 or decoder) and stops
// at the next layer once its cancel flag is set.
TEST(TransformerRun, OnProgressCountsLayersAndTheCancelFlagStopsTheRun) {
  const fs::path llama = fs::path(ATTN_TEST_DATA_DIR) / "decoders" / "llama";
  for (const fs::path& folder : {fixture("bert"), fixture("gpt2"), llama}) {
    auto m = TransformerModel::load(folder);
    ASSERT_TRUE(m) << m.error().message();
    const int layers = (*m)->config().layers;
    const std::vector<int> ids{3, 5, 7, 9, 11, 2};
    for (const auto keep : {RunOptions::Keep::Maps, RunOptions::Keep::OnDemand}) {
      TransformerRunner s(*m);
      std::vector<std::pair<int, int>> reports;
      RunOptions o;
      o.keep = keep;
      o.on_progress = [&](int done, int of, Index tokens) {
        EXPECT_EQ(tokens, Index(ids.size()));
        reports.emplace_back(done, of);
      };
      auto run = s.run_ids(ids, {}, o);
      ASSERT_TRUE(run) << folder << ": " << run.error().message();
      ASSERT_EQ(int(reports.size()), layers) << folder;
      for (int l = 0; l < layers; ++l) EXPECT_EQ(reports[std::size_t(l)], std::make_pair(l + 1, layers)) << folder;

      std::atomic<bool> cancel{false};
      reports.clear();
      o.cancel = &cancel;
      o.on_progress = [&](int done, int of, Index) {
        reports.emplace_back(done, of);
        cancel.store(true);  // the user presses Cancel during layer 0
      };
      auto stopped = s.run_ids(ids, {}, o);
      ASSERT_FALSE(stopped) << folder;
      EXPECT_EQ(stopped.error().kind, ErrorKind::Cancelled) << folder;
      EXPECT_EQ(reports.size(), 1u) << folder;
    }
  }
}

TEST(TransformerRun, VitLabelsPatchesAndClasses) {
  auto m = load_fixture("vit");
  ASSERT_TRUE(m);
  TransformerRunner s(m);
  Image img(48, 40, 3, 0.25f);  // resized to 32 x 32
  auto run = s.run_image(img);
  ASSERT_TRUE(run) << run.error().message();
  EXPECT_EQ(run->grid_rows, 4);
  EXPECT_EQ(run->attention.tokens.size(), 17u);
  EXPECT_EQ(run->attention.tokens[5], "1,0");
  EXPECT_EQ(run->special_positions, std::vector<int>{0});
  EXPECT_FALSE(run->labels.empty());
  EXPECT_TRUE(run->ids.empty());
  EXPECT_FALSE(s.run_text("hello"));
}

}  // namespace transformer_tests
}  // namespace attn::models
