// Hostile tokenizer.json files: budgets on what normalizers and decoders write, PCRE2's limits, WordPiece's
// per-word bound, the length of a Sequence, and WordLevel and Unigram without their unknown token. Each file is built
// here.
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

// The issue's file: Replace("a" -> ten "a") nine times over a normalized added token "a" grew to 6 GB while the
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

// A lookahead that repeats without bound is rescanned from every position: 1 MB of text under a(?=[ab]*c) is
// 5 x 10^11 steps, which PCRE2 counts as one step a position (a greedy scan), so no match limit stops it. Such a
// pattern is refused when the file opens; bounded lookaheads (GPT-2's \s+(?!\S)) load as before.
TEST(RegexLimits, AnUnboundedRepeatInsideALookaroundIsRefusedAtLoad) {
  const std::vector<std::pair<std::string, std::size_t>> refused = {
      {"a(?=[ab]*c)", 8}, {"(?:a|b)(?=.*c)", 11}, {"x(?!(?:ab)+c)", 10}, {"(?<=a{2,})b", 5}, {"(?=a{1,5000})", 4}};
  for (const auto& [pattern, at] : refused) {
    json file = word_level();
    file["pre_tokenizer"] = {
        {"type", "Split"}, {"pattern", {{"Regex", pattern}}}, {"behavior", "Isolated"}, {"invert", false}};
    const auto t = parse_tokenizer_json(file.dump(), "tokenizer.json");
    ASSERT_FALSE(t.has_value()) << pattern;
    EXPECT_EQ(t.error().kind, ErrorKind::Unsupported) << pattern;
    EXPECT_EQ(t.error().file, "tokenizer.json");
    EXPECT_EQ(t.error().reason, "pre_tokenizer.pattern: the regex \"" + pattern +
                                    "\" repeats without a bound of 1,000 inside a lookaround, at byte " +
                                    std::to_string(at) +
                                    " of the pattern: searched from every position of a long text, it would rescan "
                                    "the rest of the text from each one (10^12 steps for 1 MB)");
  }
  for (const std::string pattern :
       {"\\s+(?!\\S)", "a(?=b{1,3})c*", "(?=[*+])a+", "(?=\\*)x", "(?:ab)+(?=c)", "a?+(?=b)"}) {
    json file = word_level();
    file["pre_tokenizer"] = {
        {"type", "Split"}, {"pattern", {{"Regex", pattern}}}, {"behavior", "Isolated"}, {"invert", false}};
    const auto t = parse_tokenizer_json(file.dump(), "tokenizer.json");
    EXPECT_TRUE(t.has_value()) << pattern << ": " << t.error().message();
  }
}

// PCRE2 searches under match and depth limits (and its compiled matcher's stack): catastrophic backtracking used
// to end the search silently, the rest of the piece taken as no match; it is refused, naming the field.
TEST(RegexLimits, CatastrophicBacktrackingIsRefusedNotTakenAsNoMatch) {
  json file = word_level();
  file["pre_tokenizer"] = {
      {"type", "Split"}, {"pattern", {{"Regex", "(?:a|aa)+$"}}}, {"behavior", "Isolated"}, {"invert", false}};
  const auto t = parse_tokenizer_json(file.dump(), "tokenizer.json");
  ASSERT_TRUE(t.has_value()) << t.error().message();
  const auto started = std::chrono::steady_clock::now();
  const auto tokens = (*t)->encode(std::string(60, 'a') + "c");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_FALSE(tokens.has_value());
  EXPECT_EQ(tokens.error().kind, ErrorKind::TooLarge);
  EXPECT_EQ(tokens.error().file, "tokenizer.json");
  EXPECT_NE(tokens.error().reason.find("pre_tokenizer.pattern: the regex \"(?:a|aa)+$\" passed "), std::string::npos)
      << tokens.error().reason;
  EXPECT_NE(tokens.error().reason.find(" searching from byte 0 of a 61-byte piece"), std::string::npos)
      << tokens.error().reason;
  EXPECT_LT(seconds, 5.0);
  // Where the pattern matches quickly, it splits as before.
  const auto fine = (*t)->encode("aaaa");
  ASSERT_TRUE(fine.has_value()) << fine.error().message();
  EXPECT_EQ(ids_of(*fine), (std::vector<int>{2}));
}

