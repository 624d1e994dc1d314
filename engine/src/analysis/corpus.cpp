// The corpus run's inputs and statistics (attn/analysis/corpus.h).
#include "attn/analysis/corpus.h"

#include "attn/analysis/attention_analysis.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <system_error>
#include <unordered_map>

namespace attn::analysis {

namespace fs = std::filesystem;

std::string Shard::to_string() const { return std::to_string(index) + "/" + std::to_string(count); }

Result<Shard> parse_shard(std::string_view spec) {
  const std::string shown = "--shard " + std::string(spec);
  const auto slash = spec.find('/');
  auto number = [](std::string_view s, int& out) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc{} && end == s.data() + s.size() && !s.empty();
  };
  Shard shard;
  if (slash == std::string_view::npos || !number(spec.substr(0, slash), shard.index) ||
      !number(spec.substr(slash + 1), shard.count)) {
    return fail(ErrorKind::Malformed, shown + ": expected i/N, two whole numbers with 0 <= i < N (e.g. 0/4)");
  }
  if (shard.count < 1 || shard.index < 0 || shard.index >= shard.count) {
    return fail(ErrorKind::OutOfRange,
                shown + ": shard i of N needs N >= 1 and 0 <= i < N (the shards of 4 are 0/4, 1/4, 2/4 and 3/4)");
  }
  return shard;
}

// ---- the corpus file ----

Result<CorpusReader> CorpusReader::open(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return fail(ErrorKind::Io, "a folder, not a corpus file", path.string());
  const auto size = fs::file_size(path, ec);
  if (ec) return fail(ErrorKind::Io, "cannot read: " + ec.message(), path.string());
  CorpusReader reader;
  reader.file_.reset(std::fopen(path.c_str(), "rb"));
  if (!reader.file_) return fail(ErrorKind::Io, std::string("cannot open: ") + std::strerror(errno), path.string());
  reader.path_ = path;
  reader.size_ = size;
  const std::string ext = path.extension().string();
  reader.json_ = ext == ".jsonl" || ext == ".ndjson" || ext == ".json";
  return reader;
}

CorpusReader::Line CorpusReader::read_line(std::string& line) {
  line.clear();
  bool any = false, too_long = false;
  for (int c; (c = getc_unlocked(file_.get())) != EOF;) {
    ++offset_;
    any = true;
    if (c == '\n') break;
    if (line.size() < kMaxLineBytes) {
      line.push_back(static_cast<char>(c));
    } else {
      too_long = true;
    }
  }
  if (std::ferror(file_.get())) {
    error_ = Error{path_.string(), static_cast<std::int64_t>(offset_), next_id_ + 1, "read error", ErrorKind::Io};
    return Line::End;
  }
  if (!any) return Line::End;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return too_long ? Line::TooLong : Line::Read;
}

namespace {

bool blank(std::string_view s) { return s.find_first_not_of(" \t\r\f\v") == std::string_view::npos; }

// A JSON line's text and pair, or why not.
std::optional<std::string> read_json(const std::string& line, CorpusInput& input) {
  const auto value = nlohmann::json::parse(line, nullptr, false);
  if (value.is_discarded()) return "not JSON";
  if (!value.is_object()) return "not a JSON object ({\"text\": ...})";
  const auto text = value.find("text");
  if (text == value.end()) return "no \"text\"";
  if (!text->is_string()) return "\"text\" is not a string";
  input.text = text->get<std::string>();
  if (const auto pair = value.find("pair"); pair != value.end()) {
    if (!pair->is_string()) return "\"pair\" is not a string";
    input.pair = pair->get<std::string>();
  }
  if (blank(input.text)) return "\"text\" is empty";
  return std::nullopt;
}

}  // namespace

std::optional<CorpusInput> CorpusReader::next(const Shard& shard, std::vector<SkippedLine>& skipped) {
  std::string line;
  for (;;) {
    const Line got = read_line(line);
    if (got == Line::End) return std::nullopt;
    const std::int64_t id = next_id_++;
    if (!shard.takes(id)) continue;
    if (got == Line::TooLong) {
      skipped.push_back({id, false, "longer than " + std::to_string(kMaxLineBytes >> 20) + " MiB"});
      continue;
    }
    if (blank(line)) {
      skipped.push_back({id, true, "empty"});
      continue;
    }
    CorpusInput input;
    input.id = id;
    if (!json_) {
      input.text = std::move(line);
      return input;
    }
    if (auto why = read_json(line, input)) {
      skipped.push_back({id, false, std::move(*why)});
      continue;
    }
    return input;
  }
}

// ---- statistics ----

namespace {

// Each token's earlier occurrences: previous[i] = the latest j < i with ids[j] == ids[i], or -1.
std::vector<int> previous_occurrence(const std::vector<int>& ids) {
  std::vector<int> previous(ids.size(), -1);
  std::unordered_map<int, int> last;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto [it, fresh] = last.try_emplace(ids[i], static_cast<int>(i));
    if (!fresh) {
      previous[i] = it->second;
      it->second = static_cast<int>(i);
    }
  }
  return previous;
}

