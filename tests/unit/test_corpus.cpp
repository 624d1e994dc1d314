// The corpus run's parts (issue 46): shard specs, the corpus file reader (text and JSON Lines, empty and unreadable
// lines), the per-head statistics and top pairs against values worked out by hand, and the SQLite database: resume,
// refusals, merge, and a writer killed mid-run keeping every committed input.
#include "attn/analysis/corpus.h"
#include "attn/io/corpus_db.h"

#include <gtest/gtest.h>

#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace attn::analysis {
namespace corpus_tests {

namespace fs = std::filesystem;

class CorpusFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("attn-corpus-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const std::string& content) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }
  fs::path dir_;
};

TEST(CorpusShard, ParsesAndRefuses) {
  auto s = parse_shard("2/8");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->index, 2);
  EXPECT_EQ(s->count, 8);
  EXPECT_TRUE(s->takes(10));
  EXPECT_FALSE(s->takes(11));
  EXPECT_EQ(s->to_string(), "2/8");
  for (const char* bad : {"3/2", "0/0", "2/2", "-1/4", "1/-4", "a/b", "1/", "/4", "1", "1/4x", ""}) {
    SCOPED_TRACE(bad);
    const auto r = parse_shard(bad);
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().reason.find(std::string("--shard ") + bad), std::string::npos) << r.error().reason;
  }
  EXPECT_EQ(parse_shard("3/2").error().kind, ErrorKind::OutOfRange);
  EXPECT_EQ(parse_shard("x/2").error().kind, ErrorKind::Malformed);
}

TEST_F(CorpusFiles, TextLinesAreInputsNumberedInTheWholeFile) {
  const fs::path p = write("c.txt", "first\r\n\n   \nfourth line\nfifth");
  for (const auto& [shard, ids] : std::vector<std::pair<Shard, std::vector<std::int64_t>>>{
           {Shard{0, 1}, {0, 3, 4}}, {Shard{0, 2}, {0, 4}}, {Shard{1, 2}, {3}}}) {
    SCOPED_TRACE(shard.to_string());
    auto reader = CorpusReader::open(p);
    ASSERT_TRUE(reader.has_value()) << reader.error().message();
    EXPECT_FALSE(reader->json_lines());
    std::vector<SkippedLine> skipped;
    std::vector<std::int64_t> got;
    std::vector<std::string> texts;
    while (auto in = reader->next(shard, skipped)) {
      got.push_back(in->id);
      texts.push_back(in->text);
    }
    EXPECT_FALSE(reader->error().has_value());
    EXPECT_EQ(got, ids);
    if (shard.count == 1) {
      EXPECT_EQ(texts.front(), "first") << "the CR of CRLF is not part of the text";
      ASSERT_EQ(skipped.size(), 2u);
      EXPECT_EQ(skipped[0].id, 1);
      EXPECT_TRUE(skipped[1].empty);
    } else {
      // Each shard counts the empty lines it owns: 1 is shard 1's, 2 shard 0's.
      ASSERT_EQ(skipped.size(), 1u);
      EXPECT_EQ(skipped[0].id, shard.index == 0 ? 2 : 1);
    }
    EXPECT_EQ(reader->bytes_read(), reader->size());
  }
}

TEST_F(CorpusFiles, JsonLinesSayWhichLineIsUnreadableAndWhy) {
  const fs::path p = write("c.jsonl",
                           "{\"text\": \"a cat\"}\n"
                           "{\"text\": \"premise\", \"pair\": \"hypothesis\"}\n"
                           "{\"text\": 3}\n"
                           "not json\n"
                           "[1, 2]\n"
                           "{\"pair\": \"x\"}\n"
                           "\n"
                           "{\"text\": \"\"}\n"
                           "{\"text\": \"ok\", \"pair\": 1}\n"
                           "{\"text\": \"last\"}");
  auto reader = CorpusReader::open(p);
  ASSERT_TRUE(reader.has_value());
  EXPECT_TRUE(reader->json_lines());
  std::vector<SkippedLine> skipped;
  std::vector<CorpusInput> inputs;
  while (auto in = reader->next(Shard{}, skipped)) inputs.push_back(*in);
  ASSERT_EQ(inputs.size(), 3u);
  EXPECT_EQ(inputs[1].text, "premise");
  EXPECT_EQ(inputs[1].pair, "hypothesis");
  EXPECT_EQ(inputs[2].id, 9);
  const std::vector<std::pair<std::int64_t, std::string>> expected{{2, "\"text\" is not a string"},
                                                                   {3, "not JSON"},
                                                                   {4, "not a JSON object ({\"text\": ...})"},
                                                                   {5, "no \"text\""},
                                                                   {6, "empty"},
                                                                   {7, "\"text\" is empty"},
                                                                   {8, "\"pair\" is not a string"}};
  ASSERT_EQ(skipped.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(skipped[i].id, expected[i].first);
    EXPECT_EQ(skipped[i].reason, expected[i].second);
    EXPECT_EQ(skipped[i].empty, expected[i].first == 6);
  }
}

