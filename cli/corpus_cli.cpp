#include "cli/corpus_cli.h"

#include "attn/io/corpus_db.h"
#include "attn/models/transformer.h"
#include "render/strings.h"

#include <QElapsedTimer>

#include <omp.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

using namespace Qt::StringLiterals;

namespace attn::ui {

namespace {

namespace fs = std::filesystem;
using attn::analysis::CorpusRecord;
using attn::analysis::SkippedLine;

std::atomic<bool> g_stop{false};
extern "C" void stopCorpus(int) { g_stop.store(true); }

// SIGINT and SIGTERM set g_stop while it lives (a Slurm job's cancel is SIGTERM); the old handlers after.
class StopOnSignals {
 public:
  StopOnSignals() {
    g_stop.store(false);
    struct sigaction action = {};
    action.sa_handler = stopCorpus;
    action.sa_flags = SA_RESTART;  // a read the signal interrupts goes on: the loop sees the flag between inputs
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &oldInt_);
    sigaction(SIGTERM, &action, &oldTerm_);
  }
  ~StopOnSignals() {
    sigaction(SIGINT, &oldInt_, nullptr);
    sigaction(SIGTERM, &oldTerm_, nullptr);
  }
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

 private:
  struct sigaction oldInt_ = {}, oldTerm_ = {};
};

// "3 min 58 s", "1 h 02 min", "12.3 s".
QString duration(double seconds) {
  if (seconds < 60) return u"%1 s"_s.arg(seconds, 0, 'f', 1);
  const auto s = static_cast<long long>(seconds + 0.5);
  if (s < 3600) return u"%1 min %2 s"_s.arg(s / 60).arg(s % 60);
  return u"%1 h %2 min"_s.arg(s / 3600).arg((s % 3600) / 60, 2, 10, QChar(u'0'));
}

QString count(long long n) { return QString::fromStdString(attn::with_commas(n)); }

// "1 input", "2 inputs", "1,000 inputs".
QString counted(long long n, const QString& one, const QString& many) {
  return u"%1 %2"_s.arg(count(n), n == 1 ? one : many);
}

// The terminal's progress line: rewritten in place on a terminal (twice a second), a line every 10 s otherwise
// (a batch job's log).
class ProgressLine {
 public:
  ProgressLine() : tty_(::isatty(STDERR_FILENO) != 0) { clock_.start(); }
  void update(long long done, double fraction, bool force = false) {
    const qint64 now = clock_.elapsed();
    if (!force && now - shown_ < (tty_ ? 500 : 10000)) return;
    shown_ = now;
    if (start_fraction_ < 0 && done > 0) start_fraction_ = fraction;
    const double seconds = double(now) / 1000.0, rate = seconds > 0 ? double(done) / seconds : 0.0;
    QString line = u"corpus: %1 inputs · %2 inputs/s · %3% of the file"_s.arg(count(done))
                       .arg(rate, 0, 'f', 1)
                       .arg(100.0 * fraction, 0, 'f', 1);
    const double gained = fraction - std::max(0.0, start_fraction_);
    if (done > 0 && gained > 0 && fraction < 1) line += u" · ETA "_s + duration(seconds * (1 - fraction) / gained);
    const QByteArray bytes = (tty_ ? u"\r"_s + line + u"\x1b[K"_s : line + u'\n').toUtf8();
    std::fwrite(bytes.data(), 1, std::size_t(bytes.size()), stderr);
    std::fflush(stderr);
  }
  void finish() {
    if (tty_ && shown_ >= 0) std::fputc('\n', stderr);
  }
  double seconds() const { return double(clock_.nsecsElapsed()) / 1e9; }

