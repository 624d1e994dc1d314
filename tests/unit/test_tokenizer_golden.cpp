// The engine's tokenizer.json support against Hugging Face's own library: tests/data/tokenizers/golden/golden.json
// holds, for every tokenizer file beside it, the ids, byte offsets, type ids, special-token mask and decoded texts
// the library (npm tokenizers 0.23.2, tools/golden/make_goldens.sh) gives for 18 texts and 2 pairs. Every one
// must be equal here, exactly: ids, offsets, with and without the post-processor's special tokens, and decode.
#include "attn/text/tokenizer.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

// A namespace of its own: the unity build compiles this file with the other tokenizer tests.
namespace attn::text::golden_tests {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path golden_dir() { return fs::path(ATTN_TEST_DATA_DIR) / "tokenizers" / "golden"; }

const json& golden() {
  static const json g = [] {
    std::ifstream in(golden_dir() / "golden.json");
    return json::parse(in, nullptr, /*allow_exceptions=*/false);
  }();
  return g;
}

std::vector<std::string> tokenizer_names() {
  std::vector<std::string> names;
  if (golden().is_object()) {
    for (const json& t : golden()["tokenizers"]) names.push_back(t["tokenizer"].get<std::string>());
  }
  return names;
}

const json& entry_of(const std::string& name) {
  for (const json& t : golden()["tokenizers"]) {
    if (t["tokenizer"] == name) return t;
  }
  static const json none;
  return none;
}

std::vector<int> ids_of(const std::vector<Token>& tokens) {
  std::vector<int> ids;
  for (const Token& t : tokens) ids.push_back(t.id);
  return ids;
}

// The library's Node binding gives character offsets (golden_tokens.mjs turns them back into bytes): a byte offset
// inside a character becomes that character's start. The engine's offsets go through the same rounding, which
// changes only the few that the post-processor's space trimming leaves inside a character.
std::vector<std::array<int, 2>> offsets_of(const std::vector<Token>& tokens, std::string_view text) {
  std::vector<int> start_of(text.size() + 1, 0);  // byte -> start of the character holding it
  for (std::size_t i = 0, start = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) start = i;
    start_of[i] = static_cast<int>(start);
  }
  start_of[text.size()] = static_cast<int>(text.size());
  const auto round = [&](int b) {
    return b >= 0 && b <= static_cast<int>(text.size()) ? start_of[static_cast<std::size_t>(b)] : b;
  };
  std::vector<std::array<int, 2>> out;
  for (const Token& t : tokens) out.push_back({round(t.span.begin), round(t.span.end)});
  return out;
}

std::vector<std::array<int, 2>> offsets_of(const json& expected) {
  std::vector<std::array<int, 2>> out;
  for (const json& o : expected["offsets"]) out.push_back({o[0].get<int>(), o[1].get<int>()});
  return out;
}

std::vector<int> specials_of(const Encoding& e) {
  std::vector<int> out;
  for (const bool s : e.special) out.push_back(s ? 1 : 0);
  return out;
}

class Golden : public ::testing::TestWithParam<std::string> {};

TEST(GoldenFile, IsThereAndCoversTheTokenizers) {
  ASSERT_TRUE(golden().is_object()) << "cannot read " << (golden_dir() / "golden.json");
  EXPECT_EQ(golden()["library"], "tokenizers 0.23.2");
  EXPECT_EQ(tokenizer_names().size(), 26U);
}

TEST_P(Golden, EncodeDecodeAndSpecialTokensMatchTheLibrary) {
  const std::string name = GetParam();
  const json& entry = entry_of(name);
  const auto tokenizer = load_tokenizer_json(golden_dir() / name);
  ASSERT_TRUE(tokenizer.has_value()) << tokenizer.error().message();
  const Tokenizer& t = **tokenizer;
  for (const json& c : entry["cases"]) {
    const std::string text = c["text"].get<std::string>();
    SCOPED_TRACE("text: \"" + text + "\"");
    const auto plain = t.encode(text);
    ASSERT_TRUE(plain.has_value()) << plain.error().message();
    EXPECT_EQ(ids_of(*plain), c["plain"]["ids"].get<std::vector<int>>());
    EXPECT_EQ(offsets_of(*plain, text), offsets_of(c["plain"]));
    std::vector<std::string> texts;
    for (const Token& token : *plain) texts.push_back(token.text);
    EXPECT_EQ(texts, c["plain"]["tokens"].get<std::vector<std::string>>());

    const auto model = t.encode_for_model(text);
    ASSERT_TRUE(model.has_value()) << model.error().message();
    const json& expected = c["with_special"];
    EXPECT_EQ(ids_of(model->tokens), expected["ids"].get<std::vector<int>>());
    EXPECT_EQ(offsets_of(model->tokens, text), offsets_of(expected));
    EXPECT_EQ(model->type_ids, expected["type_ids"].get<std::vector<int>>());
    EXPECT_EQ(specials_of(*model), expected["special"].get<std::vector<int>>());

    const std::vector<int> ids = ids_of(*plain);
    EXPECT_EQ(t.decode(ids, true), c["decoded"].get<std::string>());
    EXPECT_EQ(t.decode(ids, false), c["decoded_all"].get<std::string>());
  }
  for (const json& p : entry["pairs"]) {
    const std::string a = p["text"].get<std::string>(), b = p["pair"].get<std::string>();
    SCOPED_TRACE("pair: \"" + a + "\" + \"" + b + "\"");
    const auto model = t.encode_for_model(a, b);
    ASSERT_TRUE(model.has_value()) << model.error().message();
    const json& expected = p["with_special"];
    EXPECT_EQ(ids_of(model->tokens), expected["ids"].get<std::vector<int>>());
    // Offsets of the pair's tokens are into the pair: compared per text.
    std::vector<Token> first, second;
    for (std::size_t k = 0; k < model->tokens.size(); ++k) {
      (expected["type_ids"][k] == 1 && model->type_ids[k] == 1 ? second : first).push_back(model->tokens[k]);
    }
    auto offsets = offsets_of(first, a);
    for (const auto& o : offsets_of(second, b)) offsets.push_back(o);
    EXPECT_EQ(offsets, offsets_of(expected));
    EXPECT_EQ(model->type_ids, expected["type_ids"].get<std::vector<int>>());
    EXPECT_EQ(specials_of(*model), expected["special"].get<std::vector<int>>());
  }
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, Golden, ::testing::ValuesIn(tokenizer_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param.substr(0, info.param.size() - 5);  // without ".json"
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace attn::text::golden_tests
