// AttentionTrace: every attention map a run produced, labelled by stage, layer and head.
// The UI only ever draws traces; mechanisms record into them through a TraceTag.
#pragma once

#include "attn/core.h"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attn {

enum class Stage { Encoder, Decoder, Cross, Glimpse, Pool, Mechanism };
std::string_view to_string(Stage stage);

// Byte span [begin, end) of the input a row or column came from.
struct Span {
  std::int32_t begin = 0;
  std::int32_t end = 0;
  friend bool operator==(const Span&, const Span&) = default;
};

// How a map too big to draw cell for cell was reduced: bins of source cells, each drawn as its maximum
// (so that one sharp weight is never averaged away) or its mean.
enum class Pool { Max, Mean };
// Bin k of n source cells pooled into m bins covers [pool_bin_start(k, n, m), pool_bin_start(k + 1, n, m)):
// every bin holds floor(n / m) or ceil(n / m) cells.
Index pool_bin_start(Index k, Index n, Index m);

// A rows x cols map read one row at a time (read_row(r, out) writes cols floats) reduced to out_rows x out_cols
// bins of pool_bin_start; a bin with a NaN cell is NaN. Reads each source row once.
Matrix pool_rows(Index rows, Index cols, Index out_rows, Index out_cols, Pool pool,
                 const std::function<void(Index, float*)>& read_row);
// Each bin labelled by its first token; empty when `source` does not have n labels.
std::vector<std::string> pooled_labels(const std::vector<std::string>& source, Index n, Index bins);

struct MapPooling {
  Index rows = 0;  // the source map's shape
  Index cols = 0;
  Pool pool = Pool::Max;
  Labels row_tokens;  // the source's labels (a pooled map's own labels name each bin by its first token)
  Labels col_tokens;
};

struct AttentionMap {
  Stage stage = Stage::Mechanism;
  int layer = 0;
  int head = -1;                     // -1: the map is not one head of several
  std::string name;                  // what the map is, e.g. "weights", "hop 2", "alpha (column softmax)"
  Matrix weights;                    // rows = queries, columns = keys
  Labels row_labels;                 // size rows() or empty
  Labels col_labels;                 // size cols() or empty
  std::string row_axis = "queries";  // what the rows are ("document", "heads", "classes", ...)
  std::string col_axis = "keys";
  // What a cell holds, as the colour bar names it: "weight" (attention weights), or "score", "forget gate",
  // "activation", ... for maps that are not attention weights (drawn on their own range, never on 0..1).
  std::string quantity = "weight";
  std::vector<Span> row_spans;
  std::vector<Span> col_spans;
  // Set when `weights` are bins of a bigger map (LayeredTrace::map with a size limit); rows and columns
  // then index bins, and the spans are empty.
  std::optional<MapPooling> pooled;

  // "name · layer 1 · head 3" as shown in selectors.
  std::string title() const;
};

// A copy of `map` reduced to at most max_side x max_side bins, with AttentionMap::pooled saying how (its
// source shape and tokens, each bin labelled by its first token); nullopt when the map already fits.
std::optional<AttentionMap> pooled_map(const AttentionMap& map, Index max_side, Pool pool = Pool::Max);
// The same with a limit per axis: at most max_rows x max_cols bins (a view's cells in its pixels).
std::optional<AttentionMap> pooled_map(const AttentionMap& map, Index max_rows, Index max_cols, Pool pool);

class AttentionTrace {
 public:
  AttentionMap& add(AttentionMap map);
  const std::vector<AttentionMap>& maps() const { return maps_; }
  std::vector<AttentionMap>& maps() { return maps_; }
  std::size_t size() const { return maps_.size(); }
  bool empty() const { return maps_.empty(); }
  void clear() { maps_.clear(); }
  // First map with this stage/layer/head (and name, when given).
  const AttentionMap* find(Stage stage, int layer, int head, std::string_view name = {}) const;

 private:
  std::vector<AttentionMap> maps_;
};

// Where a mechanism records its weights. A default TraceTag records nothing.
struct TraceTag {
  AttentionTrace* trace = nullptr;
  Stage stage = Stage::Mechanism;
  int layer = 0;
  std::string name = "weights";
  const Labels* rows = nullptr;  // optional axis labels copied into recorded maps
  const Labels* cols = nullptr;
  std::string row_axis = "queries";  // axis titles copied into recorded maps
  std::string col_axis = "keys";

  bool enabled() const { return trace != nullptr; }
  // Records `weights` as head `head` (-1 for none) with the name `name` + suffix (when non-empty).
  void record(const Matrix& weights, int head = -1, std::string_view suffix = {}) const;
  // A copy of this tag with another name (keeps trace, stage, layer and labels).
  TraceTag named(std::string new_name) const;
  TraceTag with_labels(const Labels* new_rows, const Labels* new_cols) const;
  TraceTag with_axes(std::string new_row_axis, std::string new_col_axis) const;
};

}  // namespace attn
