#include "attn/lab/lab.h"
#include "lab/lab_budget.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <string>

using namespace attn;
using namespace attn::lab;

namespace {
LabRequest request(Mechanism m, std::string q = std::string(kDefaultQuery),
                   std::string s = std::string(kDefaultSource)) {
  // The mechanisms around a target phrase read it from brackets in the source.
  if (info(m).uses_target && s == kDefaultSource) s = std::string(kTargetExample);
  LabRequest r{std::move(q), std::move(s), {}};
  r.params.mechanism = m;
  return r;
}
Index col_of(const AttentionMap& map, std::string_view label) {
  for (std::size_t j = 0; j < map.col_labels.size(); ++j)
    if (map.col_labels[j] == label) return static_cast<Index>(j);
  return -1;
}
}  // namespace

class EveryMechanism : public ::testing::TestWithParam<MechanismInfo> {};

TEST_P(EveryMechanism, RunsOnTheDefaultsAndLabelsItsMaps) {
  const MechanismInfo& mi = GetParam();
  auto r = run_lab(request(mi.id));
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_FALSE(r->trace.empty());
  for (const AttentionMap& m : r->trace.maps()) {
    EXPECT_EQ(static_cast<Index>(m.row_labels.size()), m.weights.rows()) << m.title();
    EXPECT_EQ(static_cast<Index>(m.col_labels.size()), m.weights.cols()) << m.title();
    // Weights are finite and non-negative. Not distributions: Linformer's P E (its projection E has signed
    // entries) and Transformer-XL's four score terms, "(a) content ..." (signed; NaN where the causal mask is).
    if (m.name.starts_with("(")) {
      EXPECT_TRUE(m.weights.array().isFinite().any()) << m.title();
      continue;
    }
    EXPECT_TRUE(m.weights.allFinite()) << m.title();
    if (m.name != "implied (P E)") {
      EXPECT_GE(m.weights.minCoeff(), 0.0f) << m.title();
    }
  }
  EXPECT_GT(r->elapsed_ms, 0.0);
}

// Issue 41, finding 5: every index counts from 0, as the README says; the Lab counted hops, iterations, capsules,
// classes, Linformer's keys k1..k8, rounds, segments and sentences from 1. Every series of numbered names in the
// maps' names and titles, their labels and the notes starts at 0.
TEST_P(EveryMechanism, CountsEveryIndexFromZero) {
  const MechanismInfo& mi = GetParam();
  LabRequest req = request(mi.id);
  req.params.segment = 4;  // Transformer-XL: four segments of the 16 words
  auto r = run_lab(req);
  ASSERT_TRUE(r) << r.error().message();
  static const std::regex kIndex(
      R"(\b(hop|iteration|step|capsule|class|round|segment|layer|head|sentence|unit|channel) (\d+)|\b(k|S)(\d+)\b)");
  std::map<std::string, long> lowest;  // "hop" -> the smallest number seen after it
  const auto scan = [&](const std::string& text) {
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kIndex); it != std::sregex_iterator(); ++it) {
      const std::string word = (*it)[1].matched ? (*it)[1].str() : (*it)[3].str();
      const long number = std::stol((*it)[1].matched ? (*it)[2].str() : (*it)[4].str());
      const auto [at, fresh] = lowest.emplace(word, number);
      if (!fresh) at->second = std::min(at->second, number);
    }
  };
  for (const AttentionMap& m : r->trace.maps()) {
    scan(m.name);
    scan(m.title());
    for (const auto& label : m.row_labels) scan(label);
    for (const auto& label : m.col_labels) scan(label);
  }
  for (const auto& note : r->notes) scan(note);
  for (const auto& [word, number] : lowest)
    EXPECT_EQ(number, 0) << mi.key << ": \"" << word << "\" counts from " << number;
}

