// The four transformer families against torch: tests/data/transformers/<case>/ are model folders written
// by tools/parity/make_transformer_fixtures.py (random weights with Hugging Face names, run by
// tools/parity/transformer_torch.py in float64). Every head of every layer, every hidden state and the
// predictions are compared. The case induction-gpt2 holds only expectations for the shipped
// resources/models/induction-gpt2 (its expected.json names the folder).
#include "attn/io/safetensors.h"
#include "attn/models/transformer.h"
#include "attn/vision/image.h"
#include "fixture.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

namespace attn::models {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr double kMapTolerance = 1e-4;

fs::path case_dir(const std::string& name) { return fs::path(ATTN_PARITY_DIR) / ".." / "transformers" / name; }

struct Case {
  std::string name;
  json expected;
  io::SafeTensors tensors;
  std::shared_ptr<const TransformerModel> model;
};

// Loads the folder and its expectations; failures are test failures (never skips).
std::optional<Case> load_case(const std::string& name) {
  const fs::path dir = case_dir(name);
  std::ifstream in(dir / "expected.json");
  if (!in) {
    ADD_FAILURE() << "missing " << (dir / "expected.json");
    return std::nullopt;
  }
  json expected = json::parse(in, nullptr, false);
  if (expected.is_discarded() || expected.value("case", "") != name) {
    ADD_FAILURE() << "bad " << (dir / "expected.json");
    return std::nullopt;
  }
  auto tensors = io::SafeTensors::open(dir / "expected.safetensors");
  if (!tensors) {
    ADD_FAILURE() << tensors.error().message();
    return std::nullopt;
  }
  // A case on shipped weights names their folder (relative to the source tree) instead of holding them.
  const fs::path model_dir =
      expected.contains("model") ? fs::path(ATTN_SOURCE_DIR) / expected["model"].get<std::string>() : dir;
  auto model = TransformerModel::load(model_dir);
  if (!model) {
    ADD_FAILURE() << "loading " << name << ": " << model.error().message();
    return std::nullopt;
  }
  return Case{name, std::move(expected), std::move(*tensors), std::move(*model)};
}

std::vector<Matrix> expected_stack(const io::SafeTensors& t, const std::string& name) {
  const auto* info = t.find(name);
  if (!info || info->shape.size() != 3) {
    ADD_FAILURE() << "fixture has no [heads, n, n] tensor " << name;
    return {};
  }
  auto v = t.to_float(*info);
  if (!v) return {};
  const Index h = info->shape[0], r = info->shape[1], c = info->shape[2];
  std::vector<Matrix> out;
  for (Index i = 0; i < h; ++i) out.emplace_back(Eigen::Map<const Matrix>(v->data() + i * r * c, r, c));
  return out;
}

Matrix expected_matrix(const io::SafeTensors& t, const std::string& name) {
  const auto* info = t.find(name);
  if (!info || info->shape.size() != 2) {
    ADD_FAILURE() << "fixture has no matrix " << name;
    return {};
  }
  auto m = t.matrix(name, info->shape[0], info->shape[1]);
  return m ? *m : Matrix();
}

// Maps, hidden states and predictions of one run against the fixture's run entry.
void compare_run(const Case& c, const json& entry, const TransformerRun& run, Precision precision = Precision::F32) {
  const std::string name = entry["name"];
  SCOPED_TRACE(c.name + " / " + name);
  const auto& cfg = c.model->config();
  const double tol = precision == Precision::F32 ? kMapTolerance : 1e-3;
  ASSERT_EQ(static_cast<int>(run.attention.layers.size()), cfg.layers);
  for (int l = 0; l < cfg.layers; ++l) {
    const auto& layer = run.attention.layers[static_cast<std::size_t>(l)];
    EXPECT_EQ(layer.layer, l);
    EXPECT_EQ(layer.stage, cfg.family == Family::Gpt2 ? Stage::Decoder : Stage::Encoder);
    EXPECT_EQ(layer.maps.precision(), precision);
    const auto want = expected_stack(c.tensors, name + ".attn." + std::to_string(l));
    ASSERT_EQ(static_cast<int>(want.size()), layer.maps.heads());
    for (int h = 0; h < layer.maps.heads(); ++h) {
      EXPECT_TRUE(parity::all_near(want[static_cast<std::size_t>(h)], layer.maps.head(h), tol))
          << "layer " << l << " head " << h;
    }
  }
  if (!run.hidden_states.empty()) {
    ASSERT_EQ(static_cast<int>(run.hidden_states.size()), cfg.layers + 1);
    for (int i = 0; i <= cfg.layers; ++i) {
      const Matrix want = expected_matrix(c.tensors, name + ".hidden." + std::to_string(i));
      // The residual stream grows through the layers: relative to its scale.
      const double scale = std::max(1.0, static_cast<double>(want.cwiseAbs().maxCoeff()));
      EXPECT_TRUE(parity::all_near(want, run.hidden_states[static_cast<std::size_t>(i)], kMapTolerance * scale))
          << "hidden state " << i;
    }
  }
  const auto& preds = entry["predictions"];
  ASSERT_EQ(run.predictions.size(), preds.size());
  for (std::size_t p = 0; p < preds.size(); ++p) {
    const auto& want = preds[p];
    const auto& got = run.predictions[p];
    EXPECT_EQ(got.position, want["position"].get<int>());
    ASSERT_FALSE(got.top.empty());
    const auto& top = want["top"];
    for (std::size_t k = 0; k < std::min(got.top.size(), top.size()); ++k) {
      const double prob = top[k]["probability"];
      // Candidates whose probabilities tie within the tolerance may swap places.
      const bool tied = k + 1 < top.size() && std::abs(prob - top[k + 1]["probability"].get<double>()) < 1e-4;
      if (!tied) {
        EXPECT_EQ(got.top[k].id, top[k]["id"].get<int>()) << "prediction " << p << " rank " << k;
      }
      EXPECT_NEAR(got.top[k].probability, prob, 1e-4) << "prediction " << p << " rank " << k;
    }
  }
}

RunOptions options_for(const json& entry) {
  RunOptions o;
  o.hidden_states = true;
  o.top_k = 5;
  if (entry.contains("attention_mask")) o.attention_mask = entry["attention_mask"].get<std::vector<int>>();
  return o;
}

class TextParity : public ::testing::TestWithParam<std::string> {};

TEST_P(TextParity, EveryHeadHiddenStateAndPredictionMatchTorch) {
  auto c = load_case(GetParam());
  ASSERT_TRUE(c);
  TransformerRunner session(c->model);
  for (const auto& entry : c->expected["runs"]) {
    const auto ids = entry["ids"].get<std::vector<int>>();
    const auto types = entry.contains("type_ids") ? entry["type_ids"].get<std::vector<int>>() : std::vector<int>{};
    auto run = session.run_ids(ids, types, options_for(entry));
    ASSERT_TRUE(run) << run.error().message();
    EXPECT_EQ(run->ids, ids);
    compare_run(*c, entry, *run);
  }
}

TEST_P(TextParity, FloatSixteenMapsWithinOneThousandth) {
  auto c = load_case(GetParam());
  ASSERT_TRUE(c);
  TransformerRunner session(c->model);
  const auto& entry = c->expected["runs"][0];
  auto o = options_for(entry);
  o.precision = Precision::F16;
  o.hidden_states = false;
  const auto types = entry.contains("type_ids") ? entry["type_ids"].get<std::vector<int>>() : std::vector<int>{};
  auto run = session.run_ids(entry["ids"].get<std::vector<int>>(), types, o);
  ASSERT_TRUE(run) << run.error().message();
  compare_run(*c, entry, *run, Precision::F16);
}

// Without hidden states the last layer computes only the rows its predictions read (none, the last
// token, the [MASK] positions): the maps and predictions stay those of the full run.
TEST_P(TextParity, MapsAndPredictionsWithoutHiddenStates) {
  auto c = load_case(GetParam());
  ASSERT_TRUE(c);
  TransformerRunner session(c->model);
  for (const auto& entry : c->expected["runs"]) {
    auto o = options_for(entry);
    o.hidden_states = false;
    const auto types = entry.contains("type_ids") ? entry["type_ids"].get<std::vector<int>>() : std::vector<int>{};
    auto run = session.run_ids(entry["ids"].get<std::vector<int>>(), types, o);
    ASSERT_TRUE(run) << run.error().message();
    EXPECT_TRUE(run->hidden_states.empty());
    compare_run(*c, entry, *run);
  }
}

// run_text: the model folder's tokenizer must give the fixture's ids (then the maps are the same run).
class RunTextParity : public ::testing::TestWithParam<std::string> {};

TEST_P(RunTextParity, TokenisesAsTheFixture) {
  auto c = load_case(GetParam());
  ASSERT_TRUE(c);
  TransformerRunner session(c->model);
  int checked = 0;
  for (const auto& entry : c->expected["runs"]) {
    if (!entry.contains("text")) continue;
    ++checked;
    const std::string text = entry["text"], pair = entry.value("pair", "");
    auto run = session.run_text(text, pair, options_for(entry));
    ASSERT_TRUE(run) << run.error().message();
    EXPECT_EQ(run->ids, entry["ids"].get<std::vector<int>>()) << "text: " << text;
    if (entry.contains("type_ids") && c->model->config().family == Family::Bert) {
      EXPECT_EQ(run->type_ids, entry["type_ids"].get<std::vector<int>>());
    }
    EXPECT_EQ(run->attention.tokens.size(), run->ids.size());
    if (run->ids == entry["ids"].get<std::vector<int>>()) compare_run(*c, entry, *run);
  }
  EXPECT_GT(checked, 0) << "no text run in this case";
}

// GPT-2 generation with its key/value cache against torch's greedy generation by a full forward per token: the
// same ids, and the maps (every row: the prompt's and each generated token's), hidden states and last prediction
// of the final sequence.
class GenerationParity : public ::testing::TestWithParam<std::string> {};

TEST_P(GenerationParity, GreedyWithTheCacheMatchesTorch) {
  auto c = load_case(GetParam());
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->expected.contains("generations"));
  TransformerRunner session(c->model);
  for (const auto& entry : c->expected["generations"]) {
    const auto ids = entry["ids"].get<std::vector<int>>();
    const int prompt = entry["prompt_tokens"];
    GenerateOptions g;
    g.max_new_tokens = static_cast<int>(ids.size()) - prompt;
    g.stop_at_eos = false;
    int calls = 0;
    g.on_token = [&](int position, int id, float probability) {
      EXPECT_EQ(position, prompt + calls);
      EXPECT_EQ(id, ids[static_cast<std::size_t>(position)]);
      EXPECT_GT(probability, 0.0f);
      ++calls;
      return true;
    };
    for (const Precision precision : {Precision::F32, Precision::F16}) {
      calls = 0;
      auto o = options_for(entry);
      o.precision = precision;
      o.hidden_states = precision == Precision::F32;
      auto run = session.generate({ids.begin(), ids.begin() + prompt}, g, o);
      ASSERT_TRUE(run) << run.error().message();
      EXPECT_EQ(run->ids, ids);
      EXPECT_EQ(run->prompt_tokens, prompt);
      EXPECT_EQ(calls, g.max_new_tokens);
      EXPECT_EQ(run->generated_probability.size(), static_cast<std::size_t>(g.max_new_tokens));
      // Greedy: each step's best candidate is the token generated, with the probability it was chosen with.
      ASSERT_EQ(run->step_predictions.size(), static_cast<std::size_t>(g.max_new_tokens));
      for (int i = 0; i < g.max_new_tokens; ++i) {
        const auto& p = run->step_predictions[static_cast<std::size_t>(i)];
        EXPECT_EQ(p.position, prompt + i - 1);
        ASSERT_EQ(p.top.size(), 5u);
        EXPECT_EQ(p.top[0].id, ids[static_cast<std::size_t>(prompt + i)]);
        EXPECT_NEAR(p.top[0].probability, run->generated_probability[static_cast<std::size_t>(i)], 1e-6);
      }
      compare_run(*c, entry, *run, precision);
    }
  }
}

