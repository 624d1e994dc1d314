#include "attn/text/ngram_embedding.h"
#include "attn/text/words.h"

#include <gtest/gtest.h>

using namespace attn;

namespace {
std::vector<std::string> words_of(std::string_view text) {
  auto r = split_words(text);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message());
  std::vector<std::string> out;
  if (r)
    for (const auto& w : *r) out.push_back(w.text);
  return out;
}
float cosine(const RowVector& a, const RowVector& b) { return a.dot(b) / (a.norm() * b.norm()); }
}  // namespace

TEST(Words, SplitsOnSpacesAndPunctuationWithOffsets) {
  auto r = split_words("The cat, don't  sit!");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->size(), 6u);
  EXPECT_EQ((*r)[1].text, "cat");
  EXPECT_EQ((*r)[1].span, (Span{4, 7}));
  EXPECT_EQ((*r)[2].text, ",");
  EXPECT_EQ((*r)[3].text, "don't");
  EXPECT_EQ((*r)[5].text, "!");
  EXPECT_EQ((*r)[5].span, (Span{19, 20}));
}

TEST(Words, CjkCharactersAndEmojiAreTokensOfTheirOwn) {
  EXPECT_EQ(words_of("我爱猫"), (std::vector<std::string>{"我", "爱", "猫"}));
  // A ZWJ family and a thumbs-up with a skin tone each stay one token.
  EXPECT_EQ(words_of("hi 👨‍👩‍👧 👍🏽!"),
            (std::vector<std::string>{"hi", "👨‍👩‍👧", "👍🏽", "!"}));
  EXPECT_EQ(words_of("café naïve"), (std::vector<std::string>{"café", "naïve"}));
  EXPECT_EQ(words_of("Grüße, Москва"), (std::vector<std::string>{"Grüße", ",", "Москва"}));
}

TEST(Words, InvalidUtf8IsRefusedWithTheByteOffset) {
  const std::string bad = std::string("ok \xC3(") + " more";
  auto r = split_words(bad, "query");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().offset, 3);
  EXPECT_EQ(r.error().file, "query");
  EXPECT_NE(r.error().message().find("byte 3"), std::string::npos);
  EXPECT_EQ(first_invalid_utf8("\xED\xA0\x80"), 0);     // a surrogate
  EXPECT_EQ(first_invalid_utf8("ab\xC0\xAF"), 2);       // overlong '/'
  EXPECT_EQ(first_invalid_utf8("abc\xF0\x9F\x98"), 3);  // truncated at the end
  EXPECT_EQ(first_invalid_utf8("fine 😀"), -1);
}

TEST(Words, EmptyAndBlankTextHaveNoTokens) {
  EXPECT_TRUE(words_of("").empty());
  EXPECT_TRUE(words_of(" \t\n ").empty());
}

TEST(Words, SentencesEndAtTerminatorsAndLineBreaks) {
  const std::string text = "One two. Three!\nFour five\nsix";
  auto w = split_words(text);
  ASSERT_TRUE(w);
  const auto s = split_sentences(*w, text);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].size(), 3u);  // One two .
  EXPECT_EQ(s[2][0].text, "Four");
  EXPECT_EQ(s[3][0].text, "six");
}

TEST(NgramEmbedding, SimilarSpellingsAreCloseAndUnrelatedWordsAreNot) {
  const NgramEmbedding e;
  const float apples = cosine(e.embed("apples"), e.embed("apple"));
  const float unrelated = cosine(e.embed("apple"), e.embed("garden"));
  EXPECT_GT(apples, 0.5f);
  EXPECT_LT(std::abs(unrelated), 0.35f);
  EXPECT_GT(apples, unrelated + 0.3f);
  EXPECT_NEAR(cosine(e.embed("Apple"), e.embed("apple")), 1.0f, 1e-6f);  // case folded
}

TEST(NgramEmbedding, IsDeterministicAndSeeded) {
  const NgramEmbedding a({.seed = 1}), b({.seed = 1}), c({.seed = 2});
  EXPECT_EQ(a.embed("garden"), b.embed("garden"));
  EXPECT_NE(a.embed("garden"), c.embed("garden"));
  EXPECT_NEAR(a.embed("x").norm(), 8.0f, 1e-4f);  // norm sqrt(64)
  EXPECT_EQ(a.embed(std::vector<std::string_view>{"a", "b", "c"}).rows(), 3);
}

TEST(NgramEmbedding, FoldsCaseBeyondAscii) {
  EXPECT_EQ(fold_case("ÉCOLE"), "école");
  EXPECT_EQ(fold_case("МОСКВА"), "москва");
  EXPECT_EQ(fold_case("ΑΘΗΝΑ"), "αθηνα");
  EXPECT_EQ(fold_case("猫"), "猫");
}
