// The classifiers of tools/train/MODELS.md section 2: the word rules of split_words, config and tensor
// errors, the flat and hierarchical passes on hand-built tiny models, truncation, and the saliency of the
// LSTM (its gates) and the CNN (its max pooling) worked out by hand.
#include "attn/io/safetensors.h"
#include "attn/models/classifier.h"
#include "model_test_util.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace attn::models {
// Named, not anonymous: the unity builds compile several test files as one.
namespace classifier_tests {

using nlohmann::json;

// ---------------------------------------------------------------------------------------------------------
// split_words

TEST(ClassifierWords, LowerCasedWordsAndSentenceEnds) {
  const std::string text = "Don't STOP. Go!! ok?";
  const WordSplit s = split_words(text);
  EXPECT_EQ(s.words, (Labels{"don't", "stop", ".", "go", "!", "!", "ok", "?"}));
  // Each of . ! ? ends the sentence it belongs to: "!!" is a sentence "go !" and a sentence "!".
  EXPECT_EQ(s.sentence, (std::vector<int>{0, 0, 0, 1, 1, 2, 3, 3}));
  EXPECT_EQ(s.sentences, 4);
  ASSERT_EQ(s.spans.size(), 8u);
  EXPECT_EQ(s.spans[0], (Span{0, 5}));
  EXPECT_EQ(s.spans[1], (Span{6, 10}));
  EXPECT_EQ(s.spans[2], (Span{10, 11}));
  EXPECT_EQ(s.spans[7], (Span{19, 20}));
  for (std::size_t i = 0; i < s.words.size(); ++i) {
    // A span's bytes, lower-cased, are the word.
    std::string original = text.substr(static_cast<std::size_t>(s.spans[i].begin),
                                       static_cast<std::size_t>(s.spans[i].end - s.spans[i].begin));
    for (char& ch : original) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    EXPECT_EQ(original, s.words[i]);
  }
}

TEST(ClassifierWords, EverythingElseSeparates) {
  const WordSplit s = split_words("well-known_fact, 2024 (x)\t\"quoted\"\n'tis");
  EXPECT_EQ(s.words, (Labels{"well", "known", "fact", "2024", "x", "quoted", "'tis"}));
  EXPECT_EQ(s.sentences, 1);
  EXPECT_EQ(s.sentence, std::vector<int>(7, 0));
}

TEST(ClassifierWords, NonAsciiAlwaysSeparates) {
  // Lower-casing is ASCII only (the reference lower-cases the UTF-8 bytes): é, U+212A KELVIN SIGN and
  // U+0130 are never word characters, and neither is an invalid byte.
  const std::string text =
      "Caf\xC3\xA9 au \xE2\x84\xAA"
      "elvin \xC4\xB0stanbul a\xFF"
      "b";
  const WordSplit s = split_words(text);
  EXPECT_EQ(s.words, (Labels{"caf", "au", "elvin", "stanbul", "a", "b"}));
  ASSERT_EQ(s.spans.size(), 6u);
  EXPECT_EQ(s.spans[2], (Span{12, 17}));
  EXPECT_EQ(s.spans[3], (Span{20, 27}));
  EXPECT_EQ(s.spans[5], (Span{30, 31}));
}

TEST(ClassifierWords, NoWords) {
  for (const char* text : {"", "   ", "\xC3\xA9\xC3\xA9 -- ;"}) {
    const WordSplit s = split_words(text);
    EXPECT_TRUE(s.words.empty()) << text;
    EXPECT_EQ(s.sentences, 0) << text;
  }
  const WordSplit dots = split_words("...");
  EXPECT_EQ(dots.words, (Labels{".", ".", "."}));
  EXPECT_EQ(dots.sentences, 3);
}

// ---------------------------------------------------------------------------------------------------------
// Tiny models

// Deterministic non-trivial values for unset tensors: every output depends on every weight.
float waves(const std::string& name, std::size_t i) {
  return 0.3f * std::sin(0.7f * static_cast<float>(i + name.size()));
}

struct Tensors : test::TensorStore {
  Tensors() : TensorStore("clf.safetensors", waves) {}
};

void pool(Tensors& t, const std::string& base, std::int64_t d, std::int64_t a, std::int64_t heads) {
  t.set(base + ".W.weight", {a, d});
  t.set(base + ".W.bias", {a});
  t.set(base + ".w.weight", {heads, a});
}

struct Tiny {
  ClassifierConfig config;
  Tensors tensors;
};

// e 3, h 2, a 4, r heads; vocab of a few words.
Tiny tiny(bool hierarchical, int heads = 2) {
  Tiny m;
  auto& c = m.config;
  c.task = "review sentiment";
  c.labels = {"negative", "positive"};
  c.vocab = {"<pad>", "<unk>", "good", "bad", "film", ".", "!"};
  c.hierarchical = hierarchical;
  c.heads = heads;
  c.embedding_size = 3;
  c.hidden = 2;
  c.attention_size = 4;
  c.max_words = 6;
  c.max_sentences = hierarchical ? 3 : 0;
  const std::int64_t v = 7, e = 3, h2 = 4, a = 4, r = heads;
  auto& t = m.tensors;
  if (!hierarchical) {
    t.set("embedding.weight", {v, e});
    test::set_bigru(t, "encoder.gru", e, 2);
    pool(t, "pool", h2, a, r);
    t.set("classifier.weight", {2, r * h2});
  } else {
    t.set("word.embedding.weight", {v, e});
    test::set_bigru(t, "word.gru", e, 2);
    pool(t, "word.pool", h2, a, r);
    test::set_bigru(t, "sentence.gru", r * h2, 2);
    pool(t, "sentence.pool", h2, a, 1);
    t.set("classifier.weight", {2, h2});
  }
  t.set("classifier.bias", {2});
  return m;
}

std::shared_ptr<const ClassifierModel> load(const Tiny& m) {
  return test::load_model<ClassifierModel>(m.config, m.tensors);
}

std::string error_of(const Tiny& m) { return test::load_error<ClassifierModel>(m.config, m.tensors); }

// The LSTM and the CNN of the saliency readings: one-number embeddings (good 1, bad -1, film 0.5).
Tiny tiny_kind(ClassifierKind kind) {
  Tiny m;
  auto& c = m.config;
  c.task = "review sentiment";
  c.labels = {"negative", "positive"};
  c.vocab = {"<pad>", "<unk>", "good", "bad", "film"};
  c.kind = kind;
  c.heads = 0;
  c.embedding_size = 1;
  c.max_words = 8;
  auto& t = m.tensors;
  t.set("embedding.weight", {5, 1}, {0.0f, 0.0f, 1.0f, -1.0f, 0.5f});
  if (kind == ClassifierKind::Lstm) {
    c.hidden = 1;
    // Rows i, f, g, o; no recurrence, so each gate is a function of the word alone.
    t.set("encoder.lstm.weight_ih", {4, 1}, {1.5f, -2.0f, 1.0f, 0.5f});
    t.set("encoder.lstm.weight_hh", {4, 1}, {0.0f, 0.0f, 0.0f, 0.0f});
    t.set("encoder.lstm.bias_ih", {4}, {0.25f, 1.0f, 0.0f, 0.5f});
    t.set("encoder.lstm.bias_hh", {4}, {-0.5f, 0.5f, 0.0f, 0.0f});
    t.set("classifier.weight", {2, 1}, {0.0f, 1.0f});  // log(p1 / p0) = h_T
  } else {
    c.channels = 2;
    c.kernel = 3;
    // Channel 0 reads the word itself (good is its maximum), channel 1 its negation (bad).
    t.set("conv.weight", {2, 1, 3}, {0.0f, 1.0f, 0.0f, 0.0f, -1.0f, 0.0f});
    t.set("conv.bias", {2}, {0.0f, 0.0f});
    t.set("classifier.weight", {2, 2}, {0.0f, 1.0f, 1.0f, 0.0f});  // negative <- channel 1, positive <- 0
  }
  t.set("classifier.bias", {2}, {0.0f, 0.0f});
  return m;
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

TEST(ClassifierSaliency, LstmWrittenIsTheShareOfTheFinalCellState) {
  auto model = load(tiny_kind(ClassifierKind::Lstm));
  ASSERT_TRUE(model);
  EXPECT_EQ(model->description(), "review sentiment \xC2\xB7 LSTM \xC2\xB7 1 unit \xC2\xB7 25 parameters");
  ClassifierRunner session(model);
  auto run = session.run("good film bad film");
  ASSERT_TRUE(run.has_value()) << run.error().message();
  const std::vector<double> x = {1.0, 0.5, -1.0, 0.5};
  const Index n = 4;
  ASSERT_EQ(run->forget_gate.rows(), 1);
  ASSERT_EQ(run->forget_gate.cols(), n);
  EXPECT_EQ(run->word_attention.size(), 0);
  double c = 0.0, total = 0.0;
  std::vector<double> written(4);
  for (Index t = 0; t < n; ++t) {
    const double i = sigmoid(1.5 * x[t] - 0.25), f = sigmoid(-2.0 * x[t] + 1.5);
    EXPECT_NEAR(run->input_gate(0, t), i, 1e-6);
    EXPECT_NEAR(run->forget_gate(0, t), f, 1e-6);
    double after = 1.0;
    for (Index s = t + 1; s < n; ++s) after *= sigmoid(-2.0 * x[s] + 1.5);
    written[t] = i * after;
    EXPECT_NEAR(run->written(0, t), written[t], 1e-6) << "word " << t;
    c += written[t] * std::tanh(x[t]);  // c_T = sum_t written_t g_t
    total += written[t];
  }
  for (Index t = 0; t < n; ++t) EXPECT_NEAR(run->saliency(t), written[t] / total, 1e-6);
  // The classifier reads h_T = o_T tanh(c_T): the probabilities confirm the sum above is the cell state.
  const double h = sigmoid(0.5 * x[3] + 0.5) * std::tanh(c);
  EXPECT_NEAR(std::log(run->probabilities[1] / run->probabilities[0]), h, 1e-5);
  const auto maps = run->maps();
  ASSERT_EQ(maps.size(), 5u);
  EXPECT_EQ(maps[4]->row_labels, (Labels{"forget gate f (mean)", "input gate i (mean)", "written (share)"}));
  EXPECT_NEAR(maps[4]->weights(0, 2), run->forget_gate(0, 2), 1e-7f);
  EXPECT_EQ(maps[0]->row_labels, (Labels{"saliency"}));
  EXPECT_EQ(maps[1]->name, "forget gate f");
  EXPECT_EQ(maps[1]->row_labels, (Labels{"unit 0"}));
  // Issue 41, finding 6: the colour bar names what each map holds.
  EXPECT_EQ(maps[0]->quantity, "saliency");
  EXPECT_EQ(maps[1]->quantity, "forget gate");
  EXPECT_EQ(maps[2]->quantity, "input gate");
}

TEST(ClassifierSaliency, CnnCountsTheWindowsOfTheWinningChannels) {
  auto model = load(tiny_kind(ClassifierKind::Cnn));
  ASSERT_TRUE(model);
  ClassifierRunner session(model);
  auto run = session.run("film good film film");
  ASSERT_TRUE(run.has_value()) << run.error().message();
  EXPECT_EQ(run->predicted, 1);                       // logits [max of channel 1, max of channel 0] = [0, 1]
  EXPECT_EQ(run->winners, (std::vector<int>{1, 0}));  // channel 1 is zero everywhere: its first position
  // Channel 0 votes for positive by 1 - mean(0, 1); channel 1's maximum is 0: it adds nothing.
  EXPECT_FLOAT_EQ(run->channel_weights(0), 0.5f);
  EXPECT_FLOAT_EQ(run->channel_weights(1), 0.0f);
  // Channel 0's window around "good" (kernel 3): words 0-2, a third each.
  const std::vector<float> expected = {1.0f / 3, 1.0f / 3, 1.0f / 3, 0.0f};
  for (Index w = 0; w < 4; ++w) EXPECT_NEAR(run->saliency(w), expected[std::size_t(w)], 1e-6f);
  EXPECT_NEAR(run->activations(0, 1), 1.0f, 1e-6f);
  EXPECT_NEAR(run->activations(0, 0), 0.5f, 1e-6f);
  const auto maps = run->maps();
  ASSERT_EQ(maps.size(), 3u);
  EXPECT_EQ(maps[2]->name, "winning windows, weighted");
  EXPECT_EQ(maps[1]->quantity, "activation");
  EXPECT_EQ(maps[2]->weights.row(0), (RowVector(4) << 0.5f, 0.5f, 0.5f, 0.0f).finished());
  EXPECT_EQ(maps[2]->weights.row(1), RowVector::Zero(4));

  // At the edge the window is clipped: "bad" first wins channel 1 (negative), whose window is words 0-1.
  auto edge = session.run("bad film");
  ASSERT_TRUE(edge.has_value());
  EXPECT_EQ(edge->predicted, 0);
  EXPECT_EQ(edge->winners[1], 0);
  EXPECT_NEAR(edge->saliency(0), 0.5f, 1e-6f);
  EXPECT_NEAR(edge->saliency(1), 0.5f, 1e-6f);
}

TEST(ClassifierSaliency, PoolingSaliencyIsTheMeanOverHeads) {
  auto model = load(tiny(false));
  ASSERT_TRUE(model);
  ClassifierRunner session(model);
  auto run = session.run("good film bad");
  ASSERT_TRUE(run.has_value());
  ASSERT_EQ(run->saliency.size(), 3);
  for (Index w = 0; w < 3; ++w) {
    EXPECT_NEAR(run->saliency(w), 0.5f * (run->word_attention(0, w) + run->word_attention(1, w)), 1e-6f);
  }
  auto hierarchical = load(tiny(true));
  ASSERT_TRUE(hierarchical);
  ClassifierRunner h(hierarchical);
  auto hrun = h.run("good film. bad!");
  ASSERT_TRUE(hrun.has_value());
  EXPECT_EQ(hrun->saliency.size(), 0);
}

// ---------------------------------------------------------------------------------------------------------
// Forward passes

TEST(ClassifierRunFlat, DistributionsIdsAndUnknownWords) {
  auto model = load(tiny(false));
  ASSERT_TRUE(model);
  EXPECT_EQ(model->description(),
            "review sentiment \xC2\xB7 attention pooling \xC2\xB7 2 heads \xC2\xB7 151 parameters");
  ClassifierRunner session(model);
  auto run = session.run("Good film, boring plot!");
  ASSERT_TRUE(run.has_value()) << run.error().message();
  EXPECT_EQ(run->input.words, (Labels{"good", "film", "boring", "plot", "!"}));
  EXPECT_EQ(run->ids, (std::vector<int>{2, 4, 1, 1, 6}));
  EXPECT_EQ(run->unknown, (std::vector<bool>{false, false, true, true, false}));
  ASSERT_EQ(run->word_attention.rows(), 2);
  ASSERT_EQ(run->word_attention.cols(), 5);
  for (Index h = 0; h < 2; ++h) EXPECT_NEAR(run->word_attention.row(h).sum(), 1.0f, 1e-5f);
  EXPECT_EQ(run->sentence_attention.size(), 0);
  ASSERT_EQ(run->probabilities.size(), 2u);
  EXPECT_NEAR(run->probabilities[0] + run->probabilities[1], 1.0f, 1e-6f);
  EXPECT_EQ(run->predicted, run->probabilities[1] > run->probabilities[0] ? 1 : 0);
  EXPECT_TRUE(run->warnings.empty());
  const auto map = run->word_map();
  EXPECT_EQ(map->row_labels, (Labels{"head 0", "head 1"}));
  EXPECT_EQ(map->col_labels, run->input.words);
  EXPECT_EQ(map->col_spans.size(), 5u);
  EXPECT_EQ(map->stage, Stage::Pool);
}

TEST(ClassifierRunFlat, OneWordGetsAllTheWeightAndTheBiasDecides) {
  // With one word every head's weight on it is 1; with a zero classifier weight the probabilities are
  // softmax(bias).
  Tiny m = tiny(false, 1);
  m.tensors.set("classifier.weight", {2, 4}, std::vector<float>(8, 0.0f));
  m.tensors.set("classifier.bias", {2}, {0.0f, std::log(3.0f)});
  auto model = load(m);
  ASSERT_TRUE(model);
  ClassifierRunner session(model);
  auto run = session.run("GOOD");
  ASSERT_TRUE(run.has_value());
  EXPECT_NEAR(run->word_attention(0, 0), 1.0f, 1e-6f);
  EXPECT_NEAR(run->probabilities[0], 0.25f, 1e-6f);
  EXPECT_NEAR(run->probabilities[1], 0.75f, 1e-6f);
  EXPECT_EQ(run->predicted, 1);
}

TEST(ClassifierRunFlat, TruncatesWithAWarning) {
  auto model = load(tiny(false));
  ASSERT_TRUE(model);
  ClassifierRunner session(model);
  auto run = session.run("good bad film good bad film good bad");  // 8 words, max_words 6
  ASSERT_TRUE(run.has_value());
  ASSERT_EQ(run->warnings.size(), 1u);
  EXPECT_EQ(run->warnings[0], "input truncated to 6 words (of 8)");
  EXPECT_EQ(run->input.words.size(), 6u);
  EXPECT_EQ(run->word_attention.cols(), 6);
}

TEST(ClassifierRunFlat, EmptyInputIsAnError) {
  auto model = load(tiny(false));
  ASSERT_TRUE(model);
  ClassifierRunner session(model);
  for (const char* text : {"", " -- "}) {
    auto run = session.run(text);
    ASSERT_FALSE(run.has_value());
    EXPECT_NE(run.error().message().find("no words"), std::string::npos);
  }
}

TEST(ClassifierRunHierarchical, WordWeightsPerSentenceAndSentenceWeights) {
  auto model = load(tiny(true));
  ASSERT_TRUE(model);
  EXPECT_NE(model->description().find("hierarchical attention"), std::string::npos);
  ClassifierRunner session(model);
  auto run = session.run("Good film. Bad! good");
  ASSERT_TRUE(run.has_value()) << run.error().message();
  EXPECT_EQ(run->input.sentence, (std::vector<int>{0, 0, 0, 1, 1, 2}));
  EXPECT_EQ(run->input.sentences, 3);
  ASSERT_EQ(run->word_attention.rows(), 2);
  ASSERT_EQ(run->word_attention.cols(), 6);
  for (Index h = 0; h < 2; ++h) {
    // A distribution within each sentence.
    EXPECT_NEAR(run->word_attention.row(h).segment(0, 3).sum(), 1.0f, 1e-5f);
    EXPECT_NEAR(run->word_attention.row(h).segment(3, 2).sum(), 1.0f, 1e-5f);
    EXPECT_NEAR(run->word_attention(h, 5), 1.0f, 1e-6f);
  }
  ASSERT_EQ(run->sentence_attention.size(), 3);
  EXPECT_NEAR(run->sentence_attention.sum(), 1.0f, 1e-5f);
  EXPECT_NEAR(run->probabilities[0] + run->probabilities[1], 1.0f, 1e-6f);
}

TEST(ClassifierRunHierarchical, TruncatesSentencesAndWordsWithWarnings) {
  auto model = load(tiny(true));
  ASSERT_TRUE(model);
  ClassifierRunner session(model);
  // 4 sentences (max 3); the second has 8 words (max 6).
  auto run = session.run("good. bad bad bad bad bad bad bad film. good! film.");
  ASSERT_TRUE(run.has_value()) << run.error().message();
  ASSERT_EQ(run->warnings.size(), 2u);
  EXPECT_EQ(run->warnings[0], "input truncated to 3 sentences (of 4)");
  EXPECT_EQ(run->warnings[1], "sentence 1 truncated to 6 words (of 9)");
  EXPECT_EQ(run->input.sentences, 3);
  EXPECT_EQ(run->input.sentence, (std::vector<int>{0, 0, 1, 1, 1, 1, 1, 1, 2, 2}));
  EXPECT_EQ(run->word_attention.cols(), 10);
  EXPECT_EQ(run->sentence_attention.size(), 3);
}

// ---------------------------------------------------------------------------------------------------------
// Errors

TEST(ClassifierTensors, MissingTensorNamesFileAndTensor) {
  Tiny m = tiny(false);
  m.tensors.erase("pool.w.weight");
  const std::string message = error_of(m);
  EXPECT_NE(message.find("clf.safetensors"), std::string::npos) << message;
  EXPECT_NE(message.find("missing tensor 'pool.w.weight'"), std::string::npos) << message;
  Tiny h = tiny(true);
  h.tensors.erase("sentence.gru.weight_hh_l0_reverse");
  EXPECT_NE(error_of(h).find("'sentence.gru.weight_hh_l0_reverse'"), std::string::npos);
}

TEST(ClassifierTensors, WrongShapeNamesBothShapesAndTheOffset) {
  Tiny m = tiny(false);
  m.tensors.set("classifier.weight", {2, 4});  // r 2h = 8
  auto model = ClassifierModel::from_parts(m.config, m.tensors.build());
  ASSERT_FALSE(model.has_value());
  EXPECT_EQ(model.error().file, "clf.safetensors");
  EXPECT_GT(model.error().offset, 0);
  EXPECT_NE(model.error().reason.find("'classifier.weight' has shape [2, 4], the config implies [2, 8]"),
            std::string::npos)
      << model.error().message();
  // The sentence-level pooling has one head.
  Tiny h = tiny(true);
  h.tensors.set("sentence.pool.w.weight", {2, 4});
  EXPECT_NE(error_of(h).find("'sentence.pool.w.weight' has shape [2, 4], the config implies [1, 4]"),
            std::string::npos);
}

std::string classifier_json(const json& patch = json::object()) {
  json j = {{"architectures", {"AttnScopeClassifier"}},
            {"task", "review sentiment"},
            {"labels", {"negative", "positive"}},
            {"vocab", {"<pad>", "<unk>", "good", "bad"}},
            {"hierarchical", true},
            {"heads", 2},
            {"embedding_size", 8},
            {"hidden", 4},
            {"attention_size", 6},
            {"max_words", 30},
            {"max_sentences", 5}};
  return test::patched_json(std::move(j), patch);
}

TEST(ClassifierConfigParse, ReadsAValidConfig) {
  auto c = ClassifierConfig::parse(classifier_json(), "c.json");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_TRUE(c->hierarchical);
  EXPECT_EQ(c->heads, 2);
  EXPECT_EQ(c->labels, (std::vector<std::string>{"negative", "positive"}));
  EXPECT_EQ(c->max_sentences, 5);
  auto flat = ClassifierConfig::parse(
      classifier_json({{"hierarchical", false}, {"max_sentences", nullptr}, {"heads", nullptr}}), "c.json");
  ASSERT_TRUE(flat.has_value()) << flat.error().message();
  EXPECT_EQ(flat->heads, 1);
  EXPECT_EQ(flat->held_out_saliency, -1.0);
  auto cnn = ClassifierConfig::parse(classifier_json({{"hierarchical", nullptr},
                                                      {"kind", "cnn"},
                                                      {"channels", 16},
                                                      {"kernel", 3},
                                                      {"saliency_on_deciding_words", 0.25}}),
                                     "c.json");
  ASSERT_TRUE(cnn.has_value()) << cnn.error().message();
  EXPECT_EQ(cnn->kind, ClassifierKind::Cnn);
  EXPECT_EQ(cnn->channels, 16);
  EXPECT_EQ(cnn->heads, 0);
  EXPECT_EQ(cnn->held_out_saliency, 0.25);
}

TEST(ClassifierConfigParse, ErrorsNameFileKeyAndLine) {
  const struct {
    json patch;
    const char* key;
    const char* reason;
  } cases[] = {
      {{{"vocab", json::array()}}, "vocab", "vocab is empty"},
      {{{"vocab", {"<unk>", "<pad>", "a"}}}, "vocab", "vocab[0] must be \"<pad>\""},
      {{{"labels", {"only"}}}, "labels", "at least 2"},
      {{{"max_sentences", nullptr}}, "max_sentences", "max_sentences is missing"},
      {{{"heads", 0}}, "heads", "must be from 1"},
      {{{"hierarchical", "yes"}}, "hierarchical", "true or false"},
      {{{"architectures", {"AttnScopeSeq2Seq"}}}, "architectures", "AttnScopeClassifier"},
      {{{"kind", "lstm"}}, "kind", "needs kind \"attention-pooling\""},
      {{{"hierarchical", false}, {"kind", "transformer"}}, "kind", "is not one of"},
      {{{"hierarchical", false}, {"kind", "cnn"}, {"channels", 4}, {"kernel", 4}}, "kernel", "must be odd"},
      {{{"hierarchical", false}, {"kind", "cnn"}, {"kernel", 3}, {"channels", nullptr}},
       "channels",
       "channels is missing"},
      {{{"saliency_on_deciding_words", 1.5}}, "saliency_on_deciding_words", "between 0.0 and 1.0, got 1.5"},
  };
  for (const auto& c : cases) {
    const std::string text = classifier_json(c.patch);
    auto parsed = ClassifierConfig::parse(text, "m/config.json");
    ASSERT_FALSE(parsed.has_value()) << c.key;
    EXPECT_EQ(parsed.error().file, "m/config.json");
    EXPECT_NE(parsed.error().message().find(c.reason), std::string::npos) << parsed.error().message();
    if (!c.patch.at(c.key).is_null()) {
      EXPECT_GT(parsed.error().line, 1) << c.key;
    }
  }
}

TEST(ClassifierConfigParse, ConfigBuiltInCodeIsChecked) {
  Tiny m = tiny(false);
  m.config.vocab.clear();
  EXPECT_NE(error_of(m).find("vocab is empty"), std::string::npos);
  Tiny h = tiny(true);
  h.config.max_sentences = 0;
  EXPECT_NE(error_of(h).find("max_sentences"), std::string::npos);
  Tiny cnn = tiny_kind(ClassifierKind::Cnn);
  cnn.config.kernel = 2;
  EXPECT_NE(error_of(cnn).find("odd kernel"), std::string::npos);
  Tiny lstm = tiny_kind(ClassifierKind::Lstm);
  lstm.config.hierarchical = true;
  EXPECT_NE(error_of(lstm).find("only attention pooling can be hierarchical"), std::string::npos);
}

}  // namespace classifier_tests
}  // namespace attn::models
