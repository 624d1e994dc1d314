// The session file: a round trip of every section with values off their defaults (through text and through
// a file), and every refusal of read_session with its kind and the byte it names; sections that are missing
// or unknown fall back with a warning; save_session writes atomically and never writes what it could not
// read back.
#include "session/session.h"
#include "workbenches/alignment/entailment/entailment_session.h"
#include "workbenches/alignment/reviews/reviews_session.h"
#include "workbenches/alignment/speech/speech_session.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <unistd.h>

namespace attn::ui {
namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

// Every field of every section off its default.
Session sample() {
  Session s = default_session();
  s.tab = SessionTab::Glimpse;
  auto& a = *s.alignment;
  a.model = "/models/date luong";
  a.text = "le 3 mars 1999 \xe2\x80\x94 \xe6\x97\xa5\xe6\x9c\xac";  // UTF-8 beyond ASCII
  setEntailmentPair(a, "a man is \xc3\xa9 not sleeping");
  a.beam = 4;
  a.hypothesis = 2;
  a.step = 7;
  a.colormap = "magma";
  setReviewsReadings(a, false);  // not the default: the round trip must carry it
  setSpeechShaping(a, {.sharpen = 2.5f, .smooth = false, .top_k = 5, .window = 12});
  auto& c = *s.caption;
  c.model = "caption-hard";
  c.input = CaptionSection::Input::Sample;
  c.image = "chelsea";
  c.beam = 5;
  c.hypothesis = 1;
  c.word = 3;
  c.sigma = 4.5;
  c.opacity = 0.55;
  c.colormap = "plasma";
  c.threshold = 0.3;
  c.style = CaptionSection::Style::LightMask;
  c.per_row = 7;
  auto& l = *s.lab;
  l.request.query = "the cat";
  l.request.source = "a cat sat on the mat\nand \"quoted\" \\ text";
  l.request.params.mechanism = lab::Mechanism::MultiHead;
  l.request.params.score = ScoreKind::General;
  l.request.params.normaliser = Normaliser::Sparsemax;
  l.request.params.temperature = 0.7f;
  l.request.params.window = 5;
  l.request.params.sigma = 1.25f;
  l.request.params.heads = 8;
  l.request.params.hops = 4;
  l.request.params.classes = 6;
  l.request.params.buckets = 6;
  l.request.params.chunk = 5;
  l.request.params.hashes = 3;
  l.request.params.causal = true;
  l.request.params.shuffle = true;
  l.request.params.positions = PositionKind::Sinusoidal;
  l.request.params.seed = 123456789;
  l.request.params.dim = 96;
  l.colormap = "cividis";
  l.unit_range = true;
  l.map = 3;
  auto& g = *s.glimpse;
  g.image = {ImageRef::Kind::File, "/photos/a b.png"};
  g.image_width = 640;
  g.image_height = 480;
  g.settings.gaussian = glimpse::centred_glimpse(300.0, 200.0, 20, 3.5, 1.75, 0.8);
  g.settings.stn.family = glimpse::Family::Similarity;
  g.settings.stn.similarity.scale = 0.5;
  g.settings.stn.similarity.rotation = 0.3;
  g.settings.stn.out_w = 32;
  g.settings.same_window = true;
  g.write_mode = true;
  g.window_forms = true;
  g.edit_stn = true;
  auto& t = *s.transformer;
  t.source = "/models/bert tiny";
  t.text = "the [MASK] sat";
  t.pair = "on the mat";
  t.image = {ImageRef::Kind::Sample, "coffee"};
  t.layer = 2;
  t.head = 3;
  t.view = TransformerSection::View::Statistics;
  t.matrix = TransformerSection::Matrix::Rollout;
  t.fusion = TransformerSection::Fusion::Max;
  t.discard_ratio = 0.25;
  t.residual = 0.75;
  t.overlay = TransformerSection::Overlay::Head;
  t.overlay_alpha = 0.4;
  t.line_threshold = 0.05;
  t.colormap = "greys";
  t.new_tokens = 12;
  t.temperature = 0.7;
  t.top_k = 40;
  t.top_p = 0.9;
  t.seed = 123456789;
  t.generated = true;
  t.step = 5;
  t.ablated = "1.1,1.2";
  t.ablation = TransformerSection::Ablation::Resample;
  t.compare = true;
  t.compare_text = "abcdefghxjkl";
  t.compare_show = TransformerSection::CompareShow::SideBySide;
  return s;
}

// to_json(sample()) with one change made to its JSON.
std::string edited(const std::function<void(ojson&)>& edit) {
  ojson j = ojson::parse(to_json(sample()));
  edit(j);
  return j.dump(2);
}

// The refusal of `text`, checked to name the file and to point at `at` (the first occurrence of it, searched
// from `after` when given), or at no byte when `at` is empty.
Error refusal(const std::string& text, ErrorKind kind, std::string_view at, std::string_view after = {}) {
  const auto r = read_session(text, "s.attnscope.json");
  EXPECT_FALSE(r.has_value());
  if (r) return {};
  const Error& e = r.error();
  EXPECT_EQ(e.kind, kind) << e.message();
  EXPECT_EQ(e.file, "s.attnscope.json");
  if (!at.empty()) {
    const std::size_t from = after.empty() ? 0 : text.find(after);
    EXPECT_NE(from, std::string::npos);
    const std::size_t want = text.find(at, from);
    EXPECT_EQ(e.offset, static_cast<std::int64_t>(want)) << e.message();
  }
  return e;
}

TEST(Session, RoundTripKeepsEveryField) {
  const Session s = sample();
  const std::string text = to_json(s);
  const auto back = read_session(text, "s");
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_TRUE(back->warnings.empty()) << back->warnings.front().message();
  EXPECT_EQ(*back, s);
  // Field by field where == would hide which one broke.
  EXPECT_EQ(back->lab->request.params, s.lab->request.params);
  EXPECT_EQ(back->glimpse->settings, s.glimpse->settings);
  EXPECT_EQ(back->transformer, s.transformer);
  EXPECT_EQ(back->caption, s.caption);
  EXPECT_EQ(back->alignment, s.alignment);
  // And the text is stable: writing what was read gives the same bytes.
  EXPECT_EQ(to_json(*back), text);
}

TEST(Session, DefaultsRoundTripAndEveryInputKind) {
  EXPECT_EQ(*read_session(to_json(default_session()), "s"), default_session());
  Session s = default_session();
  s.caption->input = CaptionSection::Input::File;
  s.caption->image = "/tmp/x.jpg";
  s.caption->seed = 1;
  s.glimpse->image = {ImageRef::Kind::Sample, "rocket"};
  s.caption->seed = kMaxSessionSeed;
  s.caption->input = CaptionSection::Input::Scene;
  s.caption->image.clear();
  s.corpus->database = "/tmp/stories.sqlite";
  s.corpus->model = "resources/models/stories260k";
  s.corpus->statistic = "first_token_mass";
  s.corpus->layer = 3;
  s.corpus->head = 5;
  s.corpus->search = CorpusSection::Search::SinkMass;
  s.corpus->token = "she";
  s.corpus->sample = 40;
  s.corpus->colour = CorpusSection::Colour::Kind;
  for (const auto tab : {SessionTab::Alignment, SessionTab::Caption, SessionTab::Lab, SessionTab::Glimpse,
                         SessionTab::Transformer, SessionTab::Corpus}) {
    s.tab = tab;
    const auto back = read_session(to_json(s), "s");
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(*back, s) << to_string(tab);
  }
}

TEST(Session, SaveAndLoadThroughAFile) {
  const fs::path dir = fs::temp_directory_path() / ("attn-session-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "a.attnscope.json";
  ASSERT_TRUE(save_session(file, sample()));
  const auto back = load_session(file);
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(*back, sample());
  // Nothing but the file itself is left in the folder.
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 1);

  // A session that could not be read back is refused and the file keeps the previous session.
  Session big = sample();
  big.alignment->text.assign(static_cast<std::size_t>(kMaxSessionText) + 1, 'x');
  const auto refused = save_session(file, big);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::TooLarge) << refused.error().message();
  EXPECT_EQ(*load_session(file), sample());

