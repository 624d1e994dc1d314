// Attention on demand (attn/on_demand_attention.h) against the stored maps of the same run, on the random decoders of
// tests/data/decoders (every switch: grouped queries, sliding windows, soft-capping, Gemma 3's local layers, fused
// projections, 16-bit weights) and GPT-2, BERT and DistilBERT (causal and bidirectional): every head's whole map,
// rows, columns and tiles recomputed from the kept queries,
// keys and row statistics within 1e-6; the logits unchanged; the streamed statistics equal to those of the stored
// maps (attn::analysis::head_statistics) and their column sums.
#include "attn/analysis/attention_analysis.h"
#include "attn/models/transformer.h"
#include "attn/on_demand_attention.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

namespace attn::models {
namespace {

namespace fs = std::filesystem;

constexpr double kExact = 1e-6;

std::vector<int> random_ids(Index n, int vocab, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pick(0, vocab - 1);
  std::vector<int> ids(static_cast<std::size_t>(n));
  for (int& id : ids) id = pick(rng);
  return ids;
}

double max_difference(const Matrix& a, const Matrix& b) { return (a - b).cwiseAbs().maxCoeff(); }

class OnDemand : public ::testing::TestWithParam<std::string> {};

TEST_P(OnDemand, RecomputedMapsRowsColumnsAndTilesEqualTheStoredOnes) {
  auto model = TransformerModel::load(fs::path(ATTN_TEST_DATA_DIR) / GetParam());
  ASSERT_TRUE(model) << model.error().message();
  const auto& c = (*model)->config();
  // 60 tokens: query blocks of 32 and 28 rows; 37: a last block of 5 rows, which the forward multiplies by Eigen's
  // own kernel rather than the library's GEMM.
  for (const Index n : {Index{60}, Index{37}}) {
    const Index tokens = std::min<Index>(n, c.context());
    SCOPED_TRACE(std::to_string(tokens) + " tokens");
    const auto ids = random_ids(tokens, c.vocab_size, static_cast<unsigned>(n));
    // Both: the maps and the on-demand data of one forward (two forwards differ in the last bits: the linear maps'
    // threads split their work as they come). OnDemand alone: no maps, the same logits.
    TransformerRunner both_runner(*model), lazy_runner(*model);
    RunOptions both_options;
    both_options.all_logits = true;
    both_options.keep = RunOptions::Keep::Both;
    RunOptions lazy_options = both_options;
    lazy_options.keep = RunOptions::Keep::OnDemand;
    auto stored = both_runner.run_ids(ids, {}, both_options);
    auto lazy_only = lazy_runner.run_ids(ids, {}, lazy_options);
    ASSERT_TRUE(stored) << stored.error().message();
    ASSERT_TRUE(lazy_only) << lazy_only.error().message();
    EXPECT_TRUE(lazy_only->attention.layers.empty());
    EXPECT_EQ(lazy_only->attention.tokens.size(), ids.size());
    ASSERT_EQ(static_cast<int>(lazy_only->on_demand.size()), c.layers);
    ASSERT_EQ(lazy_only->logits.size(), stored->logits.size());
    if (stored->logits.size() > 0) {
      EXPECT_LE(max_difference(lazy_only->logits, stored->logits),
                1e-5 * std::max(1.0f, stored->logits.cwiseAbs().maxCoeff()));
    }
    ASSERT_EQ(lazy_only->predictions.size(), stored->predictions.size());
    for (std::size_t p = 0; p < stored->predictions.size(); ++p) {
      ASSERT_FALSE(stored->predictions[p].top.empty());
      EXPECT_EQ(lazy_only->predictions[p].top.front().id, stored->predictions[p].top.front().id);
    }
    {
      // The maps of the forward that keeps only maps (GPT-2 and BERT: another attention kernel; every model: another
      // forward, whose linear maps' threads may split their sums otherwise): the same weights to float rounding, grown
      // through the layers.
      TransformerRunner maps_runner(*model);
      RunOptions maps_options = both_options;
      maps_options.keep = RunOptions::Keep::Maps;
      auto maps_only = maps_runner.run_ids(ids, {}, maps_options);
      ASSERT_TRUE(maps_only) << maps_only.error().message();
      ASSERT_EQ(maps_only->attention.layers.size(), stored->attention.layers.size());
      EXPECT_TRUE(maps_only->on_demand.empty());
      for (std::size_t l = 0; l < stored->attention.layers.size(); ++l) {
        for (int h = 0; h < c.heads; ++h) {
          EXPECT_LE(
              max_difference(maps_only->attention.layers[l].maps.head(h), stored->attention.layers[l].maps.head(h)),
              1e-5)
              << "layer " << l << " head " << h;
        }
      }
    }
    const auto* lazy = &*stored;
    ASSERT_EQ(static_cast<int>(lazy->on_demand.size()), c.layers);
    ASSERT_EQ(static_cast<int>(stored->attention.layers.size()), c.layers);
    for (int l = 0; l < c.layers; ++l) {
      const OnDemandLayer& layer = lazy->on_demand[static_cast<std::size_t>(l)];
      const HeadStack& maps = stored->attention.layers[static_cast<std::size_t>(l)].maps;
      ASSERT_EQ(layer.tokens(), tokens);
      for (int h = 0; h < c.heads; ++h) {
        SCOPED_TRACE("layer " + std::to_string(l) + " head " + std::to_string(h));
        const Matrix want = maps.head(h);
        EXPECT_LE(max_difference(layer.map(h), want), kExact);
        {
          // The exact map of the kept queries and keys, in double.
          using D = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
          D ref = D::Zero(tokens, tokens);
          const int g = h / (c.heads / layer.kv_heads());
          for (Index r = 0; r < tokens; ++r) {
            const Index lo = layer.first_key(r), hi = layer.last_key(r);
            Eigen::VectorXd sc(hi + 1 - lo);
            for (Index j = lo; j <= hi; ++j) {
              double acc = 0;
              for (Index k = 0; k < layer.head_dim(); ++k)
                acc += double(layer.query(h, r)[k]) * double(layer.key(g, j)[k]);
              if (layer.softcap() > 0) acc = std::tanh(acc / layer.softcap()) * layer.softcap();
              sc[j - lo] = acc;
            }
            const double mx = sc.maxCoeff();
            const Eigen::VectorXd e = (sc.array() - mx).exp();
            for (Index j = lo; j <= hi; ++j) ref(r, j) = e[j - lo] / e.sum();
          }
          // float32 arithmetic against exact arithmetic: the stored path is within 1e-6 of it on these models.
          EXPECT_LE((layer.map(h).cast<double>() - ref).cwiseAbs().maxCoeff(), 2e-6);
        }
        std::vector<float> line(static_cast<std::size_t>(tokens));
        for (const Index r : {Index{0}, tokens / 2, tokens - 1}) {
          layer.row(h, r, line.data());
          EXPECT_LE(max_difference(Eigen::Map<const RowVector>(line.data(), tokens), want.row(r)), kExact)
              << "row " << r;
        }
        for (const Index k : {Index{0}, Index{3}, tokens - 1}) {
          layer.column(h, k, line.data());
          const RowVector col = want.col(k).transpose();
          EXPECT_LE(max_difference(Eigen::Map<const RowVector>(line.data(), tokens), col), kExact) << "column " << k;
        }
        Matrix tile(7, 9);
        layer.tile(h, tokens - 10, 7, 5, 9, tile.data(), 9);
        EXPECT_LE(max_difference(tile, want.block(tokens - 10, 5, 7, 9)), kExact);
      }
    }
  }
}

TEST_P(OnDemand, StreamedStatisticsAreThoseOfTheStoredMaps) {
  auto model = TransformerModel::load(fs::path(ATTN_TEST_DATA_DIR) / GetParam());
  ASSERT_TRUE(model) << model.error().message();
  const auto& c = (*model)->config();
  const Index tokens = std::min<Index>(50, c.context());
  const auto ids = random_ids(tokens, c.vocab_size, 9);
  TransformerRunner runner(*model);
  RunOptions o;
  o.keep = RunOptions::Keep::Both;
  auto stored = runner.run_ids(ids, {}, o);
  ASSERT_TRUE(stored) << stored.error().message();
  const auto* lazy = &*stored;
  ASSERT_FALSE(stored->attention.layers.empty());
  analysis::StatsOptions so;
  so.stage = stored->attention.layers.front().stage;
  // Separators: positions past 0 (3, 17 and 17 again, the last token; one past the run is ignored).
  so.special_positions = {0, 3, 17, 17, static_cast<int>(tokens) - 1, static_cast<int>(tokens)};
  const auto want = analysis::head_statistics(stored->attention, so);
  ASSERT_EQ(static_cast<int>(want.size()), c.layers * c.heads);
  const auto streamed = analysis::streamed_statistics(lazy->on_demand, so.special_positions);
  ASSERT_EQ(streamed.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(streamed[i].layer, want[i].layer);
    EXPECT_EQ(streamed[i].head, want[i].head);
    EXPECT_NEAR(streamed[i].entropy, want[i].entropy, 1e-5);
    EXPECT_FLOAT_EQ(streamed[i].max_entropy, want[i].max_entropy);
    EXPECT_NEAR(streamed[i].mean_distance, want[i].mean_distance, 1e-4);
    EXPECT_NEAR(streamed[i].first_mass, want[i].first_mass, 1e-6);
    EXPECT_NEAR(streamed[i].special_mass, want[i].special_mass, 1e-5);
    EXPECT_GT(want[i].special_mass, 0.0f);
    EXPECT_NEAR(streamed[i].max_weight, want[i].max_weight, 1e-6);
  }
  for (const auto& w : want) {
    SCOPED_TRACE("layer " + std::to_string(w.layer) + " head " + std::to_string(w.head));
    const StreamedHeadStats& s = lazy->on_demand[static_cast<std::size_t>(w.layer)].stats(w.head);
    ASSERT_EQ(s.rows, tokens);
    const double rows = static_cast<double>(s.rows);
    EXPECT_NEAR(s.entropy / rows, w.entropy, 1e-5);
    EXPECT_NEAR(s.distance / rows, w.mean_distance, 1e-4);
    EXPECT_NEAR(s.first_mass / rows, w.first_mass, 1e-6);
    EXPECT_NEAR(s.max_weight, w.max_weight, 1e-6);
    const RowVector received =
        stored->attention.layers[static_cast<std::size_t>(w.layer)].maps.head(w.head).colwise().sum();
    EXPECT_LE(max_difference(Eigen::Map<const RowVector>(s.received.data(), tokens), received), 1e-5);
  }
}

// The map pooled by hand: every cell of out (i, j) over the map's cells [r0 + i f, + f) x [c0 + j f, + f) inside it.
Matrix pooled_by_hand(const Matrix& map, Index f, OnDemandLayer::Pooling pooling, Index r0, Index rows, Index c0,
                      Index cols, bool preview) {
  const Index n = map.rows();
  Matrix out = Matrix::Zero(rows, cols);
  for (Index i = 0; i < rows; ++i) {
    const Index a = r0 + i * f;
    if (a >= n) continue;
    const Index ra = preview ? std::min(n - 1, a + f / 2) : a, rn = preview ? 1 : std::min(f, n - a);
    for (Index j = 0; j < cols; ++j) {
      const Index b = c0 + j * f;
      if (b >= n) continue;
      const auto cell = map.block(ra, b, rn, std::min(f, n - b));
      out(i, j) = pooling == OnDemandLayer::Pooling::Max ? cell.maxCoeff() : cell.mean();
    }
  }
  return out;
}

// Levels of detail: pooled and previewed blocks of every head, at factors that divide the map and that do not,
// blocks reaching past it, equal to the recomputed map pooled by hand (max exactly as the cells are, mean within
// float summation; previews within 4e-6).
TEST_P(OnDemand, PooledLevelsAndPreviewsAreTheMapPooled) {
  auto model = TransformerModel::load(fs::path(ATTN_TEST_DATA_DIR) / GetParam());
  ASSERT_TRUE(model) << model.error().message();
  const auto& c = (*model)->config();
  const Index tokens = std::min<Index>(70, c.context());
  TransformerRunner runner(*model);
  RunOptions o;
  o.keep = RunOptions::Keep::OnDemand;
  auto run = runner.run_ids(random_ids(tokens, c.vocab_size, 5), {}, o);
  ASSERT_TRUE(run) << run.error().message();
  const OnDemandLayer& layer = run->on_demand.back();
  using P = OnDemandLayer::Pooling;
  struct Block {
    Index f, r0, rows, c0, cols;
  };
  const Block blocks[] = {{1, 0, tokens, 0, tokens}, {4, 0, 18, 0, 18}, {3, 6, 30, 0, 30},
                          {7, 14, 5, 21, 9},         {64, 0, 2, 0, 2},  {5, 60, 4, 3, 20}};
  for (int h = 0; h < c.heads; h += std::max(1, c.heads / 3)) {
    const Matrix map = layer.map(h);
    for (const Block& b : blocks) {
      for (const P pooling : {P::Max, P::Mean}) {
        for (const bool preview : {false, true}) {
          SCOPED_TRACE("head " + std::to_string(h) + ", factor " + std::to_string(b.f) + " at " + std::to_string(b.r0) +
                       ", " + std::to_string(b.c0) + (pooling == P::Max ? ", max" : ", mean") +
                       (preview ? ", preview" : ""));
          Matrix got = Matrix::Constant(b.rows, b.cols, -1.0f);
          if (preview) {
            layer.preview(h, b.f, pooling, b.r0, b.rows, b.c0, b.cols, got.data(), b.cols);
          } else {
            layer.pooled(h, b.f, pooling, b.r0, b.rows, b.c0, b.cols, got.data(), b.cols);
          }
          const Matrix want = pooled_by_hand(map, b.f, pooling, b.r0, b.rows, b.c0, b.cols, preview);
          // Max: the largest recomputed weight; mean: a float sum of up to factor^2 of them in another order. A
          // preview's rows are multiplied at a stride, not in the forward's blocks: each weight within 2e-6 of
          // exact arithmetic (as the forward's), so within 4e-6 of the forward's.
          EXPECT_LE(max_difference(got, want), preview ? 4e-6 : (pooling == P::Mean ? 1e-6 : kExact));
        }
      }
    }
  }
  Matrix one(1, 1);
  EXPECT_THROW(layer.pooled(0, 0, P::Max, 0, 1, 0, 1, one.data(), 1), std::out_of_range);
  EXPECT_THROW(layer.preview(c.heads, 2, P::Max, 0, 1, 0, 1, one.data(), 1), std::out_of_range);
}

// Rollout of one row over a run kept on demand: row q of the whole rollout of the stored maps, for queries at the
// start, in the middle (inside and outside a sliding window) and at the end, every fusion, residuals 0.5 and 0, a
// range of layers; refused with a discard ratio, a query past the run, and cancelled when asked.
TEST_P(OnDemand, RolloutOfOneRowIsThatRowOfTheWholeRollout) {
  auto model = TransformerModel::load(fs::path(ATTN_TEST_DATA_DIR) / GetParam());
  ASSERT_TRUE(model) << model.error().message();
  const auto& c = (*model)->config();
  const Index tokens = std::min<Index>(70, c.context());
  TransformerRunner runner(*model);
  RunOptions o;
  o.keep = RunOptions::Keep::Both;
  auto run = runner.run_ids(random_ids(tokens, c.vocab_size, 21), {}, o);
  ASSERT_TRUE(run) << run.error().message();
  struct Case {
    analysis::HeadFusion fusion;
    float residual;
    int first, last;
  };
  for (const Case& k : {Case{analysis::HeadFusion::Mean, 0.5f, 0, -1}, Case{analysis::HeadFusion::Max, 0.5f, 0, -1},
                        Case{analysis::HeadFusion::Min, 0.0f, 0, -1}, Case{analysis::HeadFusion::Mean, 0.3f, 1, 1}}) {
    analysis::RolloutOptions ro;
    ro.stage = run->attention.layers.front().stage;
    ro.fusion = k.fusion;
    ro.residual = k.residual;
    ro.first_layer = std::min(k.first, c.layers - 1);
    ro.last_layer = k.last < 0 ? -1 : std::min(k.last, c.layers - 1);
    const auto whole = analysis::rollout(run->attention, ro);
    ASSERT_TRUE(whole) << whole.error().message();
    for (const Index q : {Index{0}, Index{1}, tokens / 2, tokens - 2, tokens - 1}) {
      SCOPED_TRACE("fusion " + std::to_string(int(k.fusion)) + ", residual " + std::to_string(k.residual) + ", query " +
                   std::to_string(q));
      const auto row = analysis::rollout_row(run->on_demand, q, ro);
      ASSERT_TRUE(row) << row.error().message();
      ASSERT_EQ(static_cast<Index>(row->size()), tokens);
      const RowVector want = whole->row(q);
      EXPECT_LE(max_difference(Eigen::Map<const RowVector>(row->data(), tokens), want), 1e-5);
      EXPECT_NEAR(Eigen::Map<const RowVector>(row->data(), tokens).sum(), 1.0, 1e-4);
    }
  }
  analysis::RolloutOptions discard;
  discard.discard_ratio = 0.5f;
  const auto refused = analysis::rollout_row(run->on_demand, 3, discard);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::OutOfRange);
  const auto past = analysis::rollout_row(run->on_demand, tokens, {});
  ASSERT_FALSE(past);
  EXPECT_NE(past.error().reason.find("not one of the run's"), std::string::npos) << past.error().reason;
  const std::atomic<bool> cancel{true};
  const auto cancelled = analysis::rollout_row(run->on_demand, tokens - 1, {}, &cancel);
  ASSERT_FALSE(cancelled);
  EXPECT_EQ(cancelled.error().kind, ErrorKind::Cancelled);
  std::vector<std::pair<int, int>> steps;
  ASSERT_TRUE(analysis::rollout_row(run->on_demand, tokens - 1, {}, nullptr,
                                    [&](int done, int of) { steps.emplace_back(done, of); }));
  ASSERT_EQ(static_cast<int>(steps.size()), c.layers);
  EXPECT_EQ(steps.back(), std::make_pair(c.layers, c.layers));
}

INSTANTIATE_TEST_SUITE_P(TextModels, OnDemand,
                         ::testing::Values("decoders/llama", "decoders/llama-tied-linear-bf16",
                                           "decoders/llama3-rope-f16", "decoders/llama-dynamic",
                                           "decoders/llama-yarn-bias-bf16", "decoders/mistral-window",
                                           "decoders/qwen2-bias", "decoders/qwen3-head-dim", "decoders/gemma2-softcap",
                                           "decoders/gemma3-local-global", "decoders/phi3-fused-partial",
                                           "transformers/gpt2", "transformers/bert", "transformers/distilbert"),
                         [](const auto& info) {
                           std::string name = info.param.substr(info.param.find('/') + 1);
                           for (char& ch : name)
                             if (ch == '-') ch = '_';
                           return name;
                         });

// What on demand does not do says so rather than return an empty run: BERT's padding, and ViT (whose maps are
// small and whose statistics are over the patch grid).
TEST(OnDemandRefusal, PaddingAndViTAreRefusedWithTheReason) {
  auto bert = TransformerModel::load(fs::path(ATTN_TEST_DATA_DIR) / "transformers" / "bert");
  ASSERT_TRUE(bert) << bert.error().message();
  TransformerRunner runner(*bert);
  RunOptions o;
  o.keep = RunOptions::Keep::OnDemand;
  o.attention_mask = {1, 1, 0};
  auto padded = runner.run_ids({1, 2, 3}, {}, o);
  ASSERT_FALSE(padded);
  EXPECT_EQ(padded.error().kind, ErrorKind::Unsupported);
  EXPECT_NE(padded.error().reason.find("padding"), std::string::npos) << padded.error().reason;
  o.attention_mask = {1, 1, 1};  // no padded key: nothing to refuse
  auto unpadded = runner.run_ids({1, 2, 3}, {}, o);
  ASSERT_TRUE(unpadded) << unpadded.error().message();
  EXPECT_EQ(unpadded->on_demand.size(), static_cast<std::size_t>((*bert)->config().layers));

  auto vit = TransformerModel::load(fs::path(ATTN_TEST_DATA_DIR) / "transformers" / "vit");
  ASSERT_TRUE(vit) << vit.error().message();
  TransformerRunner vit_runner(*vit);
  const auto& vc = (*vit)->config();
  Image image(vc.image_size, vc.image_size, vc.num_channels);
  RunOptions vo;
  vo.keep = RunOptions::Keep::OnDemand;
  auto refused = vit_runner.run_image(image, vo);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::Unsupported);
  EXPECT_NE(refused.error().reason.find("keeps its attention maps"), std::string::npos) << refused.error().reason;
  vo.keep = RunOptions::Keep::Auto;
  auto kept = vit_runner.run_image(image, vo);
  ASSERT_TRUE(kept) << kept.error().message();
  EXPECT_EQ(kept->attention.layers.size(), static_cast<std::size_t>(vc.layers));
}

}  // namespace
}  // namespace attn::models

