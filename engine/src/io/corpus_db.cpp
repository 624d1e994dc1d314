// The corpus run's SQLite database (attn/io/corpus_db.h), through SQLite's C API.
#include "attn/io/corpus_db.h"

#include <sqlite3.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <system_error>
#include <utility>

namespace attn::io {

namespace fs = std::filesystem;

// Owners of SQLite's handles (named, not anonymous: CorpusDb::Impl holds them).
namespace sqlite {
struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct StmtCloser {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
}  // namespace sqlite
using Db = std::unique_ptr<sqlite3, sqlite::DbCloser>;
using Stmt = std::unique_ptr<sqlite3_stmt, sqlite::StmtCloser>;

namespace {

constexpr const char* kSchemaVersion = "1";

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS inputs(id INTEGER PRIMARY KEY, text TEXT NOT NULL, pair TEXT, tokens INTEGER NOT NULL,
                                  truncated INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS head_stats(input_id INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL,
                                      entropy REAL, mean_distance REAL, first_token_mass REAL, max_weight REAL,
                                      previous_token REAL, duplicate_token REAL, induction REAL,
                                      PRIMARY KEY(input_id, layer, head)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS top_pairs(input_id INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL,
                                     rank INTEGER NOT NULL, query INTEGER NOT NULL, key INTEGER NOT NULL,
                                     weight REAL NOT NULL, query_token TEXT, key_token TEXT,
                                     PRIMARY KEY(input_id, layer, head, rank)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS skipped(id INTEGER PRIMARY KEY, empty INTEGER NOT NULL, reason TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS head_sums(layer INTEGER NOT NULL, head INTEGER NOT NULL, statistic TEXT NOT NULL,
                                     n INTEGER NOT NULL, sum REAL, sum_sq REAL, min REAL, max REAL,
                                     PRIMARY KEY(layer, head, statistic)) WITHOUT ROWID;
)sql";

constexpr std::string_view kStatistics[] = {"entropy",        "mean_distance",   "first_token_mass", "max_weight",
                                            "previous_token", "duplicate_token", "induction"};

bool is_statistic(std::string_view name) {
  return std::find(std::begin(kStatistics), std::end(kStatistics), name) != std::end(kStatistics);
}

// SELECT layer, head, 'stat', n, sum, sum of squares, min, max FROM head_stats GROUP BY layer, head, for every
// statistic (or the one named), in layer, head order.
std::string sums_select(std::string_view only = {}) {
  std::string sql;
  for (const std::string_view stat : kStatistics) {
    if (!only.empty() && stat != only) continue;
    const std::string c(stat);
    if (!sql.empty()) sql += " UNION ALL ";
    sql += "SELECT layer, head, '" + c + "', count(" + c + "), total(" + c + "), total(" + c + " * " + c + "), min(" +
           c + "), max(" + c + ") FROM head_stats GROUP BY layer, head";
  }
  return sql;
}

// The counts of CorpusDb::counts(): inputs, empty lines, invalid lines, truncated inputs. Each a scan of inputs or
// skipped (seconds on a million inputs).
constexpr std::array<const char*, 4> kCounts = {
    "(SELECT count(*) FROM inputs)", "(SELECT count(*) FROM skipped WHERE empty = 1)",
    "(SELECT count(*) FROM skipped WHERE empty = 0)", "(SELECT count(*) FROM inputs WHERE truncated > 0)"};

// The viewer's indexes, made where head_sums is (close and merge; a run's inserts need none). One head's rows in one
// run, every statistic beside them (a head's values, its search by entropy or sink mass); a head's strongest pairs by
// weight (rank 0: each input's strongest), read from the top. The first version's index on (layer, head) alone went
// from the index into the table a row at a time (0.9 s for a head of a million inputs).
constexpr const char* kIndexes =
    "DROP INDEX IF EXISTS head_stats_by_head; "
    "CREATE INDEX IF NOT EXISTS head_stats_of_head ON head_stats(layer, head, input_id, entropy, mean_distance, "
    "first_token_mass, max_weight, previous_token, duplicate_token, induction); "
    "CREATE INDEX IF NOT EXISTS top_pairs_strongest ON top_pairs(layer, head, weight DESC, input_id) WHERE rank = 0;";

// head_sums rewritten from head_stats, the counts they cover in meta ("inputs empty invalid truncated"), and the
// indexes a viewer reads one head through. A run that opens the database for more inputs deletes the counts first: a
// database holding them holds a current head_sums, and the viewer reads both without a scan.
constexpr const char* kSummaryCounts = "summary_counts";
std::string summary_sql() {
  // The indexes first: each statistic's sums then read head_stats_of_head in (layer, head) order, without a sort.
  return std::string(kIndexes) + " DELETE FROM head_sums; INSERT INTO head_sums " + sums_select() +
         "; INSERT OR REPLACE INTO meta(key, value) VALUES('" + kSummaryCounts + "', " + kCounts[0] + " || ' ' || " +
         kCounts[1] + " || ' ' || " + kCounts[2] + " || ' ' || " + kCounts[3] + ");";
}

std::unexpected<Error> sql_error(sqlite3* db, const fs::path& path, const std::string& what) {
  const int code = db ? sqlite3_extended_errcode(db) : SQLITE_ERROR;
  if (code == SQLITE_INTERRUPT) return fail(ErrorKind::Cancelled, what + ": cancelled", path.string());
  const ErrorKind kind = (code & 0xff) == SQLITE_NOTADB || (code & 0xff) == SQLITE_CORRUPT ? ErrorKind::Malformed
                         : (code & 0xff) == SQLITE_FULL || (code & 0xff) == SQLITE_IOERR ||
                                 (code & 0xff) == SQLITE_CANTOPEN || (code & 0xff) == SQLITE_READONLY
                             ? ErrorKind::Io
                             : ErrorKind::Malformed;
  return fail(kind, what + ": " + (db ? sqlite3_errmsg(db) : "out of memory"), path.string());
}

Result<void> exec(sqlite3* db, const fs::path& path, const char* sql) {
  if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) return sql_error(db, path, "SQLite");
  return {};
}

Result<Stmt> prepare(sqlite3* db, const fs::path& path, const char* sql) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr) != SQLITE_OK) {
    return sql_error(db, path, "SQLite");
  }
  return Stmt(s);
}

// Runs a statement that returns no rows (or ignores them), then resets it for the next binding.
bool step_done(sqlite3_stmt* s) {
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {}
  sqlite3_reset(s);
  sqlite3_clear_bindings(s);
  return rc == SQLITE_DONE;
}

void bind_text(sqlite3_stmt* s, int i, const std::string& t) {
  sqlite3_bind_text(s, i, t.data(), static_cast<int>(t.size()), SQLITE_TRANSIENT);
}
void bind_optional(sqlite3_stmt* s, int i, const std::optional<float>& v) {
  if (v) {
    sqlite3_bind_double(s, i, *v);
  } else {
    sqlite3_bind_null(s, i);
  }
}

// The counts head_sums covers, when meta holds them (see summary_sql).
Result<std::optional<CorpusCounts>> read_summary_counts(sqlite3* db, const fs::path& path) {
  auto stmt = prepare(db, path, (std::string("SELECT value FROM meta WHERE key = '") + kSummaryCounts + "'").c_str());
  if (!stmt) return std::unexpected(stmt.error());
  if (sqlite3_step(stmt->get()) != SQLITE_ROW) return std::optional<CorpusCounts>{};
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt->get(), 0));
  CorpusCounts c;
  if (!text || std::sscanf(text, "%" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64, &c.inputs, &c.empty, &c.invalid,
                           &c.truncated) != 4) {
    return fail(ErrorKind::Malformed, std::string("meta's ") + kSummaryCounts + " is not four counts", path.string());
  }
  return std::optional<CorpusCounts>{c};
}