 private:
  bool tty_;
  QElapsedTimer clock_;
  qint64 shown_ = -1;
  double start_fraction_ = -1;
};

struct Tally {
  long long added = 0, resumed = 0, empty = 0, invalid = 0, truncated = 0;
  QStringList invalidNotes;  // the first few
};

void noteSkipped(const SkippedLine& line, Tally& tally) {
  if (line.empty) {
    ++tally.empty;
    return;
  }
  ++tally.invalid;
  if (tally.invalidNotes.size() < 5) {
    tally.invalidNotes << QObject::tr("line %1: %2").arg(line.id + 1).arg(QString::fromStdString(line.reason));
  }
}

std::expected<attn::io::CorpusMeta, RenderFailure> metaFor(const CorpusJob& job,
                                                           const attn::models::TransformerModel& model) {
  attn::io::CorpusMeta meta;
  meta.model = job.modelPath.toStdString();
  meta.model_description = model.description();
  auto modelPrint = attn::analysis::file_fingerprint(toPath(job.modelPath));
  if (!modelPrint) return std::unexpected(engineFailure(RenderFailure::Kind::Input, modelPrint.error()));
  meta.model_fingerprint = *modelPrint;
  meta.input = toPath(job.inputPath).filename().string();
  auto inputPrint = attn::analysis::file_fingerprint(toPath(job.inputPath));
  if (!inputPrint) return std::unexpected(engineFailure(RenderFailure::Kind::Input, inputPrint.error()));
  meta.input_fingerprint = *inputPrint;
  meta.max_tokens = job.maxTokens;
  meta.top_k = job.topK;
  meta.shard = job.shard.to_string();
  return meta;
}

// One input run and its figures, or why it was not run (kept as a skipped line).
std::expected<CorpusRecord, std::string> runOne(attn::models::TransformerRunner& runner,
                                                const attn::analysis::CorpusInput& input,
                                                const attn::models::RunOptions& options, int topK) {
  auto run = runner.run_text(input.text, input.pair, options);
  if (!run) return std::unexpected(run.error().message());
  CorpusRecord record;
  record.id = input.id;
  record.text = input.text;
  record.pair = input.pair;
  record.tokens = static_cast<int>(run->attention.tokens.size());
  record.truncated = run->truncated_tokens;
  record.token_text = run->attention.tokens;
  record.heads = attn::analysis::corpus_head_rows(run->attention, run->ids);
  record.pairs = attn::analysis::corpus_top_pairs(run->attention, runner.model().config().causal(), topK);
  return record;
}

QStringList tallyNotes(const Tally& tally, const attn::io::CorpusCounts& totals, const QString& db) {
  QStringList notes;
  if (tally.empty) notes << QObject::tr("%1 skipped").arg(counted(tally.empty, u"empty line"_s, u"empty lines"_s));
  if (tally.invalid) {
    notes << QObject::tr("%1 not run (%2%3)")
                 .arg(counted(tally.invalid, u"line"_s, u"lines"_s))
                 .arg(tally.invalidNotes.join(u"; "_s))
                 .arg(tally.invalid > tally.invalidNotes.size() ? u"; …"_s : QString());
  }
  if (tally.truncated)
    notes << QObject::tr("%1 truncated to the token limit").arg(counted(tally.truncated, u"input"_s, u"inputs"_s));
  notes << QObject::tr("%1 holds %2; lines skipped: %3 empty, %4 unreadable")
               .arg(db, counted(totals.inputs, u"input"_s, u"inputs"_s), count(totals.empty), count(totals.invalid));
  return notes;
}

}  // namespace

