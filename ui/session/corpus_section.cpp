#include "session/corpus_section.h"

#include "attn/io/corpus_db.h"
#include "core/try.h"

#include <algorithm>

namespace attn::ui {

namespace {
using ojson = nlohmann::ordered_json;
constexpr std::array<std::string_view, 2> kColourNames = {"position", "kind"};
}  // namespace

ojson to_json(const CorpusSection& c) {
  return {{"database", c.database},
          {"model", c.model},
          {"statistic", c.statistic},
          {"layer", c.layer},
          {"head", c.head},
          {"search", std::string(kCorpusSearchNames[static_cast<std::size_t>(c.search)])},
          {"token", c.token},
          {"sample", c.sample},
          {"colour", std::string(kColourNames[static_cast<std::size_t>(c.colour)])}};
}

Result<CorpusSection> read_corpus_section(const io::SessionReader& reader, const nlohmann::json& j,
                                          std::vector<Error>& warnings) {
  io::SessionMembers m(reader, j, "tabs.corpus");
  CorpusSection s;
  ATTN_TRY(m.text("database", io::kMaxSessionText, s.database, true));
  ATTN_TRY(m.text("model", io::kMaxSessionText, s.model, true));
  const auto statistics = io::corpus_statistics();
  std::size_t statistic = 0;
  if (m.find("statistic")) {
    ATTN_TRY(m.choice("statistic", statistics, statistic));
    s.statistic = std::string(statistics[statistic]);
  }
  ATTN_TRY(m.whole("layer", 0, io::kMaxSessionIndex, s.layer));
  ATTN_TRY(m.whole("head", 0, io::kMaxSessionIndex, s.head));
  ATTN_TRY(m.choice("search", kCorpusSearchNames, s.search));
  ATTN_TRY(m.text("token", io::kMaxSessionName, s.token));
  ATTN_TRY(m.whole("sample", 1, CorpusSection::kMaxSample, s.sample));
  ATTN_TRY(m.choice("colour", kColourNames, s.colour));
  m.warn_unknown(warnings);
  return s;
}

}  // namespace attn::ui