std::vector<std::pair<std::string, std::string>> meta_rows(const CorpusMeta& m) {
  return {{"schema", kSchemaVersion},
          {"model", m.model},
          {"model_description", m.model_description},
          {"model_fingerprint", m.model_fingerprint},
          {"input", m.input},
          {"input_fingerprint", m.input_fingerprint},
          {"max_tokens", std::to_string(m.max_tokens)},
          {"top_k", std::to_string(m.top_k)},
          {"shard", m.shard}};
}

// The meta table of `schema` ("main" or an attached name), or why the file is not a corpus database.
Result<CorpusMeta> read_meta(sqlite3* db, const fs::path& path, const std::string& schema) {
  auto stmt = prepare(db, path, ("SELECT key, value FROM " + schema + ".meta").c_str());
  if (!stmt) {
    // Not SQLite at all, or a damaged file, says so ("file is not a database"); an SQLite file of something else
    // has no meta table.
    const int code = sqlite3_errcode(db);
    if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT) {
      return fail(ErrorKind::Malformed, std::string("not an SQLite database, or a damaged one: ") + sqlite3_errmsg(db),
                  path.string());
    }
    return fail(ErrorKind::Malformed, "not an AttnScope corpus database (no meta table)", path.string());
  }
  CorpusMeta m;
  std::string version;
  int rc;
  while ((rc = sqlite3_step(stmt->get())) == SQLITE_ROW) {
    const std::string key = reinterpret_cast<const char*>(sqlite3_column_text(stmt->get(), 0));
    const auto* text = sqlite3_column_text(stmt->get(), 1);
    const std::string value = text ? reinterpret_cast<const char*>(text) : "";
    if (key == "schema") version = value;
    if (key == "model") m.model = value;
    if (key == "model_description") m.model_description = value;
    if (key == "model_fingerprint") m.model_fingerprint = value;
    if (key == "input") m.input = value;
    if (key == "input_fingerprint") m.input_fingerprint = value;
    if (key == "max_tokens") m.max_tokens = std::atoi(value.c_str());
    if (key == "top_k") m.top_k = std::atoi(value.c_str());
    if (key == "shard") m.shard = value;
  }
  if (rc != SQLITE_DONE) return sql_error(db, path, "reading meta");
  if (version != kSchemaVersion) {
    return fail(ErrorKind::Unsupported,
                version.empty() ? "not an AttnScope corpus database (no schema version in meta)"
                                : "corpus database schema " + version + ", this AttnScope reads " + kSchemaVersion,
                path.string());
  }
  return m;
}