// Issue 41, finding 6: a map that is not attention weights says what it holds, for its colour bar and range.
TEST(Lab, MapsThatAreNotWeightsNameTheirQuantity) {
  LabRequest req = request(Mechanism::TransformerXL);
  req.params.segment = 4;
  auto xl = run_lab(req);
  ASSERT_TRUE(xl) << xl.error().message();
  for (const AttentionMap& m : xl->trace.maps())
    EXPECT_EQ(m.quantity, m.name.starts_with("(") ? "score" : "weight") << m.name;
  auto linformer = run_lab(request(Mechanism::Linformer));
  ASSERT_TRUE(linformer) << linformer.error().message();
  EXPECT_EQ(linformer->trace.maps()[0].quantity, "weight");
  EXPECT_EQ(linformer->trace.maps()[1].quantity, "implied weight");
  auto gated = run_lab(request(Mechanism::GatedSoft));  // beta scales the context, not the weights
  ASSERT_TRUE(gated) << gated.error().message();
  EXPECT_EQ(gated->trace.maps()[0].quantity, "weight");
}

INSTANTIATE_TEST_SUITE_P(Lab, EveryMechanism, ::testing::ValuesIn(mechanisms().begin(), mechanisms().end()),
                         [](const auto& info) {
                           std::string s(info.param.key);
                           for (char& c : s)
                             if (c == '-') c = '_';
                           return s;
                         });

// The pooling section's point: pooling without positions ignores word order (the same weights per word and
// the same pooled vector for the words shuffled), with positions it does not.
TEST(Lab, ShuffleShowsThatPoolingWithoutPositionsIgnoresOrder) {
  LabRequest req = request(Mechanism::Pooling);
  req.source = "the battery lasts all day but the screen is dim and the speaker crackles";
  req.params.shuffle = true;
  auto r = run_lab(req);
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ(r->trace.size(), 5u);  // the run asked for, then no positions and sinusoidal, each in both orders
  const auto& maps = r->trace.maps();
  EXPECT_EQ(maps[1].name, "no positions \u00b7 sentence order");
  EXPECT_EQ(maps[2].name, "no positions \u00b7 shuffled, shown in sentence order");
  EXPECT_EQ(maps[4].name, "sinusoidal positions \u00b7 shuffled, shown in sentence order");
  EXPECT_LT((maps[2].weights - maps[1].weights).cwiseAbs().maxCoeff(), 1e-6f);
  EXPECT_GT((maps[4].weights - maps[3].weights).cwiseAbs().maxCoeff(), 1e-3f);
  EXPECT_EQ(maps[1].weights, maps[0].weights);  // positions none was the run asked for
  ASSERT_FALSE(r->notes.empty());
  EXPECT_TRUE(r->notes.back().starts_with("shuffled words, |c' - c| / |c|: no positions ")) << r->notes.back();
  req.params.shuffle = false;
  EXPECT_EQ(run_lab(req)->trace.size(), 1u);
}

TEST(Lab, DotAttentionLinksApplesToApple) {
  LabRequest req = request(Mechanism::Global);
  req.params.score = ScoreKind::ScaledDot;
  auto r = run_lab(req);
  ASSERT_TRUE(r);
  const AttentionMap& m = r->trace.maps()[0];
  ASSERT_EQ(m.row_labels[3], "apples");
  Index best = 0;
  m.weights.row(3).maxCoeff(&best);
  EXPECT_EQ(m.col_labels[static_cast<std::size_t>(best)], "apple");
  EXPECT_EQ(m.col_spans[static_cast<std::size_t>(best)].begin, 4);
}

// Past kMaxTokens a sentence is cut, and the run says so in the words the other tabs use; the map is of
// the first kMaxTokens tokens, the same as for the cut text itself.
TEST(Lab, LongSentencesAreTruncatedWithAWarning) {
  std::string longSource;
  for (int i = 0; i < kMaxTokens + 5; ++i) longSource += "w" + std::to_string(i) + " ";
  LabRequest req = request(Mechanism::Global);
  req.source = longSource;
  auto r = run_lab(req);
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_EQ(r->warnings[0], "source truncated to 2048 tokens (of 2053)");
  ASSERT_EQ(r->source_tokens.size(), std::size_t(kMaxTokens));
  EXPECT_EQ(r->source_tokens.back(), "w2047");

  std::string cut;
  for (int i = 0; i < kMaxTokens; ++i) cut += "w" + std::to_string(i) + " ";
  req.source = cut;
  auto same = run_lab(req);
  ASSERT_TRUE(same);
  EXPECT_TRUE(same->warnings.empty());
  EXPECT_TRUE(same->trace.maps()[0].weights.isApprox(r->trace.maps()[0].weights, 0.0f));
}

