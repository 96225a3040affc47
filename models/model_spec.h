#pragma once
// What runs: the shape of a decoder-only transformer, dense or MoE.
// Plain data; see model_spec.cpp for every key's declaration (unit, default,
// range, help) and transformer.h for the operators it implies.

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/param.h"

namespace orrery::models {

enum class Activation { kGelu, kSwiglu };
enum class Norm { kLayerNorm, kRmsNorm };
enum class Position { kLearned, kRope };

struct ModelSpec {
  std::string name;
  std::string citation;     // where the shape comes from
  int64_t layers = 0;       // L
  int64_t hidden = 0;       // h (d_model)
  int64_t heads = 0;        // a (query heads)
  int64_t kv_heads = 0;     // 0 = heads (MHA); 1 = MQA; otherwise GQA
  int64_t head_dim = 0;     // 0 = hidden / heads
  int64_t ffn = 0;          // MLP inner size; 0 = 4h (GeLU) or the SwiGLU rule of Touvron et al. 2023
  int64_t vocab = 0;        // V
  int64_t max_seq = 0;      // context the position table covers (learned positions only)
  Activation activation = Activation::kGelu;
  Norm norm = Norm::kLayerNorm;
  Position position = Position::kLearned;
  bool bias = true;         // linear layers and norms carry biases (GPT) or not (Llama)
  bool tied_embeddings = true;
  // Dropout probabilities of training (Srivastava et al. 2014): on the two
  // residual branches (after the attention output projection and after the
  // MLP) and on the attention probabilities. Each dropout keeps its 1-byte
  // mask for the backward pass (Korthikanti et al. 2022, Sec. 4.1); 0 = no
  // dropout, no mask. Megatron-LM's GPT defaults are 0.1 and 0.1
  // (megatron/training/arguments.py: --hidden-dropout, --attention-dropout);
  // Llama-style recipes run without dropout.
  double hidden_dropout = 0;
  double attention_dropout = 0;
  // Mixture of experts (1 expert = dense). Every `moe_every`-th layer is MoE.
  int64_t experts = 1;
  int64_t top_k = 1;
  int64_t moe_every = 1;
  int64_t expert_ffn = 0;   // 0 = ffn
  // Shared experts every token runs besides its top_k routed ones
  // (DeepSeekMoE, Dai et al. 2024, arXiv 2401.06066, Sec. 3.2), each
  // shared_expert_ffn wide (0 = expert_ffn).
  int64_t shared_experts = 0;
  int64_t shared_expert_ffn = 0;
  // The first n layers keep a dense MLP (DeepSeek-V3 first_k_dense_replace).
  int64_t first_dense_layers = 0;
  // Node-limited routing: each token's routed experts lie on at most this
  // many scale-out nodes (DeepSeek-V3, arXiv 2412.19437, Sec. 2.1.2 and
  // 3.2.2: M = 4); 0 = no limit.
  int64_t routing_node_limit = 0;
  // Group-limited routing (DeepSeek-V2/V3's released configs: n_group,
  // topk_group; modeling_deepseek_v3.py, MoEGate): the routed experts form
  // routing_groups equal groups of consecutive experts, and each token's
  // top_k experts come from at most routing_group_limit of them. Where the
  // groups line up with the scale-out nodes an EP group spans, that bounds
  // the nodes a token reaches (engine::RoutingNodeLimit); 0 = no groups.
  int64_t routing_groups = 0;
  int64_t routing_group_limit = 0;
  // Multi-head latent attention (DeepSeek-V2, arXiv 2405.04434, Sec. 2.1):
  // the KV cache holds a compressed latent of kv_lora_rank elements plus a
  // decoupled RoPE key of rope_head_dim per token and layer. 0 = standard
  // attention. With kv_lora_rank > 0 a head's query/key size is head_dim +
  // rope_head_dim and its value size v_head_dim (0 = head_dim); queries pass
  // through a q_lora_rank latent (0 = projected from the hidden state).
  int64_t kv_lora_rank = 0;
  int64_t rope_head_dim = 0;
  int64_t q_lora_rank = 0;
  int64_t v_head_dim = 0;
  // Multi-token prediction modules (DeepSeek-V3, arXiv 2412.19437, Sec. 2.2):
  // each adds one transformer block (of the MoE kind when the model has
  // experts), a 2h -> h projection and a pass of the shared LM head.
  int64_t mtp_depth = 0;
  // An RMSNorm (or LayerNorm, as `norm`) on each head's query and key before
  // RoPE, its weight one head wide and shared by the heads (QK-norm:
  // Dehghani et al. 2023, ViT-22B, arXiv 2302.05442, Sec. 2; Qwen3 Technical
  // Report, arXiv 2505.09388, Sec. 2; Llama 4's use_qk_norm). Standard
  // attention only.
  bool qk_norm = false;
  // Sliding-window attention (Mistral 7B v0.1, Gemma 2 and 3, gpt-oss): in
  // sliding_window_layers of the layers each query attends to itself and
  // the sliding_window - 1 tokens before it (Beltagy et al. 2020,
  // Longformer, Sec. 3.1; Jiang et al. 2023, Mistral 7B, Sec. 2); the other
  // layers attend to the whole sequence. 0 = no window. Priced in training
  // (models::LocalAttentionShare) and inference (a windowed layer caches and
  // reads only its window: models::KvHeldTokens, LocalKeys).
  int64_t sliding_window = 0;
  int64_t sliding_window_layers = 0;
  // Chunked attention (Llama 4's attention_chunk_size): in
  // attention_chunk_layers of the layers the sequence is cut into chunks of
  // attention_chunk tokens and a query attends causally within its own
  // chunk only (Meta's llama-models, models/llama4/model.py; transformers'
  // modeling_llama4.py, chunked_attention layers); the other layers attend
  // to the whole sequence. A model states a window or chunks, not both.
  // Priced like a window in training (models::LocalAttentionShare) and in
  // inference (a chunked layer caches its current chunk only).
  int64_t attention_chunk = 0;
  int64_t attention_chunk_layers = 0;
  // Logit soft-capping (Gemma 2, arXiv 2408.00118, Sec. 2): cap x tanh(x /
  // cap) on every attention score before the softmax (attention_softcap:
  // Gemma 2's 50) and on the final logits before the loss
  // (final_logit_softcap: 30); 0 = none. Written as eager code by
  // transformers' modeling_gemma2.py and NeMo's Gemma 2 (nemo/collections/
  // llm/gpt/model/gemma2.py, logit_softcapping): three element-wise
  // kernels, a division, the tanh and a product, each reading and writing
  // the tensor. Priced where those kernels run (models::LayerOps,
  // materialised attention; models::HeadOps); inside a fused attention
  // kernel (flash-attn >= 2.6's softcap) the tanh is not priced.
  double attention_softcap = 0;
  double final_logit_softcap = 0;
  double published_params = 0;  // parameter count the source states (0 = unknown)
  // Keys of a Hugging Face config.json the reader did not read and that may
  // change what a step costs (ParseHfConfig: a sliding window, a
  // quantization config, group-limited routing, ...), as "key" or
  // "text_config.key": shown beside the model, so that nothing the file says
  // is dropped silently. Empty for a preset.
  std::vector<std::string> unread_keys;
};

// Effective sizes after defaults are resolved.
inline int64_t HeadDim(const ModelSpec& m) { return m.head_dim > 0 ? m.head_dim : m.hidden / m.heads; }
inline int64_t KvHeads(const ModelSpec& m) { return m.kv_heads > 0 ? m.kv_heads : m.heads; }
inline int64_t FfnSize(const ModelSpec& m) {
  if (m.ffn > 0) return m.ffn;
  if (m.activation == Activation::kGelu) return 4 * m.hidden;
  // SwiGLU keeps the parameter count of a 4h GeLU MLP: 2/3 * 4h, rounded up
  // to a multiple of 256 (Touvron et al. 2023, LLaMA, Sec. 2.2).
  const int64_t raw = 8 * m.hidden / 3;
  return (raw + 255) / 256 * 256;
}
inline int64_t ExpertFfn(const ModelSpec& m) { return m.expert_ffn > 0 ? m.expert_ffn : FfnSize(m); }
// Inner width of all shared experts together (0 without shared experts).
inline int64_t SharedExpertFfn(const ModelSpec& m) {
  return m.shared_experts * (m.shared_expert_ffn > 0 ? m.shared_expert_ffn : ExpertFfn(m));
}
inline bool UsesMla(const ModelSpec& m) { return m.kv_lora_rank > 0; }
// Per-head sizes of queries/keys and of values (MLA: DeepSeek-V2 Sec. 2.1.3,
// d_h + d_h^R for queries and keys, d_h for values).
inline int64_t QkHeadDim(const ModelSpec& m) { return HeadDim(m) + (UsesMla(m) ? m.rope_head_dim : 0); }
inline int64_t VHeadDim(const ModelSpec& m) {
  return UsesMla(m) && m.v_head_dim > 0 ? m.v_head_dim : HeadDim(m);
}

const base::Schema<ModelSpec>& ModelSchema();

// Checks between keys of one model (heads divide hidden, kv_heads divide
// heads, top_k <= experts). Adds diagnostics at `path`.
void CheckModel(const ModelSpec& m, const std::string& path, const base::SourceLocation& where,
                base::Diagnostics& diags);

}  // namespace orrery::models
