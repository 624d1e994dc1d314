// The colour maps' names (command line, settings, session files), in the order of render::Colormap: the one
// list both the painter (colormap.cpp) and the session file's reader (ui/session, which builds without Qt for
// the fuzz targets) check a name against.
#pragma once

#include <array>
#include <string_view>

namespace attn::ui::render {

inline constexpr std::array<std::string_view, 7> kColormapKeys = {"viridis", "magma", "inferno", "plasma",
                                                                  "cividis", "greys", "rdbu"};

}  // namespace attn::ui::render
