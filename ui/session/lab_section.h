// The Mechanism Lab's section of the session file: the request (written by lab::to_json) and the view.
#pragma once

#include "attn/error.h"
#include "attn/io/session.h"
#include "attn/lab/lab.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace attn::ui {

struct LabSection {
  lab::LabRequest request{std::string(lab::kDefaultQuery), std::string(lab::kDefaultSource), {}};
  std::string colormap = "viridis";
  bool unit_range = false;  // colours on the fixed 0..1 scale instead of the map's own range
  int map = 0;              // the map in view (index into the trace's maps)
  friend bool operator==(const LabSection& a, const LabSection& b) {
    return a.request.query == b.request.query && a.request.source == b.request.source &&
           a.request.params == b.request.params && a.colormap == b.colormap && a.unit_range == b.unit_range &&
           a.map == b.map;
  }
};

nlohmann::ordered_json to_json(const LabSection& section);
// The section's object (`j`, at "tabs.lab"); warnings for the keys it does not know.
Result<LabSection> read_lab_section(const io::SessionReader& reader, const nlohmann::json& j,
                                    std::vector<Error>& warnings);

}  // namespace attn::ui
