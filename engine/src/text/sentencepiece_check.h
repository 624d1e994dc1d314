// The checks a tokenizer.model passes before libsentencepiece sees it. libsentencepiece 0.1.97 trusts the
// file: Normalizer::DecodePrecompiledCharsMap checks only the trie's size against the blob (off by the 4
// header bytes), and encoding walks the darts-clone double array with no bound on its offsets, copies the
// replacement string at a leaf's value up to a NUL wherever that lies, and keeps at most 32 prefix matches
// (kMaxTrieResultsSize) in a stack array while counting them all. A crafted precompiled_charsmap reads out
// of bounds (SIGSEGV) on the first text, or already at load, where the file's self-test samples are encoded.
// So the model's protobuf is read here first (the fields that reach the normalizer), and each map is walked
// the way darts-clone's commonPrefixSearch walks it, from every state it can reach on any input.
#pragma once

#include "attn/error.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace attn::text::spm {

// A precompiled_charsmap of a real model is 0.2 to 0.3 MB (nmt_nfkc); its walk reads 256 units per state.
inline constexpr std::size_t kMaxCharsmapBytes = 4 << 20;
// libsentencepiece's Normalizer::kMaxTrieResultsSize: the prefix matches it keeps for one position.
inline constexpr int kMaxPrefixMatches = 32;
// A replacement string may be at most this many times the bytes its key matched. NFKC's largest expansion,
// U+FDFA (3 bytes) to an 18-character phrase of 33 bytes, is 11 times.
inline constexpr int kMaxMapExpansion = 16;
// The self-test samples libsentencepiece encodes while loading (real models carry none or a few lines).
inline constexpr std::size_t kMaxSelfTestBytes = 256 << 10;

struct ModelFacts {
  // The normalized text is at most this many times the input's bytes, plus kNormalizedExtra: the largest
  // replacement per key byte of the two maps (1 without a map), times 3, since a space (and a byte the map
  // left outside a character, which becomes U+FFFD) is written as 3 bytes.
  std::int64_t expansion = 3;
  static constexpr std::int64_t kNormalizedExtra = 3;  // the "▁" added in front
};

// nullopt-like success with the facts, or the refusal naming `name`, the field (normalizer_spec.
// precompiled_charsmap, ...), the byte of the field in the file where one is known, the figure and the limit.
Result<ModelFacts> check_model(std::string_view bytes, const std::string& name);

// One precompiled_charsmap on its own (`field` names it in errors, `field_offset` is its first byte in the
// file): the largest replacement per matched byte, or the refusal.
Result<std::int64_t> check_charsmap(std::string_view blob, const std::string& name, const std::string& field,
                                    std::int64_t field_offset);

}  // namespace attn::text::spm