  // A folder that does not exist: an Io error naming the file.
  const auto nowhere = save_session(dir / "no" / "such" / "x.attnscope.json", sample());
  ASSERT_FALSE(nowhere);
  EXPECT_EQ(nowhere.error().kind, ErrorKind::Io);
  EXPECT_NE(nowhere.error().file.find("x.attnscope.json"), std::string::npos);

  // A temporary file a killed writer left behind (a process that no longer exists) goes with the next save;
  // one of a live process stays.
  const fs::path stale = dir / ".a.attnscope.json.tmp-999999999-3";
  const fs::path live = dir / (".a.attnscope.json.tmp-" + std::to_string(getppid()) + "-0");
  std::ofstream(stale) << "{\"format\": \"attnsc";
  std::ofstream(live) << "{";
  ASSERT_TRUE(save_session(file, default_session()));
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_EQ(*load_session(file), default_session());

  const auto missing = load_session(dir / "missing.attnscope.json");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::Io);
  fs::remove_all(dir);
}

TEST(Session, MissingAndUnknownSectionsFallBackWithAWarning) {
  const std::string text = edited([](ojson& j) {
    j["tabs"].erase("lab");
    j["tabs"]["timeline"] = {{"x", 1}};
    j["tabs"]["caption"]["future"] = true;
    j["comment"] = "hand-written";
  });
  const auto r = read_session(text, "s");
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_FALSE(r->lab.has_value());
  EXPECT_EQ(r->caption, sample().caption);
  EXPECT_EQ(r->glimpse, sample().glimpse);
  ASSERT_EQ(r->warnings.size(), 4u);
  std::string all;
  for (const auto& w : r->warnings) all += w.message() + "\n";
  EXPECT_NE(all.find("no \"lab\" section"), std::string::npos) << all;
  EXPECT_NE(all.find("timeline"), std::string::npos) << all;
  EXPECT_NE(all.find("tabs.caption.future"), std::string::npos) << all;
  EXPECT_NE(all.find("comment"), std::string::npos) << all;
  // The unknown key's warning names its byte.
  for (const auto& w : r->warnings) {
    if (w.reason.find("future") != std::string::npos) {
      EXPECT_EQ(w.offset, std::int64_t(text.find("\"future\"")));
    }
  }
  // No "tabs" at all: every tab falls back, each with its warning.
  const auto bare = read_session(R"({"format": "attnscope.session", "version": 1})", "s");
  ASSERT_TRUE(bare) << bare.error().message();
  EXPECT_EQ(bare->warnings.size(), 6u);
  EXPECT_FALSE(bare->alignment || bare->caption || bare->lab || bare->glimpse || bare->transformer || bare->corpus);
  // Absent fields inside a section keep their defaults.
  const auto partial =
      read_session(R"({"format": "attnscope.session", "version": 1, "tabs": {"alignment": {"beam": 3}}})", "s");
  ASSERT_TRUE(partial) << partial.error().message();
  AlignmentSection want;
  want.beam = 3;
  EXPECT_EQ(partial->alignment, want);
}

