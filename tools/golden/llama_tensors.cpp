// Writes llama.cpp's intermediate tensors for one prompt and one generated token (tools only, never built with the
// engine): every named float tensor of the graph as DIR/prompt/<name>.f32 and DIR/step/<name>.f32, each a 4 x int64
// header (ggml's ne[0..3], ne[0] the fastest) and the values as float32; DIR/*/index.txt lists the graph's nodes in
// order (name, op, sources, shape). Built against the llama.cpp release node-llama-cpp ships (its git bundle) and
// run on its prebuilt CPU library by llama_tensors.sh.
//   llama_tensors MODEL.gguf DIR id id ...
#include "ggml-backend.h"
#include "ggml.h"
#include "llama.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace {

struct Dump {
  std::string dir;
  std::map<std::string, int> seen;
  FILE* index = nullptr;
  int node = 0;
};
Dump dump;

void write(const ggml_tensor* t, std::string name) {
  for (char& c : name) {
    if (c == '/' || c == ' ' || c == '(' || c == ')') c = '_';
  }
  const int k = dump.seen[name]++;
  if (k > 0) name += "#" + std::to_string(k);
  std::fprintf(dump.index, "%d %s op=%s src0=%s src1=%s ne=%lld,%lld,%lld,%lld type=%s\n", dump.node++, name.c_str(),
               ggml_op_desc(t), t->src[0] ? ggml_get_name(t->src[0]) : "-",
               t->src[1] ? ggml_get_name(t->src[1]) : "-", static_cast<long long>(t->ne[0]),
               static_cast<long long>(t->ne[1]), static_cast<long long>(t->ne[2]), static_cast<long long>(t->ne[3]),
               ggml_type_name(t->type));
  std::vector<float> out;
  const char* base = static_cast<const char*>(t->data);
  for (int64_t i3 = 0; i3 < t->ne[3]; ++i3)
    for (int64_t i2 = 0; i2 < t->ne[2]; ++i2)
      for (int64_t i1 = 0; i1 < t->ne[1]; ++i1)
        for (int64_t i0 = 0; i0 < t->ne[0]; ++i0) {
          const char* p = base + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
          out.push_back(t->type == GGML_TYPE_F32 ? *reinterpret_cast<const float*>(p)
                                                 : ggml_fp16_to_fp32(*reinterpret_cast<const ggml_fp16_t*>(p)));
        }
  FILE* f = std::fopen((dump.dir + "/" + name + ".f32").c_str(), "wb");
  const int64_t ne[4] = {t->ne[0], t->ne[1], t->ne[2], t->ne[3]};
  std::fwrite(ne, sizeof ne, 1, f);
  std::fwrite(out.data(), sizeof(float), out.size(), f);
  std::fclose(f);
}

bool on_tensor(ggml_tensor* t, bool ask, void*) {
  if (ask || (t->type != GGML_TYPE_F32 && t->type != GGML_TYPE_F16)) return true;
  write(t, ggml_get_name(t));
  return true;
}

void start(const std::string& dir) {
  if (dump.index) std::fclose(dump.index);
  dump.dir = dir;
  dump.seen.clear();
  dump.node = 0;
  dump.index = std::fopen((dir + "/index.txt").c_str(), "w");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: llama_tensors MODEL.gguf DIR id id ...\n");
    return 2;
  }
  const std::string dir = argv[2];
  std::vector<llama_token> ids;
  for (int i = 3; i < argc; ++i) ids.push_back(std::atoi(argv[i]));
  ggml_backend_load_all_from_path(std::getenv("LLAMA_BINS"));
  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  llama_model* model = llama_model_load_from_file(argv[1], mp);
  if (!model) return 1;
  // As tools/golden/llama_goldens.mjs asks node-llama-cpp: one sequence, the prompt in one batch, no flash attention.
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = cp.n_batch = cp.n_ubatch = 512;
  cp.n_seq_max = 1;
  cp.n_threads = cp.n_threads_batch = 2;
  cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
  cp.cb_eval = on_tensor;
  llama_context* ctx = llama_init_from_model(model, cp);
  start(dir + "/prompt");
  if (llama_decode(ctx, llama_batch_get_one(ids.data(), static_cast<int>(ids.size())))) return 1;
  const int vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
  const float* logits = llama_get_logits_ith(ctx, -1);
  llama_token next = 0;
  for (int i = 1; i < vocab; ++i) next = logits[i] > logits[next] ? i : next;
  start(dir + "/step");
  if (llama_decode(ctx, llama_batch_get_one(&next, 1))) return 1;
  std::fclose(dump.index);
  llama_free(ctx);
  llama_model_free(model);
  return 0;
}