TEST_F(CorpusFiles, RefusesWhatIsNotAFile) {
  EXPECT_EQ(CorpusReader::open(dir_ / "absent.txt").error().kind, ErrorKind::Io);
  EXPECT_EQ(CorpusReader::open(dir_).error().kind, ErrorKind::Io);
}

TEST_F(CorpusFiles, SaysWhyAFileIsNotACorpusDatabase) {
  // A text file and a damaged database are not SQLite; an SQLite file of something else has no meta table.
  auto text = attn::io::CorpusDb::open_read(write("text.sqlite", std::string(4096, 'x')));
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().kind, ErrorKind::Malformed);
  EXPECT_NE(text.error().message().find("not an SQLite database"), std::string::npos) << text.error().message();
  const fs::path other = dir_ / "other.sqlite";
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(other.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (1);", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  auto some = attn::io::CorpusDb::open_read(other);
  ASSERT_FALSE(some);
  EXPECT_NE(some.error().message().find("no meta table"), std::string::npos) << some.error().message();
}

// A causal 4-token layer of one head with hand-picked rows, ids {7, 8, 7, 8}: token 2 repeats token 0, token 3
// repeats token 1.
LayeredTrace causal_trace() {
  LayeredTrace t;
  t.tokens = {"a", "b", "a", "b"};
  LayerAttention layer;
  layer.stage = Stage::Decoder;
  layer.layer = 0;
  layer.maps = HeadStack(1, 4, 4);
  Matrix m(4, 4);
  m << 1, 0, 0, 0, 0.5f, 0.5f, 0, 0, 0.2f, 0.6f, 0.2f, 0, 0.1f, 0.3f, 0.4f, 0.2f;
  layer.maps.set_head(0, m);
  t.layers.push_back(std::move(layer));
  return t;
}

TEST(CorpusStatistics, AreTheDefinitionsWorkedByHand) {
  const LayeredTrace t = causal_trace();
  const auto rows = corpus_head_rows(t, {7, 8, 7, 8});
  ASSERT_EQ(rows.size(), 1u);
  const CorpusHeadRow& r = rows[0];
  auto h = [](std::initializer_list<double> ps) {
    double s = 0;
    for (double p : ps) s -= p > 0 ? p * std::log(p) : 0;
    return s;
  };
  const double entropy = (h({1}) + h({0.5, 0.5}) + h({0.2, 0.6, 0.2}) + h({0.1, 0.3, 0.4, 0.2})) / 4;
  EXPECT_NEAR(r.entropy, entropy, 1e-6);
  // sum_j p |i - j|: row 1: 0.5; row 2: 0.4 + 0.6 = 1.0; row 3: 0.3 + 0.6 + 0.4 = 1.3.
  EXPECT_NEAR(r.mean_distance, (0 + 0.5 + 1.0 + 1.3) / 4, 1e-6);
  EXPECT_NEAR(r.first_token_mass, (1 + 0.5 + 0.2 + 0.1) / 4, 1e-6);
  EXPECT_FLOAT_EQ(r.max_weight, 1.0f);
  EXPECT_NEAR(r.previous_token, (0.5 + 0.6 + 0.4) / 3, 1e-6);
  // Row 2 repeats 0 (mass 0.2 there; after it, position 1, 0.6); row 3 repeats 1 (0.3; position 2, 0.4).
  ASSERT_TRUE(r.duplicate_token && r.induction);
  EXPECT_NEAR(*r.duplicate_token, (0.2 + 0.3) / 2, 1e-6);
  EXPECT_NEAR(*r.induction, (0.6 + 0.4) / 2, 1e-6);
  const auto unique = corpus_head_rows(t, {1, 2, 3, 4});
  EXPECT_FALSE(unique[0].duplicate_token.has_value()) << "no repeated token: no score, not 0";
  EXPECT_FALSE(unique[0].induction.has_value());
}