TEST(Session, RefusesWhatIsNotASessionFile) {
  refusal("", ErrorKind::Truncated, {});
  refusal(R"({"format": "attnscope.session", "version": 1, "tabs": {"alignment": {"beam": 3)", ErrorKind::Truncated,
          {});
  refusal("{\"format\": \"attnscope.session\", \"version\": 1,,}", ErrorKind::Malformed, {});
  EXPECT_EQ(read_session("{\"a\": [1, 2,, 3]}", "s").error().offset, 12);
  refusal("[1, 2]", ErrorKind::Malformed, {});
  refusal(R"({"version": 1})", ErrorKind::Malformed, {});
  refusal(R"({"format": "attnscope.glimpse", "version": 1})", ErrorKind::Unsupported, "\"format\"");
  refusal(R"({"format": 7, "version": 1})", ErrorKind::Malformed, "\"format\"");
  refusal(R"({"format": "attnscope.session"})", ErrorKind::Malformed, {});
  refusal(R"({"format": "attnscope.session", "version": 2})", ErrorKind::Unsupported, "\"version\"");
  refusal(R"({"format": "attnscope.session", "version": 18446744073709551615})", ErrorKind::Unsupported, "\"version\"");
  refusal(R"({"format": "attnscope.session", "version": 0})", ErrorKind::OutOfRange, "\"version\"");
  refusal(R"({"format": "attnscope.session", "version": "1"})", ErrorKind::Malformed, "\"version\"");
  refusal(R"({"format": "attnscope.session", "version": 1, "tab": "timeline"})", ErrorKind::OutOfRange, "\"tab\"");
  refusal(R"({"format": "attnscope.session", "version": 1, "tabs": []})", ErrorKind::Malformed, "\"tabs\"");
  refusal(R"({"format": "attnscope.session", "version": 1, "tabs": {"lab": 3}})", ErrorKind::Malformed, "\"lab\"");
}

TEST(Session, RefusesDuplicateKeysAtTheSecond) {
  const std::string text =
      R"({"format": "attnscope.session", "version": 1, "tabs": {"alignment": {"beam": 2, "beam": 3}}})";
  refusal(text, ErrorKind::Malformed, "\"beam\"", "2,");
  const std::string top = R"({"format": "attnscope.session", "version": 1, "version": 1})";
  refusal(top, ErrorKind::Malformed, "\"version\"", "1,");
}

TEST(Session, RefusesBytesThatAreNotUtf8AtTheirOffset) {
  std::string text = to_json(sample());
  const std::size_t at = text.find("the cat");
  text[at + 1] = static_cast<char>(0xC3);  // a lead byte followed by ASCII
  const Error e = refusal(text, ErrorKind::Encoding, {});
  EXPECT_EQ(e.offset, static_cast<std::int64_t>(at + 1));
  // An escaped lone surrogate is not a character either.
  refusal(R"({"format": "attnscope.session", "version": 1, "tabs": {"alignment": {"text": "\ud800"}}})",
          ErrorKind::Encoding, {});
}

