// Shared numeric types of the engine: row-major float32 matrices and views over them.
#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

using Index = Eigen::Index;
using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vector = Eigen::VectorXf;
using RowVector = Eigen::RowVectorXf;
// Read-only view accepted by every mechanism: a Matrix, an Eigen::Map over foreign memory, or a block.
using MatrixCRef = Eigen::Ref<const Matrix>;
using VectorCRef = Eigen::Ref<const Vector>;
using MatrixMap = Eigen::Map<const Matrix>;

using Labels = std::vector<std::string>;

}  // namespace attn
