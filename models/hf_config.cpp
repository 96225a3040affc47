#include "models/hf_config.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

namespace orrery::models {
namespace {

using nlohmann::json;

enum class Family { kLlama, kGptLearned, kNeox };

struct TypeInfo {
  const char* type;
  Family family;
};
// model_type values and the architecture each implies (transformers'
// modeling_<type>.py): gated SiLU MLP + RMSNorm + RoPE, or GeLU + LayerNorm.
constexpr TypeInfo kTypes[] = {
    {"llama", Family::kLlama},      {"mistral", Family::kLlama},   {"mixtral", Family::kLlama},
    {"qwen2", Family::kLlama},      {"qwen2_moe", Family::kLlama}, {"qwen3", Family::kLlama},
    {"qwen3_moe", Family::kLlama},  {"gemma", Family::kLlama},     {"gemma2", Family::kLlama},
    {"phi3", Family::kLlama},       {"gpt2", Family::kGptLearned}, {"gpt_bigcode", Family::kGptLearned},
    {"opt", Family::kGptLearned},   {"gpt_neox", Family::kNeox},
    {"deepseek_v2", Family::kLlama}, {"deepseek_v3", Family::kLlama},
    {"llama4", Family::kLlama},     {"llama4_text", Family::kLlama},
    {"gemma3", Family::kLlama},     {"gemma3_text", Family::kLlama},
    {"gpt_oss", Family::kLlama},    {"glm4_moe", Family::kLlama},
    // Kimi K2 is DeepSeek-V3's architecture under a name of its own (Moonshot
    // AI's deployment guide: "Kimi-K2 reuses the DeepSeekV3CausalLM
    // architecture", model_type kimi_k2 set to tell the engines apart).
    {"kimi_k2", Family::kLlama},
};

// Keys that change nothing a step's time or memory depends on: the file's
// bookkeeping (architectures, versions, datatypes, token ids), numerics
// that move no bytes (norm epsilons, RoPE's base and scaling, the
// activation's name within a family that prices its gated unit alike, the
// router's loss coefficients and weight normalisation, attention scaling),
// inference settings (use_cache) and classification or generation heads.
// max_window_layers matters only with a sliding window, which is reported.
// Llama 4's attention temperature (attn_temperature_tuning, floor_scale,
// attn_scale) scales the NoPE layers' queries by a factor per position:
// one element-wise pass over the queries, not priced.
const std::set<std::string>& NoCostKeys() {
  static const std::set<std::string> keys = {
      "architectures", "torch_dtype", "dtype", "transformers_version", "bos_token_id", "eos_token_id",
      "pad_token_id", "sep_token_id", "decoder_start_token_id", "initializer_range", "initializer_factor",
      "rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon", "rope_theta", "rope_scaling", "rope_interleave",
      "rope_parameters", "attn_temperature_tuning", "floor_scale", "attn_scale",
      "use_cache", "hidden_act", "activation_function", "pretraining_tp", "router_aux_loss_coef",
      "output_router_logits", "router_z_loss_coef", "router_jitter_noise", "norm_topk_prob",
      "routed_scaling_factor", "aux_loss_alpha", "seq_aux", "scoring_func", "topk_method", "ep_size",
      "max_window_layers", "n_ctx", "attn_implementation", "_attn_implementation", "tokenizer_class",
      "embd_pdrop", "scale_attn_weights", "scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn",
      "summary_type", "summary_use_proj", "summary_activation", "summary_proj_to_labels",
      "summary_first_dropout", "task_specific_params", "id2label", "label2id", "return_dict",
      "output_hidden_states", "output_attentions", "torchscript", "use_return_dict", "classifier_dropout",
      // Gemma 2: the gate's GeLU (hidden_act's twin), the softmax scale's
      // denominator, the cache class (its windows are read), the window's
      // older name beside sliding_window.
      "hidden_activation", "query_pre_attn_scalar", "cache_implementation", "sliding_window_size",
      // Gemma 3: the local layers' RoPE base.
      "rope_local_base_freq",
      // gpt-oss: a copy of num_experts_per_tok beside it, and YaRN's original
      // context (RoPE scaling).
      "experts_per_token", "initial_context_length"};
  return keys;
}

// Line and column (1-based) of the first `"key"` in the text, or of the
// file's start when the key is absent.
base::SourceLocation Where(const std::string& text, const std::string& file,
                           const std::string& key) {
  const size_t at = key.empty() ? std::string::npos : text.find("\"" + key + "\"");
  if (at == std::string::npos) return {file, 1, 1};
  const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
  const size_t nl = text.rfind('\n', at);
  const int col = static_cast<int>(nl == std::string::npos ? at + 1 : at - nl);
  return {file, line, col};
}

// A string member, or "" when absent or not a string (never throws).
std::string StringOf(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A `layer_types` list (transformers 4.53 on): how many of its entries are
// `local` ("sliding_attention", "chunked_attention"); -1 unless it has one
// entry a layer, each `local` or "full_attention".
int64_t CountLayerTypes(const json& cfg, int64_t layers, const char* local) {
  const auto types = cfg.find("layer_types");
  if (types == cfg.end() || !types->is_array() || static_cast<int64_t>(types->size()) != layers) return -1;
  int64_t n = 0;
  for (const json& t : *types) {
    if (!t.is_string()) return -1;
    const std::string name = t.get<std::string>();
    if (name == local) {
      ++n;
    } else if (name != "full_attention") {
      return -1;
    }
  }
  return n;
}

// Llama 4's text model (transformers' configuration_llama4.py,
// Llama4TextConfig, and modeling_llama4.py), where it differs from Llama 3,
// with the class's defaults where the file leaves a key out:
// - every interleave_moe_layer_step-th layer is MoE (moe_layers =
//   range(step - 1, layers, step), default 1): 16 or 128 routed experts of
//   intermediate_size (default 8192), top num_experts_per_tok (default 1),
//   and one shared expert of the same width (Llama4TextMoe.shared_expert);
//   the dense layers' MLP is intermediate_size_mlp wide (default 16384);
// - the RoPE layers attend within chunks of attention_chunk_size tokens
//   (default 8192; null: none), every layer but each no_rope_layer_interval-
//   th (default 4), or as no_rope_layers (1 = RoPE) or layer_types
//   ("chunked_attention") list them;
// - use_qk_norm (default true): an L2 norm of the RoPE layers' queries and
//   keys (Llama4TextL2Norm, no weight). Priced as qk_norm on every layer, so
//   the NoPE layers' norms (one in four) are counted too.
template <class Integer, class Boolean>
void ReadLlama4(const json& cfg, ModelSpec& m, Integer&& integer, Boolean&& boolean, std::set<std::string>& read) {
  const int64_t expert_width = integer({"intermediate_size"}, false, 8192, 1);
  m.ffn = integer({"intermediate_size_mlp"}, false, 16384, 1);
  if (!cfg.contains("num_local_experts")) {
    m.experts = 16;
    m.top_k = integer({"num_experts_per_tok"}, false, 1, 1);
  }
  m.expert_ffn = expert_width;
  m.shared_experts = 1;
  m.shared_expert_ffn = 0;
  m.moe_every = integer({"interleave_moe_layer_step"}, false, 1, 1);
  // An explicit moe_layers list is read where it is the step's own pattern.
  const auto moe_layers = cfg.find("moe_layers");
  if (moe_layers != cfg.end() && moe_layers->is_array()) {
    bool pattern = static_cast<int64_t>(moe_layers->size()) == m.layers / m.moe_every;
    int64_t expected = m.moe_every - 1;
    for (const json& v : *moe_layers) {
      pattern = pattern && v.is_number_integer() && v.get<int64_t>() == expected;
      expected += m.moe_every;
    }
    if (pattern) read.insert("moe_layers");
  }
  m.qk_norm = boolean("use_qk_norm", true);
  // Chunked layers: layer_types, else no_rope_layers, else the interval.
  const auto chunk_key = cfg.find("attention_chunk_size");
  if (chunk_key != cfg.end() && chunk_key->is_null()) {
    read.insert("attention_chunk_size");
    return;
  }
  const int64_t chunk = integer({"attention_chunk_size"}, false, 8192, 1);
  const int64_t interval = integer({"no_rope_layer_interval"}, false, 4, 1);
  int64_t chunked = m.layers - m.layers / interval;
  const auto rope_layers = cfg.find("no_rope_layers");
  if (rope_layers != cfg.end() && rope_layers->is_array() && !rope_layers->empty()) {
    int64_t rope = 0;
    bool known = static_cast<int64_t>(rope_layers->size()) == m.layers;
    for (const json& v : *rope_layers) {
      known = known && v.is_number_integer() && (v.get<int64_t>() == 0 || v.get<int64_t>() == 1);
      rope += known && v.get<int64_t>() == 1 ? 1 : 0;
    }
    if (known) {
      read.insert("no_rope_layers");
      chunked = rope;
    }
  }
  if (const int64_t n = CountLayerTypes(cfg, m.layers, "chunked_attention"); n >= 0) {
    read.insert("layer_types");
    chunked = n;
  }
  if (chunked > 0) {
    m.attention_chunk = chunk;
    m.attention_chunk_layers = chunked;
  }
}

}  // namespace

bool IsHfConfigPath(const std::string& name) {
  if (name.size() > 3 && name.compare(0, 3, "hf:") == 0) return true;
  return name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0;
}

std::string HfConfigFile(const std::string& name) {
  return name.size() > 3 && name.compare(0, 3, "hf:") == 0 ? name.substr(3) : name;
}

bool ReadHfConfig(const std::string& file, ModelSpec& out, base::Diagnostics& diags) {
  std::ifstream in(file);
  if (!in) {
    diags.Add({file, 0, 0}, "", "", "cannot read the model config file");
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseHfConfig(ss.str(), file, out, diags);
}

bool ParseHfConfig(const std::string& text, const std::string& file, ModelSpec& out,
                   base::Diagnostics& diags) {
  const size_t before = diags.size();
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    // e.byte is the 1-based offset where parsing stopped (the end of the
    // offending token).
    const size_t at = std::min(e.byte > 0 ? e.byte - 1 : 0, text.size());
    const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
    const size_t nl = at > 0 ? text.rfind('\n', at - 1) : std::string::npos;
    const int col = static_cast<int>(nl == std::string::npos ? at + 1 : at - nl);
    // e.what(): "[json.exception.parse_error.101] parse error at line 5, column 23:
    // syntax error while parsing object separator - unexpected string literal; expected '}'"
    const std::string what = e.what();
    const size_t dash = what.rfind(" - ");
    diags.Add({file, line, col}, "", "",
              "not valid JSON" + (dash == std::string::npos ? "" : ": " + what.substr(dash + 3)));
    return false;
  }
  if (!root.is_object()) {
    diags.Add({file, 1, 1}, "", "", "expected a JSON object (a Hugging Face config.json)");
    return false;
  }
  // Multimodal configs keep the language model under text_config.
  const json& cfg = root.contains("text_config") && root["text_config"].is_object()
                        ? root["text_config"]
                        : root;
  const std::string prefix = &cfg == &root ? "" : "text_config.";

  std::string type = StringOf(cfg, "model_type");
  if (type.empty()) type = StringOf(root, "model_type");
  const TypeInfo* info = nullptr;
  for (const auto& t : kTypes)
    if (type == t.type) info = &t;
  if (info == nullptr) {
    std::string known;
    for (const auto& t : kTypes) known += std::string(known.empty() ? "" : ", ") + t.type;
    diags.Add(Where(text, file, "model_type"), prefix + "model_type", type,
              type.empty() ? "required key is missing (the architecture)"
                           : "model type not modelled",
              "modelled types: " + known);
    return false;
  }

  // The keys read below (what the file sets beyond them is reported).
  std::set<std::string> read = {"model_type", "_name_or_path", "text_config"};
  // An integer key: the first of `names` present; `required` or else `fallback`.
  auto integer = [&](std::initializer_list<const char*> names, bool required, int64_t fallback,
                     int64_t min) -> int64_t {
    for (const char* k : names) {
      if (!cfg.contains(k) || cfg[k].is_null()) continue;
      read.insert(k);
      const json& v = cfg[k];
      if (!v.is_number_integer() || v.get<int64_t>() < min) {
        diags.Add(Where(text, file, k), prefix + k, v.dump(),
                  "expected an integer >= " + std::to_string(min));
        return fallback;
      }
      return v.get<int64_t>();
    }
    if (required)
      diags.Add(Where(text, file, ""), prefix + *names.begin(), "", "required key is missing");
    return fallback;
  };
  auto boolean = [&](const char* k, bool fallback) {
    if (!cfg.contains(k)) return fallback;
    read.insert(k);
    if (!cfg[k].is_boolean()) {
      diags.Add(Where(text, file, k), prefix + k, cfg[k].dump(), "expected true or false");
      return fallback;
    }
    return cfg[k].get<bool>();
  };

  ModelSpec m;
  m.name = StringOf(root, "_name_or_path");
  if (m.name.empty()) {
    // The folder a config.json sits in names the model
    // ("Llama-3.1-8B/config.json"); a file of another name names it itself
    // ("deepseek-v3.config.json", "my-model.json").
    const size_t slash = file.find_last_of('/');
    const std::string base = slash == std::string::npos ? file : file.substr(slash + 1);
    if (base == "config.json" && slash != std::string::npos && slash > 0) {
      const size_t prev = file.find_last_of('/', slash - 1);
      m.name = file.substr(prev == std::string::npos ? 0 : prev + 1,
                           slash - (prev == std::string::npos ? 0 : prev + 1));
    } else {
      m.name = base;
      for (const char* ext : {".json", ".config"})
        if (m.name.size() > std::strlen(ext) &&
            m.name.compare(m.name.size() - std::strlen(ext), std::strlen(ext), ext) == 0)
          m.name.resize(m.name.size() - std::strlen(ext));
    }
  }
  m.citation = "Hugging Face config.json: " + file;
  // Gemma 3's published configs leave keys at transformers' Gemma3TextConfig
  // defaults (configuration_gemma3.py: vocab_size 262,208, head_dim 256,
  // num_key_value_heads 4, max_position_embeddings 131,072, sliding_window
  // 4096, sliding_window_pattern 6, tie_word_embeddings true), which apply.
  const bool gemma3 = type == "gemma3" || type == "gemma3_text";
  m.layers = integer({"num_hidden_layers", "n_layer"}, true, 1, 1);
  m.hidden = integer({"hidden_size", "n_embd"}, true, 1, 1);
  m.heads = integer({"num_attention_heads", "n_head"}, true, 1, 1);
  m.kv_heads = integer({"num_key_value_heads"}, false, gemma3 ? 4 : 0, 1);
  m.head_dim = integer({"head_dim"}, false, gemma3 ? 256 : 0, 1);
  m.vocab = integer({"vocab_size"}, !gemma3, gemma3 ? 262208 : 1, 1);
  m.max_seq = integer({"max_position_embeddings", "n_positions"}, false, gemma3 ? 131072 : 0, 1);
  // Dropout probabilities as the config states them (GPT-2: resid_pdrop,
  // attn_pdrop; GPT-NeoX: hidden_dropout, attention_dropout; Llama-style:
  // attention_dropout only); a key left out means no dropout.
  auto probability = [&](std::initializer_list<const char*> names) {
    for (const char* k : names) {
      if (!cfg.contains(k) || cfg[k].is_null()) continue;
      read.insert(k);
      const json& v = cfg[k];
      if (!v.is_number() || v.get<double>() < 0 || v.get<double>() >= 1) {
        diags.Add(Where(text, file, k), prefix + k, v.dump(), "expected a probability in [0, 1)");
        return 0.0;
      }
      return v.get<double>();
    }
    return 0.0;
  };
  m.hidden_dropout = probability({"hidden_dropout", "resid_pdrop"});
  m.attention_dropout = probability({"attention_dropout", "attn_pdrop"});
  // Logit soft-capping (Gemma 2's attn_logit_softcapping 50.0 and
  // final_logit_softcapping 30.0, configuration_gemma2.py; null: none).
  auto softcap = [&](const char* k) {
    if (!cfg.contains(k) || cfg[k].is_null()) return 0.0;
    read.insert(k);
    const json& v = cfg[k];
    if (!v.is_number() || !(v.get<double>() >= 0) || v.get<double>() > 1e6) {
      diags.Add(Where(text, file, k), prefix + k, v.dump(), "expected a cap >= 0 (0 or null: none)");
      return 0.0;
    }
    return v.get<double>();
  };
  m.attention_softcap = softcap("attn_logit_softcapping");
  m.final_logit_softcap = softcap("final_logit_softcapping");
  if (info->family == Family::kLlama) {
    m.activation = Activation::kSwiglu;
    m.norm = Norm::kRmsNorm;
    m.position = Position::kRope;
    // gpt-oss: biased attention projections by default (GptOssConfig's
    // attention_bias True; its experts and router carry biases too).
    m.bias = boolean("attention_bias", type == "gpt_oss");
    m.tied_embeddings = boolean("tie_word_embeddings", type == "gemma" || type == "gemma2" || gemma3);
    m.ffn = integer({"intermediate_size"}, true, 0, 1);
    // Qwen3 and Gemma 3 normalise every head's query and key
    // (modeling_qwen3.py and modeling_qwen3_moe.py: Qwen3Attention's q_norm
    // and k_norm; modeling_gemma3.py: Gemma3Attention's; RMSNorms of
    // head_dim, always; no config key says so).
    m.qk_norm = type == "qwen3" || type == "qwen3_moe" || gemma3;
    // GLM-4.5 (glm4_moe): a QK-norm when use_qk_norm says so
    // (modeling_glm4_moe.py, Glm4MoeAttention's q_norm and k_norm; false by
    // default, true in GLM-4.5's released config).
    if (type == "glm4_moe") m.qk_norm = boolean("use_qk_norm", false);
  } else {
    m.activation = Activation::kGelu;
    m.norm = Norm::kLayerNorm;
    m.position = info->family == Family::kNeox ? Position::kRope : Position::kLearned;
    m.bias = true;
    m.tied_embeddings = boolean("tie_word_embeddings", info->family != Family::kNeox);
    m.ffn = integer({"intermediate_size", "n_inner", "ffn_dim"}, false, 0, 1);
  }
  m.experts = integer({"num_local_experts", "num_experts", "n_routed_experts"}, false, 1, 1);
  if (m.experts > 1) {
    m.top_k = integer({"num_experts_per_tok"}, true, 1, 1);
    m.expert_ffn = integer({"moe_intermediate_size"}, false, 0, 1);
    // DeepSeek-V2/V3 (modeling_deepseek_v3.py): shared experts of the
    // routed experts' width, the first k layers dense, every n-th MoE.
    m.shared_experts = integer({"n_shared_experts"}, false, 0, 0);
    m.first_dense_layers = integer({"first_k_dense_replace"}, false, 0, 0);
    m.moe_every = integer({"moe_layer_freq", "decoder_sparse_step"}, false, 1, 1);
    // DeepSeek-V2/V3's group-limited routing (MoEGate, modeling_deepseek_v3.py:
    // n_group groups of consecutive experts, a token's experts from the best
    // topk_group of them); priced where the groups line up with nodes
    // (engine::RoutingNodeLimit).
    m.routing_groups = integer({"n_group"}, false, 0, 0);
    m.routing_group_limit = integer({"topk_group"}, false, 0, 0);
    // Qwen2-MoE: one shared expert of its own width.
    const int64_t shared_ffn = integer({"shared_expert_intermediate_size"}, false, 0, 0);
    if (shared_ffn > 0) {
      m.shared_experts = 1;
      m.shared_expert_ffn = shared_ffn;
    }
  }
  // Multi-head latent attention (DeepSeek-V2 Sec. 2.1): per-head query/key
  // size qk_nope_head_dim + qk_rope_head_dim, values v_head_dim.
  m.kv_lora_rank = integer({"kv_lora_rank"}, false, 0, 0);
  if (m.kv_lora_rank > 0) {
    m.q_lora_rank = integer({"q_lora_rank"}, false, 0, 0);
    m.rope_head_dim = integer({"qk_rope_head_dim"}, true, 0, 0);
    m.head_dim = integer({"qk_nope_head_dim"}, true, 0, 1);
    m.v_head_dim = integer({"v_head_dim"}, false, 0, 0);
  }
  m.mtp_depth = integer({"num_nextn_predict_layers"}, false, 0, 0);
  if (type == "llama4" || type == "llama4_text") ReadLlama4(cfg, m, integer, boolean, read);
  // Sliding-window attention: which layers use `sliding_window` (null: no
  // window). Qwen2/Qwen3 window only with use_sliding_window true, the layers
  // from max_window_layers on (modeling_qwen2.py, Qwen2Attention); Gemma 2
  // and gpt-oss every other layer from the first (modeling_gemma2.py:
  // is_sliding = not layer_idx % 2; GptOssConfig's default layer_types);
  // Gemma 3 all but every sliding_window_pattern-th
  // (modeling_gemma3.py: is_sliding = bool((layer_idx + 1) % pattern), 52
  // of 62 at 6; 4096 tokens when the key is absent); Mistral and Phi-3
  // every layer. A `layer_types` list of
  // sliding_attention / full_attention entries (transformers 4.53 on) says
  // it per layer and is counted instead.
  const bool qwen = type == "qwen2" || type == "qwen2_moe" || type == "qwen3" || type == "qwen3_moe";
  const auto use_window = cfg.find("use_sliding_window");
  const bool window_on_flag = use_window != cfg.end() && use_window->is_boolean() && use_window->get<bool>();
  // Off when the flag says false, or for Qwen when it is absent (its default).
  const bool window_off = (use_window != cfg.end() && use_window->is_boolean() && !window_on_flag) ||
                          (qwen && !window_on_flag);
  if ((gemma3 && !cfg.contains("sliding_window")) ||
      (cfg.contains("sliding_window") && !cfg["sliding_window"].is_null() && !window_off)) {
    const int64_t window = integer({"sliding_window"}, false, gemma3 ? 4096 : 0, 1);
    int64_t windowed = m.layers;
    if (type == "gemma2" || type == "gpt_oss") windowed = (m.layers + 1) / 2;
    if (gemma3)
      windowed = m.layers - m.layers / integer({"sliding_window_pattern", "_sliding_window_pattern"}, false, 6, 1);
    if (qwen) {
      read.insert("use_sliding_window");
      windowed = std::max<int64_t>(0, m.layers - integer({"max_window_layers"}, false, 0, 0));
    }
    if (const int64_t n = CountLayerTypes(cfg, m.layers, "sliding_attention"); n >= 0) {
      read.insert("layer_types");
      windowed = n;
    }
    if (window > 0 && windowed > 0) {
      m.sliding_window = window;
      m.sliding_window_layers = windowed;
    }
  }
  // What the file says that is neither read nor free of cost (a feature
  // turned off, false, null or an empty list, says nothing): reported with
  // the model.
  // Qwen2's configs state a window with use_sliding_window false: unused.
  for (auto it = cfg.begin(); it != cfg.end(); ++it) {
    const json& v = it.value();
    if (read.count(it.key()) > 0 || NoCostKeys().count(it.key()) > 0) continue;
    if (v.is_null() || (v.is_boolean() && !v.get<bool>()) || (v.is_structured() && v.empty())) continue;
    if (window_off && it.key() == "sliding_window") continue;
    m.unread_keys.push_back(prefix + it.key());
  }
  if (diags.size() != before) return false;
  CheckModel(m, prefix.empty() ? "model" : "model.text_config", {file, 1, 1}, diags);
  if (diags.size() != before) return false;
  out = m;
  return true;
}

}  // namespace orrery::models
