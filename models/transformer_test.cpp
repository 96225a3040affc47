#include "models/transformer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "tests/support/model_shapes.h"

namespace orrery::models {
namespace {

using test::Gpt;
using test::Llama;

// One sequence of `seq` tokens on one device with attention materialised
// (flash off): the s x s score traffic the attention tests count.
LayerShape MaterialisedSequence(int64_t seq) {
  LayerShape s;
  s.seq = seq;
  s.full_seq = seq;
  s.flash = false;
  return s;
}

// The operator named `name` in `ops` (the first of that name), or null.
const Op* FindOp(const OpList& ops, const char* name) {
  for (int i = 0; i < ops.count; ++i)
    if (std::string(ops.ops[static_cast<size_t>(i)].name) == name) return &ops.ops[static_cast<size_t>(i)];
  return nullptr;
}

// Two sequences of 512 tokens at tp 2 with sequence parallelism.
LayerShape TwoSequencesAtTp2WithSp() {
  LayerShape s;
  s.micro_batch = 2;
  s.seq = 512;
  s.full_seq = 512;
  s.tp = 2;
  s.sequence_parallel = true;
  return s;
}

// Bytes of the operator named `name` in `ops` (the last one of that name; 0
// when there is none).
double OpBytes(const OpList& ops, const char* name) {
  double b = 0;
  for (int i = 0; i < ops.count; ++i)
    if (std::string(ops.ops[static_cast<size_t>(i)].name) == name) b = ops.ops[static_cast<size_t>(i)].bytes;
  return b;
}

// Narayanan et al. 2021 Eq. 3 without recompute: 72 B s L h^2 (1 + s/6h + V/12Lh).
double Eq3NoRecompute(double B, double s, double L, double h, double V) {
  return 72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h));
}

TEST(Transformer, ModelFlopsEqualNarayananEq3ForGpt3) {
  const ModelSpec m = Gpt(96, 12288, 96);
  const double expected = Eq3NoRecompute(1536, 2048, 96, 12288, 51200);
  EXPECT_NEAR(ModelFlopsPerIteration(m, 1536, 2048) / expected, 1.0, 1e-12);
  // By hand: 72 * 1536 * 2048 * 96 * 12288^2 = 3.2831e18, times
  // (1 + 2048/73728 + 51200/14155776) = 1.031395, gives 3.3862e18 FLOP
  // (1.65 EFLOP of model work per GPT-3 step of 3.1M tokens).
  EXPECT_NEAR(ModelFlopsPerIteration(m, 1536, 2048), 3.3862e18, 0.0001e18);
}

// The attention scores' part of the model FLOPs (what a causal mask halves):
// Eq. 3's s/(6h) term, 72 B s L h^2 x s/(6h) = 12 B s^2 L h. GPT-3 at
// B 1536, s 2048: 12 x 1536 x 2048^2 x 96 x 12288 = 9.1198e16 FLOP of the
// 3.3862e18: (s / 6h) / (1 + s / 6h + V / 12Lh) = 0.027778 / 1.031395 =
// 2.6932 %. Two 1,024-wide layers at B 2, s 512: 12 x 2 x 512^2 x
// 2 x 1024 = 12,884,901,888 exactly.
TEST(Transformer, AttentionPartOfModelFlopsIsEq3sSequenceTerm) {
  OpList scratch;
  double attention = 0;
  const double total = ModelFlopsPerIteration(Gpt(96, 12288, 96), 1536, 2048, scratch, attention);
  EXPECT_NEAR(attention / (12.0 * 1536 * 2048.0 * 2048 * 96 * 12288), 1.0, 1e-12);
  EXPECT_NEAR(attention, 9.1198e16, 0.0001e16);
  EXPECT_NEAR(attention / total, 0.026932, 1e-6);
  EXPECT_EQ(ModelFlopsPerIteration(Gpt(2, 1024, 16), 2, 512, scratch, attention),
            ModelFlopsPerIteration(Gpt(2, 1024, 16), 2, 512));
  EXPECT_DOUBLE_EQ(attention, 12884901888.0);
}

TEST(Transformer, ModelFlopsEqualEq3AcrossNarayananTable1Shapes) {
  struct Row { int64_t L, h, a, B; };
  for (Row r : {Row{24, 2304, 24, 512}, Row{40, 6144, 48, 1024}, Row{128, 25600, 160, 3072}}) {
    const ModelSpec m = Gpt(r.L, r.h, r.a);
    const double e = Eq3NoRecompute(static_cast<double>(r.B), 2048, static_cast<double>(r.L),
                                    static_cast<double>(r.h), 51200);
    EXPECT_NEAR(ModelFlopsPerIteration(m, r.B, 2048) / e, 1.0, 1e-12) << r.h;
  }
}

// HeadOps ends with its loss (kHeadLossIsLast: the training estimator drops
// the last operator to price Megatron-Core's own loss, by count). GPT-3's
// head on one microbatch of 2048 tokens at tp 8, bf16: the final norm, the
// logits GEMM 2048 x 6400 x 12288 (2 x 2048 x 6400 x 12288 = 3.2212e11
// FLOP) and the loss over 2048 x 6400 logits, read in bf16 and written as
// fp32 softmax: 2048 x 6400 x (2 + 4) = 78,643,200 bytes.
TEST(Transformer, HeadOpsEndWithTheLoss) {
  const ModelSpec m = Gpt(96, 12288, 96);
  LayerShape s;
  s.seq = s.full_seq = 2048;
  s.tp = 8;
  OpList ops;
  HeadOps(m, s, ops);
  ASSERT_EQ(ops.count, 3);
  static_assert(kHeadLossIsLast);
  EXPECT_STREQ(ops.ops[1].name, "lm_head");
  EXPECT_DOUBLE_EQ(ops.ops[1].flops, 2.0 * 2048 * 6400 * 12288);
  EXPECT_STREQ(ops.ops[2].name, "cross_entropy");
  EXPECT_DOUBLE_EQ(ops.ops[2].bytes, 78643200.0);
}

TEST(Transformer, GptLayerParametersAre12hSquaredPlus13h) {
  // Per layer: 4h^2 + 4h (attention) + 8h^2 + 5h (MLP) + 4h (two LayerNorms)
  // = 12h^2 + 13h (Narayanan et al. 2021, Sec. 5.1, Eq. 2).
  const ModelSpec m = Gpt(96, 12288, 96);
  const double h = 12288;
  EXPECT_DOUBLE_EQ(LayerParameters(m, false), 12 * h * h + 13 * h);
  // Whole model, Eq. 2: 12 L h^2 (1 + 13/12h + (V + s)/12Lh) = 174.6 B for GPT-3.
  EXPECT_NEAR(ParameterCount(m, 2048) / 1e9, 174.6, 0.05);
}

