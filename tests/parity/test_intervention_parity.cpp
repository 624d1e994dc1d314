// Interventions against torch: tests/data/interventions/<case>.json, written by
// tools/parity/make_intervention_fixtures.py with tools/parity/interventions_torch.py (hooks on the float64 torch
// models of every family, TransformerLens's conventions written from attn/models/intervention.h's definitions), on
// the committed parity models (BERT, DistilBERT, GPT-2, ViT, every decoder type) and the shipped induction-gpt2.
// Compared: the clean and corrupted runs' measured logits; six head ablations (zero, mean, resample; one head and a
// set of three), both as a full run with edits and as a re-run from the captured clean run; and every cell of every
// sweep (heads, heads x positions, residual, attention-output and MLP-output layers x positions; the heads sweep also
// with the logprob and kl metrics), each a re-run of the corrupted run that starts at the patched layer.
#include "attn/models/intervention.h"
#include "attn/vision/image.h"

#include "bundled_cases.h"
#include "model_cases.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

namespace attn::models::intervention_parity {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// float32 against float64: logits within 1e-4 of their size (qwen2-bias's reach 22), recoveries within 1e-4.
constexpr double kTolerance = 1e-4;

struct Case {
  json fixture;
  std::shared_ptr<const TransformerModel> model;
  int position = -1;
};

std::optional<Case> load_case(const std::string& name) {
  const fs::path file = fs::path(ATTN_TEST_DATA_DIR) / "interventions" / (name + ".json");
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
  c.position = c.fixture["position"].get<int>();
  return c;
}

RunOptions options_for(const Case& c) {
  RunOptions o;
  o.capture = true;
  o.logits_position = c.model->config().family == Family::Vit ? -1 : c.position;
  return o;
}

// One input of the case ("clean" or "corrupt") through run_ids or run_image with `o`.
Result<TransformerRun> run_input(TransformerRunner& runner, const Case& c, const std::string& which,
                                 const RunOptions& o) {
  if (c.model->config().family == Family::Vit) {
    auto image = load_image(fs::path(ATTN_SOURCE_DIR) / c.fixture[which + "_image"].get<std::string>());
    if (!image) return std::unexpected(image.error());
    return runner.run_image(*image, o);
  }
  return runner.run_ids(c.fixture[which + "_ids"].get<std::vector<int>>(), {}, o);
}

void expect_logits(const RowVector& got, const json& expected, const std::string& what) {
  ASSERT_EQ(got.size(), static_cast<Index>(expected.size())) << what;
  double worst = 0;
  Index at = 0;
  for (Index i = 0; i < got.size(); ++i) {
    const double e = expected[static_cast<std::size_t>(i)].get<double>();
    const double err = std::abs(got[i] - e) / std::max(1.0, std::abs(e));
    if (err > worst) worst = err, at = i;
  }
  EXPECT_LE(worst, kTolerance) << what << ": worst at logit " << at;
}

struct Fixture : ::testing::TestWithParam<std::string> {};

TEST_P(Fixture, AblationsMatchTorch) {
  auto c = load_case(GetParam());
  ASSERT_TRUE(c);
  TransformerRunner runner(c->model);
  auto clean = run_input(runner, *c, "clean", options_for(*c));
  ASSERT_TRUE(clean) << clean.error().message();
  auto corrupt = run_input(runner, *c, "corrupt", options_for(*c));
  ASSERT_TRUE(corrupt) << corrupt.error().message();
  auto clean_logits = measured_logits(*clean, c->position);
  ASSERT_TRUE(clean_logits) << clean_logits.error().message();
  expect_logits(*clean_logits, c->fixture["clean_logits"], "clean");
  expect_logits(*measured_logits(*corrupt, c->position), c->fixture["corrupt_logits"], "corrupt");

  for (const json& a : c->fixture["ablations"]) {
    std::vector<HeadRef> heads;
    for (const json& h : a["heads"]) heads.push_back({h[0].get<int>(), h[1].get<int>()});
    const auto mode = parse_ablation_mode(a["mode"].get<std::string>());
    ASSERT_TRUE(mode);
    const std::string what =
        std::string(GetParam()) + " " + a["mode"].get<std::string>() + " ablation of " + a["heads"].dump();
    RunOptions o = options_for(*c);
    o.capture = false;
    o.edits = ablation_edits(heads, *mode, corrupt->activations.get());
    auto full = run_input(runner, *c, "clean", o);
    ASSERT_TRUE(full) << what << ": " << full.error().message();
    expect_logits(*measured_logits(*full, c->position), a["logits"], what + " (a full run)");
    auto again = runner.rerun(*clean, o);
    ASSERT_TRUE(again) << what << ": " << again.error().message();
    expect_logits(*measured_logits(*again, c->position), a["logits"], what + " (re-run from the clean run)");
  }

  // Every ablation again, all in one call of rerun_cells (a decoder's batch: cells joining at different layers, a mean
  // over every position beside edits of the whole rows).
  std::vector<std::vector<Edit>> cells;
  for (const json& a : c->fixture["ablations"]) {
    std::vector<HeadRef> heads;
    for (const json& h : a["heads"]) heads.push_back({h[0].get<int>(), h[1].get<int>()});
    cells.push_back(
        ablation_edits(heads, *parse_ablation_mode(a["mode"].get<std::string>()), corrupt->activations.get()));
  }
  std::size_t seen = 0;
  auto batched =
      runner.rerun_cells(*clean, cells, options_for(*c).logits_position, [&](std::size_t first, const Matrix& l) {
        for (Index i = 0; i < l.rows(); ++i) {
          const json& a = c->fixture["ablations"][first + static_cast<std::size_t>(i)];
          expect_logits(l.row(i), a["logits"],
                        std::string(GetParam()) + " ablation " + a["heads"].dump() + " " +
                            a["mode"].get<std::string>() + " (rerun_cells)");
          ++seen;
        }
        return true;
      });
  ASSERT_TRUE(batched) << batched.error().message();
  EXPECT_EQ(seen, cells.size());
}

// rerun_cells against one rerun per cell (to float rounding: the products' row counts differ, and with them the
// 16-bit weights' widening path and the sums' order; 1.7e-5 seen), on cells of every site at every layer, with the
// measured position the fixture's and (causal models) three before the last: the batch's stacked rows, its rows that
// stop at the measured one and its last layer of measured rows only give what the re-runs give.
TEST_P(Fixture, BatchedCellsMatchReruns) {
  auto c = load_case(GetParam());
  ASSERT_TRUE(c);
  TransformerRunner runner(c->model);
  auto clean = run_input(runner, *c, "clean", options_for(*c));
  ASSERT_TRUE(clean) << clean.error().message();
  auto corrupt = run_input(runner, *c, "corrupt", options_for(*c));
  ASSERT_TRUE(corrupt) << corrupt.error().message();
  const auto& cfg = c->model->config();
  const Index n = clean->activations->resid_pre.front().rows();
  const bool vit = cfg.family == Family::Vit;
  std::vector<int> positions{vit ? -1 : c->position};
  if (cfg.family == Family::Decoder || cfg.family == Family::Gpt2) positions.push_back(static_cast<int>(n) - 3);
  for (int position : positions) {
    std::vector<std::vector<Edit>> cells;
    for (int l = cfg.layers - 1; l >= 0; --l) {  // out of order: the batch sorts them by first layer
      for (Site site : {Site::ResidPre, Site::Z, Site::AttnOut, Site::MlpOut}) {
        for (int p : {0, static_cast<int>(n) / 2, static_cast<int>(n) - 1}) {
          Edit e{site,
                 l,
                 site == Site::Z ? l % cfg.heads : -1,
                 site == Site::Z && p == 0 ? -1 : p,
                 Edit::Kind::Replace,
                 &corrupt->activations->at(site)[static_cast<std::size_t>(l)]};
          cells.push_back({e});
        }
      }
      cells.push_back({Edit{Site::Z, l, 0, -1, Edit::Kind::Mean, nullptr},
                       Edit{Site::ResidPre, l, -1, 1, Edit::Kind::Replace,
                            &corrupt->activations->resid_pre[static_cast<std::size_t>(l)]}});
    }
    std::size_t seen = 0;
    auto batched = runner.rerun_cells(*clean, cells, position, [&](std::size_t first, const Matrix& l) {
      for (Index i = 0; i < l.rows(); ++i, ++seen) {
        RunOptions o;
        o.edits = cells[first + static_cast<std::size_t>(i)];
        o.logits_position = position;
        auto one = runner.rerun(*clean, o);
        EXPECT_TRUE(one) << one.error().message();
        if (!one) continue;
        const RowVector expected = *measured_logits(*one, position);
        const double worst = ((l.row(i) - expected).array().abs() / expected.array().abs().max(1.0f)).maxCoeff();
        EXPECT_LE(worst, kTolerance) << GetParam() << ": cell " << first + static_cast<std::size_t>(i)
                                     << " at position " << position;
      }
      return true;
    });
    ASSERT_TRUE(batched) << batched.error().message();
    EXPECT_EQ(seen, cells.size());
  }
}

void expect_sweep(const SweepResult& r, const json& expected, const std::string& what) {
  ASSERT_EQ(r.done, r.layers * r.heads * r.positions) << what;
  double worst = 0;
  std::string at;
  for (int l = 0; l < r.layers; ++l) {
    for (int h = 0; h < r.heads; ++h) {
      for (int p = 0; p < r.positions; ++p) {
        const json* e = &expected[static_cast<std::size_t>(l)];
        if (r.kind == Sweep::Heads || r.kind == Sweep::HeadsPositions) e = &(*e)[static_cast<std::size_t>(h)];
        if (r.kind != Sweep::Heads) e = &(*e)[static_cast<std::size_t>(p)];
        const double err = std::abs(r.at(l, h, p) - e->get<double>());
        if (!(err <= worst)) {
          worst = std::isnan(err) ? 1e9 : err;
          at = "layer " + std::to_string(l) + " head " + std::to_string(h) + " position " + std::to_string(p);
        }
      }
    }
  }
  EXPECT_LE(worst, kTolerance) << what << ": worst at " << at;
}

TEST_P(Fixture, EverySweepCellMatchesTorch) {
  auto c = load_case(GetParam());
  ASSERT_TRUE(c);
  TransformerRunner runner(c->model);
  auto clean = run_input(runner, *c, "clean", options_for(*c));
  ASSERT_TRUE(clean) << clean.error().message();
  auto corrupt = run_input(runner, *c, "corrupt", options_for(*c));
  ASSERT_TRUE(corrupt) << corrupt.error().message();
  const json& sweeps = c->fixture["sweeps"];
  const int answer = c->fixture["answer"].get<int>(), wrong = c->fixture["wrong"].get<int>();
  const struct {
    Metric metric;
    Sweep sweep;
    const char* key;
  } runs[] = {{Metric::LogitDiff, Sweep::Heads, "heads"},
              {Metric::LogitDiff, Sweep::HeadsPositions, "heads_positions"},
              {Metric::LogitDiff, Sweep::LayersPositions, "layers_positions"},
              {Metric::LogitDiff, Sweep::AttnOutPositions, "attn_out_positions"},
              {Metric::LogitDiff, Sweep::MlpOutPositions, "mlp_out_positions"},
              {Metric::LogProb, Sweep::Heads, "heads_logprob"},
              {Metric::KL, Sweep::Heads, "heads_kl"}};
  for (const auto& run : runs) {
    const std::string what = std::string(GetParam()) + " " + run.key;
    auto patching = Patching::make(*clean, *corrupt, {run.metric, answer, wrong}, c->position);
    ASSERT_TRUE(patching) << what << ": " << patching.error().message();
    if (run.metric == Metric::LogitDiff) {
      const json& m = c->fixture["metrics"];
      EXPECT_NEAR(patching->clean_metric(), m["clean"]["logit_diff"].get<double>(), kTolerance * 10) << what;
      EXPECT_NEAR(patching->corrupt_metric(), m["corrupt"]["logit_diff"].get<double>(), kTolerance * 10) << what;
    }
    auto result = patching->sweep(runner, run.sweep);
    ASSERT_TRUE(result) << what << ": " << result.error().message();
    expect_sweep(*result, sweeps[run.key], what);
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, Fixture, ::testing::ValuesIn(parity::kModelCases), parity::case_test_name);

}  // namespace
}  // namespace attn::models::intervention_parity