TEST(Session, RefusesSizesOverTheLimits) {
  std::string huge(static_cast<std::size_t>(io::kMaxSessionBytes) + 1, ' ');
  refusal(huge, ErrorKind::TooLarge, {});
  std::string deep = R"({"format": "attnscope.session", "version": 1, "x": )";
  const std::size_t first = deep.size();
  for (int i = 0; i < 100; ++i) deep += "[";
  const Error e = refusal(deep, ErrorKind::TooLarge, {});
  EXPECT_EQ(e.offset, static_cast<std::int64_t>(first + io::kMaxSessionDepth - 1));
  refusal(edited([](ojson& j) { j["tabs"]["transformer"]["source"] = std::string(kMaxSessionName + 1, 'p'); }),
          ErrorKind::TooLarge, "\"source\"", "\"transformer\"");
  refusal(edited([](ojson& j) { j["tabs"]["alignment"]["text"] = std::string(kMaxSessionText + 1, 't'); }),
          ErrorKind::TooLarge, "\"text\"", "\"alignment\"");
  refusal(edited([](ojson& j) { j["tabs"]["lab"]["request"]["query"] = std::string(kMaxSessionText + 1, 'q'); }),
          ErrorKind::TooLarge, "\"query\"");
}

// A session file as the code before the kinds' session parts wrote it, the kinds' keys ("pair", "readings",
// "shaping") off their defaults at the section's top level beside the shared ones: each arrives in its kind's part,
// and writing the section back gives the same keys with the same values and types.
TEST(Session, KindsKeysOfAnEarlierFileReadAndWriteBackTheSame) {
  const std::string text = R"({
  "format": "attnscope.session",
  "version": 1,
  "tab": "alignment",
  "tabs": {
    "alignment": {
      "model": "entailment-wbw",
      "text": "A man is sleeping on the beach.",
      "pair": "the old man is not sleeping",
      "beam": 2,
      "hypothesis": 1,
      "step": 3,
      "colormap": "magma",
      "readings": false,
      "shaping": {
        "sharpen": 2.5,
        "smooth": false,
        "top_k": 5,
        "window": 12
      }
    }
  }
})";
  const auto r = read_session(text, "s");
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ(r->warnings.size(), 5u);  // the five other tabs' sections, and no unknown key
  for (const auto& w : r->warnings)
    EXPECT_NE(w.reason.find("starts with its defaults"), std::string::npos) << w.message();
  ASSERT_TRUE(r->alignment);
  const AlignmentSection& a = *r->alignment;
  EXPECT_EQ(a.model, "entailment-wbw");
  EXPECT_EQ(a.text, "A man is sleeping on the beach.");
  EXPECT_EQ(a.beam, 2);
  EXPECT_EQ(a.hypothesis, 1);
  EXPECT_EQ(a.step, 3);
  EXPECT_EQ(a.colormap, "magma");
  EXPECT_EQ(entailmentPair(a), "the old man is not sleeping");
  EXPECT_FALSE(reviewsReadings(a));
  EXPECT_EQ(speechShaping(a), (models::AttentionShaping{.sharpen = 2.5f, .smooth = false, .top_k = 5, .window = 12}));

  const auto original = nlohmann::json::parse(text).at("tabs").at("alignment");
  const auto written = nlohmann::json::parse(to_json(*r)).at("tabs").at("alignment");
  EXPECT_EQ(written, original) << written.dump(2);
  for (const auto& [key, value] : original.items()) {
    ASSERT_TRUE(written.contains(key)) << key;
    EXPECT_EQ(std::string(written.at(key).type_name()), value.type_name()) << key;
  }
  for (const auto& [key, value] : original.at("shaping").items()) {
    EXPECT_EQ(written.at("shaping").at(key).type(), value.type()) << key;
  }

  // A section without them: each kind's default, written as before.
  const auto bare =
      read_session(R"({"format": "attnscope.session", "version": 1, "tabs": {"alignment": {"beam": 3}}})", "s");
  ASSERT_TRUE(bare) << bare.error().message();
  EXPECT_EQ(entailmentPair(*bare->alignment), "");
  EXPECT_TRUE(reviewsReadings(*bare->alignment));
  EXPECT_EQ(speechShaping(*bare->alignment), models::AttentionShaping{});
  const auto defaults = nlohmann::json::parse(to_json(*bare)).at("tabs").at("alignment");
  EXPECT_EQ(defaults.at("pair"), "");
  EXPECT_EQ(defaults.at("readings"), true);
  EXPECT_EQ(defaults.at("shaping"), (nlohmann::json{{"sharpen", 1.0}, {"smooth", false}, {"top_k", 0}, {"window", 0}}));
  // A smooth shaping has no beta: its sharpen reads as 1, as before.
  const auto smooth = read_session(
      R"({"format": "attnscope.session", "version": 1, "tabs": {"alignment": {"shaping": {"sharpen": 3, "smooth": true}}}})",
      "s");
  ASSERT_TRUE(smooth) << smooth.error().message();
  EXPECT_EQ(speechShaping(*smooth->alignment), (models::AttentionShaping{.smooth = true}));
}