TEST(Transformer, LlamaParametersWithGqaAndSwiglu) {
  const ModelSpec m = Llama(80, 8192, 64, 8, 28672, 32000);
  // Llama-2 70B as released: 68.98 B parameters (Touvron et al. 2023b).
  // Per layer: q,o 2*8192^2 + k,v 2*8192*1024 + MLP 3*8192*28672 + 2 norms.
  const double layer = 2.0 * 8192 * 8192 + 2.0 * 8192 * 1024 + 3.0 * 8192 * 28672 + 2 * 8192;
  EXPECT_DOUBLE_EQ(LayerParameters(m, false), layer);
  EXPECT_NEAR(ParameterCount(m, 4096) / 1e9, 68.98, 0.01);
}

TEST(Transformer, SwigluDefaultFfnFollowsLlamaRule) {
  ModelSpec m;
  m.hidden = 4096;
  m.activation = Activation::kSwiglu;
  // 8/3 * 4096 = 10922.67, rounded up to a multiple of 256 = 11008 (LLaMA-7B).
  EXPECT_EQ(FfnSize(m), 11008);
  m.activation = Activation::kGelu;
  EXPECT_EQ(FfnSize(m), 16384);
}

TEST(Transformer, TensorParallelSplitsGemmsButNotSequenceParallelNorms) {
  const ModelSpec m = Gpt(1, 4096, 32);
  LayerShape s;
  s.micro_batch = 2;
  s.seq = 1024;
  s.full_seq = 1024;
  OpList one, eight, eight_sp;
  LayerOps(m, s, false, 1, one);
  s.tp = 8;
  LayerOps(m, s, false, 1, eight);
  s.sequence_parallel = true;
  LayerOps(m, s, false, 1, eight_sp);
  ASSERT_EQ(one.count, eight.count);
  for (int i = 0; i < one.count; ++i) {
    const Op& a = one.ops[static_cast<size_t>(i)];
    const Op& b = eight.ops[static_cast<size_t>(i)];
    const Op& c = eight_sp.ops[static_cast<size_t>(i)];
    if (a.kind == OpKind::kElementwise && !a.attention_core && std::string(a.name) != "gelu") {
      EXPECT_DOUBLE_EQ(b.bytes, a.bytes) << a.name;        // replicated without SP
      EXPECT_DOUBLE_EQ(c.bytes, a.bytes / 8) << a.name;    // split with SP
    } else {
      EXPECT_DOUBLE_EQ(b.flops * 8, a.flops) << a.name;
    }
  }
}

// The bias gradients a framework reduces in kernels of its own
// (LayerShape::separate_bias_grad): each biased linear layer reads its
// output gradient once more. GPT with h = 1024 on tp 2 with sequence
// parallelism, 2 x 512 = 1,024 tokens of 2 B: the column-parallel layers see
// every token (QKV 3h / 2 = 1,536 wide: 1,024 x 1,536 x 2 = 3,145,728 B; the
// MLP's up projection 4h / 2 = 2,048 wide: 4,194,304 B), the row-parallel
// ones add their bias after the reduce-scatter, on 512 tokens of h = 1,024
// (1,048,576 B each). Nothing without the flag, nothing for a model without
// biases, nothing for a GEMM that has none (the attention's score GEMMs
// are inside FlashAttention here; the LM head has no bias).
TEST(Transformer, BiasGradientsReadEachBiasedLayersOutputGradient) {
  ModelSpec m = Gpt(1, 1024, 16);
  ASSERT_TRUE(m.bias);
  LayerShape s = TwoSequencesAtTp2WithSp();
  auto bias_bytes = [](const OpList& ops, const char* name) {
    const Op* op = FindOp(ops, name);
    return op != nullptr ? static_cast<double>(op->bias_grad_bytes) : -1.0;
  };
  auto total = [](const OpList& ops) {
    double t = 0;
    for (int i = 0; i < ops.count; ++i) t += ops.ops[static_cast<size_t>(i)].bias_grad_bytes;
    return t;
  };
  OpList ops;
  LayerOps(m, s, false, 1, ops);
  EXPECT_DOUBLE_EQ(total(ops), 0.0);
  s.separate_bias_grad = true;
  LayerOps(m, s, false, 1, ops);
  EXPECT_DOUBLE_EQ(bias_bytes(ops, "qkv_proj"), 3145728.0);
  EXPECT_DOUBLE_EQ(bias_bytes(ops, "out_proj"), 1048576.0);
  EXPECT_DOUBLE_EQ(bias_bytes(ops, "mlp_up"), 4194304.0);
  EXPECT_DOUBLE_EQ(bias_bytes(ops, "mlp_down"), 1048576.0);
  EXPECT_DOUBLE_EQ(total(ops), 9437184.0);
  // Without sequence parallelism the row-parallel biases see all 1,024 tokens.
  s.sequence_parallel = false;
  LayerOps(m, s, false, 1, ops);
  EXPECT_DOUBLE_EQ(bias_bytes(ops, "out_proj"), 2097152.0);
  EXPECT_DOUBLE_EQ(total(ops), 11534336.0);
  OpList head;
  HeadOps(m, s, head);
  EXPECT_DOUBLE_EQ(total(head), 0.0);
  m.bias = false;
  LayerOps(m, s, false, 1, ops);
  EXPECT_DOUBLE_EQ(total(ops), 0.0);
}

