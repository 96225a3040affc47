#pragma once
// The key/value cache of autoregressive decoding: bytes per token.
//
// Standard attention caches K and V for every KV head of every layer
// (Vaswani et al. 2017; Pope et al. 2022, "Efficiently scaling transformer
// inference", Sec. 2.1):
//   elements per token per layer = 2 * kv_heads * head_dim
// which covers multi-head (kv_heads = heads), grouped-query (Ainslie et al.
// 2023, GQA) and multi-query attention (Shazeer 2019, kv_heads = 1).
//
// Multi-head latent attention caches one compressed latent c^KV of d_c
// elements and one decoupled RoPE key of d_h^R elements per token and layer
// (DeepSeek-AI 2024, DeepSeek-V2, arXiv 2405.04434, Sec. 2.1.2-2.1.3 and
// Table 1: "(d_c + d_h^R) l" elements per token):
//   elements per token per layer = kv_lora_rank + rope_head_dim
//
// Split over devices: tensor parallelism splits KV heads when tp divides
// them, and replicates one head per device when kv_heads < tp (Megatron /
// TensorRT-LLM GQA handling); an MLA latent is shared by all heads and is
// replicated on every tensor-parallel rank. Pipeline stages hold their own
// layers (ceil(L / pp) on the fullest stage).

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "models/model_spec.h"
#include "models/transformer.h"

namespace orrery::models {

inline bool UsesLatentAttention(const ModelSpec& m) { return m.kv_lora_rank > 0; }

// Cached elements per token in one layer, whole model (no parallelism).
double KvElementsPerTokenPerLayer(const ModelSpec& m);

// Bytes per token for all layers at `bytes_per_element` (2 for fp16/bf16,
// 1 for fp8/int8, 0.5 for int4).
double KvBytesPerToken(const ModelSpec& m, double bytes_per_element);

// Cached elements per token per layer held by one of `tp` tensor-parallel
// devices (heads split or replicated as above).
double KvElementsPerTokenPerLayerPerDevice(const ModelSpec& m, int64_t tp);

// Bytes per token held by one device of the fullest pipeline stage.
double KvBytesPerTokenPerDevice(const ModelSpec& m, double bytes_per_element, int64_t tp,
                                int64_t pp);

// Local attention in the cache (ModelSpec::sliding_window, attention_chunk).
// A sliding-window layer keeps only the last w tokens' K and V, a chunked
// layer only its current chunk's, c at most: vLLM's hybrid KV cache manager
// ("sliding window layers: reserve slots only for the most recent
// sliding_window_size tokens"; Llama 4's chunked local attention likewise,
// ChunkedLocalAttentionSpec: "we hold KV for at most one chunk window",
// docs/design/hybrid_kv_cache_manager.md, vllm/v1/kv_cache_interface.py),
// and TensorRT-LLM's KV cache keeps a pool per attention window size
// (features/kvcache.md). The other layers keep every token.
// LocalSpan: w or c (0 without local layers). KvHeldTokens: what a sequence
// of `tokens` cached tokens holds, in tokens of every layer's cache,
//   ((L - L_local) t + L_local min(t, span)) / L,
// so that bytes = KvHeldTokens x KvBytesPerToken; t without local layers.
inline double LocalSpan(const ModelSpec& m) {
  if (m.sliding_window > 0) return static_cast<double>(m.sliding_window);
  return m.attention_chunk > 0 ? static_cast<double>(m.attention_chunk) : 0.0;
}
inline double KvHeldTokens(const ModelSpec& m, double tokens) {
  const double f = LocalLayerFraction(m);
  if (f <= 0) return tokens;
  return (1 - f) * tokens + f * std::min(tokens, LocalSpan(m));
}
// Keys a local layer's query at position `t` (1-based, itself included)
// attends to: min(t, w) in a window; t - c floor((t - 1) / c) in a chunk
// (the chunk's tokens up to it); t without local layers.
inline double LocalKeys(const ModelSpec& m, double t) {
  if (m.sliding_window > 0) return std::min(t, static_cast<double>(m.sliding_window));
  if (m.attention_chunk <= 0 || t <= 0) return t;
  const double c = static_cast<double>(m.attention_chunk);
  return t - c * std::floor((t - 1) / c);
}
// The sum of LocalKeys over positions 1..n (whole n): a window's n(n+1)/2
// up to w, then w each; q = floor(n / c) whole chunks of c(c+1)/2 and a
// remainder r of r(r+1)/2; n(n+1)/2 without local layers.
inline double LocalKeysSum(const ModelSpec& m, double n) {
  if (n <= 0) return 0;
  if (m.sliding_window > 0) {
    const double w = static_cast<double>(m.sliding_window);
    return n <= w ? n * (n + 1) / 2 : w * (w + 1) / 2 + (n - w) * w;
  }
  if (m.attention_chunk <= 0) return n * (n + 1) / 2;
  const double c = static_cast<double>(m.attention_chunk);
  const double q = std::floor(n / c);
  const double r = n - q * c;
  return q * c * (c + 1) / 2 + r * (r + 1) / 2;
}

}  // namespace orrery::models