TEST(CorpusStatistics, TopPairsAreTheStrongestWhereTheQueryHadAChoice) {
  const LayeredTrace t = causal_trace();
  const auto pairs = corpus_top_pairs(t, true, 3);
  ASSERT_EQ(pairs.size(), 3u);
  // Row 0's 1.0 is left out (one key to choose from); then 0.6 (2 -> 1), 0.5 (1 -> 0), 0.5 (1 -> 1).
  EXPECT_EQ(pairs[0].query, 2);
  EXPECT_EQ(pairs[0].key, 1);
  EXPECT_FLOAT_EQ(pairs[0].weight, 0.6f);
  EXPECT_EQ(pairs[1].query, 1);
  EXPECT_EQ(pairs[1].key, 0);
  EXPECT_EQ(pairs[2].query, 1);
  EXPECT_EQ(pairs[2].key, 1);
  for (int r = 0; r < 3; ++r) EXPECT_EQ(pairs[static_cast<std::size_t>(r)].rank, r);
  EXPECT_EQ(corpus_top_pairs(t, false, 1).front().weight, 1.0f) << "an encoder's row 0 has a choice";
  EXPECT_TRUE(corpus_top_pairs(t, true, 0).empty());
}

io::CorpusMeta meta_of(const std::string& shard, const std::string& model = "m") {
  io::CorpusMeta m;
  m.model = model;
  m.model_description = "GPT-2 · 1 layer";
  m.model_fingerprint = "1 file, 00";
  m.input = "c.txt";
  m.input_fingerprint = "1 file, 01";
  m.shard = shard;
  return m;
}

CorpusRecord record_of(std::int64_t id) {
  CorpusRecord r;
  r.id = id;
  r.text = "input " + std::to_string(id);
  r.tokens = 4;
  r.token_text = {"a", "b", "a", "b"};
  const LayeredTrace t = causal_trace();
  r.heads = corpus_head_rows(t, {7, 8, 7, 8});
  r.pairs = corpus_top_pairs(t, true, 2);
  return r;
}

// Rows of `sql` on `path` as text, one string per row: what two databases hold, compared row for row.
std::vector<std::string> rows_of(const fs::path& path, const char* sql) {
  sqlite3* db = nullptr;
  std::vector<std::string> out;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) == SQLITE_OK) {
      while (sqlite3_step(s) == SQLITE_ROW) {
        std::string row;
        for (int c = 0; c < sqlite3_column_count(s); ++c) {
          const auto* v = sqlite3_column_text(s, c);
          row += (v ? reinterpret_cast<const char*>(v) : "NULL") + std::string("|");
        }
        out.push_back(row);
      }
    }
    sqlite3_finalize(s);
  }
  sqlite3_close(db);
  return out;
}

TEST_F(CorpusFiles, DatabaseResumesAndRefusesAnotherRun) {
  const fs::path p = dir_ / "s.sqlite";
  {
    auto db = io::CorpusDb::open_for_run(p, meta_of("0/1"));
    ASSERT_TRUE(db.has_value()) << db.error().message();
    ASSERT_TRUE(db->add(record_of(0)).has_value());
    ASSERT_TRUE(db->add(SkippedLine{1, true, "empty"}).has_value());
    ASSERT_TRUE(db->close().has_value());
  }
  EXPECT_FALSE(fs::exists(p.string() + "-wal")) << "closed: one file";
  auto db = io::CorpusDb::open_for_run(p, meta_of("0/1"));
  ASSERT_TRUE(db.has_value()) << db.error().message();
  EXPECT_TRUE(*db->has(0));
  EXPECT_TRUE(*db->has(1));
  EXPECT_FALSE(*db->has(2));
  EXPECT_FALSE(db->add(record_of(0)).has_value()) << "an id twice";
  ASSERT_TRUE(db->add(record_of(2)).has_value()) << "the failed add rolled back";
  const auto counts = db->counts();
  EXPECT_EQ(counts->inputs, 2);
  EXPECT_EQ(counts->empty, 1);
  ASSERT_TRUE(db->close().has_value());
  const auto other = io::CorpusDb::open_for_run(p, meta_of("0/1", "another-model"));
  ASSERT_FALSE(other.has_value());
  EXPECT_EQ(other.error().kind, ErrorKind::Mismatch);
  EXPECT_NE(other.error().reason.find("model 'another-model' against 'm'"), std::string::npos) << other.error().reason;
  const fs::path junk = write("junk.sqlite", "not a database at all, but long enough to have a header........");
  EXPECT_FALSE(io::CorpusDb::open_for_run(junk, meta_of("0/1")).has_value());
  EXPECT_FALSE(io::CorpusDb::open_read(dir_ / "absent.sqlite").has_value());
}