// Q, K and V split by views off one fused projection (training.qkv_split_cat:
// MPT's qkv.chunk, Megatron-LM's split_tensor_along_last_dim, litgpt's
// qkv.split): the split's backward concatenates their gradients, reading the
// three and writing the projection's output gradient; the forward copies
// nothing. GPT with hidden 1,024 and 16 heads of 64 at tp 2, two sequences
// of 512 gathered for the projection under sequence parallelism: the
// projection's output is 1,024 tokens x 3 x 1,024 / 2 = 1,536 features x 2 B
// = 3,145,728 B, the cat moves twice that. With 4 KV heads the output is
// (16 + 2 x 4) x 64 / 2 = 768 features wide, 1,572,864 B. MLA projects its
// queries and its latent apart: no cat.
TEST(Transformer, FusedQkvSplitGradientsAreConcatenatedInTheBackward) {
  ModelSpec m = Gpt(1, 1024, 16);
  LayerShape s = TwoSequencesAtTp2WithSp();
  OpList ops;
  LayerOps(m, s, false, 1, ops);
  EXPECT_EQ(FindOp(ops, "qkv_split_grad"), nullptr);
  const int without = ops.count;
  s.qkv_split_cat = true;
  LayerOps(m, s, false, 1, ops);
  ASSERT_EQ(ops.count, without + 1);
  const Op* split = FindOp(ops, "qkv_split_grad");
  ASSERT_NE(split, nullptr);
  EXPECT_EQ(split->kind, OpKind::kElementwise);
  EXPECT_DOUBLE_EQ(split->bytes, 0.0);
  EXPECT_DOUBLE_EQ(split->bwd_bytes, 6291456.0);
  EXPECT_DOUBLE_EQ(split->flops, 0.0);
  m.kv_heads = 4;
  LayerOps(m, s, false, 1, ops);
  EXPECT_DOUBLE_EQ(FindOp(ops, "qkv_split_grad")->bwd_bytes, 3145728.0);
  m.kv_lora_rank = 256;
  m.rope_head_dim = 32;
  LayerOps(m, s, false, 1, ops);
  EXPECT_EQ(FindOp(ops, "qkv_split_grad"), nullptr);
}

// Megatron-Core's attention with Transformer Engine around the fused QKV
// projection (training.rope_kernel, training.packed_qkv_copies). A Llama
// layer of hidden 1,024, 16 query heads and 4 KV heads of 64, at tp 2 with
// two sequences of 512 (1,024 tokens; 8 query and 2 KV heads a device), in
// bf16:
//   rope (TE's fused_rope_forward / backward): the queries' and keys' 1,024
//     x (8 + 2) x 64 = 655,360 elements read and written, 2,621,440 B
//     forward and as much backward;
//   query_copy (the GQA reshape out of the packed groups): 1,024 x 8 x 64 x
//     2 x 2 B = 2,097,152 B forward, no backward kernel;
//   value_copy (TE's layout check, the keys rewritten by RoPE): 1,024 x 2 x
//     64 x 2 x 2 B = 524,288 B forward, none backward, recomputed with the
//     attention core;
//   qkv_split_grad (SplitAlongDim's torch.cat): the projection's output,
//     1,024 x (8 + 2 x 2) x 64 x 2 B = 1,572,864 B, read and written
//     backward, 3,145,728 B.
// With 16 KV heads and RoPE: the RoPE kernel, the values' copy and the cat.
// With RoPE inside the attention kernel (rope_kernel off) the keys are not
// rewritten: with grouped queries only the queries' copy and the cat, with
// 16 KV heads nothing.
// A GPT (MHA, learned positions) runs none of them; an eager plan prices its
// own rotary kernels (10e) and reads neither flag; MLA none.
TEST(Transformer, MegatronCoreRopeAndPackedQkvCopies) {
  ModelSpec m = Llama(1, 1024, 16, 4, 2816, 32000);
  LayerShape s = TwoSequencesAtTp2WithSp();
  const char* const added[] = {"rope", "query_copy", "value_copy", "qkv_split_grad"};
  OpList ops;
  LayerOps(m, s, false, 1, ops);
  const int without = ops.count;
  for (const char* name : added) EXPECT_EQ(FindOp(ops, name), nullptr) << name;
  s.rope_kernel = true;
  s.packed_qkv_copies = true;
  LayerOps(m, s, false, 1, ops);
  EXPECT_EQ(ops.count, without + 4);
  const Op* rope = FindOp(ops, "rope");
  ASSERT_NE(rope, nullptr);
  EXPECT_DOUBLE_EQ(rope->bytes, 2621440.0);
  EXPECT_DOUBLE_EQ(BackwardBytes(*rope), 2621440.0);
  const Op* query = FindOp(ops, "query_copy");
  ASSERT_NE(query, nullptr);
  EXPECT_DOUBLE_EQ(query->bytes, 2097152.0);
  EXPECT_DOUBLE_EQ(BackwardBytes(*query), 0.0);
  EXPECT_FALSE(query->attention_core);
  const Op* value = FindOp(ops, "value_copy");
  ASSERT_NE(value, nullptr);
  EXPECT_DOUBLE_EQ(value->bytes, 524288.0);
  EXPECT_DOUBLE_EQ(BackwardBytes(*value), 0.0);
  EXPECT_TRUE(value->attention_core);
  const Op* cat = FindOp(ops, "qkv_split_grad");
  ASSERT_NE(cat, nullptr);
  EXPECT_DOUBLE_EQ(cat->bytes, 0.0);
  EXPECT_DOUBLE_EQ(BackwardBytes(*cat), 3145728.0);
  s.qkv_split_cat = true;  // one concatenation either way
  LayerOps(m, s, false, 1, ops);
  EXPECT_EQ(ops.count, without + 4);
  s.qkv_split_cat = false;
  s.rope_kernel = false;
  LayerOps(m, s, false, 1, ops);
  EXPECT_EQ(ops.count, without + 2);
  EXPECT_NE(FindOp(ops, "query_copy"), nullptr);
  EXPECT_NE(FindOp(ops, "qkv_split_grad"), nullptr);
  m.kv_heads = 16;
  LayerOps(m, s, false, 1, ops);
  EXPECT_EQ(ops.count, without);
  s.rope_kernel = true;
  LayerOps(m, s, false, 1, ops);
  EXPECT_EQ(ops.count, without + 3);
  EXPECT_EQ(FindOp(ops, "query_copy"), nullptr);
  EXPECT_DOUBLE_EQ(FindOp(ops, "value_copy")->bytes, 2097152.0);
  EXPECT_DOUBLE_EQ(BackwardBytes(*FindOp(ops, "qkv_split_grad")), 6291456.0);
  m.kv_heads = 4;
  s.eager = true;
  LayerOps(m, s, false, 1, ops);
  EXPECT_DOUBLE_EQ(FindOp(ops, "rope")->bytes, 10 * 655360.0 * 2);
  for (const char* name : {"query_copy", "value_copy", "qkv_split_grad"}) EXPECT_EQ(FindOp(ops, name), nullptr);
  s.eager = false;
  const ModelSpec gpt = Gpt(1, 1024, 16);
  LayerOps(gpt, s, false, 1, ops);
  for (const char* name : added) EXPECT_EQ(FindOp(ops, name), nullptr) << name;
  m.kv_lora_rank = 256;
  m.rope_head_dim = 32;
  LayerOps(m, s, false, 1, ops);
  for (const char* name : added) EXPECT_EQ(FindOp(ops, name), nullptr) << name;
}