TEST(Lab, MultiHeadGivesOneMapPerHeadAndTheSeedMatters) {
  LabRequest req = request(Mechanism::MultiHead);
  req.params.heads = 4;
  auto a = run_lab(req);
  ASSERT_TRUE(a);
  ASSERT_EQ(a->trace.size(), 4u);
  EXPECT_EQ(a->trace.maps()[3].head, 3);
  auto same = run_lab(req);
  EXPECT_EQ(same->trace.maps()[0].weights, a->trace.maps()[0].weights);
  req.params.seed = 43;
  auto other = run_lab(req);
  EXPECT_NE(other->trace.maps()[0].weights, a->trace.maps()[0].weights);
}

TEST(Lab, CompositeMechanismsShowEachOfTheirMaps) {
  LabRequest hop = request(Mechanism::MultiHop);
  hop.params.hops = 4;
  EXPECT_EQ(run_lab(hop)->trace.size(), 4u);
  auto h = run_lab(request(Mechanism::Hierarchical));
  ASSERT_TRUE(h);
  EXPECT_EQ(h->trace.size(), 3u);  // two sentences + the sentence map
  EXPECT_EQ(h->trace.maps()[2].col_labels.size(), 2u);
  auto aoa = run_lab(request(Mechanism::AttentionOverAttention));
  EXPECT_EQ(aoa->trace.size(), 3u);
  EXPECT_GE(col_of(aoa->trace.maps()[2], "apple"), 0);
}

TEST(Lab, LocalWindowShowsInTheMapAndNotes) {
  LabRequest req = request(Mechanism::LocalMonotonic);
  req.params.window = 1;
  auto r = run_lab(req);
  ASSERT_TRUE(r);
  const Matrix& w = r->trace.maps()[0].weights;
  EXPECT_EQ(w(0, 5), 0.0f);
  EXPECT_GT(w(0, 0), 0.0f);
  ASSERT_FALSE(r->notes.empty());
  EXPECT_EQ(r->notes[0].rfind("p_t:", 0), 0u);
}

TEST(Lab, BadInputIsAClearError) {
  auto empty = run_lab(request(Mechanism::Global, "   ", "source"));
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().file, "query");
  EXPECT_NE(empty.error().message().find("empty"), std::string::npos);

  auto bad = run_lab(request(Mechanism::Global, "ok", "fine \xFF here"));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().offset, 5);
  EXPECT_EQ(bad.error().file, "source");

  std::string huge;
  for (int i = 0; i < 5000; ++i) huge += "word ";
  // Too long is not an error: the sentence is truncated, with a warning (LongSentencesAreTruncatedWithAWarning).
  auto big = run_lab(request(Mechanism::Global, "q", huge));
  ASSERT_TRUE(big);
  ASSERT_EQ(big->warnings.size(), 1u);
  EXPECT_NE(big->warnings[0].find("(of 5000)"), std::string::npos);

  LabRequest heads = request(Mechanism::MultiHead);
  heads.params.heads = 5;
  EXPECT_FALSE(run_lab(heads));
  LabRequest temp = request(Mechanism::Global);
  temp.params.temperature = 0.0f;
  EXPECT_FALSE(run_lab(temp));
}

TEST(Lab, SelfAttentionIgnoresTheQueryAndEmojiCjkWork) {
  auto r = run_lab(request(Mechanism::SelfAttention, "", "猫 が 好き 😀 👍🏽"));
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->trace.maps()[0].weights.rows(), 6);  // 猫 が 好 き 😀 👍🏽: kana and ideographs split
  EXPECT_EQ(r->trace.maps()[0].head, -1);
}

TEST(Lab, CatalogueLookups) {
  EXPECT_EQ(find_mechanism("local-p")->id, Mechanism::LocalPredictive);
  EXPECT_EQ(find_mechanism("additive")->id, Mechanism::Global);
  EXPECT_EQ(find_mechanism("nope"), nullptr);
  EXPECT_EQ(*find_score("concat"), ScoreKind::Concat);
  for (ScoreKind k : score_kinds()) EXPECT_EQ(*find_score(score_key(k)), k);
  EXPECT_EQ(mechanisms().size(), 28u);
}