// A kind's unknown keys are reported as the section's own: at the section's level and inside a kind's object.
TEST(Session, WarnsOfUnknownKeysBesideAndInsideTheKindsKeys) {
  const std::string text = edited([](ojson& j) {
    j["tabs"]["alignment"]["voices"] = 2;
    j["tabs"]["alignment"]["shaping"]["temperature"] = 0.5;
  });
  const auto r = read_session(text, "s");
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->alignment, sample().alignment);
  ASSERT_EQ(r->warnings.size(), 2u);
  std::string all;
  for (const auto& w : r->warnings) all += w.message() + "\n";
  EXPECT_NE(all.find("tabs.alignment.voices"), std::string::npos) << all;
  EXPECT_NE(all.find("tabs.alignment.shaping.temperature"), std::string::npos) << all;
}

struct Bad {
  const char* what;
  std::function<void(ojson&)> edit;
  ErrorKind kind;
  const char* at;     // the key the error points at
  const char* after;  // searched from here (the section)
};

TEST(Session, RefusesEveryBadValueAtItsKey) {
  const std::vector<Bad> cases = {
      {"alignment model not a string", [](ojson& j) { j["tabs"]["alignment"]["model"] = 3; }, ErrorKind::Malformed,
       "\"model\"", "\"alignment\""},
      {"alignment model empty", [](ojson& j) { j["tabs"]["alignment"]["model"] = ""; }, ErrorKind::OutOfRange,
       "\"model\"", "\"alignment\""},
      {"alignment model with NUL", [](ojson& j) { j["tabs"]["alignment"]["model"] = std::string("a\0b", 3); },
       ErrorKind::Malformed, "\"model\"", "\"alignment\""},
      {"beam 0", [](ojson& j) { j["tabs"]["alignment"]["beam"] = 0; }, ErrorKind::OutOfRange, "\"beam\"",
       "\"alignment\""},
      {"corpus statistic unknown", [](ojson& j) { j["tabs"]["corpus"]["statistic"] = "sink"; }, ErrorKind::OutOfRange,
       "\"statistic\"", "\"corpus\""},
      {"corpus sample 0", [](ojson& j) { j["tabs"]["corpus"]["sample"] = 0; }, ErrorKind::OutOfRange, "\"sample\"",
       "\"corpus\""},
      {"corpus search unknown", [](ojson& j) { j["tabs"]["corpus"]["search"] = "max"; }, ErrorKind::OutOfRange,
       "\"search\"", "\"corpus\""},
      {"beam 17", [](ojson& j) { j["tabs"]["alignment"]["beam"] = 17; }, ErrorKind::OutOfRange, "\"beam\"",
       "\"alignment\""},
      {"beam 2.5", [](ojson& j) { j["tabs"]["alignment"]["beam"] = 2.5; }, ErrorKind::Malformed, "\"beam\"",
       "\"alignment\""},
      {"beam huge", [](ojson& j) { j["tabs"]["alignment"]["beam"] = 18446744073709551615ull; }, ErrorKind::OutOfRange,
       "\"beam\"", "\"alignment\""},
      {"step negative", [](ojson& j) { j["tabs"]["alignment"]["step"] = -1; }, ErrorKind::OutOfRange, "\"step\"",
       "\"alignment\""},
      {"hypothesis 16", [](ojson& j) { j["tabs"]["alignment"]["hypothesis"] = 16; }, ErrorKind::OutOfRange,
       "\"hypothesis\"", "\"alignment\""},
      {"colormap unknown", [](ojson& j) { j["tabs"]["alignment"]["colormap"] = "jet"; }, ErrorKind::OutOfRange,
       "\"colormap\"", "\"alignment\""},
      {"text not a string", [](ojson& j) { j["tabs"]["alignment"]["text"] = ojson::array(); }, ErrorKind::Malformed,
       "\"text\"", "\"alignment\""},
      // The kinds' own keys (workbenches/alignment/<kind>/<kind>_session.cpp) refuse the session as the shared ones.
      {"pair not a string", [](ojson& j) { j["tabs"]["alignment"]["pair"] = 1; }, ErrorKind::Malformed, "\"pair\"",
       "\"alignment\""},
      {"pair too long", [](ojson& j) { j["tabs"]["alignment"]["pair"] = std::string(kMaxSessionText + 1, 'p'); },
       ErrorKind::TooLarge, "\"pair\"", "\"alignment\""},
      {"readings not a boolean", [](ojson& j) { j["tabs"]["alignment"]["readings"] = "yes"; }, ErrorKind::Malformed,
       "\"readings\"", "\"alignment\""},
      {"shaping not an object", [](ojson& j) { j["tabs"]["alignment"]["shaping"] = 2; }, ErrorKind::Malformed,
       "\"shaping\"", "\"alignment\""},
      {"shaping sharpen 0", [](ojson& j) { j["tabs"]["alignment"]["shaping"]["sharpen"] = 0; }, ErrorKind::OutOfRange,
       "\"sharpen\"", "\"alignment\""},
      {"shaping top_k negative", [](ojson& j) { j["tabs"]["alignment"]["shaping"]["top_k"] = -1; },
       ErrorKind::OutOfRange, "\"top_k\"", "\"alignment\""},
      {"shaping smooth not a boolean", [](ojson& j) { j["tabs"]["alignment"]["shaping"]["smooth"] = 1; },
       ErrorKind::Malformed, "\"smooth\"", "\"alignment\""},
      {"caption input two kinds",
       [](ojson& j) {
         j["tabs"]["caption"]["input"] = {{"scene", 1}, {"sample", "x"}};
       },
       ErrorKind::Malformed, "\"input\"", "\"caption\""},
      {"caption input empty", [](ojson& j) { j["tabs"]["caption"]["input"] = ojson::object(); }, ErrorKind::Malformed,
       "\"input\"", "\"caption\""},
      {"caption scene negative",
       [](ojson& j) {
         j["tabs"]["caption"]["input"] = {{"scene", -4}};
       },
       ErrorKind::OutOfRange, "\"scene\"", "\"caption\""},
      {"caption scene over 2^53",
       [](ojson& j) {
         j["tabs"]["caption"]["input"] = {{"scene", 1ull << 60}};
       },
       ErrorKind::OutOfRange, "\"scene\"", "\"caption\""},
      {"caption sample bad name",
       [](ojson& j) {
         j["tabs"]["caption"]["input"] = {{"sample", "../etc"}};
       },
       ErrorKind::OutOfRange, "\"sample\"", "\"caption\""},
      {"caption file empty",
       [](ojson& j) {
         j["tabs"]["caption"]["input"] = {{"file", ""}};
       },
       ErrorKind::OutOfRange, "\"file\"", "\"caption\""},
      {"caption sigma 25", [](ojson& j) { j["tabs"]["caption"]["overlay"]["sigma"] = 25; }, ErrorKind::OutOfRange,
       "\"sigma\"", "\"caption\""},
      {"caption opacity string", [](ojson& j) { j["tabs"]["caption"]["overlay"]["opacity"] = "high"; },
       ErrorKind::Malformed, "\"opacity\"", "\"caption\""},
      {"caption threshold 1", [](ojson& j) { j["tabs"]["caption"]["overlay"]["threshold"] = 1.0; },
       ErrorKind::OutOfRange, "\"threshold\"", "\"caption\""},
      {"caption style", [](ojson& j) { j["tabs"]["caption"]["overlay"]["style"] = "neon"; }, ErrorKind::OutOfRange,
       "\"style\"", "\"caption\""},
      {"caption overlay not an object", [](ojson& j) { j["tabs"]["caption"]["overlay"] = 1; }, ErrorKind::Malformed,
       "\"overlay\"", "\"caption\""},
      {"caption per_row 0", [](ojson& j) { j["tabs"]["caption"]["per_row"] = 0; }, ErrorKind::OutOfRange, "\"per_row\"",
       "\"caption\""},
      {"caption word huge", [](ojson& j) { j["tabs"]["caption"]["word"] = 1 << 21; }, ErrorKind::OutOfRange, "\"word\"",
       "\"caption\""},
      {"lab mechanism", [](ojson& j) { j["tabs"]["lab"]["request"]["mechanism"] = "telepathy"; }, ErrorKind::OutOfRange,
       "\"mechanism\"", "\"lab\""},
      {"lab score", [](ojson& j) { j["tabs"]["lab"]["request"]["score"] = "vibes"; }, ErrorKind::OutOfRange,
       "\"score\"", "\"lab\""},
      {"lab normaliser", [](ojson& j) { j["tabs"]["lab"]["request"]["normaliser"] = 1; }, ErrorKind::Malformed,
       "\"normaliser\"", "\"lab\""},
      {"lab positions", [](ojson& j) { j["tabs"]["lab"]["request"]["positions"] = "rotary"; }, ErrorKind::OutOfRange,
       "\"positions\"", "\"lab\""},
      {"lab temperature 0", [](ojson& j) { j["tabs"]["lab"]["request"]["temperature"] = 0; }, ErrorKind::OutOfRange,
       "\"temperature\"", "\"lab\""},
      {"lab temperature 1e300", [](ojson& j) { j["tabs"]["lab"]["request"]["temperature"] = 1e300; },
       ErrorKind::OutOfRange, "\"temperature\"", "\"lab\""},
      {"lab window 1e20", [](ojson& j) { j["tabs"]["lab"]["request"]["window"] = 1e20; }, ErrorKind::Malformed,
       "\"window\"", "\"lab\""},
      {"lab heads 17", [](ojson& j) { j["tabs"]["lab"]["request"]["heads"] = 17; }, ErrorKind::OutOfRange, "\"heads\"",
       "\"lab\""},
      {"lab hops 0", [](ojson& j) { j["tabs"]["lab"]["request"]["hops"] = 0; }, ErrorKind::OutOfRange, "\"hops\"",
       "\"lab\""},
      {"lab classes 65", [](ojson& j) { j["tabs"]["lab"]["request"]["classes"] = 65; }, ErrorKind::OutOfRange,
       "\"classes\"", "\"lab\""},
      {"lab buckets 0", [](ojson& j) { j["tabs"]["lab"]["request"]["buckets"] = 0; }, ErrorKind::OutOfRange,
       "\"buckets\"", "\"lab\""},
      {"lab causal", [](ojson& j) { j["tabs"]["lab"]["request"]["causal"] = 1; }, ErrorKind::Malformed, "\"causal\"",
       "\"lab\""},
      {"lab seed negative", [](ojson& j) { j["tabs"]["lab"]["request"]["seed"] = -1; }, ErrorKind::OutOfRange,
       "\"seed\"", "\"lab\""},
      {"lab dim 2", [](ojson& j) { j["tabs"]["lab"]["request"]["dim"] = 2; }, ErrorKind::OutOfRange, "\"dim\"",
       "\"lab\""},
      {"lab sigma -2", [](ojson& j) { j["tabs"]["lab"]["request"]["sigma"] = -2; }, ErrorKind::OutOfRange, "\"sigma\"",
       "\"lab\""},
      {"lab query type", [](ojson& j) { j["tabs"]["lab"]["request"]["query"] = nullptr; }, ErrorKind::Malformed,
       "\"query\"", "\"lab\""},
      {"lab request not an object", [](ojson& j) { j["tabs"]["lab"]["request"] = "x"; }, ErrorKind::Malformed,
       "\"request\"", "\"lab\""},
      {"lab unit_range", [](ojson& j) { j["tabs"]["lab"]["unit_range"] = "yes"; }, ErrorKind::Malformed,
       "\"unit_range\"", "\"lab\""},
      {"lab map negative", [](ojson& j) { j["tabs"]["lab"]["map"] = -1; }, ErrorKind::OutOfRange, "\"map\"", "\"lab\""},
      {"glimpse image both",
       [](ojson& j) {
         j["tabs"]["glimpse"]["image"] = {{"sample", "a"}, {"file", "b"}};
       },
       ErrorKind::Malformed, "\"image\"", "\"glimpse\""},
      {"glimpse image file number",
       [](ojson& j) {
         j["tabs"]["glimpse"]["image"] = {{"file", 3}};
       },
       ErrorKind::Malformed, "\"file\"", "\"glimpse\""},
      {"glimpse width negative", [](ojson& j) { j["tabs"]["glimpse"]["image_width"] = -640; }, ErrorKind::OutOfRange,
       "\"image_width\"", "\"glimpse\""},
      {"glimpse write", [](ojson& j) { j["tabs"]["glimpse"]["write"] = 0; }, ErrorKind::Malformed, "\"write\"",
       "\"glimpse\""},
      {"transformer view", [](ojson& j) { j["tabs"]["transformer"]["view"] = "3d"; }, ErrorKind::OutOfRange, "\"view\"",
       "\"transformer\""},
      {"transformer matrix", [](ojson& j) { j["tabs"]["transformer"]["matrix"] = 0; }, ErrorKind::Malformed,
       "\"matrix\"", "\"transformer\""},
      {"transformer fusion", [](ojson& j) { j["tabs"]["transformer"]["rollout"]["fusion"] = "median"; },
       ErrorKind::OutOfRange, "\"fusion\"", "\"transformer\""},
      {"transformer discard 1", [](ojson& j) { j["tabs"]["transformer"]["rollout"]["discard_ratio"] = 1.0; },
       ErrorKind::OutOfRange, "\"discard_ratio\"", "\"transformer\""},
      {"transformer residual -0.1", [](ojson& j) { j["tabs"]["transformer"]["rollout"]["residual"] = -0.1; },
       ErrorKind::OutOfRange, "\"residual\"", "\"transformer\""},
      {"transformer alpha 2", [](ojson& j) { j["tabs"]["transformer"]["overlay"]["alpha"] = 2; }, ErrorKind::OutOfRange,
       "\"alpha\"", "\"transformer\""},
      {"transformer overlay source", [](ojson& j) { j["tabs"]["transformer"]["overlay"]["source"] = "gradcam"; },
       ErrorKind::OutOfRange, "\"source\"", "\"residual\""},
      {"transformer threshold 0.6", [](ojson& j) { j["tabs"]["transformer"]["line_threshold"] = 0.6; },
       ErrorKind::OutOfRange, "\"line_threshold\"", "\"transformer\""},
      {"transformer top_p 0", [](ojson& j) { j["tabs"]["transformer"]["generate"]["top_p"] = 0.0; },
       ErrorKind::OutOfRange, "\"top_p\"", "\"generate\""},
      {"transformer new tokens", [](ojson& j) { j["tabs"]["transformer"]["generate"]["new_tokens"] = 0; },
       ErrorKind::OutOfRange, "\"new_tokens\"", "\"generate\""},
      {"transformer layer", [](ojson& j) { j["tabs"]["transformer"]["layer"] = -3; }, ErrorKind::OutOfRange,
       "\"layer\"", "\"transformer\""},
      {"transformer head", [](ojson& j) { j["tabs"]["transformer"]["head"] = true; }, ErrorKind::Malformed, "\"head\"",
       "\"transformer\""},
      {"transformer pair", [](ojson& j) { j["tabs"]["transformer"]["pair"] = 1; }, ErrorKind::Malformed, "\"pair\"",
       "\"transformer\""},
      {"transformer image sample",
       [](ojson& j) {
         j["tabs"]["transformer"]["image"] = {{"sample", "A B"}};
       },
       ErrorKind::OutOfRange, "\"sample\"", "\"transformer\""},
      {"transformer ablation mode", [](ojson& j) { j["tabs"]["transformer"]["intervene"]["ablation"] = "half"; },
       ErrorKind::OutOfRange, "\"ablation\"", "\"intervene\""},
      {"transformer compare", [](ojson& j) { j["tabs"]["transformer"]["intervene"]["compare"] = "yes"; },
       ErrorKind::Malformed, "\"compare\"", "\"intervene\""},
      {"transformer compare show", [](ojson& j) { j["tabs"]["transformer"]["intervene"]["compare_show"] = 2; },
       ErrorKind::Malformed, "\"compare_show\"", "\"intervene\""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    const std::string text = edited(c.edit);
    const Error e = refusal(text, c.kind, c.at, c.after);
    EXPECT_FALSE(e.reason.empty());
  }
}

// The glimpse settings are read by glimpse_settings_from_json: its refusal is passed on, pointing at the
// section's "settings" key and naming the field inside.
TEST(Session, RefusesBadGlimpseSettingsThroughTheirOwnReader) {
  for (const auto& [edit, field] : std::vector<std::pair<std::function<void(ojson&)>, std::string>>{
           {[](ojson& j) { j["tabs"]["glimpse"]["settings"]["version"] = 9; }, "version"},
           {[](ojson& j) { j["tabs"]["glimpse"]["settings"]["stn"]["out_w"] = 0; }, "out_w"},
           {[](ojson& j) { j["tabs"]["glimpse"]["settings"]["stn"]["family"] = "fisheye"; }, "family"}}) {
    const std::string text = edited(edit);
    const auto r = read_session(text, "s");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().offset, std::int64_t(text.find("\"settings\"", text.find("\"glimpse\""))));
    EXPECT_NE(r.error().reason.find("tabs.glimpse.settings"), std::string::npos) << r.error().message();
    EXPECT_NE(r.error().reason.find(field), std::string::npos) << r.error().message();
  }
}