// The first field (but the shard, unless `with_shard`) in which a and b differ: "model_fingerprint: A against B".
std::optional<std::string> meta_difference(const CorpusMeta& a, const CorpusMeta& b, bool with_shard) {
  const auto ra = meta_rows(a), rb = meta_rows(b);
  for (std::size_t i = 0; i < ra.size(); ++i) {
    if (ra[i].first == "shard" && !with_shard) continue;
    if (ra[i].second != rb[i].second) return ra[i].first + " '" + ra[i].second + "' against '" + rb[i].second + "'";
  }
  return std::nullopt;
}

Result<Db> open_db(const fs::path& path, int flags) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  Db db(raw);
  if (rc != SQLITE_OK) return sql_error(db.get(), path, "cannot open");
  sqlite3_busy_timeout(db.get(), 5000);
  sqlite3_extended_result_codes(db.get(), 1);
  return db;
}

Result<void> write_meta(sqlite3* db, const fs::path& path, const CorpusMeta& meta) {
  auto put = prepare(db, path, "INSERT OR REPLACE INTO meta(key, value) VALUES(?1, ?2)");
  if (!put) return std::unexpected(put.error());
  for (const auto& [k, v] : meta_rows(meta)) {
    bind_text(put->get(), 1, k);
    bind_text(put->get(), 2, v);
    if (!step_done(put->get())) return sql_error(db, path, "writing meta");
  }
  return {};
}

}  // namespace

std::span<const std::string_view> corpus_statistics() { return kStatistics; }

struct CorpusDb::Impl {
  fs::path path;
  Db db;
  CorpusMeta meta;
  std::optional<CorpusCounts> summary;  // read only: the counts a current head_sums covers
  Stmt has, input, head, pair, skip;
};