// Stopping: on_token's word ends the run there, the maps shrink to the tokens there are; beyond the positions
// the run stops at the context with a warning.
TEST(GenerationParity, StopsWhereAskedAndAtTheContext) {
  auto c = load_case("induction-gpt2");
  ASSERT_TRUE(c);
  TransformerRunner session(c->model);
  const auto& entry = c->expected["generations"][0];
  const auto ids = entry["ids"].get<std::vector<int>>();
  const int prompt = entry["prompt_tokens"];
  GenerateOptions g;
  g.max_new_tokens = 10;
  g.on_token = [&](int position, int, float) { return position < prompt + 2; };
  auto run = session.generate({ids.begin(), ids.begin() + prompt}, g);
  ASSERT_TRUE(run) << run.error().message();
  ASSERT_EQ(run->ids.size(), static_cast<std::size_t>(prompt + 3));
  EXPECT_EQ(run->ids, std::vector<int>(ids.begin(), ids.begin() + prompt + 3));
  EXPECT_EQ(run->attention.layers[0].maps.rows(), prompt + 3);
  EXPECT_EQ(run->attention.tokens.size(), run->ids.size());
  g.on_token = {};
  g.max_new_tokens = 1000;
  auto full = session.generate({ids.begin(), ids.begin() + prompt}, g);
  ASSERT_TRUE(full) << full.error().message();
  EXPECT_EQ(static_cast<int>(full->ids.size()), c->model->config().max_positions);
  ASSERT_FALSE(full->warnings.empty());
  EXPECT_NE(full->warnings.front().find("the model's context"), std::string::npos) << full->warnings.front();
}

