// CorpusWorker: the Corpus tab's database and model work on its own thread (issue 46). One read-only CorpusDb, opened
// on the worker thread, answers the heads map (every statistic's head_summary), a head's values and search, and the
// token search; the model the database names (or the one the tab chose instead) is loaded once and re-runs an input
// for its map, or runs a sample of inputs keeping their queries and keys for analysis::qk_embedding. Each kind of
// request has its own Latest slot (a newer one replaces one not started), and every outcome carries its request's
// generation and kind, so the tab knows when everything it asked for is in.
#pragma once

#include "attn/analysis/qk_embedding.h"
#include "attn/io/corpus_db.h"
#include "attn/models/transformer.h"
#include "attn/trace.h"
#include "workbenches/common/mailbox.h"

#include <QMetaType>
#include <QObject>
#include <QString>

#include <array>
#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attn::models {
class TransformerModel;
}

namespace attn::ui {

enum class CorpusJob : int { Open, Head, Token, Rerun, Embed };
inline constexpr int kCorpusJobs = 5;

struct CorpusRequest {
  CorpusJob job = CorpusJob::Open;
  QString database;  // Open
  QString model;     // Rerun, Embed: a model folder or file; empty: the database's
  int layer = 0, head = 0;
  QString statistic;                                                  // Head
  attn::io::CorpusSearch search = attn::io::CorpusSearch::MaxWeight;  // Head
  QString token;                                                      // Token
  qint64 input = 0;                                                   // Rerun
  int sample = 20;                                                    // Embed
  int limit = 50;                                                     // Head, Token: rows
};

// What the database holds, for the heads map and its table.
struct CorpusOverview {
  attn::io::CorpusMeta meta;
  attn::io::CorpusCounts counts;
  int layers = 0, heads = 0;
  // [statistic index of attn::io::corpus_statistics()][layer * heads + head]
  std::vector<std::vector<attn::io::HeadSummary>> summaries;
};

struct CorpusEmbedding {
  attn::analysis::QkEmbedding embedding;
  std::vector<qint64> inputs;                    // the sample's ids, in the embedding's input order
  std::vector<std::vector<std::string>> tokens;  // each input's tokens as run
};

struct CorpusOutcome {
  quint64 generation = 0;
  CorpusRequest request;
  std::optional<attn::Error> error;
  std::shared_ptr<const CorpusOverview> overview;    // Open
  std::vector<float> values;                         // Head: the statistic, input by input
  std::vector<attn::io::CorpusHit> hits;             // Head (the search), Token
  std::shared_ptr<const attn::AttentionMap> map;     // Rerun: the head's map
  QString text;                                      // Rerun: the input's text; Embed/Rerun: the model
  std::shared_ptr<const CorpusEmbedding> embedding;  // Embed
  bool ok() const { return !error.has_value(); }
};

// The model a database's re-runs use: `chosen` when given, else the database's meta model; a relative path is taken
// from the working folder, then from the database's folder. Refused (naming the path and how to choose another) when
// neither exists.
attn::Result<std::filesystem::path> corpusModelPath(const QString& chosen, const std::string& metaModel,
                                                    const std::filesystem::path& database);

class CorpusWorker : public QObject {
  Q_OBJECT

 public:
  CorpusWorker();
  ~CorpusWorker() override;

  // Thread-safe; replaces a request of the same job that has not started.
  void submit(quint64 generation, CorpusRequest request);
  // Thread-safe: the embedding or re-run running stops at its next input or layer (answered as cancelled).
  void cancel() { cancel_.store(true); }
  void abandon() { cancel_.store(true); }

 signals:
  void finished(attn::ui::CorpusOutcome outcome);
  // The embedding's inputs run, of all (on the worker thread; queue it).
  void progress(quint64 generation, int done, int of);

 private:
  Q_INVOKABLE void drain();  // on the worker thread
  void run(CorpusOutcome& outcome);
  void open(CorpusOutcome& outcome);
  void head(CorpusOutcome& outcome);
  void token(CorpusOutcome& outcome);
  void rerun(CorpusOutcome& outcome);
  void embed(CorpusOutcome& outcome);
  attn::Result<std::shared_ptr<const attn::models::TransformerModel>> model(const QString& chosen);
  // A re-run's options: no predictions, the database's --max-tokens, cancelled with the worker.
  attn::models::RunOptions runOptions() const;

  struct Pending {
    quint64 generation;
    CorpusRequest request;
  };
  Mailbox mailbox_{this};
  std::array<Latest<Pending>, kCorpusJobs> pending_;  // guarded by mailbox_
  std::atomic<bool> cancel_{false};
  std::atomic<int> running_{-1};  // the CorpusJob running, -1 none

  // On the worker thread only.
  std::optional<attn::io::CorpusDb> db_;
  std::filesystem::path dbPath_;
  std::filesystem::path modelPath_;
  std::shared_ptr<const attn::models::TransformerModel> model_;
};

}  // namespace attn::ui

Q_DECLARE_METATYPE(attn::ui::CorpusOutcome)