// Sliding-window attention (ModelSpec::sliding_window): a windowed layer
// does s w - w^2 / 2 of causal attention's s^2 / 2 score elements.
//   Mistral 7B v0.1 (w 4096, all 32 layers): at s 4096 the window is the
//     whole causal triangle, share 1; at 8192, 1 - (1/2)^2 = 0.75.
//   Gemma 2 (w 4096 on 21 of 42 layers) at 8192: 1 - (1/2)(1/4) = 0.875.
//   Gemma 3 27B (w 1024 on 52 of 62) at 131,072: 1 - (52/62)(127/128)^2 =
//     177,100 / 1,015,808 = 0.1743.
// The fused attention operator's FLOPs carry the share; its bytes and a
// materialised attention's (which computes every score) do not.
TEST(Transformer, SlidingWindowsShrinkTheFusedAttentionsWork) {
  ModelSpec m = Llama(32, 4096, 32, 8, 14336, 32000);
  m.sliding_window = 4096;
  m.sliding_window_layers = 32;
  EXPECT_DOUBLE_EQ(LocalAttentionShare(m, 4096), 1.0);
  EXPECT_DOUBLE_EQ(LocalAttentionShare(m, 8192), 0.75);
  ModelSpec gemma2 = m;
  gemma2.layers = 42;
  gemma2.sliding_window_layers = 21;
  EXPECT_DOUBLE_EQ(LocalAttentionShare(gemma2, 8192), 0.875);
  ModelSpec gemma3 = m;
  gemma3.layers = 62;
  gemma3.sliding_window = 1024;
  gemma3.sliding_window_layers = 52;
  EXPECT_NEAR(LocalAttentionShare(gemma3, 131072), 177100.0 / 1015808.0, 1e-15);

  LayerShape s;
  s.micro_batch = 1;
  s.seq = 8192;
  s.full_seq = 8192;
  OpList ops;
  ModelSpec full = m;
  full.sliding_window = 0;
  full.sliding_window_layers = 0;
  LayerOps(full, s, false, 1, ops);
  const Op whole = *FindOp(ops, "flash_attention");
  // 2 b s s heads (d + d) = 2 x 8192^2 x 32 x 256.
  EXPECT_DOUBLE_EQ(whole.flops, 1099511627776.0);
  LayerOps(m, s, false, 1, ops);
  EXPECT_DOUBLE_EQ(FindOp(ops, "flash_attention")->flops, 0.75 * 1099511627776.0);
  EXPECT_DOUBLE_EQ(FindOp(ops, "flash_attention")->bytes, whole.bytes);
  const auto flops = [&ops] {
    double f = 0;
    for (int i = 0; i < ops.count; ++i) f += ops.ops[static_cast<size_t>(i)].flops;
    return f;
  };
  s.flash = false;
  LayerOps(full, s, false, 1, ops);
  const double materialised = flops();
  LayerOps(m, s, false, 1, ops);
  EXPECT_DOUBLE_EQ(flops(), materialised);
}

// Chunked attention (ModelSpec::attention_chunk, Llama 4): a chunked layer
// runs each chunk of c tokens as a causal sequence of its own, n whole
// chunks and a remainder r doing (n c^2 + r^2) / s^2 of causal attention's
// work. Llama 4 Scout (c 8192 on 36 of 48 layers):
//   s 8192: one chunk, the whole triangle, share 1;
//   s 32768: four chunks, 4 x 8192^2 / 32768^2 = 1/4 a chunked layer, and
//     1 - (36/48)(3/4) = 0.4375 the mean layer;
//   s 20000: two chunks and 3,616 tokens, (2 x 8192^2 + 3616^2) / 20000^2 =
//     147,293,184 / 400,000,000 = 0.36823296.
// The fused attention operator's FLOPs carry the mean share.
TEST(Transformer, ChunkedAttentionRunsEachChunkAsItsOwnSequence) {
  ModelSpec m = Llama(48, 5120, 40, 8, 16384, 202048);
  m.head_dim = 128;
  m.attention_chunk = 8192;
  m.attention_chunk_layers = 36;
  EXPECT_EQ(LocalLayers(m), 36);
  EXPECT_DOUBLE_EQ(LocalLayerWork(m, 8192), 1.0);
  EXPECT_DOUBLE_EQ(LocalAttentionShare(m, 8192), 1.0);
  EXPECT_DOUBLE_EQ(LocalLayerWork(m, 32768), 0.25);
  EXPECT_DOUBLE_EQ(LocalAttentionShare(m, 32768), 0.4375);
  EXPECT_DOUBLE_EQ(LocalLayerWork(m, 20000), 0.36823296);

  LayerShape s;
  s.micro_batch = 1;
  s.seq = 32768;
  s.full_seq = 32768;
  OpList ops;
  ModelSpec full = m;
  full.attention_chunk = 0;
  full.attention_chunk_layers = 0;
  EXPECT_EQ(LocalLayers(full), 0);
  LayerOps(full, s, false, 1, ops);
  const Op whole = *FindOp(ops, "flash_attention");
  // 2 b s s heads (d + d) = 2 x 32768^2 x 40 x 256.
  EXPECT_DOUBLE_EQ(whole.flops, 21990232555520.0);
  LayerOps(m, s, false, 1, ops);
  EXPECT_DOUBLE_EQ(FindOp(ops, "flash_attention")->flops, 0.4375 * 21990232555520.0);
}