CorpusDb::CorpusDb(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CorpusDb::CorpusDb(CorpusDb&&) noexcept = default;
CorpusDb& CorpusDb::operator=(CorpusDb&&) noexcept = default;
CorpusDb::~CorpusDb() {
  if (impl_) (void)close();
}

const CorpusMeta& CorpusDb::meta() const { return impl_->meta; }

void CorpusDb::interrupt_when(const std::atomic<bool>* flag) {
  const auto stop = [](void* f) { return static_cast<const std::atomic<bool>*>(f)->load() ? 1 : 0; };
  sqlite3_progress_handler(impl_->db.get(), flag ? 4096 : 0, flag ? +stop : nullptr,
                           const_cast<void*>(static_cast<const void*>(flag)));
}

Result<CorpusDb> CorpusDb::open_for_run(const fs::path& path, const CorpusMeta& meta) {
  std::error_code ec;
  const bool existed = fs::exists(path, ec);
  auto db = open_db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (!db) return std::unexpected(db.error());
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->db = std::move(*db);
  sqlite3* d = impl->db.get();
  // Write-ahead log: a commit per input without a sync per commit; a crash keeps every committed input.
  if (auto ok = exec(d, path, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"); !ok) {
    return std::unexpected(ok.error());
  }
  if (existed && fs::file_size(path, ec) > 0) {
    auto old = read_meta(d, path, "main");
    if (!old) return std::unexpected(old.error());
    if (auto diff = meta_difference(meta, *old, true)) {
      return fail(ErrorKind::Mismatch, "written by another run (" + *diff + "): resume it with the same options",
                  path.string());
    }
    // More inputs may come: head_sums is current again only when close() rewrites it.
    if (auto ok = exec(d, path, (std::string("DELETE FROM meta WHERE key = '") + kSummaryCounts + "'").c_str()); !ok) {
      return std::unexpected(ok.error());
    }
  } else {
    if (auto ok = exec(d, path, kSchema); !ok) return std::unexpected(ok.error());
    if (auto ok = write_meta(d, path, meta); !ok) return std::unexpected(ok.error());
  }
  impl->meta = meta;
  const std::array<std::pair<Stmt*, const char*>, 5> statements{{
      {&impl->has, "SELECT EXISTS(SELECT 1 FROM inputs WHERE id = ?1) OR EXISTS(SELECT 1 FROM skipped WHERE id = ?1)"},
      {&impl->input, "INSERT INTO inputs(id, text, pair, tokens, truncated) VALUES(?1, ?2, ?3, ?4, ?5)"},
      {&impl->head, "INSERT INTO head_stats VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"},
      {&impl->pair, "INSERT INTO top_pairs VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"},
      {&impl->skip, "INSERT INTO skipped(id, empty, reason) VALUES(?1, ?2, ?3)"},
  }};
  for (const auto& [stmt, sql] : statements) {
    auto s = prepare(d, path, sql);
    if (!s) return std::unexpected(s.error());
    *stmt = std::move(*s);
  }
  return CorpusDb(std::move(impl));
}

Result<CorpusDb> CorpusDb::open_read(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return fail(ErrorKind::Io, "no such file", path.string());
  auto db = open_db(path, SQLITE_OPEN_READONLY);
  if (!db) return std::unexpected(db.error());
  auto meta = read_meta(db->get(), path, "main");
  if (!meta) return std::unexpected(meta.error());
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->db = std::move(*db);
  impl->meta = std::move(*meta);
  auto summary = read_summary_counts(impl->db.get(), path);
  if (!summary) return std::unexpected(summary.error());
  impl->summary = *summary;
  return CorpusDb(std::move(impl));
}

Result<bool> CorpusDb::has(std::int64_t id) {
  sqlite3_stmt* s = impl_->has.get();
  if (!s) return fail(ErrorKind::Unsupported, "opened read only", impl_->path.string());
  sqlite3_bind_int64(s, 1, id);
  const int rc = sqlite3_step(s);
  const bool found = rc == SQLITE_ROW && sqlite3_column_int(s, 0) != 0;
  sqlite3_reset(s);
  if (rc != SQLITE_ROW) return sql_error(impl_->db.get(), impl_->path, "looking up an input");
  return found;
}

Result<void> CorpusDb::add(const analysis::CorpusRecord& r) {
  sqlite3* d = impl_->db.get();
  if (!impl_->input) return fail(ErrorKind::Unsupported, "opened read only", impl_->path.string());
  if (auto ok = exec(d, impl_->path, "BEGIN"); !ok) return ok;
  auto failed = [&](const char* what) {
    auto e = sql_error(d, impl_->path, what);
    sqlite3_exec(d, "ROLLBACK", nullptr, nullptr, nullptr);
    return e;
  };
  sqlite3_stmt* in = impl_->input.get();
  sqlite3_bind_int64(in, 1, r.id);
  bind_text(in, 2, r.text);
  if (r.pair.empty()) {
    sqlite3_bind_null(in, 3);
  } else {
    bind_text(in, 3, r.pair);
  }
  sqlite3_bind_int(in, 4, r.tokens);
  sqlite3_bind_int(in, 5, r.truncated);
  if (!step_done(in)) return failed("writing input");
  sqlite3_stmt* h = impl_->head.get();
  for (const auto& row : r.heads) {
    sqlite3_bind_int64(h, 1, r.id);
    sqlite3_bind_int(h, 2, row.layer);
    sqlite3_bind_int(h, 3, row.head);
    const float values[] = {row.entropy, row.mean_distance, row.first_token_mass, row.max_weight, row.previous_token};
    for (int i = 0; i < 5; ++i) sqlite3_bind_double(h, 4 + i, values[i]);
    bind_optional(h, 9, row.duplicate_token);
    bind_optional(h, 10, row.induction);
    if (!step_done(h)) return failed("writing head statistics");
  }
  sqlite3_stmt* p = impl_->pair.get();
  auto token = [&](int i) {
    return i >= 0 && static_cast<std::size_t>(i) < r.token_text.size() ? r.token_text[static_cast<std::size_t>(i)]
                                                                       : std::string();
  };
  for (const auto& pair : r.pairs) {
    const int ints[] = {pair.layer, pair.head, pair.rank, pair.query, pair.key};
    sqlite3_bind_int64(p, 1, r.id);
    for (int i = 0; i < 5; ++i) sqlite3_bind_int(p, 2 + i, ints[i]);
    sqlite3_bind_double(p, 7, pair.weight);
    bind_text(p, 8, token(pair.query));
    bind_text(p, 9, token(pair.key));
    if (!step_done(p)) return failed("writing top pairs");
  }
  if (auto ok = exec(d, impl_->path, "COMMIT"); !ok) return failed("committing");
  return {};
}

Result<void> CorpusDb::add(const analysis::SkippedLine& line) {
  sqlite3_stmt* s = impl_->skip.get();
  if (!s) return fail(ErrorKind::Unsupported, "opened read only", impl_->path.string());
  sqlite3_bind_int64(s, 1, line.id);
  sqlite3_bind_int(s, 2, line.empty ? 1 : 0);
  bind_text(s, 3, line.reason);
  if (!step_done(s)) return sql_error(impl_->db.get(), impl_->path, "writing a skipped line");
  return {};
}

Result<CorpusCounts> CorpusDb::counts() {
  if (impl_->summary) return *impl_->summary;
  auto s = prepare(
      impl_->db.get(), impl_->path,
      (std::string("SELECT ") + kCounts[0] + ", " + kCounts[1] + ", " + kCounts[2] + ", " + kCounts[3]).c_str());
  if (!s) return std::unexpected(s.error());
  if (sqlite3_step(s->get()) != SQLITE_ROW) return sql_error(impl_->db.get(), impl_->path, "counting");
  CorpusCounts c;
  c.inputs = sqlite3_column_int64(s->get(), 0);
  c.empty = sqlite3_column_int64(s->get(), 1);
  c.invalid = sqlite3_column_int64(s->get(), 2);
  c.truncated = sqlite3_column_int64(s->get(), 3);
  return c;
}

Result<std::vector<HeadSummary>> CorpusDb::head_summary(std::string_view statistic) {
  sqlite3* d = impl_->db.get();
  if (!is_statistic(statistic)) {
    std::string names;
    for (const auto n : kStatistics) names += (names.empty() ? "" : ", ") + std::string(n);
    return fail(ErrorKind::OutOfRange, "no statistic '" + std::string(statistic) + "' (there are " + names + ")",
                impl_->path.string());
  }
  // head_sums is current when meta holds the counts it covers (a run stopped before close has not written them).
  const bool stored = impl_->summary.has_value();
  const std::string sql =
      stored ? "SELECT layer, head, statistic, n, sum, sum_sq, min, max FROM head_sums WHERE statistic = '" +
                   std::string(statistic) + "' ORDER BY layer, head"
             : sums_select(statistic) + " ORDER BY 1, 2";
  auto rows = prepare(d, impl_->path, sql.c_str());
  if (!rows) return std::unexpected(rows.error());
  std::vector<HeadSummary> out;
  int rc;
  while ((rc = sqlite3_step(rows->get())) == SQLITE_ROW) {
    sqlite3_stmt* r = rows->get();
    HeadSummary h;
    h.layer = sqlite3_column_int(r, 0);
    h.head = sqlite3_column_int(r, 1);
    h.n = sqlite3_column_int64(r, 3);
    if (h.n > 0) {
      const double n = static_cast<double>(h.n);
      h.mean = sqlite3_column_double(r, 4) / n;
      h.sd = std::sqrt(std::max(0.0, sqlite3_column_double(r, 5) / n - h.mean * h.mean));
      h.min = sqlite3_column_double(r, 6);
      h.max = sqlite3_column_double(r, 7);
    }
    out.push_back(h);
  }
  if (rc != SQLITE_DONE) return sql_error(d, impl_->path, "reading head sums");
  return out;
}

Result<std::vector<float>> CorpusDb::head_values(int layer, int head, std::string_view statistic) {
  if (!is_statistic(statistic)) {
    return fail(ErrorKind::OutOfRange, "no statistic '" + std::string(statistic) + "'", impl_->path.string());
  }
  const std::string c(statistic);
  auto rows = prepare(
      impl_->db.get(), impl_->path,
      ("SELECT " + c + " FROM head_stats WHERE layer = ?1 AND head = ?2 AND " + c + " IS NOT NULL ORDER BY input_id")
          .c_str());
  if (!rows) return std::unexpected(rows.error());
  sqlite3_bind_int(rows->get(), 1, layer);
  sqlite3_bind_int(rows->get(), 2, head);
  std::vector<float> out;
  int rc;
  while ((rc = sqlite3_step(rows->get())) == SQLITE_ROW) {
    out.push_back(static_cast<float>(sqlite3_column_double(rows->get(), 0)));
  }
  if (rc != SQLITE_DONE) return sql_error(impl_->db.get(), impl_->path, "reading a head's values");
  return out;
}

namespace {

std::string column_text(sqlite3_stmt* s, int i) {
  const auto* t = sqlite3_column_text(s, i);
  return t ? reinterpret_cast<const char*>(t) : std::string();
}

// The rows of a search: input_id, text, pair, value, query, key, weight, query_token, key_token.
Result<std::vector<CorpusHit>> read_hits(sqlite3* db, const fs::path& path, sqlite3_stmt* s) {
  std::vector<CorpusHit> out;
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    CorpusHit h;
    h.input = sqlite3_column_int64(s, 0);
    h.text = column_text(s, 1);
    h.pair = column_text(s, 2);
    h.value = sqlite3_column_double(s, 3);
    if (sqlite3_column_type(s, 4) != SQLITE_NULL) {
      h.query = sqlite3_column_int(s, 4);
      h.key = sqlite3_column_int(s, 5);
      h.weight = static_cast<float>(sqlite3_column_double(s, 6));
      h.query_token = column_text(s, 7);
      h.key_token = column_text(s, 8);
    }
    out.push_back(std::move(h));
  }
  if (rc != SQLITE_DONE) return sql_error(db, path, "searching");
  return out;
}

Result<std::vector<CorpusText>> read_texts(sqlite3* db, const fs::path& path, sqlite3_stmt* s) {
  std::vector<CorpusText> out;
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    out.push_back(CorpusText{sqlite3_column_int64(s, 0), column_text(s, 1), column_text(s, 2)});
  }
  if (rc != SQLITE_DONE) return sql_error(db, path, "reading inputs");
  return out;
}

}  // namespace

