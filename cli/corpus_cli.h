// `attnscope-cli corpus`: a corpus run (attn/analysis/corpus.h) into a SQLite database (attn/io/corpus_db.h), one
// input at a time, each committed as it is done; and `attnscope-cli corpus merge`, the shards' union.
//
//   attnscope-cli corpus --model M --input F --db D.sqlite [--shard i/N] [--max-tokens K] [--top-k K] [--threads N]
//   attnscope-cli corpus merge --db OUT.sqlite SHARD.sqlite...
//
// Progress goes to stderr (inputs, inputs per second, the ETA from the bytes of the file read), at most twice a
// second. Ctrl-C (SIGINT) or SIGTERM stop the run between inputs (within a layer of the one running): what is done is
// kept, and the same command resumes it.
#pragma once

#include "attn/analysis/corpus.h"
#include "workbenches/common/render_report.h"

#include <QString>
#include <QStringList>

#include <expected>

namespace attn::ui {

struct CorpusJob {
  QString modelPath, inputPath, dbPath;
  attn::analysis::Shard shard;
  int maxTokens = 0;  // 0: the model's positions
  int topK = 5;
  // OpenMP's threads for the run (0: its default, every core). Several shards side by side on one machine want 1
  // each: two processes of two threads on two cores each wait for the other's spinning threads at every parallel
  // region (the README's GNU parallel line over 600 stories: 17.3 s, against 0.50 s with one thread a shard).
  int threads = 0;
};

struct CorpusOutcome {
  RenderReport report;
  bool interrupted = false;  // stopped by a signal: exit 130
};

// summary: "corpus: 1,000 inputs (988 new, 12 resumed) · 4.2 inputs/s · 3 min 58 s"; notes: the skipped lines
// (empty, invalid JSON with the first few line numbers and reasons), the truncated inputs, the database's totals.
std::expected<CorpusOutcome, RenderFailure> runCorpus(const CorpusJob& job);

std::expected<RenderReport, RenderFailure> runCorpusMerge(const QString& out, const QStringList& shards);

}  // namespace attn::ui
