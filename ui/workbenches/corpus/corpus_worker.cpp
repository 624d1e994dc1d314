#include "workbenches/corpus/corpus_worker.h"

#include "attn/models/transformer.h"
#include "render/strings.h"

#include <QCoreApplication>

#include <algorithm>
#include <string_view>
#include <system_error>

namespace attn::ui {

namespace fs = std::filesystem;

namespace {

attn::Error refusal(attn::ErrorKind kind, const QString& reason, const std::string& path = {}) {
  return attn::Error{path, -1, -1, reason.toStdString(), kind};
}

QString trWorker(const char* text) { return QCoreApplication::translate("CorpusWorker", text); }

}  // namespace

attn::Result<fs::path> corpusModelPath(const QString& chosen, const std::string& metaModel, const fs::path& database) {
  const fs::path named = chosen.isEmpty() ? fs::path(metaModel) : toPath(chosen);
  if (named.empty()) {
    return std::unexpected(refusal(
        attn::ErrorKind::Io, trWorker("the database names no model: choose one with Model\u2026"), database.string()));
  }
  std::error_code ec;
  if (fs::exists(named, ec)) return named;
  if (named.is_relative()) {
    const fs::path beside = database.parent_path() / named;
    if (fs::exists(beside, ec)) return beside;
  }
  const QString why = chosen.isEmpty()
                          ? trWorker(
                                "the database's model %1 is not found (nor beside the database): choose the "
                                "model with Model\u2026")
                          : trWorker("the model %1 is not found");
  return std::unexpected(refusal(attn::ErrorKind::Io, why.arg(pathFromBytes(named.native())), named.string()));
}

CorpusWorker::CorpusWorker() { qRegisterMetaType<attn::ui::CorpusOutcome>(); }
CorpusWorker::~CorpusWorker() = default;

void CorpusWorker::submit(quint64 generation, CorpusRequest request) {
  mailbox_.post([&] {
    const auto job = static_cast<std::size_t>(request.job);
    // A newer request of the kind running makes it stale (a re-run asked for during an embedding leaves the embedding
    // be), and a new database every request of the old one.
    if (request.job == CorpusJob::Open || int(request.job) == running_.load()) cancel_.store(true);
    pending_[job].put(Pending{generation, std::move(request)});
  });
}

void CorpusWorker::drain() {
  std::optional<Pending> next;
  while (mailbox_.next([&] {
    for (auto& slot : pending_) {  // in job order: an open before what reads the database
      if ((next = slot.take())) {
        cancel_.store(false);  // under the lock, as running_: a newer request of its kind can only cancel it now
        running_.store(int(next->request.job));
        return true;
      }
    }
    return false;
  })) {
    CorpusOutcome outcome;
    outcome.generation = next->generation;
    outcome.request = std::move(next->request);
    run(outcome);
    mailbox_.locked([this] { running_.store(-1); });
    emit finished(std::move(outcome));
  }
}

void CorpusWorker::run(CorpusOutcome& outcome) {
  if (outcome.request.job != CorpusJob::Open && !db_) {
    outcome.error = refusal(attn::ErrorKind::Io, trWorker("no corpus database is open"));
    return;
  }
  switch (outcome.request.job) {
    case CorpusJob::Open: open(outcome); break;
    case CorpusJob::Head: head(outcome); break;
    case CorpusJob::Token: token(outcome); break;
    case CorpusJob::Rerun: rerun(outcome); break;
    case CorpusJob::Embed: embed(outcome); break;
  }
}

void CorpusWorker::open(CorpusOutcome& outcome) {
  const fs::path path = toPath(outcome.request.database);
  auto db = attn::io::CorpusDb::open_read(path);
  if (!db) {
    outcome.error = db.error();
    return;
  }
  db->interrupt_when(&cancel_);  // its searches stop at Cancel or when superseded
  auto overview = std::make_shared<CorpusOverview>();
  overview->meta = db->meta();
  auto counts = db->counts();
  if (!counts) {
    outcome.error = counts.error();
    return;
  }
  overview->counts = *counts;
  for (const std::string_view statistic : attn::io::corpus_statistics()) {
    auto summary = db->head_summary(statistic);
    if (!summary) {
      outcome.error = summary.error();
      return;
    }
    for (const auto& h : *summary) {
      overview->layers = std::max(overview->layers, h.layer + 1);
      overview->heads = std::max(overview->heads, h.head + 1);
    }
    overview->summaries.push_back(std::move(*summary));
  }
  if (overview->counts.inputs == 0 || overview->layers == 0) {
    outcome.error =
        refusal(attn::ErrorKind::Malformed, trWorker("the corpus database holds no input yet"), path.string());
    return;
  }
  db_ = std::move(*db);
  dbPath_ = path;
  outcome.overview = std::move(overview);
}

void CorpusWorker::head(CorpusOutcome& outcome) {
  const CorpusRequest& r = outcome.request;
  auto values = db_->head_values(r.layer, r.head, r.statistic.toStdString());
  if (!values) {
    outcome.error = values.error();
    return;
  }
  outcome.values = std::move(*values);
  auto hits = db_->strongest_inputs(r.layer, r.head, r.search, r.limit);
  if (!hits) {
    outcome.error = hits.error();
    return;
  }
  outcome.hits = std::move(*hits);
}

void CorpusWorker::token(CorpusOutcome& outcome) {
  const CorpusRequest& r = outcome.request;
  auto hits = db_->pairs_from_token(r.layer, r.head, r.token.trimmed().toStdString(), r.limit);
  if (!hits) {
    outcome.error = hits.error();
    return;
  }
  outcome.hits = std::move(*hits);
}

attn::Result<std::shared_ptr<const attn::models::TransformerModel>> CorpusWorker::model(const QString& chosen) {
  auto path = corpusModelPath(chosen, db_->meta().model, dbPath_);
  if (!path) return std::unexpected(path.error());
  if (model_ && *path == modelPath_) return model_;
  auto loaded = attn::models::TransformerModel::load(*path);
  if (!loaded) return std::unexpected(loaded.error());
  if (!(*loaded)->tokenizer()) {
    return std::unexpected(refusal(attn::ErrorKind::Unsupported,
                                   trWorker("%1 reads no text (no tokenizer files)").arg(pathFromBytes(path->native())),
                                   path->string()));
  }
  model_ = std::move(*loaded);
  modelPath_ = *path;
  return model_;
}

attn::models::RunOptions CorpusWorker::runOptions() const {
  attn::models::RunOptions options;
  options.top_k = 0;
  if (db_->meta().max_tokens > 0) options.max_tokens = db_->meta().max_tokens;
  options.cancel = &cancel_;
  return options;
}

void CorpusWorker::rerun(CorpusOutcome& outcome) {
  const CorpusRequest& r = outcome.request;
  auto input = db_->input(r.input);
  if (!input || !*input) {
    outcome.error =
        input ? refusal(attn::ErrorKind::Io, trWorker("no input %1 in the database").arg(r.input)) : input.error();
    return;
  }
  auto m = model(r.model);
  if (!m) {
    outcome.error = m.error();
    return;
  }
  attn::models::TransformerRunner runner(*m);
  auto run = runner.run_text((*input)->text, (*input)->pair, runOptions());
  if (!run) {
    outcome.error = run.error();
    return;
  }
  const auto& layers = run->attention.layers;
  if (r.layer < 0 || std::size_t(r.layer) >= layers.size()) {
    outcome.error = refusal(attn::ErrorKind::OutOfRange, trWorker("the model has no layer %1").arg(r.layer));
    return;
  }
  outcome.map = run->attention.map(layers[std::size_t(r.layer)].stage, r.layer, r.head);
  if (!outcome.map) {
    outcome.error =
        refusal(attn::ErrorKind::OutOfRange, trWorker("the model has no head %1.%2").arg(r.layer).arg(r.head));
    return;
  }
  outcome.text = fromStd((*input)->text);
}

void CorpusWorker::embed(CorpusOutcome& outcome) {
  const CorpusRequest& r = outcome.request;
  auto sample = db_->sample_inputs(r.sample);
  if (!sample) {
    outcome.error = sample.error();
    return;
  }
  auto m = model(r.model);
  if (!m) {
    outcome.error = m.error();
    return;
  }
  attn::models::TransformerRunner runner(*m);
  attn::models::RunOptions options = runOptions();
  options.keep = attn::models::RunOptions::Keep::OnDemand;
  std::vector<attn::models::TransformerRun> runs;
  auto result = std::make_shared<CorpusEmbedding>();
  const int of = int(sample->size());
  emit progress(outcome.generation, 0, of);
  for (const auto& input : *sample) {
    if (cancel_.load()) break;
    auto run = runner.run_text(input.text, input.pair, options);
    if (!run) {
      outcome.error = run.error();
      return;
    }
    if (std::size_t(r.layer) >= run->on_demand.size()) {
      outcome.error = refusal(attn::ErrorKind::OutOfRange, trWorker("the model has no layer %1").arg(r.layer));
      return;
    }
    result->inputs.push_back(input.id);
    result->tokens.push_back(run->attention.tokens);
    runs.push_back(std::move(*run));
    emit progress(outcome.generation, int(runs.size()), of);
  }
  if (cancel_.load()) {
    outcome.error = refusal(attn::ErrorKind::Cancelled, trWorker("cancelled"));
    return;
  }
  std::vector<const attn::OnDemandLayer*> layers;
  for (const auto& run : runs) layers.push_back(&run.on_demand[std::size_t(r.layer)]);
  auto embedding = attn::analysis::qk_embedding(layers, r.head);
  if (!embedding) {
    outcome.error = embedding.error();
    return;
  }
  result->embedding = std::move(*embedding);
  outcome.embedding = std::move(result);
}

}  // namespace attn::ui
