#include "parallelism/memory_model.h"

#include <algorithm>

namespace orrery::parallelism {

double LayerActivationBytes(const models::ModelSpec& m, const TrainingPlan& p, int64_t b,
                            int64_t s) {
  const double sb = static_cast<double>(s) * static_cast<double>(b);
  const double h = static_cast<double>(m.hidden);
  const double t = static_cast<double>(p.tp);
  const double sp = p.sequence_parallel ? t : 1.0;
  if (p.recompute == Recompute::kFull) return 2 * sb * h / sp;
  const double d = static_cast<double>(models::HeadDim(m));
  const double a = static_cast<double>(m.heads);
  const double g = static_cast<double>(models::KvHeads(m));
  const double f = static_cast<double>(models::FfnSize(m));
  const bool swiglu = m.activation == models::Activation::kSwiglu;
  // Tensors outside the tensor-parallel regions (split only by SP):
  // two norm inputs (4 sbh), QKV input (2 sbh), MLP input (2 sbh), two
  // dropout masks (2 sbh): 10 sbh for GPT.
  const double outside = 10 * sb * h;
  // Inside (split by t): Q (2 sb a d), K and V (4 sb g d), attention output
  // (2 sb a d), MLP activations (GeLU: input and output 4 sbf; SwiGLU: gate,
  // up and product 6 sbf). For GPT this is 24 sbh.
  const double inside = sb * (4 * a * d + 4 * g * d + (swiglu ? 6 : 4) * f);
  // Attention scores: softmax output (2), dropout mask (1), dropout output (2)
  // per element of the b a s^2 score tensor; gone with flash or selective.
  const bool keep_scores = p.attention == Attention::kMaterialized && p.recompute == Recompute::kNone;
  const double scores = keep_scores ? 5 * a * static_cast<double>(s) * sb : 0;
  return outside / sp + (inside + scores) / t;
}

MemoryBreakdown DeviceMemory(const models::ModelSpec& m, const TrainingPlan& p,
                             const MemoryInputs& in) {
  MemoryBreakdown r;
  const double params = in.params_on_device;
  const double dp = static_cast<double>(in.dp);
  const double w_bytes = hardware::BytesPer(p.precision == hardware::DataType::kFp8
                                                ? hardware::DataType::kBf16
                                                : p.precision);
  const double opt_bytes = (p.optimizer == Optimizer::kAdam ? 8.0 : 4.0) +
                           (p.fp32_master_weights && w_bytes < 4 ? 4.0 : 0.0);
  r.weights = params * w_bytes / (p.zero >= 3 ? dp : 1);
  r.gradients = params * w_bytes / (p.zero >= 2 ? dp : 1);
  r.optimizer = p.offload_optimizer ? 0 : params * opt_bytes / (p.zero >= 1 ? dp : 1);
  // Microbatches whose activations are alive at the peak (first stage).
  const double pp = static_cast<double>(p.pp);
  const double mb = static_cast<double>(in.microbatches);
  double in_flight;
  if (p.schedule == Schedule::kGpipe) {
    in_flight = mb;
  } else {
    // Stage i of a 1F1B pipeline holds p - i microbatches at its peak.
    in_flight = std::min(pp - static_cast<double>(in.stage), mb);
    if (p.interleave > 1) in_flight *= 1 + (pp - 1) / (pp * static_cast<double>(p.interleave));
  }
  const int64_t local_seq = in.seq / p.cp;
  const double per_layer = LayerActivationBytes(m, p, p.micro_batch, local_seq);
  // Activations of one layer per microbatch, times layers on this stage, times
  // microbatches in flight; layers / pp of them per microbatch on the stage.
  r.activations = per_layer * in.layers_on_device * in_flight;
  if (p.recompute == Recompute::kFull) {
    // The layer being recomputed holds its full activations meanwhile.
    TrainingPlan no = p;
    no.recompute = Recompute::kNone;
    r.activations += LayerActivationBytes(m, no, p.micro_batch, local_seq);
  }
  // Logits in fp32 for the loss on the last stage: s b V / t * 4 bytes
  // (Korthikanti et al. 2022 Sec. 4.3 counts the output layer the same way).
  if (in.last_stage)
    r.temporary = 4.0 * static_cast<double>(local_seq * p.micro_batch) *
                  static_cast<double>(m.vocab) / static_cast<double>(p.tp);
  return r;
}

}  // namespace orrery::parallelism
