// Every input of tests/data/bad through the loader MANIFEST.tsv names: the exact ErrorKind, a message that
// names the file, warnings (naming the file) for NaN and infinite values, and the right values for the odd
// but valid inputs.
#include "bad_corpus.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <set>

namespace attn {
// Named, not anonymous: the unity builds compile several test files as one.
namespace bad_corpus_tests {

using test::BadInput;
using test::kBadDir;

std::vector<BadInput> inputs() {
  static const std::vector<BadInput> all = test::read_bad_manifest();
  return all;
}

TEST(BadCorpus, ManifestCoversTheCorpus) {
  const auto all = inputs();
  // Every line parsed (5 fields), every loader known, and every file or folder in the corpus listed once.
  std::ifstream in(kBadDir / "MANIFEST.tsv");
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) lines += !line.empty() && line.front() != '#';
  ASSERT_GT(lines, 60);
  EXPECT_EQ(static_cast<int>(all.size()), lines);
  std::set<std::string> listed;
  for (const auto& input : all) EXPECT_TRUE(listed.insert(input.path).second) << input.path << " is listed twice";
  std::uintmax_t bytes = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(kBadDir)) {
    if (!entry.is_regular_file()) continue;
    bytes += entry.file_size();
    const auto rel = std::filesystem::relative(entry.path(), kBadDir);
    if (rel == "MANIFEST.tsv") continue;
    // A file is listed itself, or its folder is (a tokenizer or model folder).
    const bool covered = listed.contains(rel.generic_string()) || listed.contains(rel.parent_path().generic_string());
    EXPECT_TRUE(covered) << rel << " is in tests/data/bad but not in MANIFEST.tsv";
  }
  EXPECT_LT(bytes, 1u << 20) << "the corpus must stay well under 1 MB";
}

class BadInputTest : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadInputTest, RefusedWithItsKindOrLoadedAsListed) {
  const BadInput& input = GetParam();
  SCOPED_TRACE(input.path + ": " + input.what);
  const test::LoadOutcome outcome = test::run_loader(input);
  ASSERT_TRUE(outcome.ran) << "unknown loader " << input.loader;
  const std::string named = (kBadDir / input.names).string();

  if (input.expect == "ok" || input.expect == "warning") {
    ASSERT_FALSE(outcome.error) << outcome.error->message();
    if (input.expect == "warning") {
      ASSERT_FALSE(outcome.warnings.empty()) << "loaded without a warning";
      const bool names_file = std::any_of(outcome.warnings.begin(), outcome.warnings.end(), [&](const std::string& w) {
        return w.find(named) != std::string::npos &&
               (w.find("non-finite") != std::string::npos || w.find("outside [0, 1]") != std::string::npos);
      });
      EXPECT_TRUE(names_file) << "no warning names " << named
                              << " and its non-finite or out-of-range values: " << outcome.warnings.front();
    } else {
      EXPECT_TRUE(outcome.warnings.empty()) << outcome.warnings.front();
    }
    return;
  }
  ASSERT_TRUE(outcome.error) << "loaded, but " << input.expect << " was expected";
  EXPECT_EQ(to_string(outcome.error->kind), input.expect) << outcome.error->message();
  EXPECT_NE(outcome.error->message().find(named), std::string::npos)
      << "the message does not name " << named << ": " << outcome.error->message();
  // A tokenizer file that cannot be read says where: the line (vocab.txt, merges.txt) or the byte (JSON).
  const bool tokenizer = input.loader == "wordpiece" || input.loader == "tokenizer_json" || input.loader == "bpe" ||
                         input.loader == "tokenizer_model";
  if (tokenizer && (input.expect == "malformed" || input.expect == "encoding")) {
    EXPECT_TRUE(outcome.error->line > 0 || outcome.error->offset >= 0)
        << "no line or byte in: " << outcome.error->message();
  }
}

std::string test_name(const ::testing::TestParamInfo<BadInput>& info) {
  std::string name = info.param.path;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Manifest, BadInputTest, ::testing::ValuesIn(inputs()), test_name);

// The "ok" inputs decode to the values the generator wrote.

test::LoadOutcome load(const std::string& path) {
  for (const auto& input : inputs()) {
    if (input.path == path) return test::run_loader(input);
  }
  ADD_FAILURE() << path << " is not in MANIFEST.tsv";
  return {};
}

TEST(BadCorpus, HeaderLengthsSevenAndEightHoldNoTensors) {
  for (const char* path : {"safetensors/header-length-7.safetensors", "safetensors/header-length-8.safetensors"}) {
    const auto outcome = load(path);
    ASSERT_TRUE(outcome.tensors) << path;
    EXPECT_TRUE(outcome.tensors->tensors().empty()) << path;
    EXPECT_EQ(outcome.tensors->data_start(), std::string(path).find("-7") != std::string::npos ? 15 : 16) << path;
  }
}