INSTANTIATE_TEST_SUITE_P(Transformers, GenerationParity, ::testing::Values("gpt2", "induction-gpt2"));

INSTANTIATE_TEST_SUITE_P(Transformers, RunTextParity,
                         ::testing::Values("bert", "distilbert", "gpt2", "induction-gpt2"));

INSTANTIATE_TEST_SUITE_P(Transformers, TextParity,
                         ::testing::Values("bert", "bert_legacy", "bert_bare", "distilbert", "gpt2", "induction-gpt2"));

TEST(VitParity, EveryHeadHiddenStateAndClassMatchTorch) {
  auto c = load_case("vit");
  ASSERT_TRUE(c);
  const auto& entry = c->expected["runs"][0];
  // The raw pixels the fixture normalised (the PNG's bytes / 255) ...
  const auto* info = c->tensors.find("image.pixels");
  ASSERT_NE(info, nullptr);
  auto pixels = c->tensors.to_float(*info);
  ASSERT_TRUE(pixels);
  Image raw(static_cast<int>(info->shape[2]), static_cast<int>(info->shape[1]), static_cast<int>(info->shape[0]));
  raw.data = *pixels;
  TransformerRunner session(c->model);
  auto run = session.run_image(raw, options_for(entry));
  ASSERT_TRUE(run) << run.error().message();
  compare_run(*c, entry, *run);
  EXPECT_EQ(run->grid_rows, 4);
  EXPECT_EQ(run->grid_cols, 4);
  ASSERT_EQ(run->attention.tokens.size(), 17u);
  EXPECT_EQ(run->attention.tokens[0], "[CLS]");
  EXPECT_EQ(run->attention.tokens[1], "0,0");
  EXPECT_EQ(run->attention.tokens[16], "3,3");
  ASSERT_FALSE(run->labels.empty());
  const int best = entry["predictions"][0]["top"][0]["id"];
  EXPECT_EQ(run->labels[0].substr(0, run->labels[0].find(' ')),
            entry["labels"][std::to_string(best)].get<std::string>());

  // Without hidden states the last layer runs for the class token alone; maps and classes are the same.
  auto maps_only = options_for(entry);
  maps_only.hidden_states = false;
  auto lean = session.run_image(raw, maps_only);
  ASSERT_TRUE(lean) << lean.error().message();
  EXPECT_TRUE(lean->hidden_states.empty());
  compare_run(*c, entry, *lean);

  // ... and the same picture decoded from the PNG.
  auto png = load_image(case_dir("vit") / "image.png");
  ASSERT_TRUE(png) << png.error().message();
  auto from_png = session.run_image(*png, options_for(entry));
  ASSERT_TRUE(from_png) << from_png.error().message();
  compare_run(*c, entry, *from_png);
}

}  // namespace
}  // namespace attn::models
