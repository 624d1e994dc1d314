#include "session/lab_section.h"

#include "core/try.h"
#include "session/session_values.h"

#include <array>
#include <string_view>
#include <utility>

namespace attn::ui {

namespace {
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;
}  // namespace

ojson to_json(const LabSection& l) {
  return {{"request", nested_json(lab::to_json(l.request))},
          {"colormap", l.colormap},
          {"unit_range", l.unit_range},
          {"map", l.map}};
}

Result<LabSection> read_lab_section(const io::SessionReader& reader, const nlohmann::json& j,
                                    std::vector<Error>& warnings) {
  io::SessionMembers m(reader, j, "tabs.lab");
  LabSection s;
  const nlohmann::json* request = nullptr;
  ATTN_ASSIGN(request, m.object("request"));
  if (request) {
    // Every field typed and in range here, where the error can name its byte; lab_request_from_json then
    // turns the keys into the lab's enums.
    io::SessionMembers r(reader, *request, "tabs.lab.request");
    lab::LabRequest checked = s.request;
    lab::LabParams& p = checked.params;
    ATTN_TRY(r.text("query", io::kMaxSessionText, checked.query));
    ATTN_TRY(r.text("source", io::kMaxSessionText, checked.source));
    std::string key;
    ATTN_TRY(r.text("mechanism", io::kMaxSessionName, key));
    if (r.find("mechanism") && !lab::find_mechanism(key)) {
      return r.error(ErrorKind::OutOfRange, "mechanism",
                     io::SessionMembers::quote(key.substr(0, 64)) + " is not a mechanism");
    }
    key.clear();
    ATTN_TRY(r.text("score", io::kMaxSessionName, key));
    if (r.find("score") && !lab::find_score(key)) {
      return r.error(ErrorKind::OutOfRange, "score",
                     io::SessionMembers::quote(key.substr(0, 64)) + " is not a score function");
    }
    key.clear();
    ATTN_TRY(r.text("normaliser", io::kMaxSessionName, key));
    if (r.find("normaliser") && !lab::find_normaliser(key)) {
      return r.error(ErrorKind::OutOfRange, "normaliser",
                     io::SessionMembers::quote(key.substr(0, 64)) + " is not a normaliser");
    }
    key.clear();
    ATTN_TRY(r.text("positions", io::kMaxSessionName, key));
    if (r.find("positions") && !lab::find_positions(key)) {
      return r.error(ErrorKind::OutOfRange, "positions",
                     io::SessionMembers::quote(key.substr(0, 64)) + " is not a kind of positions");
    }
    // The lab's own widget ranges (lab_workbench.cpp).
    ATTN_TRY(r.number("temperature", 0.01, 100.0, p.temperature));
    ATTN_TRY(r.whole("window", 0, 256, p.window));
    ATTN_TRY(r.number("sigma", -1.0, 256.0, p.sigma));
    ATTN_TRY(r.whole("heads", 1, 16, p.heads));
    for (const lab::CountParam& c : lab::count_params()) ATTN_TRY(r.whole(c.key, c.min, c.max, p.*c.field));
    ATTN_TRY(r.boolean("causal", p.causal));
    ATTN_TRY(r.boolean("shuffle", p.shuffle));
    ATTN_TRY(r.whole("seed", 0, static_cast<std::int64_t>(io::kMaxSessionSeed), p.seed));
    ATTN_TRY(r.whole("dim", 4, 1024, p.dim));
    r.warn_unknown(warnings);
    auto parsed = lab::lab_request_from_json(request->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                                             "tabs.lab.request");
    if (!parsed) return m.error(parsed.error().kind, "request", parsed.error().reason);
    s.request = std::move(*parsed);
  }
  ATTN_TRY(read_colormap(m, "colormap", s.colormap));
  ATTN_TRY(m.boolean("unit_range", s.unit_range));
  ATTN_TRY(m.whole("map", 0, io::kMaxSessionIndex, s.map));
  m.warn_unknown(warnings);
  return s;
}

}  // namespace attn::ui
