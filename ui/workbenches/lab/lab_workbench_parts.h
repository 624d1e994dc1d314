// What lab_workbench.cpp and lab_panel.cpp share: fromView, a std::string_view of the engine as a QString.
#pragma once

#include <QString>

#include <string_view>

namespace attn::ui::lab_detail {

inline QString fromView(std::string_view text) { return QString::fromUtf8(text.data(), qsizetype(text.size())); }

}  // namespace attn::ui::lab_detail