Result<std::vector<CorpusHit>> CorpusDb::strongest_inputs(int layer, int head, CorpusSearch by, int limit) {
  // The highest weight on a pair is the head's strongest top pair, not max_weight: a causal model's row 0 has one key
  // of weight 1, which every input's max_weight holds and top_pairs leaves out. The `limit` inputs are chosen first
  // (from an index: kIndexes), then their texts and strongest pairs joined.
  const std::string order = by == CorpusSearch::LowEntropy ? "ASC" : "DESC";
  const std::string column = by == CorpusSearch::SinkMass ? "first_token_mass" : "entropy";
  const std::string chosen =
      by == CorpusSearch::MaxWeight
          ? "SELECT input_id, weight AS v FROM top_pairs WHERE layer = ?1 AND head = ?2 AND rank = 0 ORDER BY weight "
            "DESC, input_id LIMIT ?3"
          : "SELECT input_id, " + column + " AS v FROM head_stats WHERE layer = ?1 AND head = ?2 AND " + column +
                " IS NOT NULL ORDER BY " + column + " " + order + ", input_id LIMIT ?3";
  const std::string sql =
      "SELECT s.input_id, i.text, i.pair, s.v, p.query, p.key, p.weight, p.query_token, p.key_token FROM (" + chosen +
      ") s JOIN inputs i ON i.id = s.input_id LEFT JOIN top_pairs p ON p.input_id = s.input_id AND p.layer = ?1 AND "
      "p.head = ?2 AND p.rank = 0 ORDER BY s.v " +
      order + ", s.input_id";
  auto rows = prepare(impl_->db.get(), impl_->path, sql.c_str());
  if (!rows) return std::unexpected(rows.error());
  sqlite3_bind_int(rows->get(), 1, layer);
  sqlite3_bind_int(rows->get(), 2, head);
  sqlite3_bind_int(rows->get(), 3, std::max(0, limit));
  return read_hits(impl_->db.get(), impl_->path, rows->get());
}