// previous_token, duplicate_token and induction of one head (row by row, as head_statistics reads maps).
void detector_scores(const HeadStack& maps, int head, const std::vector<int>& previous, CorpusHeadRow& out) {
  const Index rows = maps.rows(), cols = maps.cols();
  std::vector<float> row(static_cast<std::size_t>(cols));
  double prev = 0, dup = 0, ind = 0;
  Index prev_rows = 0, repeat_rows = 0;
  for (Index i = 0; i < rows; ++i) {
    maps.read_row(head, i, row.data());
    if (i >= 1 && i - 1 < cols) {
      prev += row[static_cast<std::size_t>(i - 1)];
      ++prev_rows;
    }
    if (static_cast<std::size_t>(i) >= previous.size() || previous[static_cast<std::size_t>(i)] < 0) continue;
    ++repeat_rows;
    for (int j = previous[static_cast<std::size_t>(i)]; j >= 0; j = previous[static_cast<std::size_t>(j)]) {
      if (j < cols) dup += row[static_cast<std::size_t>(j)];
      if (j + 1 < i && j + 1 < cols) ind += row[static_cast<std::size_t>(j + 1)];
    }
  }
  out.previous_token = prev_rows ? static_cast<float>(prev / static_cast<double>(prev_rows)) : 0.0f;
  if (repeat_rows) {
    out.duplicate_token = static_cast<float>(dup / static_cast<double>(repeat_rows));
    out.induction = static_cast<float>(ind / static_cast<double>(repeat_rows));
  }
}

Stage self_stage(const LayeredTrace& trace) {
  return trace.layers.empty() ? Stage::Encoder : trace.layers.front().stage;
}

}  // namespace

std::vector<CorpusHeadRow> corpus_head_rows(const LayeredTrace& trace, const std::vector<int>& ids) {
  StatsOptions options;
  options.stage = self_stage(trace);
  const std::vector<HeadStats> stats = head_statistics(trace, options);
  const std::vector<int> previous = previous_occurrence(ids);
  std::vector<CorpusHeadRow> out(stats.size());
#pragma omp parallel for schedule(dynamic)
  for (std::size_t k = 0; k < stats.size(); ++k) {
    const HeadStats& s = stats[k];
    CorpusHeadRow& r = out[k];
    r.layer = s.layer;
    r.head = s.head;
    r.entropy = s.entropy;
    r.mean_distance = s.mean_distance;
    r.first_token_mass = s.first_mass;
    r.max_weight = s.max_weight;
    if (const LayerAttention* layer = trace.find(options.stage, s.layer)) {
      detector_scores(layer->maps, s.head, previous, r);
    }
  }
  return out;
}

std::vector<CorpusPair> corpus_top_pairs(const LayeredTrace& trace, bool causal, int top_k) {
  std::vector<CorpusPair> out;
  if (top_k <= 0) return out;
  const Stage stage = self_stage(trace);
  for (const LayerAttention& layer : trace.layers) {
    if (layer.stage != stage) continue;
    const HeadStack& maps = layer.maps;
    std::vector<float> row(static_cast<std::size_t>(maps.cols()));
    for (int h = 0; h < maps.heads(); ++h) {
      std::vector<CorpusPair> best;  // kept sorted, strongest first, at most top_k
      auto weaker = [](const CorpusPair& a, const CorpusPair& b) { return a.weight > b.weight; };
      for (Index i = causal ? 1 : 0; i < maps.rows(); ++i) {
        maps.read_row(h, i, row.data());
        const Index visible = causal ? std::min(i + 1, maps.cols()) : maps.cols();
        if (visible < 2) continue;
        for (Index j = 0; j < visible; ++j) {
          const float w = row[static_cast<std::size_t>(j)];
          if (static_cast<int>(best.size()) == top_k && !(w > best.back().weight)) continue;
          const CorpusPair p{layer.layer, h, 0, static_cast<int>(i), static_cast<int>(j), w};
          best.insert(std::upper_bound(best.begin(), best.end(), p, weaker), p);
          if (static_cast<int>(best.size()) > top_k) best.pop_back();
        }
      }
      for (std::size_t r = 0; r < best.size(); ++r) {
        best[r].rank = static_cast<int>(r);
        out.push_back(best[r]);
      }
    }
  }
  return out;
}

// ---- fingerprints ----

namespace {

constexpr std::uint64_t kFnvBasis = 1469598103934665603ULL, kFnvPrime = 1099511628211ULL;

void fnv(std::uint64_t& h, const unsigned char* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * kFnvPrime;
}

Result<void> hash_file(const fs::path& path, std::uint64_t& h) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return fail(ErrorKind::Io, std::string("cannot open: ") + std::strerror(errno), path.string());
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) return fail(ErrorKind::Io, "cannot read: " + ec.message(), path.string());
  const std::string name = path.filename().string() + "\n" + std::to_string(size) + "\n";
  fnv(h, reinterpret_cast<const unsigned char*>(name.data()), name.size());
  constexpr std::size_t kEnd = 64 << 10;
  std::vector<unsigned char> buffer(kEnd);
  for (const std::uintmax_t at : {std::uintmax_t{0}, size > kEnd ? size - kEnd : 0}) {
    if (std::fseek(f.get(), static_cast<long>(at), SEEK_SET) != 0) {
      return fail(ErrorKind::Io, "cannot seek", path.string(), static_cast<std::int64_t>(at));
    }
    const std::size_t got = std::fread(buffer.data(), 1, kEnd, f.get());
    fnv(h, buffer.data(), got);
  }
  return {};
}

}  // namespace

Result<std::string> file_fingerprint(const fs::path& path) {
  std::error_code ec;
  std::vector<fs::path> files;
  if (fs::is_directory(path, ec)) {
    for (const auto& entry : fs::directory_iterator(path, ec)) {
      if (entry.is_regular_file(ec)) files.push_back(entry.path());
    }
    if (ec) return fail(ErrorKind::Io, "cannot list: " + ec.message(), path.string());
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(path);
  }
  std::uint64_t h = kFnvBasis;
  for (const fs::path& f : files) {
    if (auto hashed = hash_file(f, h); !hashed) return std::unexpected(hashed.error());
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return std::to_string(files.size()) + (files.size() == 1 ? " file, " : " files, ") + hex;
}

}  // namespace attn::analysis
