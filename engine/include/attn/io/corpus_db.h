// A corpus run's database (issue 46): one SQLite file per shard, each input committed as it is done (a killed job
// loses only the inputs in flight), resumed by skipping the ids it holds, merged by `merge_corpus`.
//
// Tables (schema version 1, in meta):
//   meta(key TEXT PRIMARY KEY, value TEXT): CorpusMeta's fields, one row each
//   inputs(id INTEGER PRIMARY KEY, text TEXT, pair TEXT, tokens INTEGER, truncated INTEGER)
//   head_stats(input_id, layer, head, entropy, mean_distance, first_token_mass, max_weight, previous_token,
//              duplicate_token, induction)                       one row per input, layer and head
//   top_pairs(input_id, layer, head, rank, query, key, weight, query_token, key_token)
//   skipped(id INTEGER PRIMARY KEY, empty INTEGER, reason TEXT)    the lines of the shard that are not inputs
//   head_sums(layer, head, statistic, n, sum, sum_sq, min, max)     per head and statistic over every input: what a
//              viewer opens with, without reading head_stats (current when meta holds summary_counts, "inputs
//              empty invalid truncated": written with it at close and by a merge, deleted when a run resumes)
// Indexes, made with head_sums: head_stats_of_head (layer, head, input_id and every statistic: one head's rows in one
// run) and top_pairs_strongest (layer, head, weight of each input's strongest pair, rank 0).
// Ids are the corpus file's line numbers (attn/analysis/corpus.h); layers, heads, positions and ranks from 0.
#pragma once

#include "attn/analysis/corpus.h"
#include "attn/error.h"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <string>
#include <vector>

namespace attn::io {

// What a database records of the run that wrote it. A run resumes a database, and shards merge, only when every field
// but `shard` agrees.
struct CorpusMeta {
  std::string model;              // as given on the command line
  std::string model_description;  // TransformerModel::description()
  std::string model_fingerprint;  // analysis::file_fingerprint of the model
  std::string input;              // the corpus file's name
  std::string input_fingerprint;
  int max_tokens = 0;  // 0: the model's positions
  int top_k = 5;
  std::string shard;  // "i/N"; a merge: "merged from N files"
};

// The statistics head_stats holds per input and head, by column name: entropy, mean_distance, first_token_mass,
// max_weight, previous_token, duplicate_token, induction.
std::span<const std::string_view> corpus_statistics();

// One head's figures of one statistic over a corpus: n inputs (those where it is defined), mean, standard deviation
// (population), min, max.
struct HeadSummary {
  int layer = 0, head = 0;
  std::int64_t n = 0;
  double mean = 0, sd = 0, min = 0, max = 0;
};

// What a viewer searches one head for (exBERT): the inputs where it puts the most weight on one query -> key pair
// (its strongest top pair's weight, highest first: max_weight would be 1 for every input of a causal model, whose
// row 0 has one key), attends most sharply (entropy, lowest first) or most to the first token (first_token_mass,
// highest first).
enum class CorpusSearch { MaxWeight, LowEntropy, SinkMass };

// One input found for a head: its text, the figure it was found by (the statistic searched on, or a pair's weight)
// and a query -> key pair of the head in it (its strongest, top_pairs rank 0, or the pair a token search matched;
// query -1 when the database holds none).
struct CorpusHit {
  std::int64_t input = 0;
  std::string text, pair;
  double value = 0;
  int query = -1, key = -1;
  float weight = 0;
  std::string query_token, key_token;
};

// An input's text as the run read it.
struct CorpusText {
  std::int64_t id = 0;
  std::string text, pair;
};

struct CorpusCounts {
  std::int64_t inputs = 0, empty = 0, invalid = 0, truncated = 0;
};

class CorpusDb {
 public:
  // Opens `path` for a run: a new database with `meta`, or an existing one with the same meta (resume), refused
  // otherwise naming the first field that differs and both values.
  static Result<CorpusDb> open_for_run(const std::filesystem::path& path, const CorpusMeta& meta);
  // An existing database, read only.
  static Result<CorpusDb> open_read(const std::filesystem::path& path);

  CorpusDb(CorpusDb&&) noexcept;
  CorpusDb& operator=(CorpusDb&&) noexcept;
  ~CorpusDb();

  const CorpusMeta& meta() const;
  // From now on a query of this database stops within a few thousand SQLite steps of *flag becoming true (a viewer's
  // search superseded or cancelled), answered as Cancelled; nullptr: never. The flag must outlive the database.
  void interrupt_when(const std::atomic<bool>* flag);
  // Whether line `id` is done: an input or a skipped line.
  Result<bool> has(std::int64_t id);
  // One input and its figures, or a skipped line, committed before returning.
  Result<void> add(const analysis::CorpusRecord& record);
  Result<void> add(const analysis::SkippedLine& line);
  Result<CorpusCounts> counts();
  // Every head's figures of one statistic (a name of corpus_statistics()) over the database's inputs, layer-major:
  // from the head_sums table where it is current (written at close and by merge_corpus), otherwise computed from
  // head_stats (a run stopped before close). Unknown statistic: OutOfRange, naming the ones there are.
  Result<std::vector<HeadSummary>> head_summary(std::string_view statistic);
  // One head's values of a statistic, input by input (NULLs left out), in input order.
  Result<std::vector<float>> head_values(int layer, int head, std::string_view statistic);
  // The `limit` inputs where head (layer, head) is strongest by `by` (ties: the earlier input first), each with the
  // head's strongest pair in it.
  Result<std::vector<CorpusHit>> strongest_inputs(int layer, int head, CorpusSearch by, int limit);
  // The head's top pairs whose query token is `token` ("where does L3.H2 attend from 'she'?"), strongest first:
  // compared without the tokenizers' word-start marks (a leading space, U+2581, U+0120) and ASCII case. value is
  // the pair's weight.
  Result<std::vector<CorpusHit>> pairs_from_token(int layer, int head, std::string_view token, int limit);
  // Input `id`; nullopt when the database holds none.
  Result<std::optional<CorpusText>> input(std::int64_t id);
  // `n` inputs spread evenly over the database's ids in order (every input when it holds n or fewer): a sample.
  Result<std::vector<CorpusText>> sample_inputs(int n);
  // Writes head_sums and the index by head (what a viewer reads), then leaves one file (the write-ahead log folded
  // back in).
  Result<void> close();

  struct Impl;

 private:
  explicit CorpusDb(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

struct MergeReport {
  CorpusCounts counts;
  int files = 0;
};

// Writes the shards' union to `out` (through a temporary file beside it, renamed when complete: `out` is either the
// whole merge or untouched). Refused: no shard, `out` among the shards, a file that is not a corpus database, shards
// of different meta (model, input, options), two shards holding the same id. progress(done, files) after each file.
Result<MergeReport> merge_corpus(const std::filesystem::path& out, const std::vector<std::filesystem::path>& shards,
                                 const std::function<void(int done, int files)>& progress = {});

}  // namespace attn::io
