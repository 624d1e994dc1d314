// The Corpus tab's section of the session file (issue 46): the corpus database, the model its re-runs and embeddings
// use (empty: the one the database names), the statistic of the heads map, the head in view, the search and the
// embedding's sample.
#pragma once

#include "attn/error.h"
#include "attn/io/session.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attn::ui {

struct CorpusSection {
  enum class Search : std::uint8_t { MaxWeight, LowEntropy, SinkMass };
  enum class Colour : std::uint8_t { Position, Kind };
  static constexpr int kMaxSample = 500;
  std::string database;  // a corpus database (*.sqlite); empty: none
  std::string model;     // overrides the database's model; empty: the database's
  std::string statistic = "entropy";
  int layer = 0, head = 0;
  Search search = Search::MaxWeight;
  std::string token;  // the token search's text
  int sample = 20;    // the embedding's inputs
  Colour colour = Colour::Position;
  friend bool operator==(const CorpusSection&, const CorpusSection&) = default;
};

// "max_weight", "entropy", "first_token_mass": the session's names of the searches.
inline constexpr std::array<std::string_view, 3> kCorpusSearchNames = {"max_weight", "entropy", "first_token_mass"};

nlohmann::ordered_json to_json(const CorpusSection& section);
// The section's object (`j`, at "tabs.corpus"); warnings for the keys it does not know.
Result<CorpusSection> read_corpus_section(const io::SessionReader& reader, const nlohmann::json& j,
                                          std::vector<Error>& warnings);

}  // namespace attn::ui
