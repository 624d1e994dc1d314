// The model cases the intervention and attribution parity suites share (tests/data/interventions/<case>.json and
// tests/data/attribution/<case>.json, written from the same inputs): the transformer fixtures, the shipped
// induction-gpt2 and every decoder fixture but stories260k. Their test names: bundled_cases.h's case_test_name.
#pragma once

#include <string>
#include <vector>

namespace attn::parity {

inline const std::vector<std::string> kModelCases = {"gpt2",
                                                     "bert",
                                                     "distilbert",
                                                     "vit",
                                                     "induction-gpt2",
                                                     "llama",
                                                     "llama-dynamic",
                                                     "llama-tied-linear-bf16",
                                                     "llama-yarn-bias-bf16",
                                                     "llama3-rope-f16",
                                                     "mistral-window",
                                                     "phi3-fused-partial",
                                                     "qwen2-bias",
                                                     "qwen3-head-dim",
                                                     "gemma2-softcap",
                                                     "gemma3-local-global"};

}  // namespace attn::parity
