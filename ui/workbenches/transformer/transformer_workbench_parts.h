// What the Transformer tab's files share: the example text the tab puts in the box for a model family.
#pragma once

#include "attn/models/config.h"

#include <QString>

namespace attn::ui::transformer_detail {

inline QString defaultText(attn::models::Family family) {
  using namespace Qt::StringLiterals;
  switch (family) {
    case attn::models::Family::Gpt2:
    case attn::models::Family::Decoder: return u"The quick brown fox jumps over the lazy dog because it"_s;
    default: return u"The cat sat on the [MASK] because it was tired."_s;
  }
}

}  // namespace attn::ui::transformer_detail