// The match limit leaves real patterns their room: Llama 3's whitespace rules take one step per space of a run.
TEST(RegexLimits, AMillionSpacesUnderLlama3sWhitespaceRulesStillSplit) {
  json file = word_level();
  file["pre_tokenizer"] = {{"type", "Split"},
                           {"pattern", {{"Regex", "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}}},
                           {"behavior", "Isolated"},
                           {"invert", false}};
  const auto t = parse_tokenizer_json(file.dump(), "tokenizer.json");
  ASSERT_TRUE(t.has_value()) << t.error().message();
  const auto tokens = (*t)->encode(std::string(1'000'000, ' ') + "a");
  ASSERT_TRUE(tokens.has_value()) << tokens.error().message();
  ASSERT_EQ(tokens->size(), 3U);  // 999,999 spaces, the last one (before "a"), "a"
  EXPECT_EQ(tokens->back().id, 0);
}

// max_input_chars_per_word 10^9 let a 20 kB word be split by trying every end from every start (hours). The
// word is [UNK] past kMaxWordChars, and every start tries no further than the longest entry.
TEST(WordPieceBound, ATwentyKilobyteWordIsUnknownAtOnceWhateverTheFileSays) {
  json vocab = {{"[UNK]", 0}, {"a", 1}, {"##a", 2}};
  json file = {
      {"model",
       {{"type", "WordPiece"}, {"vocab", vocab}, {"unk_token", "[UNK]"}, {"max_input_chars_per_word", 1'000'000'000}}},
      {"pre_tokenizer", {{"type", "WhitespaceSplit"}}}};
  const auto t = parse_tokenizer_json(file.dump(), "tokenizer.json");
  ASSERT_TRUE(t.has_value()) << t.error().message();
  const auto started = std::chrono::steady_clock::now();
  const auto tokens = (*t)->encode(std::string(20'000, 'a') + " aa");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_TRUE(tokens.has_value()) << tokens.error().message();
  EXPECT_EQ(ids_of(*tokens), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ((*tokens)[0].span, (Span{0, 20'000}));
  EXPECT_LT(seconds, 5.0);
  // Up to the bound, a word is split as before: 1,000 "a" are "a" and 999 "##a".
  const auto longest = (*t)->encode(std::string(kMaxWordChars, 'a'));
  ASSERT_TRUE(longest.has_value());
  EXPECT_EQ(longest->size(), static_cast<std::size_t>(kMaxWordChars));
  EXPECT_EQ(longest->back().id, 2);
  // vocab.txt's WordPiece keeps the same bound whatever its options say.
  WordPieceOptions options;
  options.max_input_chars_per_word = 1'000'000'000;
  const auto bert = wordpiece_from_vocab({"[UNK]", "a", "##a"}, options);
  ASSERT_TRUE(bert.has_value());
  EXPECT_EQ(ids_of(*(*bert)->encode(std::string(kMaxWordChars + 1, 'a'))), (std::vector<int>{0}));
  EXPECT_EQ((*bert)->encode(std::string(kMaxWordChars, 'a'))->size(), static_cast<std::size_t>(kMaxWordChars));
}

TEST(ChainLength, TenThousandNormalizersAreRefusedAtLoad) {
  for (const auto& [key, list] : {std::pair{"normalizer", "normalizers"}, std::pair{"pre_tokenizer", "pretokenizers"},
                                  std::pair{"decoder", "decoders"}}) {
    json file = word_level();
    const json step = std::string(key) == "normalizer"      ? json{{"type", "Lowercase"}}
                      : std::string(key) == "pre_tokenizer" ? json{{"type", "WhitespaceSplit"}}
                                                            : json{{"type", "Fuse"}};
    file[key] = chain(list, step, 10'000);
    const auto t = parse_tokenizer_json(file.dump(), "tokenizer.json");
    ASSERT_FALSE(t.has_value()) << key;
    EXPECT_EQ(t.error().kind, ErrorKind::TooLarge);
    EXPECT_EQ(t.error().reason,
              std::string(key) + "." + list + " hold 10,000 links with the Sequences inside, over the limit of 64");
    // Nested Sequences count every link inside them: 9 of 9 is 81.
    file[key] = chain(list, chain(list, step, 9), 9);
    const auto nested = parse_tokenizer_json(file.dump(), "tokenizer.json");
    ASSERT_FALSE(nested.has_value());
    EXPECT_NE(nested.error().reason.find("hold 81 links"), std::string::npos) << nested.error().reason;
    file[key] = chain(list, step, 64);
    EXPECT_TRUE(parse_tokenizer_json(file.dump(), "tokenizer.json").has_value()) << key;
  }
}

// Hugging Face's WordLevel fails the encoding when a word is missing and so is its unk_token ("WordLevel error:
// Missing [UNK] token from the vocabulary"); AttnScope refused nothing and dropped the word.
TEST(WordLevelUnknown, AWordMissingWithoutAnUnknownTokenIsRefusedWithItsPlace) {
  json file = word_level({{"a", 0}, {"b", 1}});
  const auto t = parse_tokenizer_json(file.dump(), "tokenizer.json");
  ASSERT_TRUE(t.has_value()) << t.error().message();
  EXPECT_EQ(ids_of(*(*t)->encode("a b a")), (std::vector<int>{0, 1, 0}));
  const auto tokens = (*t)->encode("a cat b");
  ASSERT_FALSE(tokens.has_value());
  EXPECT_EQ(tokens.error().kind, ErrorKind::Mismatch);
  EXPECT_EQ(tokens.error().file, "tokenizer.json");
  EXPECT_EQ(tokens.error().offset, -1);  // the bytes are the text's, named in the reason
  EXPECT_EQ(tokens.error().reason,
            "model: the word at bytes 2 to 5 of the text is not in model.vocab, and neither is its unk_token "
            "\"<unk>\" (Hugging Face's tokenizers fail the same way: \"WordLevel error: Missing [UNK] token from the "
            "vocabulary\")");
}

json unigram(const json& unk_id) {
  json model = {{"type", "Unigram"}};  // vocab: [piece, score] pairs, which an initializer list would make an object
  model["vocab"] = json::array({json::array({"a", -1.0}), json::array({"b", -2.0}), json::array({"ab", -1.5})});
  if (!unk_id.is_discarded()) model["unk_id"] = unk_id;
  return {{"model", model}, {"pre_tokenizer", {{"type", "WhitespaceSplit"}}}};
}

// Hugging Face's Unigram fails the encoding at a character no piece starts with when unk_id is null or absent
// ("Encountered an unknown token but `unk_id` is missing"); AttnScope dropped the character silently.
TEST(UnigramUnknown, ACharacterMissingWithoutUnkIdIsRefusedWithItsByte) {
  for (const json& unk_id : {json(nullptr), json(json::value_t::discarded)}) {
    const auto t = parse_tokenizer_json(unigram(unk_id).dump(), "tokenizer.json");
    ASSERT_TRUE(t.has_value()) << t.error().message();
    EXPECT_EQ(ids_of(*(*t)->encode("ab a b")), (std::vector<int>{2, 0, 1}));
    const auto tokens = (*t)->encode(
        "ab \xC3\xA9"
        "a");  // "ab éa": the é at byte 3
    ASSERT_FALSE(tokens.has_value());
    EXPECT_EQ(tokens.error().kind, ErrorKind::Mismatch);
    EXPECT_EQ(tokens.error().file, "tokenizer.json");
    EXPECT_EQ(tokens.error().offset, -1);  // the byte is the text's, named in the reason
    EXPECT_EQ(tokens.error().reason,
              "model: the character at byte 3 of the text is not in model.vocab, and the model has no unk_id to "
              "stand for it (Hugging Face's tokenizers fail the same way: \"Encountered an unknown token but "
              "`unk_id` is missing\")");
  }
  // With unk_id the character is the unknown piece, as before.
  const auto with_unk = parse_tokenizer_json(unigram(1).dump(), "tokenizer.json");
  ASSERT_TRUE(with_unk.has_value()) << with_unk.error().message();
  EXPECT_EQ(ids_of(*(*with_unk)->encode("ab \xC3\xA9"
                                        "a")),
            (std::vector<int>{2, 1, 0}));
}

// An unk_id outside the vocabulary (the library's is an unsigned index into it) is refused at load, with the figure.
TEST(UnigramUnknown, AnUnkIdOutsideTheVocabularyIsRefusedAtLoad) {
  for (const auto& [unk_id, figure] : std::vector<std::pair<int, std::string>>{{3, "3"}, {-1, "-1"}}) {
    const auto t = parse_tokenizer_json(unigram(unk_id).dump(), "tokenizer.json");
    ASSERT_FALSE(t.has_value());
    EXPECT_EQ(t.error().kind, ErrorKind::OutOfRange);
    EXPECT_EQ(t.error().file, "tokenizer.json");
    EXPECT_EQ(t.error().reason, "model.unk_id is " + figure + ", outside the vocabulary's 3 pieces (ids 0 to 2)");
  }
}

}  // namespace
}  // namespace attn::text::hostile_tokenizer_tests