TEST(BadCorpus, SixteenBitPngKeepsItsSixteenBits) {
  const auto outcome = load("images/grey16.png");
  ASSERT_TRUE(outcome.image);
  const Image& image = *outcome.image;
  ASSERT_EQ(image.width, 3);
  ASSERT_EQ(image.height, 2);
  ASSERT_EQ(image.channels, 3);
  const int values[2][3] = {{0, 65535, 32768}, {1000, 50000, 257}};  // as tools/bad/make_bad_corpus.py writes
  for (int y = 0; y < 2; ++y) {
    for (int x = 0; x < 3; ++x) {
      for (int c = 0; c < 3; ++c) {
        // 1000 / 65535 and 257 / 65535 differ from every 8-bit value: only a 16-bit decode gets them.
        EXPECT_NEAR(image.at(c, y, x), values[y][x] / 65535.0f, 1e-6f) << "x " << x << " y " << y << " c " << c;
      }
    }
  }
}

TEST(BadCorpus, WindowsLineEndingsInVocabTxtAreNotPartOfTheTokens) {
  for (const auto& input : inputs()) {
    if (input.path != "tokenizers/vocab-crlf.txt") continue;
    const auto tokenizer = text::load_wordpiece(kBadDir / input.path, text::WordPieceOptions{});
    ASSERT_TRUE(tokenizer) << tokenizer.error().message();
    EXPECT_EQ((*tokenizer)->id("hello"), std::optional<int>(4));
    EXPECT_EQ((*tokenizer)->id("world"), std::optional<int>(5));
    return;
  }
  ADD_FAILURE() << "tokenizers/vocab-crlf.txt is not in MANIFEST.tsv";
}

TEST(BadCorpus, CmykJpegLoadsAsRgb) {
  const auto outcome = load("images/cmyk.jpg");
  ASSERT_TRUE(outcome.image);
  const Image& image = *outcome.image;
  ASSERT_EQ(image.width, 16);
  ASSERT_EQ(image.height, 8);
  // Left block: inverted CMYK (255, 0, 0, 255) = no cyan, full magenta and yellow, no black: red. Right block:
  // (255, 255, 255, 128) = half black: grey 128. OpenCV's CMYK conversion is exact to within 2 / 255.
  constexpr float tol = 2.5f / 255.0f;
  for (int y = 0; y < 8; ++y) {
    for (int x = 0; x < 8; ++x) {
      EXPECT_NEAR(image.at(0, y, x), 1.0f, tol);
      EXPECT_NEAR(image.at(1, y, x), 0.0f, tol);
      EXPECT_NEAR(image.at(2, y, x), 0.0f, tol);
      for (int c = 0; c < 3; ++c) EXPECT_NEAR(image.at(c, y, x + 8), 128.0f / 255.0f, tol);
    }
  }
}

TEST(BadCorpus, NonFiniteWarningsNameTheTensorAndCount) {
  const auto weights = load("safetensors/nan.safetensors");
  ASSERT_EQ(weights.warnings.size(), 1u);
  EXPECT_NE(weights.warnings[0].find("\"weight\""), std::string::npos) << weights.warnings[0];
  EXPECT_NE(weights.warnings[0].find("2 non-finite values (2 NaN) of 6"), std::string::npos) << weights.warnings[0];
  const auto inf = load("safetensors/inf.safetensors");
  ASSERT_EQ(inf.warnings.size(), 1u);
  EXPECT_NE(inf.warnings[0].find("(2 infinite) of 4"), std::string::npos) << inf.warnings[0];
  const auto model = load("models/gpt2-nan");
  const bool named = std::any_of(model.warnings.begin(), model.warnings.end(), [](const std::string& w) {
    return w.find("\"h.0.attn.c_attn.weight\"") != std::string::npos &&
           w.find("3 non-finite values (1 NaN, 2 infinite) of 48") != std::string::npos;
  });
  EXPECT_TRUE(named) << (model.warnings.empty() ? std::string("no warnings") : model.warnings.front());
  // Its runs: the NaN and infinities reach every score, so the maps are NaN (not a uniform row, which the
  // softmax used to make of a NaN sum), the run says so and the cells are counted.
  auto gpt2 = models::TransformerModel::load(kBadDir / "models/gpt2-nan");
  ASSERT_TRUE(gpt2) << gpt2.error().message();
  models::TransformerRunner session(*gpt2);
  const auto run = session.run_text("the cat sat");
  ASSERT_TRUE(run) << run.error().message();
  EXPECT_GT(run->attention.layers.at(0).maps.nonfinite(), 0);
  const bool warned = std::any_of(run->warnings.begin(), run->warnings.end(), [](const std::string& w) {
    return w.find("the attention weights hold") != std::string::npos && w.find("left blank") != std::string::npos;
  });
  EXPECT_TRUE(warned) << (run->warnings.empty() ? std::string("no run warnings") : run->warnings.front());
  // And its predictions, which the window listed as ordinary ones (issue 42): said once, by the engine.
  EXPECT_EQ(std::count(run->warnings.begin(), run->warnings.end(),
                       "the predictions at 1 of the 1 positions are not finite (NaN or infinite probabilities; the "
                       "first at position 2): the model's logits are not finite, so they predict nothing"),
            1);
  const auto dump = load("dumps/nan.attn.safetensors");
  ASSERT_EQ(dump.warnings.size(), 1u);
  EXPECT_NE(dump.warnings[0].find("attn.encoder.0 holds 1 non-finite weight"), std::string::npos) << dump.warnings[0];
}

}  // namespace bad_corpus_tests
}  // namespace attn