// QK-norm (ModelSpec::qk_norm): a norm over the queries and one over the
// keys, whole sequence, heads split over TP. Llama shape with 16 query and 4
// KV heads of 64 at tp 2 (8 and 2 a device), 2 x 512 tokens: q_norm on
// 1024 x 8 x 64 = 524,288 elements, 2,097,152 B forward (2e, fused RMSNorm)
// and 3,145,728 B backward (3e); k_norm on 131,072, 524,288 B and 786,432 B.
// With the packed layout the norm writes new keys, as RoPE's kernel does, so
// TE's attention copies the values (1024 x 2 x 64 x 2e = 524,288 B) and the
// split's backward concatenates even without rope_kernel. With MHA (16 KV
// heads) and no RoPE kernel nothing of the packed layout ran before; with
// the norms the values' copy (2,097,152 B) and the concatenation (2 x the
// projection's 1024 x 24 x 64 x 2 B = 6,291,456 B) run. Each norm's weight
// is one head wide: 2 x 64 more parameters a layer.
TEST(Transformer, QkNormNormalisesEachHeadsQueriesAndKeys) {
  ModelSpec m = Llama(1, 1024, 16, 4, 2816, 32000);
  LayerShape s = TwoSequencesAtTp2WithSp();
  OpList ops;
  LayerOps(m, s, false, 1, ops);
  const int without = ops.count;
  const double params = LayerParameters(m, false);
  m.qk_norm = true;
  EXPECT_DOUBLE_EQ(LayerParameters(m, false) - params, 128.0);
  LayerOps(m, s, false, 1, ops);
  EXPECT_EQ(ops.count, without + 2);
  const Op* q = FindOp(ops, "q_norm");
  const Op* k = FindOp(ops, "k_norm");
  ASSERT_NE(q, nullptr);
  ASSERT_NE(k, nullptr);
  EXPECT_DOUBLE_EQ(q->bytes, 2097152.0);
  EXPECT_DOUBLE_EQ(BackwardBytes(*q), 3145728.0);
  EXPECT_DOUBLE_EQ(k->bytes, 524288.0);
  EXPECT_DOUBLE_EQ(BackwardBytes(*k), 786432.0);
  s.packed_qkv_copies = true;
  LayerOps(m, s, false, 1, ops);
  EXPECT_EQ(ops.count, without + 5);
  EXPECT_DOUBLE_EQ(FindOp(ops, "value_copy")->bytes, 524288.0);
  EXPECT_NE(FindOp(ops, "query_copy"), nullptr);
  EXPECT_NE(FindOp(ops, "qkv_split_grad"), nullptr);
  m.kv_heads = 16;
  LayerOps(m, s, false, 1, ops);
  EXPECT_EQ(ops.count, without + 4);
  EXPECT_EQ(FindOp(ops, "query_copy"), nullptr);
  EXPECT_DOUBLE_EQ(FindOp(ops, "value_copy")->bytes, 2097152.0);
  EXPECT_DOUBLE_EQ(BackwardBytes(*FindOp(ops, "qkv_split_grad")), 6291456.0);
  // Each norm's weight gradient in a kernel of its own where the plan says so.
  s.norm_weight_grad_kernel = true;
  const int before = ops.count;
  LayerOps(m, s, false, 1, ops);
  EXPECT_EQ(ops.count, before + 4);  // the two layer norms' and the two QK-norms'
  // Eager code (Hugging Face's Qwen3RMSNorm) runs them too, but keeps the
  // packed layout's copies out.
  s.eager = true;
  s.norm_weight_grad_kernel = false;
  LayerOps(m, s, false, 1, ops);
  EXPECT_NE(FindOp(ops, "q_norm"), nullptr);
  EXPECT_EQ(FindOp(ops, "value_copy"), nullptr);
}

// OpList::Add writes without a bound check (it is on the estimator's hot
// path): every combination of the flags that add operators stays within
// kMaxLayerOps, in a dense and a MoE layer with shared experts, dropout,
// biases, grouped-query RoPE attention and QK-norms, materialised (with or
// without soft-capping) or fused.
TEST(Transformer, EveryFlagCombinationFitsTheOperatorList) {
  ModelSpec m = Llama(1, 1024, 16, 4, 2816, 32000);
  m.bias = true;
  m.hidden_dropout = m.attention_dropout = 0.1;
  m.experts = 8;
  m.top_k = 2;
  m.shared_experts = 1;
  int most = 0;
  for (int bits = 0; bits < 256; ++bits) {
    LayerShape s = TwoSequencesAtTp2WithSp();
    m.attention_softcap = (bits & 128) != 0 ? 50 : 0;
    s.flash = (bits & 1) != 0;
    s.eager = (bits & 2) != 0;
    s.qkv_split_cat = s.norm_weight_grad_kernel = s.separate_bias_grad = (bits & 4) != 0;
    s.rope_kernel = s.packed_qkv_copies = (bits & 8) != 0;
    m.qk_norm = (bits & 64) != 0;
    const bool moe = (bits & 16) != 0;
    m.norm = (bits & 32) != 0 ? Norm::kLayerNorm : Norm::kRmsNorm;
    OpList ops;
    LayerOps(m, s, moe, 2, ops);
    most = std::max(most, ops.count);
  }
  EXPECT_LE(most, kMaxLayerOps);
}

// A norm's backward: one pass that reads dY and X and writes dX (3e an
// element; Transformer Engine, apex's FastLayerNorm), and where its weight
// gradient has a kernel of its own (training.norm_weight_grad_kernel,
// PyTorch's LayerNorm backward) norm_weight_grad reads dY and X again (2e),
// backward only. GPT, hidden 1,024, two sequences of 512 at tp 2 with
// sequence parallelism: each norm runs on 512 tokens x 1,024 = 524,288
// elements, 3,145,728 B and 2,097,152 B in bf16, its forward 2,097,152 B.
// Without the flag there is no such operator; an eager RMSNorm, whose
// passes are priced one by one (bwd_bytes 0: the estimator's rule), does
// not read the flag; a fused one does.
TEST(Transformer, NormWeightGradientsRunAKernelOfTheirOwn) {
  ModelSpec m = Gpt(1, 1024, 16);
  LayerShape s = TwoSequencesAtTp2WithSp();
  auto count = [](const OpList& ops, const char* name) {
    int n = 0;
    for (int i = 0; i < ops.count; ++i) n += std::string(ops.ops[static_cast<size_t>(i)].name) == name ? 1 : 0;
    return n;
  };
  OpList ops;
  LayerOps(m, s, false, 1, ops);
  const int without = ops.count;
  EXPECT_EQ(count(ops, "norm_weight_grad"), 0);
  EXPECT_DOUBLE_EQ(FindOp(ops, "input_norm")->bytes, 2097152.0);
  EXPECT_DOUBLE_EQ(FindOp(ops, "input_norm")->bwd_bytes, 3145728.0);
  s.norm_weight_grad_kernel = true;
  LayerOps(m, s, false, 1, ops);
  EXPECT_EQ(ops.count, without + 2);
  EXPECT_EQ(count(ops, "norm_weight_grad"), 2);
  EXPECT_DOUBLE_EQ(FindOp(ops, "input_norm")->bwd_bytes, 3145728.0);
  EXPECT_DOUBLE_EQ(FindOp(ops, "post_attention_norm")->bwd_bytes, 3145728.0);
  const Op* grad = FindOp(ops, "norm_weight_grad");
  EXPECT_DOUBLE_EQ(grad->bytes, 0.0);
  EXPECT_DOUBLE_EQ(grad->bwd_bytes, 2097152.0);
  OpList head;
  HeadOps(m, s, head);
  EXPECT_EQ(count(head, "norm_weight_grad"), 1);
  EXPECT_STREQ(head.ops[static_cast<size_t>(head.count - 1)].name, "cross_entropy");  // the loss stays last
  m.norm = Norm::kRmsNorm;
  s.eager = true;
  LayerOps(m, s, false, 1, ops);
  EXPECT_EQ(count(ops, "norm_weight_grad"), 0);
  EXPECT_DOUBLE_EQ(FindOp(ops, "input_norm")->bwd_bytes, 0.0);
  s.eager = false;
  LayerOps(m, s, false, 1, ops);
  EXPECT_EQ(count(ops, "norm_weight_grad"), 2);
}

