// Normalisers and masks. Masks are additive: 0 keeps a score, -inf removes it. An empty Matrix means
// "no mask". A row whose every score is masked normalises to all zeros, never NaN.
#pragma once

#include "attn/core.h"

#include <string_view>
#include <vector>

namespace attn {

enum class Normaliser { Softmax, Sparsemax };
std::string_view to_string(Normaliser kind);

// -inf above the diagonal: query i sees keys j <= i + (m - n) (aligned at the end when m > n).
Matrix causal_mask(Index n, Index m);
// -inf for every key j >= valid_keys.
Matrix padding_mask(Index n, Index m, Index valid_keys);
// -inf where keep(i, j) is false.
Matrix mask_from(const Eigen::Array<bool, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>& keep);
// Sum of two additive masks (either may be empty).
Matrix combine_masks(const Matrix& a, const Matrix& b);

// Row-wise softmax(scores / temperature + mask), max-subtracted.
Matrix softmax_rows(const MatrixCRef& scores, float temperature = 1.0f, const Matrix& mask = {});
void softmax_rows_inplace(Eigen::Ref<Matrix> scores, float temperature = 1.0f);
// Column-wise softmax (each column sums to 1), as used by attention-over-attention.
Matrix softmax_cols(const MatrixCRef& scores);
// Row-wise sparsemax (Martins & Astudillo 2016): Euclidean projection onto the simplex.
Matrix sparsemax_rows(const MatrixCRef& scores, float temperature = 1.0f, const Matrix& mask = {});

Matrix normalise_rows(Normaliser kind, const MatrixCRef& scores, float temperature = 1.0f, const Matrix& mask = {});

}  // namespace attn
