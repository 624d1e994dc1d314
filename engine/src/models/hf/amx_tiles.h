// Intel AMX tile configuration shared by the engine's tile kernels (ggml_products.cpp's Q8_0/Q4_0 batches,
// amx_bf16.cpp's BF16 products). A tile configuration is per-thread state, so each kernel asks for its own before
// using the tiles; it is loaded only when the thread's current one differs. Internal to engine/src/models.
#pragma once

#if defined(__AMX_TILE__) && defined(__AMX_INT8__) && defined(__AMX_BF16__) && defined(__AVX512F__) && \
    defined(__AVX512BW__) && defined(__AVX512VNNI__)
#define ATTN_AMX_TILES 1
#include <immintrin.h>

#include <cstdint>

namespace attn::models::amx {

// Tiles 0-7 as (rows, bytes per row); palette 1.
struct TileShapes {
  std::uint8_t rows[8];
  std::uint16_t bytes[8];
};

inline void configure(const TileShapes& shapes) {
  thread_local const TileShapes* loaded = nullptr;
  if (loaded == &shapes) return;
  struct alignas(64) Config {
    std::uint8_t palette = 1, start_row = 0;
    std::uint8_t reserved[14] = {};
    std::uint16_t colsb[16] = {};
    std::uint8_t rows[16] = {};
  } c;
  for (int t = 0; t < 8; ++t) {
    c.rows[t] = shapes.rows[t];
    c.colsb[t] = shapes.bytes[t];
  }
  _tile_loadconfig(&c);
  loaded = &shapes;
}

}  // namespace attn::models::amx
#endif