TEST(Transformer, MaterialisedAttentionMovesTheScoreMatrix) {
  const ModelSpec m = Gpt(1, 4096, 32);
  OpList ops;
  LayerOps(m, MaterialisedSequence(2048), false, 1, ops);
  // 32 heads x 2048^2 scores, read and written in bf16: 2 * 2 * 32 * 2048^2 bytes.
  EXPECT_DOUBLE_EQ(OpBytes(ops, "softmax"), 4.0 * 32 * 2048 * 2048);
}

// The s x s traffic of materialised attention per score element, forward and
// backward, worked by hand for one 2048-token sequence of 32 128-wide heads
// in bf16 (e = 2 bytes): 32 x 2048^2 = 134,217,728 score elements.
//   forward: Q K^T writes the scores (e = 2), the fused softmax reads and
//   writes them (2e = 4), dropout reads and writes them and writes a 1-byte
//   mask (2e + 1 = 5), attention over values reads them (e = 2): 13 bytes.
//   backward, memory-bound kernels: softmax in place on the output gradient,
//   reading it and the saved probabilities and writing the input gradient
//   (3e = 6: Megatron-LM scaled_masked_softmax_cuda.cu bwd_cuda); dropout
//   reading the gradient and the mask and writing the gradient (2e + 1 = 5,
//   PyTorch native_dropout_backward): 11 bytes, not the 18 that twice the
//   forward traffic (2 x (4 + 5)) would charge.
TEST(Transformer, MaterialisedAttentionBytesPerScoreElement) {
  ModelSpec m = Gpt(1, 4096, 32);
  m.hidden_dropout = 0.1;  // Megatron-LM's defaults (arguments.py)
  m.attention_dropout = 0.1;
  const LayerShape s = MaterialisedSequence(2048);
  OpList ops;
  LayerOps(m, s, false, 1, ops);
  const double scores = 32.0 * 2048 * 2048;
  // Q and K (or the output and V) of 32 heads x 2048 tokens x 128 in bf16.
  const double qk_operands = 2 * 32.0 * 2048 * 128 * 2;
  double fwd = 0, bwd = 0;
  int core_elementwise = 0;
  for (int i = 0; i < ops.count; ++i) {
    const Op& op = ops.ops[static_cast<size_t>(i)];
    if (!op.attention_core) continue;
    if (op.kind == OpKind::kBatchedGemm) {
      fwd += op.bytes - qk_operands;  // the score matrix's share of the GEMM
    } else {
      ASSERT_EQ(op.kind, OpKind::kElementwise) << op.name;
      ++core_elementwise;
      fwd += op.bytes;
      bwd += op.bwd_bytes;
    }
  }
  EXPECT_EQ(core_elementwise, 2);  // softmax, dropout
  EXPECT_DOUBLE_EQ(fwd / scores, 13.0);
  EXPECT_DOUBLE_EQ(bwd / scores, 11.0);
}

// Logit soft-capping as eager code runs it (NeMo's and transformers' Gemma 2:
// x / cap, tanh, * cap), one 2048-token sequence of 32 heads in bf16:
// 32 x 2048^2 = 134,217,728 scores, 6 x 2 = 12 bytes each forward
// (1,610,612,736 B) and 7 x 2 = 14 backward (1,879,048,192 B: the tanh's
// gradient reads its saved output too). A fused attention kernel takes the
// cap inside: no operator. The final logits of GPT-3's head at tp 8, 2048 x
// 6400 = 13,107,200 of them: 157,286,400 B forward, 183,500,800 backward,
// before the loss, which stays the last operator.
TEST(Transformer, SoftCappingIsThreePassesOverScoresAndLogits) {
  ModelSpec m = Gpt(1, 4096, 32);
  m.attention_softcap = 50;
  OpList ops;
  LayerOps(m, MaterialisedSequence(2048), false, 1, ops);
  const Op* cap = FindOp(ops, "attention_softcap");
  ASSERT_NE(cap, nullptr);
  EXPECT_TRUE(cap->attention_core);
  EXPECT_DOUBLE_EQ(cap->bytes, 1610612736.0);
  EXPECT_DOUBLE_EQ(cap->bwd_bytes, 1879048192.0);
  LayerShape fused = MaterialisedSequence(2048);
  fused.flash = true;
  LayerOps(m, fused, false, 1, ops);
  EXPECT_EQ(FindOp(ops, "attention_softcap"), nullptr);

  ModelSpec gpt3 = Gpt(96, 12288, 96);
  gpt3.final_logit_softcap = 30;
  LayerShape s;
  s.seq = s.full_seq = 2048;
  s.tp = 8;
  HeadOps(gpt3, s, ops);
  ASSERT_EQ(ops.count, 4);
  EXPECT_STREQ(ops.ops[2].name, "logit_softcap");
  EXPECT_DOUBLE_EQ(ops.ops[2].bytes, 157286400.0);
  EXPECT_DOUBLE_EQ(ops.ops[2].bwd_bytes, 183500800.0);
  EXPECT_STREQ(ops.ops[3].name, "cross_entropy");
}

