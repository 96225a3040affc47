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

#include <cstdint>

#include "models/model_spec.h"

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

}  // namespace orrery::models
