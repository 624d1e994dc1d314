// Splitting free text into word tokens with byte offsets. UTF-8 is validated first; letters and digits
// (ASCII or any non-ASCII code point) form words, each CJK ideograph or kana and each emoji is a token of
// its own, other punctuation is one token per character, white space separates.
#pragma once

#include "attn/error.h"
#include "attn/trace.h"

#include <string>
#include <string_view>
#include <vector>

namespace attn {

struct WordToken {
  std::string text;  // as written (UTF-8)
  Span span;         // bytes [begin, end) in the input
};

// Fails with the byte offset of the first invalid UTF-8 sequence. `what` names the input in errors.
Result<std::vector<WordToken>> split_words(std::string_view text, std::string_view what = "text");

// Byte offset of the first invalid UTF-8 sequence, or -1 when the text is valid.
std::int64_t first_invalid_utf8(std::string_view text);

// Sentences ended by . ! ? (and their CJK forms) or a line break; each holds its words.
std::vector<std::vector<WordToken>> split_sentences(const std::vector<WordToken>& words, std::string_view text);

}  // namespace attn
