// Model shapes the unit tests build by hand, without a preset file: the two
// families most tests price, each set up once. A test sets what differs
// (dropout, experts, head_dim, name) on the returned spec.
//
// Header only, models/ alone: the models, parallelism and cross-room test
// binaries all include it.
#pragma once

#include <cstdint>

#include "models/model_spec.h"

namespace orrery::test {

// A GPT decoder as Narayanan et al. 2021 (Sec. 3.1, Table 1) count it:
// learned positions, LayerNorm, a 4h GeLU MLP, biases, tied embeddings
// (ModelSpec's defaults), Megatron-LM's padded 51,200-word vocabulary.
inline models::ModelSpec Gpt(int64_t layers, int64_t hidden, int64_t heads) {
  models::ModelSpec m;
  m.name = "gpt";
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.vocab = 51200;
  return m;
}

// A Llama-family decoder (Touvron et al. 2023, Sec. 2.2): SwiGLU MLP of
// `ffn`, RMSNorm, rotary positions, no biases, untied input and output
// embeddings, `kv_heads` grouped-query KV heads (Ainslie et al. 2023).
inline models::ModelSpec Llama(int64_t layers, int64_t hidden, int64_t heads, int64_t kv_heads,
                               int64_t ffn, int64_t vocab) {
  models::ModelSpec m;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.ffn = ffn;
  m.vocab = vocab;
  m.activation = models::Activation::kSwiglu;
  m.norm = models::Norm::kRmsNorm;
  m.position = models::Position::kRope;
  m.bias = false;
  m.tied_embeddings = false;
  return m;
}

}  // namespace orrery::test
