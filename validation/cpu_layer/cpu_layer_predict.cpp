#include "cpu_layer_predict.h"

#include "hardware/device_model.h"
#include "models/transformer.h"

namespace orrery::validation {

models::ModelSpec CpuLayerModel(const CpuLayerShape& shape) {
  models::ModelSpec m;
  m.name = "cpu-layer " + shape.Name();
  m.layers = 1;
  m.hidden = shape.hidden;
  m.heads = shape.heads;
  m.ffn = shape.Ffn();
  m.vocab = 1;  // no embedding or head in this check
  m.max_seq = shape.seq;
  m.activation = models::Activation::kGelu;
  m.norm = models::Norm::kLayerNorm;
  m.position = models::Position::kLearned;
  m.bias = true;
  // The timed layer drops with the shape's probability on both residual
  // branches and on the attention probabilities (cpu_layer.h; the GPU
  // script's DROPOUT), so its masks are priced.
  m.hidden_dropout = shape.dropout;
  m.attention_dropout = shape.dropout;
  return m;
}

LayerPrediction PredictCpuLayer(const CpuLayerShape& shape, const hardware::DeviceSpec& device) {
  return PredictLayer(shape, device, hardware::DataType::kFp32, false);
}

LayerPrediction PredictLayer(const CpuLayerShape& shape, const hardware::DeviceSpec& device,
                             hardware::DataType dtype, bool flash) {
  const models::ModelSpec model = CpuLayerModel(shape);
  models::LayerShape ls;
  ls.micro_batch = shape.batch;
  ls.seq = shape.seq;
  ls.full_seq = shape.seq;
  ls.tp = 1;
  ls.sequence_parallel = false;
  ls.flash = flash;
  // FP8 GEMMs keep bf16 activations, as the training estimator assumes.
  ls.act_bytes = hardware::BytesPer(dtype == hardware::DataType::kFp8 ? hardware::DataType::kBf16 : dtype);
  models::OpList ops;
  models::LayerOps(model, ls, false, 1, ops);
  LayerPrediction p;
  for (int i = 0; i < ops.count; ++i) {
    const models::Op& op = ops.ops[static_cast<size_t>(i)];
    switch (op.kind) {
      case models::OpKind::kGemm:
      case models::OpKind::kBatchedGemm: {
        // A linear layer's forward, input-gradient and weight-gradient GEMMs
        // at their reduction depths (models::DepthsOf, as the training
        // estimator prices them; hardware::GemmTimeAtDepth); batched
        // attention GEMMs at the curve (depth 0), the backward twice the
        // forward.
        const models::GemmDepths depth = models::DepthsOf(op);
        const double f = hardware::GemmTimeAtDepth(device, dtype, op.flops, op.bytes, depth.fwd);
        const double b = depth.wgrad > 0
                             ? hardware::GemmTimeAtDepth(device, dtype, op.flops, op.bytes, depth.dgrad) +
                                   hardware::GemmTimeAtDepth(device, dtype, op.flops, op.bytes, depth.wgrad)
                             : 2 * f;
        p.forward_s += f;
        p.forward_gemm_s += f;
        p.backward_s += b;
        p.backward_gemm_s += b;
        p.forward_flop += op.flops;
        break;
      }
      case models::OpKind::kElementwise:
        p.forward_s += hardware::MemoryTime(device, op.bytes);
        p.backward_s += hardware::MemoryTime(device, 2 * op.bytes);
        break;
      case models::OpKind::kFlashAttention: {
        // Causal: the kernel skips the masked half of the score blocks.
        const double work = 0.5 * op.flops;
        p.forward_s += hardware::FlashAttentionTime(device, dtype, work, op.bytes, false);
        p.backward_s += hardware::FlashAttentionTime(device, dtype, 2.5 * work, 2 * op.bytes, true);
        break;
      }
    }
  }
  return p;
}

}  // namespace orrery::validation