TEST(Lab, MapsNameTheirAxes) {
  EXPECT_EQ(run_lab(request(Mechanism::Global))->trace.maps()[0].row_axis, "queries");
  const auto aoa = run_lab(request(Mechanism::AttentionOverAttention));
  EXPECT_EQ(aoa->trace.maps()[0].row_axis, "document");
  EXPECT_EQ(aoa->trace.maps()[0].col_axis, "query");
  EXPECT_EQ(aoa->trace.maps()[2].col_axis, "document");
  EXPECT_EQ(run_lab(request(Mechanism::MultiHeadPooling))->trace.maps()[0].row_axis, "heads");
  EXPECT_EQ(run_lab(request(Mechanism::Capsule))->trace.maps()[0].row_axis, "classes");
  EXPECT_EQ(run_lab(request(Mechanism::MultiHead))->trace.maps()[0].col_axis, "tokens");
}

TEST(LabJson, RoundTripsEveryParameter) {
  LabRequest r = request(Mechanism::LocalPredictive, "ünïcode query 猫", "a source.");
  r.params.score = ScoreKind::Concat;
  r.params.normaliser = Normaliser::Sparsemax;
  r.params.temperature = 0.25f;
  r.params.window = 5;
  r.params.sigma = 1.5f;
  r.params.heads = 8;
  r.params.hops = 6;
  r.params.classes = 7;
  r.params.causal = true;
  r.params.positions = PositionKind::Learned;
  r.params.seed = 123456789012345ULL;
  r.params.dim = 96;
  auto back = lab_request_from_json(to_json(r));
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(back->query, r.query);
  EXPECT_EQ(back->source, r.source);
  EXPECT_EQ(back->params, r.params);
}

TEST(LabJson, RefusesBadInputWithAReasonAndKeepsDefaultsForMissingFields) {
  EXPECT_NE(lab_request_from_json("{not json").error().message().find("not valid JSON"), std::string::npos);
  EXPECT_NE(lab_request_from_json("[1]").error().message().find("not a JSON object"), std::string::npos);
  EXPECT_NE(lab_request_from_json(R"({"mechanism": "teleport"})").error().message().find("teleport"),
            std::string::npos);
  EXPECT_NE(lab_request_from_json(R"({"heads": "four"})").error().message().find("\"heads\""), std::string::npos);
  auto partial = lab_request_from_json(R"({"mechanism": "aoa", "temperature": 2})");
  ASSERT_TRUE(partial);
  EXPECT_EQ(partial->params.mechanism, Mechanism::AttentionOverAttention);
  EXPECT_EQ(partial->params.temperature, 2.0f);
  EXPECT_EQ(partial->params.heads, LabParams{}.heads);
  EXPECT_EQ(partial->query, kDefaultQuery);
}

TEST(Lab, NormaliserAndPositionNamesRoundTrip) {
  EXPECT_EQ(*find_normaliser(normaliser_key(Normaliser::Sparsemax)), Normaliser::Sparsemax);
  EXPECT_EQ(*find_normaliser("softmax"), Normaliser::Softmax);
  EXPECT_EQ(find_normaliser("softer"), nullptr);
  for (PositionKind k : {PositionKind::None, PositionKind::Sinusoidal, PositionKind::Learned})
    EXPECT_EQ(*find_positions(positions_key(k)), k);
  EXPECT_EQ(find_positions("rotary"), nullptr);
}

TEST(Lab, SelectMechanismTakesMechanismKeysAndScoreNames) {
  LabParams p;
  ASSERT_TRUE(select_mechanism(p, "local-p"));
  EXPECT_EQ(p.mechanism, Mechanism::LocalPredictive);
  ASSERT_TRUE(select_mechanism(p, "cosine"));  // a score alone: global attention with that score
  EXPECT_EQ(p.mechanism, Mechanism::Global);
  EXPECT_EQ(p.score, ScoreKind::Cosine);
  const LabParams before = p;
  EXPECT_FALSE(select_mechanism(p, "teleport"));
  EXPECT_EQ(p, before);
  EXPECT_EQ(normalisers().size(), 2u);
  EXPECT_EQ(position_kinds().size(), 3u);
}

