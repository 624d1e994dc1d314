// What caption_workbench.cpp and caption_panel.cpp share: the largest seed the scene spin box holds.
#pragma once

namespace attn::ui::caption_detail {

inline constexpr int kMaxSeed = 2'000'000'000;  // a spin box holds an int; the generator takes any 64-bit seed

}  // namespace attn::ui::caption_detail
