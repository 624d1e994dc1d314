// The backward pass and the attribution methods against torch autograd: tests/data/attribution/<case>.json, written
// by tools/parity/make_attribution_fixtures.py over the float64 reference models of every family (BERT, DistilBERT,
// GPT-2, ViT, every decoder type, 16-bit weights included) and the shipped induction-gpt2, on the intervention
// fixtures' inputs. Compared, for plain gradients and for AttnLRP's rules: F, the gradient at every layer's residual
// stream, at every head's output and at every attention weight, and the scores; attention x gradient's scores and
// integrated gradients' (8 steps, zero baseline) with its two values.
#include "attn/models/attribution.h"
#include "attn/vision/image.h"

#include "bundled_cases.h"
#include "model_cases.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

namespace attn::models::attribution_parity {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// float32 against float64, relative to the largest value of what is compared.
constexpr double kTolerance = 1e-4;

struct Case {
  json fixture;
  std::shared_ptr<const TransformerModel> model;
  TransformerRun run;
  AttributionTarget target;
};

std::optional<Case> load_case(const std::string& name) {
  const fs::path file = fs::path(ATTN_TEST_DATA_DIR) / "attribution" / (name + ".json");
  std::ifstream in(file);
  if (!in) {
    ADD_FAILURE() << "missing " << file;
    return std::nullopt;
  }
  Case c;
  c.fixture = json::parse(in, nullptr, false);
  if (c.fixture.is_discarded()) {
    ADD_FAILURE() << "bad " << file;
    return std::nullopt;
  }
  auto model = TransformerModel::load(fs::path(ATTN_SOURCE_DIR) / c.fixture["model"].get<std::string>());
  if (!model) {
    ADD_FAILURE() << name << ": " << model.error().message();
    return std::nullopt;
  }
  c.model = std::move(*model);
  TransformerRunner runner(c.model);
  RunOptions o;
  o.capture = c.model->config().family == Family::Vit;
  Result<TransformerRun> run = fail(ErrorKind::Io, "no input");
  if (c.fixture.contains("image")) {
    auto image = load_image(fs::path(ATTN_SOURCE_DIR) / c.fixture["image"].get<std::string>());
    if (!image) {
      ADD_FAILURE() << image.error().message();
      return std::nullopt;
    }
    run = runner.run_image(*image, o);
  } else {
    run = runner.run_ids(c.fixture["ids"].get<std::vector<int>>(), {}, o);
  }
  if (!run) {
    ADD_FAILURE() << name << ": " << run.error().message();
    return std::nullopt;
  }
  c.run = std::move(*run);
  const std::string kind = c.fixture["kind"].get<std::string>();
  c.target.kind = kind == "logit"     ? AttributionTarget::Kind::Logit
                  : kind == "logprob" ? AttributionTarget::Kind::LogProb
                                      : AttributionTarget::Kind::LogitDiff;
  c.target.position = c.model->config().family == Family::Vit ? 0 : c.fixture["position"].get<int>();
  c.target.token = c.fixture["token"].get<int>();
  c.target.other = c.fixture["other"].get<int>();
  return c;
}

double max_abs(const json& j) {
  if (j.is_array()) {
    double m = 0;
    for (const json& v : j) m = std::max(m, max_abs(v));
    return m;
  }
  return std::abs(j.get<double>());
}

// |got - expected| over the matrix, relative to the largest expected value.
void expect_matrix(const Matrix& got, const json& expected, const std::string& what) {
  ASSERT_EQ(got.rows(), static_cast<Index>(expected.size())) << what;
  const double scale = std::max(max_abs(expected), 1e-4);
  double worst = 0;
  for (Index i = 0; i < got.rows(); ++i) {
    const json& row = expected[static_cast<std::size_t>(i)];
    ASSERT_EQ(got.cols(), static_cast<Index>(row.size())) << what;
    for (Index j = 0; j < got.cols(); ++j)
      worst = std::max(worst, std::abs(got(i, j) - row[static_cast<std::size_t>(j)].get<double>()));
  }
  EXPECT_LE(worst / scale, kTolerance) << what << " (largest value " << scale << ")";
}

void expect_scores(const std::vector<float>& got, const json& expected, const std::string& what) {
  expect_matrix(
      Eigen::Map<const Matrix>(got.data(), static_cast<Index>(got.size()), 1),
      [&] {
        json col = json::array();
        for (const json& v : expected) col.push_back(json::array({v}));
        return col;
      }(),
      what);
}

void expect_value(double got, const json& expected, const std::string& what) {
  const double e = expected.get<double>();
  EXPECT_LE(std::abs(got - e) / std::max(1.0, std::abs(e)), kTolerance) << what << ": " << got << " vs " << e;
}

struct Attribution : ::testing::TestWithParam<std::string> {};

TEST_P(Attribution, BackwardMatchesTorchAutograd) {
  auto c = load_case(GetParam());
  ASSERT_TRUE(c);
  for (const auto& [rule, name] : {std::pair{BackwardRule::Gradient, "gradient"}, {BackwardRule::AttnLrp, "attnlrp"}}) {
    const json& e = c->fixture[name];
    const std::string what = std::string(GetParam()) + " " + name;
    BackwardOptions o;
    o.rule = rule;
    o.keep_attention = true;
    auto g = backward(*c->model, c->run, c->target, o);
    ASSERT_TRUE(g) << what << ": " << g.error().message();
    expect_value(g->value, e["value"], what + " F");
    const int L = c->model->config().layers;
    ASSERT_EQ(static_cast<int>(g->resid_grad.size()), L + 1);
    for (int l = 0; l < L; ++l) {
      const std::string at = what + " layer " + std::to_string(l);
      expect_matrix(g->resid_grad[static_cast<std::size_t>(l)], e["resid_grad"][l], at + " resid_pre gradient");
      expect_matrix(g->z_grad[static_cast<std::size_t>(l)], e["z_grad"][l], at + " z gradient");
      for (int h = 0; h < c->model->config().heads; ++h)
        expect_matrix(g->attention[static_cast<std::size_t>(l)][static_cast<std::size_t>(h)], e["attention_grad"][l][h],
                      at + " head " + std::to_string(h) + " attention gradient");
    }
    AttributeOptions ao;
    ao.method = rule == BackwardRule::Gradient ? AttributionMethod::GradXInput : AttributionMethod::AttnLrp;
    auto a = attribute(*c->model, c->run, c->target, ao);
    ASSERT_TRUE(a) << a.error().message();
    expect_scores(a->scores, e["scores"], what + " scores");
    EXPECT_EQ(a->per_layer.rows(), L + 1);
    if (rule == BackwardRule::AttnLrp) {
      double sum = 0;
      for (const float s : a->scores) sum += s;
      EXPECT_NEAR(a->gap, std::abs(sum - a->value), 1e-6 * std::max(1.0, std::abs(sum)));
    }
  }
}

TEST_P(Attribution, AttentionGradientAndIntegratedGradientsMatchTorch) {
  auto c = load_case(GetParam());
  ASSERT_TRUE(c);
  AttributeOptions o;
  o.method = AttributionMethod::AttnGrad;
  auto chefer = attribute(*c->model, c->run, c->target, o);
  ASSERT_TRUE(chefer) << chefer.error().message();
  expect_scores(chefer->scores, c->fixture["attn_grad_scores"], std::string(GetParam()) + " attn-grad");

  const json& e = c->fixture["integrated_gradients"];
  o.method = AttributionMethod::IntegratedGradients;
  o.steps = e["steps"].get<int>();
  auto ig = attribute(*c->model, c->run, c->target, o);
  ASSERT_TRUE(ig) << ig.error().message();
  expect_scores(ig->scores, e["scores"], std::string(GetParam()) + " integrated gradients");
  expect_value(ig->value, e["value"], "F(x0)");
  expect_value(ig->baseline_value, e["baseline_value"], "F(baseline)");
  double sum = 0;
  for (const float s : ig->scores) sum += s;
  EXPECT_NEAR(ig->gap, std::abs(sum - (ig->value - ig->baseline_value)), 1e-5 * std::max(1.0, std::abs(sum)));
}

// A budget of one byte: every layer's input alone kept and the layer run again before its backward, and integrated
// gradients one sequence per pass; the numbers are the same as with every cache kept and every step in one pass.
TEST_P(Attribution, CheckpointedPassesGiveTheSameNumbers) {
  auto c = load_case(GetParam());
  ASSERT_TRUE(c);
  BackwardOptions all, checkpointed;
  checkpointed.budget = 1;
  auto a = backward(*c->model, c->run, c->target, all);
  auto b = backward(*c->model, c->run, c->target, checkpointed);
  ASSERT_TRUE(a && b);
  for (std::size_t l = 0; l < a->resid_grad.size(); ++l)
    EXPECT_LE((a->resid_grad[l] - b->resid_grad[l]).cwiseAbs().maxCoeff(),
              1e-6 * std::max(1.0f, a->resid_grad[l].cwiseAbs().maxCoeff()))
        << "layer " << l;
  AttributeOptions o;
  o.method = AttributionMethod::IntegratedGradients;
  o.steps = 4;
  int passes = 0;
  o.progress = [&](int, int) { ++passes; };
  auto one = attribute(*c->model, c->run, c->target, o);
  ASSERT_TRUE(one);
  EXPECT_EQ(passes, 1);
  o.budget = 1;
  passes = 0;
  auto split = attribute(*c->model, c->run, c->target, o);
  ASSERT_TRUE(split);
  EXPECT_EQ(passes, 5);  // alpha = 1, 3/4, 1/2, 1/4 and 0, one pass each
  for (std::size_t i = 0; i < one->scores.size(); ++i)
    EXPECT_NEAR(one->scores[i], split->scores[i], 1e-5 * std::max(1.0f, std::abs(one->scores[i])));
}

INSTANTIATE_TEST_SUITE_P(Cases, Attribution, ::testing::ValuesIn(parity::kModelCases), parity::case_test_name);

}  // namespace
}  // namespace attn::models::attribution_parity