Result<std::vector<CorpusHit>> CorpusDb::pairs_from_token(int layer, int head, std::string_view token, int limit) {
  // ltrim's second argument is a set of characters (UTF-8 aware): a space, U+2581 (SentencePiece), U+0120 (GPT-2).
  auto rows =
      prepare(impl_->db.get(), impl_->path,
              "SELECT p.input_id, i.text, i.pair, p.weight, p.query, p.key, p.weight, p.query_token, "
              "p.key_token FROM top_pairs p JOIN inputs i ON i.id = p.input_id WHERE p.layer = ?1 AND "
              "p.head = ?2 AND lower(ltrim(p.query_token, ' \u2581\u0120')) = lower(ltrim(?3, ' \u2581\u0120')) "
              "ORDER BY p.weight DESC, p.input_id, p.rank LIMIT ?4");
  if (!rows) return std::unexpected(rows.error());
  sqlite3_bind_int(rows->get(), 1, layer);
  sqlite3_bind_int(rows->get(), 2, head);
  sqlite3_bind_text(rows->get(), 3, token.data(), static_cast<int>(token.size()), SQLITE_TRANSIENT);
  sqlite3_bind_int(rows->get(), 4, std::max(0, limit));
  return read_hits(impl_->db.get(), impl_->path, rows->get());
}

