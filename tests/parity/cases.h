// The fixture cases each parity suite runs. Listed here, not discovered from the directory, so that a
// fixture which goes missing fails its test instead of silently dropping it; test_fixture.cpp checks the
// other direction (every file in tests/data/parity is run by some suite).
#pragma once

#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace attn::parity {

inline const std::vector<std::string> kNormaliseCases = {
    "softmax_plain",       "softmax_temperature_low", "softmax_temperature_high", "softmax_causal_square",
    "softmax_causal_rect", "softmax_padding",         "softmax_boolean",          "softmax_large_scores",
    "sparsemax_plain",     "sparsemax_temperature",   "sparsemax_boolean",        "sparsemax_causal",
};
inline const std::vector<std::string> kScoreCases = {
    "score_dot",    "score_scaled_dot", "score_general",  "score_additive",
    "score_concat", "score_cosine",     "score_location",
};
inline const std::vector<std::string> kGlobalAttentionCases = {
    "attention_additive",
    "attention_concat",
    "attention_general_temperature",
    "attention_scaled_dot_causal",
    "attention_scaled_dot_sparsemax",
};
inline const std::vector<std::string> kMultiHeadCases = {
    "mha_self",         "mha_self_causal",      "mha_cross",        "mha_cross_causal",
    "mha_self_padding", "mha_self_temperature", "mha_cross_nobias",
};
inline const std::vector<std::string> kLayerNormCases = {"layer_norm_default", "layer_norm_offset"};
inline const std::vector<std::string> kGeluCases = {"gelu_erf", "gelu_tanh"};
inline const std::vector<std::string> kSinusoidalCases = {"sinusoidal_even", "sinusoidal_odd"};
inline const std::vector<std::string> kFeedForwardCases = {"ffn_relu", "ffn_gelu_erf", "ffn_gelu_tanh"};
// Attention around a target phrase (IAN, LCR-Rot-hop).
inline const std::vector<std::string> kIanCases = {"aspect_ian"};
inline const std::vector<std::string> kRotatoryCases = {"aspect_rotatory", "aspect_rotatory_one_word"};
// Capsule dynamic routing (Sabour et al. 2017).
inline const std::vector<std::string> kRoutingCases = {"capsule_routing", "capsule_routing_one_iteration"};
// Linformer (Wang et al. 2020) and Synthesizer (Tay et al. 2021).
inline const std::vector<std::string> kLinformerCases = {"linformer_k4", "linformer_k_equals_n"};
inline const std::vector<std::string> kReformerCases = {"reformer_two_rounds", "reformer_short_last_chunk",
                                                        "reformer_chunks_of_one"};
inline const std::vector<std::string> kTransformerXLCases = {"transformer_xl_two_layers", "transformer_xl_one_segment"};
inline const std::vector<std::string> kCapsuleMultiHeadCases = {"capsule_multi_head"};
inline const std::vector<std::string> kConvS2SCases = {"convs2s_two_layers", "convs2s_wide_kernel"};
inline const std::vector<std::string> kSynthesizerCases = {"synthesizer_dense", "synthesizer_random",
                                                           "synthesizer_factorized_dense",
                                                           "synthesizer_factorized_random", "synthesizer_mixture"};
// Glimpses (tools/parity/make_glimpse_fixtures.py): STN against torch's affine_grid + grid_sample, grid_sample
// on explicit grids, DRAW's Gaussian attention against the paper's formulas.
inline const std::vector<std::string> kStnCases = {
    "glimpse_stn_affine_shear",
    "glimpse_stn_affine_outside_zeros",
    "glimpse_stn_affine_outside_border",
    "glimpse_stn_no_shear_down",
    "glimpse_stn_no_shear_up_border",
    "glimpse_stn_similarity_rotated",
    "glimpse_stn_similarity_outside_border",
    "glimpse_stn_translation_scale",
    "glimpse_stn_translation_scale_zoom_out",
    "glimpse_stn_nearest_affine",
    "glimpse_stn_nearest_half_even_zeros",
    "glimpse_stn_nearest_half_even_border",
};
inline const std::vector<std::string> kGridSampleCases = {"glimpse_grid_nearest_half", "glimpse_grid_bilinear_random"};
inline const std::vector<std::string> kDrawCases = {
    "glimpse_draw_pixel_basic",
    "glimpse_draw_pixel_overlap",
    "glimpse_draw_pixel_tiny_sigma",
    "glimpse_draw_pixel_large_sigma",
    "glimpse_draw_pixel_partly_outside",
    "glimpse_draw_pixel_outside_faint",
    "glimpse_draw_pixel_outside_normalised",
    "glimpse_draw_pixel_n1",
    "glimpse_draw_paper_basic",
    "glimpse_draw_paper_wide",
    "glimpse_draw_paper_tiny_sigma",
    "glimpse_draw_paper_outside",
    "glimpse_draw_paper_n1",
};

inline std::vector<std::string> all_cases() {
  std::vector<std::string> all;
  for (const auto* list : {&kNormaliseCases,   &kScoreCases,    &kGlobalAttentionCases, &kMultiHeadCases,
                           &kLayerNormCases,   &kGeluCases,     &kSinusoidalCases,      &kFeedForwardCases,
                           &kIanCases,         &kRotatoryCases, &kRoutingCases,         &kCapsuleMultiHeadCases,
                           &kLinformerCases,   &kReformerCases, &kTransformerXLCases,   &kConvS2SCases,
                           &kSynthesizerCases, &kStnCases,      &kGridSampleCases,      &kDrawCases}) {
    all.insert(all.end(), list->begin(), list->end());
  }
  return all;
}

// Test names are the case names (already valid identifiers).
struct CaseName {
  std::string operator()(const ::testing::TestParamInfo<std::string>& info) const { return info.param; }
};

}  // namespace attn::parity