namespace attn::models {
namespace {

// Keep::Auto: maps while they take at most kOnDemandAbove bytes, on demand beyond (every text model; ViT keeps maps).
TEST(OnDemandAuto, TextModelsKeepAttentionOnDemandWhenTheirMapsWouldBeLarge) {
  auto model = TransformerModel::load(fs::path(ATTN_TEST_DATA_DIR) / "decoders" / "llama");
  auto gpt2 = TransformerModel::load(fs::path(ATTN_TEST_DATA_DIR) / "transformers" / "gpt2");
  ASSERT_TRUE(model) << model.error().message();
  ASSERT_TRUE(gpt2) << gpt2.error().message();
  const auto& c = (*model)->config();
  RunOptions o;
  o.keep = RunOptions::Keep::Auto;
  // The largest n whose maps fit the threshold, and one more.
  Index n = 1;
  while (static_cast<double>(c.layers * c.heads) * static_cast<double>((n + 1) * (n + 1)) * 4.0 <=
         static_cast<double>(kOnDemandAbove))
    ++n;
  RunOptions::Keep keep{};
  const std::size_t at = run_bytes(c, n, o, &keep);
  EXPECT_EQ(keep, RunOptions::Keep::Maps);
  const std::size_t beyond = run_bytes(c, n + 1, o, &keep);
  EXPECT_EQ(keep, RunOptions::Keep::OnDemand);
  EXPECT_LT(beyond, at);  // the maps are what made the difference
  run_bytes((*gpt2)->config(), 100000, o, &keep);
  EXPECT_EQ(keep, RunOptions::Keep::OnDemand);
  run_bytes((*gpt2)->config(), 10, o, &keep);
  EXPECT_EQ(keep, RunOptions::Keep::Maps);

  TransformerRunner runner(*model);
  auto run = runner.run_ids(random_ids(40, c.vocab_size, 3), {}, o);
  ASSERT_TRUE(run) << run.error().message();
  EXPECT_EQ(static_cast<int>(run->attention.layers.size()), c.layers);  // small: maps
  EXPECT_TRUE(run->on_demand.empty());
}

// Over the memory limit: refused before anything is allocated, with the estimate, the limit and what would fit;
// that many tokens then run.
TEST(OnDemandMemory, ARunOverTheLimitIsRefusedWithWhatWouldFit) {
  auto model = TransformerModel::load(fs::path(ATTN_TEST_DATA_DIR) / "decoders" / "llama");
  ASSERT_TRUE(model) << model.error().message();
  const auto& c = (*model)->config();
  const Index n = std::min<Index>(200, c.context());
  RunOptions o;
  o.memory_limit = run_bytes(c, n, o) - 1;
  TransformerRunner runner(*model);
  auto refused = runner.run_ids(random_ids(n, c.vocab_size, 4), {}, o);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::OutOfRange);
  const std::string& why = refused.error().reason;
  EXPECT_NE(why.find("this run of " + std::to_string(n) + " tokens needs about"), std::string::npos) << why;
  EXPECT_NE(why.find("attention maps kept"), std::string::npos) << why;
  const auto at = why.find("up to ");
  ASSERT_NE(at, std::string::npos) << why;
  const Index fit = std::stol(why.substr(at + 6));
  EXPECT_EQ(fit, n - 1) << why;
  auto ran = runner.run_ids(random_ids(fit, c.vocab_size, 4), {}, o);
  EXPECT_TRUE(ran) << ran.error().message();
}

}  // namespace
}  // namespace attn::models