TEST_F(CorpusFiles, ShardsMergeToTheUnsharded) {
  const fs::path whole = dir_ / "whole.sqlite", a = dir_ / "a.sqlite", b = dir_ / "b.sqlite", out = dir_ / "m.sqlite";
  {
    auto w = io::CorpusDb::open_for_run(whole, meta_of("0/1"));
    auto s0 = io::CorpusDb::open_for_run(a, meta_of("0/2"));
    auto s1 = io::CorpusDb::open_for_run(b, meta_of("1/2"));
    ASSERT_TRUE(w && s0 && s1);
    for (std::int64_t id = 0; id < 7; ++id) {
      ASSERT_TRUE(w->add(record_of(id)).has_value());
      ASSERT_TRUE((id % 2 ? *s1 : *s0).add(record_of(id)).has_value());
    }
  }
  auto merged = io::merge_corpus(out, {b, a});
  ASSERT_TRUE(merged.has_value()) << merged.error().message();
  EXPECT_EQ(merged->files, 2);
  EXPECT_EQ(merged->counts.inputs, 7);
  for (const char* sql : {"SELECT * FROM inputs ORDER BY id", "SELECT * FROM head_stats ORDER BY 1, 2, 3",
                          "SELECT * FROM top_pairs ORDER BY 1, 2, 3, 4", "SELECT * FROM skipped ORDER BY id"}) {
    SCOPED_TRACE(sql);
    EXPECT_EQ(rows_of(out, sql), rows_of(whole, sql));
  }
  EXPECT_EQ(rows_of(out, "SELECT value FROM meta WHERE key = 'shard'").front(), "merged from 2 files|");
  // Refusals leave the output as it was.
  const auto overlap = io::merge_corpus(dir_ / "o.sqlite", {a, whole});
  ASSERT_FALSE(overlap.has_value());
  EXPECT_NE(overlap.error().reason.find("holds line 0, which an earlier shard holds too"), std::string::npos)
      << overlap.error().reason;
  EXPECT_FALSE(fs::exists(dir_ / "o.sqlite"));
  {
    auto c = io::CorpusDb::open_for_run(dir_ / "c.sqlite", meta_of("1/2", "another-model"));
    ASSERT_TRUE(c.has_value());
  }
  const auto models = io::merge_corpus(dir_ / "o.sqlite", {a, dir_ / "c.sqlite"});
  ASSERT_FALSE(models.has_value());
  EXPECT_EQ(models.error().kind, ErrorKind::Mismatch);
  EXPECT_NE(models.error().reason.find("model 'another-model' against 'm'"), std::string::npos);
  EXPECT_FALSE(io::merge_corpus(a, {a, b}).has_value()) << "the output among the shards";
  EXPECT_FALSE(io::merge_corpus(out, {}).has_value());
  EXPECT_FALSE(fs::exists(dir_ / "o.sqlite"));
  EXPECT_EQ(rows_of(out, "SELECT count(*) FROM inputs").front(), "7|") << "a refused merge touched nothing";
}

// A record whose one head has entropy = id and, for even ids only, an induction score of id / 10.
CorpusRecord varied(std::int64_t id) {
  CorpusRecord r = record_of(id);
  r.heads[0].entropy = static_cast<float>(id);
  r.heads[0].induction = id % 2 ? std::nullopt : std::optional<float>(static_cast<float>(id) / 10.0f);
  return r;
}