Result<std::optional<CorpusText>> CorpusDb::input(std::int64_t id) {
  auto rows = prepare(impl_->db.get(), impl_->path, "SELECT id, text, pair FROM inputs WHERE id = ?1");
  if (!rows) return std::unexpected(rows.error());
  sqlite3_bind_int64(rows->get(), 1, id);
  auto texts = read_texts(impl_->db.get(), impl_->path, rows->get());
  if (!texts) return std::unexpected(texts.error());
  if (texts->empty()) return std::optional<CorpusText>();
  return std::optional<CorpusText>(std::move(texts->front()));
}

Result<std::vector<CorpusText>> CorpusDb::sample_inputs(int n) {
  auto ids = prepare(impl_->db.get(), impl_->path, "SELECT id FROM inputs ORDER BY id");
  if (!ids) return std::unexpected(ids.error());
  std::vector<std::int64_t> all;
  int rc;
  while ((rc = sqlite3_step(ids->get())) == SQLITE_ROW) all.push_back(sqlite3_column_int64(ids->get(), 0));
  if (rc != SQLITE_DONE) return sql_error(impl_->db.get(), impl_->path, "reading inputs");
  std::vector<std::int64_t> picked;
  const std::size_t count = all.size(), want = static_cast<std::size_t>(std::max(0, n));
  if (want >= count) {
    picked = all;
  } else {
    for (std::size_t i = 0; i < want; ++i) picked.push_back(all[i * count / want]);
  }
  std::vector<CorpusText> out;
  for (const std::int64_t id : picked) {
    auto one = input(id);
    if (!one) return std::unexpected(one.error());
    if (*one) out.push_back(std::move(**one));
  }
  return out;
}