// The engine's frame knows no tab: any owner's sections are read by their names, the "tab" is checked against
// them, and a section it was not told of is a warning.
TEST(SessionDocument, ReadsTheFrameOfSectionsItIsToldOf) {
  const std::string text =
      R"({"format": "attnscope.session", "version": 1, "tab": "notes", "tabs": {"notes": {"n": 3}, "x": {}}})";
  constexpr std::array names = {io::SessionSectionName{"notes", "the Notes tab"},
                                io::SessionSectionName{"sketch", "the Sketch tab"}};
  const auto doc = io::read_session_document(text, "f", names);
  ASSERT_TRUE(doc) << doc.error().message();
  EXPECT_EQ(doc->tab(), "notes");
  std::vector<Error> warnings;
  const auto notes = doc->section(names[0], warnings);
  ASSERT_TRUE(notes && *notes);
  io::SessionMembers m(doc->reader(), **notes, "tabs.notes");
  int n = 0;
  ASSERT_TRUE(m.whole("n", 0, 9, n));
  EXPECT_EQ(n, 3);
  const auto sketch = doc->section(names[1], warnings);
  ASSERT_TRUE(sketch);
  EXPECT_EQ(*sketch, nullptr);
  doc->warn_unknown(names, warnings);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].reason.find("the Sketch tab starts with its defaults"), std::string::npos);
  EXPECT_NE(warnings[1].reason.find("unknown section \"x\""), std::string::npos);
  const auto other = io::read_session_document(text, "f", std::span(names).subspan(1));
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().kind, ErrorKind::OutOfRange);
  EXPECT_NE(other.error().reason.find("expected sketch"), std::string::npos) << other.error().message();
}

}  // namespace
}  // namespace attn::ui