void expect_summary(io::CorpusDb& db, const char* when) {
  SCOPED_TRACE(when);
  const auto entropy = db.head_summary("entropy");
  ASSERT_TRUE(entropy.has_value()) << entropy.error().message();
  ASSERT_EQ(entropy->size(), 1u);
  const io::HeadSummary& e = entropy->front();
  EXPECT_EQ(e.n, 5);
  EXPECT_DOUBLE_EQ(e.mean, 2.0);  // ids 0..4
  EXPECT_NEAR(e.sd, std::sqrt(2.0), 1e-12);
  EXPECT_EQ(e.min, 0.0);
  EXPECT_EQ(e.max, 4.0);
  const auto induction = db.head_summary("induction");
  ASSERT_TRUE(induction.has_value());
  EXPECT_EQ(induction->front().n, 3) << "NULLs are not inputs of the mean";
  EXPECT_NEAR(induction->front().mean, 0.2, 1e-7);
}

TEST_F(CorpusFiles, HeadSummariesAreTheInputsFigures) {
  const fs::path p = dir_ / "s.sqlite";
  auto db = io::CorpusDb::open_for_run(p, meta_of("0/1"));
  ASSERT_TRUE(db.has_value());
  for (std::int64_t id = 0; id < 5; ++id) ASSERT_TRUE(db->add(varied(id)).has_value());
  expect_summary(*db, "before close: computed from head_stats");
  ASSERT_TRUE(db->close().has_value());
  EXPECT_EQ(rows_of(p, "SELECT count(*) FROM head_sums").front(), "7|") << "a row per statistic of the one head";
  // The viewer's indexes, one head's values read from one of them alone.
  EXPECT_EQ(rows_of(p, "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name"),
            (std::vector<std::string>{"head_stats_of_head|", "top_pairs_strongest|"}));
  const auto plan = rows_of(p,
                            "EXPLAIN QUERY PLAN SELECT entropy FROM head_stats WHERE layer = 0 AND head = 0 AND "
                            "entropy IS NOT NULL ORDER BY input_id");
  EXPECT_NE(plan.back().find("COVERING INDEX head_stats_of_head"), std::string::npos) << plan.back();
  auto read = io::CorpusDb::open_read(p);
  ASSERT_TRUE(read.has_value());
  expect_summary(*read, "after close: head_sums");
  const auto values = read->head_values(0, 0, "entropy");
  ASSERT_TRUE(values.has_value());
  EXPECT_EQ(*values, (std::vector<float>{0, 1, 2, 3, 4}));
  EXPECT_EQ(read->head_values(0, 0, "induction")->size(), 3u);
  EXPECT_TRUE(read->head_values(0, 1, "entropy")->empty()) << "no such head";
  const auto unknown = read->head_summary("sink");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().kind, ErrorKind::OutOfRange);
  EXPECT_NE(unknown.error().reason.find("first_token_mass"), std::string::npos) << "names the statistics there are";
  EXPECT_FALSE(read->head_values(0, 0, "entropy; DROP TABLE inputs").has_value());
  // Two shards merged: the same figures.
  const fs::path a = dir_ / "a.sqlite", b = dir_ / "b.sqlite", out = dir_ / "m.sqlite";
  {
    auto s0 = io::CorpusDb::open_for_run(a, meta_of("0/2"));
    auto s1 = io::CorpusDb::open_for_run(b, meta_of("1/2"));
    for (std::int64_t id = 0; id < 5; ++id) ASSERT_TRUE((id % 2 ? *s1 : *s0).add(varied(id)).has_value());
  }
  ASSERT_TRUE(io::merge_corpus(out, {a, b}).has_value());
  auto merged = io::CorpusDb::open_read(out);
  ASSERT_TRUE(merged.has_value());
  expect_summary(*merged, "merged");
}

// Input id of head (0, 0): entropy 10 - id, max_weight 1 (a causal model's row 0), first_token_mass (id % 3) / 3,
// and one top pair whose query token is "▁She" for even ids and "he" for odd ones, of weight id / 10.
CorpusRecord searchable(std::int64_t id) {
  CorpusRecord r;
  r.id = id;
  r.text = "text " + std::to_string(id);
  r.tokens = 3;
  r.token_text = {"<s>", id % 2 ? "he" : "\u2581She", "\u2581went"};
  CorpusHeadRow row;
  row.entropy = 10.0f - static_cast<float>(id);
  row.max_weight = 1.0f;
  row.first_token_mass = static_cast<float>(id % 3) / 3.0f;
  r.heads = {row};
  r.pairs = {CorpusPair{0, 0, 0, 1, 2, static_cast<float>(id) / 10.0f}};
  return r;
}

