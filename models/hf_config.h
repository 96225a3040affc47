#pragma once
// A Hugging Face `config.json` (the transformers library's model
// configuration) read as a ModelSpec, so a user may name a downloaded model
// directory's config instead of writing a preset. Shared by training and
// inference: anything that loads a model by name accepts a path ending in
// `.json`.
//
// Keys read (transformers' PretrainedConfig subclasses; a multimodal config's
// `text_config` is read when present):
//   decoder shape   num_hidden_layers, hidden_size, num_attention_heads,
//                   num_key_value_heads, head_dim, intermediate_size,
//                   vocab_size, max_position_embeddings, tie_word_embeddings,
//                   attention_bias
//   mixture of experts  num_local_experts | num_experts | n_routed_experts,
//                   num_experts_per_tok, moe_intermediate_size, n_shared_experts,
//                   shared_expert_intermediate_size (Qwen2-MoE),
//                   first_k_dense_replace, moe_layer_freq | decoder_sparse_step
//   latent attention kv_lora_rank, q_lora_rank, qk_nope_head_dim,
//                   qk_rope_head_dim, v_head_dim; num_nextn_predict_layers (MTP)
//   GPT-2 family    n_layer, n_embd, n_head, n_inner, n_positions
//   local attention sliding_window, use_sliding_window, max_window_layers,
//                   layer_types, Gemma 3's sliding_window_pattern;
//                   Llama 4's attention_chunk_size,
//                   no_rope_layers, no_rope_layer_interval
//   Llama 4         intermediate_size_mlp, interleave_moe_layer_step,
//                   moe_layers, use_qk_norm
//   routing groups  n_group, topk_group
//   soft-capping    attn_logit_softcapping, final_logit_softcapping
// Architecture from `model_type`: the Llama family (llama, mistral, mixtral,
// qwen2, qwen2_moe, qwen3, qwen3_moe, gemma, gemma2, gemma3, gemma3_text,
// phi3, deepseek_v2, deepseek_v3, kimi_k2, llama4, llama4_text, gpt_oss,
// glm4_moe) is
// gated-SiLU MLP, RMSNorm, RoPE, no biases (gpt_oss's by default), with a
// QK-norm for qwen3, qwen3_moe and the gemma3 types (llama4 and glm4_moe with
// use_qk_norm; Gemma 3's keys left out take Gemma3TextConfig's defaults);
// gpt2, gpt_bigcode and opt are GeLU, LayerNorm, learned positions and
// biases; gpt_neox is GeLU, LayerNorm, RoPE and biases.
// Other model types are refused with the list. Keys read neither here nor
// listed as changing nothing a step costs (hf_config.cpp, NoCostKeys) are
// kept in ModelSpec::unread_keys when they are set (not false, null or an
// empty list), and shown beside the model: a quantization config, a layer
// pattern the reader does not know.

#include <string>

#include "core/base/diagnostics.h"
#include "models/model_spec.h"

namespace orrery::models {

// Reads `file`; errors name the file, line and column of the key, the key
// and the rule. Returns false (with diagnostics) when the file cannot be used.
bool ReadHfConfig(const std::string& file, ModelSpec& out, base::Diagnostics& diags);

// The same from text already read; `file` names it in messages.
bool ParseHfConfig(const std::string& text, const std::string& file, ModelSpec& out,
                   base::Diagnostics& diags);

// Whether a model name is a path to a config file: "hf:PATH", or a name
// ending in ".json".
bool IsHfConfigPath(const std::string& name);
// The file a config name points to (without its "hf:" prefix).
std::string HfConfigFile(const std::string& name);

}  // namespace orrery::models
