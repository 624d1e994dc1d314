// Token ids typed as numbers (attn/text/token_ids.h): the lists the tab's "ids:" text and attnscope-cli's --ids
// take, and each refusal with the id's position, its byte and the reason.
#include "attn/text/token_ids.h"

#include <gtest/gtest.h>

namespace {

using attn::text::parse_token_ids;
using attn::text::token_ids_text;

TEST(TokenIds, CommasSpacesOrBoth) {
  const std::vector<int> expected{5, 17, 3};
  for (const char* list : {"5 17 3", "5,17,3", "5, 17, 3", " 5\t17\n3 ", "+5 17 3"}) {
    auto ids = parse_token_ids(list, 100);
    ASSERT_TRUE(ids) << list << ": " << ids.error().message();
    EXPECT_EQ(*ids, expected) << list;
  }
  auto big = parse_token_ids("0 99", 100);
  ASSERT_TRUE(big);
  EXPECT_EQ(big->back(), 99);
}

TEST(TokenIds, RefusalsNameThePositionTheByteAndTheReason) {
  struct Case {
    const char* list;
    std::int64_t byte;
    const char* reason;
    attn::ErrorKind kind;
  };
  const Case cases[] = {
      {"5 17 abc", 5, "id 2 \"abc\": not a whole number", attn::ErrorKind::Malformed},
      {"5 1.5", 2, "id 1 \"1.5\": not a whole number", attn::ErrorKind::Malformed},
      {"5 100", 2, "id 1 \"100\": outside the vocabulary (0-99)", attn::ErrorKind::OutOfRange},
      {"-1", 0, "id 0 \"-1\": negative (ids count from 0)", attn::ErrorKind::OutOfRange},
      {"5,,6", 2, "id 1: missing (an empty place between commas)", attn::ErrorKind::Malformed},
      {"5,", 2, "id 1: missing after the last comma", attn::ErrorKind::Malformed},
      {"99999999999999999999", 0, "too large for a token id", attn::ErrorKind::OutOfRange},
      {"  ", -1, "no token ids", attn::ErrorKind::OutOfRange},
  };
  for (const auto& c : cases) {
    auto ids = parse_token_ids(c.list, 100, "--ids");
    ASSERT_FALSE(ids) << c.list;
    EXPECT_EQ(ids.error().file, "--ids") << c.list;
    EXPECT_EQ(ids.error().offset, c.byte) << c.list;
    EXPECT_NE(ids.error().reason.find(c.reason), std::string::npos) << c.list << ": " << ids.error().reason;
    EXPECT_EQ(ids.error().kind, c.kind) << c.list;
  }
  // Without a vocabulary size only the syntax is checked.
  EXPECT_TRUE(parse_token_ids("123456", 0));
}

TEST(TokenIds, TheIdsPrefixOfATypedText) {
  EXPECT_EQ(token_ids_text("ids: 5 17 3").value_or("none"), " 5 17 3");
  EXPECT_EQ(token_ids_text("  IDS:1,2").value_or("none"), "1,2");
  EXPECT_FALSE(token_ids_text("the ids: 5"));
  EXPECT_FALSE(token_ids_text("ids 5"));
  EXPECT_FALSE(token_ids_text("id"));
}

}  // namespace