// A viewer's search stops when its flag is set (Cancel, or a newer search): answered as Cancelled, and the database
// answers again once the flag is down.
TEST_F(CorpusFiles, ASearchStopsWhenItsFlagIsSet) {
  const fs::path p = dir_ / "c.sqlite";
  {
    auto db = io::CorpusDb::open_for_run(p, meta_of("0/1"));
    ASSERT_TRUE(db.has_value());
    for (std::int64_t id = 0; id < 600; ++id) ASSERT_TRUE(db->add(searchable(id)).has_value());
    ASSERT_TRUE(db->close().has_value());
  }
  auto db = io::CorpusDb::open_read(p);
  ASSERT_TRUE(db.has_value());
  std::atomic<bool> stop{false};
  db->interrupt_when(&stop);
  EXPECT_EQ(db->pairs_from_token(0, 0, "she", 1000)->size(), 300u);
  stop = true;
  const auto token = db->pairs_from_token(0, 0, "she", 1000);
  ASSERT_FALSE(token.has_value()) << "600 rows scanned: past the handler's step count";
  EXPECT_EQ(token.error().kind, ErrorKind::Cancelled) << token.error().message();
  EXPECT_NE(token.error().message().find("cancelled"), std::string::npos) << token.error().message();
  const auto entropy = db->strongest_inputs(0, 0, io::CorpusSearch::LowEntropy, 1000);
  ASSERT_FALSE(entropy.has_value());
  EXPECT_EQ(entropy.error().kind, ErrorKind::Cancelled);
  stop = false;
  EXPECT_EQ(db->pairs_from_token(0, 0, "she", 1000)->size(), 300u) << "answers again once the flag is down";
  stop = true;
  db->interrupt_when(nullptr);
  EXPECT_EQ(db->pairs_from_token(0, 0, "she", 1000)->size(), 300u) << "no flag: never stopped";
}

TEST_F(CorpusFiles, SearchFindsWhereAHeadIsStrongest) {
  const fs::path p = dir_ / "s.sqlite";
  {
    auto db = io::CorpusDb::open_for_run(p, meta_of("0/1"));
    ASSERT_TRUE(db.has_value());
    for (std::int64_t id = 0; id < 6; ++id) ASSERT_TRUE(db->add(searchable(id)).has_value());
    ASSERT_TRUE(db->close().has_value());
  }
  auto db = io::CorpusDb::open_read(p);
  ASSERT_TRUE(db.has_value());
  const auto weight = db->strongest_inputs(0, 0, io::CorpusSearch::MaxWeight, 2);
  ASSERT_TRUE(weight.has_value()) << weight.error().message();
  ASSERT_EQ(weight->size(), 2u);
  EXPECT_EQ((*weight)[0].input, 5);
  EXPECT_EQ((*weight)[1].input, 4);
  EXPECT_EQ((*weight)[0].text, "text 5");
  EXPECT_NEAR((*weight)[0].value, 0.5, 1e-6) << "the strongest pair's weight, not max_weight";
  EXPECT_EQ((*weight)[0].query, 1);
  EXPECT_EQ((*weight)[0].key, 2);
  EXPECT_EQ((*weight)[0].query_token, "he");
  EXPECT_EQ((*weight)[0].key_token, "\u2581went");
  const auto entropy = db->strongest_inputs(0, 0, io::CorpusSearch::LowEntropy, 10);
  ASSERT_TRUE(entropy.has_value());
  ASSERT_EQ(entropy->size(), 6u);
  EXPECT_EQ(entropy->front().input, 5) << "lowest entropy first";
  EXPECT_NEAR(entropy->front().value, 5.0, 1e-6);
  const auto sink = db->strongest_inputs(0, 0, io::CorpusSearch::SinkMass, 10);
  ASSERT_TRUE(sink.has_value());
  EXPECT_EQ(sink->front().input, 2) << "first_token_mass 2/3 at ids 2 and 5, the earlier first";
  EXPECT_EQ((*sink)[1].input, 5);
  EXPECT_TRUE(db->strongest_inputs(1, 0, io::CorpusSearch::MaxWeight, 5)->empty()) << "no such head";

  const auto she = db->pairs_from_token(0, 0, "she", 10);
  ASSERT_TRUE(she.has_value()) << she.error().message();
  ASSERT_EQ(she->size(), 3u) << "ids 0, 2, 4: the word-start mark and the case do not count";
  EXPECT_EQ(she->front().input, 4) << "strongest first";
  EXPECT_EQ(she->front().query_token, "\u2581She");
  EXPECT_EQ(db->pairs_from_token(0, 0, " He", 10)->size(), 3u);
  EXPECT_TRUE(db->pairs_from_token(0, 0, "sh", 10)->empty()) << "whole tokens, not prefixes";
  EXPECT_TRUE(db->pairs_from_token(0, 0, "'; DROP TABLE inputs; --", 10)->empty());

  const auto one = db->input(3);
  ASSERT_TRUE(one.has_value() && one->has_value());
  EXPECT_EQ((*one)->text, "text 3");
  EXPECT_FALSE(db->input(99)->has_value());
  const auto sample = db->sample_inputs(3);
  ASSERT_TRUE(sample.has_value());
  ASSERT_EQ(sample->size(), 3u);
  EXPECT_EQ((*sample)[0].id, 0);
  EXPECT_EQ((*sample)[1].id, 2);
  EXPECT_EQ((*sample)[2].id, 4);
  EXPECT_EQ(db->sample_inputs(50)->size(), 6u) << "every input when the sample is bigger";
}

