#include "models/model_spec.h"

namespace orrery::models {

const base::Schema<ModelSpec>& ModelSchema() {
  static const base::Schema<ModelSpec> schema = [] {
    base::Schema<ModelSpec> s("model", "A decoder-only transformer (dense or mixture of experts).");
    s.String("name", &ModelSpec::name, "", "Name shown in reports.")
        .String("citation", &ModelSpec::citation, "", "Where the shape comes from (paper, table).")
        .Int("layers", &ModelSpec::layers, 1, 1e5, "", "Transformer layers L.")
        .Int("hidden", &ModelSpec::hidden, 1, 1e7, "", "Hidden size h (d_model).")
        .Int("heads", &ModelSpec::heads, 1, 1e5, "", "Attention (query) heads a.")
        .Int("kv_heads", &ModelSpec::kv_heads, 0, 1e5, "0",
             "Key/value heads: 0 = same as heads (MHA), 1 = MQA, else GQA groups.")
        .Int("head_dim", &ModelSpec::head_dim, 0, 1e5, "0", "Size of one head; 0 = hidden / heads.")
        .Int("ffn", &ModelSpec::ffn, 0, 1e8, "0",
             "MLP inner size; 0 = 4*hidden for GeLU, 8/3*hidden rounded up to 256 for SwiGLU.")
        .Int("vocab", &ModelSpec::vocab, 1, 1e8, "", "Vocabulary size V.")
        .Int("max_seq", &ModelSpec::max_seq, 0, 1e9, "0",
             "Positions in a learned position table (0 = the workload's sequence length).")
        .Enum<Activation>("activation", &ModelSpec::activation,
                          {{"gelu", Activation::kGelu}, {"swiglu", Activation::kSwiglu}}, "gelu",
                          "MLP: gelu (2 matrices) or swiglu (3 matrices, gated).")
        .Enum<Norm>("norm", &ModelSpec::norm,
                    {{"layernorm", Norm::kLayerNorm}, {"rmsnorm", Norm::kRmsNorm}}, "layernorm",
                    "Normalisation layer.")
        .Enum<Position>("position", &ModelSpec::position,
                        {{"learned", Position::kLearned}, {"rope", Position::kRope}}, "learned",
                        "Position encoding: a learned table (adds max_seq*h parameters) or RoPE.")
        .Bool("bias", &ModelSpec::bias, "true", "Linear layers and norms carry biases.")
        .Bool("tied_embeddings", &ModelSpec::tied_embeddings, "true",
              "The LM head shares the input embedding matrix.")
        .Real("hidden_dropout", &ModelSpec::hidden_dropout, 0, 0.999, "0",
              "Dropout probability on the two residual branches of a layer (Megatron-LM "
              "--hidden-dropout, GPT default 0.1; Llama-style models 0). Above 0 each branch's "
              "fused bias-dropout-add also writes a 1-byte mask per element, kept for the backward.")
        .Real("attention_dropout", &ModelSpec::attention_dropout, 0, 0.999, "0",
              "Dropout probability on the attention probabilities (Megatron-LM --attention-dropout, "
              "GPT default 0.1; Llama-style models 0). With materialised attention it adds a dropout "
              "kernel over the s x s scores and keeps its mask and output (3 bytes per score); "
              "FlashAttention regenerates the mask in its backward and keeps nothing.")
        .Int("experts", &ModelSpec::experts, 1, 1e5, "1", "Experts per MoE layer (1 = dense).")
        .Int("top_k", &ModelSpec::top_k, 1, 1e5, "1", "Experts each token is routed to.")
        .Int("moe_every", &ModelSpec::moe_every, 1, 1e5, "1",
             "Every n-th layer is a MoE layer (GLaM: 2).")
        .Int("expert_ffn", &ModelSpec::expert_ffn, 0, 1e8, "0", "Inner size of one expert; 0 = ffn.")
        .Int("shared_experts", &ModelSpec::shared_experts, 0, 1e4, "0",
             "Shared experts every token runs besides its top_k routed ones (DeepSeekMoE; "
             "DeepSeek-V3: 1).")
        .Int("shared_expert_ffn", &ModelSpec::shared_expert_ffn, 0, 1e8, "0",
             "Inner size of one shared expert; 0 = expert_ffn.")
        .Int("routing_node_limit", &ModelSpec::routing_node_limit, 0, 1e5, "0",
             "Node-limited routing: a token's routed experts lie on at most this many nodes, so "
             "it crosses the scale-out network once per node and reaches its experts there over "
             "the scale-up domain (DeepSeek-V3: 4); 0 = no limit.")
        .Int("routing_groups", &ModelSpec::routing_groups, 0, 1e5, "0",
             "Group-limited routing: the routed experts form this many equal groups of "
             "consecutive experts (DeepSeek-V3's config: n_group 8); 0 = no groups.")
        .Int("routing_group_limit", &ModelSpec::routing_group_limit, 0, 1e5, "0",
             "Group-limited routing: each token's routed experts come from at most this many "
             "groups (DeepSeek-V3's config: topk_group 4). Where the groups line up with the "
             "nodes an EP group spans, a token reaches at most this many nodes (as "
             "routing_node_limit); 0 = no limit.")
        .Int("first_dense_layers", &ModelSpec::first_dense_layers, 0, 1e5, "0",
             "The first n layers keep a dense MLP of size ffn (DeepSeek-V3: 3); the MoE layers "
             "follow, every moe_every-th.")
        .Int("kv_lora_rank", &ModelSpec::kv_lora_rank, 0, 1e6, "0",
             "Multi-head latent attention: rank of the cached KV latent (DeepSeek-V2 d_c); "
             "0 = standard K/V heads.")
        .Int("rope_head_dim", &ModelSpec::rope_head_dim, 0, 1e5, "0",
             "Multi-head latent attention: size of the decoupled RoPE key cached per token "
             "(DeepSeek-V2 d_h^R); with kv_lora_rank > 0 queries and keys carry head_dim + "
             "rope_head_dim per head.")
        .Int("q_lora_rank", &ModelSpec::q_lora_rank, 0, 1e6, "0",
             "Multi-head latent attention: rank of the query latent (DeepSeek-V2 d_c'); 0 = "
             "queries projected from the hidden state.")
        .Int("v_head_dim", &ModelSpec::v_head_dim, 0, 1e5, "0",
             "Multi-head latent attention: value size per head; 0 = head_dim.")
        .Int("mtp_depth", &ModelSpec::mtp_depth, 0, 64, "0",
             "Multi-token prediction modules (DeepSeek-V3: 1): each adds a transformer block, a "
             "2h x h projection and an LM-head pass on the last pipeline stage.")
        .Bool("qk_norm", &ModelSpec::qk_norm, "false",
              "A norm (of the kind `norm` names) on each head's query and key after the QKV "
              "projection, before RoPE (Qwen3, Llama 4, Gemma 3, OLMo 2): two more norms a layer "
              "over the queries and keys, and one head's width of weights each.")
        .Int("sliding_window", &ModelSpec::sliding_window, 0, 1e9, "0",
             "Sliding-window attention: a windowed layer's query attends to itself and the "
             "sliding_window - 1 tokens before it (Mistral 7B v0.1: 4096; Gemma 3: 1024); 0 = "
             "every layer attends to the whole sequence. Priced in training (the fused attention "
             "kernel's work and the model FLOPs) and in inference (a windowed layer caches and "
             "reads only its last sliding_window tokens).")
        .Int("sliding_window_layers", &ModelSpec::sliding_window_layers, 0, 1e6, "0",
             "How many of the layers use sliding_window (Mistral 7B v0.1: all 32; Gemma 2 9B: 21 of "
             "42, every other; Gemma 3 27B: 52 of 62, five of every six); the rest attend to the "
             "whole sequence.")
        .Int("attention_chunk", &ModelSpec::attention_chunk, 0, 1e9, "0",
             "Chunked attention (Llama 4: 8192): a chunked layer cuts the sequence into chunks of "
             "attention_chunk tokens and each query attends causally within its own chunk; 0 = no "
             "chunks. Priced like sliding_window in training (the fused attention kernel's work "
             "and the model FLOPs) and in inference (a chunked layer caches its current chunk "
             "only); a model states a window or chunks, not both.")
        .Int("attention_chunk_layers", &ModelSpec::attention_chunk_layers, 0, 1e6, "0",
             "How many of the layers use attention_chunk (Llama 4 Scout and Maverick: 36 of 48, "
             "all but every fourth); the rest attend to the whole sequence.")
        .Real("attention_softcap", &ModelSpec::attention_softcap, 0, 1e6, "0",
              "Attention logit soft-capping (Gemma 2: 50): every score becomes cap x tanh(score / "
              "cap) before the softmax; 0 = none. With training.attention materialized it is three "
              "more element-wise passes over the scores (as NeMo's and transformers' Gemma 2 run "
              "it) and its tanh's output kept for the backward; inside a fused attention kernel "
              "(flash-attn 2.6 and later) it is not priced.")
        .Real("final_logit_softcap", &ModelSpec::final_logit_softcap, 0, 1e6, "0",
              "Final logit soft-capping (Gemma 2: 30): the logits become cap x tanh(logit / cap) "
              "before the loss; 0 = none. Three element-wise passes over the logits forward and "
              "their backward, and the tanh's output kept, on the last pipeline stage.")
        .Real("published_params", &ModelSpec::published_params, 0, 1e16, "0",
              "Parameter count the source states, for checking (0 = unknown).");
    return s;
  }();
  return schema;
}

void CheckModel(const ModelSpec& m, const std::string& path, const base::SourceLocation& where,
                base::Diagnostics& diags) {
  if (m.heads > 0 && m.head_dim == 0 && m.hidden % m.heads != 0)
    diags.Add(where, path + ".heads", std::to_string(m.heads),
              "heads must divide hidden (" + std::to_string(m.hidden) +
                  ") unless head_dim is given");
  if (m.kv_heads > 0 && m.heads % m.kv_heads != 0)
    diags.Add(where, path + ".kv_heads", std::to_string(m.kv_heads),
              "kv_heads must divide heads (" + std::to_string(m.heads) + ")");
  if (m.experts > 1 && m.first_dense_layers >= m.layers)
    diags.Add(where, path + ".first_dense_layers", std::to_string(m.first_dense_layers),
              "must be below layers (" + std::to_string(m.layers) + ") for a MoE model");
  if ((m.q_lora_rank > 0 || m.v_head_dim > 0) && m.kv_lora_rank == 0)
    diags.Add(where, path + (m.q_lora_rank > 0 ? ".q_lora_rank" : ".v_head_dim"),
              std::to_string(m.q_lora_rank > 0 ? m.q_lora_rank : m.v_head_dim),
              "needs multi-head latent attention (kv_lora_rank > 0)");
  if (m.qk_norm && m.kv_lora_rank > 0)
    diags.Add(where, path + ".qk_norm", "true",
              "QK-norm is modelled for standard attention; multi-head latent attention normalises "
              "its latents instead (kv_lora_rank > 0)");
  // Local layers (a window or chunks): their count with their span.
  const auto local = [&](int64_t span, int64_t count, const std::string& key, const char* with,
                         const char* needs) {
    if (span > 0 && (count < 1 || count > m.layers))
      diags.Add(where, path + "." + key + "_layers", std::to_string(count),
                std::string("with ") + with + ", how many layers use it: 1 to layers (" +
                    std::to_string(m.layers) + ")");
    if (span == 0 && count > 0)
      diags.Add(where, path + "." + key + "_layers", std::to_string(count), std::string("needs ") + needs);
  };
  local(m.sliding_window, m.sliding_window_layers, "sliding_window", "a sliding_window",
        "sliding_window (the tokens a windowed layer attends to)");
  local(m.attention_chunk, m.attention_chunk_layers, "attention_chunk", "an attention_chunk",
        "attention_chunk (the tokens of a chunk)");
  if (m.attention_chunk > 0 && m.sliding_window > 0)
    diags.Add(where, path + ".attention_chunk", std::to_string(m.attention_chunk),
              "a model states sliding_window or attention_chunk, not both (sliding_window is " +
                  std::to_string(m.sliding_window) + ")");
  if (m.routing_group_limit > 0 && m.routing_groups == 0)
    diags.Add(where, path + ".routing_group_limit", std::to_string(m.routing_group_limit),
              "needs routing_groups (the groups a token's experts are chosen among)");
  if (m.routing_groups > 0 && m.routing_group_limit > m.routing_groups)
    diags.Add(where, path + ".routing_group_limit", std::to_string(m.routing_group_limit),
              "must be at most routing_groups (" + std::to_string(m.routing_groups) + ")");
  if (m.routing_groups > 0 && (m.experts <= 1 || m.experts % m.routing_groups != 0))
    diags.Add(where, path + ".routing_groups", std::to_string(m.routing_groups),
              "must divide the routed experts (" + std::to_string(m.experts) + ") into equal groups");
  else if (m.routing_groups > 0 && m.routing_group_limit > 0 &&
           m.routing_group_limit * (m.experts / m.routing_groups) < m.top_k)
    diags.Add(where, path + ".routing_group_limit", std::to_string(m.routing_group_limit),
              "the groups a token may use must hold its top_k (" + std::to_string(m.top_k) +
                  ") experts; routing_group_limit x experts / routing_groups = " +
                  std::to_string(m.routing_group_limit * (m.experts / m.routing_groups)));
  if (m.top_k > m.experts)
    diags.Add(where, path + ".top_k", std::to_string(m.top_k),
              "top_k must be at most experts (" + std::to_string(m.experts) + ")");
}

}  // namespace orrery::models
