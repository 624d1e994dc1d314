// A corpus run (issue 46): what each head of a text transformer does over many inputs, one input at a time, written
// to a database (attn/io/corpus_db.h) that shards, resumes and merges.
//
// The inputs. A corpus file is plain text, one input per line, or JSON Lines (a name ending .jsonl, .ndjson or
// .json): one object per line, {"text": ...} or {"text": ..., "pair": ...} (a second segment, for BERT's pairs). An
// input's id is its line number, 0-based, in the whole file, so the shards of one file never share an id. Empty lines
// (nothing but spaces) are skipped and counted; a JSON line that cannot be read is skipped with its line number and
// the reason; neither stops the run.
//
// The statistics of one input, per layer and head, from its map A (row i = query, column j = key, R rows):
//   entropy          = (1/R) sum_i -sum_j A[i,j] ln A[i,j]          (nats)
//   mean_distance    = (1/R) sum_i sum_j A[i,j] |i - j|             (tokens)
//   first_token_mass = (1/R) sum_i A[i,0]
//   max_weight       = max_ij A[i,j]
//   previous_token   = mean over i >= 1 of A[i,i-1]                 (the previous-token detector, head_detectors.h)
//   duplicate_token  = mean over the rows i whose token occurred before (at some j < i, ids[j] = ids[i]) of the
//                      mass on those earlier occurrences                (the duplicate-token detector on real text)
//   induction        = mean over the same rows of the mass on the tokens after the earlier occurrences (j + 1 for
//                      each such j with j + 1 < i)                  (the induction stripe at offset +1 on real text)
// duplicate_token and induction are absent (NULL in the database) for an input without a repeated token.
// Top pairs: each head's k strongest query -> key weights, over the rows that have a choice (a causal model's row 0
// sees one key, weight 1, and is left out), strongest first, ties to the earlier query, then key.
#pragma once

#include "attn/error.h"
#include "attn/layered_trace.h"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attn::analysis {

// "i/N": the inputs whose id mod N is i (0 <= i < N).
struct Shard {
  int index = 0, count = 1;
  bool takes(std::int64_t id) const { return id % count == index; }
  std::string to_string() const;  // "2/8"
};
// "3/2", "0/0", "-1/4", "a/b", "1/" are refused (OutOfRange or Malformed), naming the spec and what it must be.
Result<Shard> parse_shard(std::string_view spec);

struct CorpusInput {
  std::int64_t id = 0;  // the line, 0-based
  std::string text, pair;
};

// A line the reader skipped: empty, or JSON it cannot read (reason says why, e.g. "not JSON: ..." or "no \"text\"").
struct SkippedLine {
  std::int64_t id = 0;
  bool empty = false;
  std::string reason;
};

// Reads a corpus file one line at a time: memory is the longest line, whatever the file's size. Lines longer than
// kMaxLineBytes are skipped with a reason, not read.
class CorpusReader {
 public:
  static constexpr std::size_t kMaxLineBytes = std::size_t{16} << 20;
  static Result<CorpusReader> open(const std::filesystem::path& path);
  // The next input the shard takes, or nullopt at the end of the file (or a read error: error()). Lines the shard
  // does not take are passed over unread (never parsed); skipped lines of the shard are appended to `skipped`.
  std::optional<CorpusInput> next(const Shard& shard, std::vector<SkippedLine>& skipped);
  bool json_lines() const { return json_; }
  std::uint64_t bytes_read() const { return offset_; }
  std::uint64_t size() const { return size_; }
  const std::optional<Error>& error() const { return error_; }

 private:
  struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  enum class Line { Read, TooLong, End };
  Line read_line(std::string& line);
  std::unique_ptr<std::FILE, Closer> file_;
  std::filesystem::path path_;
  bool json_ = false;
  std::uint64_t offset_ = 0, size_ = 0;
  std::int64_t next_id_ = 0;
  std::optional<Error> error_;
};

struct CorpusHeadRow {
  int layer = 0, head = 0;
  float entropy = 0, mean_distance = 0, first_token_mass = 0, max_weight = 0, previous_token = 0;
  std::optional<float> duplicate_token, induction;
};

struct CorpusPair {
  int layer = 0, head = 0, rank = 0;  // rank 0: the head's strongest
  int query = 0, key = 0;
  float weight = 0;
};

// One input's figures (every self-attention layer of the trace, layer-major then head).
struct CorpusRecord {
  std::int64_t id = 0;
  std::string text, pair;
  int tokens = 0;                       // as run
  int truncated = 0;                    // tokens cut off at the model's positions or --max-tokens
  std::vector<std::string> token_text;  // the tokens as run (the pairs' query and key names)
  std::vector<CorpusHeadRow> heads;
  std::vector<CorpusPair> pairs;
};

// The figures above of a run's maps; `ids` are the run's token ids (for the repeats), `causal` whether row i sees keys
// 0..i only. top_k pairs per head (0: none).
std::vector<CorpusHeadRow> corpus_head_rows(const LayeredTrace& trace, const std::vector<int>& ids);
std::vector<CorpusPair> corpus_top_pairs(const LayeredTrace& trace, bool causal, int top_k);

// What a model or corpus file is, for refusing to resume or merge across different ones: each regular file's name
// and size and a 64-bit hash of its first and last 64 KiB (a folder: its files, sorted by name; not recursive).
Result<std::string> file_fingerprint(const std::filesystem::path& path);

}  // namespace attn::analysis