Result<void> CorpusDb::close() {
  if (!impl_ || !impl_->db) return {};
  impl_->has.reset();
  impl_->input.reset();
  impl_->head.reset();
  impl_->pair.reset();
  impl_->skip.reset();
  Result<void> ok;
  if (!sqlite3_db_readonly(impl_->db.get(), "main")) {
    ok = exec(impl_->db.get(), impl_->path, ("BEGIN; " + summary_sql() + " COMMIT;").c_str());
    if (ok) ok = exec(impl_->db.get(), impl_->path, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;");
  }
  impl_->db.reset();
  return ok;
}

namespace {

// Shard `path` attached as "s" to the merge `d`, checked (meta, overlaps) and copied in one transaction.
Result<CorpusMeta> merge_one(sqlite3* d, const fs::path& out, const fs::path& path, const CorpusMeta* first) {
  auto attach = prepare(d, out, "ATTACH DATABASE ?1 AS s");
  if (!attach) return std::unexpected(attach.error());
  const std::string uri = path.string();
  bind_text(attach->get(), 1, uri);
  if (!step_done(attach->get())) return sql_error(d, path, "not an AttnScope corpus database");
  attach->reset();
  auto detach = [&] { sqlite3_exec(d, "DETACH DATABASE s", nullptr, nullptr, nullptr); };
  auto meta = read_meta(d, path, "s");
  if (!meta) {
    detach();
    return meta;
  }
  if (first) {
    if (auto diff = meta_difference(*meta, *first, false)) {
      detach();
      return fail(ErrorKind::Mismatch, "not a shard of the same run as the first file (" + *diff + ")", path.string());
    }
  }
  auto overlap = prepare(d, out,
                         "SELECT min(id) FROM (SELECT id FROM s.inputs UNION ALL SELECT id FROM s.skipped) "
                         "WHERE id IN (SELECT id FROM main.inputs UNION ALL SELECT id FROM main.skipped)");
  if (!overlap) {
    detach();
    return std::unexpected(overlap.error());
  }
  if (sqlite3_step(overlap->get()) == SQLITE_ROW && sqlite3_column_type(overlap->get(), 0) != SQLITE_NULL) {
    const auto id = sqlite3_column_int64(overlap->get(), 0);
    overlap->reset();
    detach();
    return fail(ErrorKind::Mismatch, "holds line " + std::to_string(id) + ", which an earlier shard holds too",
                path.string());
  }
  overlap->reset();
  auto copied = exec(d, out,
                     "BEGIN; INSERT INTO main.inputs SELECT * FROM s.inputs; INSERT INTO main.head_stats SELECT * FROM "
                     "s.head_stats; INSERT INTO main.top_pairs SELECT * FROM s.top_pairs; INSERT INTO main.skipped "
                     "SELECT * FROM s.skipped; COMMIT;");
  if (!copied) sqlite3_exec(d, "ROLLBACK", nullptr, nullptr, nullptr);
  detach();
  if (!copied) return std::unexpected(copied.error());
  return meta;
}

}  // namespace

Result<MergeReport> merge_corpus(const fs::path& out, const std::vector<fs::path>& shards,
                                 const std::function<void(int, int)>& progress) {
  if (shards.empty()) return fail(ErrorKind::OutOfRange, "merge: no shard files given", out.string());
  std::error_code ec;
  for (const auto& s : shards) {
    if (fs::exists(out, ec) && fs::equivalent(out, s, ec)) {
      return fail(ErrorKind::OutOfRange, "merge: the output is one of the shards", out.string());
    }
    if (!fs::is_regular_file(s, ec)) return fail(ErrorKind::Io, "no such file", s.string());
  }
  const fs::path partial = fs::path(out.string() + ".partial-" + std::to_string(::getpid()));
  fs::remove(partial, ec);
  MergeReport report;
  {
    auto db = open_db(partial, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    if (!db) return std::unexpected(db.error());
    sqlite3* d = db->get();
    auto cleanup = [&](Error e) {
      db->reset();
      fs::remove(partial, ec);
      return std::unexpected(std::move(e));
    };
    if (auto ok = exec(d, partial, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"); !ok) return cleanup(ok.error());
    if (auto ok = exec(d, partial, kSchema); !ok) return cleanup(ok.error());
    std::optional<CorpusMeta> first;
    for (const auto& s : shards) {
      auto meta = merge_one(d, partial, s, first ? &*first : nullptr);
      if (!meta) return cleanup(meta.error());
      if (!first) first = *meta;
      ++report.files;
      if (progress) progress(report.files, static_cast<int>(shards.size()));
    }
    first->shard = "merged from " + std::to_string(shards.size()) + (shards.size() == 1 ? " file" : " files");
    if (auto ok = write_meta(d, partial, *first); !ok) return cleanup(ok.error());
    if (auto ok = exec(d, partial, summary_sql().c_str()); !ok) return cleanup(ok.error());
  }
  {
    auto merged = CorpusDb::open_read(partial);
    if (!merged) return std::unexpected(merged.error());
    auto counts = merged->counts();
    if (!counts) return std::unexpected(counts.error());
    report.counts = *counts;
  }
  fs::rename(partial, out, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove(partial, ec);
    return fail(ErrorKind::Io, "cannot write: " + why, out.string());
  }
  return report;
}

}  // namespace attn::io
