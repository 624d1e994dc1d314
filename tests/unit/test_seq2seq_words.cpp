// The seq2seq models at the word level ("unit": "word", tools/train/MODELS.md section 1; the headline model): the
// config's unit and its vocabularies of words, the source split into words with their byte spans (lower case, the
// terminators dropped, unknown words flagged), a text without a word refused, truncation counted in words, and the
// output's words joined by spaces. The model is tests/data/seq2seq/random-words (random weights, the headline
// vocabularies); its numbers against torch are the parity suite's.
#include "attn/models/seq2seq.h"
#include "model_test_util.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace attn::models {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::shared_ptr<const Seq2SeqModel> word_model() {
  auto model = Seq2SeqModel::load(fs::path(ATTN_TEST_DATA_DIR) / "seq2seq" / "random-words");
  EXPECT_TRUE(model.has_value()) << model.error().message();
  return model ? *model : nullptr;
}

TEST(Seq2SeqWords, TheSourceIsItsWordsWithTheirSpans) {
  auto model = word_model();
  ASSERT_TRUE(model);
  EXPECT_TRUE(model->config().words);
  Seq2SeqRunner runner(model);
  const std::string text = "Police in LEEDS arrested a Zorblax, after a robbery!";
  auto run = runner.run(text);
  ASSERT_TRUE(run.has_value()) << run.error().message();
  EXPECT_TRUE(run->words);
  const Labels want = {"police", "in", "leeds", "arrested", "a", "zorblax", "after", "a", "robbery"};
  EXPECT_EQ(run->source, want);
  ASSERT_EQ(run->spans.size(), want.size());
  EXPECT_EQ(text.substr(std::size_t(run->spans[2].begin), std::size_t(run->spans[2].end - run->spans[2].begin)),
            "LEEDS");
  EXPECT_EQ(text.substr(std::size_t(run->spans[8].begin), std::size_t(run->spans[8].end - run->spans[8].begin)),
            "robbery");
  for (std::size_t j = 0; j < want.size(); ++j) EXPECT_EQ(run->unknown[j], j == 5) << want[j];
  EXPECT_EQ(run->source_ids[5], 1);  // <unk>
  // The output: one label per id, the text its words with a space between.
  for (const Hypothesis& h : run->hypotheses) {
    std::string joined;
    for (std::size_t t = 0; t < h.ids.size(); ++t) {
      if (h.labels[t] == "</s>") continue;
      joined += (joined.empty() ? "" : " ") + h.labels[t];
    }
    EXPECT_EQ(h.text, joined);
  }
}

TEST(Seq2SeqWords, ATextWithoutAWordIsRefusedAndLongOnesAreCountedInWords) {
  auto model = word_model();
  ASSERT_TRUE(model);
  Seq2SeqRunner runner(model);
  auto none = runner.run("?! \xE2\x80\x94 ...");
  ASSERT_FALSE(none.has_value());
  EXPECT_NE(none.error().message().find("has no word"), std::string::npos) << none.error().message();
  std::string long_text;
  for (int i = 0; i < 50; ++i) long_text += "police ";
  auto run = runner.run(long_text);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->source.size(), 40u);
  ASSERT_FALSE(run->warnings.empty());
  EXPECT_EQ(run->warnings.front(), "input truncated to 40 words (of 50)");
}

std::string word_json(const json& patch = json::object()) {
  json j = {{"architectures", {"AttnScopeSeq2Seq"}},
            {"attention", "bahdanau"},
            {"score", "additive"},
            {"unit", "word"},
            {"source_vocab", {"<pad>", "<unk>", "police", "o'neill", "42"}},
            {"target_vocab", {"<pad>", "<s>", "</s>", "arrest"}},
            {"embedding_size", 4},
            {"encoder_hidden", 3},
            {"decoder_hidden", 5},
            {"attention_size", 2},
            {"max_source_length", 40},
            {"max_target_length", 12}};
  return test::patched_json(std::move(j), patch);
}

TEST(Seq2SeqWordsConfig, ReadsTheUnit) {
  auto c = Seq2SeqConfig::parse(word_json(), "cfg.json");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_TRUE(c->words);
  auto chars = Seq2SeqConfig::parse(word_json({{"unit", "character"},
                                               {"source_vocab", {"<pad>", "<unk>", "a"}},
                                               {"target_vocab", {"<pad>", "<s>", "</s>", "b"}}}),
                                    "cfg.json");
  ASSERT_TRUE(chars.has_value()) << chars.error().message();
  EXPECT_FALSE(chars->words);
}

using test::ConfigErrorCase;

class Seq2SeqWordsConfigError : public ::testing::TestWithParam<ConfigErrorCase> {};

TEST_P(Seq2SeqWordsConfigError, NamesTheFileKeyAndLine) {
  test::expect_config_error<Seq2SeqConfig>(word_json(GetParam().patch), GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, Seq2SeqWordsConfigError,
    ::testing::Values(ConfigErrorCase{"unknown_unit", {{"unit", "token"}}, "unit", "not supported"},
                      ConfigErrorCase{"capital_word",
                                      {{"source_vocab", {"<pad>", "<unk>", "Police"}}},
                                      "source_vocab",
                                      "entries are words"},
                      ConfigErrorCase{"two_words",
                                      {{"target_vocab", {"<pad>", "<s>", "</s>", "step down"}}},
                                      "target_vocab",
                                      "entries are words"},
                      ConfigErrorCase{"characters_of_a_character_model",
                                      {{"unit", "character"}, {"source_vocab", {"<pad>", "<unk>", "police"}}},
                                      "source_vocab",
                                      "one character"}),
    test::config_case_name);

}  // namespace
}  // namespace attn::models