std::expected<CorpusOutcome, RenderFailure> runCorpus(const CorpusJob& job) {
  if (job.threads > 0) omp_set_num_threads(job.threads);  // before the model: OpenBLAS follows it too
  auto model = attn::models::TransformerModel::load(toPath(job.modelPath));
  if (!model) return std::unexpected(engineFailure(RenderFailure::Kind::Input, model.error()));
  if (!(*model)->tokenizer()) {
    return std::unexpected(usageFailure(
        QObject::tr("corpus: %1 reads no text (no tokenizer): a corpus run needs a text model").arg(job.modelPath)));
  }
  auto reader = attn::analysis::CorpusReader::open(toPath(job.inputPath));
  if (!reader) return std::unexpected(engineFailure(RenderFailure::Kind::Input, reader.error()));
  auto meta = metaFor(job, **model);
  if (!meta) return std::unexpected(meta.error());
  auto db = attn::io::CorpusDb::open_for_run(toPath(job.dbPath), *meta);
  if (!db) return std::unexpected(engineFailure(RenderFailure::Kind::Input, db.error()));

  CorpusOutcome outcome;
  for (const auto& w : (*model)->warnings()) outcome.report.warnings.append(QString::fromStdString(w));
  StopOnSignals stopOnSignals;
  attn::models::TransformerRunner runner(*model);
  attn::models::RunOptions options;
  options.top_k = 0;
  if (job.maxTokens > 0) options.max_tokens = job.maxTokens;
  options.cancel = &g_stop;
  Tally tally;
  ProgressLine progress;
  std::vector<SkippedLine> skipped;
  auto failed = [](const attn::Error& e) { return std::unexpected(outputFailure(e)); };
  while (!g_stop.load()) {
    skipped.clear();
    auto input = reader->next(job.shard, skipped);
    for (const auto& line : skipped) {
      auto done = db->has(line.id);
      if (!done) return failed(done.error());
      if (*done) continue;
      noteSkipped(line, tally);
      if (auto added = db->add(line); !added) return failed(added.error());
    }
    if (!input) break;
    auto done = db->has(input->id);
    if (!done) return failed(done.error());
    if (*done) {
      ++tally.resumed;
      continue;
    }
    auto record = runOne(runner, *input, options, job.topK);
    if (!record && g_stop.load()) break;  // cancelled within the input: not recorded, run again on resume
    if (!record) {
      const SkippedLine line{input->id, false, "not run: " + record.error()};
      noteSkipped(line, tally);
      if (auto added = db->add(line); !added) return failed(added.error());
      continue;
    }
    if (record->truncated > 0) ++tally.truncated;
    if (auto added = db->add(*record); !added) return failed(added.error());
    ++tally.added;
    progress.update(tally.added, double(reader->bytes_read()) / double(std::max<std::uint64_t>(1, reader->size())));
  }
  progress.finish();
  if (reader->error()) return std::unexpected(engineFailure(RenderFailure::Kind::Input, *reader->error()));
  auto totals = db->counts();
  if (!totals) return failed(totals.error());
  if (auto closed = db->close(); !closed) return failed(closed.error());
  outcome.interrupted = g_stop.load();
  const double seconds = progress.seconds();
  outcome.report.summary =
      QObject::tr("corpus: %1 · shard %2 · %3, %4 already done · %5 inputs/s on %6 · %7")
          .arg(QString::fromStdString((*model)->description()), QString::fromStdString(job.shard.to_string()),
               counted(tally.added, u"new input"_s, u"new inputs"_s), count(tally.resumed))
          .arg(seconds > 0 ? double(tally.added) / seconds : 0.0, 0, 'f', 2)
          .arg(counted(omp_get_max_threads(), u"thread"_s, u"threads"_s), duration(seconds));
  if (outcome.interrupted) {
    outcome.report.notes << QObject::tr(
        "stopped by a signal: every input done so far is kept; the same command "
        "resumes the run");
  }
  outcome.report.notes << tallyNotes(tally, *totals, job.dbPath);
  outcome.report.written << job.dbPath;
  return outcome;
}

std::expected<RenderReport, RenderFailure> runCorpusMerge(const QString& out, const QStringList& shards) {
  std::vector<fs::path> paths;
  for (const auto& s : shards) paths.push_back(toPath(s));
  QElapsedTimer clock;
  clock.start();
  auto merged = attn::io::merge_corpus(toPath(out), paths, [](int done, int files) {
    if (::isatty(STDERR_FILENO)) std::fprintf(stderr, "\rcorpus merge: %d of %d files", done, files);
  });
  if (::isatty(STDERR_FILENO)) std::fputc('\n', stderr);
  if (!merged) return std::unexpected(engineFailure(RenderFailure::Kind::Input, merged.error()));
  RenderReport report;
  report.summary =
      QObject::tr("corpus merge: %1 · %2; lines skipped: %3 empty, %4 unreadable · %5")
          .arg(counted(merged->files, u"file"_s, u"files"_s), counted(merged->counts.inputs, u"input"_s, u"inputs"_s),
               count(merged->counts.empty), count(merged->counts.invalid))
          .arg(duration(double(clock.nsecsElapsed()) / 1e9));
  report.written << out;
  return report;
}

}  // namespace attn::ui
