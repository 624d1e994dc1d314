// The fixture cases each parity suite runs. Listed here, not discovered from the directory, so that a
// fixture which goes missing fails its test instead of silently dropping it; test_fixture.cpp checks the
// other direction (every file in tests/data/parity is run by some suite).
#pragma once

#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace attn::parity {

inline const std::vector<std::string> kNormaliseCases = {
    "softmax_plain",  "softmax_temperature_low", "softmax_temperature_high", "softmax_causal_square",
    "softmax_causal_rect", "softmax_padding", "softmax_boolean", "softmax_large_scores",
    "sparsemax_plain", "sparsemax_temperature", "sparsemax_boolean", "sparsemax_causal",
};
inline const std::vector<std::string> kScoreCases = {
    "score_dot", "score_scaled_dot", "score_general", "score_additive", "score_concat", "score_cosine",
    "score_location",
};
inline const std::vector<std::string> kGlobalAttentionCases = {
    "attention_additive", "attention_concat", "attention_general_temperature", "attention_scaled_dot_causal",
    "attention_scaled_dot_sparsemax",
};
inline const std::vector<std::string> kMultiHeadCases = {
    "mha_self", "mha_self_causal", "mha_cross", "mha_cross_causal", "mha_self_padding", "mha_self_temperature",
    "mha_cross_nobias",
};
inline const std::vector<std::string> kLayerNormCases = {"layer_norm_default", "layer_norm_offset"};
inline const std::vector<std::string> kGeluCases = {"gelu_erf", "gelu_tanh"};
inline const std::vector<std::string> kSinusoidalCases = {"sinusoidal_even", "sinusoidal_odd"};
inline const std::vector<std::string> kFeedForwardCases = {"ffn_relu", "ffn_gelu_erf", "ffn_gelu_tanh"};

inline std::vector<std::string> all_cases() {
  std::vector<std::string> all;
  for (const auto* list : {&kNormaliseCases, &kScoreCases, &kGlobalAttentionCases, &kMultiHeadCases,
                           &kLayerNormCases, &kGeluCases, &kSinusoidalCases, &kFeedForwardCases}) {
    all.insert(all.end(), list->begin(), list->end());
  }
  return all;
}

// Test names are the case names (already valid identifiers).
struct CaseName {
  std::string operator()(const ::testing::TestParamInfo<std::string>& info) const { return info.param; }
};

}  // namespace attn::parity