namespace {
std::string numbered_words(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += "w" + std::to_string(i) + " ";
  return out;
}
}  // namespace

// Issue 42: the Lab's budgets (lab_budget.h) hold for every mechanism, checked from the word counts before anything is
// built. 64 heads over 2,048 words reached 2.7 GB, the Reformer's 16 hash rounds over 8,192 words 5.5 GB.
TEST(LabBudget, RunsOverTheBudgetAreRefusedBeforeTheyAreBuilt) {
  LabRequest heads = request(Mechanism::MultiHead, std::string(kDefaultQuery), numbered_words(kMaxTokens));
  heads.params.heads = 64;
  const auto many = run_lab(heads);
  ASSERT_FALSE(many);
  EXPECT_EQ(many.error().kind, ErrorKind::TooLarge);
  const std::string message = many.error().message();
  EXPECT_TRUE(
      message.starts_with("lab request: Multi-head self-attention over 2048 words: its maps and working "
                          "memory come to about "))
      << message;
  EXPECT_TRUE(
      message.ends_with(" floats (2.2 GB), over the 536,870,912 (2.1 GB) a Lab run may hold; fewer heads, a "
                        "smaller dimension or a shorter source"))
      << message;

  LabRequest lsh = request(Mechanism::Reformer, std::string(kDefaultQuery), numbered_words(kMaxEfficientTokens));
  lsh.params.hashes = 16;
  const auto rounds = run_lab(lsh);
  ASSERT_FALSE(rounds);
  EXPECT_NE(rounds.error().message().find("Reformer (LSH attention) over 8192 words: its maps and working memory"),
            std::string::npos)
      << rounds.error().message();
  EXPECT_NE(rounds.error().message().find("fewer hash rounds or a narrower chunk"), std::string::npos);

  // The weights too, through the same check: capsule routing's W_ij, worded as it always was.
  LabRequest routing = request(Mechanism::CapsuleRouting, std::string(kDefaultQuery), numbered_words(kMaxTokens));
  routing.params.classes = 64;
  routing.params.dim = 1024;
  EXPECT_EQ(run_lab(routing).error().reason,
            "capsule routing draws a 16 x 1024 W_ij for each of 64 capsules and 2048 words: 2,147,483,648 weights, "
            "over the 67,108,864 the Lab draws; fewer classes, a smaller dimension or a shorter source");
}

// Issue 42: a request read from a file (attnscope-cli lab --input notes.txt) is refused naming that file, as every
// other refusal names its file; a typed one (the GUI's) keeps "lab request".
TEST(LabBudget, TheRefusalNamesTheFileTheRequestCameFrom) {
  LabRequest heads = request(Mechanism::MultiHead, std::string(kDefaultQuery), numbered_words(kMaxTokens));
  heads.params.heads = 64;
  const auto from_file = run_lab(heads, {}, "notes.txt");
  ASSERT_FALSE(from_file);
  EXPECT_EQ(from_file.error().kind, ErrorKind::TooLarge);
  EXPECT_EQ(from_file.error().file, "notes.txt");
  EXPECT_TRUE(from_file.error().message().starts_with("notes.txt: Multi-head self-attention over 2048 words: "))
      << from_file.error().message();
  EXPECT_EQ(run_lab(heads).error().file, "lab request");

  LabRequest routing = request(Mechanism::CapsuleRouting, std::string(kDefaultQuery), numbered_words(kMaxTokens));
  routing.params.classes = 64;
  routing.params.dim = 1024;
  EXPECT_EQ(run_lab(routing, {}, "notes.txt").error().file, "notes.txt");  // the weights' budget too
}

// What the catalogue promises still runs: every mechanism on its defaults over the longest input it reads.
TEST(LabBudget, EveryMechanismFitsOnItsDefaultsAtItsLongestInput) {
  for (const MechanismInfo& mi : mechanisms()) {
    LabParams p;
    p.mechanism = mi.id;
    const auto cost = budget::estimate_cost(p, kMaxTokens, max_tokens(mi.id));
    EXPECT_LE(cost.weights, budget::kMaxLabWeights) << mi.key;
    EXPECT_LE(cost.working, budget::kMaxLabWorkingFloats) << mi.key;
    EXPECT_GT(cost.working, 0) << mi.key;
  }
}