// Issue 15: dropout masks are written only where the model drops. One GPT
// layer, h = 4096, 32 heads, b = 1, s = 2048, bf16, materialised attention.
// With Megatron-LM's 0.1 / 0.1 each bias-dropout-add reads the branch and
// the residual, writes the sum and a 1-byte mask: 2048 x 4096 x (3 x 2 + 1)
// = 58,720,256 B; the attention dropout reads the softmax output and writes
// the dropped copy and its mask: 32 x 2048^2 x (2 x 2 + 1) = 671,088,640 B.
// Without dropout the residual adds (named residual_add then, not
// dropout_residual) move 2048 x 4096 x 6 = 50,331,648 B and there is no
// attention dropout kernel.
TEST(Transformer, DropoutMasksOnlyWhereTheModelDrops) {
  ModelSpec m = Gpt(1, 4096, 32);
  LayerShape s = MaterialisedSequence(2048);
  auto bytes_of = [&](const char* name, int* count) {
    OpList ops;
    LayerOps(m, s, false, 1, ops);
    *count = ops.count;
    return OpBytes(ops, name);
  };
  int with_count = 0, without_count = 0;
  m.hidden_dropout = 0.1;
  m.attention_dropout = 0.1;
  EXPECT_DOUBLE_EQ(bytes_of("dropout_residual", &with_count), 58720256.0);
  EXPECT_DOUBLE_EQ(bytes_of("attention_dropout", &with_count), 671088640.0);
  m.hidden_dropout = 0;
  m.attention_dropout = 0;
  EXPECT_DOUBLE_EQ(bytes_of("residual_add", &without_count), 50331648.0);
  EXPECT_DOUBLE_EQ(bytes_of("dropout_residual", &without_count), 0.0);
  EXPECT_DOUBLE_EQ(bytes_of("attention_dropout", &without_count), 0.0);
  EXPECT_EQ(without_count, with_count - 1);
  // An inference pass of the dropping model (LayerShape::dropout false, as
  // InferenceEstimator builds it) moves what the non-dropping one moves.
  m.hidden_dropout = 0.1;
  m.attention_dropout = 0.1;
  s.dropout = false;
  int inference_count = 0;
  EXPECT_DOUBLE_EQ(bytes_of("residual_add", &inference_count), 50331648.0);
  EXPECT_DOUBLE_EQ(bytes_of("attention_dropout", &inference_count), 0.0);
  EXPECT_EQ(inference_count, without_count);
}

// Gemstone-256x23's layer (McLeish et al. 2025: width 256, two 128-wide
// heads, one KV head, GeGLU MLP of 1024, RMSNorm, RoPE) on one 2048-token
// sequence in bf16, fused and as PyTorch eager code runs it.
TEST(Transformer, EagerElementwiseCountsEveryPassOfANarrowLayer) {
  ModelSpec m = Llama(23, 256, 2, 1, 1024, 50304);
  m.name = "gemstone-256x23";
  m.head_dim = 128;
  LayerShape s;
  s.seq = 2048;
  s.full_seq = 2048;
  auto elementwise = [&](bool eager, double* gemm_flops) {
    s.eager = eager;
    OpList ops;
    LayerOps(m, s, false, 1, ops);
    double bytes = 0;
    *gemm_flops = 0;
    for (int i = 0; i < ops.count; ++i) {
      const Op& op = ops.ops[static_cast<size_t>(i)];
      if (op.kind == OpKind::kElementwise) bytes += op.bytes;
      if (op.kind == OpKind::kGemm) *gemm_flops += op.flops;
    }
    return bytes;
  };
  double fused_flops = 0, eager_flops = 0;
  const double fused = elementwise(false, &fused_flops);
  const double eager = elementwise(true, &eager_flops);
  // Per token, fused: two norms 2 x 2 x 256 = 1024 B each, two residual adds
  // without dropout (litgpt has none) 256 x 3 x 2 = 1536 B each, the gated
  // activation 1024 x 3 x 2 = 6144 B: 11,264 B.
  EXPECT_DOUBLE_EQ(fused, 11264.0 * 2048);
  // Eager: two norms 256 x (2 x 2 + 36) = 10,240 B each, RoPE on 256 query
  // and 128 key elements 384 x 10 x 2 = 7680 B, repeat_kv copying the one
  // KV head of 128 for K and V to both query heads 2 x (128 + 256) x 2 =
  // 1536 B, the residuals 2 x 1536 B, the activation 1024 x 5 x 2 =
  // 10,240 B: 43,008 B, 3.82x the fused traffic. (No copy of the attention
  // output: SDPA returns a transposed view of a (batch, seq, heads, dv)
  // buffer.)
  EXPECT_DOUBLE_EQ(eager, 43008.0 * 2048);
  // The GEMMs do not change.
  EXPECT_DOUBLE_EQ(eager_flops, fused_flops);
  EXPECT_DOUBLE_EQ(EagerNormBytesPerElement(2), 40.0);
}

// Gemstone-256x23's shape (width 256, two 128-wide heads, one KV head,
// gated MLP of 1024) and one 2048-token sequence, for the eager tests.
ModelSpec Gemstone256() {
  ModelSpec m = Llama(23, 256, 2, 1, 1024, 50304);
  m.head_dim = 128;
  return m;
}
LayerShape OneSequence(bool eager) {
  LayerShape s;
  s.seq = 2048;
  s.full_seq = 2048;
  s.eager = eager;
  return s;
}

// The non-vectorized part of the same eager layer (Op::unvec_*), by hand
// per token in bf16: each RMSNorm 256 elements x 3 forward (upcast, the
// broadcast rsqrt and weight products: 256 x (2 + 20) = 5632 B) and x 4
// backward (256 x (2 + 28) = 7680 B); the rotary embedding 384 query and key
// elements x 2 both ways (upcast and complex product: 384 x (2 + 12) =
// 5376 B); repeat_kv writing 2 x 256 elements forward (its 1536 B), none
// backward (a reduction); nothing else.
TEST(Transformer, EagerNonVectorizedPassesOfANarrowLayer) {
  ModelSpec m = Gemstone256();
  LayerShape s = OneSequence(true);
  OpList ops;
  LayerOps(m, s, false, 1, ops);
  double fb = 0, fe = 0, bb = 0, be = 0;
  for (int i = 0; i < ops.count; ++i) {
    const Op& op = ops.ops[static_cast<size_t>(i)];
    fb += op.unvec_bytes;
    fe += op.unvec_elements;
    bb += op.bwd_unvec_bytes;
    be += op.bwd_unvec_elements;
    if (std::string(op.name) == "repeat_kv") {
      EXPECT_DOUBLE_EQ(op.bwd_bytes, op.bytes);
    }
  }
  // (Held in single precision: to 1e-7.)
  EXPECT_NEAR(fe, (2 * 256 * 3 + 384 * 2 + 2 * 256) * 2048.0, 1e-7 * fe);
  EXPECT_NEAR(fb, (2 * 5632 + 5376 + 1536) * 2048.0, 1e-7 * fb);
  EXPECT_NEAR(be, (2 * 256 * 4 + 384 * 2) * 2048.0, 1e-7 * be);
  EXPECT_NEAR(bb, (2 * 7680 + 5376) * 2048.0, 1e-7 * bb);
  // Fused, and multi-head attention (no KV head shared), run none.
  s.eager = false;
  LayerOps(m, s, false, 1, ops);
  for (int i = 0; i < ops.count; ++i) EXPECT_EQ(ops.ops[static_cast<size_t>(i)].unvec_elements, 0);
  s.eager = true;
  m.kv_heads = 2;
  LayerOps(m, s, false, 1, ops);
  for (int i = 0; i < ops.count; ++i) EXPECT_STRNE(ops.ops[static_cast<size_t>(i)].name, "repeat_kv");
}

