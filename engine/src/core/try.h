// Unwrapping a Result inside a function that itself returns a Result: an error is returned as it is.
// Used by the model loaders (transformer_load.cpp, config.cpp, layers.cpp and the demo models). Not part
// of the public API.
#pragma once

#include <expected>
#include <utility>

// Evaluates `expr` (a Result) and returns its error from the enclosing function.
#define ATTN_TRY(expr)                                                       \
  do {                                                                       \
    auto attn_try_result_ = (expr);                                          \
    if (!attn_try_result_) return std::unexpected(attn_try_result_.error()); \
  } while (false)

// Evaluates `expr` (a Result) and moves its value into `lhs`, or returns its error.
#define ATTN_ASSIGN(lhs, expr)                                                     \
  do {                                                                             \
    auto attn_assign_result_ = (expr);                                             \
    if (!attn_assign_result_) return std::unexpected(attn_assign_result_.error()); \
    lhs = std::move(*attn_assign_result_);                                         \
  } while (false)

// Declares `name` as a reference to the value of `expr` (a Result), or returns its error.
#define ATTN_LET(name, expr)                                                      \
  auto name##_result_ = (expr);                                                   \
  if (!name##_result_) return std::unexpected(std::move(name##_result_).error()); \
  auto& name = *name##_result_
