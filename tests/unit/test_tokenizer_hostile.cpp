// Hostile tokenizer.json files: budgets on what normalizers and decoders write, PCRE2's limits, WordPiece's
// per-word bound, the length of a Sequence, and WordLevel without its unknown token. Each file is built here.
#include "attn/text/tokenizer.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <vector>

// A namespace of its own: the unity build compiles this file with the other tokenizer tests.
namespace attn::text::hostile_tokenizer_tests {
namespace {

using nlohmann::json;

json word_level(json vocab = {{"a", 0}, {"b", 1}, {"<unk>", 2}}) {
  return {{"model", {{"type", "WordLevel"}, {"vocab", vocab}, {"unk_token", "<unk>"}}},
          {"pre_tokenizer", {{"type", "WhitespaceSplit"}}}};
}

json replace(const std::string& from, const std::string& to) {
  return {{"type", "Replace"}, {"pattern", {{"String", from}}}, {"content", to}};
}

json chain(const char* list, const json& step, int n) {
  json steps = json::array();
  for (int k = 0; k < n; ++k) steps.push_back(step);
  return {{"type", "Sequence"}, {list, steps}};
}

std::vector<int> ids_of(const std::vector<Token>& tokens) {
  std::vector<int> ids;
  for (const Token& t : tokens) ids.push_back(t.id);
  return ids;
}

// The file: Replace("a" -> ten "a") nine times over a normalized added token "a" grew to 6 GB while the
// folder opened. Four steps make 10,000 bytes of one: the fourth step is refused, before it writes them.
TEST(NormalizerBudget, AReplaceChainOverANormalizedAddedTokenIsRefusedAtLoad) {
  json file = word_level();
  file["normalizer"] = chain("normalizers", replace("a", std::string(10, 'a')), 4);
  file["added_tokens"] = json::array({{{"id", 0}, {"content", "a"}, {"normalized", true}, {"special", false}}});
  const std::string text = file.dump();
  const auto t = parse_tokenizer_json(text, "tokenizer.json");
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.error().kind, ErrorKind::TooLarge);
  EXPECT_EQ(t.error().file, "tokenizer.json");
  EXPECT_EQ(t.error().reason,
            "normalizer.normalizers[3]: its output would be 10,000 bytes, over the budget of 1,040 bytes (16 times "
            "its 1 input bytes plus 1,024, at most 67,108,864 in all) (added token 0, which is normalized)");
  EXPECT_EQ(t.error().offset, static_cast<std::int64_t>(text.find("\"normalizer\"")));
}

TEST(NormalizerBudget, AReplaceChainIsRefusedAtEncodeWithTheFileAndTheFigure) {
  json file = word_level();
  file["normalizer"] = chain("normalizers", replace("a", std::string(10, 'a')), 4);
  const auto t = parse_tokenizer_json(file.dump(), "tokenizer.json");
  ASSERT_TRUE(t.has_value()) << t.error().message();
  EXPECT_TRUE((*t)->encode("b b").has_value());  // nothing to replace: within the budget
  const auto tokens = (*t)->encode("b a");
  ASSERT_FALSE(tokens.has_value());
  EXPECT_EQ(tokens.error().kind, ErrorKind::TooLarge);
  EXPECT_EQ(tokens.error().file, "tokenizer.json");
  EXPECT_EQ(tokens.error().reason,
            "normalizer.normalizers[3]: its output would be 10,002 bytes, over the budget of 1,072 bytes (16 times "
            "its 3 input bytes plus 1,024, at most 67,108,864 in all)");
  // Growth that stays within 16 times the text plus 1,024 bytes is the file's to choose.
  file["normalizer"] = chain("normalizers", replace("a", std::string(10, 'a')), 3);
  const auto three = parse_tokenizer_json(file.dump(), "tokenizer.json");
  ASSERT_TRUE(three.has_value());
  const auto fine = (*three)->encode("a");
  ASSERT_TRUE(fine.has_value()) << fine.error().message();
  EXPECT_EQ(ids_of(*fine), (std::vector<int>{2}));  // "a" x 1,000 is not in the vocabulary
}

// A decoder chain runs on every token label the views draw: it is refused at load, at the step that passes the
// budget, since a label has no error to return.
TEST(DecoderBudget, AReplaceChainIsRefusedAtLoadByTheStepThatPassesTheBudget) {
  json file = word_level();
  file["decoder"] = chain("decoders", replace("a", std::string(10, 'a')), 9);
  const std::string text = file.dump();
  const auto t = parse_tokenizer_json(text, "tokenizer.json");
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.error().kind, ErrorKind::TooLarge);
  EXPECT_EQ(t.error().reason,
            "decoder.decoders[1] can make a token 100 times as long plus 0 bytes (the decoders up to here), over the "
            "budget of 16 times plus 1,024 bytes");
  EXPECT_EQ(t.error().offset, static_cast<std::int64_t>(text.find("\"decoder\"")));
  // One step of ten times, and a pattern that matches the empty string (at most once per character), load.
  file["decoder"] = replace("a", std::string(10, 'a'));
  const auto one = parse_tokenizer_json(file.dump(), "tokenizer.json");
  ASSERT_TRUE(one.has_value()) << one.error().message();
  EXPECT_EQ((*one)->display(0), std::string(10, 'a'));
  file["decoder"] = {{"type", "Replace"}, {"pattern", {{"Regex", "x*"}}}, {"content", "-"}};
  const auto empty = parse_tokenizer_json(file.dump(), "tokenizer.json");
  ASSERT_TRUE(empty.has_value()) << empty.error().message();
  EXPECT_EQ((*empty)->display(0), "-a-");
  file["decoder"] = {{"type", "Replace"}, {"pattern", {{"Regex", "x*"}}}, {"content", std::string(16, '-')}};
  EXPECT_FALSE(parse_tokenizer_json(file.dump(), "tokenizer.json").has_value());  // 17 times
}

TEST(PreTokenizerBudget, AMetaspaceReplacementLongerThanTheBudgetIsRefused) {
  json file = word_level();
  file["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", std::string(17, '_')}};
  const auto t = parse_tokenizer_json(file.dump(), "tokenizer.json");
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.error().kind, ErrorKind::TooLarge);
  EXPECT_EQ(t.error().reason,
            "pre_tokenizer.replacement is 17 bytes, over the limit of 16 (every space of the text becomes it)");
  file["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"}};
  EXPECT_TRUE(parse_tokenizer_json(file.dump(), "tokenizer.json").has_value());
}

}  // namespace
}  // namespace attn::text::hostile_tokenizer_tests