// A writer killed without closing (SIGKILL: no handler, no clean-up) keeps every input it committed; resuming a
// closed database, it leaves no summary a viewer would take for current.
TEST_F(CorpusFiles, AKilledWriterKeepsWhatItCommitted) {
  const fs::path p = dir_ / "k.sqlite";
  {
    auto first = io::CorpusDb::open_for_run(p, meta_of("0/1"));
    ASSERT_TRUE(first.has_value());
    ASSERT_TRUE(first->add(record_of(0)).has_value());
    ASSERT_TRUE(first->add(SkippedLine{1, true, "empty"}).has_value());
    ASSERT_TRUE(first->close().has_value());
  }
  EXPECT_EQ(rows_of(p, "SELECT value FROM meta WHERE key = 'summary_counts'").front(), "1 1 0 0|")
      << "closed: the counts head_sums covers";
  std::vector<CorpusRecord> records;  // made before the fork: the child runs no OpenMP region
  for (std::int64_t id = 2; id < 6; ++id) records.push_back(record_of(id));
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(ready[0]);
    auto db = io::CorpusDb::open_for_run(p, meta_of("0/1"));
    if (!db) ::_exit(2);
    for (const auto& r : records) {
      if (!db->add(r)) ::_exit(3);
    }
    const char done = 1;
    if (::write(ready[1], &done, 1) != 1) ::_exit(4);
    for (;;) ::pause();  // killed here, the database open
  }
  ::close(ready[1]);
  char done = 0;
  ASSERT_EQ(::read(ready[0], &done, 1), 1);
  ::close(ready[0]);
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_TRUE(rows_of(p, "SELECT value FROM meta WHERE key = 'summary_counts'").empty()) << "deleted on resuming";
  auto read = io::CorpusDb::open_read(p);
  ASSERT_TRUE(read.has_value()) << read.error().message();
  EXPECT_EQ(read->counts()->inputs, 5) << "counted, not the closed run's 1";
  EXPECT_EQ(read->counts()->empty, 1);
  EXPECT_EQ(read->head_summary("entropy")->front().n, 5) << "from head_stats, not the stale head_sums";
  read->close();
  auto db = io::CorpusDb::open_for_run(p, meta_of("0/1"));
  ASSERT_TRUE(db.has_value()) << db.error().message();
  EXPECT_EQ(db->counts()->inputs, 5);
  EXPECT_EQ(rows_of(p, "SELECT count(*) FROM head_stats").front(), "5|");
}

}  // namespace corpus_tests
}  // namespace attn::analysis