// The same layer with a LayerNorm (issue 15: torchtitan's norm_type
// "layernorm" is torch.nn.LayerNorm, one native_layer_norm kernel in eager
// code too): only its two norms change, from the eager RMSNorm's
// 256 x (2 x 2 + 36) = 10,240 B each to a fused 256 x 2 x 2 = 1024 B each:
// 43,008 - 2 x 10,240 + 2 x 1024 = 24,576 B per token.
TEST(Transformer, EagerLayerNormIsOneKernel) {
  ModelSpec m = Gemstone256();
  LayerShape s = OneSequence(true);
  auto elementwise_bytes = [&] {
    OpList ops;
    LayerOps(m, s, false, 1, ops);
    double bytes = 0;
    for (int i = 0; i < ops.count; ++i)
      if (ops.ops[static_cast<size_t>(i)].kind == OpKind::kElementwise) bytes += ops.ops[static_cast<size_t>(i)].bytes;
    return bytes;
  };
  EXPECT_DOUBLE_EQ(elementwise_bytes(), 43008.0 * 2048);
  m.norm = Norm::kLayerNorm;
  EXPECT_DOUBLE_EQ(elementwise_bytes(), 24576.0 * 2048);
  // The final norm before the LM head: 256 x 2 x 2 B per token.
  OpList head;
  HeadOps(m, s, head);
  EXPECT_DOUBLE_EQ(head.ops[0].bytes, 1024.0 * 2048);
  EXPECT_DOUBLE_EQ(NormBytesPerElement(Norm::kLayerNorm, true, 2), 4.0);
  EXPECT_DOUBLE_EQ(NormBytesPerElement(Norm::kRmsNorm, true, 2), 40.0);
  EXPECT_DOUBLE_EQ(NormBytesPerElement(Norm::kRmsNorm, false, 2), 4.0);
}

TEST(Transformer, MoeActivatedParametersCountTopKExperts) {
  ModelSpec m = Llama(32, 4096, 32, 8, 14336, 32000);
  m.experts = 8;
  m.top_k = 2;
  // Mixtral 8x7B (Jiang et al. 2024): 46.7 B parameters, 12.9 B active.
  EXPECT_NEAR(ParameterCount(m, 4096) / 1e9, 46.7, 0.1);
  EXPECT_NEAR(ActivatedParameterCount(m, 4096) / 1e9, 12.9, 0.1);
}

// Top-1 routing with a shared expert (Llama 4 Scout, Meta's model card: 17B
// active of 109B): every layer keeps its one routed expert and the shared
// one. By hand, a layer: attention 5120 x (40 + 2 x 8) x 128 + 40 x 128 x
// 5120 = 62,914,560; two RMSNorms 10,240; routed expert 3 x 5120 x 8192 =
// 125,829,120; shared the same; a 1-wide router 5120: 314,588,160; x 48 =
// 15,100,231,680; + embedding and output 2 x 202,048 x 5120 = 2,068,971,520
// + the final norm 5120 = 17,169,208,320.
TEST(Transformer, MoeActivatedParametersKeepTheSharedExpertAtTopOne) {
  ModelSpec m = Llama(48, 5120, 40, 8, 8192, 202048);
  m.head_dim = 128;
  m.tied_embeddings = false;
  m.experts = 16;
  m.top_k = 1;
  m.expert_ffn = 8192;
  m.shared_experts = 1;
  m.shared_expert_ffn = 8192;
  EXPECT_DOUBLE_EQ(ActivatedParameterCount(m, 8192), 17169208320.0);
}

// Issue 15: torchtitan's op-level selective activation checkpointing
// (parallelisms/parallelize_llama.py at commit 004b3148, _custom_policy:
// every second aten.mm of a block is recomputed, the rest of the mm calls
// and the SDPA output kept). One Llama 3 8B layer (h 4096, 32 heads of 128,
// 8 KV heads, SwiGLU of 14336), b 1, s 8192 (T = 8192 tokens), tp 1, flash.
// The mm calls in forward order: wq 1, wk 2, wv 3, wo 4, w1 5, w3 6, w2 7.
// Recomputed FLOPs: wk 2 T h (8 x 128) + wo 2 T h h + w3 2 T h 14336
//   = 68,719,476,736 + 274,877,906,944 + 962,072,674,304
//   = 1,305,670,057,984 FLOP (norms, SwiGLU and residuals: no FLOPs here).
// Kept outputs (bf16): wq 2 T 4096 = 67,108,864, wv 2 T 1024 = 16,777,216,
// attention output 2 T 4096 = 67,108,864 and its fp32 logsumexp 4 x 32 x T
// = 1,048,576, w1 2 T 14336 = 234,881,024, w2 2 T 4096 = 67,108,864:
// 454,033,408 bytes. Every memory-bound operator is recomputed whole.
TEST(Transformer, OpLevelSacRecomputesWkWoW3OfALlamaLayer) {
  const ModelSpec m = Llama(32, 4096, 32, 8, 14336, 128256);
  LayerShape s;
  s.micro_batch = 1;
  s.seq = 8192;
  s.full_seq = 8192;
  s.eager = true;  // rotary as its own operator, recomputed like the norms
  OpList ops;
  LayerOps(m, s, false, 1, ops);
  double recomputed = 0, kept = 0;
  int elementwise = 0;
  for (int i = 0; i < ops.count; ++i) {
    const Op& op = ops.ops[static_cast<size_t>(i)];
    recomputed += op.op_sac_recompute * op.flops;
    kept += (1 - op.op_sac_recompute) * op.out_bytes;
    if (op.kind == OpKind::kElementwise) {
      EXPECT_EQ(op.op_sac_recompute, 1.0) << op.name;
      ++elementwise;
    }
  }
  EXPECT_DOUBLE_EQ(recomputed, 1'305'670'057'984.0);
  EXPECT_DOUBLE_EQ(kept, 454'033'408.0);
  EXPECT_GE(elementwise, 6);  // two norms, rotary, copy, SwiGLU, two residual adds
  // The fused QKV GEMM recomputes wk's share of its width: 1024 / 6144.
  EXPECT_DOUBLE_EQ(ops.ops[1].op_sac_recompute, 1024.0 / 6144.0);
}

}  // namespace
}  // namespace orrery::models
